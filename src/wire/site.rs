//! TEMPORARY stub of the values contract (SiteInfo, PublicKey, ...); reverted before merging `values`.
#![allow(missing_docs, dead_code)]

use std::net::{IpAddr, SocketAddr};

use bytes::Bytes;

use super::{DecodeError, EncodeError, Limits, Message, ProtocolVersion};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HashOption { ByPrefix, BySuffix, ByHandle, Other(u8) }
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InterfaceType { OutOfService, Admin, Query, AdminAndQuery, Other(u8) }
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol { Udp, Tcp, Http, Https, Other(u8) }
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interface { pub kind: InterfaceType, pub protocol: Protocol, pub port: u32 }
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerInfo { pub server_id: u32, pub address: IpAddr, pub raw_address: [u8; 16], pub public_key: Bytes, pub interfaces: Vec<Interface> }
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SiteInfo {
    pub data_format_version: u16, pub protocol_version: ProtocolVersion, pub serial: u16,
    pub primary: bool, pub multi_primary: bool, pub primary_mask: u8, pub hash_option: HashOption, pub hash_filter: Bytes,
    pub attributes: Vec<(Bytes, Bytes)>, pub servers: Vec<ServerInfo>,
}
impl SiteInfo {
    pub fn decode(_data: &Bytes, _limits: &Limits) -> Result<SiteInfo, DecodeError> { unimplemented!() }
    pub fn encode(&self) -> Result<Bytes, EncodeError> { unimplemented!() }
    pub fn server_for(&self, handle: &[u8]) -> Option<&ServerInfo> { self.server_index_for(handle).and_then(|i| self.servers.get(i)) }
    pub fn server_index_for(&self, handle: &[u8]) -> Option<usize> {
        use md5::Digest;
        if self.servers.is_empty() { return None; }
        let slash = handle.iter().position(|b| *b == b'/');
        let part: &[u8] = match (self.hash_option, slash) {
            (HashOption::ByPrefix, Some(i)) => &handle[..i],
            (HashOption::ByPrefix, None) => b"0.NA",
            (HashOption::BySuffix, Some(i)) => &handle[i + 1..],
            _ => handle,
        };
        let up: Vec<u8> = part.iter().map(|b| b.to_ascii_uppercase()).collect();
        let d = md5::Md5::digest(&up);
        let x = i32::from_be_bytes([d[12], d[13], d[14], d[15]]);
        Some((x.unsigned_abs() as usize) % self.servers.len())
    }
}
impl ServerInfo {
    pub fn public_key(&self) -> Result<Option<PublicKey>, DecodeError> {
        if self.public_key.is_empty() { Ok(None) } else { Ok(Some(PublicKey::Other { raw: self.public_key.clone() })) }
    }
    pub fn socket_addr(&self, protocol: Protocol, admin: bool) -> Option<SocketAddr> {
        self.interfaces.iter().find(|i| i.protocol == protocol && match i.kind {
            InterfaceType::AdminAndQuery => true,
            InterfaceType::Query => !admin,
            InterfaceType::Admin => admin,
            _ => false,
        }).and_then(|i| u16::try_from(i.port).ok()).map(|p| SocketAddr::new(self.address, p))
    }
}
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PublicKey { Other { raw: Bytes } }
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SignatureError { #[error("stub: cannot verify")] Unsupported }
pub fn verify_message(msg: &Message, key: &PublicKey) -> Result<(), SignatureError> {
    // Stub rule for mock tests: the credential's signature must equal the key bytes.
    match (key, &msg.credential) {
        (PublicKey::Other { raw }, Some(c)) if c.signature == *raw => Ok(()),
        _ => Err(SignatureError::Unsupported),
    }
}
