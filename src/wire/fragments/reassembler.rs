//! [`Reassembler`]: many messages in progress at once, one [`Collector`] per request id, with
//! a cap on messages in progress and an expiry, for a receiver without a table of its own.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use bytes::Bytes;

use super::{decode_envelope, Collected, Collector};
use crate::wire::error::{DecodeError, DecodeErrorKind};
use crate::wire::limits::Limits;
use crate::wire::message::Message;

/// Settings of a [`Reassembler`]: [`ReassemblerConfig::default`], then the `with_*` setters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReassemblerConfig {
    /// Most partial messages held at once; a new one beyond that evicts the oldest.
    pub max_in_progress: usize,
    /// Largest message accepted (also capped by `limits.max_message_length`).
    pub max_message_length: usize,
    /// A partial message older than this is dropped.
    pub timeout: Duration,
    /// Limits for decoding the completed messages.
    pub limits: Limits,
}

impl Default for ReassemblerConfig {
    /// 64 messages in progress, the default message limit, 5 s (the reference client gives up
    /// on a server after 3 s).
    fn default() -> Self {
        let limits = Limits::default();
        Self {
            max_in_progress: 64,
            max_message_length: limits.max_message_length,
            timeout: Duration::from_secs(5),
            limits,
        }
    }
}

impl ReassemblerConfig {
    /// Sets [`max_in_progress`](Self::max_in_progress).
    pub fn with_max_in_progress(mut self, messages: usize) -> Self {
        self.max_in_progress = messages;
        self
    }

    /// Sets [`max_message_length`](Self::max_message_length).
    pub fn with_max_message_length(mut self, bytes: usize) -> Self {
        self.max_message_length = bytes;
        self
    }

    /// Sets [`timeout`](Self::timeout).
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Sets [`limits`](Self::limits).
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }
}

/// Many messages in progress, one [`Collector`] per request id, with caps on messages in
/// progress and bytes: for a receiver that has no table of its own to keep collectors in (a
/// server answering many clients, a reader of captured datagrams). The UDP transport has one,
/// its pending requests, and keeps a [`Collector`] in each: the same rule, without a second
/// table.
#[derive(Debug, Clone)]
pub struct Reassembler {
    config: ReassemblerConfig,
    limits: Limits,
    partial: HashMap<u32, (Collector, Instant)>,
}

impl Reassembler {
    /// An empty reassembler.
    pub fn new(config: ReassemblerConfig) -> Reassembler {
        let mut limits = config.limits;
        limits.max_message_length = limits.max_message_length.min(config.max_message_length);
        Reassembler {
            config,
            limits,
            partial: HashMap::new(),
        }
    }

    /// Ok(Some(Message)) when a message completes (decoded with Message::decode_parts).
    ///
    /// A single-datagram message completes at once and is never stored. Expired partial
    /// messages are dropped first. When `max_in_progress` messages are already pending, the
    /// oldest is evicted to make room (a reassembler with `max_in_progress == 0` refuses
    /// multi-datagram messages). Each request id follows the rule of [`Collector`]: a
    /// datagram of the pending request id but another total length, or a duplicate fragment
    /// with other bytes, that is valid on its own means another message under the same id:
    /// the pending one is dropped and a new one starts from this datagram (newest wins, and
    /// its expiry counts from now). A datagram that is not valid on its own (a length above
    /// the limit, a sequence number out of range, a wrong chunk size) is an error and leaves
    /// the pending message as it was. A duplicate arriving after its message completed starts
    /// a new partial message that expires (or call [`Reassembler::remove`]).
    pub fn push(&mut self, datagram: Bytes, now: Instant) -> Result<Option<Message>, DecodeError> {
        self.expire(now);
        let (env, payload) = decode_envelope(&datagram)?;
        let id = env.request_id;
        let (envelope, message) = match self.partial.get_mut(&id) {
            Some((collector, started)) => {
                match collector.push(env, payload, &self.limits, usize::MAX)? {
                    Collected::Held => return Ok(None),
                    // Another message under the same request id (a stale partial, or a
                    // resend of the request elsewhere): the newest wins, as the reference
                    // client only cares about the latest answer.
                    Collected::Restarted(e) => {
                        tracing::debug!(request_id = id, error = %e, "restarting partial message");
                        *started = now;
                        return Ok(None);
                    }
                    Collected::Complete { envelope, message } => {
                        self.partial.remove(&id);
                        (envelope, message)
                    }
                }
            }
            None => {
                let mut collector = Collector::new();
                match collector.push(env, payload, &self.limits, usize::MAX)? {
                    Collected::Complete { envelope, message } => (envelope, message),
                    Collected::Held | Collected::Restarted(_) => {
                        self.make_room()?;
                        self.partial.insert(id, (collector, now));
                        return Ok(None);
                    }
                }
            }
        };
        Message::decode_parts(envelope, message, &self.limits).map(Some)
    }

    fn make_room(&mut self) -> Result<(), DecodeError> {
        if self.config.max_in_progress == 0 {
            return Err(DecodeError::new(
                "reassembler.in_progress",
                0,
                DecodeErrorKind::TooLarge { value: 1, limit: 0 },
            ));
        }
        while self.partial.len() >= self.config.max_in_progress {
            let oldest = self
                .partial
                .iter()
                .min_by_key(|(_, (_, started))| *started)
                .map(|(id, _)| *id);
            match oldest {
                Some(id) => {
                    tracing::debug!(request_id = id, "reassembler full: evicting oldest");
                    self.partial.remove(&id);
                }
                None => break,
            }
        }
        Ok(())
    }

    /// Forgets the partial message of `request_id`, if any.
    pub fn remove(&mut self, request_id: u32) {
        self.partial.remove(&request_id);
    }

    /// drops partial messages older than timeout
    pub fn expire(&mut self, now: Instant) {
        let timeout = self.config.timeout;
        self.partial
            .retain(|_, (_, started)| now.saturating_duration_since(*started) < timeout);
    }

    /// Number of partial messages held.
    pub fn in_progress(&self) -> usize {
        self.partial.len()
    }

    /// When the oldest partial message expires, if any (for a caller's timer).
    pub fn next_expiry(&self) -> Option<Instant> {
        self.partial
            .values()
            .filter_map(|(_, started)| started.checked_add(self.config.timeout))
            .min()
    }
}
