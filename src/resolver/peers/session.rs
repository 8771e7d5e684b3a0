//! [`Session`]: the session the resolver holds with one server (PROTOCOL.md §10), as the
//! reference client's default session tracker keeps them. Only a resolver with an identity
//! ([`ResolverBuilder::authenticator`](crate::ResolverBuilder::authenticator)) uses them, and
//! only for requests that need the identity: administration, and a resolution that clears
//! public-only once the server challenges it (it is then sent again in a session, as the
//! reference client does; while a session with the server is authenticated, such
//! resolutions go in it from the start).
//!
//! Why: without a session every such request is challenged (two round trips, and for a
//! secret key 10,000 PBKDF2 rounds per answer); in a session the first request is challenged
//! and authenticates the session, and the next ones go through at once, their values
//! encrypted on the wire.
//!
//! Per server (in its [`Peer`](super::Peer)), one slot:
//! - nothing yet, or the session expired: the first request sets one up (while it holds the
//!   slot, the others wait for it);
//! - open, not yet authenticated: one request at a time goes in it, so that one challenge
//!   authenticates it (the server keeps one pending challenge per session: two challenged at
//!   once would replace each other's);
//! - open and authenticated: every request goes in it at once;
//! - refused (the server answered the setup with an error, or unsigned, or its key is
//!   unknown): requests go without a session for [`SESSION_REFUSED_FOR`], then setup is tried again.
//!
//! The attempt (`ask/attempt.rs`, `open_session`) runs the setup exchange and calls back here
//! with the outcome; this file only keeps the state.
//!
//! The session window (`window.rs`): the reference server remembers the last 200 session
//! counters of a session and refuses (505, not executed) a counter it has seen or one at or
//! below the oldest of them. Requests are sealed as they are sent (`transport/tcp.rs` seals
//! after the connect), and [`Session::admit`] lets a request go only while it is less than
//! the window (default [`DEFAULT_SESSION_WINDOW`], half the server's: room for the order to
//! shuffle on the way) ahead of the oldest one still in flight. A 505 that comes anyway is
//! sent once more, sealed anew (`ask/attempt.rs`).

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::OwnedMutexGuard;
use tokio::time::Instant;

use super::window::{Place, Window};
use crate::wire::SessionKey;

/// How long the resolver uses a session (the server keeps it for the 24 h the setup asks;
/// a fresh key every hour costs one round trip).
const SESSION_LIFETIME: Duration = Duration::from_secs(3600);
/// How long a server that refused a session is asked without one.
const SESSION_REFUSED_FOR: Duration = Duration::from_secs(600);
/// Requests in flight in one session at most, by default: half the reference server's
/// window of 200 counters.
pub(crate) const DEFAULT_SESSION_WINDOW: usize = 100;
/// The largest session window a builder takes: the reference server's own.
pub(crate) const MAX_SESSION_WINDOW: usize = 200;

/// A server's session as the resolver knows it.
#[derive(Default)]
pub(crate) enum State {
    #[default]
    None,
    Open {
        key: Arc<SessionKey>,
        expires: Instant,
        authenticated: bool,
    },
    Refused {
        until: Instant,
    },
}

/// One server's session, behind the lock a setup or first authentication holds.
type Slot = Arc<tokio::sync::Mutex<State>>;

/// The resolver's session with one server.
pub(crate) struct Session {
    /// Off without an identity, or when the builder turned sessions off.
    enabled: bool,
    slot: Slot,
    /// The session window of requests in flight.
    window: Arc<Window>,
}

impl Default for Session {
    fn default() -> Self {
        Self::new(false)
    }
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("enabled", &self.enabled)
            .finish_non_exhaustive()
    }
}

