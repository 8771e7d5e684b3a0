//! Unit tests of the identifier layer: specification examples, rules, invalid inputs, properties.

mod handles;
mod invalid;
mod pasted;
mod props;
mod spec;
mod urns;
