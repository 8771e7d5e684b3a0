//! The 2019 root file: every record verifies; any one-byte change fails exactly the record
//! that holds it (and the records whose chain passes through it, when it is a certificate).

use std::collections::BTreeMap;

use bytes::Bytes;

use super::{reference_records, LAST_UPDATE};
use crate::trust::*;
use crate::wire::{HandleValue, Limits, PublicKey};

type Records = BTreeMap<String, Vec<HandleValue>>;

fn check(records: &Records, now: u64) -> Verification {
    verify_records(records, &TrustRoot::global(), now)
}

#[test]
fn every_record_of_the_2019_file_verifies() {
    let records = reference_records();
    let v = check(&records, LAST_UPDATE);
    for (handle, r) in v.iter() {
        if let Err(e) = r {
            panic!("{handle}: {e}");
        }
    }
    assert!(v.all_verified());
    assert_eq!(v.len(), 11);
    for rec in v.verified() {
        // Every value is signed but the signatures themselves (and the legacy pair).
        let values = &records[&rec.handle];
        let unsigned: Vec<u32> = values
            .iter()
            .filter(|v| !rec.signed.contains(&v.index))
            .map(|v| v.index)
            .collect();
        let want: &[u32] = match rec.handle.as_str() {
            "0.0/0.0" => &[401],
            "0.NA/0.NA" => &[401, 402, 403],
            _ => &[400],
        };
        assert_eq!(unsigned, want, "{}", rec.handle);
    }

    // 0.GHR/20: one signature by 0.NA/0.NA's key, whose certificate the root issued.
    let Some(Ok(ghr)) = v.get("0.GHR/20") else {
        panic!()
    };
    let s = &ghr.signatures[0];
    assert_eq!((s.index, s.issuer.as_str()), (400, "301:0.NA/0.NA"));
    assert_eq!(
        s.chain,
        [ValueId::new("0.NA/0.NA", 400), ValueId::new("0.0/0.0", 400)]
    );
    assert_eq!(s.signed, [100, 20, 300, 1]);
    // The signature's own exp (2020-04-03), before the certificates' (2021).
    assert_eq!(ghr.not_after(), Some(1_585_916_281));

    // The root's record is signed by 0.NA/0.NA too, through the same two certificates.
    let Some(Ok(root)) = v.get("0.0/0.0") else {
        panic!()
    };
    assert_eq!(root.signatures[0].issuer, "301:0.NA/0.NA");

    // 0.NA/0.NA's legacy DSA signature (403, SHA1withDSA by 300:0.NA/0.NA over 402).
    let Some(Ok(na)) = v.get("0.NA/0.NA") else {
        panic!()
    };
    assert_eq!(na.legacy_signatures, [403]);
    let signer = records["0.NA/0.NA"]
        .iter()
        .find(|v| v.index == 300)
        .unwrap();
    assert!(matches!(
        PublicKey::decode_bytes(&signer.data),
        Ok(PublicKey::Dsa(_))
    ));
}

#[test]
fn the_built_in_root_key_is_the_files() {
    let records = reference_records();
    let key = records["0.0/0.0"]
        .iter()
        .find(|v| v.index == 301 && v.is_type("HS_PUBKEY"))
        .unwrap();
    let file_key = PublicKey::decode_bytes(&key.data).unwrap();
    let global = TrustRoot::global();
    assert_eq!(global.keys(), std::slice::from_ref(&file_key));
    assert_eq!(TrustRoot::from_values(&records["0.0/0.0"]), global);
    // The self-signed certificate certifies the same key (its JWK has Java's sign byte).
    let cert = records["0.0/0.0"].iter().find(|v| v.index == 400).unwrap();
    let jws = Jws::parse(&cert.data).unwrap();
    let claims = Claims::parse(jws.payload(), &Limits::default()).unwrap();
    assert!(claims.is_self_issued());
    assert!(global.contains(claims.public_key.as_ref().unwrap()));
    assert!(!global.contains(&PublicKey::decode_bytes(&records["0.NA/0.NA"][5].data).unwrap()));
}

/// `records` with byte `at` of the data of value `index` of `handle` changed.
fn tampered(records: &Records, handle: &str, index: u32, at: usize) -> Records {
    let mut out = records.clone();
    let v = out
        .get_mut(handle)
        .unwrap()
        .iter_mut()
        .find(|v| v.index == index)
        .unwrap();
    let mut data = v.data.to_vec();
    data[at] ^= 0x01;
    v.data = Bytes::from(data);
    out
}

