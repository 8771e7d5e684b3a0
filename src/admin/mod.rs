//! Administration: [`Admin`](crate::Admin) (creating, changing, deleting and listing
//! handles, homing prefixes) and [`batch`], the reference's batch files run concurrently.

pub mod batch;
pub(crate) mod client;
