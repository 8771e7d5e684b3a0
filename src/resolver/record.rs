//! What a resolution returns: [`HandleRecord`] (values and where they came from), the
//! [`Query`] knobs, and the [`Hop`] trace of every attempt.

use std::net::SocketAddr;
use std::time::Duration;

use crate::transport::TransportKind;
use crate::wire::{HandleValue, ProtocolVersion, ResponseCode};

/// What to ask for: filters and flags of one resolution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Query {
    /// Type names to return (empty = all). Matched by the server, case-insensitively; a
    /// trailing dot selects a hierarchy (`HS_SITE.`).
    pub types: Vec<String>,
    /// Value indexes to return (empty = all). Types and indexes are OR'ed by servers.
    pub indexes: Vec<u32>,
    /// Ask for signed answers (CT) and verify them with the server key from its HS_SITE.
    pub certify: bool,
    /// Ask primary sites only and bypass caches (AT).
    pub authoritative: bool,
    /// Ask for public values only (PO); without it, a server answers 402 unless authenticated.
    pub public_only: bool,
}

impl Default for Query {
    /// All values, public only, not certified, not authoritative.
    fn default() -> Self {
        Self {
            types: Vec::new(),
            indexes: Vec::new(),
            certify: false,
            authoritative: false,
            public_only: true,
        }
    }
}

impl Query {
    /// A query for values of these types only.
    pub fn types<I, S>(types: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self {
            types: types.into_iter().map(Into::into).collect(),
            ..Self::default()
        }
    }
}

/// Where an answer came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    /// The server that answered (address and port of the transport used).
    pub server: SocketAddr,
    /// The transport of the answer.
    pub transport: TransportKind,
    /// The site serial number the server put in its response header.
    pub site_serial: u16,
    /// The `desc` attribute of the site, when it has one.
    pub site_description: Option<String>,
    /// True when the answer was signed and its signature verified.
    pub certified: bool,
    /// True when the response had AT set (it came from a primary site).
    pub authoritative: bool,
    /// The response's protocol version.
    pub protocol_version: ProtocolVersion,
}

/// How one attempt ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HopOutcome {
    /// The server answered with this code.
    Response(ResponseCode),
    /// The server answered, but the answer was rejected (expired, bad signature, ...).
    Rejected(String),
    /// No usable answer (timeout, connection refused, ...).
    Failed(String),
    /// The attempt was still running when another one won (it was cancelled).
    Cancelled,
}

/// One request sent during a resolution (for `--trace`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hop {
    /// The handle in the request (`0.NA/<prefix>` for service lookups).
    pub handle: String,
    /// The server asked.
    pub server: SocketAddr,
    /// UDP or TCP.
    pub transport: TransportKind,
    /// 1 for the first attempt of the resolution, counting every attempt.
    pub attempt: u32,
    /// Time from sending to the outcome.
    pub rtt: Duration,
    /// What happened.
    pub outcome: HopOutcome,
}

impl std::fmt::Display for Hop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let t = match self.transport {
            TransportKind::Udp => "udp",
            TransportKind::Tcp => "tcp",
        };
        write!(
            f,
            "#{} {} {} {} {:.1} ms: ",
            self.attempt,
            self.handle,
            self.server,
            t,
            self.rtt.as_secs_f64() * 1000.0
        )?;
        match &self.outcome {
            HopOutcome::Response(code) => write!(f, "{code}"),
            HopOutcome::Rejected(why) => write!(f, "rejected: {why}"),
            HopOutcome::Failed(why) => write!(f, "failed: {why}"),
            HopOutcome::Cancelled => write!(f, "cancelled (another answer won)"),
        }
    }
}

/// The outcome of a successful resolution.
#[derive(Debug, Clone, PartialEq, Eq)]
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
    /// Every request sent for this resolution, in order of completion.
    pub hops: Vec<Hop>,
}

impl HandleRecord {
    /// The values whose type equals `type_name` (ASCII case-insensitive).
    pub fn values_of_type<'a>(
        &'a self,
        type_name: &'a str,
    ) -> impl Iterator<Item = &'a HandleValue> + 'a {
        self.values.iter().filter(move |v| v.is_type(type_name))
    }

    /// The data of every `URL` value, as text.
    pub fn urls(&self) -> Vec<String> {
        self.values_of_type("URL")
            .map(|v| String::from_utf8_lossy(&v.data).into_owned())
            .collect()
    }
}
