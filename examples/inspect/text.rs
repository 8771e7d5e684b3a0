//! The text view of a message, laid out like `dig`: a header block, a question section for
//! requests, an answer section of `index type ttl data` lines, and a credential summary.

use std::fmt::Write as _;

use handle_resolver::wire::json::timestamp_to_json as rfc3339;
use handle_resolver::wire::{Body, HandleValue, Message, PublicKey, SiteInfo, Ttl, TypedValue};

use super::render::{digest_algorithm_name, signature_check, text, Options};

/// Longest data shown on an answer line without `--raw`.
const MAX_DATA_CHARS: usize = 120;

fn when(seconds: u32) -> String {
    match rfc3339(seconds) {
        serde_json::Value::String(s) => s,
        other => other.to_string(),
    }
}

fn ttl_text(ttl: Ttl) -> String {
    match ttl {
        Ttl::Relative(s) => s.to_string(),
        Ttl::Absolute(t) => format!("until {}", when(t)),
        Ttl::Other { kind, value } => format!("{value}(type {kind})"),
    }
}

/// One line for a text: control characters escaped, cut at [`MAX_DATA_CHARS`] unless `full`.
fn one_line(s: &str, full: bool) -> String {
    let escaped: String = s.escape_debug().collect();
    if full || escaped.chars().count() <= MAX_DATA_CHARS {
        return escaped;
    }
    let cut: String = escaped.chars().take(MAX_DATA_CHARS).collect();
    format!("{cut}…")
}

fn key_text(k: &PublicKey) -> String {
    match k {
        PublicKey::Dsa(d) => format!("DSA key, p of {} bits", significant_bits(&d.p)),
        PublicKey::Rsa(r) => format!("RSA key, n of {} bits", significant_bits(&r.modulus)),
        PublicKey::Dh { p, .. } => format!("DH key, p of {} bits", significant_bits(p)),
        PublicKey::Other { key_type, data, .. } => {
            format!("{} key, {} bytes", text(key_type), data.len())
        }
    }
}

fn significant_bits(n: &[u8]) -> usize {
    let skip = n.iter().take_while(|b| **b == 0).count();
    match n.get(skip) {
        Some(first) => (n.len() - skip - 1) * 8 + (8 - first.leading_zeros() as usize),
        None => 0,
    }
}

fn site_text(s: &SiteInfo) -> String {
    let servers: Vec<String> = s
        .servers
        .iter()
        .map(|srv| {
            let ports: Vec<String> = srv
                .interfaces
                .iter()
                .map(|i| format!("{}/{}", i.protocol.name().to_lowercase(), i.port))
                .collect();
            format!("#{} {} [{}]", srv.server_id, srv.address, ports.join(" "))
        })
        .collect();
    format!(
        "site v{} serial {}{}{}, {} server(s): {}",
        s.protocol_version,
        s.serial,
        if s.primary { " primary" } else { "" },
        if s.multi_primary {
            " multi-primary"
        } else {
            ""
        },
        s.servers.len(),
        servers.join(", ")
    )
}

/// The data column of an answer line (cut short unless `--raw`, which prints the data's hex
/// on a line of its own).
pub fn data_text(v: &HandleValue, opts: &Options) -> String {
    let body = match v.typed() {
        TypedValue::Url(s)
        | TypedValue::Email(s)
        | TypedValue::Desc(s)
        | TypedValue::Serv(s)
        | TypedValue::Alias(s)
        | TypedValue::Namespace(s)
        | TypedValue::Text(s) => one_line(&s, opts.raw),
        TypedValue::Admin(a) => format!(
            "admin {}:{} perms {}",
            a.admin.index,
            text(&a.admin.handle),
            a.permissions.as_bits()
        ),
        TypedValue::VList(refs) => {
            let r: Vec<String> = refs
                .iter()
                .map(|r| format!("{}:{}", r.index, text(&r.handle)))
                .collect();
            format!("vlist [{}]", r.join(", "))
        }
        TypedValue::Site(s) => site_text(&s),
        TypedValue::PubKey(k) => key_text(&k),
        TypedValue::Locations(l) => {
            // A location without href shows its template, or `-`.
            let hrefs: Vec<&str> = l
                .locations
                .iter()
                .map(|x| x.href().or(x.attribute("href_template")).unwrap_or("-"))
                .collect();
            format!("locations [{}]", hrefs.join(" "))
        }
        TypedValue::SecKey(b) | TypedValue::Binary(b) => {
            one_line(&format!("hex {}", hex::encode(&b)), opts.raw)
        }
        other => one_line(&format!("{other:?}"), opts.raw),
    };
    body
}

