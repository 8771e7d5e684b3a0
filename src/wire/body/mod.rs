//! Message bodies (PROTOCOL.md §4-§5): one type per layout, and [`Body`] choosing among them.

mod admin_ops;
mod auth;
mod generic;
mod lists;
mod message_body;
mod resolution;

pub use auth::{key_exchange, ChallengeAnswer, SessionSetupRequest, SessionSetupResponse};
pub(crate) use auth::{HS_PUBKEY, HS_SECKEY, SESSION_SETUP_TRAILER};
pub use generic::{ChallengeBody, ErrorBody, GetSiteInfoRequest, ReferralBody, SiteInfoResponse};
pub use message_body::Body;
pub use resolution::{ResolutionRequest, ResolutionResponse};
