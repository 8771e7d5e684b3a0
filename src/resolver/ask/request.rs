//! What a request sends and gets back: [`RequestSpec`] (the parts of a request that do
//! not depend on the site; one constructor per kind of request) and [`Answer`] (an answer
//! that passed the checks, with the one way to take its values).

use std::net::SocketAddr;

use bytes::Bytes;

use crate::ident::Handle;
use crate::transport::TransportKind;
use crate::wire::{Body, HandleValue, Message, OpCode, OpFlags, ProtocolVersion, ResponseCode};

use super::super::error::{ProtocolViolation, ResolveError};
use super::super::query::Asked;
use super::super::site::{text_of, Site, SiteKind};

/// Types asked for in a prefix-handle lookup.
const PREFIX_LOOKUP_TYPES: [&str; 4] = ["HS_SITE", "HS_SITE.6", "HS_SERV", "HS_NAMESPACE"];

/// A request, without the parts that depend on the site asked (version, serial).
#[derive(Debug, Clone)]
pub(crate) struct RequestSpec {
    /// The handle asked for.
    pub(crate) handle: Handle,
    /// Index filter.
    pub(crate) indexes: Vec<u32>,
    /// Type filter.
    pub(crate) types: Vec<Bytes>,
    /// Op flags.
    pub(crate) flags: OpFlags,
    /// RecursionCount header field: 1 for prefix lookups (like the reference client), one
    /// more for each referral followed.
    pub(crate) recursion_count: u8,
    /// What is asked: a query (resolution, site information) or administration.
    pub(crate) kind: RequestKind,
}

/// The kinds of request, and what they take from a server.
#[derive(Debug, Clone)]
pub(crate) enum RequestKind {
    /// A resolution request (of a handle, a prefix handle, a service handle): to query
    /// interfaces, over UDP too.
    Query,
    /// An administration request (its op code and body): to admin interfaces (TCP, HTTP; the
    /// sites' UDP interfaces are query-only), in a session with the server whenever the
    /// resolver has an identity.
    Admin(OpCode, Body),
}

impl RequestSpec {
    /// The resolution of `handle` a query asks for: REC | CA, and PO, CT, AT as asked, RD
    /// when the resolver checks request digests.
    pub(crate) fn resolution(handle: Handle, asked: &Asked, request_digest: bool) -> Self {
        let mut flags = OpFlags::REC | OpFlags::CA;
        flags.set(OpFlags::PO, asked.public_only);
        flags.set(OpFlags::CT, asked.certify);
        flags.set(OpFlags::AT, asked.authoritative);
        flags.set(OpFlags::RD, request_digest);
        Self {
            handle,
            indexes: asked.indexes.clone(),
            types: asked
                .types
                .iter()
                .map(|t| Bytes::from(t.clone().into_bytes()))
                .collect(),
            flags,
            recursion_count: 0,
            kind: RequestKind::Query,
        }
    }

    /// The lookup of a prefix handle `0.NA/<PREFIX>` at the root: its HS_SITE, HS_SITE.6,
    /// HS_SERV and HS_NAMESPACE values.
    pub(crate) fn prefix_lookup(prefix_handle: Handle, certify: bool) -> Self {
        Self {
            handle: prefix_handle,
            indexes: Vec::new(),
            types: PREFIX_LOOKUP_TYPES
                .iter()
                .map(|t| Bytes::from_static(t.as_bytes()))
                .collect(),
            flags: service_flags(certify),
            recursion_count: 1,
            kind: RequestKind::Query,
        }
    }

    /// The resolution of a service handle (or of the root handle) for its sites of `kind`.
    pub(crate) fn service_lookup(service_handle: Handle, kind: SiteKind, certify: bool) -> Self {
        Self {
            handle: service_handle,
            indexes: Vec::new(),
            types: kind.lookup_types(),
            flags: service_flags(certify),
            recursion_count: 0,
            kind: RequestKind::Query,
        }
    }

    /// An administration request about `handle`: AT (primary sites only), CT when
    /// certifying.
    pub(crate) fn administration(handle: Handle, op: OpCode, body: Body, certify: bool) -> Self {
        let mut flags = OpFlags::RESOLUTION_DEFAULT | OpFlags::AT;
        flags.set(OpFlags::CT, certify);
        Self {
            handle,
            indexes: Vec::new(),
            types: Vec::new(),
            flags,
            recursion_count: 0,
            kind: RequestKind::Admin(op, body),
        }
    }

