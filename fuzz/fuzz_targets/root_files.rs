//! The root-file readers: the binary `root_info` (`read_root_info`) and the JSON
//! `bootstrap_handles` (`read_bootstrap_handles`), and the root sites taken from them.
//!
//! Input: byte 0 even: the rest is a `root_info` file; odd: a `bootstrap_handles` file.
//!
//! Properties: reading never panics. `root_info`: what reads encodes back to the file's bytes
//! (`int4 totalLen ‖ int4 count ‖ values`). `bootstrap_handles`: the handles written back in
//! the file's shape (`lastUpdate`, `handles: {h: {handle, values}}`, values by
//! `wire::json::value_to_json`) read back to the same handles, and so do the shape with
//! bare arrays of values and the library's own writer (`BootstrapHandles::to_json`). Either way every root site found is the decoded data of one of the
//! HS_SITE or HS_SITE.6 values it came from, and there are no more sites than such values.
#![no_main]

use bytes::{BufMut, BytesMut};
use handle_resolver::root::{read_bootstrap_handles, read_root_info, root_sites};
use handle_resolver::wire::encode_values;
use handle_resolver::wire::json::value_to_json;
use handle_resolver::wire::{HandleValue, Limits, SiteInfo};
use libfuzzer_sys::fuzz_target;
use serde_json::{json, Map, Value as Json};

/// Every site is one of `values`' HS_SITE / HS_SITE.6 records, decoded.
fn check_sites<'a>(sites: &[SiteInfo], values: impl Iterator<Item = &'a HandleValue> + Clone) {
    let records = values.filter(|v| v.is_type("HS_SITE") || v.is_type("HS_SITE.6"));
    assert!(sites.len() <= records.clone().count());
    for site in sites {
        let encoded = site.encode().expect("a decoded site encodes");
        assert!(
            records.clone().any(|v| v.data == encoded),
            "a root site that is no HS_SITE value of the file"
        );
    }
}

fn root_info(file: &[u8], limits: &Limits) {
    let Ok(values) = read_root_info(file, limits) else {
        return;
    };
    let mut body = BytesMut::new();
    encode_values(&mut body, "values", &values).expect("decoded values encode");
    let mut out = BytesMut::new();
    out.put_u32(u32::try_from(body.len()).expect("no longer than the file"));
    out.extend_from_slice(&body);
    assert_eq!(
        &out[..],
        file,
        "root_info does not encode back to its bytes"
    );
    check_sites(&root_sites(&values, limits), values.iter());
}

fn bootstrap(file: &[u8], limits: &Limits) {
    let Ok(b) = read_bootstrap_handles(file, limits) else {
        return;
    };
    let write = |bare: bool| {
        let mut handles = Map::new();
        for (h, values) in &b.handles {
            let values = Json::Array(values.iter().map(value_to_json).collect());
            let record = if bare {
                values
            } else {
                json!({"handle": h, "values": values})
            };
            handles.insert(h.clone(), record);
        }
        let mut doc = Map::new();
        if let Some(t) = b.last_update {
            doc.insert("lastUpdate".into(), Json::from(t));
        }
        doc.insert("handles".into(), Json::Object(handles));
        serde_json::to_vec(&Json::Object(doc)).expect("JSON values serialise")
    };
    for bare in [false, true] {
        let text = write(bare);
        let back = read_bootstrap_handles(&text, limits).expect("written back, it reads");
        assert_eq!(
            back, b,
            "bootstrap_handles changed when written back (bare {bare})"
        );
    }
    // The library's own writer (`BootstrapHandles::to_json`, what a verified root refresh
    // persists) reads back to the same file too.
    let back = read_bootstrap_handles(&b.to_json(), limits).expect("to_json reads back");
    assert_eq!(back, b, "bootstrap_handles changed through to_json");
    check_sites(&b.root_sites(limits), b.handles.values().flatten());
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let limits = Limits::default();
    if mode & 1 == 0 {
        root_info(rest, &limits);
    } else {
        bootstrap(rest, &limits);
    }
});
