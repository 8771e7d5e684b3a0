//! Criterion benches of the sans-IO wire codec on the reference captures (issue 5).
//!
//! Run: `cargo bench -p handle-resolver-benches --bench wire -- --warm-up-time 1 --measurement-time 3`.
//! Every input is read once, before timing, from `fixtures/reference/captures`.

use std::hint::black_box;
use std::path::PathBuf;
use std::time::Instant;

use bytes::Bytes;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use handle_resolver::wire::{
    server_index, Body, Envelope, HashOption, Limits, Message, PartialMessage, Reader, Reassembler,
    ReassemblerConfig, SiteInfo,
};

/// The bytes of one capture file.
fn capture(scenario: &str, file: &str) -> Bytes {
    let path: PathBuf = [
        env!("CARGO_MANIFEST_DIR"),
        "..",
        "fixtures/reference/captures",
        scenario,
        file,
    ]
    .iter()
    .collect();
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    Bytes::from(bytes)
}

/// The server-to-client datagrams of a UDP scenario, in file order.
fn s2c_datagrams(scenario: &str) -> Vec<Bytes> {
    let dir: PathBuf = [
        env!("CARGO_MANIFEST_DIR"),
        "..",
        "fixtures/reference/captures",
        scenario,
    ]
    .iter()
    .collect();
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.contains("_s2c_udp_") && n.ends_with(".bin"))
        .collect();
    names.sort();
    names.iter().map(|n| capture(scenario, n)).collect()
}

/// Reassembles datagrams into one decoded message (setup only, not timed).
fn reassemble(datagrams: &[Bytes]) -> Message {
    let mut r = Reassembler::new(ReassemblerConfig::default());
    let now = Instant::now();
    datagrams
        .iter()
        .find_map(|d| r.push(d.clone(), now).expect("datagram"))
        .expect("complete message")
}

/// The first HS_SITE value data of the prefix handle's captured answer.
fn prefix_site_data() -> Bytes {
    let m = reassemble(&s2c_datagrams("udp_prefix_handle"));
    let Body::ResolutionResponse(r) = m.body else {
        panic!("udp_prefix_handle: not a resolution response");
    };
    r.values
        .into_iter()
        .find(|v| v.is_type("HS_SITE"))
        .expect("HS_SITE value")
        .data
}

fn value_count(m: &Message) -> usize {
    match &m.body {
        Body::ResolutionResponse(r) => r.values.len(),
        _ => 0,
    }
}

fn encode_request(c: &mut Criterion) {
    let mut g = c.benchmark_group("encode");
    g.bench_function("resolution_request", |b| {
        b.iter(|| {
            let m = Message::resolution_request(
                black_box(Bytes::from_static(b"20.500.12345/1")),
                Vec::new(),
                Vec::new(),
                black_box(0x1234_5678),
                1_700_000_000,
            );
            m.encode().expect("encode")
        })
    });
    g.finish();
}

fn decode(c: &mut Criterion) {
    let limits = Limits::default();
    let mut g = c.benchmark_group("decode");

    let one = capture("udp_resolve_all", "02_s2c_udp_cport33310.bin");
    let m = Message::decode(one.clone(), &limits).expect("udp_resolve_all");
    eprintln!(
        "udp_resolve_all: {} bytes, {} values",
        one.len(),
        value_count(&m)
    );
    g.throughput(Throughput::Elements(1));
    g.bench_function("udp_resolve_all", |b| {
        b.iter(|| Message::decode(black_box(one.clone()), &limits).expect("decode"))
    });

    let large = capture("tcp_large", "tcp1_cport40414_s2c.bin");
    let m = Message::decode(large.clone(), &limits).expect("tcp_large");
    eprintln!(
        "tcp_large: {} bytes, {} values",
        large.len(),
        value_count(&m)
    );
    g.bench_function("tcp_large", |b| {
        b.iter(|| Message::decode(black_box(large.clone()), &limits).expect("decode"))
    });

    let site = prefix_site_data();
    let info = SiteInfo::decode(&site, &limits).expect("HS_SITE");
    eprintln!(
        "prefix HS_SITE: {} bytes, {} servers",
        site.len(),
        info.servers.len()
    );
    g.bench_function("hs_site_prefix", |b| {
        b.iter(|| SiteInfo::decode(black_box(&site), &limits).expect("decode"))
    });
    g.finish();
}

fn reassembly(c: &mut Criterion) {
    let limits = Limits::default();
    let datagrams = s2c_datagrams("udp_large");
    let m = reassemble(&datagrams);
    eprintln!(
        "udp_large: {} datagrams, {} values",
        datagrams.len(),
        value_count(&m)
    );
    let mut g = c.benchmark_group("reassemble");
    g.bench_function("udp_large_reassembler", |b| {
        let now = Instant::now();
        b.iter(|| {
            let mut r = Reassembler::new(ReassemblerConfig::default());
            let mut out = None;
            for d in &datagrams {
                if let Some(m) = r.push(black_box(d.clone()), now).expect("push") {
                    out = Some(m);
                }
            }
            out.expect("complete")
        })
    });
    g.bench_function("udp_large_partial_message", |b| {
        b.iter(|| {
            let mut reader = Reader::new(datagrams[0].clone());
            let env = Envelope::decode(&mut reader).expect("envelope");
            let mut p = PartialMessage::new(env, &limits).expect("partial");
            let mut out = None;
            for d in &datagrams {
                if let Some(bytes) = p.push(black_box(d.clone())).expect("push") {
                    out = Some(Message::decode_parts(*p.envelope(), bytes, &limits));
                }
            }
            out.expect("complete").expect("decode")
        })
    });
    g.finish();
}

fn server_choice(c: &mut Criterion) {
    let limits = Limits::default();
    let site = SiteInfo::decode(&prefix_site_data(), &limits).expect("HS_SITE");
    let mut three = site.clone();
    while three.servers.len() < 3 {
        let mut s = site.servers[0].clone();
        s.server_id = three.servers.len() as u32 + 1;
        three.servers.push(s);
    }
    three.hash_option = HashOption::ByHandle;
    let mut g = c.benchmark_group("server_choice");
    g.bench_function("md5_site_of_3", |b| {
        b.iter(|| {
            three
                .server_for(black_box(b"20.500.12345/some-suffix-1"))
                .map(|s| s.server_id)
        })
    });
    g.bench_function("md5_server_index", |b| {
        b.iter(|| {
            server_index(
                black_box(b"0.NA/20.500.12345"),
                HashOption::ByHandle,
                black_box(3),
            )
        })
    });
    g.finish();
}

criterion_group!(benches, encode_request, decode, reassembly, server_choice);
criterion_main!(benches);
