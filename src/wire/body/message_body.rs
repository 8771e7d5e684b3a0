//! The [`Body`] enum and the choice of body layout by (op code, response code, version).
//!
//! Rules (PROTOCOL.md §2.4, §3.1, §4-§5):
//! - a message is a request when its response code is 0;
//! - a response with RD set starts with a request digest (unknown digest algorithm: the whole
//!   body is kept as [`Body::Unknown`], since its length cannot be known);
//! - responses: 1 → op-specific success body, 302 → referral, 303 → referral from version
//!   2.5 on and an error body before, 402 → challenge, anything else → error body;
//! - requests and successes of list handles (105, 106), the challenge answer (200) and
//!   session setup (400) have their own layouts (`auth.rs`);
//! - an error body shorter than 4 bytes is an empty message (as the reference library reads
//!   it; re-encoded with the 4-byte length);
//! - a known layout that leaves bytes unread, and any op this library has no layout for, is
//!   kept byte for byte as [`Body::Unknown`] (so it re-encodes exactly). Malformed bytes
//!   inside a known layout are a [`DecodeError`].

use bytes::{BufMut, Bytes, BytesMut};

use super::admin_ops::{
    decode_handle, decode_handle_indexes, decode_handle_list, decode_handle_values, encode_handle,
    encode_handle_indexes, encode_handle_list, encode_handle_values,
};
use super::auth::{ChallengeAnswer, SessionSetupRequest, SessionSetupResponse};
use super::generic::{
    ChallengeBody, ErrorBody, GetSiteInfoRequest, ReferralBody, SiteInfoResponse,
};
use super::resolution::{ResolutionRequest, ResolutionResponse};
use crate::wire::codes::{OpCode, OpFlags, ResponseCode};
use crate::wire::digest::{DigestAlgorithm, RequestDigest};
use crate::wire::envelope::ProtocolVersion;
use crate::wire::error::{DecodeError, EncodeError};
use crate::wire::header::Header;
use crate::wire::limits::Limits;
use crate::wire::reader::Reader;
use crate::wire::value::HandleValue;

/// A message body, by layout. Non-exhaustive: a layout gets its own variant when the
/// library learns an operation (HOME/UNHOME were added so); until then its bytes are
/// [`Body::Unknown`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Body {
    /// OC_RESOLUTION request.
    ResolutionRequest(ResolutionRequest),
    /// OC_RESOLUTION success.
    ResolutionResponse(ResolutionResponse),
    /// Any error response.
    Error(ErrorBody),
    /// RC 302 / RC 303 (≥ 2.5).
    Referral(ReferralBody),
    /// RC 402.
    Challenge(ChallengeBody),
    /// OC_GET_SITE_INFO request.
    GetSiteInfoRequest(GetSiteInfoRequest),
    /// OC_GET_SITE_INFO success.
    SiteInfoResponse(SiteInfoResponse),
    /// OC_CREATE_HANDLE request.
    CreateHandleRequest {
        /// Handle to create.
        handle: Bytes,
        /// Its initial values.
        values: Vec<HandleValue>,
    },
    /// OC_CREATE_HANDLE success carrying the created handle (§14.16).
    CreateHandleResponse {
        /// The created handle.
        handle: Bytes,
    },
    /// OC_DELETE_HANDLE request.
    DeleteHandleRequest {
        /// Handle to delete.
        handle: Bytes,
    },
    /// OC_ADD_VALUE request.
    AddValueRequest {
        /// Target handle.
        handle: Bytes,
        /// Values to add.
        values: Vec<HandleValue>,
    },
    /// OC_MODIFY_VALUE request.
    ModifyValueRequest {
        /// Target handle.
        handle: Bytes,
        /// Replacement values (matched by index).
        values: Vec<HandleValue>,
    },
    /// OC_REMOVE_VALUE request.
    RemoveValueRequest {
        /// Target handle.
        handle: Bytes,
        /// Indexes to remove.
        indexes: Vec<u32>,
    },
    /// OC_LIST_HANDLES (and OC_LIST_NA) request: the prefix handle (`0.NA/…`).
    ListHandlesRequest {
        /// The prefix handle whose handles (or derived prefixes) are listed.
        handle: Bytes,
    },
    /// OC_HOME_NA (300) and OC_UNHOME_NA (301) request: the prefix handle (`0.NA/…`) a
    /// server starts or stops serving (the op code in the header says which).
    HomePrefixRequest {
        /// The prefix handle.
        handle: Bytes,
    },
    /// OC_LIST_HANDLES (and OC_LIST_NA) success: one message of the list. All but the last
    /// message of a list carry the CN (continuous) flag.
    ListHandlesResponse {
        /// The handles in this message (at most 50 from the reference server).
        handles: Vec<Bytes>,
    },
    /// OC_RESPONSE_TO_CHALLENGE request: the answer to a 402.
    ChallengeAnswer(Box<ChallengeAnswer>),
    /// OC_SESSION_SETUP request.
    SessionSetupRequest(Box<SessionSetupRequest>),
    /// OC_SESSION_SETUP success.
    SessionSetupResponse(SessionSetupResponse),
    /// Generic success with nothing after the optional digest.
    Success,
    /// Anything else, kept byte for byte (after the digest, if one was read).
    Unknown(Bytes),
}