#[test]
fn one_changed_byte_in_any_value_fails_exactly_its_record() {
    let records = reference_records();
    let mut runs = 0;
    let mut dependents = 0;
    for (handle, values) in &records {
        for value in values {
            let len = value.data.len();
            assert!(len > 0, "{handle} {}", value.index);
            let mut positions = vec![0, len / 2, len - 1];
            positions.dedup();
            for at in positions {
                runs += 1;
                let changed = tampered(&records, handle, value.index, at);
                let v = check(&changed, LAST_UPDATE);
                let what = format!("{handle} value {} byte {at}", value.index);
                match v.get(handle) {
                    Some(Err(e)) => assert!(
                        e.names(handle, value.index),
                        "{what}: the error does not name the value: {e}"
                    ),
                    other => panic!("{what}: still {other:?}"),
                }
                for (other, r) in v.iter().filter(|(h, _)| h != handle) {
                    let Err(e) = r else { continue };
                    // Only a certificate fails the records whose chains pass through it.
                    assert!(
                        value.is_type("HS_CERT") && e.names(handle, value.index),
                        "{what}: {other} fails too: {e}"
                    );
                    assert!(
                        matches!(
                            e.kind,
                            TrustErrorKind::Certificate { .. }
                                | TrustErrorKind::NoCertificate { .. }
                        ),
                        "{what}: {e}"
                    );
                    dependents += 1;
                }
            }
        }
    }
    assert!(runs > 200, "{runs}");
    // The two certificates (0.NA/0.NA's and the root's) carry every other record's chain.
    assert!(dependents >= 2 * 3 * 9, "{dependents}");
}

#[test]
fn the_reasons_name_what_changed() {
    let records = reference_records();
    let reason = |handle: &str, index: u32, at: usize| {
        let v = check(&tampered(&records, handle, index, at), LAST_UPDATE);
        match v.get(handle) {
            Some(Err(e)) => e.clone(),
            other => panic!("{other:?}"),
        }
    };
    // An HS_SITE of 0.GHR/20: its digest no longer matches.
    let e = reason("0.GHR/20", 20, 40);
    assert_eq!(e.index, Some(20));
    assert_eq!(e.value_type.as_deref(), Some("HS_SITE"));
    assert_eq!(
        e.kind,
        TrustErrorKind::DigestMismatch {
            signature: 400,
            alg: DigestAlgorithm::Sha256
        }
    );
    assert_eq!(
        e.to_string(),
        "0.GHR/20: value 20 (HS_SITE): its SHA-256 digest differs from the one signed in value 400"
    );
    // The last character of a JWS signature: no longer the signature (or not canonical).
    let sig = records["0.GHR/20"].iter().find(|v| v.index == 400).unwrap();
    let e = reason("0.GHR/20", 400, sig.data.len() - 1);
    assert_eq!(e.index, Some(400));
    assert!(
        matches!(
            e.kind,
            TrustErrorKind::BadSignature { .. }
                | TrustErrorKind::Jws(JwsError::Base64("signature"))
        ),
        "{e}"
    );
    // The legacy digests value: the DSA signature over it fails.
    let e = reason("0.NA/0.NA", 402, 100);
    assert_eq!(e.index, Some(403));
    assert_eq!(
        e.kind,
        TrustErrorKind::Legacy(LegacyError::BadSignature { digests: 402 })
    );
    assert!(e.names("0.NA/0.NA", 402));
    // 0.NA/0.NA's certificate: every record it vouches for names it.
    let v = check(&tampered(&records, "0.NA/0.NA", 400, 700), LAST_UPDATE);
    assert_eq!(v.errors().count(), 11);
    for e in v.errors() {
        assert!(e.names("0.NA/0.NA", 400), "{e}");
    }
}

#[test]
fn a_wrong_trust_root_fails_every_record() {
    let records = reference_records();
    // 0.NA/0.NA's own key (certified by the root, but not the root), or no key at all.
    let na_cert = records["0.NA/0.NA"]
        .iter()
        .find(|v| v.index == 400)
        .unwrap();
    let claims = Claims::parse(
        Jws::parse(&na_cert.data).unwrap().payload(),
        &Limits::default(),
    )
    .unwrap();
    for root in [
        TrustRoot::new(claims.public_key),
        TrustRoot::default(),
        TrustRoot::from_values(&records["0.NA/0.NA"]),
    ] {
        let v = verify_records(&records, &root, LAST_UPDATE);
        assert_eq!(v.errors().count(), 11);
        for e in v.errors() {
            assert_eq!(e.index.map(|_| ()), Some(()), "{e}");
            assert!(
                matches!(&e.kind, TrustErrorKind::UntrustedRoot { cert, subject }
                    if *cert == ValueId::new("0.0/0.0", 400) && subject == "301:0.0/0.0"),
                "{e}"
            );
        }
    }
}

#[test]
fn the_time_of_the_check_matters() {
    let records = reference_records();
    // 2019-07-01: the newest signatures (0.0/0.0's, 0.NA/0.NA's, 0.GHR/86's) and the
    // certificates (nbf 2019-07-05) are not valid yet; 0.GHR/21's (2017) is, but its chain
    // is not.
    let v = check(&records, 1_561_939_200);
    assert_eq!(v.errors().count(), 11);
    let e = v.get("0.GHR/21").unwrap().as_ref().unwrap_err();
    assert!(
        matches!(&e.kind, TrustErrorKind::Certificate { reason, .. }
            if matches!(**reason, TrustErrorKind::NotYetValid { .. })),
        "{e}"
    );
    let e = v.get("0.GHR/86").unwrap().as_ref().unwrap_err();
    assert_eq!(
        e.kind,
        TrustErrorKind::NotYetValid {
            nbf: 1_563_387_671,
            now: 1_561_939_200
        }
    );
    assert_eq!(
        e.to_string(),
        "0.GHR/86: value 400 (HS_SIGNATURE): not valid before 2019-07-17T18:21:11Z \
         (checked at 2019-07-01T00:00:00Z)"
    );
    // 2019-11-20: 0.GHR/25's signature has expired (2019-11-10), the others still hold.
    let v = check(&records, 1_574_208_000);
    let failed: Vec<&str> = v.errors().map(|e| e.handle.as_str()).collect();
    assert_eq!(failed, ["0.GHR/25"]);
    // 2022: everything has expired.
    let v = check(&records, 1_640_995_200);
    assert_eq!(v.errors().count(), 11);
    assert!(v.errors().all(|e| e.to_string().contains("expired at")));
}

