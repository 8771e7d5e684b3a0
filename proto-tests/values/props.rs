//! Property tests: the typed-value decoders never panic on random or mutated input, and
//! whatever they accept encodes back to the same bytes.

use proptest::prelude::*;

use super::*;

/// Type names with a typed view, plus a few others.
const TYPES: [&str; 18] = [
    "URL",
    "EMAIL",
    "DESC",
    "HS_ADMIN",
    "HS_SITE",
    "HS_SITE.6",
    "HS_SITE.PREFIX",
    "HS_NA_DELEGATE",
    "HS_SERV",
    "HS_VLIST",
    "HS_ALIAS",
    "HS_PUBKEY",
    "HS_SECKEY",
    "HS_NAMESPACE",
    "10320/loc",
    "JSON",
    "hs_site",
    "",
];

/// Real records to mutate: the HS_SITE, HS_PUBKEY, HS_ADMIN, HS_VLIST and 10320/loc data of
/// the captures (one of each type).
fn seeds() -> &'static [HandleValue] {
    static SEEDS: std::sync::OnceLock<Vec<HandleValue>> = std::sync::OnceLock::new();
    SEEDS.get_or_init(|| {
        let mut seen = std::collections::HashSet::new();
        captured_values()
            .into_iter()
            .map(|(_, v)| v)
            .filter(|v| seen.insert(v.type_name.clone()))
            .collect()
    })
}

fn check_site(data: &[u8]) {
    let b = Bytes::copy_from_slice(data);
    if let Ok(site) = SiteInfo::decode(&b, &Limits::default()) {
        assert_eq!(site.encode().unwrap(), b);
        for s in &site.servers {
            let _ = s.public_key();
            let _ = s.socket_addr(Protocol::Udp, false);
        }
        let _ = site.server_for(b"20.500.12345/x");
        let _ = handle_resolver::wire::json::site_to_json(&site);
    }
}

fn check_key(data: &[u8]) {
    if let Ok(key) = PublicKey::decode(data) {
        assert_eq!(key.encode().unwrap().as_ref(), data);
        let _ = handle_resolver::wire::json::key_to_json(&key);
    }
}

fn check_typed(type_name: &str, data: &[u8]) {
    let v = HandleValue::new(1, type_name.to_owned(), Bytes::copy_from_slice(data));
    let t = v.typed();
    assert_eq!(t.encode().unwrap(), v.data);
    let j = t.to_json();
    assert_eq!(j["format"], t.format().name());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn random_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..600),
                                t in 0..TYPES.len()) {
        check_site(&data);
        check_key(&data);
        check_typed(TYPES[t], &data);
    }

    #[test]
    fn mutated_captured_values_never_panic(
        pick in any::<prop::sample::Index>(),
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
        cut in any::<prop::sample::Index>(),
        truncate in any::<bool>(),
    ) {
        let seeds = seeds();
        let seed = pick.get(seeds);
        let mut data = seed.data.to_vec();
        if !data.is_empty() {
            for (at, byte) in &edits {
                let i = at.index(data.len());
                data[i] = *byte;
            }
            if truncate {
                data.truncate(cut.index(data.len()));
            }
        }
        check_site(&data);
        check_key(&data);
        check_typed(&seed.type_str(), &data);
    }
}

#[test]
fn seeds_cover_the_binary_types() {
    let seeds = seeds();
    for t in ["HS_SITE", "HS_PUBKEY", "HS_ADMIN", "HS_VLIST", "10320/loc"] {
        assert!(seeds.iter().any(|v| v.is_type(t)), "no {t} seed");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn random_signatures_never_verify_or_panic(
        sig in proptest::collection::vec(any::<u8>(), 0..300),
        alg in prop::sample::select(vec![&b"SHA1"[..], b"SHA-256", b"MD5", &[2u8], b"?"]),
        data in proptest::collection::vec(any::<u8>(), 0..64),
    ) {
        for key in signing_keys().values() {
            prop_assert!(verify_signature(key, alg, &sig, &data).is_err());
        }
    }
}

fn signing_keys() -> &'static HashMap<String, PublicKey> {
    static KEYS: std::sync::OnceLock<HashMap<String, PublicKey>> = std::sync::OnceLock::new();
    KEYS.get_or_init(signatures::all_keys)
}
