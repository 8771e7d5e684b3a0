//! Helpers shared by the proto tests.

pub mod captures;
pub mod examples;
