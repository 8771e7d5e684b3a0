//! Administration: [`Admin`](crate::Admin) (creating, changing, deleting and listing
//! handles, homing prefixes).

pub(crate) mod client;
