//! Field-by-field comparison of a decoded [`Message`] with a captures-auth `decoded.json`
//! entry (the reference library's own decode, with every envelope, header and body field and
//! the body's instance fields). Every mismatch comes back as a line of text.

use bytes::BytesMut;
use handle_resolver::wire::{
    Body, HandleValue, Limits, Message, OpFlags, PublicKeyProof, SecretKeyProof,
};
use serde_json::Value;

/// `decoded.json` flag names → our flags.
const FLAGS: [(&str, OpFlags); 12] = [
    ("AT_authoritative", OpFlags::AT),
    ("CT_certify", OpFlags::CT),
    ("ENC_encrypt", OpFlags::ENC),
    ("REC_recursive", OpFlags::REC),
    ("CA_cacheCertify", OpFlags::CA),
    ("CN_continuous", OpFlags::CN),
    ("KA_keepAlive", OpFlags::KC),
    ("PO_ignoreRestrictedValues", OpFlags::PO),
    ("RD_returnRequestDigest", OpFlags::RD),
    ("OVRW_overwriteWhenExists", OpFlags::OW),
    ("MINT_mintNewSuffix", OpFlags::MINT),
    ("DNRF_doNotRefer", OpFlags::DNR),
];

/// Collected mismatches of one message.
pub struct Diff<'a> {
    ctx: &'a str,
    /// The mismatches.
    pub out: Vec<String>,
}

impl<'a> Diff<'a> {
    /// An empty diff for the message named `ctx`.
    pub fn new(ctx: &'a str) -> Self {
        Self {
            ctx,
            out: Vec::new(),
        }
    }

    /// Records a mismatch unless `ours == theirs`.
    pub fn eq<T: PartialEq + std::fmt::Debug>(&mut self, field: &str, ours: T, theirs: T) {
        if ours != theirs {
            self.out.push(format!(
                "{}: {field}: ours {ours:?} != reference {theirs:?}",
                self.ctx
            ));
        }
    }

    /// Records a failure.
    pub fn fail(&mut self, what: String) {
        self.out.push(format!("{}: {what}", self.ctx));
    }
}

/// A JSON integer (the reference prints Java ints, signed) as its 32-bit pattern.
pub fn u32_of(v: &Value) -> u32 {
    v.as_i64().unwrap_or_else(|| panic!("not an integer: {v}")) as u32
}

