//! What the UDP demultiplexer asks of the operating system beyond `tokio`'s socket: on Linux
//! (and Android), the ICMP errors that an unconnected socket otherwise never reports, and
//! the answers waiting on the socket read several at a time ([`recv_batch`], `recvmmsg`).
//!
//! A datagram sent to a port that nobody listens on comes back as an ICMP "port unreachable".
//! A connected UDP socket reports it as `ECONNREFUSED` on its next call, but the shared socket
//! is unconnected, and without help the error is lost: the exchange waits out its whole
//! retransmission schedule (3 s by default) before the resolver tries TCP. With `IP_RECVERR`
//! (`IPV6_RECVERR`) set, the kernel queues each such error on the socket's error queue, with
//! the destination of the datagram that was refused, and signals it as `EPOLLERR`; the
//! receive task reads the queue ([`next_error`]) and ends every request pending to that
//! destination at once.
//!
//! The same option makes the kernel report the error once more as `ECONNREFUSED` from the
//! next send or receive call on the socket, whichever peer that call is for (the error queue
//! read clears it too). The demultiplexer therefore retries a send that fails that way (the
//! refusal belongs to another exchange, which hears of it through the queue) and skips it on
//! receive.
//!
//! The kernel takes an ICMP error only if it quotes a datagram this socket sent (its ports
//! included), so a forged one needs the socket's port; at worst it sends requests to that
//! destination over TCP early.
//!
//! Elsewhere nothing is enabled, [`INTEREST`] is plain readability and a request to a closed
//! port waits out its schedule as before.

use std::io;
use std::net::SocketAddr;

use tokio::io::Interest;
use tokio::net::UdpSocket;

/// What the receive task waits for: readability, and on Linux the error queue too.
#[cfg(any(target_os = "linux", target_os = "android"))]
pub(super) const INTEREST: Interest = Interest::READABLE.add(Interest::ERROR);
/// What the receive task waits for: readability, and on Linux the error queue too.
#[cfg(not(any(target_os = "linux", target_os = "android")))]
pub(super) const INTEREST: Interest = Interest::READABLE;

/// One error read from the socket's error queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum QueuedError {
    /// A datagram to this address was refused (ICMP port unreachable).
    Refused(SocketAddr),
    /// Any other error (a host or network unreachable, a fragmentation notice, or one
    /// without its destination): nothing to act on, the retransmissions go on.
    Other(i32),
}

/// Asks the kernel to queue ICMP errors on `socket` (`IP_RECVERR` or `IPV6_RECVERR`, by the
/// family of its local address). Best effort: the caller logs a failure and carries on.
#[cfg(any(target_os = "linux", target_os = "android"))]
pub(super) fn enable_errors(socket: &std::net::UdpSocket) -> io::Result<()> {
    use nix::sys::socket::{setsockopt, sockopt};
    let done = if socket.local_addr()?.is_ipv4() {
        setsockopt(socket, sockopt::Ipv4RecvErr, &true)
    } else {
        setsockopt(socket, sockopt::Ipv6RecvErr, &true)
    };
    done.map_err(io::Error::from)
}

/// Asks the kernel to queue ICMP errors on `socket`: nothing to do on this platform.
#[cfg(not(any(target_os = "linux", target_os = "android")))]
pub(super) fn enable_errors(_socket: &std::net::UdpSocket) -> io::Result<()> {
    Ok(())
}

/// Reads one error from the error queue of `socket` (its payload, the datagram that was
/// refused, goes to `buf` and is not looked at). `WouldBlock` once the queue is empty, which
/// also clears the error readiness the receive task waits for.
#[cfg(any(target_os = "linux", target_os = "android"))]
pub(super) fn next_error(socket: &UdpSocket, buf: &mut [u8]) -> io::Result<QueuedError> {
    use std::os::fd::AsRawFd;

    use nix::errno::Errno;
    use nix::libc;
    use nix::sys::socket::{recvmsg, ControlMessageOwned, MsgFlags, SockaddrStorage};

    socket.try_io(Interest::ERROR, || {
        let mut iov = [io::IoSliceMut::new(buf)];
        // Room for the extended error and the address of the ICMP sender that follows it.
        let mut control = nix::cmsg_space!(libc::sock_extended_err, libc::sockaddr_in6);
        // The socket is non-blocking, and MSG_ERRQUEUE never waits: an empty queue is EAGAIN.
        let msg = recvmsg::<SockaddrStorage>(
            socket.as_raw_fd(),
            &mut iov,
            Some(&mut control),
            MsgFlags::MSG_ERRQUEUE,
        )
        .map_err(io::Error::from)?;
        // The address of a message from the error queue is the destination of the datagram
        // the error is about (for ICMP errors: the original destination address and port).
        let destination = msg.address.and_then(|a| {
            a.as_sockaddr_in()
                .map(|v4| SocketAddr::from(*v4))
                .or_else(|| a.as_sockaddr_in6().map(|v6| SocketAddr::from(*v6)))
        });
        // The error itself is in a control message. (Control messages cut short for want of
        // room leave the error unknown: it was taken off the queue all the same.)
        let mut errno = 0;
        for cmsg in msg.cmsgs().into_iter().flatten() {
            match cmsg {
                ControlMessageOwned::Ipv4RecvErr(e, _) | ControlMessageOwned::Ipv6RecvErr(e, _) => {
                    errno = i32::try_from(e.ee_errno).unwrap_or(i32::MAX);
                }
                _ => {}
            }
        }
        Ok(match destination {
            Some(to) if errno == Errno::ECONNREFUSED as i32 => QueuedError::Refused(to),
            _ => QueuedError::Other(errno),
        })
    })
}

