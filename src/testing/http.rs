//! The test server's HTTP side (and HTTPS side), each on a port of its own: the native
//! protocol over HTTP (`POST /<handle>`, PROTOCOL.md §8.3: resolution and administration)
//! with the same answers and faults as UDP and TCP, the handle.net REST API
//! (`GET /api/handles/...`, [`super::rest`]; `PUT` and `DELETE`, [`super::rest_write`]), and
//! RFC 2169 URN resolution (`GET /uri-res/...`, [`super::uri_res`]).
//! The routes are pure functions returning [`HttpReply`], so each is tested without a
//! socket.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper::{Method, Request, Response};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tracing::debug;

use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio_rustls::TlsAcceptor;

use super::faults::Faults;
use super::http_reply::HttpReply;
use super::key::TestKey;
use super::respond::protocol_error;
use super::rest_write::RestWrite;
use crate::transport::http::HDL_MIME_TYPE;
use crate::wire::json::max_json_len;
use crate::wire::{Limits, Message, ENVELOPE_LEN};
use tokio_util::sync::CancellationToken;

/// Longest an HTTP connection may live on the server.
const CONNECTION_LIMIT: Duration = Duration::from_secs(120);

/// TLS settings of an HTTPS side: a self-signed certificate (for `localhost`) carrying
/// the server's own key, as handle servers make theirs, so that a client can pin it to the
/// key in the server's HS_SITE record.
pub(super) fn tls_acceptor(key: &TestKey) -> std::io::Result<TlsAcceptor> {
    let invalid = |e: &dyn std::fmt::Display| {
        std::io::Error::new(std::io::ErrorKind::InvalidInput, format!("https: {e}"))
    };
    let pkcs8 = key.pkcs8_der().map_err(|e| invalid(&e))?;
    let der = PrivatePkcs8KeyDer::from(pkcs8.clone());
    let pair = rcgen::KeyPair::from_pkcs8_der_and_sign_algo(&der, &rcgen::PKCS_RSA_SHA256)
        .map_err(|e| invalid(&e))?;
    let cert = rcgen::CertificateParams::new(vec!["localhost".to_string()])
        .and_then(|p| p.self_signed(&pair))
        .map_err(|e| invalid(&e))?;
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| invalid(&e))?
    .with_no_client_auth()
    .with_single_cert(
        vec![cert.der().clone()],
        PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(pkcs8)),
    )
    .map_err(|e| invalid(&e))?;
    Ok(TlsAcceptor::from(Arc::new(config)))
}

/// What the HTTP side needs of the server it belongs to (the server implements it; this
/// module does not know the server's state).
pub(super) trait Backend: Send + Sync + 'static {
    /// Counts one HTTP request.
    fn count(&self);
    /// The faults in force, if any.
    fn faults(&self) -> Option<Faults>;
    /// Decode limits of requests.
    fn limits(&self) -> Limits;
    /// Writes the native answer to `request` into `out` (as over UDP and TCP).
    fn respond(&self, request: &Message, out: &mut BytesMut);
    /// Decodes a native request (envelope ‖ message), decrypting one sent encrypted in a
    /// session.
    fn decode(&self, frame: Bytes) -> Result<Message, String>;
    /// Writes the server's refusal of `request` into `out` when its own record does not list
    /// the interface it came in on (HTTP, or HTTPS when `secure`) for a request of its kind;
    /// false (nothing written) when the request is taken.
    fn refuse(&self, request: &Message, secure: bool, out: &mut BytesMut) -> bool;
    /// The REST API's answer to `GET target` (429 when the faults say so).
    fn rest(&self, target: &str) -> HttpReply;
    /// The REST API's answer to a `PUT` or `DELETE`.
    fn rest_write(&self, write: &RestWrite<'_>) -> HttpReply;
    /// The RFC 2169 resolver's answer to `GET target`.
    fn uri_res(&self, target: &str) -> HttpReply;
    /// Cancelled when the server stops.
    fn stop(&self) -> CancellationToken;
}

