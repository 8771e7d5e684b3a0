//! Transports: tokio UDP and TCP over the wire codec.

pub mod codec;
