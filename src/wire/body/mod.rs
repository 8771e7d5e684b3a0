//! Message bodies (PROTOCOL.md §4-§5): one type per layout, and [`Body`] choosing among them.

mod admin_ops;
mod generic;
mod lists;
mod message_body;
mod resolution;

pub use generic::{ChallengeBody, ErrorBody, GetSiteInfoRequest, ReferralBody, SiteInfoResponse};
pub use message_body::Body;
pub use resolution::{ResolutionRequest, ResolutionResponse};
