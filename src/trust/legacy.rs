//! The deprecated value signature the 2019 root file still carries in `0.NA/0.NA` beside its
//! JWS (the reference library's `HandleSignature`): a `10320/sig.digest` value listing the
//! MD5 and SHA-1 digests of the signed values,
//!
//! ```text
//! <digests hdl="0.NA/0.NA">
//! <val index="100" md5="48D7…" sha1="3C4E…"/> …
//! </digests>
//! ```
//!
//! and a `10320/sig.sig` value with a signature, in hex, over that value's digested bytes
//! (the same bytes as a value digest, [`digested_bytes`]):
//!
//! ```text
//! <signature hdl="0.NA/0.NA" ofindex="402" signer="0.NA/0.NA" signerIndex="300">
//! <sig alg="SHA1withDSA" signer="0.NA/0.NA" signerIndex="300">302D0215…</sig>
//! </signature>
//! ```
//!
//! The signer's key must be an HS_PUBKEY value that a trusted JWS signature covers; the
//! signature must verify with it, and every listed digest must match its value. Only the
//! listed algorithms are checked, and a SHA one must be among them (MD5 alone proves
//! nothing).

use quick_xml::events::{BytesStart, Event};

use super::digest::{digested_bytes, DigestAlgorithm};
use super::error::{LegacyError, TrustError, TrustErrorKind};
use super::names::{same_handle, ValueId};
use crate::wire::signature::{verify_signature, SignatureError};
use crate::wire::{HandleValue, PublicKey};

/// The type of the signature value.
pub const SIGNATURE_TYPE: &str = "10320/sig.sig";
/// The type of the digests value.
pub const DIGESTS_TYPE: &str = "10320/sig.digest";
/// The signer index when the XML names none (the reference library's default).
const DEFAULT_SIGNER_INDEX: &str = "300";

/// One XML element of the two-level documents above.
#[derive(Debug, Default)]
struct Element {
    name: String,
    attrs: Vec<(String, String)>,
    text: String,
    children: Vec<Element>,
}

