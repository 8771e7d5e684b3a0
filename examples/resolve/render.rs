//! What `resolve` prints: the text view, the JSON documents (handle.net REST API shape) and
//! the reasons of failures, which name the identifier, the server and what went wrong.

use handle_resolver::document::attempt_json;
use handle_resolver::transport::TransportKind;
use handle_resolver::wire::json::RestAnswer;
use handle_resolver::wire::{HandleValue, ResponseCode};
use handle_resolver::{Attempt, HandleRecord, ResolveError, ResolveErrorKind};
use serde_json::Value as Json;

/// Exit statuses, most severe last (with several identifiers the highest wins).
pub const OK: u8 = 0;
/// Some identifier not found, without (matching) values, or not served.
pub const NOT_FOUND: u8 = 1;
/// Bad input: an invalid identifier or option; nothing was sent for it.
pub const BAD_INPUT: u8 = 2;
/// Network, timeout or protocol failure.
pub const NETWORK: u8 = 3;
/// Stopped by Ctrl-C or SIGTERM (128 + SIGINT, as shells report it).
pub const INTERRUPTED: u8 = 130;

/// How one identifier's resolution ended: the rows of [`EXIT_TABLE`], in its order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Values came back.
    Resolved,
    /// 100 from the server of the handle.
    NotFound,
    /// 200: the handle exists, no value matches (or none is public).
    NoValues,
    /// No service information for the prefix (its prefix handle not found or without
    /// HS_SITE/HS_SERV values).
    UnknownPrefix,
    /// 301 from every site of the service, or from the one `--server`.
    NotServed,
    /// 402.
    AuthenticationNeeded,
    /// The server refused our answer to its challenge (403 AUTHENTICATION_FAILED, 404
    /// INVALID_CREDENTIAL, 400 INVALID_ADMIN, 401 INSUFFICIENT_PERMISSIONS), or it could not
    /// be answered.
    AuthenticationFailed,
    /// The identifier does not parse (or is not a CORDRA id under `--cordra`); nothing sent.
    Invalid,
    /// No usable answer: timeout, network, protocol or signature failure, loops.
    Failed,
    /// A server answered another error code (2 ERROR, 3 SERVER_TOO_BUSY, ...).
    OtherCode,
    /// A mistake in the options or the root file: nothing is resolved.
    Usage,
    /// Ctrl-C or SIGTERM during the run.
    Interrupted,
}

/// The `responseCode` an outcome carries in JSON and TSV output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Code {
    /// Always this code.
    Fixed(u32),
    /// The code the server answered.
    Server,
    /// No per-identifier document is printed.
    Absent,
}

/// One row of the exit status table.
#[derive(Debug, Clone, Copy)]
pub struct StatusRow {
    /// Which outcome (the row's index in [`EXIT_TABLE`] is its discriminant).
    pub outcome: Outcome,
    /// What happened, as `docs/resolve.md` and `--help` say it.
    pub what: &'static str,
    /// The JSON/TSV `responseCode`.
    pub code: Code,
    /// The exit status (with several identifiers the highest wins).
    pub exit: u8,
}

const fn row(outcome: Outcome, what: &'static str, code: Code, exit: u8) -> StatusRow {
    StatusRow {
        outcome,
        what,
        code,
        exit,
    }
}

/// Outcome -> `responseCode` -> exit status: the one table, printed by `--help` and copied in
/// `docs/resolve.md` (a test checks that both agree with it).
pub const EXIT_TABLE: [StatusRow; 12] = [
    row(Outcome::Resolved, "resolved", Code::Fixed(1), OK),
    row(
        Outcome::NotFound,
        "handle not found",
        Code::Fixed(100),
        NOT_FOUND,
    ),
    row(
        Outcome::NoValues,
        "no (matching) values",
        Code::Fixed(200),
        NOT_FOUND,
    ),
    row(
        Outcome::UnknownPrefix,
        "unknown prefix (no service information)",
        Code::Fixed(100),
        NOT_FOUND,
    ),
    row(
        Outcome::NotServed,
        "prefix not served (301, also from --server)",
        Code::Fixed(301),
        NOT_FOUND,
    ),
    row(
        Outcome::AuthenticationNeeded,
        "values need authentication",
        Code::Fixed(402),
        NOT_FOUND,
    ),
    row(
        Outcome::AuthenticationFailed,
        "authentication failed or not permitted (400, 401, 403, 404)",
        Code::Server,
        NOT_FOUND,
    ),
    row(
        Outcome::Invalid,
        "invalid identifier (nothing sent)",
        Code::Fixed(2),
        BAD_INPUT,
    ),
    row(
        Outcome::Failed,
        "timeout, network, protocol or signature failure, loop",
        Code::Fixed(2),
        NETWORK,
    ),
    row(
        Outcome::OtherCode,
        "other server error (2 ERROR, 3 SERVER_TOO_BUSY, ...)",
        Code::Server,
        NETWORK,
    ),
    row(
        Outcome::Usage,
        "usage error: bad option or root file (nothing sent)",
        Code::Absent,
        BAD_INPUT,
    ),
    row(
        Outcome::Interrupted,
        "interrupted by Ctrl-C or SIGTERM",
        Code::Absent,
        INTERRUPTED,
    ),
];

