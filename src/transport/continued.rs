//! A continued answer (a handle list): the answer, then the messages that follow it while
//! the one before is marked continued (CN), each for the same request, at most
//! [`MAX_CONTINUED`] of them. The one rule of TCP and of an HTTP answer body; sans-IO, fed
//! one decoded message at a time.

use super::error::TransportError;
use crate::wire::{Message, OpFlags};

/// Most messages that may follow a continued (CN) answer (on one TCP connection, in one
/// HTTP body).
pub const MAX_CONTINUED: usize = 100_000;

/// The messages of one answer so far.
#[derive(Default)]
pub(super) struct Continued {
    first: Option<Message>,
    rest: Vec<Message>,
}

impl Continued {
    /// Takes the next message; true once the answer is whole (its last message is not
    /// marked continued).
    pub(super) fn push(&mut self, message: Message) -> Result<bool, TransportError> {
        let Some(first) = &self.first else {
            let whole = !message.header.flags.contains(OpFlags::CN);
            self.first = Some(message);
            return Ok(whole);
        };
        if self.rest.len() >= MAX_CONTINUED {
            return Err(TransportError::TooManyMessages {
                limit: MAX_CONTINUED,
            });
        }
        if message.request_id() != first.request_id() {
            return Err(TransportError::RequestIdMismatch {
                expected: first.request_id(),
                got: message.request_id(),
            });
        }
        let whole = !message.header.flags.contains(OpFlags::CN);
        self.rest.push(message);
        Ok(whole)
    }

    /// True once the last message taken is not marked continued.
    pub(super) fn is_whole(&self) -> bool {
        self.rest
            .last()
            .or(self.first.as_ref())
            .is_some_and(|last| !last.header.flags.contains(OpFlags::CN))
    }

    /// The answer and the messages continuing it, if it is whole.
    pub(super) fn into_whole(self) -> Option<(Message, Vec<Message>)> {
        let whole = self.is_whole();
        self.first.filter(|_| whole).map(|first| (first, self.rest))
    }
}