impl Element {
    fn attr(&self, name: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

fn start(e: &BytesStart<'_>) -> Result<Element, String> {
    let mut el = Element {
        name: String::from_utf8_lossy(e.name().as_ref()).into_owned(),
        ..Element::default()
    };
    for a in e.attributes() {
        let a = a.map_err(|_| format!("attribute of <{}>", el.name))?;
        let value = a
            .unescape_value()
            .map_err(|_| format!("attribute of <{}>", el.name))?;
        el.attrs.push((
            String::from_utf8_lossy(a.key.as_ref()).into_owned(),
            value.into_owned(),
        ));
    }
    Ok(el)
}

/// Reads a root element and its children (deeper elements are refused).
fn read_xml(text: &str, root: &str) -> Result<Element, String> {
    let mut reader = quick_xml::Reader::from_str(text);
    let mut stack: Vec<Element> = Vec::new();
    let mut done: Option<Element> = None;
    loop {
        let event = reader.read_event().map_err(|_| format!("<{root}> XML"))?;
        let (el, empty) = match event {
            Event::Start(e) => (start(&e)?, false),
            Event::Empty(e) => (start(&e)?, true),
            Event::Text(t) => {
                let t = t.unescape().map_err(|_| format!("<{root}> text"))?;
                let depth = stack.len();
                match stack.last_mut() {
                    // The text of a child (`<sig>`'s hex).
                    Some(top) if depth == 2 => top.text.push_str(&t),
                    // Between elements, only XML white space.
                    _ if t.chars().all(is_xml_space) => {}
                    _ => return Err(format!("<{root}>: text between elements")),
                }
                continue;
            }
            Event::End(_) => {
                let Some(el) = stack.pop() else {
                    return Err(format!("<{root}> XML"));
                };
                match stack.last_mut() {
                    Some(parent) => parent.children.push(el),
                    None => done = Some(el),
                }
                continue;
            }
            Event::Eof => break,
            _ => continue,
        };
        if done.is_some() || stack.len() >= 2 {
            return Err(format!("<{root}>: unexpected <{}>", el.name));
        }
        if stack.is_empty() && el.name != root {
            return Err(format!("<{root}>: found <{}>", el.name));
        }
        if empty {
            match stack.last_mut() {
                Some(parent) => parent.children.push(el),
                None => done = Some(el),
            }
        } else {
            stack.push(el);
        }
    }
    match (done, stack.is_empty()) {
        (Some(el), true) => Ok(el),
        _ => Err(format!("<{root}> XML")),
    }
}

/// XML's white space (`S` of XML 1.0 §2.3): space, tab, CR, LF.
fn is_xml_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\n')
}

/// The trust test of a signer's key value.
pub(crate) trait SignerTrust {
    /// The record holding `signer` and whether a trusted JWS covers that value; `None` when
    /// the record is not in the set.
    fn signer_value(&self, signer: &ValueId) -> Option<(Option<&HandleValue>, bool)>;
}

/// Checks the 10320/sig.sig value `sig` of the record `handle`; returns its index.
pub(crate) fn verify(
    handle: &str,
    values: &[HandleValue],
    sig: &HandleValue,
    signers: &dyn SignerTrust,
) -> Result<u32, TrustError> {
    let at_sig = |k: LegacyError| TrustError::value(handle, sig, k.into());
    let sig_text = std::str::from_utf8(&sig.data)
        .map_err(|_| at_sig(LegacyError::Xml("signature: not UTF-8".into())))?;
    let signature = read_xml(sig_text, "signature").map_err(|e| at_sig(LegacyError::Xml(e)))?;
    let of = signature
        .attr("ofIndex")
        .or_else(|| signature.attr("ofindex"))
        .unwrap_or_default();
    let digests_value = values
        .iter()
        .find(|v| v.index.to_string() == of)
        .ok_or_else(|| at_sig(LegacyError::NoDigestsValue(of.to_string())))?;
    let at_digests = |k: LegacyError| TrustError::value(handle, digests_value, k.into());
    let digests_text = std::str::from_utf8(&digests_value.data)
        .map_err(|_| at_digests(LegacyError::Xml("digests: not UTF-8".into())))?;
    let digests = read_xml(digests_text, "digests").map_err(|e| at_digests(LegacyError::Xml(e)))?;
    let hdl = digests.attr("hdl").unwrap_or_default();
    if !same_handle(hdl, handle) {
        return Err(at_digests(LegacyError::WrongHandle(hdl.to_string())));
    }
    if let Some(h) = signature.attr("hdl") {
        if !same_handle(h, handle) {
            return Err(at_sig(LegacyError::WrongHandle(h.to_string())));
        }
    }

    // The signatures over the digests value.
    let signed = digested_bytes(digests_value)
        .map_err(|e| TrustError::value(handle, digests_value, e.into()))?;
    let sigs: Vec<&Element> = signature
        .children
        .iter()
        .filter(|c| c.name == "sig")
        .collect();
    if sigs.is_empty() {
        return Err(at_sig(LegacyError::Xml("signature without <sig>".into())));
    }
    for s in sigs {
        let signer_handle = s
            .attr("signer")
            .or_else(|| signature.attr("signer"))
            .unwrap_or_default();
        let signer_index = s
            .attr("signerIndex")
            .or_else(|| signature.attr("signerIndex"))
            .unwrap_or(DEFAULT_SIGNER_INDEX);
        let index = signer_index
            .parse::<u32>()
            .map_err(|_| at_sig(LegacyError::Xml(format!("signerIndex {signer_index:?}"))))?;
        let signer = ValueId::new(signer_handle, index);
        let key = signer_key(&signer, signers).map_err(at_sig)?;
        let alg = s.attr("alg").unwrap_or("SHA1withDSA");
        let digest_name =
            algorithm(alg, &key).ok_or_else(|| at_sig(LegacyError::Algorithm(alg.into())))?;
        let bytes = hex::decode(s.text.trim_matches(is_xml_space))
            .map_err(|_| at_sig(LegacyError::Xml("<sig>: not hex".into())))?;
        verify_signature(&key, digest_name, &bytes, &signed).map_err(|e| match e {
            SignatureError::Key(error) => TrustError::value(
                handle,
                sig,
                TrustErrorKind::UnusableKey {
                    error,
                    key_from: signer.clone(),
                },
            ),
            _ => at_sig(LegacyError::BadSignature {
                digests: digests_value.index,
            }),
        })?;
    }

    // The digests of the listed values.
    let mut listed = Vec::new();
    for val in digests.children.iter().filter(|c| c.name == "val") {
        let text = val.attr("index").unwrap_or_default();
        let index = text
            .parse::<u32>()
            .map_err(|_| at_digests(LegacyError::Xml(format!("<val index={text:?}>"))))?;
        if listed.contains(&index) {
            return Err(at_digests(LegacyError::Xml(format!("index {index} twice"))));
        }
        listed.push(index);
        let Some(value) = values.iter().find(|v| v.index == index) else {
            return Err(TrustError {
                handle: handle.to_string(),
                index: Some(index),
                value_type: None,
                kind: TrustErrorKind::MissingValue {
                    signature: digests_value.index,
                },
            });
        };
        let at_value = |k: TrustErrorKind| TrustError::value(handle, value, k);
        let bytes = digested_bytes(value).map_err(|e| at_value(e.into()))?;
        let mut sha = false;
        for (name, hex_digest) in val.attrs.iter().filter(|(k, _)| k != "index") {
            let alg = DigestAlgorithm::from_name(name)
                .ok_or_else(|| at_digests(LegacyError::Algorithm(name.clone())))?;
            let want = hex::decode(hex_digest)
                .map_err(|_| at_digests(LegacyError::Xml(format!("<val {name}>: not hex"))))?;
            if alg.digest(&bytes) != want {
                return Err(at_value(TrustErrorKind::DigestMismatch {
                    signature: digests_value.index,
                    alg,
                }));
            }
            sha |= alg != DigestAlgorithm::Md5;
        }
        if !sha {
            return Err(at_digests(LegacyError::NoShaDigest(index)));
        }
    }
    Ok(sig.index)
}

/// The key of `signer`, which must be an HS_PUBKEY covered by a trusted JWS signature.
fn signer_key(signer: &ValueId, signers: &dyn SignerTrust) -> Result<PublicKey, LegacyError> {
    let fail = |why| LegacyError::Signer {
        signer: signer.clone(),
        why,
    };
    let (value, trusted) = signers
        .signer_value(signer)
        .ok_or_else(|| fail("its record is not in the set"))?;
    let value = value.ok_or_else(|| fail("no such value"))?;
    if !value.is_type("HS_PUBKEY") {
        return Err(fail("not an HS_PUBKEY"));
    }
    if !trusted {
        return Err(fail("not covered by a trusted JWS signature"));
    }
    PublicKey::decode_bytes(&value.data).map_err(|_| fail("not a key"))
}

/// The digest name for [`verify_signature`] of a Java signature algorithm name
/// (`SHA1withDSA`), if it fits `key`.
fn algorithm(alg: &str, key: &PublicKey) -> Option<&'static [u8]> {
    let (hash, kind) = alg.split_once("with")?;
    let fits = match key {
        PublicKey::Dsa(_) => kind.eq_ignore_ascii_case("DSA"),
        PublicKey::Rsa(_) => kind.eq_ignore_ascii_case("RSA"),
        _ => false,
    };
    if !fits {
        return None;
    }
    match DigestAlgorithm::from_name(hash)? {
        DigestAlgorithm::Sha1 => Some(b"SHA1"),
        DigestAlgorithm::Sha256 => Some(b"SHA-256"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_two_level_xml_only() {
        let el = read_xml(
            "<digests hdl=\"a/b\">\n<val index=\"1\" sha1=\"00\"/>\n</digests>\n",
            "digests",
        )
        .unwrap();
        assert_eq!(el.attr("hdl"), Some("a/b"));
        assert_eq!(el.children.len(), 1);
        assert_eq!(el.children[0].attr("sha1"), Some("00"));
        let sig = read_xml(
            "<signature><sig alg=\"x\"> 0A </sig></signature>",
            "signature",
        )
        .unwrap();
        assert_eq!(sig.children[0].text, " 0A ");
        for bad in [
            "<other/>",
            "<digests><val><deep/></val></digests>",
            "<digests>",
            "<digests/><digests/>",
            "text<digests/>",
            "<digests a=\"1\" a=\"2\"/>",
            "<digests/>\u{b}",
            "<digests>x<val/></digests>",
            "<digests>\u{b}<val/></digests>",
        ] {
            assert!(read_xml(bad, "digests").is_err(), "{bad}");
        }
    }
}
