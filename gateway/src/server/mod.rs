//! The HTTP side: axum over hyper on a TCP listener, every path to [`handler::answer`],
//! tower-http's trace layer, and a graceful shutdown (Ctrl-C or SIGTERM: the listener
//! closes, requests in flight finish).

pub mod country;
pub mod forwarded;
pub mod handler;
pub mod limit;
pub mod observe;
pub mod ops;
pub mod tls;

use std::borrow::Cow;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderName, HeaderValue, StatusCode, Version};
use axum::response::Response;
use axum::Router;
use tokio::net::TcpListener;
use tower_http::trace::{DefaultOnFailure, TraceLayer};

use crate::redirect::Answer;
use crate::upstream::Resolution;
pub use handler::Incoming;
pub use ops::{metrics_router, Ops, HEALTH_PATH, METRICS_PATH};

/// The state of every request.
#[derive(Debug, Clone)]
struct Shared {
    resolution: Arc<Resolution>,
}

/// The largest request body read (a POST form).
pub const MAX_BODY: usize = 64 * 1024;

/// The router: every method and path to the proxy (default operator's settings).
pub fn router(resolution: Arc<Resolution>) -> Router {
    router_with(resolution, Arc::new(Ops::default()))
}

/// The router: [`HEALTH_PATH`], then every method and path to the proxy, under the
/// operator's settings.
pub fn router_with(resolution: Arc<Resolution>, ops: Arc<Ops>) -> Router {
    let router = Router::new()
        .fallback(serve_one)
        .with_state(Shared { resolution })
        .layer(axum::middleware::from_fn_with_state(ops, ops::observe));
    // tower-http's request traces only when its DEBUG events are on (`RUST_LOG=
    // tower_http=debug`, read when the router is made): otherwise the layer costs every
    // request for nothing (BENCHMARKS.md §18).
    if !tracing::enabled!(target: "tower_http::trace::on_request", tracing::Level::DEBUG) {
        return router;
    }
    // A 5xx here is the reference's answer to a handle (an unreadable 10320/loc, say), not
    // a failure of the gateway: traced at DEBUG with the rest.
    router.layer(
        TraceLayer::new_for_http().on_failure(DefaultOnFailure::new().level(tracing::Level::DEBUG)),
    )
}

async fn serve_one(
    State(shared): State<Shared>,
    ConnectInfo(Peer(peer)): ConnectInfo<Peer>,
    request: Request,
) -> Response {
    let (mut parts, body) = request.into_parts();
    // Taken, not copied: nothing after the handler reads it.
    let info = parts.extensions.remove::<ops::ClientInfo>();
    let (client, match_address, geoip, base, local) = match info {
        Some(c) => (c.client, c.match_address, c.geoip, c.base, c.local),
        None => (peer.ip(), false, None, None, None),
    };
    let local = local.unwrap_or(peer);
    // Most requests have no body (a GET): nothing to read then.
    let body: Bytes = if axum::body::HttpBody::size_hint(&body).exact() == Some(0) {
        Bytes::new()
    } else {
        axum::body::to_bytes(body, MAX_BODY)
            .await
            .unwrap_or_default()
    };
    let incoming = Incoming {
        method: parts.method.as_str().to_owned(),
        path: parts.uri.path().to_owned(),
        query: parts.uri.query().map(str::to_owned),
        http10: parts.version <= Version::HTTP_10,
        headers: parts
            .headers
            .iter()
            .map(|(k, v)| {
                let value = match v.to_str() {
                    Ok(text) => text.to_owned(),
                    Err(_) => String::from_utf8_lossy(v.as_bytes()).into_owned(),
                };
                (k.as_str().to_owned(), value)
            })
            .collect(),
        body: body.to_vec(),
        client,
        match_address,
        geoip,
        local,
        base,
    };
    to_response(handler::answer(&shared.resolution, &incoming).await)
}