/// What a request gets from [`Session::lease`].
pub(crate) enum Lease {
    /// Go without a session.
    Without,
    /// Go in this session (of this slot); authenticated, so no one else needs to wait.
    Shared(Arc<SessionKey>, Slot),
    /// Go in this session, holding the slot until this request is answered (setup and
    /// first authentication are one at a time).
    Held(Arc<SessionKey>, OwnedMutexGuard<State>),
    /// No session yet: set one up (holding the slot) and [`Lease::opened`] or
    /// [`Lease::refused`] it.
    Setup(OwnedMutexGuard<State>),
}

impl Lease {
    /// The session to send in, if any.
    pub(crate) fn key(&self) -> Option<Arc<SessionKey>> {
        match self {
            Lease::Shared(k, _) | Lease::Held(k, _) => Some(k.clone()),
            Lease::Without | Lease::Setup(_) => None,
        }
    }

    /// The setup succeeded: the session is open (not yet authenticated) and this request
    /// goes in it, still holding the slot.
    pub(crate) fn opened(self, key: SessionKey) -> Lease {
        match self {
            Lease::Setup(mut guard) => {
                let key = Arc::new(key);
                *guard = State::Open {
                    key: key.clone(),
                    expires: Instant::now() + SESSION_LIFETIME,
                    authenticated: false,
                };
                Lease::Held(key, guard)
            }
            other => other,
        }
    }

    /// The server refused a session: none with it for [`SESSION_REFUSED_FOR`].
    pub(crate) fn refused(self) -> Lease {
        if let Lease::Setup(mut guard) = self {
            *guard = State::Refused {
                until: Instant::now() + SESSION_REFUSED_FOR,
            };
        }
        Lease::Without
    }

    /// The request went through in the session (its challenge, if any, was answered and
    /// accepted): later requests need not wait.
    pub(crate) fn authenticated(&mut self) {
        if let Lease::Held(_, guard) = self {
            if let State::Open { authenticated, .. } = &mut **guard {
                *authenticated = true;
            }
        }
    }

    /// The server no longer knows the session (500, 501, 502 or 505): it is dropped (unless another
    /// request replaced it already); the next request sets up another.
    pub(crate) async fn lost(self) {
        match self {
            Lease::Held(_, mut guard) => *guard = State::None,
            Lease::Shared(lost, slot) => {
                let mut state = slot.lock().await;
                if matches!(&*state, State::Open { key, .. } if Arc::ptr_eq(key, &lost)) {
                    *state = State::None;
                }
            }
            Lease::Without | Lease::Setup(_) => {}
        }
    }
}

impl Session {
    /// A server's session slot, used when `enabled` (the builder's `sessions` setting and an
    /// identity).
    pub(crate) fn new(enabled: bool) -> Self {
        Self::with_window(enabled, DEFAULT_SESSION_WINDOW)
    }

    /// [`Session::new`] with at most `window` requests in flight in the session.
    pub(crate) fn with_window(enabled: bool, window: usize) -> Self {
        Self {
            enabled,
            slot: Slot::default(),
            window: Window::new(window),
        }
    }

    /// A place for one request in the session's window, waited for while it would be a
    /// whole window ahead of the oldest request in flight; held until the request is
    /// answered (or given up). `None` with sessions off.
    pub(crate) async fn admit(&self) -> Option<Place> {
        if !self.enabled {
            return None;
        }
        Some(self.window.admit().await)
    }

    /// True when no session is open or being set up with the server (forgetting it loses
    /// nothing but a refusal remembered).
    pub(crate) fn is_idle(&self) -> bool {
        match self.slot.try_lock() {
            Ok(state) => {
                !matches!(&*state, State::Open { expires, .. } if *expires > Instant::now())
            }
            Err(_) => false,
        }
    }

    /// The authenticated session with the server, if there is one now (never waits).
    pub(crate) fn current(&self) -> Lease {
        if !self.enabled {
            return Lease::Without;
        }
        let slot = &self.slot;
        let Ok(state) = slot.clone().try_lock_owned() else {
            return Lease::Without;
        };
        match &*state {
            State::Open {
                key,
                expires,
                authenticated: true,
            } if *expires > Instant::now() => Lease::Shared(key.clone(), slot.clone()),
            _ => Lease::Without,
        }
    }

