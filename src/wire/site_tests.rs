//! Unit tests of the HS_SITE codec (hand-built records; the captured ones are in proto-tests).

use super::*;
use crate::wire::DecodeErrorKind;

/// A two-server site, every byte hand-placed from the PROTOCOL.md §7.1 tables:
/// server 1 IPv6 2001:db8::5 with UDP query + TCP admin/query interfaces, server 7 IPv4 in the
/// RFC's IPv4-mapped form (::ffff:192.0.2.9) with one HTTP interface.
fn two_server_site() -> Vec<u8> {
    let mut b = Vec::new();
    b.extend([0x00, 0x01]); // DataFormatVersion = 1 (what real records carry)
    b.extend([0x02, 0x0A]); // protocol 2.10
    b.extend([0x00, 0x2A]); // SerialNumber = 42
    b.extend([0xC1]); // PrimaryMask: 0x80 primary | 0x40 multi-primary | reserved bit 0x01
    b.extend([0x01]); // HashOption = 1 (by suffix)
    b.extend([0, 0, 0, 0]); // HashFilter: empty UTF8-String
    b.extend([0, 0, 0, 2]); // AttributeCount = 2
    b.extend([0, 0, 0, 4]); // attribute name length 4
    b.extend(b"desc"); //      name "desc"
    b.extend([0, 0, 0, 3]); // value length 3
    b.extend(b"six"); //       value "six"
    b.extend([0, 0, 0, 8]); // attribute name length 8
    b.extend(b"alt_addr"); //  name "alt_addr" (only used for single-server sites)
    b.extend([0, 0, 0, 7]); // value length 7
    b.extend(b"1.2.3.4"); //   value
    b.extend([0, 0, 0, 2]); // ServerCount = 2
                            // server record 0
    b.extend([0, 0, 0, 1]); // ServerId = 1
    b.extend([
        0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x05,
    ]); // 2001:db8::5
    b.extend([0, 0, 0, 0]); // PublicKeyRecord: empty byte array
    b.extend([0, 0, 0, 2]); // InterfaceCount = 2
    b.extend([0x02, 0x00, 0x00, 0x00, 0x0A, 0x51]); // type 2 query, protocol 0 UDP, port 2641
    b.extend([0x03, 0x01, 0x00, 0x00, 0x0A, 0x51]); // type 3 admin+query, 1 TCP, port 2641
                                                    // server record 1
    b.extend([0, 0, 0, 7]); // ServerId = 7
    b.extend([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 192, 0, 2, 9]); // ::ffff:192.0.2.9
    b.extend([0, 0, 0, 0]); // PublicKeyRecord: empty
    b.extend([0, 0, 0, 1]); // InterfaceCount = 1
    b.extend([0x03, 0x02, 0x00, 0x00, 0x1F, 0x40]); // type 3, protocol 2 HTTP, port 8000
    b
}

fn decode(b: &[u8]) -> Result<SiteInfo, DecodeError> {
    SiteInfo::decode(&Bytes::copy_from_slice(b), &Limits::default())
}

#[test]
fn decodes_a_hand_built_ipv6_site_and_encodes_it_back() {
    let raw = two_server_site();
    let s = decode(&raw).unwrap();
    assert_eq!(s.data_format_version, 1);
    assert_eq!(s.protocol_version, ProtocolVersion::V2_10);
    assert_eq!(s.serial, 42);
    assert!(s.primary && s.multi_primary);
    assert_eq!(s.hash_option, HashOption::BySuffix);
    assert_eq!(s.description().as_deref(), Some("six"));
    assert_eq!(s.servers.len(), 2);
    let v6: IpAddr = "2001:db8::5".parse().unwrap();
    assert_eq!(s.servers[0].address, v6);
    assert_eq!(s.servers[1].address, IpAddr::from([192, 0, 2, 9]));
    assert_eq!(s.servers[1].server_id, 7);
    assert_eq!(s.servers[0].public_key().unwrap(), None);
    assert_eq!(
        s.servers[0].socket_addr(Protocol::Udp, false),
        Some(SocketAddr::new(v6, 2641))
    );
    // UDP is query-only: no admin over UDP; TCP allows both.
    assert_eq!(s.servers[0].socket_addr(Protocol::Udp, true), None);
    assert_eq!(
        s.servers[0].socket_addr(Protocol::Tcp, true),
        Some(SocketAddr::new(v6, 2641))
    );
    assert_eq!(
        s.servers[1]
            .socket_addr(Protocol::Http, false)
            .unwrap()
            .port(),
        8000
    );
    assert_eq!(s.servers[1].socket_addr(Protocol::Udp, false), None);
    // Re-encoding keeps the reserved mask bit and the mapped IPv4 form.
    assert_eq!(s.encode().unwrap().as_ref(), &raw[..]);
}

#[test]
fn reads_both_ipv4_forms_as_ipv4() {
    let compat = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 127, 0, 0, 1];
    let mapped = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 127, 0, 0, 1];
    assert_eq!(address_from_raw(compat), IpAddr::from([127, 0, 0, 1]));
    assert_eq!(address_from_raw(mapped), IpAddr::from([127, 0, 0, 1]));
    let mut loopback6 = [0u8; 16];
    loopback6[15] = 1;
    assert_eq!(address_from_raw(loopback6), IpAddr::V6(Ipv6Addr::LOCALHOST));
    assert_eq!(address_to_raw(IpAddr::from([127, 0, 0, 1])), compat);
    assert_eq!(
        address_from_raw(address_to_raw(IpAddr::V6(Ipv6Addr::LOCALHOST))),
        IpAddr::V6(Ipv6Addr::LOCALHOST)
    );
}

