//! The 20-byte message envelope (RFC 3652 §2.2.1, PROTOCOL.md §2.1).

use bytes::BufMut;

use super::error::DecodeError;
use super::reader::Reader;

/// Size of the envelope in bytes.
pub const ENVELOPE_LEN: usize = 20;

/// A protocol version `major.minor`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ProtocolVersion {
    /// Major version (2 today; 5 is an old alias of 2.0).
    pub major: u8,
    /// Minor version.
    pub minor: u8,
}

impl ProtocolVersion {
    /// Builds a version.
    pub const fn new(major: u8, minor: u8) -> Self {
        Self { major, minor }
    }
    /// 2.1, the RFC's version.
    pub const V2_1: Self = Self::new(2, 1);
    /// 2.3, what the reference client sends before it knows the server's site.
    pub const V2_3: Self = Self::new(2, 3);
    /// 2.10, what today's GHR sites advertise.
    pub const V2_10: Self = Self::new(2, 10);
    /// 2.11, the newest version (the reference library's own).
    pub const V2_11: Self = Self::new(2, 11);

    /// True when this version is at least `major.minor`, treating major 5 as 2.0.
    pub const fn at_least(self, major: u8, minor: u8) -> bool {
        let (a, b) = if self.major == 5 {
            (2, 0)
        } else {
            (self.major, self.minor)
        };
        a > major || (a == major && b >= minor)
    }
}

impl std::fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// Envelope flag bits in byte 2.
const CP: u8 = 0x80;
const EC: u8 = 0x40;
const TC: u8 = 0x20;
/// Mask of the suggested-major bits in byte 2 (DO-IRP reads 5 bits; Java writes 2).
const SUGGESTED_MAJOR_MASK: u8 = 0x1F;

/// Sets the TC flag in an encoded envelope ‖ message, in place (what the reference client
/// puts on every fragment of a multi-datagram request). No signature, MAC or encryption
/// covers the envelope's flags, so a sealed message stays valid. Fewer than 3 bytes: nothing
/// to set.
pub(crate) fn mark_truncated(encoded: &mut [u8]) {
    if let Some(flags) = encoded.get_mut(2) {
        *flags |= TC;
    }
}

/// The message envelope: versions, flags, ids and the message length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Envelope {
    /// Protocol version of this message (bytes 0-1).
    pub version: ProtocolVersion,
    /// Highest version the sender supports (bytes 2-3). On decode, a suggested major of 0
    /// means "same as `version`" and is reported as `version`.
    pub suggested: ProtocolVersion,
    /// Byte 2 and 3 exactly as received (kept for signature checks and exact re-encoding).
    pub raw_flags: [u8; 2],
    /// CP: compressed.
    pub compressed: bool,
    /// EC: encrypted.
    pub encrypted: bool,
    /// TC: truncated (do not rely on it when receiving).
    pub truncated: bool,
    /// Session id, 0 without a session.
    pub session_id: u32,
    /// Request id chosen by the client and echoed by the server.
    pub request_id: u32,
    /// Fragment number of a multi-datagram message, 0 otherwise.
    pub sequence_number: u32,
    /// Length of the whole message (header + body + credential), envelope excluded.
    pub message_length: u32,
}

impl Envelope {
    /// An envelope for an unfragmented message with the given versions and ids.
    pub fn new(version: ProtocolVersion, suggested: ProtocolVersion, request_id: u32) -> Self {
        Self {
            version,
            suggested,
            raw_flags: [suggested.major & SUGGESTED_MAJOR_MASK, suggested.minor],
            compressed: false,
            encrypted: false,
            truncated: false,
            session_id: 0,
            request_id,
            sequence_number: 0,
            message_length: 0,
        }
    }

    /// Decodes the 20 envelope bytes.
    pub fn decode(r: &mut Reader) -> Result<Self, DecodeError> {
        let major = r.u8("envelope.major_version")?;
        let minor = r.u8("envelope.minor_version")?;
        let b2 = r.u8("envelope.flags")?;
        let b3 = r.u8("envelope.suggested_minor")?;
        let session_id = r.u32("envelope.session_id")?;
        let request_id = r.u32("envelope.request_id")?;
        let sequence_number = r.u32("envelope.sequence_number")?;
        let message_length = r.u32("envelope.message_length")?;
        let version = ProtocolVersion::new(major, minor);
        let sug_major = b2 & SUGGESTED_MAJOR_MASK;
        let suggested = if sug_major == 0 {
            version
        } else {
            ProtocolVersion::new(sug_major, b3)
        };
        Ok(Self {
            version,
            suggested,
            raw_flags: [b2, b3],
            compressed: b2 & CP != 0,
            encrypted: b2 & EC != 0,
            truncated: b2 & TC != 0,
            session_id,
            request_id,
            sequence_number,
            message_length,
        })
    }

