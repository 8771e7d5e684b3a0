//! Field-by-field comparison of a decoded [`Message`] with a `decoded.json` entry (the
//! reference library's own decode). Every mismatch is returned as a line of text.

use handle_resolver::wire::{Body, Message, OpFlags, ProtocolVersion};
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

struct Diff<'a> {
    ctx: &'a str,
    out: Vec<String>,
}

impl Diff<'_> {
    fn eq<T: PartialEq + std::fmt::Debug>(&mut self, field: &str, ours: T, theirs: T) {
        if ours != theirs {
            self.out.push(format!(
                "{}: {field}: ours {ours:?} != reference {theirs:?}",
                self.ctx
            ));
        }
    }
    fn fail(&mut self, what: String) {
        self.out.push(format!("{}: {what}", self.ctx));
    }
}

fn int(v: &Value) -> i64 {
    v.as_i64().unwrap_or_else(|| panic!("not an integer: {v}"))
}

/// A 32-bit field as the reference library prints it (a signed Java int) → its bit pattern.
fn u32_of(v: &Value) -> u32 {
    int(v) as u32
}

fn version(v: ProtocolVersion) -> String {
    v.to_string()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Compares `m` with the reference entry `j`; returns the mismatches.
pub fn compare(ctx: &str, m: &Message, datagrams: usize, j: &Value) -> Vec<String> {
    let mut d = Diff {
        ctx,
        out: Vec::new(),
    };
    compare_envelope(&mut d, m, j);
    compare_header(&mut d, m, j);
    compare_body(&mut d, m, j);
    compare_credential(&mut d, m, j);
    if let Some(n) = j.get("reassembledFromDatagrams") {
        d.eq("datagrams", datagrams as i64, int(n));
        d.eq(
            "reassembledBytes",
            i64::from(m.envelope.message_length),
            int(&j["reassembledBytes"]),
        );
    }
    d.out
}

fn compare_envelope(d: &mut Diff, m: &Message, j: &Value) {
    let Some(env) = j["envelope"].as_str() else {
        d.fail("no envelope in decoded.json".into());
        return;
    };
    let e = &m.envelope;
    for kv in env.split_whitespace() {
        let (k, v) = kv.split_once('=').unwrap();
        match k {
            "ver" => d.eq("envelope.ver", version(e.version), v.to_string()),
            "suggest" => d.eq("envelope.suggest", version(e.suggested), v.to_string()),
            "byte2" => d.eq(
                "envelope.byte2",
                format!("0x{:02x}", e.raw_flags[0]),
                v.to_string(),
            ),
            "CP" => d.eq("envelope.CP", e.compressed.to_string(), v.to_string()),
            "EC" => d.eq("envelope.EC", e.encrypted.to_string(), v.to_string()),
            "TC" => d.eq("envelope.TC", e.truncated.to_string(), v.to_string()),
            "session" => d.eq(
                "envelope.session",
                e.session_id,
                v.parse::<i64>().unwrap() as u32,
            ),
            "requestId" => d.eq(
                "envelope.requestId",
                e.request_id,
                v.parse::<i64>().unwrap() as u32,
            ),
            "seq" => d.eq("envelope.seq", e.sequence_number, v.parse::<u32>().unwrap()),
            "msgLen" => d.eq(
                "envelope.msgLen",
                e.message_length,
                v.parse::<u32>().unwrap(),
            ),
            other => d.fail(format!("unknown envelope key {other}")),
        }
    }
}

fn compare_header(d: &mut Diff, m: &Message, j: &Value) {
    let h = &j["header"];
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
        version(m.envelope.version),
        h["envelopeVersion"].as_str().unwrap().to_string(),
    );
    d.eq(
        "header.suggestedVersion",
        version(m.envelope.suggested),
        h["suggestedVersion"].as_str().unwrap().to_string(),
    );
    d.eq(
        "header.siteInfoSerial",
        ours.site_info_serial as i16 as i64,
        int(&h["siteInfoSerial"]),
    );
    d.eq(
        "header.recursionCount",
        i64::from(ours.recursion_count),
        int(&h["recursionCount"]),
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

fn compare_body(d: &mut Diff, m: &Message, j: &Value) {
    let class = j["class"].as_str().unwrap_or("");
    let handle = j.get("handle").and_then(Value::as_str);
    match (&m.body, class) {
        (Body::ResolutionRequest(b), "ResolutionRequest") => {
            d.eq("handle", Some(text(&b.handle).as_str()), handle);
            let idx: Vec<u32> = j["indexes"]
                .as_array()
                .unwrap()
                .iter()
                .map(u32_of)
                .collect();
            d.eq("indexes", &b.indexes, &idx);
            let types: Vec<String> = b.types.iter().map(|t| text(t)).collect();
            let theirs: Vec<String> = j["types"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t.as_str().unwrap().to_string())
                .collect();
            d.eq("types", types, theirs);
        }
        (Body::ResolutionResponse(b), "ResolutionResponse") => {
            d.eq("handle", Some(text(&b.handle).as_str()), handle);
            compare_values(d, &m.body, j);
        }
        (Body::Error(b), "ErrorResponse") => {
            d.eq(
                "message",
                text(&b.message),
                j.get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string(),
            );
            d.eq("indexes", b.indexes.is_some(), false);
        }
        (Body::Referral(b), "ServiceReferralResponse") => {
            d.eq(
                "referralHandle",
                Some(text(&b.referral_handle).as_str()),
                j["referralHandle"].as_str(),
            );
            d.eq(
                "referralHandleLength",
                b.referral_handle.len() as i64,
                int(&j["referralHandleLength"]),
            );
            compare_values(d, &m.body, j);
        }
        (Body::Challenge(b), "ChallengeResponse") => {
            // The reference server's nonce is 16 bytes (PROTOCOL.md §5.4).
            d.eq("nonce length", b.nonce.len(), 16);
        }
        (Body::GetSiteInfoRequest(b), "GenericRequest") => {
            d.eq("handle", Some(text(&b.handle).as_str()), handle);
        }
        (Body::SiteInfoResponse(b), "GetSiteInfoResponse") => {
            // "version: 2.11; serial:17; ..." against the record's bytes 2-3 and 4-5 (§7.1).
            let summary = j["siteInfo"].as_str().unwrap();
            let r = &b.record;
            d.eq(
                "siteInfo.version",
                format!("version: {}.{};", r[2], r[3]),
                summary.split(' ').take(2).collect::<Vec<_>>().join(" "),
            );
            let serial = summary
                .split("serial:")
                .nth(1)
                .unwrap()
                .split(';')
                .next()
                .unwrap();
            d.eq(
                "siteInfo.serial",
                u16::from_be_bytes([r[4], r[5]]),
                serial.parse::<u16>().unwrap(),
            );
        }
        (Body::CreateHandleRequest { handle: h, .. }, "CreateHandleRequest")
        | (Body::DeleteHandleRequest { handle: h }, "DeleteHandleRequest") => {
            d.eq("handle", Some(text(h).as_str()), handle);
        }
        (Body::CreateHandleResponse { handle: h }, "CreateHandleResponse") => {
            // The reference decode does not print the handle; it is the created one.
            d.eq(
                "handle",
                text(h),
                "20.500.12345/created-by-admin".to_string(),
            );
        }
        (Body::Success, "GenericResponse") => {}
        // The challenge answer (op 200) and session setup (op 400, whose BodyLength counts
        // two trailing zero bytes, §14.15): their fields are compared against the
        // captures-auth reference decode (proto-tests/auth); here the layout and the trailer.
        (Body::ChallengeAnswer(b), "ChallengeAnswerRequest") => {
            d.eq("authType", text(&b.auth_type).as_str(), "HS_PUBKEY");
        }
        (Body::SessionSetupRequest(b), "SessionSetupRequest") => {
            d.eq("keyExchangeMode", b.key_exchange_mode, 4);
            d.eq("trailer", &b.trailer[..], &[0u8, 0][..]);
        }
        (Body::SessionSetupResponse(b), "SessionSetupResponse") => {
            d.eq("keyExchangeMode", b.key_exchange_mode, 4);
            d.eq("trailer", &b.trailer[..], &[0u8, 0][..]);
        }
        (body, class) => d.fail(format!("body {body:?} for reference class {class}")),
    }
    if let Some(hex_digest) = j.get("requestDigestHex").and_then(Value::as_str) {
        match &m.request_digest {
            Some(rd) => {
                d.eq(
                    "requestDigestHex",
                    hex::encode(&rd.digest),
                    hex_digest.to_string(),
                );
                d.eq(
                    "rdHashType",
                    i64::from(rd.algorithm.code()),
                    int(&j["rdHashType"]),
                );
            }
            None => d.fail("request digest missing".into()),
        }
    } else {
        d.eq("request digest present", m.request_digest.is_some(), false);
    }
}

fn compare_values(d: &mut Diff, body: &Body, j: &Value) {
    let theirs = j["values"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let ours = body.values();
    d.eq("values.len", ours.len(), theirs.len());
    for (i, (v, t)) in ours.iter().zip(theirs).enumerate() {
        let f = |s: &str| format!("values[{i}].{s}");
        d.eq(&f("index"), v.index, u32_of(&t["index"]));
        d.eq(
            &f("type"),
            text(&v.type_name),
            t["type"].as_str().unwrap().to_string(),
        );
        if let Some(s) = t.get("data").and_then(Value::as_str) {
            d.eq(&f("data"), text(&v.data), s.to_string());
        }
        if let Some(s) = t.get("dataHex").and_then(Value::as_str) {
            d.eq(&f("dataHex"), hex::encode(&v.data), s.to_string());
        }
        if t.get("data").is_none() && t.get("dataHex").is_none() {
            d.fail(format!("values[{i}] has neither data nor dataHex"));
        }
        d.eq(&f("dataLen"), v.data.len() as i64, int(&t["dataLen"]));
        d.eq(&f("ttlType"), i64::from(v.ttl.kind()), int(&t["ttlType"]));
        d.eq(&f("ttl"), v.ttl.value(), u32_of(&t["ttl"]));
        d.eq(&f("timestamp"), v.timestamp, u32_of(&t["timestamp"]));
        d.eq(
            &f("perms"),
            v.permissions.as_rw(),
            t["perms"].as_str().unwrap().to_string(),
        );
        // A count in one capture set, a (here always empty) list in the other.
        let refs = match &t["references"] {
            Value::Array(a) => a.len() as i64,
            n => int(n),
        };
        d.eq(&f("references"), v.references.len() as i64, refs);
    }
}

fn compare_credential(d: &mut Diff, m: &Message, j: &Value) {
    d.eq(
        "credentialPresent",
        m.credential.is_some(),
        j["credentialPresent"].as_bool().unwrap(),
    );
    if let Some(sig) = j.get("signaturePresent").and_then(Value::as_bool) {
        d.eq("signaturePresent", m.credential.is_some(), sig);
    }
    let (Some(c), Some(t)) = (&m.credential, j.get("credential")) else {
        return;
    };
    d.eq(
        "credential.version",
        i64::from(c.version),
        int(&t["credentialVersion"]),
    );
    d.eq(
        "credential.reserved",
        i64::from(c.reserved),
        int(&t["reserved"]),
    );
    d.eq("credential.flags", i64::from(c.flags), int(&t["flags"]));
    d.eq(
        "credential.signerHandle",
        text(&c.signer.handle),
        t["signerHandle"].as_str().unwrap().to_string(),
    );
    d.eq(
        "credential.signerIndex",
        c.signer.index,
        u32_of(&t["signerIndex_or_sessionCounter"]),
    );
    d.eq(
        "credential.type",
        text(&c.credential_type),
        t["type"].as_str().unwrap().to_string(),
    );
    d.eq(
        "credential.signedDataLength",
        (8 + c.digest_algorithm.len() + c.signature.len()) as i64,
        int(&t["signedDataLength"]),
    );
    d.eq(
        "credential.hashAlgorithm",
        text(&c.digest_algorithm),
        t["hashAlgorithm"].as_str().unwrap().to_string(),
    );
    d.eq(
        "credential.signatureLength",
        c.signature.len() as i64,
        int(&t["signatureLength"]),
    );
    d.eq(
        "credential.signatureHex",
        hex::encode(&c.signature),
        t["signatureHex"].as_str().unwrap().to_string(),
    );
}
