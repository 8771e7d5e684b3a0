//! RTT samples for site choice follow Karn's rule: an answer that took more than one
//! transmission (it may belong to any of them) is not an RTT sample (the SRTT only rises to the
//! first retransmission wait, which passed without an answer); the attempt's trace shows how
//! many transmissions it took, with its time counted from the first one.

use std::sync::Arc;
use std::time::Duration;

use handle_resolver::testing::{Faults, TestNetwork};
use handle_resolver::transport::NetTransport;
use handle_resolver::wire::{HandleValue, ResponseCode};
use handle_resolver::{AttemptOutcome, ResolveError, Resolver};

use super::mock::{addr, error_answer, values_answer, MockNet, Reply};

#[tokio::test(start_paused = true)]
async fn retransmitted_answers_are_traced_but_not_rtt_samples() {
    let net = MockNet::new();
    let server = addr(60);
    let delay = Arc::new(std::sync::Mutex::new(Duration::from_millis(700)));
    let d = delay.clone();
    net.serve(
        server,
        Arc::new(move |req, _| {
            let values = vec![HandleValue::new(1, "URL", "http://x/")];
            Reply::After(*d.lock().unwrap(), values_answer(req, values))
        }),
    );
    let r = Resolver::builder()
        .server(server)
        .exchange(net.clone())
        .cache_size(0)
        .build()
        .unwrap();
    // Retransmitted at 500 ms, answered at 700 ms: two transmissions, no sample (the SRTT
    // becomes the 500 ms that passed without an answer, not 700 ms).
    let rec = r.resolve("20.500.1/slow").await.unwrap();
    let hop = rec.attempts.last().unwrap();
    assert_eq!(hop.outcome, AttemptOutcome::Response(1.into()));
    assert_eq!(hop.transmissions, 2);
    assert_eq!(hop.rtt, Duration::from_millis(700));
    assert!(hop.to_string().contains("(2 transmissions)"), "{hop}");
    assert_eq!(r.server_rtt(server), Some(Duration::from_millis(500)));
    // Answered before any retransmission: a sample (3/4 × 500 + 1/4 × 40, but for a decay
    // of a few parts per thousand over the 40 ms).
    *delay.lock().unwrap() = Duration::from_millis(40);
    let rec = r.resolve("20.500.1/fast").await.unwrap();
    assert_eq!(rec.attempts.last().unwrap().transmissions, 1);
    let srtt = r.server_rtt(server).unwrap();
    assert!(
        srtt <= Duration::from_millis(385) && srtt > Duration::from_millis(384),
        "{srtt:?}"
    );
    // A later retransmitted answer is no sample either: 500 ms, not 1600 ms.
    *delay.lock().unwrap() = Duration::from_millis(1600);
    let rec = r.resolve("20.500.1/slower").await.unwrap();
    assert_eq!(rec.attempts.last().unwrap().transmissions, 3);
    assert_eq!(r.server_rtt(server), Some(Duration::from_millis(500)));
}

#[tokio::test(start_paused = true)]
async fn prompt_busy_or_error_answers_penalise_the_server() {
    for code in [
        ResponseCode::ServerBusy,
        ResponseCode::Error,
        ResponseCode::ServerNotResponsible,
    ] {
        let net = MockNet::new();
        let server = addr(61);
        net.serve(
            server,
            Arc::new(move |req, _| Reply::Answer(error_answer(req, code))),
        );
        let r = Resolver::builder()
            .server(server)
            .exchange(net.clone())
            .build()
            .unwrap();
        let e = r.resolve("20.500.1/busy").await.unwrap_err();
        assert!(
            matches!(
                e,
                ResolveError::Server { .. } | ResolveError::PrefixNotServed { .. }
            ),
            "{e}"
        );
        // Answered within 2 ms, yet no better than a silent server for the next site choice.
        let srtt = r.server_rtt(server).unwrap();
        assert!(srtt >= Duration::from_secs(1), "{code}: {srtt:?}");
    }
}

#[tokio::test]
async fn the_real_transport_counts_transmissions() {
    let net = TestNetwork::builder().build().await.unwrap();
    let transport = NetTransport::new();
    let r = Resolver::builder()
        .root_sites([net.root_site()])
        .exchange(Arc::new(transport.clone()))
        .max_parallel(1)
        .build()
        .unwrap();
    let h = "20.500.1/karn";
    net.insert(h, vec![HandleValue::new(1, "URL", "http://karn/")]);
    // Every server answers 700 ms late: the transport has retransmitted at 500 ms by then.
    net.set_faults(Faults {
        delay: Duration::from_millis(700),
        ..Faults::default()
    });
    let rec = r.resolve(h).await.unwrap();
    assert!(!rec.attempts.is_empty());
    for hop in &rec.attempts {
        assert!(hop.transmissions >= 2, "{hop}");
        assert!(hop.rtt >= Duration::from_millis(700), "{hop}");
        // Not the ambiguous RTT: the 500 ms first wait (slightly decayed since).
        let srtt = r.server_rtt(hop.server.unwrap()).unwrap();
        assert!(
            srtt <= Duration::from_millis(500) && srtt > Duration::from_millis(490),
            "{hop}: {srtt:?}"
        );
    }
    // Prompt answers are samples.
    net.set_faults(Faults::default());
    let h2 = "20.500.1/karn-2";
    net.insert(h2, vec![HandleValue::new(1, "URL", "http://karn2/")]);
    let rec = r.resolve(h2).await.unwrap();
    let hop = rec.attempts.last().unwrap();
    assert_eq!(hop.transmissions, 1, "{hop}");
    assert!(r.server_rtt(hop.server.unwrap()).unwrap() < Duration::from_millis(500));
    assert_eq!(transport.pending_count(), 0);
}