fn str_of(v: &Value) -> String {
    v.as_str()
        .unwrap_or_else(|| panic!("not a string: {v}"))
        .to_string()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn hex_of(v: &Value) -> String {
    str_of(v).to_lowercase()
}

/// Compares envelope, header, body, digest and credential of `m` with the entry `j`.
pub fn compare(d: &mut Diff, m: &Message, j: &Value) {
    compare_envelope(d, m, &j["envelope"]);
    compare_header(d, m, &j["header"]);
    compare_body(d, m, j);
    compare_digest(d, m, j);
    compare_credential(d, m, j);
    match m.header_and_body() {
        Ok(hb) => d.eq(
            "headerAndBodyHex_offset20",
            hex::encode(&hb),
            hex_of(&j["headerAndBodyHex_offset20"]),
        ),
        Err(e) => d.fail(format!("header and body: {e}")),
    }
}

fn compare_envelope(d: &mut Diff, m: &Message, e: &Value) {
    let ours = &m.envelope;
    d.eq(
        "envelope.majorVersion",
        ours.version.major,
        e["majorVersion"].as_u64().unwrap() as u8,
    );
    d.eq(
        "envelope.minorVersion",
        ours.version.minor,
        e["minorVersion"].as_u64().unwrap() as u8,
    );
    d.eq(
        "envelope.byte2Hex",
        format!("0x{:02x}", ours.raw_flags[0]),
        str_of(&e["byte2Hex"]),
    );
    d.eq(
        "envelope.CP",
        ours.compressed,
        e["CP_compressed"].as_bool().unwrap(),
    );
    d.eq(
        "envelope.EC",
        ours.encrypted,
        e["EC_encrypted"].as_bool().unwrap(),
    );
    d.eq(
        "envelope.TC",
        ours.truncated,
        e["TC_truncated"].as_bool().unwrap(),
    );
    d.eq(
        "envelope.suggestMajorVersion",
        ours.suggested.major,
        e["suggestMajorVersion"].as_u64().unwrap() as u8,
    );
    d.eq(
        "envelope.suggestMinorVersion",
        ours.suggested.minor,
        e["suggestMinorVersion"].as_u64().unwrap() as u8,
    );
    d.eq(
        "envelope.sessionId",
        ours.session_id,
        u32_of(&e["sessionId"]),
    );
    d.eq(
        "envelope.requestId",
        ours.request_id,
        u32_of(&e["requestId"]),
    );
    d.eq(
        "envelope.sequenceNumber",
        ours.sequence_number,
        u32_of(&e["sequenceNumber"]),
    );
    d.eq(
        "envelope.messageLength",
        ours.message_length,
        u32_of(&e["messageLength"]),
    );
}

fn compare_header(d: &mut Diff, m: &Message, h: &Value) {
    let ours = &m.header;
    d.eq("header.opCode", ours.op_code.code(), u32_of(&h["opCode"]));
    d.eq(
        "header.responseCode",
        ours.response_code.code(),
        u32_of(&h["responseCode"]),
    );
    d.eq("header.requestId", m.request_id(), u32_of(&h["requestId"]));
    d.eq(
        "header.sessionId",
        m.envelope.session_id,
        u32_of(&h["sessionId"]),
    );
    d.eq(
        "header.envelopeVersion",
        m.envelope.version.to_string(),
        str_of(&h["envelopeVersion"]),
    );
    d.eq(
        "header.suggestedVersion",
        m.envelope.suggested.to_string(),
        str_of(&h["suggestedVersion"]),
    );
    d.eq(
        "header.siteInfoSerial",
        i64::from(ours.site_info_serial as i16),
        h["siteInfoSerial"].as_i64().unwrap(),
    );
    d.eq(
        "header.recursionCount",
        i64::from(ours.recursion_count),
        h["recursionCount"].as_i64().unwrap(),
    );
    d.eq(
        "header.expiration",
        ours.expiration,
        u32_of(&h["expiration"]),
    );
    for (name, flag) in FLAGS {
        d.eq(
            name,
            ours.flags.contains(flag),
            h["flags"][name].as_bool().unwrap(),
        );
    }
}

fn handle_eq(d: &mut Diff, ours: &[u8], j: &Value) {
    d.eq("handle", text(ours), str_of(&j["handle"]));
    if let Some(hx) = j.get("handleHex") {
        d.eq("handleHex", hex::encode(ours), hex_of(hx));
    }
}

fn compare_body(d: &mut Diff, m: &Message, j: &Value) {
    let class = str_of(&j["class"]);
    match (&m.body, class.as_str()) {
        (Body::ResolutionRequest(b), "ResolutionRequest") => {
            handle_eq(d, &b.handle, j);
            let idx: Vec<u32> = j["indexes"]
                .as_array()
                .unwrap()
                .iter()
                .map(u32_of)
                .collect();
            d.eq("indexes", b.indexes.clone(), idx);
            let types: Vec<String> = j["types"].as_array().unwrap().iter().map(str_of).collect();
            d.eq(
                "types",
                b.types.iter().map(|t| text(t)).collect::<Vec<_>>(),
                types,
            );
        }
        (Body::ResolutionResponse(b), "ResolutionResponse") => {
            d.eq("handle", text(&b.handle), str_of(&j["handle"]));
            compare_values(d, &b.values, &j["values"]);
        }
        (Body::Challenge(b), "ChallengeResponse") => {
            d.eq("nonceHex", hex::encode(&b.nonce), hex_of(&j["nonceHex"]));
            d.eq(
                "nonceLength",
                b.nonce.len() as u64,
                j["nonceLength"].as_u64().unwrap(),
            );
            d.eq("legacy digest", b.legacy_digest.is_some(), false);
        }
        (Body::ChallengeAnswer(b), "ChallengeAnswerRequest") => {
            d.eq("authType", text(&b.auth_type), str_of(&j["authType"]));
            d.eq(
                "userIdHandle",
                text(&b.identity.handle),
                str_of(&j["userIdHandle"]),
            );
            d.eq("userIdIndex", b.identity.index, u32_of(&j["userIdIndex"]));
            d.eq(
                "signedResponseHex",
                hex::encode(&b.signed_response),
                hex_of(&j["signedResponseHex"]),
            );
            d.eq(
                "signedResponseLength",
                b.signed_response.len() as u64,
                j["signedResponseLength"].as_u64().unwrap(),
            );
            compare_signed_response(
                d,
                &b.auth_type,
                &b.signed_response,
                &j["signedResponseParsed"],
            );
        }
        (Body::Error(b), "ErrorResponse") => {
            d.eq("message", text(&b.message), str_of(&j["message"]));
            d.eq(
                "message field",
                Some(b.message.len() as u64),
                j["bodyFields"]["message"]["len"].as_u64(),
            );
            d.eq("indexes", b.indexes.is_some(), false);
        }
        (Body::CreateHandleRequest { handle, values }, "CreateHandleRequest")
        | (Body::AddValueRequest { handle, values }, "AddValueRequest")
        | (Body::ModifyValueRequest { handle, values }, "ModifyValueRequest") => {
            handle_eq(d, handle, j);
            compare_values(d, values, &j["values"]);
        }
        (Body::CreateHandleResponse { handle }, "CreateHandleResponse") => {
            d.eq("handle", text(handle), str_of(&j["handle"]));
        }
        (Body::DeleteHandleRequest { handle }, "DeleteHandleRequest")
        | (Body::ListHandlesRequest { handle }, "ListHandlesRequest") => handle_eq(d, handle, j),
        (Body::RemoveValueRequest { handle, indexes }, "RemoveValueRequest") => {
            handle_eq(d, handle, j);
            let idx: Vec<u32> = j["indexes"]
                .as_array()
                .unwrap()
                .iter()
                .map(u32_of)
                .collect();
            d.eq("indexes", indexes.clone(), idx);
        }
        (Body::ListHandlesResponse { handles }, "ListHandlesResponse") => {
            let theirs: Vec<String> = j["handles"]
                .as_array()
                .unwrap()
                .iter()
                .map(str_of)
                .collect();
            d.eq(
                "handles",
                handles.iter().map(|h| text(h)).collect::<Vec<_>>(),
                theirs,
            );
        }
        (Body::Success, "GenericResponse") => {
            d.eq(
                "bodyFields",
                j["bodyFields"].as_object().map(|o| o.len()),
                Some(0),
            );
        }
        (Body::SessionSetupRequest(b), "SessionSetupRequest") => {
            d.eq(
                "keyExchangeMode",
                u32::from(b.key_exchange_mode),
                u32_of(&j["keyExchangeMode"]),
            );
            d.eq("timeout", b.timeout, u32_of(&j["timeout"]));
            d.eq(
                "identityHandle",
                text(&b.identity.handle),
                str_of(&j["identityHandle"]),
            );
            d.eq(
                "identityIndex",
                b.identity.index,
                u32_of(&j["identityIndex"]),
            );
            d.eq(
                "publicKeyHex",
                b.public_key.as_ref().map(hex::encode),
                j["publicKeyHex"].as_str().map(str::to_lowercase),
            );
            d.eq(
                "exchangeKeyHandle",
                b.exchange_key.as_ref().map(|k| text(&k.handle)),
                j["exchangeKeyHandle"].as_str().map(str::to_string),
            );
            d.eq(
                "exchangeKeyIndex",
                b.exchange_key.as_ref().map_or(u32::MAX, |k| k.index),
                u32_of(&j["exchangeKeyIndex"]),
            );
            // BodyLength counts 4 bytes for the 2-byte mode: two zero bytes trail.
            d.eq("trailer", &b.trailer[..], &[0u8, 0][..]);
        }
        (Body::SessionSetupResponse(b), "SessionSetupResponse") => {
            d.eq(
                "keyExchangeMode",
                u32::from(b.key_exchange_mode),
                u32_of(&j["keyExchangeMode"]),
            );
            d.eq("dataHex", hex::encode(&b.data), hex_of(&j["dataHex"]));
            d.eq("trailer", &b.trailer[..], &[0u8, 0][..]);
        }
        (body, class) => d.fail(format!("body {body:?} for reference class {class}")),
    }
}

fn compare_signed_response(d: &mut Diff, auth_type: &[u8], signed: &bytes::Bytes, p: &Value) {
    let limits = Limits::default();
    match auth_type {
        b"HS_SECKEY" => match SecretKeyProof::decode(signed, false, &limits) {
            Ok(proof) => {
                d.eq(
                    "macAlgorithmCode",
                    proof.code().map(u32::from),
                    Some(u32_of(&p["macAlgorithmCode"])),
                );
                if let SecretKeyProof::Pbkdf2 {
                    salt,
                    iterations,
                    key_bits,
                    mac,
                } = &proof
                {
                    d.eq("saltHex", hex::encode(salt), hex_of(&p["saltHex"]));
                    d.eq("iterations", *iterations, u32_of(&p["iterations"]));
                    d.eq("keyLengthBits", *key_bits, u32_of(&p["keyLengthBits"]));
                    d.eq("hmacHex", hex::encode(mac), hex_of(&p["hmacHex"]));
                } else {
                    d.fail(format!("not a PBKDF2 answer: {proof:?}"));
                }
                d.eq("trailingBytes", 0, p["trailingBytes"].as_i64().unwrap());
            }
            Err(e) => d.fail(format!("HS_SECKEY answer: {e}")),
        },
        b"HS_PUBKEY" => match PublicKeyProof::decode(signed, &limits) {
            Ok(proof) => {
                d.eq(
                    "hashAlgorithmId",
                    text(&proof.hash_algorithm),
                    str_of(&p["hashAlgorithmId"]),
                );
                d.eq(
                    "signatureHex",
                    hex::encode(&proof.signature),
                    hex_of(&p["signatureHex"]),
                );
                d.eq(
                    "signatureLength",
                    proof.signature.len() as u64,
                    p["signatureLength"].as_u64().unwrap(),
                );
                d.eq("trailingBytes", 0, p["trailingBytes"].as_i64().unwrap());
            }
            Err(e) => d.fail(format!("HS_PUBKEY answer: {e}")),
        },
        other => d.fail(format!("unknown auth type {}", text(other))),
    }
}

fn compare_values(d: &mut Diff, ours: &[HandleValue], theirs: &Value) {
    let theirs = theirs.as_array().map(Vec::as_slice).unwrap_or_default();
    d.eq("values.len", ours.len(), theirs.len());
    for (i, (v, t)) in ours.iter().zip(theirs).enumerate() {
        let f = |s: &str| format!("values[{i}].{s}");
        d.eq(&f("index"), v.index, u32_of(&t["index"]));
        d.eq(&f("type"), text(&v.type_name), str_of(&t["type"]));
        d.eq(
            &f("typeHex"),
            hex::encode(&v.type_name),
            hex_of(&t["typeHex"]),
        );
        d.eq(&f("dataHex"), hex::encode(&v.data), hex_of(&t["dataHex"]));
        if let Some(s) = t["dataText"].as_str() {
            d.eq(&f("dataText"), text(&v.data), s.to_string());
        }
        d.eq(
            &f("dataLen"),
            v.data.len() as u64,
            t["dataLen"].as_u64().unwrap(),
        );
        d.eq(
            &f("ttlType"),
            u64::from(v.ttl.kind()),
            t["ttlType"].as_u64().unwrap(),
        );
        d.eq(&f("ttl"), v.ttl.value(), u32_of(&t["ttl"]));
        d.eq(&f("timestamp"), v.timestamp, u32_of(&t["timestamp"]));
        d.eq(&f("perms"), v.permissions.as_rw(), str_of(&t["perms"]));
        for (name, bit) in [
            ("adminRead", 0x8u8),
            ("adminWrite", 0x4),
            ("publicRead", 0x2),
            ("publicWrite", 0x1),
        ] {
            d.eq(
                &f(name),
                v.permissions.0 & bit != 0,
                t[name].as_bool().unwrap(),
            );
        }
        d.eq(
            &f("references"),
            v.references.len(),
            t["references"].as_array().map_or(usize::MAX, Vec::len),
        );
        let mut enc = BytesMut::new();
        match v.encode(&mut enc) {
            Ok(()) => d.eq(
                &f("encodedValueHex"),
                hex::encode(&enc),
                hex_of(&t["encodedValueHex"]),
            ),
            Err(e) => d.fail(format!("{}: {e}", f("encode"))),
        }
        if let Some(a) = t.get("adminRecord") {
            match handle_resolver::wire::AdminRecord::decode(&v.data, &Limits::default()) {
                Ok(rec) => {
                    d.eq(
                        &f("adminId"),
                        text(&rec.admin.handle),
                        str_of(&a["adminId"]),
                    );
                    d.eq(
                        &f("adminIdIndex"),
                        rec.admin.index,
                        u32_of(&a["adminIdIndex"]),
                    );
                    d.eq(
                        &f("permsBits"),
                        rec.permissions.as_bits(),
                        str_of(&a["permsBits"]),
                    );
                }
                Err(e) => d.fail(format!("{}: {e}", f("adminRecord"))),
            }
        }
    }
}

fn compare_digest(d: &mut Diff, m: &Message, j: &Value) {
    match (&m.request_digest, j.get("requestDigestHex")) {
        (Some(rd), Some(hx)) => {
            d.eq("requestDigestHex", hex::encode(&rd.digest), hex_of(hx));
            d.eq(
                "rdHashType",
                u32::from(rd.algorithm.code()),
                u32_of(&j["rdHashType"]),
            );
        }
        (None, None) => {}
        (ours, theirs) => d.fail(format!(
            "request digest: ours {ours:?}, reference {theirs:?}"
        )),
    }
}

fn compare_credential(d: &mut Diff, m: &Message, j: &Value) {
    d.eq(
        "credentialPresent",
        m.credential.is_some(),
        j["credentialPresent"].as_bool().unwrap(),
    );
    let (Some(c), Some(t)) = (&m.credential, j.get("credential")) else {
        return;
    };
    match c.to_bytes() {
        Ok(b) => {
            d.eq("credential.hex", hex::encode(&b), hex_of(&t["hex"]));
            d.eq("credential.len", b.len() as u64, t["len"].as_u64().unwrap());
        }
        Err(e) => d.fail(format!("credential: {e}")),
    }
    d.eq(
        "credential.version",
        u64::from(c.version),
        t["version"].as_u64().unwrap(),
    );
    d.eq(
        "credential.reserved",
        u64::from(c.reserved),
        t["reserved"].as_u64().unwrap(),
    );
    d.eq(
        "credential.flags",
        u64::from(c.flags),
        t["flags"].as_u64().unwrap(),
    );
    d.eq(
        "credential.signerHandle",
        text(&c.signer.handle),
        str_of(&t["signerHandle"]),
    );
    d.eq(
        "credential.signerIndexOrSessionCounter",
        c.signer.index,
        u32_of(&t["signerIndexOrSessionCounter"]),
    );
    d.eq(
        "credential.signatureType",
        text(&c.credential_type),
        str_of(&t["signatureType"]),
    );
    d.eq(
        "credential.signatureSectionLength",
        (8 + c.digest_algorithm.len() + c.signature.len()) as u64,
        t["signatureSectionLength"].as_u64().unwrap(),
    );
    d.eq(
        "credential.hashAlgorithm",
        text(&c.digest_algorithm),
        str_of(&t["hashAlgorithm"]),
    );
    d.eq(
        "credential.signatureLength",
        c.signature.len() as u64,
        t["signatureLength"].as_u64().unwrap(),
    );
    d.eq(
        "credential.signatureHex",
        hex::encode(&c.signature),
        hex_of(&t["signatureHex"]),
    );
    d.eq(
        "credential.trailingBytes",
        0,
        t["trailingBytes"].as_i64().unwrap(),
    );
}
