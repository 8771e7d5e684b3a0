//! Conformance of the wire codec with the reference captures (`fixtures/reference/`) and
//! with PROTOCOL.md: field-by-field decode, byte-exact re-encode, the malformed (`raw_*`)
//! scenarios, hand-built packets the captures lack, truncation and never-panics properties.

mod bodies;
mod compare;
mod decode;
mod encode;
mod handbuilt;
mod properties;
mod raw;
mod streams;
mod worked_example;
