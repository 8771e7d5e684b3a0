//! Administration: [`Admin`](crate::Admin) (creating, changing, deleting and listing
//! handles, homing prefixes), [`batch`], the reference's batch files run concurrently, and
//! [`RestAdmin`](crate::RestAdmin), a handle's values written through a server's REST API with Basic credentials
//! (what pyhandle does, for servers whose HTTP interface takes no native requests).

pub mod batch;
pub(crate) mod client;
pub(crate) mod rest;
