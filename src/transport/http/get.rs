//! HTTP GETs ([`HttpGet`]) and the REST API's PUTs and DELETEs ([`HttpSend`]) through one
//! pooled client (keep-alive matters for a REST proxy answering thousands of requests):
//! redirects are answers, the body is capped, TLS is checked against the web PKI.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::header::{
    ACCEPT, AUTHORIZATION, CONTENT_LENGTH, CONTENT_TYPE, LOCATION, RETRY_AFTER, USER_AGENT,
};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;

use super::super::error::{HttpError, TransportError};
use super::super::exchange::{Fetched, HttpGet, HttpSend};
use super::native::read_capped;
use super::tls;

type Connector = hyper_rustls::HttpsConnector<HttpConnector>;

/// The pooled GET client of a transport.
#[derive(Debug, Clone)]
pub(crate) struct Getter {
    client: Client<Connector, Full<Bytes>>,
    /// The same, accepting any certificate: for an [`HttpSend`] that asks for it.
    unverified: Client<Connector, Full<Bytes>>,
}

/// Longest wait for a connection to open.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// Idle pooled connections are closed after this long.
const IDLE_TIMEOUT: Duration = Duration::from_secs(30);

impl Getter {
    /// A client (no connection is opened until the first GET).
    pub(crate) fn new() -> Result<Getter, TransportError> {
        Ok(Getter {
            client: client((*tls::web_pki()?).clone()),
            unverified: client((*tls::unverified()?).clone()),
        })
    }

    /// One GET.
    pub(crate) async fn get(&self, get: &HttpGet) -> Result<Fetched, TransportError> {
        let uri = checked_uri(&get.url)?;
        let request = hyper::Request::get(uri)
            .header(ACCEPT, get.accept)
            .header(USER_AGENT, AGENT)
            .body(Full::new(Bytes::new()))
            .map_err(|e| HttpError::Client(format!("request: {e}")))?;
        request_on(&self.client, request, get.max_body).await
    }

    /// One request of a server's REST API (`PUT`, `DELETE`, `GET`).
    pub(crate) async fn send(&self, send: &HttpSend) -> Result<Fetched, TransportError> {
        let uri = checked_uri(&send.url)?;
        let mut request = hyper::Request::builder()
            .method(send.method.as_str())
            .uri(uri)
            .header(ACCEPT, send.accept)
            .header(USER_AGENT, AGENT);
        if let Some(content_type) = send.content_type {
            request = request.header(CONTENT_TYPE, content_type);
        }
        if let Some(authorization) = &send.authorization {
            request = request.header(AUTHORIZATION, authorization.as_str());
        }
        let request = request
            .body(Full::new(send.body.clone()))
            .map_err(|e| HttpError::Client(format!("request: {e}")))?;
        let client = match send.verify_tls {
            true => &self.client,
            false => &self.unverified,
        };
        request_on(client, request, send.max_body).await
    }
}

/// A pooled client with the TLS settings `config`.
fn client(config: rustls::ClientConfig) -> Client<Connector, Full<Bytes>> {
    let mut http = HttpConnector::new();
    http.enforce_http(false);
    http.set_connect_timeout(Some(CONNECT_TIMEOUT));
    http.set_nodelay(true);
    let connector = hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(config)
        .https_or_http()
        .enable_http1()
        .wrap_connector(http);
    Client::builder(TokioExecutor::new())
        .pool_idle_timeout(IDLE_TIMEOUT)
        .build(connector)
}

/// Sends `request` on `client` and reads the answer, its body capped at `max_body`.
async fn request_on(
    client: &Client<Connector, Full<Bytes>>,
    request: hyper::Request<Full<Bytes>>,
    max_body: usize,
) -> Result<Fetched, TransportError> {
    let response = client.request(request).await.map_err(client_error)?;
    let header = |name| {
        response
            .headers()
            .get(name)
            .and_then(|v: &hyper::header::HeaderValue| v.to_str().ok())
            .map(str::to_owned)
    };
    let declared = header(CONTENT_LENGTH).and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > max_body as u64) {
        return Err(TransportError::BodyTooLarge { limit: max_body });
    }
    let mut fetched = Fetched::new(response.status().as_u16(), Bytes::new());
    fetched.content_type = header(CONTENT_TYPE);
    fetched.location = header(LOCATION);
    fetched.retry_after = header(RETRY_AFTER);
    fetched.body = read_capped(response.into_body(), max_body).await?;
    Ok(fetched)
}

/// The `User-Agent` sent.
const AGENT: &str = concat!("handle-resolver/", env!("CARGO_PKG_VERSION"));

/// `url` as a URI, when it is one of `http` or `https`.
fn checked_uri(url: &str) -> Result<hyper::Uri, TransportError> {
    let uri: hyper::Uri =
        url.parse()
            .map_err(|e: hyper::http::uri::InvalidUri| HttpError::Url {
                url: url.to_string(),
                reason: e.to_string(),
            })?;
    if !matches!(uri.scheme_str(), Some("http" | "https")) {
        return Err(HttpError::Url {
            url: url.to_string(),
            reason: "not http or https".into(),
        }
        .into());
    }
    Ok(uri)
}

fn client_error(e: hyper_util::client::legacy::Error) -> TransportError {
    if e.is_connect() {
        let text = std::error::Error::source(&e)
            .map(ToString::to_string)
            .unwrap_or_else(|| e.to_string());
        let kind = if text.contains("timed out") {
            return TransportError::Timeout;
        } else if text.contains("refused") {
            std::io::ErrorKind::ConnectionRefused
        } else {
            std::io::ErrorKind::Other
        };
        return TransportError::Io(kind, text);
    }
    HttpError::Client(e.to_string()).into()
}