#[test]
fn rejects_trailing_bytes() {
    let mut raw = two_server_site();
    raw.push(0);
    let e = decode(&raw).unwrap_err();
    assert_eq!(e.field, "site");
    assert_eq!(e.kind, DecodeErrorKind::TrailingBytes { count: 1 });
}

#[test]
fn rejects_every_truncation() {
    let raw = two_server_site();
    for cut in 0..raw.len() {
        assert!(decode(&raw[..cut]).is_err(), "cut at {cut}");
    }
}

#[test]
fn rejects_counts_beyond_the_bytes_or_the_limit() {
    let mut raw = two_server_site();
    // ServerCount sits right after the attributes: offset 12 + 4 + (4+4+4+3) + (4+8+4+7).
    let at = 12 + 4 + 15 + 23;
    assert_eq!(&raw[at..at + 4], &[0, 0, 0, 2]);
    raw[at + 3] = 200;
    let e = decode(&raw).unwrap_err();
    assert_eq!((e.field, e.offset), ("site.server_count", at));
    let small = Limits {
        max_array: 1,
        ..Limits::default()
    };
    let e = SiteInfo::decode(&Bytes::from(two_server_site()), &small).unwrap_err();
    assert_eq!(e.field, "site.attribute_count");
    assert!(matches!(e.kind, DecodeErrorKind::TooLarge { .. }));
}

#[test]
fn picks_servers_by_hash_in_record_order() {
    let mut s = decode(&two_server_site()).unwrap();
    // By suffix: "20.500.12345/ABC" hashes "ABC".
    let expected = crate::wire::server_index(b"x/ABC", HashOption::BySuffix, 2);
    assert_eq!(s.server_index_for(b"20.500.12345/abc"), expected);
    let idx = s.server_index_for(b"20.500.12345/abc").unwrap();
    assert_eq!(
        s.server_for(b"20.500.12345/abc").unwrap().server_id,
        s.servers[idx].server_id
    );
    s.hash_option = HashOption::Other(9);
    assert_eq!(s.server_for(b"a/b"), None);
    s.hash_option = HashOption::ByHandle;
    s.servers.clear();
    assert_eq!(s.server_for(b"a/b"), None);
}

#[test]
fn attribute_helpers() {
    let mut s = decode(&two_server_site()).unwrap();
    // Two servers: the bare alt_addr does not apply.
    assert_eq!(s.alt_addr(1), None);
    s.servers.truncate(1);
    assert_eq!(s.alt_addr(1), Some(IpAddr::from([1, 2, 3, 4])));
    s.attributes.push((
        Bytes::from_static(b"alt_addr.1"),
        Bytes::from_static(b"::2"),
    ));
    assert_eq!(s.alt_addr(1), Some("::2".parse().unwrap()));
    // Only the id's own decimal form names it: not a leading zero, a sign, or nothing.
    let mut t = decode(&two_server_site()).unwrap();
    for name in [
        &b"alt_addr.01"[..],
        b"alt_addr.+1",
        b"alt_addr.",
        b"alt_addr.1x",
    ] {
        t.attributes
            .push((Bytes::copy_from_slice(name), Bytes::from_static(b"::3")));
    }
    assert_eq!(t.alt_addr(1), None);
    t.attributes.push((
        Bytes::from_static(b"alt_addr.10"),
        Bytes::from_static(b" ::4 "),
    ));
    assert_eq!(t.alt_addr(1), None);
    assert_eq!(t.alt_addr(10), Some("::4".parse().unwrap()));
    assert_eq!(s.domain(0), None);
    s.attributes.push((
        Bytes::from_static(b"domain"),
        Bytes::from_static(b"h.example"),
    ));
    s.attributes.push((
        Bytes::from_static(b"domain.1"),
        Bytes::from_static(b"one.example"),
    ));
    assert_eq!(s.domain(0).as_deref(), Some("h.example"));
    assert_eq!(s.domain(1).as_deref(), Some("one.example"));
}

#[test]
fn unspecified_address_or_large_port_gives_no_socket_addr() {
    let mut srv = ServerInfo::new(1, IpAddr::from([0, 0, 0, 0]));
    srv.interfaces.push(Interface {
        kind: InterfaceType::Query,
        protocol: Protocol::Udp,
        port: 2641,
    });
    assert_eq!(srv.socket_addr(Protocol::Udp, false), None);
    srv.set_address(IpAddr::from([10, 0, 0, 1]));
    assert_eq!(srv.raw_address[12..], [10, 0, 0, 1]);
    assert!(srv.socket_addr(Protocol::Udp, false).is_some());
    srv.interfaces[0].port = 70_000;
    assert_eq!(srv.socket_addr(Protocol::Udp, false), None);
}

#[test]
fn built_site_round_trips() {
    let mut srv = ServerInfo::new(3, "::1".parse().unwrap());
    srv.interfaces.push(Interface {
        kind: InterfaceType::AdminAndQuery,
        protocol: Protocol::Tcp,
        port: 2641,
    });
    let site = SiteInfo {
        data_format_version: 1,
        protocol_version: ProtocolVersion::V2_11,
        serial: 1,
        primary: true,
        multi_primary: false,
        primary_mask: 0,
        hash_option: HashOption::ByHandle,
        hash_filter: Bytes::new(),
        attributes: vec![],
        servers: vec![srv],
    };
    let back = SiteInfo::decode(&site.encode().unwrap(), &Limits::default()).unwrap();
    assert_eq!(back.primary_mask, 0x80);
    assert_eq!(back.servers, site.servers);
    assert_eq!(back.servers[0].address.to_string(), "::1");
}
