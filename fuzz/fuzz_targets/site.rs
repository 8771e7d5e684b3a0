//! HS_SITE records: decode, encode back to the same bytes, JSON view, server choice and
//! server keys. Nothing may panic.
#![no_main]

use bytes::Bytes;
use handle_resolver::wire::{Limits, SiteInfo};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let bytes = Bytes::copy_from_slice(data);
    let Ok(site) = SiteInfo::decode(&bytes, &Limits::default()) else {
        return;
    };
    assert_eq!(site.encode().expect("a decoded record encodes"), bytes);
    let _ = handle_resolver::wire::json::site_to_json(&site);
    let _ = site.description();
    for handle in [&b"0.NA/20.500.1"[..], b"20.500.1/abc", b"", data] {
        if let Some(i) = site.server_index_for(handle) {
            assert!(i < site.servers.len());
            assert!(site.server_for(handle).is_some());
        }
    }
    for (i, server) in site.servers.iter().enumerate() {
        let _ = server.public_key();
        let _ = site.domain(i);
        let _ = site.alt_addr(server.server_id);
        let _ = server.socket_addr(handle_resolver::wire::Protocol::Udp, false);
    }
});
