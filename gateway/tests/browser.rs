//! The gateway seen in a real browser: headless Chromium, driven over WebDriver
//! (chromedriver), against the real `handle-gateway` binary on the bundled test network
//! (`handle_resolver::testing::TestNetwork`, its root given as `--root`), whose handles point
//! at a small HTTP server of the test's own. Every address is on loopback.
//!
//! It checks what a person sees: the values page (`?noredirect`) shows a table with one row
//! per value (its index, type and data); the links in that table work (the `URL` value's data
//! link, clicked, lands on the local target, and so do the type links of the reference's page,
//! through the gateway to `0.TYPE/<type>` handles the test network holds); opening a handle's
//! gateway URL lands on the local target (the redirect followed), and so does its alias.
//!
//! It needs Debian's `chromium` and `chromium-driver` (`.ci/run` installs them; the paths can
//! be changed with `HANDLE_GATEWAY_CHROMIUM` and `HANDLE_GATEWAY_CHROMEDRIVER`) and fails,
//! never skips, without them. `HANDLE_GATEWAY_SCREENSHOT=FILE` writes a PNG of the values page
//! (the one in gateway/README.md):
//!
//! ```sh
//! HANDLE_GATEWAY_SCREENSHOT=$PWD/gateway/docs/values-page.png \
//!     cargo test -p handle-gateway --test browser
//! ```
//!
//! Chromium runs with its background networking off and every host name mapped to "not
//! found" (`--host-resolver-rules`), a dead loopback proxy for anything not on loopback, and a
//! fresh profile in a temporary folder; the test never follows a link that is not on loopback.

use std::io::{BufRead, BufReader};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder, Locator};
use handle_resolver::testing::TestNetwork;
use handle_resolver::wire::HandleValue;
use serde_json::{json, Value as Json};

const PREFIX: &str = "20.500.39";
/// 2026-01-01 00:00:00Z, the values' timestamp (the page shows it).
const TIMESTAMP: u32 = 1_767_225_600;

fn binary(env: &str, default: &str, package: &str) -> PathBuf {
    let path = std::env::var_os(env).map_or_else(|| PathBuf::from(default), PathBuf::from);
    assert!(
        path.is_file(),
        "the browser test needs {} (Debian package {package}: `apt-get install chromium \
         chromium-driver`, as .ci/run does; {env} names another path); it is missing",
        path.display()
    );
    path
}

