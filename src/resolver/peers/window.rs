//! [`Window`]: the requests of one session in flight, kept inside the server's window of
//! session counters.
//!
//! The reference server remembers the last 200 session counters of a session and refuses,
//! unexecuted (505), a counter it has seen or one at or below the oldest of them. A bound on
//! how many requests are in flight is not enough: while one request is slow, the others
//! finish and new ones take ever higher counters, and once 200 of those are taken before
//! it, the slow one is refused. So each request takes a ticket, in the order it goes out
//! (its counter follows the same order: it is sealed as it is sent), and a new ticket is
//! handed out only while it is less than the window's size ahead of the oldest ticket still
//! in flight. Whatever the delays, no request in flight is then ever a whole server window
//! behind the newest one.

use std::collections::BTreeSet;
use std::sync::Arc;

use parking_lot::Mutex;
use tokio::sync::Notify;

/// The tickets of one session.
#[derive(Debug)]
pub(crate) struct Window {
    /// How far ahead of the oldest ticket in flight a new one may be.
    size: u64,
    tickets: Mutex<Tickets>,
    /// Woken when a ticket is given back.
    freed: Notify,
}

#[derive(Debug, Default)]
struct Tickets {
    next: u64,
    in_flight: BTreeSet<u64>,
}

impl Tickets {
    /// The next ticket, when it is inside the window.
    fn take(&mut self, size: u64) -> Option<u64> {
        let oldest = self.in_flight.first().copied().unwrap_or(self.next);
        if self.next.saturating_sub(oldest) >= size {
            return None;
        }
        let ticket = self.next;
        self.next = self.next.saturating_add(1);
        self.in_flight.insert(ticket);
        Some(ticket)
    }
}

/// A request's place in the window, given back when dropped (answered, failed or given up).
#[derive(Debug)]
pub(crate) struct Place {
    window: Arc<Window>,
    ticket: u64,
}

impl Drop for Place {
    fn drop(&mut self) {
        self.window.tickets.lock().in_flight.remove(&self.ticket);
        self.window.freed.notify_waiters();
    }
}

impl Window {
    /// A window of `size` tickets (at least 1).
    pub(crate) fn new(size: usize) -> Arc<Self> {
        Arc::new(Self {
            size: u64::try_from(size.max(1)).unwrap_or(u64::MAX),
            tickets: Mutex::default(),
            freed: Notify::new(),
        })
    }

    /// The next ticket, waited for while it would be a whole window ahead of the oldest in
    /// flight. Cancel-safe: a wait given up takes nothing.
    pub(crate) async fn admit(self: &Arc<Self>) -> Place {
        loop {
            // Listening before looking: a ticket given back in between still wakes us.
            let freed = self.freed.notified();
            tokio::pin!(freed);
            freed.as_mut().enable();
            if let Some(ticket) = self.tickets.lock().take(self.size) {
                return Place {
                    window: self.clone(),
                    ticket,
                };
            }
            freed.await;
        }
    }

    /// Tickets in flight now.
    #[cfg(test)]
    fn in_flight(&self) -> usize {
        self.tickets.lock().in_flight.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::FutureExt;

    #[tokio::test]
    async fn a_slow_ticket_holds_back_the_ones_a_window_ahead_of_it() {
        let w = Window::new(3);
        let slow = w.admit().await;
        let a = w.admit().await;
        let b = w.admit().await;
        // Three in flight, the oldest 0: ticket 3 would be a whole window ahead.
        assert!(w.admit().now_or_never().is_none());
        // The fast ones come back; the slow one still holds ticket 0, so still no ticket 3.
        drop((a, b));
        assert_eq!(w.in_flight(), 1);
        assert!(w.admit().now_or_never().is_none());
        // The slow one back: the window moves on.
        let waiting = tokio::spawn({
            let w = w.clone();
            async move { w.admit().await.ticket }
        });
        tokio::task::yield_now().await;
        drop(slow);
        assert_eq!(waiting.await.unwrap(), 3);
    }

    #[tokio::test]
    async fn a_wait_given_up_takes_nothing() {
        let w = Window::new(1);
        let first = w.admit().await;
        assert!(w.admit().now_or_never().is_none());
        drop(first);
        assert_eq!(w.in_flight(), 0);
        let next = w.admit().await;
        assert_eq!(next.ticket, 1);
    }
}