impl Body {
    /// Decodes a body of `header.body_length` bytes. `base` is the offset of the body in the
    /// caller's buffer (for error offsets). Returns the request digest (responses with RD)
    /// and the body.
    pub fn decode(
        header: &Header,
        version: ProtocolVersion,
        body: Bytes,
        base: usize,
        limits: &Limits,
    ) -> Result<(Option<RequestDigest>, Body), DecodeError> {
        let mut r = Reader::with_base(body, base);
        let is_request = header.response_code == ResponseCode::Reserved;
        let mut digest = None;
        if !is_request && header.flags.contains(OpFlags::RD) {
            let alg = r.clone().u8("digest.algorithm")?;
            if let DigestAlgorithm::Other(_) = DigestAlgorithm::from_code(alg) {
                return Ok((None, Body::Unknown(r.rest())));
            }
            digest = Some(RequestDigest::decode(&mut r, limits)?);
        }
        let start = r.clone();
        let parsed = if is_request {
            decode_request(header.op_code, &mut r, limits)?
        } else {
            decode_response(
                header.op_code,
                header.response_code,
                version,
                &mut r,
                limits,
            )?
        };
        let body = match parsed {
            Some(b) if r.is_empty() => b,
            _ => Body::Unknown(start.buffer().slice(start.position()..)),
        };
        Ok((digest, body))
    }

    /// Appends the body (without any digest prefix).
    pub fn encode(&self, out: &mut BytesMut) -> Result<(), EncodeError> {
        match self {
            Body::ResolutionRequest(b) => b.encode(out),
            Body::ResolutionResponse(b) => b.encode(out),
            Body::Error(b) => b.encode(out),
            Body::Referral(b) => b.encode(out),
            Body::Challenge(b) => b.encode(out),
            Body::GetSiteInfoRequest(b) => b.encode(out),
            Body::SiteInfoResponse(b) => {
                b.encode(out);
                Ok(())
            }
            Body::CreateHandleRequest { handle, values }
            | Body::AddValueRequest { handle, values }
            | Body::ModifyValueRequest { handle, values } => {
                encode_handle_values(out, handle, values)
            }
            Body::CreateHandleResponse { handle } | Body::DeleteHandleRequest { handle } => {
                encode_handle(out, handle)
            }
            Body::RemoveValueRequest { handle, indexes } => {
                encode_handle_indexes(out, handle, indexes)
            }
            Body::ListHandlesRequest { handle } | Body::HomePrefixRequest { handle } => {
                encode_handle(out, handle)
            }
            Body::ListHandlesResponse { handles } => encode_handle_list(out, handles),
            Body::ChallengeAnswer(b) => b.encode(out),
            Body::SessionSetupRequest(b) => b.encode(out),
            Body::SessionSetupResponse(b) => b.encode(out),
            Body::Success => Ok(()),
            Body::Unknown(b) => {
                out.put_slice(b);
                Ok(())
            }
        }
    }

