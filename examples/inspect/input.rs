//! Reads the FILE arguments of `inspect` and cuts them into decoded messages.
//!
//! Each file is classified by its content (see [`DETECTION_RULES`]): a UDP fragment (part of
//! a message longer than one datagram), or a run of whole messages back to back (a single
//! datagram, a single message, or a TCP stream). Fragments are grouped by request id and
//! message length and put together with the crate's [`PartialMessage`], in any order, with
//! duplicates ignored; streams are cut with the crate's TCP codec.

use std::path::Path;

use bytes::{Bytes, BytesMut};
use handle_resolver::transport::{CodecError, HandleCodec};
use handle_resolver::wire::{
    DecodeError, Envelope, Limits, Message, PartialMessage, Reader, ENVELOPE_LEN,
    MAX_FRAGMENT_PAYLOAD,
};
use thiserror::Error;
use tokio_util::codec::Decoder;

/// How files are told apart; printed by `--help`.
pub const DETECTION_RULES: &str = "\
How FILEs are read (by content, not by name):
  - a file holding only hex digits and white space is read as hex text; `-` reads stdin;
  - a file of at most 512 bytes whose MessageLength is above 492 (a message needing several
    datagrams) and within the 256 KiB limit, and whose envelope has a sequence number > 0
    or a MessageLength + 20 above the file's length, is one UDP fragment: fragments are
    grouped by request id and MessageLength and reassembled in any order (duplicates
    ignored); every fragment of the message must be given;
  - any other file holds one or more whole messages back to back (one datagram, one
    message, or a TCP stream), each cut by its envelope's MessageLength; bytes left over
    after the last whole message are an error.
Messages are printed in the order of the file that starts them.";

/// A message and where it came from.
#[derive(Debug, Clone)]
pub struct Decoded {
    /// The file(s) and position: `a.bin`, `a.bin @ 349` (2nd message of a stream), or
    /// `f1.bin,f2.bin,...` (a reassembled UDP message, fragments in sequence order).
    pub source: String,
    /// Size of envelope + message in bytes.
    pub size: usize,
    /// The message.
    pub message: Message,
}

/// Why a file or message could not be read.
#[derive(Debug, Error)]
pub enum InspectError {
    /// The file could not be read.
    #[error("{file}: cannot read: {source}")]
    Io {
        /// The file.
        file: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file holds no bytes.
    #[error("{file}: empty file")]
    Empty {
        /// The file.
        file: String,
    },
    /// A message failed to decode.
    #[error("{file}: message at byte {at}: {error}")]
    Decode {
        /// The file (or the fragments' files).
        file: String,
        /// Offset of the message's envelope in the file.
        at: usize,
        /// The decoder's reason (its offset counts from the envelope).
        error: DecodeError,
    },
    /// Bytes after the last whole message that are not a whole message themselves.
    #[error(
        "{file}: {count} bytes at byte {at} are not a whole message (the envelope needs 20 \
         bytes and announces {announced} more); a truncated message, or a fragment of a UDP \
         message"
    )]
    Trailing {
        /// The file.
        file: String,
        /// Where the leftover bytes start.
        at: usize,
        /// How many bytes are left.
        count: usize,
        /// What their envelope's MessageLength says (0 when there is no whole envelope).
        announced: u32,
    },
    /// A UDP message whose fragments were not all given.
    #[error(
        "request id {request_id}: UDP message of {length} bytes needs {needed} fragments, \
         got sequence numbers {got:?} (from {files})"
    )]
    Incomplete {
        /// The request id.
        request_id: u32,
        /// The total MessageLength.
        length: u32,
        /// Fragments the message needs.
        needed: usize,
        /// Sequence numbers received.
        got: Vec<u32>,
        /// The files given.
        files: String,
    },
    /// A fragment that does not fit the others of its message.
    #[error("{file}: bad UDP fragment: {error}")]
    Fragment {
        /// The file.
        file: String,
        /// The reassembler's reason.
        error: DecodeError,
    },
    /// The `--pubkey` file is not an HS_PUBKEY blob.
    #[error("{file}: not an HS_PUBKEY blob: {reason}")]
    PublicKey {
        /// The file.
        file: String,
        /// Why.
        reason: String,
    },
}

/// What [`decode_files`] found: the messages that decoded, and a reason for everything else.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Decoded messages, in the order of the file that starts them.
    pub messages: Vec<Decoded>,
    /// One entry per file or message that failed.
    pub errors: Vec<InspectError>,
}

/// Reads a FILE argument (`-` is stdin); hex text is turned into bytes.
pub fn read_input(path: &Path) -> Result<Bytes, InspectError> {
    let name = path.display().to_string();
    let raw = if path == Path::new("-") {
        let mut buf = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut buf).map(|_| buf)
    } else {
        std::fs::read(path)
    }
    .map_err(|source| InspectError::Io {
        file: name.clone(),
        source,
    })?;
    Ok(Bytes::from(from_hex_text(&raw).unwrap_or(raw)))
}

/// The bytes of a hex text (hex digits and white space only, an even number of digits).
/// `None` for anything else, in particular for every binary message: a message starts with
/// its major version byte (2 or 5), which is not a hex digit.
pub fn from_hex_text(raw: &[u8]) -> Option<Vec<u8>> {
    let digits: Vec<u8> = raw
        .iter()
        .copied()
        .filter(|b| !b.is_ascii_whitespace())
        .collect();
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_hexdigit) {
        return None;
    }
    hex::decode(digits).ok()
}

