//! No write is lost to the session window (issue 34): the test server keeps the reference
//! server's window of 200 session counters per session (a counter seen already, or at or
//! below the oldest of a full window, is answered 505 and not executed), and the client
//! keeps its requests of one session inside it, sending a 505 once more sealed anew. (Run
//! without the client's window, the first test loses hundreds of its 10,000 creates.)

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::stream::{self, StreamExt};
use handle_resolver::testing::{Faults, TestServer};
use handle_resolver::wire::{HandleValue, ResponseCode};
use handle_resolver::{AdminError, Resolver};

use super::loopback::{builder_at, server};

/// A resolver whose root is the test server, which it knows with its key (so that sessions
/// are set up), as `USER-SECKEY` of the captures (it may create handles under the prefix).
fn resolver(server: &TestServer) -> Resolver {
    builder_at(server, "seckey", true)
        .timeout(Duration::from_secs(120))
        .build()
        .unwrap()
}

/// Creates `n` handles named `{stem}{i}` at `concurrency`; the failures, and how long it took.
async fn create_many(
    r: &Resolver,
    stem: &str,
    n: usize,
    concurrency: usize,
) -> (Vec<String>, Duration) {
    let admin = Arc::new(r.admin());
    let started = Instant::now();
    let failures: Vec<String> = stream::iter(0..n)
        .map(|i| {
            let admin = admin.clone();
            let handle = format!("{stem}{i}");
            async move {
                let values = vec![HandleValue::new(
                    1,
                    "URL",
                    format!("https://example.org/{i}"),
                )];
                admin
                    .create_handle(&handle, values)
                    .await
                    .err()
                    .map(|e| format!("{handle}: {e}"))
            }
        })
        .buffer_unordered(concurrency)
        .filter_map(|f| async move { f })
        .collect()
        .await;
    (failures, started.elapsed())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_creates_in_one_session_at_concurrency_256_lose_nothing() {
    let server = server().await;
    // A 5 ms answer delay, and requests taken up to 150 ms late, in another order than they
    // came (as a busy server's threads take them): without the client's window, a request
    // taken late finds 200 later counters taken before it.
    server.set_faults(Faults {
        delay: Duration::from_millis(5),
        process_jitter: Duration::from_millis(150),
        ..Faults::default()
    });
    let r = resolver(&server);
    // Concurrency 1 first, on a few: the rate to beat.
    let (failures, took_1) = create_many(&r, "20.500.12345/WIN-ONE-", 50, 1).await;
    assert!(failures.is_empty(), "{failures:?}");
    let rate_1 = 50.0 / took_1.as_secs_f64();
    let (failures, took_256) = create_many(&r, "20.500.12345/WIN-", 10_000, 256).await;
    assert!(
        failures.is_empty(),
        "{} lost, e.g. {:?}",
        failures.len(),
        &failures[..failures.len().min(5)]
    );
    let rate_256 = 10_000.0 / took_256.as_secs_f64();
    // Every record is there, as created.
    let store = server.store();
    for i in 0..10_000 {
        let handle = format!("20.500.12345/WIN-{i}");
        let values = store.get(handle.as_bytes()).map(|h| h.values.clone());
        let url = values
            .as_deref()
            .and_then(|v| v.iter().find(|v| v.is_type("URL")))
            .map(|v| v.data.clone());
        assert_eq!(
            url.as_deref(),
            Some(format!("https://example.org/{i}").as_bytes()),
            "{handle}"
        );
    }
    // One session for all of them: the window is what was tested.
    assert_eq!(server.session_setups(), 1);
    // Going slower is not the fix: the window leaves room for concurrency.
    assert!(
        rate_256 >= 10.0 * rate_1,
        "{rate_256:.0}/s at concurrency 256, {rate_1:.0}/s at 1"
    );
}

#[tokio::test]
async fn a_refused_session_counter_is_sent_once_more_sealed_anew_then_reported() {
    let server = server().await;
    let r = resolver(&server);
    let admin = r.admin();
    // The session is set up and authenticated by a first create.
    admin
        .create_handle(
            "20.500.12345/WIN-FIRST",
            vec![HandleValue::new(1, "URL", "https://example.org/first")],
        )
        .await
        .unwrap();
    // One refusal: the create goes again with a fresh counter (the same bytes again would
    // be a duplicate counter for the server, as the refused one stays in its window).
    server.set_faults(Faults {
        refuse_session_messages: 1,
        ..Faults::default()
    });
    admin
        .create_handle(
            "20.500.12345/WIN-AGAIN",
            vec![HandleValue::new(1, "URL", "https://example.org/again")],
        )
        .await
        .unwrap();
    assert!(server.store().get(b"20.500.12345/WIN-AGAIN").is_some());
    // Two refusals: sent again once only; the second 505 is the answer, and nothing was
    // created.
    server.set_faults(Faults {
        refuse_session_messages: 2,
        ..Faults::default()
    });
    let e = admin
        .create_handle(
            "20.500.12345/WIN-LOST",
            vec![HandleValue::new(1, "URL", "https://example.org/lost")],
        )
        .await
        .unwrap_err();
    assert_eq!(
        e.response_code(),
        Some(ResponseCode::SessionMessageRejected),
        "{e}"
    );
    assert!(
        matches!(&e, AdminError::Refused { message, .. } if message.contains("Duplicate session counter")),
        "{e:?}"
    );
    assert!(server.store().get(b"20.500.12345/WIN-LOST").is_none());
    // The session lives on: the next create goes in it, unchallenged.
    let setups = server.session_setups();
    admin
        .create_handle(
            "20.500.12345/WIN-AFTER",
            vec![HandleValue::new(1, "URL", "https://example.org/after")],
        )
        .await
        .unwrap();
    assert_eq!(server.session_setups(), setups);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn places_per_server_and_the_session_window_together_lose_nothing() {
    // The user's bound on requests in flight to the server (2) below the session's window
    // (4), authenticated writes in one session at concurrency 32, every answer held 20 ms:
    // nothing waits on a place held by a request that waits on it (a place is taken before
    // the window, and the requests ahead in the window hold theirs), every create lands, in
    // one session, never more than 2 at the server at once.
    let server = server().await;
    server.set_faults(Faults {
        delay: Duration::from_millis(20),
        ..Faults::default()
    });
    let r = builder_at(&server, "seckey", true)
        .timeout(Duration::from_secs(60))
        .max_in_flight_per_server(2)
        .session_window(4)
        .build()
        .unwrap();
    let (failures, _) = create_many(&r, "20.500.12345/PLACE-", 200, 32).await;
    assert!(failures.is_empty(), "{failures:?}");
    for i in 0..200 {
        let handle = format!("20.500.12345/PLACE-{i}");
        assert!(server.store().get(handle.as_bytes()).is_some(), "{handle}");
    }
    assert_eq!(server.session_setups(), 1);
    let most = server.most_delayed_at_once();
    assert!((1..=2).contains(&most), "{most} requests held at once");
}
