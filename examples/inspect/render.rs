//! The `--json` view of a message: `{"envelope", "header", "body", "credential"}`, with
//! handle values in the shape of the handle.net REST API (plus `ttl`, `timestamp`,
//! `permissions`, `references`, and `raw` under `--raw`).

use handle_resolver::wire::json::timestamp_to_json as rfc3339;
use handle_resolver::wire::{
    verify_message, Body, Credential, Envelope, HandleValue, Header, Message, PublicKey,
    RequestDigest, Ttl, ValueReference,
};
use serde_json::{json, Map, Value as Json};

/// What to add to the plain view.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Add `"raw"` (hex of the data bytes) to every value.
    pub raw: bool,
    /// Check the credential's signature with this key.
    pub pubkey: Option<PublicKey>,
}

/// Bytes as text, lossy.
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A value's TTL: seconds for a relative TTL, RFC 3339 for an absolute one, and
/// `{"ttl_type", "value"}` for an unknown TTL type.
pub fn ttl_json(ttl: Ttl) -> Json {
    match ttl {
        Ttl::Relative(s) => json!(s),
        Ttl::Absolute(t) => rfc3339(t),
        Ttl::Other { kind, value } => json!({"ttl_type": kind, "value": value}),
    }
}

/// `{"handle", "index"}`.
pub fn reference_json(r: &ValueReference) -> Json {
    json!({"handle": text(&r.handle), "index": r.index})
}

/// One handle value in the REST API's shape.
pub fn value_json(v: &HandleValue, opts: &Options) -> Json {
    let mut o = Map::new();
    o.insert("index".into(), json!(v.index));
    o.insert("type".into(), json!(v.type_str()));
    o.insert("data".into(), v.typed().to_json());
    o.insert("ttl".into(), ttl_json(v.ttl));
    o.insert("timestamp".into(), rfc3339(v.timestamp));
    o.insert("permissions".into(), json!(v.permissions.as_bits()));
    o.insert(
        "references".into(),
        Json::Array(v.references.iter().map(reference_json).collect()),
    );
    if opts.raw {
        o.insert("raw".into(), json!(hex::encode(&v.data)));
    }
    Json::Object(o)
}

fn values_json(values: &[HandleValue], opts: &Options) -> Json {
    Json::Array(values.iter().map(|v| value_json(v, opts)).collect())
}

/// The envelope.
pub fn envelope_json(e: &Envelope) -> Json {
    json!({
        "version": e.version.to_string(),
        "suggested_version": e.suggested.to_string(),
        "compressed": e.compressed,
        "encrypted": e.encrypted,
        "truncated": e.truncated,
        "session_id": e.session_id,
        "request_id": e.request_id,
        "sequence_number": e.sequence_number,
        "message_length": e.message_length,
    })
}

/// The header, exactly the shape.
pub fn header_json(h: &Header) -> Json {
    json!({
        "op_code": h.op_code.code(),
        "op_name": h.op_code.name(),
        "response_code": h.response_code.code(),
        "response_name": h.response_code.name(),
        "flags": h.flags.names(),
        "site_info_serial": h.site_info_serial,
        "recursion_count": h.recursion_count,
        "expiration": h.expiration,
    })
}