fn answer_lines(out: &mut String, values: &[HandleValue], opts: &Options) {
    for v in values {
        let _ = write!(
            out,
            "{}\t{}\t{}\t{}",
            v.index,
            v.type_str(),
            ttl_text(v.ttl),
            data_text(v, opts)
        );
        let _ = write!(out, "\t; {}", v.permissions.as_rw());
        for r in &v.references {
            let _ = write!(out, " ref {}:{}", r.index, text(&r.handle));
        }
        out.push('\n');
        if opts.raw {
            let _ = writeln!(out, ";\traw {}", hex::encode(&v.data));
        }
    }
}

fn section(out: &mut String, title: &str) {
    let _ = write!(out, "\n;; {title} SECTION:\n");
}

fn body_text(out: &mut String, body: &Body, opts: &Options) {
    match body {
        Body::ResolutionRequest(b) => {
            section(out, "QUESTION");
            let types: Vec<String> = b.types.iter().map(|t| text(t)).collect();
            let indexes: Vec<String> = b.indexes.iter().map(u32::to_string).collect();
            let _ = writeln!(
                out,
                ";{}\tindexes: {}\ttypes: {}",
                text(&b.handle),
                if indexes.is_empty() {
                    "any".into()
                } else {
                    indexes.join(",")
                },
                if types.is_empty() {
                    "any".into()
                } else {
                    types.join(",")
                },
            );
        }
        Body::ResolutionResponse(b) => {
            section(out, "ANSWER");
            let _ = writeln!(out, ";{} ({} values)", text(&b.handle), b.values.len());
            answer_lines(out, &b.values, opts);
        }
        Body::Error(b) => {
            let _ = writeln!(out, "\n;; ERROR: {:?}", b.message_str());
            if let Some(ix) = &b.indexes {
                let _ = writeln!(out, ";; indexes: {ix:?}");
            }
        }
        Body::Referral(b) => {
            section(out, "REFERRAL");
            let _ = writeln!(out, ";referral handle: {:?}", text(&b.referral_handle));
            answer_lines(out, b.values.as_deref().unwrap_or_default(), opts);
        }
        Body::Challenge(b) => {
            let _ = writeln!(out, "\n;; CHALLENGE: nonce {}", hex::encode(&b.nonce));
        }
        Body::GetSiteInfoRequest(b) => {
            section(out, "QUESTION");
            let _ = writeln!(out, ";site info\t(handle {:?})", text(&b.handle));
        }
        Body::SiteInfoResponse(b) => {
            section(out, "ANSWER");
            let v = HandleValue::new(0, "HS_SITE", b.record.clone());
            let _ = writeln!(out, "{}", data_text(&v, opts));
        }
        Body::CreateHandleRequest { handle, values }
        | Body::AddValueRequest { handle, values }
        | Body::ModifyValueRequest { handle, values } => {
            section(out, "UPDATE");
            let _ = writeln!(out, ";{} ({} values)", text(handle), values.len());
            answer_lines(out, values, opts);
        }
        Body::CreateHandleResponse { handle } | Body::DeleteHandleRequest { handle } => {
            let _ = writeln!(out, "\n;; HANDLE: {}", text(handle));
        }
        Body::RemoveValueRequest { handle, indexes } => {
            let _ = writeln!(
                out,
                "\n;; HANDLE: {} remove indexes {indexes:?}",
                text(handle)
            );
        }
        Body::ListHandlesRequest { handle } => {
            let _ = writeln!(out, "\n;; LIST HANDLES under {}", text(handle));
        }
        Body::HomePrefixRequest { handle } => {
            let _ = writeln!(out, "\n;; PREFIX: {}", text(handle));
        }
        Body::ListHandlesResponse { handles } => {
            section(out, "HANDLES");
            for h in handles {
                let _ = writeln!(out, "{}", text(h));
            }
        }
        Body::ChallengeAnswer(b) => {
            let _ = writeln!(
                out,
                "\n;; CHALLENGE ANSWER: {} as {}:{} ({} bytes)",
                text(&b.auth_type),
                b.identity.index,
                text(&b.identity.handle),
                b.signed_response.len()
            );
        }
        Body::SessionSetupRequest(b) => {
            let _ = writeln!(
                out,
                "\n;; SESSION SETUP: mode {} timeout {}s identity {}:{}",
                b.key_exchange_mode,
                b.timeout,
                b.identity.index,
                text(&b.identity.handle)
            );
        }
        Body::SessionSetupResponse(b) => {
            let _ = writeln!(
                out,
                "\n;; SESSION SETUP: mode {} ({} bytes of key data)",
                b.key_exchange_mode,
                b.data.len()
            );
        }
        Body::Success => {}
        Body::Unknown(b) => {
            let _ = writeln!(out, "\n;; BODY ({} bytes): {}", b.len(), hex::encode(b));
        }
        // A layout the library learns after this view was written: its debug form.
        other => {
            let _ = writeln!(out, "\n;; BODY: {other:?}");
        }
    }
}