    /// Whether it may go over UDP (queries) or not (administration).
    pub(crate) fn over_udp(&self) -> bool {
        matches!(self.kind, RequestKind::Query)
    }

    /// Whether it goes to a server's admin interfaces rather than its query interfaces.
    pub(crate) fn to_admin_interface(&self) -> bool {
        matches!(self.kind, RequestKind::Admin(..))
    }

    /// Whether, with an identity, it goes in a session with the server from the start
    /// (administration), rather than only once the server challenges it.
    pub(crate) fn session_first(&self) -> bool {
        matches!(self.kind, RequestKind::Admin(..))
    }

    /// True when CT is set.
    pub(crate) fn certify(&self) -> bool {
        self.flags.contains(OpFlags::CT)
    }

    /// True when AT is set.
    pub(crate) fn authoritative(&self) -> bool {
        self.flags.contains(OpFlags::AT)
    }

    /// The message for `site`: the site's version (≤ 2.11), suggesting 2.11, its serial,
    /// expiring at `expiration`. The request id is left at 0: the transport chooses it.
    pub(crate) fn to_message(&self, site: &Site, expiration: u32) -> Message {
        let mut m = match &self.kind {
            RequestKind::Admin(op, body) => Message::request(body.clone(), *op, 0, expiration),
            RequestKind::Query => Message::resolution_request(
                Bytes::copy_from_slice(self.handle.as_bytes()),
                self.indexes.clone(),
                self.types.clone(),
                0,
                expiration,
            ),
        };
        m.header.flags = self.flags;
        m.header.site_info_serial = site.request_serial;
        m.header.recursion_count = self.recursion_count;
        m.envelope.version = site.request_version();
        m.envelope.suggested = ProtocolVersion::V2_11;
        m
    }
}

/// The flags of a service request: REC | CA | PO, plus CT when certifying.
fn service_flags(certify: bool) -> OpFlags {
    let mut f = OpFlags::REC | OpFlags::CA | OpFlags::PO;
    f.set(OpFlags::CT, certify);
    f
}

/// An answer that passed the checks of the attempt that got it.
#[derive(Debug, Clone)]
pub(crate) struct Answer {
    /// The response.
    pub(crate) msg: Message,
    /// The server that sent it.
    pub(crate) server: SocketAddr,
    /// Over which transport.
    pub(crate) kind: TransportKind,
    /// The site it belongs to.
    pub(crate) site: Site,
    /// True when its signature was verified.
    pub(crate) certified: bool,
    /// The messages that followed it (continued answers: a handle list).
    pub(crate) continued: Vec<Message>,
}

impl Answer {
    /// The response code as the reference library reads it: a 303 in a message below
    /// version 2.5 is SERVER_BACKUP (PROTOCOL.md §3.1).
    pub(crate) fn code(&self) -> ResponseCode {
        self.msg.response_code()
    }

    /// The handle (as the server spelled it) and the values of a success answer, or the
    /// typed error the answer stands for (`asked` is the handle of the request, named by
    /// the error).
    pub(crate) fn into_values(
        self,
        asked: Handle,
    ) -> Result<(String, Vec<HandleValue>), ResolveError> {
        let code = self.code();
        match self.msg.body {
            Body::ResolutionResponse(r) if code == ResponseCode::Success => {
                let handle = if r.handle[..] == *asked.as_bytes() {
                    asked.into_string()
                } else {
                    text_of(&r.handle)
                };
                Ok((handle, r.values))
            }
            _ if code == ResponseCode::Success => Err(ResolveError::Protocol {
                sites_asked: 1,
                server: Some(self.server),
                violation: ProtocolViolation::UnexpectedBody { code },
            }),
            _ => Err(final_error(&self.msg, self.server, &asked)),
        }
    }
}

/// Response codes after which the next site is tried.
pub(crate) fn try_next_site(code: ResponseCode) -> bool {
    matches!(
        code,
        ResponseCode::ServerNotResponsible
            | ResponseCode::ServerBusy
            | ResponseCode::ServerBackup
            | ResponseCode::Error
    )
}

/// The typed error for a final answer that is not a success.
pub(crate) fn final_error(msg: &Message, server: SocketAddr, handle: &Handle) -> ResolveError {
    ResolveError::from_response(msg.response_code(), error_text(msg), Some(server), handle)
}

/// The error text of an error body (empty otherwise).
pub(crate) fn error_text(msg: &Message) -> String {
    match &msg.body {
        Body::Error(e) => text_of(&e.message),
        _ => String::new(),
    }
}