#[test]
fn records_must_be_complete_and_present() {
    let records = reference_records();
    // Without 0.NA/0.NA, no chain can be built.
    let mut without = records.clone();
    without.remove("0.NA/0.NA");
    let v = check(&without, LAST_UPDATE);
    assert_eq!(v.errors().count(), 10);
    for e in v.errors() {
        assert_eq!(
            e.kind,
            TrustErrorKind::NoIssuerRecord("0.NA/0.NA".into()),
            "{e}"
        );
    }
    // A signed value removed, an unsigned value added, an index twice, no signature.
    let mut r = records.clone();
    r.get_mut("0.GHR/10").unwrap().retain(|v| v.index != 20);
    let e = check(&r, LAST_UPDATE)
        .get("0.GHR/10")
        .unwrap()
        .clone()
        .unwrap_err();
    assert_eq!(
        (e.index, e.kind),
        (Some(20), TrustErrorKind::MissingValue { signature: 400 })
    );
    let mut r = records.clone();
    r.get_mut("0.GHR/10")
        .unwrap()
        .push(HandleValue::new(7, "URL", "https://example.org/"));
    let e = check(&r, LAST_UPDATE)
        .get("0.GHR/10")
        .unwrap()
        .clone()
        .unwrap_err();
    assert_eq!((e.index, e.kind), (Some(7), TrustErrorKind::Unsigned));
    // A non-public value needs no signature.
    let mut private = HandleValue::new(7, "URL", "https://example.org/");
    private.permissions = crate::wire::Permissions(0x0C);
    let mut r = records.clone();
    r.get_mut("0.GHR/10").unwrap().push(private);
    assert!(check(&r, LAST_UPDATE).all_verified());
    let mut r = records.clone();
    let first = r["0.GHR/10"][0].clone();
    r.get_mut("0.GHR/10").unwrap().push(first);
    let e = check(&r, LAST_UPDATE)
        .get("0.GHR/10")
        .unwrap()
        .clone()
        .unwrap_err();
    assert_eq!(e.kind, TrustErrorKind::DuplicateIndex);
    let mut r = records.clone();
    r.get_mut("0.GHR/10")
        .unwrap()
        .retain(|v| !v.is_type("HS_SIGNATURE"));
    let e = check(&r, LAST_UPDATE)
        .get("0.GHR/10")
        .unwrap()
        .clone()
        .unwrap_err();
    assert_eq!((e.index, e.kind), (None, TrustErrorKind::NoSignature));
    assert!(!check(&Records::new(), LAST_UPDATE).all_verified());
}

#[test]
fn handle_case_follows_the_reference_rules() {
    // A record keyed in lower case is the same handle for the chain (0. handles fold).
    let mut records = reference_records();
    let na = records.remove("0.NA/0.NA").unwrap();
    records.insert("0.na/0.na".into(), na);
    let v = check(&records, LAST_UPDATE);
    assert!(v.all_verified(), "{:?}", v.errors().next());
}

mod any_change {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        /// Any byte of any value a JWS signature covers, changed to any other byte: its
        /// record fails, and the error names the value.
        #[test]
        fn fails_the_record(pick in any::<prop::sample::Index>(), at in any::<prop::sample::Index>(), xor in 1u8..) {
            let records = reference_records();
            let signed: Vec<(&String, &HandleValue)> = records
                .iter()
                .flat_map(|(h, vs)| vs.iter().map(move |v| (h, v)))
                .filter(|(_, v)| {
                    !v.is_type("HS_SIGNATURE")
                        && !v.is_type(LEGACY_SIGNATURE_TYPE)
                        && !v.is_type(LEGACY_DIGESTS_TYPE)
                })
                .collect();
            let (handle, value) = signed[pick.index(signed.len())];
            let mut changed = records.clone();
            let v = changed
                .get_mut(handle)
                .unwrap()
                .iter_mut()
                .find(|v| v.index == value.index)
                .unwrap();
            let mut data = v.data.to_vec();
            let i = at.index(data.len());
            data[i] ^= xor;
            v.data = Bytes::from(data);
            let result = check(&changed, LAST_UPDATE);
            match result.get(handle) {
                Some(Err(e)) => prop_assert!(e.names(handle, value.index), "{}", e),
                other => prop_assert!(false, "{} {} byte {}: {:?}", handle, value.index, i, other),
            }
        }
    }
}
