//! Cancellation safety and load: the pending table ends empty whatever happens.

use std::time::Duration;

use futures::stream::{FuturesUnordered, StreamExt};
use handle_resolver::testing::Faults;
use handle_resolver::transport::{Exchange, NetTransport, TransportError, TransportKind};
use handle_resolver::wire::ResponseCode;

use super::{options, request, server};

// Paused clock: the 300 ms pause ends only once every task is idle (all sent, all
// answered as far as the faults allow), however loaded the machine is.
#[tokio::test(start_paused = true)]
async fn dropping_1000_in_flight_exchanges_empties_the_pending_table() {
    let server = server(1).await;
    server.set_faults(Faults {
        silent: true,
        ..Faults::default()
    });
    let t = NetTransport::new();
    let req = request("20.500.1/small");
    let opts = options(&[10_000]);
    let mut inflight: FuturesUnordered<_> = (0..1000)
        .map(|_| t.exchange(server.addr(), TransportKind::Udp, &req, &opts))
        .collect();
    // Drive them until every one has registered and sent (none can finish: the server is
    // silent and the wait is 10 s).
    let polled = tokio::time::timeout(Duration::from_millis(300), inflight.next()).await;
    assert!(polled.is_err(), "an exchange finished early");
    assert_eq!(t.pending_count(), 1000);
    drop(inflight);
    assert_eq!(t.pending_count(), 0);
}

// Paused clock: the 300 ms pause ends only once every task is idle (all sent, all
// answered as far as the faults allow), however loaded the machine is.
#[tokio::test(start_paused = true)]
async fn dropping_exchanges_mid_reassembly_releases_the_reassembly_budget() {
    let server = server(1).await;
    // Nine answer fragments in ten are lost: answers stay incomplete, partially collected.
    server.set_faults(Faults {
        drop_answer_ratio: 0.9,
        ..Faults::default()
    });
    let t = NetTransport::new();
    let req = request("20.500.1/large");
    let opts = options(&[10_000]);
    let mut inflight: FuturesUnordered<_> = (0..50)
        .map(|_| t.exchange(server.addr(), TransportKind::Udp, &req, &opts))
        .collect();
    let _ = tokio::time::timeout(Duration::from_millis(300), inflight.next()).await;
    assert!(t.pending_count() > 0);
    assert!(t.reassembly_bytes() > 0, "no partial answer was collected");
    drop(inflight);
    assert_eq!(t.pending_count(), 0);
    assert_eq!(t.reassembly_bytes(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_concurrent_exchanges_complete_and_leave_nothing_pending() {
    let server = server(2).await;
    let t = NetTransport::new();
    let req = request("20.500.1/small");
    // Generous schedule: a burst of 10 000 datagrams may overflow a socket buffer once.
    let opts = options(&[1000, 1000, 2000, 2000, 4000]);
    let results: Vec<_> = (0..10_000)
        .map(|_| t.exchange(server.addr(), TransportKind::Udp, &req, &opts))
        .collect::<FuturesUnordered<_>>()
        .collect()
        .await;
    let ok = results
        .iter()
        .filter(|r| matches!(r, Ok(e) if e.message.header.response_code == ResponseCode::Success))
        .count();
    assert_eq!(
        ok,
        10_000,
        "errors: {:?}",
        results.iter().find(|r| r.is_err())
    );
    assert_eq!(t.pending_count(), 0);
    assert_eq!(t.reassembly_bytes(), 0);
}

/// Runs `f` on a fresh multi-thread runtime with one worker, returning the runtime too so
/// that the test decides when it shuts down.
fn on_new_runtime<F: std::future::Future>(f: F) -> (tokio::runtime::Runtime, F::Output) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let out = rt.block_on(f);
    (rt, out)
}

#[test]
fn udp_callers_fail_at_once_when_the_socket_runtime_shuts_down_and_the_next_one_rebinds() {
    // The server lives on its own runtime for the whole test.
    let (server_rt, server) = on_new_runtime(server(1));
    let addr = server.addr();
    let t = NetTransport::new();
    let req = request("20.500.1/small");

    // Runtime A makes the first UDP exchange: the transport's socket and receive task are
    // A's.
    let (rt_a, first) =
        on_new_runtime(t.exchange(addr, TransportKind::Udp, &req, &options(&[2000])));
    assert_eq!(
        first.unwrap().message.header.response_code,
        ResponseCode::Success
    );

    // Runtime B waits on A's socket for a silent server, with an hour-long schedule.
    server.set_faults(Faults {
        silent: true,
        ..Faults::default()
    });
    let rt_b = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let waiting = {
        let t = t.clone();
        let req = req.clone();
        rt_b.spawn(async move {
            t.exchange(addr, TransportKind::Udp, &req, &options(&[3_600_000]))
                .await
        })
    };
    while t.pending_count() == 0 {
        std::thread::sleep(Duration::from_millis(1));
    }

    // A shuts down: B's caller gets an error now, not in an hour. (The 60 s bound only
    // turns a hang into a failure.)
    drop(rt_a);
    let result = rt_b
        .block_on(async { tokio::time::timeout(Duration::from_secs(60), waiting).await })
        .expect("the waiting exchange hung after its socket's runtime shut down")
        .unwrap();
    assert!(matches!(result, Err(TransportError::Io(..))), "{result:?}");
    assert_eq!(t.pending_count(), 0);

    // The next exchange, on B, binds a fresh socket and works.
    server.set_faults(Faults::default());
    let again = rt_b
        .block_on(t.exchange(addr, TransportKind::Udp, &req, &options(&[2000])))
        .unwrap()
        .message;
    assert_eq!(again.header.response_code, ResponseCode::Success);
    assert_eq!(t.pending_count(), 0);
    drop(server);
    drop(server_rt);
}
