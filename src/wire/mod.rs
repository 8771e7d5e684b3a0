//! The sans-IO wire codec (RFC 3652 as today's servers speak it; see `PROTOCOL.md`).
//!
//! Bytes in, typed messages out, and back. Nothing here touches sockets, tokio or the clock.
//!
//! Every item is at `wire::` itself, but for [`json`], a namespace of its own. Layout (private
//! modules):
//! - `reader` (and the crate-private `writer`): bounded, panic-free primitives;
//! - `envelope`, `header`, `codes`: the fixed-size parts of every message;
//! - `body`, `digest`, `credential`, `message`: whole messages; `challenge`: the
//!   layouts of a challenge answer's MAC or signature;
//! - `encryption`: session-encrypted messages (envelope flag EC, AES-128-CBC); `session`:
//!   what an open session does to each message (MAC, encryption);
//! - `fragments`: UDP fragmentation and reassembly (the one reassembly rule: [`Collector`]);
//! - `value`: handle values as they travel;
//! - `limits`: the caps applied to every length and count;
//! - `typed`: typed views of value data, built on `site` (HS_SITE and the server hash of
//!   `hash`), `pubkey` (HS_PUBKEY), `admin` (HS_ADMIN, HS_VLIST) and `loc` (10320/loc);
//! - `signature`: the signed bytes of a response and DSA / RSA signature checks;
//! - `uri_list`: `text/uri-list` bodies (RFC 2483), the answers of RFC 2169 URN resolvers;
//! - [`json`]: the JSON shape of handle values and records (REST API answers,
//!   `bootstrap_handles`), both ways.
#![warn(unreachable_pub)]

mod admin;
pub(crate) mod body;
pub(crate) mod challenge;
mod codes;
pub(crate) mod credential;
mod digest;
mod encryption;
pub(crate) mod envelope;
mod error;
mod fragments;
mod hash;
mod header;
pub mod json;
mod limits;
mod loc;
mod message;
pub(crate) mod pubkey;
mod reader;
pub(crate) mod session;
pub(crate) mod signature;
mod site;
mod typed;
pub(crate) mod uri_list;
pub(crate) mod value;
mod writer;

pub use admin::{decode_vlist, encode_vlist, AdminPermissions, AdminRecord};
pub use body::{
    key_exchange, Body, ChallengeAnswer, ChallengeBody, ErrorBody, GetSiteInfoRequest,
    ReferralBody, ResolutionRequest, ResolutionResponse, SessionSetupRequest, SessionSetupResponse,
    SiteInfoResponse,
};
pub use challenge::{mac_code, PublicKeyProof, SecretKeyProof};
pub use codes::{OpCode, OpFlags, ResponseCode};
pub use credential::{Credential, HS_MAC, HS_SIGNED};
pub use digest::{request_digest, DigestAlgorithm, RequestDigest};
pub use encryption::{
    decrypt_payload, encrypt_payload, CryptError, SESSION_AES_KEY_LEN, SESSION_IV_LEN,
};
pub use envelope::{Envelope, ProtocolVersion, ENVELOPE_LEN};
pub use error::{DecodeError, DecodeErrorKind, EncodeError};
pub use fragments::{
    fragment, CollectError, Collected, Collector, PartialMessage, Reassembler, ReassemblerConfig,
    MAX_DATAGRAM, MAX_FRAGMENT_PAYLOAD,
};
pub use hash::{handle_hash, hash_part, server_index, HashOption};
pub use header::{Header, HEADER_LEN};
pub use limits::Limits;
pub use loc::{
    encode_url_path, encode_url_text, Chooser, ConsultedTtl, LocError, Location, LocationGather,
    LocationNeed, LocationRequest, LocationSet, Locations,
};
pub use message::Message;
pub use pubkey::{DsaKey, KeyError, PublicKey, RsaKey};
pub use reader::Reader;
pub use session::{
    carries_restricted_values, open_message, SessionKey, SESSION_KEY_LEN, SESSION_MAC_DIGEST,
};
pub use signature::{signed_data, verify_message, verify_signature, HashAlgorithm, SignatureError};
pub use site::{Interface, InterfaceType, Protocol, ServerInfo, SiteInfo};
pub use typed::{TypedError, TypedValue, ValueFormat};
pub use uri_list::{decode_uri_list, UriListError, MAX_URI_LIST_BYTES, URI_LIST_MEDIA_TYPE};
pub use value::{
    decode_values, encode_values, looks_like_binary, HandleValue, Permissions, Ttl, ValueReference,
};