// The table has one row per outcome, in the enum's order (`Outcome::row` indexes by it):
// checked when the example compiles.
const _: () = {
    assert!(EXIT_TABLE.len() == Outcome::Interrupted as usize + 1);
    let mut i = 0;
    while i < EXIT_TABLE.len() {
        assert!(
            EXIT_TABLE[i].outcome as usize == i,
            "EXIT_TABLE is in the order of Outcome"
        );
        i += 1;
    }
};

impl Outcome {
    /// The outcome of a failed resolution.
    pub fn of(e: &ResolveError) -> Outcome {
        match e.kind() {
            ResolveErrorKind::InvalidInput => Outcome::Invalid,
            ResolveErrorKind::NotFound => Outcome::NotFound,
            ResolveErrorKind::NoMatchingValues => Outcome::NoValues,
            ResolveErrorKind::UnknownPrefix => Outcome::UnknownPrefix,
            ResolveErrorKind::PrefixNotServed => Outcome::NotServed,
            ResolveErrorKind::AuthenticationNeeded => Outcome::AuthenticationNeeded,
            ResolveErrorKind::AuthenticationFailed => Outcome::AuthenticationFailed,
            ResolveErrorKind::Server => Outcome::OtherCode,
            _ => Outcome::Failed,
        }
    }

    /// Its row of [`EXIT_TABLE`].
    pub fn row(self) -> &'static StatusRow {
        let row = &EXIT_TABLE[self as usize];
        debug_assert_eq!(row.outcome, self, "EXIT_TABLE is in the order of Outcome");
        row
    }
}

/// The exit status of one failed resolution.
pub fn exit_status(e: &ResolveError) -> u8 {
    Outcome::of(e).row().exit
}

/// The `responseCode` of one failed resolution in JSON and TSV output (the REST API's, as
/// [`EXIT_TABLE`] lists it).
pub fn response_code(e: &ResolveError) -> u32 {
    e.rest_response_code()
}

/// The exit status table as `--help` prints it.
pub fn exit_table_text() -> String {
    let mut text = String::from("Exit status (with several identifiers the highest wins):\n");
    for r in &EXIT_TABLE {
        let code = match r.code {
            Code::Fixed(c) => format!("responseCode {c}"),
            Code::Server => "the server's code".to_string(),
            Code::Absent => "no document".to_string(),
        };
        text.push_str(&format!("  {:>3}  {:<55} {code}\n", r.exit, r.what));
    }
    text
}

/// `udp`, `tcp`, `http` or `https`.
pub fn transport_name(kind: TransportKind) -> &'static str {
    kind.as_str()
}

/// What the run asked, for the failure messages: where requests went first, and whether the
/// query had a type or index filter.
pub struct Context {
    /// `127.0.0.1:2641 (--server)`, `root 127.0.0.1:2641`, `the global root servers`, ...
    pub first_hop: String,
    /// `--type` or `--index` given.
    pub filtered: bool,
    /// `--server`: every request goes to one server.
    pub one_server: bool,
    /// `--auth`: the identity as given, and whether its key is a secret key (else a private
    /// key file).
    pub identity: Option<(String, bool)>,
}

/// `: the server refused the secret key of 300:0.NA/20.500.1 (...)` after a 403 or 404 to
/// the answer of `--auth`'s identity; empty otherwise.
fn refused_key(e: &ResolveError, ctx: &Context) -> String {
    let refused = matches!(
        e.response_code(),
        Some(ResponseCode::AuthenticationFailed | ResponseCode::InvalidCredential)
    );
    let Some((identity, secret)) = ctx.identity.as_ref().filter(|_| refused) else {
        return String::new();
    };
    let (index, handle) = identity.split_once(':').unwrap_or(("", identity));
    if *secret {
        format!(
            ": the server refused the secret key of {identity} (a wrong secret, or {handle} \
             holds no HS_SECKEY at index {index})"
        )
    } else {
        format!(
            ": the server refused the signature of {identity}'s private key (a wrong key file, \
             or {handle} holds no matching HS_PUBKEY at index {index})"
        )
    }
}

