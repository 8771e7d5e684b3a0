//! `--check-root FILE`: verify the signatures of a `bootstrap_handles` file offline (no
//! network at all): every record's HS_SIGNATURE, the value digests it lists, the HS_CERT chain
//! up to the built-in trust root key of `0.0/0.0`, and the validity periods at `--at`.

use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

use handle_resolver::root::read_bootstrap_handles;
use handle_resolver::trust::{instant, verify_records, TrustError, TrustRoot, VerifiedRecord};
use handle_resolver::wire::Limits;
use serde_json::json;

use crate::out::{self, Out};
use crate::render::{BAD_INPUT, NOT_FOUND, OK};

/// The options of the root file check.
#[derive(Debug, clap::Args)]
pub struct CheckRootArgs {
    /// Verify a reference-client `bootstrap_handles` file offline against the built-in trust
    /// root (the global root's 0.0/0.0 key): prints each record `verified` or why not; exit 0
    /// only when every record verifies.
    #[arg(
        long,
        value_name = "FILE",
        conflicts_with = "ids",
        help_heading = "Root file"
    )]
    pub check_root: Option<PathBuf>,
    /// With --check-root: check validity periods at this time: RFC 3339
    /// (2019-07-26T18:15:40Z), seconds since the epoch, or `file` (the file's lastUpdate)
    /// [default: now].
    #[arg(
        long,
        value_name = "TIME",
        requires = "check_root",
        help_heading = "Root file"
    )]
    pub at: Option<String>,
}

/// Runs the check when `--check-root` was given; returns the exit status.
pub fn run_if_asked(args: &CheckRootArgs, json: bool) -> Option<u8> {
    let path = args.check_root.as_ref()?;
    let mut o = Out::new();
    let status = match run(path, args.at.as_deref(), json, &mut o).and_then(|s| {
        o.finish()?;
        Ok(s)
    }) {
        Ok(s) => s,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => OK,
        Err(e) => {
            out::error(format!("cannot write to stdout: {e}"));
            BAD_INPUT
        }
    };
    Some(status)
}

fn run(path: &PathBuf, at: Option<&str>, json: bool, o: &mut Out) -> std::io::Result<u8> {
    let shown = path.display();
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) => {
            out::error(format!("--check-root {shown}: cannot read the file: {e}"));
            return Ok(BAD_INPUT);
        }
    };
    let file = match read_bootstrap_handles(&bytes, &Limits::default()) {
        Ok(f) => f,
        Err(e) => {
            out::error(format!(
                "--check-root {shown}: not a bootstrap_handles file: {e}"
            ));
            return Ok(BAD_INPUT);
        }
    };
    if file.handles.is_empty() {
        out::error(format!("--check-root {shown}: the file holds no record"));
        return Ok(BAD_INPUT);
    }
    let now = match check_time(at, file.last_update) {
        Ok(t) => t,
        Err(e) => {
            out::error(format!("--at: {e}"));
            return Ok(BAD_INPUT);
        }
    };
    let verification = verify_records(&file.handles, &TrustRoot::global(), now);
    let mut failed = 0;
    for (handle, result) in verification.iter() {
        let line = match (result, json) {
            (Ok(rec), false) => format!("{handle}: verified ({})", summary(rec)),
            (Ok(rec), true) => verified_json(rec).to_string(),
            (Err(e), false) => format!("{handle}: NOT verified: {}", reason(e)),
            (Err(e), true) => error_json(e).to_string(),
        };
        failed += usize::from(result.is_err());
        o.line(line)?;
    }
    let total = verification.len();
    let when = instant(now);
    if failed == 0 {
        out::note(format!(
            "{shown}: all {total} records verified at {when} against the built-in trust root"
        ));
        Ok(OK)
    } else {
        out::error(format!(
            "{shown}: {failed} of {total} records not verified at {when}"
        ));
        Ok(NOT_FOUND)
    }
}

/// The time of the check, seconds since the epoch.
fn check_time(at: Option<&str>, last_update_ms: Option<u64>) -> Result<u64, String> {
    match at {
        None => SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .map_err(|_| "the system clock is before 1970".to_string()),
        Some("file") => last_update_ms
            .map(|ms| ms / 1000)
            .ok_or_else(|| "`file`: the file has no lastUpdate".to_string()),
        Some(text) => {
            if let Ok(s) = text.parse::<u64>() {
                return Ok(s);
            }
            time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339)
                .ok()
                .and_then(|t| u64::try_from(t.unix_timestamp()).ok())
                .ok_or_else(|| {
                    format!("{text:?}: expected RFC 3339, seconds since the epoch, or `file`")
                })
        }
    }
}

/// `5 values signed by 301:0.NA/0.NA (certificates 400:0.NA/0.NA, 400:0.0/0.0) until ...`
fn summary(rec: &VerifiedRecord) -> String {
    let mut parts = Vec::new();
    for s in &rec.signatures {
        let chain: Vec<String> = s.chain.iter().map(ToString::to_string).collect();
        parts.push(format!(
            "{} value{} signed by {}, certificates {}",
            s.signed.len(),
            if s.signed.len() == 1 { "" } else { "s" },
            s.issuer,
            chain.join(" <- ")
        ));
    }
    if !rec.legacy_signatures.is_empty() {
        parts.push("legacy DSA signature".to_string());
    }
    if let Some(t) = rec.not_after() {
        parts.push(format!("valid until {}", instant(t)));
    }
    parts.join("; ")
}

/// The error without the record's handle, which the line starts with.
fn reason(e: &TrustError) -> String {
    match (e.index, &e.value_type) {
        (Some(i), Some(t)) => format!("value {i} ({t}): {}", e.kind),
        (Some(i), None) => format!("value {i}: {}", e.kind),
        _ => e.kind.to_string(),
    }
}

fn verified_json(rec: &VerifiedRecord) -> serde_json::Value {
    json!({
        "handle": rec.handle,
        "verified": true,
        "signed": rec.signed,
        "signatures": rec.signatures.iter().map(|s| json!({
            "index": s.index,
            "issuer": s.issuer,
            "chain": s.chain.iter().map(ToString::to_string).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "legacySignatures": rec.legacy_signatures,
        "notAfter": rec.not_after().map(instant),
    })
}

fn error_json(e: &TrustError) -> serde_json::Value {
    json!({
        "handle": e.handle,
        "verified": false,
        "index": e.index,
        "type": e.value_type,
        "reason": e.kind.to_string(),
        "values": e.values().iter().map(ToString::to_string).collect::<Vec<_>>(),
    })
}