    /// The values carried by the body (resolution response, referral, admin requests);
    /// empty for the others.
    pub fn values(&self) -> &[HandleValue] {
        match self {
            Body::ResolutionResponse(b) => &b.values,
            Body::Referral(ReferralBody {
                values: Some(v), ..
            }) => v,
            Body::CreateHandleRequest { values, .. }
            | Body::AddValueRequest { values, .. }
            | Body::ModifyValueRequest { values, .. } => values,
            _ => &[],
        }
    }
}

fn decode_request(
    op: OpCode,
    r: &mut Reader,
    limits: &Limits,
) -> Result<Option<Body>, DecodeError> {
    Ok(Some(match op {
        OpCode::Resolution => Body::ResolutionRequest(ResolutionRequest::decode(r, limits)?),
        OpCode::GetSiteInfo => Body::GetSiteInfoRequest(GetSiteInfoRequest::decode(r, limits)?),
        OpCode::CreateHandle => {
            let (handle, values) = decode_handle_values(r, limits)?;
            Body::CreateHandleRequest { handle, values }
        }
        OpCode::AddValue => {
            let (handle, values) = decode_handle_values(r, limits)?;
            Body::AddValueRequest { handle, values }
        }
        OpCode::ModifyValue => {
            let (handle, values) = decode_handle_values(r, limits)?;
            Body::ModifyValueRequest { handle, values }
        }
        OpCode::DeleteHandle => Body::DeleteHandleRequest {
            handle: decode_handle(r, limits)?,
        },
        OpCode::RemoveValue => {
            let (handle, indexes) = decode_handle_indexes(r, limits)?;
            Body::RemoveValueRequest { handle, indexes }
        }
        OpCode::ListHandles | OpCode::ListNa => Body::ListHandlesRequest {
            handle: decode_handle(r, limits)?,
        },
        OpCode::HomeNa | OpCode::UnhomeNa => Body::HomePrefixRequest {
            handle: decode_handle(r, limits)?,
        },
        OpCode::ChallengeResponse => {
            Body::ChallengeAnswer(Box::new(ChallengeAnswer::decode(r, limits)?))
        }
        OpCode::SessionSetup => {
            Body::SessionSetupRequest(Box::new(SessionSetupRequest::decode(r, limits)?))
        }
        _ => return Ok(None),
    }))
}

fn decode_response(
    op: OpCode,
    rc: ResponseCode,
    version: ProtocolVersion,
    r: &mut Reader,
    limits: &Limits,
) -> Result<Option<Body>, DecodeError> {
    Ok(Some(match rc {
        ResponseCode::Success => match op {
            OpCode::Resolution => Body::ResolutionResponse(ResolutionResponse::decode(r, limits)?),
            OpCode::GetSiteInfo => Body::SiteInfoResponse(SiteInfoResponse::decode(r)),
            OpCode::ListHandles | OpCode::ListNa => Body::ListHandlesResponse {
                handles: decode_handle_list(r, limits)?,
            },
            OpCode::SessionSetup => {
                Body::SessionSetupResponse(SessionSetupResponse::decode(r, limits)?)
            }
            _ if r.is_empty() => Body::Success,
            OpCode::CreateHandle => Body::CreateHandleResponse {
                handle: decode_handle(r, limits)?,
            },
            _ => return Ok(None),
        },
        ResponseCode::ServiceReferral => Body::Referral(ReferralBody::decode(r, limits)?),
        // Before 2.5 the reference library reads 303 as an error body (SERVER_BACKUP).
        ResponseCode::PrefixReferral if version.at_least(2, 5) => {
            Body::Referral(ReferralBody::decode(r, limits)?)
        }
        ResponseCode::AuthenticationNeeded => {
            Body::Challenge(ChallengeBody::decode(r, version, limits)?)
        }
        _ => Body::Error(ErrorBody::decode(r, limits)?),
    }))
}