/// ` at 127.0.0.1:2641 udp`, for the last server that answered at all.
fn answered_by(attempts: &[Attempt]) -> String {
    Attempt::last_answered(attempts)
        .map(|h| format!(" at {} {}", h.peer(), transport_name(h.transport)))
        .unwrap_or_default()
}

/// Why a resolution failed, with the server involved; the identifier is not repeated (the
/// caller puts it in front).
pub fn reason(e: &ResolveError, attempts: &[Attempt], ctx: &Context) -> String {
    let from = answered_by(attempts);
    match e.kind() {
        ResolveErrorKind::NotFound => format!("handle not found (100){from}"),
        ResolveErrorKind::NoMatchingValues if ctx.filtered => {
            format!("no values of the --type/--index asked for (200){from}")
        }
        ResolveErrorKind::NoMatchingValues => format!("no public values (200){from}"),
        ResolveErrorKind::PrefixNotServed if ctx.one_server => {
            format!("prefix not served by this server (301){from}")
        }
        ResolveErrorKind::PrefixNotServed => {
            format!("prefix not served by any site of its service (301){from}")
        }
        ResolveErrorKind::AuthenticationNeeded => {
            format!("values need authentication (402){from}")
        }
        ResolveErrorKind::UnknownPrefix => {
            let prefix_handle = e.handle().map_or("its prefix handle", |h| h.as_str());
            format!(
                "unknown prefix: {prefix_handle} not found or without service information{from}"
            )
        }
        ResolveErrorKind::Referral if !from.is_empty() => {
            format!("{} (last answer{from})", e.reason())
        }
        ResolveErrorKind::Timeout => {
            let after = e.deadline().unwrap_or_default();
            let last = attempts.last().map_or(String::new(), |h| {
                format!(" (last request: {} to {})", h.handle, h.peer())
            });
            format!(
                "no answer within {} s from {}{last}",
                after.as_secs_f64(),
                if attempts.is_empty() {
                    ctx.first_hop.as_str()
                } else {
                    "the servers asked"
                }
            )
        }
        ResolveErrorKind::AuthenticationFailed => format!("{}{}", e.reason(), refused_key(e, ctx)),
        _ => e.reason(),
    }
}

/// The `error: ...` line for one identifier.
pub fn error_line(input: &str, e: &ResolveError, attempts: &[Attempt], ctx: &Context) -> String {
    match e.ident_error() {
        // Same shape as `--check`: the input quoted, the reason with its byte offset.
        Some(ie) => format!("{input:?}: {ie}"),
        None => format!("{input}: {}", reason(e, attempts, ctx)),
    }
}

/// The `--trace` lines of one resolution, in aligned columns: attempt, handle, server,
/// transport, round-trip time, outcome.
pub fn attempts_text(attempts: &[Attempt]) -> Vec<String> {
    let attempt_w = attempts
        .iter()
        .map(|h| h.number.to_string().len() + 1)
        .max()
        .unwrap_or(2);
    let handle_w = attempts
        .iter()
        .map(|h| h.handle.as_str().chars().count())
        .max()
        .unwrap_or(0);
    let to = Attempt::peer;
    let server_w = attempts.iter().map(|h| to(h).len()).max().unwrap_or(0);
    let rtt = |h: &Attempt| format!("{:.1}", h.rtt.as_secs_f64() * 1000.0);
    let rtt_w = attempts.iter().map(|h| rtt(h).len()).max().unwrap_or(0);
    attempts.iter()
        .map(|h| {
            let outcome = &h.outcome;
            let sent = if h.transmissions > 1 {
                format!(" ({} transmissions)", h.transmissions)
            } else {
                String::new()
            };
            format!(
                ";;   {:<attempt_w$}  {:<handle_w$}  {:<server_w$}  {}  {:>rtt_w$} ms  {outcome}{sent}",
                format!("#{}", h.number),
                one_line(h.handle.as_str()),
                to(h),
                transport_name(h.transport),
                rtt(h),
            )
        })
        .collect()
}

/// Control characters of a value shown on one line (`\n`, `\t`, `\u{1b}`, ...).
fn one_line(s: &str) -> String {
    if s.chars().any(char::is_control) {
        s.chars()
            .flat_map(|c| {
                if c.is_control() {
                    c.escape_default().collect::<Vec<_>>()
                } else {
                    vec![c]
                }
            })
            .collect()
    } else {
        s.to_string()
    }
}

