//! What a resolution returns: [`HandleRecord`] (values and where they came from) and the
//! [`Attempt`] trace of every request sent.

use std::net::SocketAddr;
use std::time::Duration;

use super::error::{ProtocolViolation, ResolveError, SignatureFailure};
use super::site::Site;
use crate::auth::AuthError;
use crate::ident::Handle;
use crate::transport::{HttpError, TransportError, TransportKind};
use crate::wire::{
    Chooser, HandleValue, LocationRequest, LocationSet, ProtocolVersion, ResponseCode,
};

/// Where an answer came from.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Source {
    /// The server that answered (address and port of the transport used); `None` for a
    /// proxy's REST API named by a host name (its address is the HTTP client's business:
    /// `url` names it).
    pub server: Option<SocketAddr>,
    /// The transport of the answer.
    pub transport: TransportKind,
    /// The site serial number the server put in its response header.
    pub site_serial: u16,
    /// The site of the server that answered, when the answer came from a site (not from
    /// a proxy's REST API); see also [`Source::site_description`].
    pub site: Option<Site>,
    /// True when the answer was signed and its signature verified.
    pub certified: bool,
    /// True when the answer came from a primary site (and had AT set; servers set AT on
    /// every response, so the flag alone says nothing).
    pub authoritative: bool,
    /// The response's protocol version (for a proxy's REST answer: the version the
    /// resolver speaks, as the JSON names none).
    pub protocol_version: ProtocolVersion,
    /// For an answer from a proxy's REST API: the URL asked (`server` is then the proxy's
    /// address when the URL names one by an IP literal, else `None`).
    pub url: Option<http::Uri>,
}

impl Source {
    /// Who answered, as text: the server's address, else (a proxy's REST API named by a
    /// host name) the host and port of the URL asked.
    pub fn peer(&self) -> String {
        peer_text(self.server, self.url.as_ref(), false)
    }

    /// The `desc` attribute of the answering site, when it has one (read when asked: most
    /// answers are never asked where they came from).
    pub fn site_description(&self) -> Option<String> {
        self.site.as_ref().and_then(Site::description)
    }
}

/// How one attempt ended.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AttemptOutcome {
    /// The server answered with this code.
    Response(ResponseCode),
    /// The server answered, but the answer was rejected (expired, bad signature, ...).
    Rejected(Rejection),
    /// No usable answer (timeout, connection refused, ...).
    Failed(TransportError),
    /// The attempt was still running when the call's deadline passed.
    DeadlinePassed,
    /// The attempt was still running when another one won (it was cancelled).
    Cancelled,
}

/// One request sent to one server over one transport during a resolution (what
/// `resolve --trace` prints).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Attempt {
    /// The handle in the request (`0.NA/<prefix>` for service lookups).
    pub handle: Handle,
    /// The server asked; `None` for a proxy's REST API named by a host name (`url` names
    /// it).
    pub server: Option<SocketAddr>,
    /// UDP or TCP.
    pub transport: TransportKind,
    /// 1 for the first attempt of the resolution, counting every attempt in the order they
    /// started; the attempts of work shared with other callers (an identical query, a
    /// service lookup) come after those the resolution started before it joined that work,
    /// in the order they started there.
    pub number: u32,
    /// Time from the first transmission to the outcome (for an attempt still running when
    /// the deadline passed: to that moment, which for shared work another caller started can
    /// be longer than this call's own deadline).
    pub rtt: Duration,
    /// Transmissions of the request (UDP retransmissions included; 0 when it ended before an
    /// answer arrived). Above 1 the answer may belong to any of them, so `rtt` is only an
    /// upper bound and is not used as an RTT sample for site choice (Karn's rule).
    pub transmissions: u32,
    /// What happened.
    pub outcome: AttemptOutcome,
    /// For a request to a proxy's REST API: the URL asked (`server` is then the proxy's
    /// address when the URL names one by an IP literal, else `None`).
    pub url: Option<http::Uri>,
    /// The session the request went in (the server's session id), when it went in one.
    pub session: Option<u32>,
}

/// A server's address, else a URL (whole, or its host and port), else `-`.
fn peer_text(server: Option<SocketAddr>, url: Option<&http::Uri>, whole_url: bool) -> String {
    match (url, server) {
        (Some(url), _) if whole_url => url.to_string(),
        (_, Some(server)) => server.to_string(),
        (Some(url), None) => url
            .authority()
            .map_or_else(|| url.to_string(), ToString::to_string),
        (None, None) => "-".to_string(),
    }
}

impl Attempt {
    /// Where the request went, as text: the URL asked for a proxy's REST API, else the
    /// server's address.
    pub fn peer(&self) -> String {
        peer_text(self.server, self.url.as_ref(), true)
    }

    /// The last of `attempts` that got an answer (any answer, an error code too): the
    /// server a failure names when the failure names none of its own (`resolve`'s `at
    /// 127.0.0.1:2641 udp`, the Python exception's `server`).
    pub fn last_answered(attempts: &[Attempt]) -> Option<&Attempt> {
        attempts
            .iter()
            .rev()
            .find(|a| matches!(a.outcome, AttemptOutcome::Response(_)))
    }
}

impl std::fmt::Display for Attempt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let t = self.transport.as_str();
        let to = self.peer();
        write!(
            f,
            "#{} {} {} {} {:.1} ms",
            self.number,
            self.handle,
            to,
            t,
            self.rtt.as_secs_f64() * 1000.0
        )?;
        if self.transmissions > 1 {
            write!(f, " ({} transmissions)", self.transmissions)?;
        }
        if let Some(id) = self.session {
            write!(f, " in session {id}")?;
        }
        f.write_str(": ")?;
        write!(f, "{}", self.outcome)
    }
}

