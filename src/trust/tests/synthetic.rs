//! Chains signed here, with the test server's RSA keys (`fixtures/testserver/`) and a DSA
//! key on the 2019 root's DSA parameters: DS256, permissions, validity, chain hints, cycles,
//! foreign roots.

use std::collections::BTreeMap;

use bytes::Bytes;
use rand::SeedableRng;
use rsa::pkcs1::DecodeRsaPrivateKey;
use rsa::RsaPrivateKey;

use super::reference_records;
use crate::trust::*;
use crate::wire::{HandleValue, PublicKey};

type Records = BTreeMap<String, Vec<HandleValue>>;

/// 2030-01-01T00:00:00Z, the time of the checks.
const NOW: u64 = 1_893_456_000;
const YEAR: u64 = 365 * 86_400;
const VALID: Validity = Validity {
    from: NOW - YEAR,
    until: NOW + YEAR,
};

fn rsa_key(file: &str) -> SigningKey {
    let der = std::fs::read(format!(
        "{}/fixtures/testserver/{file}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    SigningKey::Rsa(Box::new(RsaPrivateKey::from_pkcs1_der(&der).unwrap()))
}

/// A DSA key on the parameters of the 2019 root's DSA key (300 of `0.NA/0.NA`).
fn dsa_key() -> SigningKey {
    let records = reference_records();
    let value = records["0.NA/0.NA"]
        .iter()
        .find(|v| v.index == 300)
        .unwrap();
    let vk = PublicKey::decode_bytes(&value.data)
        .unwrap()
        .to_dsa()
        .unwrap();
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    SigningKey::Dsa(Box::new(dsa::SigningKey::generate(
        &mut rng,
        vk.components().clone(),
    )))
}

struct Keys {
    root: SigningKey,
    service: SigningKey,
    prefix: SigningKey,
}

fn keys() -> Keys {
    Keys {
        root: rsa_key("test-rsa-2048.pkcs1.der"),
        service: rsa_key("test-rsa-1024.pkcs1.der"),
        prefix: dsa_key(),
    }
}

fn pubkey(index: u32, key: &SigningKey) -> HandleValue {
    HandleValue::new(index, "HS_PUBKEY", key.public_key().encode().unwrap())
}

fn cert(index: u32, data: String) -> HandleValue {
    HandleValue::new(index, "HS_CERT", data)
}

/// Adds an HS_SIGNATURE at `index` over the record's values.
fn sign(
    records: &mut Records,
    handle: &str,
    index: u32,
    issuer: &str,
    key: &SigningKey,
    validity: Validity,
) {
    let values = records.entry(handle.to_string()).or_default();
    let jws = sign_values(handle, values, &ValueId::parse(issuer), key, validity).unwrap();
    values.push(HandleValue::new(index, "HS_SIGNATURE", jws));
}

/// The root `0.0/0.0` (self-signed), `0.NA/0.NA` (its key certified by the root with
/// `everything`), `0.NA/10.5` (a DSA key certified by 0.NA/0.NA's for handles under 10.5,
/// with `prefix_validity`), and `10.5/x` signed by that DSA key.
fn world(k: &Keys, prefix_validity: Validity) -> Records {
    let mut r = Records::new();
    let root_id = ValueId::new("0.0/0.0", 301);
    let root_cert = issue_certificate(
        &root_id,
        &k.root.public_key(),
        vec![Permission::everything()],
        &root_id,
        &k.root,
        VALID,
    )
    .unwrap();
    r.insert(
        "0.0/0.0".into(),
        vec![pubkey(301, &k.root), cert(400, root_cert)],
    );
    sign(&mut r, "0.0/0.0", 401, "301:0.0/0.0", &k.root, VALID);

    let service_id = ValueId::new("0.NA/0.NA", 300);
    let service_cert = issue_certificate(
        &service_id,
        &k.service.public_key(),
        vec![Permission::everything()],
        &root_id,
        &k.root,
        VALID,
    )
    .unwrap();
    r.insert(
        "0.NA/0.NA".into(),
        vec![
            HandleValue::new(1, "DESC", "a root of one's own"),
            pubkey(300, &k.service),
            cert(400, service_cert),
        ],
    );
    sign(&mut r, "0.NA/0.NA", 401, "300:0.NA/0.NA", &k.service, VALID);

    let prefix_id = ValueId::new("0.NA/10.5", 300);
    let prefix_cert = issue_certificate(
        &prefix_id,
        &k.prefix.public_key(),
        vec![Permission::new(
            Permission::HANDLES_UNDER_THIS_PREFIX,
            Some("0.NA/10.5".into()),
        )],
        &service_id,
        &k.service,
        prefix_validity,
    )
    .unwrap();
    r.insert(
        "0.NA/10.5".into(),
        vec![pubkey(300, &k.prefix), cert(400, prefix_cert)],
    );
    sign(&mut r, "0.NA/10.5", 401, "300:0.NA/0.NA", &k.service, VALID);

    r.insert(
        "10.5/x".into(),
        vec![HandleValue::new(1, "URL", "https://example.org/x")],
    );
    sign(&mut r, "10.5/x", 400, "300:0.NA/10.5", &k.prefix, VALID);
    r
}

fn outcome(
    records: &Records,
    root: &TrustRoot,
    handle: &str,
) -> Result<VerifiedRecord, TrustError> {
    verify_records(records, root, NOW)
        .get(handle)
        .unwrap()
        .clone()
}

fn error(records: &Records, root: &TrustRoot, handle: &str) -> TrustError {
    match outcome(records, root, handle) {
        Err(e) => e,
        Ok(r) => panic!("{handle} verified: {r:?}"),
    }
}

fn kind_in_cert(e: &TrustError) -> (&ValueId, &TrustErrorKind) {
    match &e.kind {
        TrustErrorKind::Certificate { cert, reason } => (cert, reason),
        other => panic!("not about a certificate: {other:?}"),
    }
}

#[test]
fn a_chain_signed_here_verifies_with_ds256_at_its_end() {
    let k = keys();
    let r = world(&k, VALID);
    let root = TrustRoot::new([k.root.public_key()]);
    let v = verify_records(&r, &root, NOW);
    assert!(v.all_verified(), "{:?}", v.errors().collect::<Vec<_>>());
    let x = v.get("10.5/x").unwrap().as_ref().unwrap();
    assert_eq!(
        x.signatures[0].chain,
        [
            ValueId::new("0.NA/10.5", 400),
            ValueId::new("0.NA/0.NA", 400),
            ValueId::new("0.0/0.0", 400)
        ]
    );
    let sig = r["10.5/x"]
        .iter()
        .find(|v| v.is_type("HS_SIGNATURE"))
        .unwrap();
    assert_eq!(
        Jws::parse(&sig.data).unwrap().algorithm(),
        JwsAlgorithm::Ds256
    );
    assert_eq!(x.not_after(), Some(NOW + YEAR));

    // The DSA signature's last bytes changed: it no longer verifies (or no longer reads).
    let mut bad = r.clone();
    let v = bad.get_mut("10.5/x").unwrap().last_mut().unwrap();
    let mut data = v.data.to_vec();
    let n = data.len();
    data[n - 3] = if data[n - 3] == b'A' { b'B' } else { b'A' };
    v.data = Bytes::from(data);
    let e = error(&bad, &root, "10.5/x");
    assert_eq!(e.index, Some(400));
    assert!(
        matches!(&e.kind, TrustErrorKind::BadSignature { issuer, key_from }
            if issuer == "300:0.NA/10.5" && *key_from == ValueId::new("0.NA/10.5", 400)),
        "{e}"
    );
    // The global 2019 root does not trust this one.
    let e = error(&r, &TrustRoot::global(), "10.5/x");
    assert!(
        matches!(e.kind, TrustErrorKind::UntrustedRoot { .. }),
        "{e}"
    );
}

#[test]
fn permissions_bound_what_a_certified_key_may_sign() {
    let k = keys();
    let mut r = world(&k, VALID);
    let root = TrustRoot::new([k.root.public_key()]);
    r.insert(
        "10.6/y".into(),
        vec![HandleValue::new(1, "URL", "https://example.org/y")],
    );
    sign(&mut r, "10.6/y", 400, "300:0.NA/10.5", &k.prefix, VALID);
    let e = error(&r, &root, "10.6/y");
    assert_eq!(
        e.kind,
        TrustErrorKind::NotAuthorized {
            grant: ValueId::new("0.NA/10.5", 400),
            handle: "10.6/y".into()
        }
    );
    assert!(outcome(&r, &root, "10.5/x").is_ok());
}

#[test]
fn an_expired_or_future_certificate_breaks_the_chain() {
    let k = keys();
    let root = TrustRoot::new([k.root.public_key()]);
    let old = Validity {
        from: NOW - 2 * YEAR,
        until: NOW - 1,
    };
    let e = error(&world(&k, old), &root, "10.5/x");
    let (cert, reason) = kind_in_cert(&e);
    assert_eq!(*cert, ValueId::new("0.NA/10.5", 400));
    assert_eq!(
        *reason,
        TrustErrorKind::Expired {
            exp: NOW - 1,
            now: NOW
        }
    );
    let future = Validity {
        from: NOW + 1,
        until: NOW + YEAR,
    };
    let e = error(&world(&k, future), &root, "10.5/x");
    assert!(matches!(
        kind_in_cert(&e).1,
        TrustErrorKind::NotYetValid { .. }
    ));
}

#[test]
fn chain_hints_and_broken_links() {
    let k = keys();
    let mut r = world(&k, VALID);
    let root = TrustRoot::new([k.root.public_key()]);
    // A signature that names its issuer's certificate (`chain`): found by index.
    let signed_by_hint = |chain: &str| {
        let values = vec![HandleValue::new(1, "URL", "https://example.org/z")];
        let mut digests = Vec::new();
        for v in &values {
            digests.push((v.index, value_digest(v, DigestAlgorithm::Sha256).unwrap()));
        }
        let claims = Claims {
            iss: Some("300:0.NA/10.5".into()),
            sub: Some("10.5/z".into()),
            digests: Some(SignedDigests {
                alg: "SHA-256".into(),
                digests,
            }),
            chain: vec![chain.to_string()],
            ..Claims::default()
        };
        let jws = k
            .prefix
            .sign_jws(claims.to_json().to_string().as_bytes())
            .unwrap();
        let mut values = values;
        values.push(HandleValue::new(400, "HS_SIGNATURE", jws));
        values
    };
    r.insert("10.5/z".into(), signed_by_hint("400:0.NA/10.5"));
    assert!(outcome(&r, &root, "10.5/z").is_ok());
    // A hint to a certificate about someone else.
    r.insert("10.5/z".into(), signed_by_hint("400:0.NA/0.NA"));
    let e = error(&r, &root, "10.5/z");
    let (cert, reason) = kind_in_cert(&e);
    assert_eq!(*cert, ValueId::new("0.NA/0.NA", 400));
    assert!(matches!(reason, TrustErrorKind::BrokenChain { .. }), "{e}");
    // A hint to a value that is not a JWS.
    r.insert("10.5/z".into(), signed_by_hint("300:0.NA/10.5"));
    let e = error(&r, &root, "10.5/z");
    assert!(matches!(kind_in_cert(&e).1, TrustErrorKind::Jws(_)), "{e}");
    // A hint to a record that is not there.
    r.insert("10.5/z".into(), signed_by_hint("0.NA/10.9"));
    let e = error(&r, &root, "10.5/z");
    assert_eq!(e.kind, TrustErrorKind::NoIssuerRecord("0.NA/10.9".into()));
}

#[test]
fn cycles_foreign_roots_and_mismatched_keys_fail() {
    let k = keys();
    let mut r = world(&k, VALID);
    let root = TrustRoot::new([k.root.public_key()]);
    // 0.NA/20.1's key is certified by 0.NA/20.2's, and the other way round.
    for (me, other) in [("0.NA/20.1", "0.NA/20.2"), ("0.NA/20.2", "0.NA/20.1")] {
        let c = issue_certificate(
            &ValueId::new(me, 300),
            &k.service.public_key(),
            vec![Permission::everything()],
            &ValueId::new(other, 300),
            &k.service,
            VALID,
        )
        .unwrap();
        r.insert(me.into(), vec![pubkey(300, &k.service), cert(400, c)]);
    }
    r.insert("20.1/a".into(), vec![HandleValue::new(1, "URL", "u")]);
    sign(&mut r, "20.1/a", 400, "300:0.NA/20.1", &k.service, VALID);
    let e = error(&r, &root, "20.1/a");
    assert_eq!(e.kind, TrustErrorKind::ChainCycle("0.NA/20.1".into()));

    // A self-signed certificate about another handle is no root.
    let own = ValueId::new("0.NA/99", 300);
    let c = issue_certificate(
        &own,
        &k.root.public_key(),
        vec![Permission::everything()],
        &own,
        &k.root,
        VALID,
    )
    .unwrap();
    r.insert("0.NA/99".into(), vec![cert(400, c)]);
    r.insert("99/a".into(), vec![HandleValue::new(1, "URL", "u")]);
    sign(&mut r, "99/a", 400, "300:0.NA/99", &k.root, VALID);
    let e = error(&r, &root, "99/a");
    assert_eq!(
        e.kind,
        TrustErrorKind::UntrustedRoot {
            cert: ValueId::new("0.NA/99", 400),
            subject: "300:0.NA/99".into()
        }
    );

    // As in the reference library, a chain may not pass the same record twice: a key of
    // 0.NA/0.NA certified by another key of 0.NA/0.NA is a cycle.
    let c = issue_certificate(
        &ValueId::new("0.NA/0.NA", 302),
        &k.prefix.public_key(),
        vec![Permission::everything()],
        &ValueId::new("0.NA/0.NA", 300),
        &k.service,
        VALID,
    )
    .unwrap();
    r.get_mut("0.NA/0.NA").unwrap().push(cert(402, c));
    r.insert("10.7/a".into(), vec![HandleValue::new(1, "URL", "u")]);
    sign(&mut r, "10.7/a", 400, "302:0.NA/0.NA", &k.prefix, VALID);
    let e = error(&r, &root, "10.7/a");
    assert_eq!(e.kind, TrustErrorKind::ChainCycle("0.NA/0.NA".into()));

    // A DSA signature where the certificate gives an RSA key.
    r.insert("10.5/w".into(), vec![HandleValue::new(1, "URL", "u")]);
    sign(&mut r, "10.5/w", 400, "300:0.NA/0.NA", &k.prefix, VALID);
    let e = error(&r, &root, "10.5/w");
    assert!(
        matches!(&e.kind, TrustErrorKind::KeyType { alg: JwsAlgorithm::Ds256, key, .. } if &**key == "RSA_PUB_KEY"),
        "{e}"
    );

    // A signature about another handle.
    let other = r["10.5/x"].clone();
    r.insert("10.5/copy".into(), other);
    let e = error(&r, &root, "10.5/copy");
    assert_eq!(e.kind, TrustErrorKind::WrongSubject(Some("10.5/x".into())));
}