/// A value's data on one line: its text, or the JSON of its typed view.
pub fn display_data(v: &HandleValue) -> String {
    let typed = v.typed();
    match typed.as_text() {
        Some(s) => one_line(s),
        None => typed.to_json()["value"].to_string(),
    }
}

/// The text view of a record: a header line, the alias chain, one aligned line per value.
pub fn record_text(rec: &HandleRecord, raw: bool) -> Vec<String> {
    let s = &rec.source;
    let mut lines = vec![format!(
        "{}  (from {} {}{}{}{})",
        rec.handle,
        s.peer(),
        transport_name(s.transport),
        s.site_description()
            .map(|d| format!(", site {d:?}"))
            .unwrap_or_default(),
        if s.certified { ", certified" } else { "" },
        if rec.from_cache { ", cached" } else { "" },
    )];
    if rec.aliases.len() > 1 {
        lines.push(format!("  alias chain: {}", rec.aliases.join(" -> ")));
    }
    let index_width = rec
        .values
        .iter()
        .map(|v| v.index.to_string().len())
        .max()
        .unwrap_or(0)
        .max(5);
    let type_width = rec
        .values
        .iter()
        .map(|v| v.type_str().chars().count())
        .max()
        .unwrap_or(0)
        .max(8);
    for v in &rec.values {
        let data = if raw {
            hex::encode(&v.data)
        } else {
            display_data(v)
        };
        lines.push(format!(
            "  {:>index_width$}  {:<type_width$}  {data}",
            v.index,
            one_line(&v.type_str())
        ));
    }
    lines
}

/// One value in the handle.net REST API shape (`wire::json`: permissions when unusual, an
/// absolute TTL as an RFC 3339 instant, references when there are some); `raw` adds the hex
/// of the data bytes.
pub fn value_json(v: &HandleValue, raw: bool) -> Json {
    let mut value = handle_resolver::wire::json::value_to_json(v);
    if raw {
        value["raw"] = Json::String(hex::encode(&v.data));
    }
    value
}

/// `{"responseCode": 1, "handle": "...", "values": [...]}` (handle.net REST API), or
/// `{"responseCode": N, "handle": "...", "message": "..."}` for a failure (2, the REST
/// API's generic error, when the failure has no response code of its own). `asked` is the
/// normalized handle asked for (the input itself when it is not a valid identifier); after
/// HS_ALIAS following, `handle` is the handle the values belong to and `aliases` the chain.
pub fn json_document(
    asked: &str,
    result: &Result<HandleRecord, ResolveError>,
    attempts: &[Attempt],
    ctx: &Context,
    trace: bool,
    raw: bool,
) -> Json {
    // The REST API's document (`handle_resolver::document`, with `aliases`), with what the
    // CLI adds: each value's `raw` bytes, the `trace`.
    let mut doc = match result {
        Ok(rec) => {
            let mut doc = handle_resolver::document::record_json(rec);
            if raw {
                if let Some(values) = doc.get_mut("values").and_then(Json::as_array_mut) {
                    for (json, v) in values.iter_mut().zip(&rec.values) {
                        json["raw"] = Json::String(hex::encode(&v.data));
                    }
                }
            }
            doc
        }
        Err(e) => {
            let mut answer = RestAnswer::new(response_code(e), asked);
            answer.message = Some(reason(e, attempts, ctx));
            answer.to_json()
        }
    };
    if trace {
        doc["trace"] = Json::Array(attempts.iter().map(attempt_json).collect());
    }
    doc
}

/// One row of the `--all-sites` table.
pub struct SiteRow {
    /// `*` when the site's hash picks this server for the handle.
    pub responsible: bool,
    /// Site label.
    pub site: String,
    /// Server address (`-` for a server with no interface that takes queries).
    pub server: String,
    /// `3 values`, `handle not found (100)`, ...
    pub answer: String,
}

/// The `--all-sites` table, columns sized to their content.
pub fn sites_table(rows: &[SiteRow]) -> Vec<String> {
    let site_w = rows
        .iter()
        .map(|r| r.site.chars().count())
        .chain([4])
        .max()
        .unwrap_or(4);
    let server_w = rows
        .iter()
        .map(|r| r.server.len())
        .chain([6])
        .max()
        .unwrap_or(6);
    let mut lines = vec![format!(
        "  {:<site_w$}  {:<server_w$}  ANSWER",
        "SITE", "SERVER"
    )];
    for r in rows {
        lines.push(format!(
            "{} {:<site_w$}  {:<server_w$}  {}",
            if r.responsible { "*" } else { " " },
            r.site,
            r.server,
            r.answer
        ));
    }
    lines
}