/// A file's envelope, when the file is one UDP fragment of a longer message.
/// A MessageLength above the limit is no fragment (the file is then reported as a message
/// whose length is refused).
fn as_fragment(data: &Bytes, limits: &Limits) -> Option<Envelope> {
    let envelope = Envelope::decode(&mut Reader::new(data.clone())).ok()?;
    let payload = data.len().checked_sub(ENVELOPE_LEN)?;
    let declared = envelope.message_length as usize;
    let partial = envelope.sequence_number > 0 || declared > payload;
    (partial
        && payload <= MAX_FRAGMENT_PAYLOAD
        && declared > MAX_FRAGMENT_PAYLOAD
        && declared <= limits.max_message_length)
        .then_some(envelope)
}

/// One UDP message being put together.
struct Group {
    /// Position of the first file of the group among the inputs (for output order).
    first: usize,
    request_id: u32,
    length: u32,
    partial: PartialMessage,
    /// (sequence number, file) of every fragment received.
    files: Vec<(u32, String)>,
    done: Option<Bytes>,
}

/// Decodes named inputs (file name, bytes) into messages, as described by
/// [`DETECTION_RULES`]. Never fails as a whole: what cannot be decoded is reported in
/// [`Outcome::errors`].
pub fn decode_files(inputs: Vec<(String, Bytes)>, limits: &Limits) -> Outcome {
    let mut out = Outcome::default();
    let mut ordered: Vec<(usize, Decoded)> = Vec::new();
    let mut groups: Vec<Group> = Vec::new();
    for (position, (file, data)) in inputs.into_iter().enumerate() {
        if data.is_empty() {
            out.errors.push(InspectError::Empty { file });
            continue;
        }
        match as_fragment(&data, limits) {
            Some(env) => add_fragment(&mut groups, &mut out, position, file, env, data, limits),
            None => {
                for d in decode_stream(&file, data, limits, &mut out.errors) {
                    ordered.push((position, d));
                }
            }
        }
    }
    for g in groups {
        let mut files = g.files;
        files.sort_by_key(|(seq, _)| *seq);
        let names: Vec<String> = files.iter().map(|(_, f)| f.clone()).collect();
        let names = names.join(",");
        match g.done {
            Some(bytes) => {
                let size = ENVELOPE_LEN.saturating_add(bytes.len());
                match Message::decode_parts(*g.partial.envelope(), bytes, limits) {
                    Ok(message) => ordered.push((
                        g.first,
                        Decoded {
                            source: names,
                            size,
                            message,
                        },
                    )),
                    Err(error) => out.errors.push(InspectError::Decode {
                        file: names,
                        at: 0,
                        error,
                    }),
                }
            }
            None => out.errors.push(InspectError::Incomplete {
                request_id: g.request_id,
                length: g.length,
                needed: g.partial.fragment_count(),
                got: files.iter().map(|(seq, _)| *seq).collect(),
                files: names,
            }),
        }
    }
    ordered.sort_by_key(|(position, _)| *position);
    out.messages = ordered.into_iter().map(|(_, d)| d).collect();
    out
}

fn add_fragment(
    groups: &mut Vec<Group>,
    out: &mut Outcome,
    position: usize,
    file: String,
    env: Envelope,
    data: Bytes,
    limits: &Limits,
) {
    let existing = groups
        .iter()
        .position(|g| g.request_id == env.request_id && g.length == env.message_length);
    let index = match existing {
        Some(i) => i,
        None => match PartialMessage::new(env, limits) {
            Ok(partial) => {
                groups.push(Group {
                    first: position,
                    request_id: env.request_id,
                    length: env.message_length,
                    partial,
                    files: Vec::new(),
                    done: None,
                });
                groups.len() - 1
            }
            Err(error) => {
                out.errors.push(InspectError::Fragment { file, error });
                return;
            }
        },
    };
    let Some(group) = groups.get_mut(index) else {
        return;
    };
    match group.partial.push(data) {
        Ok(complete) => {
            if !group
                .files
                .iter()
                .any(|(seq, _)| *seq == env.sequence_number)
            {
                group.files.push((env.sequence_number, file));
            }
            if complete.is_some() {
                group.done = complete;
            }
        }
        Err(error) => out.errors.push(InspectError::Fragment { file, error }),
    }
}

/// Cuts a file into whole messages with the TCP codec. Stops at the first message that does
/// not decode (a stream cannot be re-synchronised) or at leftover bytes.
fn decode_stream(
    file: &str,
    data: Bytes,
    limits: &Limits,
    errors: &mut Vec<InspectError>,
) -> Vec<Decoded> {
    let total = data.len();
    let mut codec = HandleCodec::new(*limits);
    let mut buf = BytesMut::from(&data[..]);
    let mut messages = Vec::new();
    loop {
        let at = total - buf.len();
        let before = buf.len();
        match codec.decode(&mut buf) {
            Ok(Some(message)) => {
                let source = if at == 0 {
                    file.to_owned()
                } else {
                    format!("{file} @ {at}")
                };
                let size = before - buf.len();
                messages.push(Decoded {
                    source,
                    size,
                    message,
                });
            }
            Ok(None) => {
                if !buf.is_empty() {
                    let announced = buf
                        .get(16..ENVELOPE_LEN)
                        .map(|b| b.iter().fold(0u32, |acc, x| (acc << 8) | u32::from(*x)))
                        .unwrap_or(0);
                    errors.push(InspectError::Trailing {
                        file: file.to_owned(),
                        at,
                        count: buf.len(),
                        announced,
                    });
                }
                return messages;
            }
            Err(CodecError::Decode(error)) => {
                errors.push(InspectError::Decode {
                    file: file.to_owned(),
                    at,
                    error,
                });
                return messages;
            }
            Err(other) => {
                errors.push(InspectError::Io {
                    file: file.to_owned(),
                    source: std::io::Error::other(other.to_string()),
                });
                return messages;
            }
        }
    }
}