/// The text view of one message; `source` names the file(s) it came from.
pub fn message_text(msg: &Message, source: &str, size: usize, opts: &Options) -> String {
    let mut out = String::new();
    let e = &msg.envelope;
    let h = &msg.header;
    let _ = writeln!(out, ";; {source} ({size} bytes)");
    let status = if msg.is_response() {
        h.response_code.name().to_owned()
    } else {
        "REQUEST".to_owned()
    };
    let _ = writeln!(
        out,
        ";; ->>HEADER<<- opcode: {} ({}), status: {} ({}), id: {}",
        h.op_code.name(),
        h.op_code.code(),
        status,
        h.response_code.code(),
        e.request_id
    );
    let _ = writeln!(
        out,
        ";; flags: {}; version: {} (suggests {}); session: {}; site serial: {}; recursion: {}; \
         expires: {}",
        h.flags.names().join(" ").to_lowercase(),
        e.version,
        e.suggested,
        e.session_id,
        h.site_info_serial,
        h.recursion_count,
        when(h.expiration)
    );
    if let Some(d) = &msg.request_digest {
        let _ = writeln!(
            out,
            ";; request digest: algorithm {} {}",
            d.algorithm.code(),
            hex::encode(&d.digest)
        );
    }
    body_text(&mut out, &msg.body, opts);
    if let Some(c) = &msg.credential {
        let verdict = match signature_check(msg, opts.pubkey.as_ref()) {
            Some(Ok(())) => "; signature VALID".to_owned(),
            Some(Err(reason)) => format!("; signature INVALID ({reason})"),
            None => String::new(),
        };
        let _ = writeln!(
            out,
            "\n;; CREDENTIAL: {} {}, signer {}, {} signature bytes{verdict}",
            text(&c.credential_type),
            digest_algorithm_name(&c.digest_algorithm),
            if c.signer.handle.is_empty() {
                format!("index {}", c.signer.index)
            } else {
                format!("{}:{}", c.signer.index, text(&c.signer.handle))
            },
            c.signature.len()
        );
    }
    out
}
