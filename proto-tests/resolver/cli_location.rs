//! `resolve --location`: the URL the handle.net proxy would redirect to, HS_ALIAS followed
//! first, against the sample store (`fixtures/testserver/handles.json`).

use crate::support::examples::{example, run, sample_server, status, stderr};

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn location_follows_aliases_and_chooses_as_the_proxy() {
    let resolve = example("resolve");
    let server = sample_server().await;
    let root = server.addr().to_string();
    let args = |extra: &[&str]| {
        let mut a = vec!["--root".to_string(), root.clone(), "--location".into()];
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    // One identifier: the URL alone. 20.500.1/alias names 20.500.1/1 (its URL value, the
    // legacy location).
    let o = run(&resolve, args(&["20.500.1/alias"])).await;
    assert_eq!(
        (status(&o), stdout(&o)),
        (0, "https://example.org/landing/1\n".into()),
        "{}",
        stderr(&o)
    );
    // 20.500.1/mirrors: its 10320/loc weighs https://example.org/a 1 and the mirror 0.
    let o = run(
        &resolve,
        args(&["--locatt", "view:json", "20.500.1/mirrors"]),
    )
    .await;
    assert_eq!(stdout(&o), "https://example.org/a\n");
    // Several: INPUT<TAB>URL in order; a failure keeps its line and its exit status, and
    // says why on stderr.
    let o = run(
        &resolve,
        args(&[
            "20.500.1/mirrors",
            "20.500.1/nope",
            "20.500.1/loop-a",
            "20.500.1/alias",
        ]),
    )
    .await;
    assert_eq!(
        stdout(&o),
        "20.500.1/mirrors\thttps://example.org/a\n20.500.1/nope\t\n20.500.1/loop-a\t\n\
         20.500.1/alias\thttps://example.org/landing/1\n"
    );
    assert_eq!(status(&o), 3, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("20.500.1/nope: handle not found (100)"),
        "{}",
        stderr(&o)
    );
    assert!(stderr(&o).contains("alias loop"), "{}", stderr(&o));
    // --locatt without --location is a usage error.
    let o = run(
        &resolve,
        vec![
            "--root".into(),
            root.clone(),
            "--locatt".into(),
            "x".into(),
            "20.500.1/1".into(),
        ],
    )
    .await;
    assert_eq!(status(&o), 2);
}
