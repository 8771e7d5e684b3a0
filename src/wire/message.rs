//! TEMPORARY stub of the wire contract (Message, Body, ...); reverted before merging `wire`.
#![allow(missing_docs, dead_code)]

use bytes::{BufMut, Bytes, BytesMut};

use super::{DecodeError, EncodeError, Envelope, Header, HandleValue, Limits, OpCode, OpFlags, ProtocolVersion, ResponseCode, ValueReference};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolutionRequest { pub handle: Bytes, pub indexes: Vec<u32>, pub types: Vec<Bytes> }
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolutionResponse { pub handle: Bytes, pub values: Vec<HandleValue> }
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorBody { pub message: Bytes, pub indexes: Option<Vec<u32>> }
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReferralBody { pub referral_handle: Bytes, pub values: Option<Vec<HandleValue>> }
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChallengeBody { pub nonce: Bytes }
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GetSiteInfoRequest { pub handle: Bytes }
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SiteInfoResponse { pub record: Bytes }
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DigestAlgorithm { Md5, Sha1, Sha256, LegacyMd5, Other(u8) }
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestDigest { pub algorithm: DigestAlgorithm, pub digest: Bytes }
impl RequestDigest {
    pub fn matches(&self, request_header_and_body: &[u8]) -> bool {
        request_digest(self.algorithm, request_header_and_body).map(|d| d == self.digest).unwrap_or(false)
    }
}
pub fn request_digest(algorithm: DigestAlgorithm, header_and_body: &[u8]) -> Option<Bytes> {
    use sha2::Digest;
    match algorithm {
        DigestAlgorithm::Sha256 => Some(Bytes::copy_from_slice(&sha2::Sha256::digest(header_and_body))),
        _ => None,
    }
}
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Body {
    ResolutionRequest(ResolutionRequest),
    ResolutionResponse(ResolutionResponse),
    Error(ErrorBody),
    Referral(ReferralBody),
    Challenge(ChallengeBody),
    GetSiteInfoRequest(GetSiteInfoRequest),
    SiteInfoResponse(SiteInfoResponse),
    Success,
    Unknown(Bytes),
}
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Credential {
    pub version: u8, pub reserved: u8, pub flags: u16, pub signer: ValueReference,
    pub credential_type: Bytes, pub digest_algorithm: Bytes, pub signature: Bytes, pub raw: Bytes,
}
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    pub envelope: Envelope,
    pub header: Header,
    pub request_digest: Option<RequestDigest>,
    pub body: Body,
    pub credential: Option<Credential>,
    pub signed_bytes: Bytes,
}
impl Message {
    pub fn decode(_buf: Bytes, _limits: &Limits) -> Result<Message, DecodeError> { unimplemented!() }
    pub fn encode(&self) -> Result<Bytes, EncodeError> {
        let mut out = BytesMut::new();
        self.envelope.encode(&mut out);
        let mut h = self.header;
        h.body_length = 0;
        h.encode(&mut out);
        out.put_u32(0);
        Ok(out.freeze())
    }
    pub fn request(body: Body, op_code: OpCode, request_id: u32, expiration: u32) -> Message {
        Message {
            envelope: Envelope::new(ProtocolVersion::V2_11, ProtocolVersion::V2_11, request_id),
            header: Header { op_code, response_code: ResponseCode::Reserved, flags: OpFlags::RESOLUTION_DEFAULT,
                site_info_serial: 0xFFFF, recursion_count: 0, reserved: 0, expiration, body_length: 0 },
            request_digest: None, body, credential: None, signed_bytes: Bytes::new(),
        }
    }
    pub fn resolution_request(handle: impl Into<Bytes>, indexes: Vec<u32>, types: Vec<Bytes>, request_id: u32, expiration: u32) -> Message {
        Self::request(Body::ResolutionRequest(ResolutionRequest { handle: handle.into(), indexes, types }), OpCode::Resolution, request_id, expiration)
    }
    pub fn response_to(request: &Message, code: ResponseCode, body: Body) -> Message {
        let mut m = request.clone();
        m.header.response_code = code;
        m.body = body;
        m
    }
    pub fn request_id(&self) -> u32 { self.envelope.request_id }
    pub fn is_response(&self) -> bool { self.header.response_code != ResponseCode::Reserved }
}