impl std::fmt::Display for AttemptOutcome {
    /// `SUCCESS (1)`, `rejected: ...`, `failed: ...`, as `resolve --trace` prints them.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AttemptOutcome::Response(code) => write!(f, "{code}"),
            AttemptOutcome::Rejected(why) => write!(f, "rejected: {why}"),
            AttemptOutcome::Failed(why) => write!(f, "failed: {why}"),
            AttemptOutcome::DeadlinePassed => {
                write!(f, "failed: no answer yet when the overall deadline passed")
            }
            AttemptOutcome::Cancelled => write!(f, "cancelled (another answer won)"),
        }
    }
}

/// Why an answer that came was not taken ([`AttemptOutcome::Rejected`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Rejection {
    /// It is not an acceptable response (expired, another op code, a bad body, ...).
    #[error("protocol error: {0}")]
    Protocol(ProtocolViolation),
    /// A certified answer failed verification.
    #[error("signature check failed: {0}")]
    Signature(SignatureFailure),
    /// The server's challenge could not be answered.
    #[error("cannot answer the challenge: {0}")]
    Authentication(AuthError),
    /// A handle proxy's answer is not its REST API's JSON.
    #[error("http: {0}")]
    Http(HttpError),
}

impl Rejection {
    /// The failure a rejected answer of `server` over `kind` is, as a resolution reports it.
    pub(crate) fn into_error(self, server: SocketAddr, kind: TransportKind) -> ResolveError {
        match self {
            Rejection::Protocol(violation) => ResolveError::Protocol {
                server: Some(server),
                violation,
                sites_asked: 1,
            },
            Rejection::Signature(failure) => ResolveError::Signature {
                server,
                failure,
                sites_asked: 1,
            },
            Rejection::Authentication(error) => ResolveError::Authentication { server, error },
            Rejection::Http(error) => ResolveError::Transport {
                server,
                kind,
                error: TransportError::Http(error),
                sites_asked: 1,
            },
        }
    }
}

/// The outcome of a successful resolution: the values, where they came from, and every
/// attempt made.
///
/// ```no_run
/// # async fn demo(resolver: handle_resolver::Resolver) -> Result<(), handle_resolver::ResolveError> {
/// let record = resolver.resolve("10.1045/april2006-paskin").await?;
/// if let Some(url) = record.url() {
///     println!("the URL: {url}");
/// }
/// for url in record.urls() {
///     println!("{url}");
/// }
/// for email in record.values_of_type("EMAIL") {
///     println!("{:?}", email.typed());
/// }
/// println!(
///     "from {} over {}{}",
///     record.source.peer(),
///     record.source.transport,
///     if record.source.certified { ", certified" } else { "" }
/// );
/// for attempt in &record.attempts {
///     println!("{attempt}");
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HandleRecord {
    /// The handle whose values these are (the last one of an alias chain), as the server
    /// spelled it in its answer.
    pub handle: String,
    /// The values, in the server's order.
    pub values: Vec<HandleValue>,
    /// Where they came from (for a cached answer: where they came from originally).
    pub source: Source,
    /// True when served from the resolver's cache without any packet.
    pub from_cache: bool,
    /// The HS_ALIAS chain followed, starting with the handle asked for (empty when none).
    pub aliases: Vec<String>,
    /// Every request sent for this resolution, in order of completion (none for an answer
    /// the cache gave without any packet).
    pub attempts: Vec<Attempt>,
}

impl HandleRecord {
    /// The values whose type equals `type_name` (ASCII case-insensitive).
    pub fn values_of_type<'a>(
        &'a self,
        type_name: &'a str,
    ) -> impl Iterator<Item = &'a HandleValue> + 'a {
        self.values.iter().filter(move |v| v.is_type(type_name))
    }

    /// The data of the first `URL` value (in the server's order), as text; `None` when
    /// there is none.
    pub fn url(&self) -> Option<String> {
        self.values_of_type("URL")
            .next()
            .map(|v| String::from_utf8_lossy(&v.data).into_owned())
    }

    /// The data of every `URL` value, as text.
    pub fn urls(&self) -> Vec<String> {
        self.values_of_type("URL")
            .map(|v| String::from_utf8_lossy(&v.data).into_owned())
            .collect()
    }
}

impl HandleRecord {
    /// The URL the handle.net proxy would redirect `request` to: one location of every
    /// `10320/loc` value and the `URL` values, chosen as the proxy chooses
    /// ([`LocationSet`]), its `href` (or `href_template` filled in with the handle asked
    /// for); `None` when there is none. The weighted draw is the library's own
    /// ([`Chooser::new`]); [`Self::select_location_with`] takes a seeded one.
    ///
    /// ```
    /// # fn demo(record: handle_resolver::HandleRecord) {
    /// use handle_resolver::wire::LocationRequest;
    /// let request = LocationRequest::new().locatt("view:json");
    /// if let Some(url) = record.select_location(&request) {
    ///     println!("{url}");
    /// }
    /// # }
    /// ```
    pub fn select_location(&self, request: &LocationRequest) -> Option<String> {
        self.select_location_with(request, &mut Chooser::new())
    }

    /// [`Self::select_location`] with the draws of `chooser` (e.g. [`Chooser::seeded`], for
    /// a choice that can be repeated).
    pub fn select_location_with(
        &self,
        request: &LocationRequest,
        chooser: &mut Chooser,
    ) -> Option<String> {
        let asked = self.aliases.first().unwrap_or(&self.handle);
        LocationSet::from_values(&self.values)
            .select(request, chooser)?
            .href_for(asked)
    }
}
