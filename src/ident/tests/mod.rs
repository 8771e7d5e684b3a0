//! Unit tests of the identifier layer.