/// An [`Answer`] as an HTTP response (a header that is no valid HTTP header is left out, and
/// so are those past the bound of `http`'s header map).
pub fn to_response(answer: Answer) -> Response {
    let mut response = Response::new(Body::from(answer.body));
    *response.status_mut() =
        StatusCode::from_u16(answer.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let headers = response.headers_mut();
    // Room for them all at once, and for the `Content-Length` axum adds: grown one by one,
    // the map was 1,600 instructions a redirect. `try_`: a handle's `10320/headers` and
    // `10320/links` make as many headers as it lists, and past the map's bound (about
    // 24,000) `reserve` and `append` panic; the headers beyond it are left out.
    let _ = headers.try_reserve(answer.headers.len() + 1);
    for (name, value) in answer.headers {
        // The answer's text becomes the value's bytes: no copy (a text written in the code
        // is used where it is).
        let value = match value {
            Cow::Borrowed(text) => {
                HeaderValue::from_maybe_shared(Bytes::from_static(text.as_bytes()))
            }
            Cow::Owned(text) => HeaderValue::try_from(text),
        };
        if let (Ok(n), Ok(v)) = (HeaderName::from_bytes(name.as_bytes()), value) {
            if headers.try_append(n, v).is_err() {
                break;
            }
        }
    }
    response
}

/// Serves on `listener` until `shutdown` completes, then lets the requests in flight
/// finish.
pub async fn serve(
    listener: TcpListener,
    resolution: Arc<Resolution>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    serve_with(listener, resolution, Arc::new(Ops::default()), shutdown).await
}

/// The client's socket address, as a connection of either listener gives it.
#[derive(Debug, Clone, Copy)]
pub struct Peer(pub SocketAddr);

impl axum::extract::connect_info::Connected<axum::serve::IncomingStream<'_, TcpListener>> for Peer {
    fn connect_info(stream: axum::serve::IncomingStream<'_, TcpListener>) -> Peer {
        Peer(*stream.remote_addr())
    }
}

impl axum::extract::connect_info::Connected<axum::serve::IncomingStream<'_, tls::TlsListener>>
    for Peer
{
    fn connect_info(stream: axum::serve::IncomingStream<'_, tls::TlsListener>) -> Peer {
        Peer(*stream.remote_addr())
    }
}

/// [`serve`] under the operator's settings ([`Ops`]); HTTPS when `tls` is given (see
/// [`tls::acceptor`]).
pub async fn serve_with(
    listener: TcpListener,
    resolution: Arc<Resolution>,
    ops: Arc<Ops>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    serve_listener(listener, None, resolution, ops, shutdown).await
}

/// [`serve_with`], over TLS when `tls` is given.
pub async fn serve_listener(
    listener: TcpListener,
    tls: Option<tokio_rustls::TlsAcceptor>,
    resolution: Arc<Resolution>,
    ops: Arc<Ops>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let local = listener.local_addr()?;
    if ops.limits() {
        every(&ops, std::time::Duration::from_secs(60), Ops::forget_idle);
    }
    if ops.logs_to_file() {
        // The access log's lines reach the file within a second (and when the server stops).
        every(&ops, std::time::Duration::from_secs(1), Ops::flush_log);
    }
    let _ = ops.local.set(local);
    let flush_at_end = ops.clone();
    let make = router_with(resolution, ops).into_make_service_with_connect_info::<Peer>();
    let served = match tls {
        Some(acceptor) => {
            axum::serve(tls::TlsListener::new(listener, acceptor)?, make)
                .with_graceful_shutdown(shutdown)
                .await
        }
        None => {
            axum::serve(listener, make)
                .with_graceful_shutdown(shutdown)
                .await
        }
    };
    flush_at_end.flush_log();
    served
}

/// Runs `work` on the operator's state every `period` while the server keeps it.
fn every(ops: &Arc<Ops>, period: std::time::Duration, work: fn(&Ops)) {
    let weak = Arc::downgrade(ops);
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(period);
        loop {
            tick.tick().await;
            match weak.upgrade() {
                Some(ops) => work(&ops),
                None => break,
            }
        }
    });
}

/// Completes on Ctrl-C or (on Unix) SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = term => {},
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_handle_with_very_many_headers_is_answered() {
        // A handle's 10320/headers and 10320/links make one header each: as many as a
        // 256 KB answer can list, the same name or all different.
        let mut same = Answer::new(302).header("Location", "https://a.example/");
        for _ in 0..30_000 {
            same = same.header("Link", "<https://l.example/>; rel=\"x\"");
        }
        let r = to_response(same);
        assert_eq!(r.status(), 302);
        assert_eq!(r.headers()["location"], "https://a.example/");
        let mut distinct = Answer::new(302);
        for i in 0..40_000 {
            distinct = distinct.header(format!("X-{i}"), "1");
        }
        let r = to_response(distinct);
        assert_eq!(r.headers()["x-0"], "1");
        assert!(
            r.headers().len() < 40_000,
            "the map's bound holds the rest out"
        );
    }
}
