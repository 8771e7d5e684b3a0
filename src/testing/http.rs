//! The test server's HTTP side, on a port of its own: the native protocol over HTTP
//! (`POST /<handle>`, PROTOCOL.md §8.3), with the same answers and faults as UDP and TCP. The
//! routes are pure functions returning [`HttpReply`], so each is tested without a socket.

use std::convert::Infallible;
use std::sync::atomic::Ordering;
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

use super::http_reply::HttpReply;
use super::respond::protocol_error;
use super::server::State;
use crate::transport::http::HDL_MIME_TYPE;
use crate::wire::{Message, ENVELOPE_LEN};

/// Longest an HTTP connection may live on the server.
const CONNECTION_LIMIT: Duration = Duration::from_secs(120);

pub(super) async fn accept(state: Arc<State>, listener: TcpListener) {
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(e) => {
                debug!(error = %e, "test server http accept error");
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        let state = state.clone();
        tokio::spawn(async move {
            let stop = state.stop.clone();
            let service = service_fn(move |request| {
                let state = state.clone();
                async move { Ok::<_, Infallible>(serve(&state, request).await) }
            });
            let connection = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service);
            stop.run_until_cancelled(tokio::time::timeout(CONNECTION_LIMIT, connection))
                .await;
        });
    }
}

/// One HTTP request: faults first, then the route.
async fn serve(state: &State, request: Request<Incoming>) -> Response<Full<Bytes>> {
    state.http_requests.fetch_add(1, Ordering::Relaxed);
    if let Some(f) = state.faults.current() {
        if f.silent || f.block_http {
            // Hold the request until the client gives up (or the connection limit).
            tokio::time::sleep(CONNECTION_LIMIT).await;
        }
        if !f.delay.is_zero() {
            tokio::time::sleep(f.delay).await;
        }
    }
    let reply = if request.method() == Method::POST {
        let cap = ENVELOPE_LEN + state.limits.max_message_length;
        match Limited::new(request.into_body(), cap).collect().await {
            Ok(body) => native(state, body.to_bytes()),
            Err(_) => HttpReply::new(413, "text/plain", "request body too large"),
        }
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
/// with status 200 (an undecodable request gets the server's error answer, as over TCP).
fn native(state: &State, body: Bytes) -> HttpReply {
    let mut out = BytesMut::new();
    match Message::decode(body, &state.limits) {
        Ok(request) => state.respond(&request, &mut out),
        Err(e) => protocol_error(&e.to_string(), &mut out),
    }
    HttpReply::new(200, HDL_MIME_TYPE, out.freeze())
}
