//! What the UDP demultiplexer asks of the operating system beyond `tokio`'s socket: on Linux
//! (and Android), the ICMP errors that an unconnected socket otherwise never reports.
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
