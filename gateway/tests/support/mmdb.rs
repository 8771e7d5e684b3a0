//! A MaxMind DB file made here, for the GeoIP tests: an IPv4 database (`ip_version` 4,
//! 24-bit records) that maps whole `/8` networks to `{"country": {"iso_code": CODE}}`.
//!
//! Every byte follows the MaxMind DB File Format Specification 2.0
//! (<https://maxmind.github.io/MaxMind-DB/>): the binary search tree (one node per bit of
//! the address, each node two 24-bit records, big-endian: left for a 0 bit, right for a 1;
//! a record equal to the node count means "no data", one above it points into the data
//! section at `record - node_count - 16`), the 16 zero bytes that separate the data section,
//! the data section's values (a control byte: the type in the top 3 bits, the size in the low
//! 5; extended types as type 0 and a second byte `type - 7`), then the metadata marker
//! `\xAB\xCD\xEFMaxMind.com` and the metadata map.

/// A value of the data section.
enum Value<'a> {
    Text(&'a str),
    U16(u16),
    U32(u32),
    U64(u64),
    Map(Vec<(&'a str, Value<'a>)>),
    Array(Vec<Value<'a>>),
}

fn control(out: &mut Vec<u8>, kind: u8, size: usize) {
    assert!(size < 29, "sizes of 29 and more are not written here");
    let size = size as u8;
    if kind <= 7 {
        out.push((kind << 5) | size);
    } else {
        out.push(size);
        out.push(kind - 7);
    }
}

fn uint(out: &mut Vec<u8>, kind: u8, value: u64) {
    let bytes = value.to_be_bytes();
    let skip = bytes.iter().take_while(|&&b| b == 0).count();
    control(out, kind, bytes.len() - skip);
    out.extend_from_slice(&bytes[skip..]);
}

fn encode(out: &mut Vec<u8>, value: &Value<'_>) {
    match value {
        Value::Text(t) => {
            control(out, 2, t.len());
            out.extend_from_slice(t.as_bytes());
        }
        Value::U16(v) => uint(out, 5, u64::from(*v)),
        Value::U32(v) => uint(out, 6, u64::from(*v)),
        Value::U64(v) => uint(out, 9, *v),
        Value::Map(pairs) => {
            control(out, 7, pairs.len());
            for (k, v) in pairs {
                encode(out, &Value::Text(k));
                encode(out, v);
            }
        }
        Value::Array(items) => {
            control(out, 11, items.len());
            for v in items {
                encode(out, v);
            }
        }
    }
}

/// The database: each `(first octet, country code)` makes `N.0.0.0/8` that country.
pub fn countries(networks: &[(u8, &str)]) -> Vec<u8> {
    // The data section: one record per network, in order.
    let mut data = Vec::new();
    let mut offsets = Vec::new();
    for (_, code) in networks {
        offsets.push(data.len());
        let record = Value::Map(vec![(
            "country",
            Value::Map(vec![("iso_code", Value::Text(code))]),
        )]);
        encode(&mut data, &record);
    }
    // The tree: a full binary tree over the first 8 bits (nodes 0..255, node `n` at depth
    // `d` has children `2n+1`, `2n+2`), whose leaves' records point at the data or at
    // nothing.
    let internal = 255usize; // nodes of depths 0 to 7
    let node_count = internal;
    let mut records = vec![[node_count as u32; 2]; node_count];
    for (n, record) in records.iter_mut().enumerate() {
        for (bit, slot) in record.iter_mut().enumerate() {
            let child = 2 * n + 1 + bit;
            if child < internal {
                *slot = child as u32;
            } else {
                // A leaf: the network whose first octet is this path.
                let octet = (child - internal) as u8;
                if let Some(i) = networks.iter().position(|(o, _)| *o == octet) {
                    *slot = (node_count + 16 + offsets[i]) as u32;
                }
            }
        }
    }
    let mut out = Vec::new();
    for [left, right] in records {
        out.extend_from_slice(&left.to_be_bytes()[1..]);
        out.extend_from_slice(&right.to_be_bytes()[1..]);
    }
    out.extend_from_slice(&[0u8; 16]);
    out.extend_from_slice(&data);
    out.extend_from_slice(b"\xAB\xCD\xEFMaxMind.com");
    let metadata = Value::Map(vec![
        ("node_count", Value::U32(node_count as u32)),
        ("record_size", Value::U16(24)),
        ("ip_version", Value::U16(4)),
        ("database_type", Value::Text("handle-gateway-test")),
        ("languages", Value::Array(vec![Value::Text("en")])),
        ("binary_format_major_version", Value::U16(2)),
        ("binary_format_minor_version", Value::U16(0)),
        ("build_epoch", Value::U64(1_764_374_400)),
        (
            "description",
            Value::Map(vec![("en", Value::Text("test countries"))]),
        ),
    ]);
    encode(&mut out, &metadata);
    out
}
