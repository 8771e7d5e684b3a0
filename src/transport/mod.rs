//! Transports: tokio UDP and TCP over the wire codec.
//!
//! Layout:
//! - [`exchange`]: the [`Exchange`] trait (what the resolver talks to), [`ExchangeOptions`],
//!   [`TransportKind`], and [`NetTransport`], the real transport;
//! - `udp`: the shared socket, the request-id demultiplexer and the retransmission loop;
//! - `tcp`: one framed connection per request;
//! - [`codec`]: tokio-util codecs over the wire codec (TCP frames, UDP datagrams);
//! - [`error`]: the error type, [`TransportError`].

pub mod codec;
pub mod error;
pub mod exchange;
mod tcp;
mod udp;

pub use codec::{CodecError, HandleCodec};
pub use error::TransportError;
pub use exchange::{
    encode_with_request_id, random_request_id, Exchange, ExchangeOptions, NetTransport,
    NetTransportBuilder, TransportKind, DEFAULT_MAX_IN_FLIGHT, DEFAULT_MAX_REASSEMBLY_BYTES,
    MAX_UDP_REQUEST_FRAGMENTS,
};