/// A folder removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> TempDir {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir = std::env::temp_dir().join(format!(
            "handle-gateway-browser-{}-{nanos}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).expect("a temporary folder");
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A child process in a process group of its own; the whole group (chromedriver and the
/// Chromium it started) is killed when dropped, after a failure too.
struct Group {
    child: Child,
    name: &'static str,
}

impl Group {
    fn spawn(mut command: Command, name: &'static str) -> Group {
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let child = command
            .spawn()
            .unwrap_or_else(|e| panic!("{name} does not start: {e}"));
        Group { child, name }
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        #[cfg(unix)]
        {
            // The group id is the child's pid (process_group(0)): only what it started.
            let group = format!("-{}", self.child.id());
            let _ = Command::new("kill")
                .args(["-KILL", "--", &group])
                .stderr(Stdio::null())
                .status();
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The gateway binary on `127.0.0.1:0`, resolving from `root`.
fn start_gateway(root: SocketAddr) -> (Group, SocketAddr) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_handle-gateway"));
    command
        .args(["--listen", "127.0.0.1:0", "--root", &root.to_string()])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    let mut gateway = Group::spawn(command, "handle-gateway");
    let mut line = String::new();
    BufReader::new(gateway.child.stdout.take().expect("its stdout"))
        .read_line(&mut line)
        .expect("its banner");
    let addr = line
        .split("http://")
        .nth(1)
        .and_then(|rest| rest.split([',', ' ', '\n']).next())
        .and_then(|a| a.parse().ok())
        .unwrap_or_else(|| panic!("no listening address in {line:?}"));
    (gateway, addr)
}

/// chromedriver on a free loopback port, its log in `dir`.
fn start_chromedriver(driver: &Path, dir: &Path) -> (Group, u16) {
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let log = dir.join("chromedriver.log");
    let mut command = Command::new(driver);
    command
        .arg(format!("--port={port}"))
        .arg(format!("--log-path={}", log.display()))
        .arg("--allowed-ips=127.0.0.1")
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut group = Group::spawn(command, "chromedriver");
    let deadline = Instant::now() + Duration::from_secs(20);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        if let Ok(Some(exit)) = group.child.try_wait() {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            panic!("{} exited ({exit}) before listening:\n{text}", group.name);
        }
        assert!(
            Instant::now() < deadline,
            "chromedriver is not listening on 127.0.0.1:{port} after 20 s"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    (group, port)
}

/// The local target: an HTML page per path (its title and text name the path), every
/// request's path recorded.
async fn start_target() -> (SocketAddr, Arc<Mutex<Vec<String>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = seen.clone();
    let app = axum::Router::new().fallback(move |uri: axum::http::Uri| {
        let record = record.clone();
        async move {
            let path = uri.path().to_owned();
            record.lock().expect("the record").push(path.clone());
            axum::response::Html(format!(
                "<!DOCTYPE html><html><head><title>Local target {path}</title></head>\
                 <body><h1>Local target</h1><p id=\"path\">{path}</p></body></html>"
            ))
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("the target's port");
    let addr = listener.local_addr().expect("its address");
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (addr, seen)
}

fn value(index: u32, type_name: &'static str, data: String) -> HandleValue {
    let mut v = HandleValue::new(index, type_name, data);
    v.timestamp = TIMESTAMP;
    v
}

/// The handles: `page` (a URL), `several` (URL, DESC, EMAIL), `alias` (HS_ALIAS to `page`),
/// and on the root the `0.TYPE/<type>` handles the reference's type links name.
fn fill(network: &TestNetwork, target: SocketAddr) {
    network.insert(
        format!("{PREFIX}/page"),
        vec![value(1, "URL", format!("http://{target}/pages/one"))],
    );
    network.insert(
        format!("{PREFIX}/several"),
        vec![
            value(1, "URL", format!("http://{target}/pages/two")),
            value(2, "DESC", "A page of the browser test".into()),
            value(3, "EMAIL", "browser@example.org".into()),
        ],
    );
    network.insert(
        format!("{PREFIX}/alias"),
        vec![value(1, "HS_ALIAS", format!("{PREFIX}/page"))],
    );
    let root = network.root_store();
    root.home_prefix("0.TYPE");
    root.insert("0.NA/0.TYPE", vec![network.root.site_value(1)]);
    for t in ["URL", "DESC", "EMAIL", "HS_ALIAS"] {
        root.insert(
            format!("0.TYPE/{t}"),
            vec![value(1, "URL", format!("http://{target}/types/{t}"))],
        );
    }
}

/// The capabilities: headless Chromium, no network but loopback, a fresh profile.
fn capabilities(chromium: &Path, profile: &Path) -> serde_json::Map<String, Json> {
    let args = [
        "--headless".to_owned(),
        "--no-sandbox".to_owned(),
        "--disable-gpu".to_owned(),
        "--disable-dev-shm-usage".to_owned(),
        "--disable-quic".to_owned(),
        "--no-first-run".to_owned(),
        "--no-default-browser-check".to_owned(),
        "--disable-background-networking".to_owned(),
        "--disable-component-update".to_owned(),
        "--disable-sync".to_owned(),
        "--disable-extensions".to_owned(),
        "--disable-default-apps".to_owned(),
        "--disable-breakpad".to_owned(),
        "--disable-domain-reliability".to_owned(),
        "--disable-client-side-phishing-detection".to_owned(),
        "--metrics-recording-only".to_owned(),
        // No name resolves (the loopback address is kept), and what is not on loopback goes
        // to a proxy that is not there.
        "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1".to_owned(),
        "--proxy-server=http://127.0.0.1:9".to_owned(),
        "--window-size=1000,600".to_owned(),
        "--hide-scrollbars".to_owned(),
        format!("--user-data-dir={}", profile.display()),
    ];
    let caps = json!({
        "browserName": "chrome",
        "goog:chromeOptions": { "binary": chromium.display().to_string(), "args": args },
    });
    match caps {
        Json::Object(map) => map,
        _ => unreachable!("an object"),
    }
}

/// One row of the page's table: its cells' text and its links.
#[derive(Debug)]
struct Row {
    cells: Vec<String>,
    links: Vec<(String, String)>,
}

const READ_ROWS: &str = "return Array.from(document.querySelectorAll('table tr')).map(tr => ({\
     cells: Array.from(tr.cells).map(c => c.innerText.replace(/\\u00a0/g, ' ').trim()),\
     links: Array.from(tr.querySelectorAll('a[href]')).map(a => [a.innerText.trim(), a.href])\
     }));";

async fn rows(client: &Client) -> Vec<Row> {
    let got = client.execute(READ_ROWS, vec![]).await.expect("the rows");
    let text = |v: &Json| v.as_str().unwrap_or_default().to_owned();
    got.as_array()
        .into_iter()
        .flatten()
        .map(|r| Row {
            cells: r["cells"]
                .as_array()
                .into_iter()
                .flatten()
                .map(text)
                .collect(),
            links: r["links"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|l| (text(&l[0]), text(&l[1])))
                .collect(),
        })
        .collect()
}

async fn body_text(client: &Client) -> String {
    let body = client.find(Locator::Css("body")).await.expect("a body");
    body.text().await.expect("its text")
}

/// Waits until the browser is at `url` (a navigation may still be under way).
async fn wait_for_url(client: &Client, url: &str, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let now = client.current_url().await.expect("the URL");
        if now.as_str() == url {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{what}: the browser is at {now}, not {url}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The browser is on the local target's page for `path`, and the target saw the request.
async fn assert_on_target(
    client: &Client,
    target: SocketAddr,
    seen: &Mutex<Vec<String>>,
    path: &str,
    what: &str,
) {
    wait_for_url(client, &format!("http://{target}{path}"), what).await;
    let text = body_text(client).await;
    assert!(
        text.contains("Local target") && text.contains(path),
        "{what}: the page shows {text:?}"
    );
    assert_eq!(
        client.title().await.expect("a title"),
        format!("Local target {path}"),
        "{what}"
    );
    assert!(
        seen.lock().expect("the record").iter().any(|p| p == path),
        "{what}: the local target never saw {path}"
    );
}

struct Context {
    gateway: SocketAddr,
    target: SocketAddr,
    seen: Arc<Mutex<Vec<String>>>,
    screenshot: Option<PathBuf>,
}

async fn check(client: Client, cx: Context) {
    let (gw, target) = (cx.gateway, cx.target);
    let handle = format!("{PREFIX}/several");
    let page = format!("http://{gw}/{handle}?noredirect");
    client.goto(&page).await.expect("the values page");
    // A 1000 x 600 viewport (the window's size counts its frame too).
    let frame = client
        .execute("return window.outerHeight - window.innerHeight;", vec![])
        .await
        .expect("the frame's height")
        .as_u64()
        .unwrap_or(0);
    let height = u32::try_from(600 + frame).expect("a window height");
    client
        .set_window_size(1000, height)
        .await
        .expect("the size");
    if let Some(path) = &cx.screenshot {
        let png = client.screenshot().await.expect("a screenshot");
        std::fs::write(path, png).expect("the screenshot file");
        println!("screenshot of {page} written to {}", path.display());
    }

    // The table: the handle named, a row per value with its index, type and data.
    let text = body_text(&client).await;
    assert!(
        text.contains(&format!("Handle Values for: {handle}")),
        "the values page does not name the handle: {text:?}"
    );
    let rows = rows(&client).await;
    assert!(!rows.is_empty(), "the values page has no table: {text:?}");
    // Every image of the page loaded (the logo the page names is the gateway's own).
    let broken = client
        .execute(
            "return Array.from(document.images).filter(i => !i.complete || i.naturalWidth === 0).map(i => i.src);",
            vec![],
        )
        .await
        .expect("the images");
    assert_eq!(
        broken,
        serde_json::json!([]),
        "images of the values page that did not load"
    );
    let url = format!("http://{target}/pages/two");
    let values = [
        ("1", "URL", url.as_str()),
        ("2", "DESC", "A page of the browser test"),
        ("3", "EMAIL", "browser@example.org"),
    ];
    for (index, type_name, data) in values {
        let found = rows.iter().any(|r| {
            r.cells.len() >= 3
                && r.cells[0] == index
                && r.cells[1] == type_name
                && r.cells.last().is_some_and(|d| d == data)
        });
        assert!(
            found,
            "no row shows value {index} ({type_name}, {data:?}); the rows: {rows:#?}"
        );
    }
    let value_rows = rows
        .iter()
        .filter(|r| r.cells.len() >= 3 && r.cells[0].parse::<u32>().is_ok())
        .count();
    assert_eq!(value_rows, values.len(), "one row per value: {rows:#?}");

    // Its links: every one on loopback; each, clicked, lands on the local target.
    let links: Vec<(String, String)> = rows.iter().flat_map(|r| r.links.clone()).collect();
    assert!(
        links.iter().any(|(_, href)| *href == url),
        "the URL value's data is not a link to {url}: the table's links are {links:?}"
    );
    for (label, href) in &links {
        let on_loopback = [format!("http://{gw}/"), format!("http://{target}/")]
            .iter()
            .any(|base| href.starts_with(base.as_str()));
        assert!(
            on_loopback,
            "the table links {label:?} to {href}, neither the gateway nor the target"
        );
        let expected = if *href == url {
            "/pages/two".to_owned()
        } else if let Some(t) = href.strip_prefix(&format!("http://{gw}/0.TYPE/")) {
            format!("/types/{t}")
        } else {
            panic!("the table links {label:?} to {href}: not the value's URL nor a type link")
        };
        client.goto(&page).await.expect("the values page again");
        let xpath = format!("//table//a[@href][normalize-space(.)='{label}']");
        let candidates = client
            .find_all(Locator::XPath(&xpath))
            .await
            .expect("the links");
        let mut clicked = false;
        for a in candidates {
            if a.prop("href").await.expect("its href").as_deref() == Some(href) {
                a.click().await.expect("a click");
                clicked = true;
                break;
            }
        }
        assert!(clicked, "the link {label:?} to {href} is not on the page");
        let what = format!("the link {label:?} ({href}) clicked");
        assert_on_target(&client, target, &cx.seen, &expected, &what).await;
    }
    println!("{} links of the values page followed", links.len());

    // The handle's gateway URL: the redirect, followed.
    let seen_before = cx.seen.lock().expect("the record").len();
    client
        .goto(&format!("http://{gw}/{PREFIX}/page"))
        .await
        .expect("the handle's URL");
    let what = "the handle's gateway URL";
    assert_on_target(&client, target, &cx.seen, "/pages/one", what).await;
    assert!(cx.seen.lock().expect("the record").len() > seen_before);

    // The alias: 301 to the gateway's URL of the handle, then its redirect.
    client
        .goto(&format!("http://{gw}/{PREFIX}/alias"))
        .await
        .expect("the alias's URL");
    let what = "the alias's gateway URL";
    assert_on_target(&client, target, &cx.seen, "/pages/one", what).await;
}

#[test]
fn the_values_page_and_the_redirects_in_chromium() {
    let chromium = binary("HANDLE_GATEWAY_CHROMIUM", "/usr/bin/chromium", "chromium");
    let driver = binary(
        "HANDLE_GATEWAY_CHROMEDRIVER",
        "/usr/bin/chromedriver",
        "chromium-driver",
    );
    let screenshot = std::env::var_os("HANDLE_GATEWAY_SCREENSHOT").map(PathBuf::from);
    let dir = TempDir::new();
    let profile = dir.0.join("profile");

    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let (target, seen) = runtime.block_on(start_target());
    let network = runtime
        .block_on(TestNetwork::builder().prefixes([PREFIX]).build())
        .expect("the test network starts");
    fill(&network, target);
    let (_gateway, gateway) = start_gateway(network.root.addr());
    let (_driver, port) = start_chromedriver(&driver, &dir.0);

    runtime.block_on(async {
        let client = ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
            .capabilities(capabilities(&chromium, &profile))
            .connect(&format!("http://127.0.0.1:{port}"))
            .await
            .unwrap_or_else(|e| panic!("no Chromium session through chromedriver: {e}"));
        let cx = Context {
            gateway,
            target,
            seen,
            screenshot,
        };
        // The checks run as a task, so that the session is closed after a failure too.
        let outcome = tokio::spawn(check(client.clone(), cx)).await;
        let _ = client.close().await;
        if let Err(e) = outcome {
            match e.try_into_panic() {
                Ok(panic) => std::panic::resume_unwind(panic),
                Err(e) => panic!("the checks did not finish: {e}"),
            }
        }
    });
}