/// The body, by layout.
pub fn body_json(body: &Body, opts: &Options) -> Json {
    match body {
        Body::ResolutionRequest(b) => json!({
            "handle": text(&b.handle),
            "indexes": b.indexes,
            "types": b.types.iter().map(|t| text(t)).collect::<Vec<_>>(),
        }),
        Body::ResolutionResponse(b) => json!({
            "handle": text(&b.handle),
            "values": values_json(&b.values, opts),
        }),
        Body::Error(b) => {
            let mut o = Map::new();
            o.insert("message".into(), json!(b.message_str()));
            if let Some(ix) = &b.indexes {
                o.insert("indexes".into(), json!(ix));
            }
            Json::Object(o)
        }
        Body::Referral(b) => json!({
            "referral_handle": text(&b.referral_handle),
            "values": values_json(b.values.as_deref().unwrap_or_default(), opts),
        }),
        Body::Challenge(b) => match &b.legacy_digest {
            Some(d) => json!({"nonce": hex::encode(&b.nonce), "legacy_digest": hex::encode(d)}),
            None => json!({"nonce": hex::encode(&b.nonce)}),
        },
        Body::GetSiteInfoRequest(b) => json!({"handle": text(&b.handle)}),
        Body::SiteInfoResponse(b) => {
            let v = HandleValue::new(0, "HS_SITE", b.record.clone());
            json!({"site": v.typed().to_json()})
        }
        Body::CreateHandleRequest { handle, values }
        | Body::AddValueRequest { handle, values }
        | Body::ModifyValueRequest { handle, values } => json!({
            "handle": text(handle),
            "values": values_json(values, opts),
        }),
        Body::CreateHandleResponse { handle } | Body::DeleteHandleRequest { handle } => {
            json!({"handle": text(handle)})
        }
        Body::RemoveValueRequest { handle, indexes } => {
            json!({"handle": text(handle), "indexes": indexes})
        }
        Body::ListHandlesRequest { handle } | Body::HomePrefixRequest { handle } => {
            json!({"handle": text(handle)})
        }
        Body::ListHandlesResponse { handles } => {
            json!({"handles": handles.iter().map(|h| text(h)).collect::<Vec<_>>()})
        }
        Body::ChallengeAnswer(b) => json!({
            "auth_type": text(&b.auth_type),
            "identity": format!("{}:{}", b.identity.index, text(&b.identity.handle)),
            "signed_response": hex::encode(&b.signed_response),
        }),
        Body::SessionSetupRequest(b) => json!({
            "key_exchange_mode": b.key_exchange_mode,
            "timeout": b.timeout,
            "identity": format!("{}:{}", b.identity.index, text(&b.identity.handle)),
            "public_key": b.public_key.as_ref().map(hex::encode),
        }),
        Body::SessionSetupResponse(b) => json!({
            "key_exchange_mode": b.key_exchange_mode,
            "data": hex::encode(&b.data),
        }),
        Body::Success => json!({}),
        Body::Unknown(b) => json!({"hex": hex::encode(b)}),
        // A layout the library learns after this view was written: its debug form.
        other => json!({"debug": format!("{other:?}")}),
    }
}

/// The request digest of a response with RD.
pub fn digest_json(d: &RequestDigest) -> Json {
    json!({"algorithm": d.algorithm.code(), "digest": hex::encode(&d.digest)})
}

/// The credential; with a key, `signature_valid` (and `signature_error` when false).
pub fn credential_json(c: &Credential, check: Option<Result<(), String>>) -> Json {
    let mut o = Map::new();
    o.insert("version".into(), json!(c.version));
    o.insert("flags".into(), json!(c.flags));
    o.insert("signer".into(), reference_json(&c.signer));
    o.insert("type".into(), json!(text(&c.credential_type)));
    o.insert(
        "digest_algorithm".into(),
        json!(digest_algorithm_name(&c.digest_algorithm)),
    );
    o.insert("signature".into(), json!(hex::encode(&c.signature)));
    if let Some(result) = check {
        o.insert("signature_valid".into(), json!(result.is_ok()));
        if let Err(reason) = result {
            o.insert("signature_error".into(), json!(reason));
        }
    }
    Json::Object(o)
}

/// A credential's digest algorithm: the name, or the legacy one-byte code as a number.
pub fn digest_algorithm_name(raw: &[u8]) -> String {
    match raw {
        [code] if !code.is_ascii_graphic() => format!("{code}"),
        _ => text(raw),
    }
}

/// Checks the message's signature with `key`: `None` without a key or without a credential.
pub fn signature_check(msg: &Message, key: Option<&PublicKey>) -> Option<Result<(), String>> {
    let key = key?;
    msg.credential.as_ref()?;
    Some(verify_message(msg, key).map_err(|e| e.to_string()))
}

/// The whole `--json` object of one message.
pub fn message_json(msg: &Message, opts: &Options) -> Json {
    let mut o = Map::new();
    o.insert("envelope".into(), envelope_json(&msg.envelope));
    o.insert("header".into(), header_json(&msg.header));
    if let Some(d) = &msg.request_digest {
        o.insert("request_digest".into(), digest_json(d));
    }
    o.insert("body".into(), body_json(&msg.body, opts));
    let credential = msg.credential.as_ref().map_or(Json::Null, |c| {
        credential_json(c, signature_check(msg, opts.pubkey.as_ref()))
    });
    o.insert("credential".into(), credential);
    Json::Object(o)
}