    /// Bytes 2 and 3 as they go on the wire, built from the flags and the suggested version.
    /// A suggested major too large for its 5 bits that is the message version's is written
    /// as 0 ("same as the message version"), so that it decodes to itself.
    pub fn flag_bytes(&self) -> [u8; 2] {
        let major = self.suggested.major;
        let mut b2 = if major > SUGGESTED_MAJOR_MASK && self.suggested == self.version {
            0
        } else {
            major & SUGGESTED_MAJOR_MASK
        };
        if self.compressed {
            b2 |= CP;
        }
        if self.encrypted {
            b2 |= EC;
        }
        if self.truncated {
            b2 |= TC;
        }
        [b2, self.suggested.minor]
    }

    /// Bytes 2 and 3 to send: `raw_flags` when they still describe this envelope's flags
    /// and suggested version (so a received envelope re-encodes exactly, including the
    /// "suggested major 0" form), else [`Envelope::flag_bytes`].
    fn wire_flag_bytes(&self) -> [u8; 2] {
        let [b2, b3] = self.raw_flags;
        let sug_major = b2 & SUGGESTED_MAJOR_MASK;
        let raw_suggested = if sug_major == 0 {
            self.version
        } else {
            ProtocolVersion::new(sug_major, b3)
        };
        let consistent = raw_suggested == self.suggested
            && (b2 & CP != 0) == self.compressed
            && (b2 & EC != 0) == self.encrypted
            && (b2 & TC != 0) == self.truncated;
        if consistent {
            self.raw_flags
        } else {
            self.flag_bytes()
        }
    }

    /// Appends the 20 envelope bytes.
    pub fn encode<B: BufMut>(&self, out: &mut B) {
        out.put_u8(self.version.major);
        out.put_u8(self.version.minor);
        out.put_slice(&self.wire_flag_bytes());
        out.put_u32(self.session_id);
        out.put_u32(self.request_id);
        out.put_u32(self.sequence_number);
        out.put_u32(self.message_length);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::{Bytes, BytesMut};

    #[test]
    fn suggested_major_zero_means_message_version() {
        let raw = [
            2u8, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0, 52,
        ];
        let e = Envelope::decode(&mut Reader::new(Bytes::copy_from_slice(&raw))).unwrap();
        assert_eq!(e.suggested, ProtocolVersion::V2_1);
        assert_eq!(e.request_id, 7);
    }

    #[test]
    fn round_trips_the_reference_envelope() {
        let raw = [
            2u8, 11, 2, 11, 0, 0, 0, 0, 0x66, 0x5a, 0x1d, 0x48, 0, 0, 0, 0, 0, 0, 0, 54,
        ];
        let e = Envelope::decode(&mut Reader::new(Bytes::copy_from_slice(&raw))).unwrap();
        assert_eq!(e.version, ProtocolVersion::V2_11);
        assert_eq!(e.suggested, ProtocolVersion::V2_11);
        let mut out = BytesMut::new();
        e.encode(&mut out);
        assert_eq!(&out[..], &raw[..]);
    }

    #[test]
    fn suggested_major_zero_re_encodes_exactly() {
        // Envelope of the raw_udp_envelope_version_5_0 capture: version 5.0, bytes 2-3 zero.
        let raw = [
            5u8, 0, 0, 0, 0, 0, 0, 0, 0x55, 0x55, 0x55, 0x55, 0, 0, 0, 0, 0, 0, 0, 0x36,
        ];
        let mut e = Envelope::decode(&mut Reader::new(Bytes::copy_from_slice(&raw))).unwrap();
        let mut out = BytesMut::new();
        e.encode(&mut out);
        assert_eq!(&out[..], &raw[..]);
        // Changing a field drops the stale raw bytes.
        e.suggested = ProtocolVersion::V2_11;
        let mut out = BytesMut::new();
        e.encode(&mut out);
        assert_eq!(&out[2..4], &[2, 11]);
    }

    #[test]
    fn a_suggested_version_too_large_for_its_bits_survives_a_flag_change() {
        // Version 45.59 with bytes 2-3 `00 ff`: suggested major 0, so the suggested version
        // is the message's, 45.59, which 5 bits cannot hold. Setting EC (as sealing a
        // message in a session does) must not turn it into 13.59 (45 & 0x1F): the session
        // MAC covers the suggested version.
        let raw = [
            0x2d, 0x3b, 0x00, 0xff, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0x51,
        ];
        let mut e = Envelope::decode(&mut Reader::new(Bytes::copy_from_slice(&raw))).unwrap();
        assert_eq!(e.suggested, ProtocolVersion::new(45, 59));
        e.encrypted = true;
        let mut out = BytesMut::new();
        e.encode(&mut out);
        assert_eq!(&out[2..4], &[0x40, 59]);
        let back = Envelope::decode(&mut Reader::new(out.freeze())).unwrap();
        assert!(back.encrypted);
        assert_eq!(back.suggested, e.suggested);
        // Representable versions are written as before.
        let mut v2 = Envelope::new(ProtocolVersion::V2_11, ProtocolVersion::V2_11, 1);
        v2.encrypted = true;
        assert_eq!(v2.flag_bytes(), [0x42, 11]);
    }
}