    /// False when no session will be had with the server now (sessions off, or it refused one
    /// lately).
    pub(crate) fn may_open(&self) -> bool {
        if !self.enabled {
            return false;
        }
        let slot = &self.slot;
        let refused = slot.try_lock().is_ok_and(
            |state| matches!(&*state, State::Refused { until } if *until > Instant::now()),
        );
        !refused
    }

    /// The session a request to the server goes in (waiting while another request sets it up
    /// or authenticates it).
    pub(crate) async fn lease(&self) -> Lease {
        if !self.enabled {
            return Lease::Without;
        }
        let slot = &self.slot;
        let mut guard = slot.clone().lock_owned().await;
        let now = Instant::now();
        match &*guard {
            State::Open {
                key,
                expires,
                authenticated,
            } if *expires > now => {
                if *authenticated {
                    Lease::Shared(key.clone(), slot.clone())
                } else {
                    Lease::Held(key.clone(), guard)
                }
            }
            State::Refused { until } if *until > now => Lease::Without,
            _ => {
                *guard = State::None;
                Lease::Setup(guard)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use zeroize::Zeroizing;

    #[tokio::test(start_paused = true)]
    async fn the_first_request_sets_up_and_the_next_waits_until_authenticated() {
        let s = Arc::new(Session::new(true));
        let Lease::Setup(_) = s.lease().await else {
            panic!("a setup first")
        };
        // The first lease was dropped unresolved: the next request sets up again.
        let lease = s.lease().await;
        let mut held = lease.opened(SessionKey::new(7, Zeroizing::new([1; 32])));
        assert_eq!(held.key().map(|k| k.session_id()), Some(7));
        // While it is held, another request waits (the paused clock runs ahead an hour while
        // it does: it is blocked, not slow).
        let mut waiting = tokio::spawn({
            let s = s.clone();
            async move { s.lease().await.key().map(|k| k.session_id()) }
        });
        let hour = Duration::from_secs(3599);
        assert!(tokio::time::timeout(hour, &mut waiting).await.is_err());
        held.authenticated();
        drop(held);
        assert_eq!(waiting.await.unwrap(), Some(7));
        // Authenticated: shared, nobody waits.
        let a = s.lease().await;
        let b = s.lease().await;
        assert!(matches!(a, Lease::Shared(..)) && matches!(b, Lease::Shared(..)));
        assert!(matches!(s.current(), Lease::Shared(..)));
        // One of them finds the session lost: the next request sets up again.
        a.lost().await;
        drop(b);
        assert!(matches!(s.lease().await, Lease::Setup(_)));
    }

    #[tokio::test]
    async fn a_refusal_is_remembered_and_a_lost_session_is_set_up_again() {
        let s = Session::new(true);
        let lease = s.lease().await;
        assert!(s.may_open());
        assert!(matches!(lease.refused(), Lease::Without));
        assert!(!s.may_open());
        assert!(matches!(s.lease().await, Lease::Without));
        let other = Session::new(true);
        let held = other
            .lease()
            .await
            .opened(SessionKey::new(3, Zeroizing::new([2; 32])));
        held.lost().await;
        assert!(matches!(other.lease().await, Lease::Setup(_)));
        assert!(matches!(Session::new(false).lease().await, Lease::Without));
    }

    #[tokio::test(start_paused = true)]
    async fn sessions_expire_and_refusals_end() {
        let s = Session::new(true);
        let mut held = s
            .lease()
            .await
            .opened(SessionKey::new(3, Zeroizing::new([2; 32])));
        held.authenticated();
        drop(held);
        tokio::time::advance(SESSION_LIFETIME).await;
        let lease = s.lease().await;
        assert!(matches!(lease, Lease::Setup(_)));
        drop(lease.refused());
        tokio::time::advance(SESSION_REFUSED_FOR).await;
        assert!(matches!(s.lease().await, Lease::Setup(_)));
    }
}
