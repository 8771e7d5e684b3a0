//! The sans-IO wire codec (RFC 3652 as today's servers speak it; see `PROTOCOL.md`).
//!
//! Bytes in, typed messages out, and back. Nothing here touches sockets, tokio or the clock.
//!
//! Layout:
//! - [`reader`] / [`writer`]: bounded, panic-free primitives;
//! - [`envelope`], [`header`], [`codes`]: the fixed-size parts of every message;
//! - [`body`], [`digest`], [`credential`], [`message`]: whole messages;
//! - [`fragments`]: UDP fragmentation and reassembly;
//! - [`value`]: handle values as they travel;
//! - [`limits`]: the caps applied to every length and count.

pub mod body;
pub mod codes;
pub mod credential;
pub mod digest;
pub mod envelope;
pub mod error;
pub mod fragments;
pub mod header;
pub mod limits;
pub mod message;
pub mod reader;
pub mod value;
pub mod writer;

pub use body::{
    Body, ChallengeBody, ErrorBody, GetSiteInfoRequest, ReferralBody, ResolutionRequest,
    ResolutionResponse, SiteInfoResponse,
};
pub use codes::{OpCode, OpFlags, ResponseCode};
pub use credential::Credential;
pub use digest::{request_digest, DigestAlgorithm, RequestDigest};
pub use envelope::{Envelope, ProtocolVersion, ENVELOPE_LEN};
pub use error::{DecodeError, DecodeErrorKind, EncodeError};
pub use fragments::{
    fragment, PartialMessage, Reassembler, ReassemblerConfig, MAX_DATAGRAM, MAX_FRAGMENT_PAYLOAD,
};
pub use header::{Header, HEADER_LEN};
pub use limits::Limits;
pub use message::Message;
pub use reader::Reader;
pub use value::{HandleValue, Permissions, Ttl, ValueReference};