pub(super) async fn accept<B: Backend>(
    state: Arc<B>,
    listener: TcpListener,
    tls: Option<TlsAcceptor>,
) {
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(e) => {
                debug!(error = %e, "test server http accept error");
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        let state = state.clone();
        let tls = tls.clone();
        // Credentials go over HTTPS, or over plain HTTP from loopback (the tests' clients).
        let secure = tls.is_some();
        let credentials_allowed = secure || peer.ip().is_loopback();
        tokio::spawn(async move {
            let stop = state.stop();
            let work = async move {
                match tls {
                    Some(tls) => match tls.accept(stream).await {
                        Ok(stream) => connection(state, stream, secure, credentials_allowed).await,
                        Err(e) => debug!(error = %e, "test server tls handshake failed"),
                    },
                    None => connection(state, stream, secure, credentials_allowed).await,
                }
            };
            stop.run_until_cancelled(tokio::time::timeout(CONNECTION_LIMIT, work))
                .await;
        });
    }
}

/// Serves HTTP/1.1 on one connection (`secure`: over TLS).
async fn connection<B: Backend, S>(
    state: Arc<B>,
    stream: S,
    secure: bool,
    credentials_allowed: bool,
) where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let service = service_fn(move |request| {
        let state = state.clone();
        async move { Ok::<_, Infallible>(serve(&*state, request, secure, credentials_allowed).await) }
    });
    let _ = hyper::server::conn::http1::Builder::new()
        .serve_connection(TokioIo::new(stream), service)
        .await;
}

/// One HTTP request: faults first, then the route.
async fn serve<B: Backend>(
    state: &B,
    request: Request<Incoming>,
    secure: bool,
    credentials_allowed: bool,
) -> Response<Full<Bytes>> {
    state.count();
    if let Some(f) = state.faults() {
        if f.silent || f.block_http {
            // Hold the request until the client gives up (or the connection limit).
            tokio::time::sleep(CONNECTION_LIMIT).await;
        }
        if !f.delay.is_zero() {
            tokio::time::sleep(f.delay).await;
        }
    }
    let target = request
        .uri()
        .path_and_query()
        .map_or("/", |p| p.as_str())
        .to_string();
    let method = request.method().clone();
    let reply = if method == Method::POST {
        let cap = ENVELOPE_LEN + state.limits().max_message_length;
        match Limited::new(request.into_body(), cap).collect().await {
            Ok(body) => native(state, body.to_bytes(), secure),
            Err(_) => HttpReply::new(413, "text/plain", "request body too large"),
        }
    } else if (method == Method::PUT || method == Method::DELETE) && target.starts_with("/api/") {
        let header = |name| {
            request
                .headers()
                .get(name)
                .map(|v: &hyper::header::HeaderValue| v.as_bytes().to_vec())
        };
        let content_type =
            header(hyper::header::CONTENT_TYPE).map(|v| String::from_utf8_lossy(&v).into_owned());
        let authorization = header(hyper::header::AUTHORIZATION);
        let cap = max_json_len(&state.limits());
        match Limited::new(request.into_body(), cap).collect().await {
            Ok(body) => state.rest_write(&RestWrite {
                method: method.as_str(),
                target: &target,
                content_type: content_type.as_deref(),
                authorization: authorization.as_deref(),
                body: &body.to_bytes(),
                credentials_allowed,
            }),
            Err(_) => HttpReply::new(413, "text/plain", "request body too large"),
        }
    } else if method != Method::GET {
        HttpReply::new(
            405,
            "text/plain",
            "GET or POST (PUT and DELETE under /api/)",
        )
    } else if target.starts_with("/api/") {
        state.rest(&target)
    } else if target.starts_with("/uri-res/") {
        state.uri_res(&target)
    } else {
        HttpReply::new(404, "text/plain", "not served here")
    };
    let mut response = Response::builder().status(reply.status);
    if let Some(content_type) = reply.content_type {
        response = response.header(hyper::header::CONTENT_TYPE, content_type);
    }
    for (name, value) in &reply.headers {
        response = response.header(*name, value);
    }
    response
        .body(Full::new(reply.body))
        .unwrap_or_else(|_| Response::new(Full::new(Bytes::new())))
}

/// `POST /<handle>`: the body is a native request; the answer is the one UDP and TCP give,
/// with status 200 (an undecodable request gets the server's error answer, as over TCP; a
/// request of a kind the server's record does not list this interface for, its refusal).
fn native<B: Backend>(state: &B, body: Bytes, secure: bool) -> HttpReply {
    let mut out = BytesMut::new();
    match state.decode(body) {
        Ok(request) if state.refuse(&request, secure, &mut out) => {}
        Ok(request) => state.respond(&request, &mut out),
        Err(e) => protocol_error(&e, &mut out),
    }
    HttpReply::new(200, HDL_MIME_TYPE, out.freeze())
}