/// Reads one error from the error queue of `socket`: there is none on this platform.
#[cfg(not(any(target_os = "linux", target_os = "android")))]
pub(super) fn next_error(_socket: &UdpSocket, _buf: &mut [u8]) -> io::Result<QueuedError> {
    Err(io::ErrorKind::WouldBlock.into())
}

/// How many datagrams one receive call takes at most ([`recv_batch`]).
pub(super) const RECV_AT_ONCE: usize = 8;

/// Receives up to [`RECV_AT_ONCE`] datagrams in one call, each into its own buffer of
/// `bufs`: on Linux one `recvmmsg`, so that a busy socket costs one system call per batch
/// rather than per answer (BENCHMARKS.md §7); elsewhere one datagram. Fills `got` with each
/// datagram's length (cut to its buffer) and sender, in order, and returns how many came;
/// `WouldBlock` when none was waiting, which clears the readiness the receive task waits for.
#[cfg(any(target_os = "linux", target_os = "android"))]
pub(super) fn recv_batch<const N: usize>(
    socket: &UdpSocket,
    bufs: &mut [[u8; N]; RECV_AT_ONCE],
    got: &mut [(usize, Option<SocketAddr>); RECV_AT_ONCE],
) -> io::Result<usize> {
    use std::os::fd::AsRawFd;

    use nix::sys::socket::{recvmmsg, MsgFlags, MultiHeaders, SockaddrStorage};

    socket.try_io(Interest::READABLE, || {
        // Built for each call: the headers hold raw pointers, which the receive task could
        // not keep across its waits.
        let mut headers = MultiHeaders::<SockaddrStorage>::preallocate(RECV_AT_ONCE, None);
        let mut iovs = bufs.each_mut().map(|b| [io::IoSliceMut::new(b)]);
        let received = recvmmsg(
            socket.as_raw_fd(),
            &mut headers,
            iovs.iter_mut(),
            MsgFlags::MSG_DONTWAIT,
            None,
        )
        .map_err(io::Error::from)?;
        let mut n = 0;
        for (msg, slot) in received.zip(got.iter_mut()) {
            let from = msg.address.and_then(|a| {
                a.as_sockaddr_in()
                    .map(|v4| SocketAddr::from(*v4))
                    .or_else(|| a.as_sockaddr_in6().map(|v6| SocketAddr::from(*v6)))
            });
            *slot = (msg.bytes.min(N), from);
            n += 1;
        }
        Ok(n)
    })
}

/// Receives one datagram into `bufs[0]` (see the Linux version).
#[cfg(not(any(target_os = "linux", target_os = "android")))]
pub(super) fn recv_batch<const N: usize>(
    socket: &UdpSocket,
    bufs: &mut [[u8; N]; RECV_AT_ONCE],
    got: &mut [(usize, Option<SocketAddr>); RECV_AT_ONCE],
) -> io::Result<usize> {
    let (n, from) = socket.try_recv_from(&mut bufs[0])?;
    got[0] = (n, Some(from));
    Ok(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Twenty datagrams waiting are all read, in order, each with its length and sender, in
    /// batches of at most `RECV_AT_ONCE`; one longer than its buffer is cut to it; an empty
    /// socket is `WouldBlock`.
    #[tokio::test]
    async fn batches_read_every_waiting_datagram_in_order() {
        let receiver = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let sender = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let to = receiver.local_addr().unwrap();
        for i in 0..20u8 {
            // Datagram i: i + 1 bytes of value i; the last one 100 bytes.
            let len = if i == 19 { 100 } else { usize::from(i) + 1 };
            sender.send_to(&vec![i; len], to).unwrap();
        }
        let mut bufs = [[0u8; 64]; RECV_AT_ONCE];
        let mut got = [(0usize, None); RECV_AT_ONCE];
        let mut seen: Vec<(Vec<u8>, Option<SocketAddr>)> = Vec::new();
        let mut calls = 0;
        while seen.len() < 20 && calls < 100 {
            receiver.readable().await.unwrap();
            calls += 1;
            match recv_batch(&receiver, &mut bufs, &mut got) {
                Ok(n) => {
                    assert!((1..=RECV_AT_ONCE).contains(&n));
                    for (buf, (len, from)) in bufs.iter().zip(got).take(n) {
                        seen.push((buf[..len].to_vec(), from));
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => panic!("{e}"),
            }
        }
        assert_eq!(seen.len(), 20);
        for (i, (data, from)) in seen.iter().enumerate() {
            let expected = if i == 19 { 64 } else { i + 1 };
            assert_eq!(data, &vec![i as u8; expected], "datagram {i}");
            assert_eq!(*from, Some(sender.local_addr().unwrap()));
        }
        // Linux takes them in batches: fewer calls than datagrams.
        #[cfg(any(target_os = "linux", target_os = "android"))]
        assert!(calls < 20, "{calls} calls");
        let e = recv_batch(&receiver, &mut bufs, &mut got).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::WouldBlock);
    }
}
