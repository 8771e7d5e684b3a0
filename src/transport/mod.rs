//! Transports: tokio UDP and TCP over the wire codec.
//!
//! Layout (each module uses only those listed after it):
//! - [`addr`]: addresses as people write them: `HOST[:PORT]` ([`addr::host_port`]) and
//!   `http(s)://` base URLs ([`addr::BaseUrl`]), each checked in one place;
//! - `net`: [`NetTransport`], the real transport, and its builder: one UDP demultiplexer per
//!   address family, bound lazily, and TCP;
//! - `udp`: the shared socket and the retransmission loop; `udp/receive` the receive task
//!   that demultiplexes answers by request id into `udp/table`, the pending requests;
//!   multi-datagram answers are put together by [`crate::wire::Collector`], the one
//!   reassembly rule, under a per-socket memory budget;
//! - `udp_loss`: early loss detection (a loss timeout per server, learned from its RTTs), sans-IO;
//! - `udp_sys`: what the UDP socket asks of the operating system beyond tokio: on Linux the
//!   error queue, by which a request to a closed UDP port fails at once;
//! - `tcp`: one framed connection per request;
//! - `exchange`: the [`Exchange`] trait (what the resolver talks to), [`ExchangeOptions`],
//!   [`TransportKind`] and [`Exchanged`], and the plain data of an HTTP GET ([`HttpGet`],
//!   [`Fetched`]);
//! - `http`: the native protocol over HTTP(S) ([`HttpTarget`]) and HTTP GETs (feature
//!   `http`);
//! - `request_id`: the request ids, minted here and only here, and put into the encoded
//!   request;
//! - `codec`: [`HandleCodec`], the tokio-util codec of TCP frames over the wire codec;
//! - `error`: the error type, [`TransportError`].

pub mod addr;
mod codec;
mod continued;
mod error;
mod exchange;
pub(crate) mod http;
mod net;
pub(crate) mod request_id;
mod tcp;
mod udp;
mod udp_loss;
mod udp_sys;

pub use codec::{CodecError, HandleCodec};
pub use continued::MAX_CONTINUED;
pub use error::{HttpError, TransportError};
pub use exchange::{
    media_type, Exchange, ExchangeOptions, Exchanged, Fetched, HttpGet, HttpMethod, HttpSend,
    TransportKind,
};
#[cfg(feature = "http")]
#[doc(hidden)]
pub use http::decode_native_answer;
pub use http::{HttpTarget, HDL_MIME_TYPE};
pub use net::{
    NetTransport, NetTransportBuilder, DEFAULT_MAX_IN_FLIGHT, DEFAULT_MAX_REASSEMBLY_BYTES,
};
pub use udp::MAX_UDP_REQUEST_FRAGMENTS;
pub use udp_loss::LOSS_TIMEOUT_FLOOR;
