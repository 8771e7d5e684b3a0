//! [`RestAdmin`](crate::RestAdmin): writes (and reads) through a handle server's REST API.

use std::sync::Arc;
use std::time::Duration;

use base64ct::{Base64, Encoding};
use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use serde_json::Value as Json;
use thiserror::Error;

use crate::ident::chars::HANDLE_PATH;
use crate::transport::addr::{BaseUrl, BaseUrlError};
use crate::transport::{Exchange, Fetched, HttpMethod, HttpSend, NetTransport, TransportError};
use crate::wire::json::{value_to_json, JsonError, RestAnswer};
use crate::wire::{HandleValue, Limits};

/// Most bytes of one answer (a record of thousands of values fits).
const MAX_ANSWER: usize = 4 << 20;
/// The default bound on one request, connect to last byte.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// What Python's `urllib.parse.quote` leaves as it is (pyhandle quotes the username so).
const QUOTE: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'_')
    .remove(b'.')
    .remove(b'-')
    .remove(b'~')
    .remove(b'/');

/// A write of the REST API that was not sent or got no answer in its JSON.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum RestAdminError {
    /// The base URL is not an `http(s)://host[:port][/path]` URL.
    #[error(transparent)]
    Url(#[from] BaseUrlError),
    /// [`RestAdmin::delete_values`] without an index (a `DELETE` without one deletes the
    /// handle): not sent.
    #[error("DELETE of no values of {handle}: give at least one index")]
    NoIndexes {
        /// The handle.
        handle: String,
    },
    /// The request got no answer (connection, TLS, timeout, a body over the cap).
    #[error("{method} {url} (handle {handle}): {error}")]
    Transport {
        /// `PUT` or `DELETE`.
        method: &'static str,
        /// The handle written.
        handle: String,
        /// The URL asked.
        url: String,
        /// What went wrong.
        error: Box<TransportError>,
    },
    /// The server answered with a body that is not the REST API's JSON (and a status other
    /// than 401, which comes without one).
    #[error("{method} {url} (handle {handle}): HTTP {status}, not the REST API's JSON: {error}")]
    Unreadable {
        /// `PUT` or `DELETE`.
        method: &'static str,
        /// The handle written.
        handle: String,
        /// The URL asked.
        url: String,
        /// The HTTP status.
        status: u16,
        /// Why the body does not read.
        error: String,
    },
}

/// The server's answer to one write: what pyhandle decides on.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RestReply {
    /// The HTTP status (200 or 201 for a success, 401 when the credentials are refused, ...).
    pub status: u16,
    /// The Handle protocol response code of the JSON (1 success, 100 handle not found, 101
    /// handle already exists, 200 values not found, 402 authentication needed, ...); `None`
    /// when the answer has no body (a 401).
    pub response_code: Option<u32>,
    /// The handle as the server names it.
    pub handle: Option<String>,
    /// The server's message of a failure.
    pub message: Option<String>,
    /// The URL asked.
    pub url: String,
    /// The JSON document as the server sent it (`None` without a body): for a `GET`, the
    /// record (`values`), what pyhandle returns.
    pub document: Option<Json>,
}

impl RestReply {
    /// True for a success: HTTP 200 or 201 with response code 1 (pyhandle's
    /// `handle_success`).
    pub fn is_success(&self) -> bool {
        matches!(self.status, 200 | 201) && self.response_code == Some(1)
    }
}

/// A handle's record read and its values written through a handle server's
/// REST API, as pyhandle does, for servers whose HTTP interface takes no native requests:
/// `GET {base}/api/handles/{handle}` (`?index=`, `?type=`, `?auth=true`), `PUT
/// {base}/api/handles/{handle}` with the body `{"values": [...]}` (the whole record, or with
/// `?index=` the values at those indexes), `?overwrite=true|false`; `DELETE` of the handle,
/// or with `?index=` of those values; `Authorization: Basic base64(urlencoded(INDEX:HANDLE):
/// secret)`. The reference server takes credentials over HTTPS only (over plain HTTP it
/// answers 403); its certificate is checked against the web PKI unless the user turns that
/// off ([`RestAdmin::verify_tls`], pyhandle's `HTTPS_verify=False`: handle servers' own
/// certificates are self-signed). [`Resolver`](crate::Resolver)'s proxy reads the same API
/// into records.
///
/// Every answer the server gives in the REST API's JSON is a [`RestReply`] (its HTTP status,
/// response code and message, the success as the failure); what is not an answer (the
/// network, a body that is not the JSON) is a [`RestAdminError`] that names the handle and
/// the URL.
///
/// ```no_run
/// use handle_resolver::RestAdmin;
/// use handle_resolver::wire::HandleValue;
/// # async fn run() -> Result<(), handle_resolver::RestAdminError> {
/// let admin = RestAdmin::new("https://127.0.0.1:8000", "300:0.NA/20.500.1", "secret")?;
/// let reply = admin
///     .put_handle("20.500.1/x", &[HandleValue::new(1, "URL", "https://example.org/")], false)
///     .await?;
/// assert!(reply.is_success(), "{reply:?}");
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct RestAdmin {
    base: String,
    authorization: Option<String>,
    verify_tls: bool,
    exchange: Arc<dyn Exchange>,
    timeout: Duration,
    limits: Limits,
}

impl std::fmt::Debug for RestAdmin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RestAdmin")
            .field("base", &self.base)
            .finish_non_exhaustive()
    }
}

impl RestAdmin {
    /// A writer to the REST API at `url` (`http(s)://host[:port][/path]`, the server's HTTP
    /// interface), authenticated as `identity` (`INDEX:HANDLE`) with the secret key `secret`
    /// (its HS_SECKEY value), over a transport of its own.
    pub fn new(url: &str, identity: &str, secret: &str) -> Result<Self, RestAdminError> {
        Self::with_exchange(url, identity, secret, Arc::new(NetTransport::new()))
    }

    /// As [`new`](Self::new), over `exchange`.
    pub fn with_exchange(
        url: &str,
        identity: &str,
        secret: &str,
        exchange: Arc<dyn Exchange>,
    ) -> Result<Self, RestAdminError> {
        let mut admin = Self::anonymous_with_exchange(url, exchange)?;
        admin.authorization = Some(basic_authorization(identity, secret));
        Ok(admin)
    }

    /// A client of the REST API at `url` without credentials (reads; a write is answered
    /// 401 or 403), over a transport of its own.
    pub fn anonymous(url: &str) -> Result<Self, RestAdminError> {
        Self::anonymous_with_exchange(url, Arc::new(NetTransport::new()))
    }

    /// As [`anonymous`](Self::anonymous), over `exchange`.
    pub fn anonymous_with_exchange(
        url: &str,
        exchange: Arc<dyn Exchange>,
    ) -> Result<Self, RestAdminError> {
        let base = BaseUrl::parse(url)?.as_str().to_string();
        Ok(Self {
            base,
            authorization: None,
            verify_tls: true,
            exchange,
            timeout: DEFAULT_TIMEOUT,
            limits: Limits::default(),
        })
    }

    /// Whether an `https://` server's certificate is checked against the web PKI (default
    /// `true`); `false` accepts any certificate, as pyhandle's `HTTPS_verify=False` does.
    pub fn verify_tls(mut self, verify: bool) -> Self {
        self.verify_tls = verify;
        self
    }

    /// Bounds each request (default 30 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The base URL, without a final `/`.
    pub fn base(&self) -> &str {
        &self.base
    }

    /// Creates `handle` with `values` (`PUT`, `overwrite=true|false`): an existing handle is
    /// replaced with `overwrite`, else refused (409, code 101).
    pub async fn put_handle(
        &self,
        handle: &str,
        values: &[HandleValue],
        overwrite: bool,
    ) -> Result<RestReply, RestAdminError> {
        self.put(handle, values, None, overwrite).await
    }

    /// Adds `values` to `handle`, replacing those at the same indexes with `overwrite` (`PUT`
    /// with an `index` per value, as pyhandle's modifications send them).
    pub async fn put_values(
        &self,
        handle: &str,
        values: &[HandleValue],
        overwrite: bool,
    ) -> Result<RestReply, RestAdminError> {
        let indexes: Vec<u32> = values.iter().map(|v| v.index).collect();
        self.put(handle, values, Some(&indexes), overwrite).await
    }

    /// Reads `handle` (`GET`, as pyhandle asks: `index=` and `type=` each, `auth=true`); the
    /// record is the reply's [`document`](RestReply::document).
    pub async fn get_handle(
        &self,
        handle: &str,
        indexes: &[u32],
        types: &[&str],
        auth: bool,
    ) -> Result<RestReply, RestAdminError> {
        let mut url = self.url(handle, indexes, None);
        let mut params: Vec<String> = types
            .iter()
            .map(|t| format!("type={}", utf8_percent_encode(t, QUOTE)))
            .collect();
        if auth {
            params.push("auth=true".into());
        }
        if !params.is_empty() {
            url.push(if indexes.is_empty() { '?' } else { '&' });
            url.push_str(&params.join("&"));
        }
        self.run(handle, self.request(HttpMethod::Get, url)).await
    }

    /// Deletes `handle` (`DELETE`).
    pub async fn delete_handle(&self, handle: &str) -> Result<RestReply, RestAdminError> {
        let url = self.url(handle, &[], None);
        self.run(handle, self.request(HttpMethod::Delete, url))
            .await
    }

    /// Removes the values at `indexes` of `handle` (`DELETE` with an `index` each; none is
    /// refused here, as it would delete the handle).
    pub async fn delete_values(
        &self,
        handle: &str,
        indexes: &[u32],
    ) -> Result<RestReply, RestAdminError> {
        if indexes.is_empty() {
            return Err(RestAdminError::NoIndexes {
                handle: handle.to_string(),
            });
        }
        let url = self.url(handle, indexes, None);
        self.run(handle, self.request(HttpMethod::Delete, url))
            .await
    }

    /// A request of `url` with the credentials and TLS setting.
    fn request(&self, method: HttpMethod, url: String) -> HttpSend {
        let send = HttpSend::new(method, url, "application/json", MAX_ANSWER)
            .with_verify_tls(self.verify_tls);
        match &self.authorization {
            Some(a) => send.with_authorization(a.clone()),
            None => send,
        }
    }

    async fn put(
        &self,
        handle: &str,
        values: &[HandleValue],
        indexes: Option<&[u32]>,
        overwrite: bool,
    ) -> Result<RestReply, RestAdminError> {
        let url = self.url(handle, indexes.unwrap_or_default(), Some(overwrite));
        let doc = serde_json::json!({ "values": values.iter().map(value_to_json).collect::<Vec<Json>>() });
        // A JSON value of strings, numbers and objects always serialises.
        let body = serde_json::to_vec(&doc).unwrap_or_default();
        let send = self
            .request(HttpMethod::Put, url)
            .with_body("application/json", body);
        self.run(handle, send).await
    }

    /// `{base}/api/handles/{handle}?index=..&overwrite=..` (the handle percent-encoded).
    fn url(&self, handle: &str, indexes: &[u32], overwrite: Option<bool>) -> String {
        let mut url = format!(
            "{}/api/handles/{}",
            self.base,
            utf8_percent_encode(handle, HANDLE_PATH)
        );
        let mut params: Vec<String> = indexes.iter().map(|i| format!("index={i}")).collect();
        if let Some(o) = overwrite {
            params.push(format!("overwrite={o}"));
        }
        if !params.is_empty() {
            url.push('?');
            url.push_str(&params.join("&"));
        }
        url
    }

    async fn run(&self, handle: &str, send: HttpSend) -> Result<RestReply, RestAdminError> {
        let method = send.method.as_str();
        let failed = |error| RestAdminError::Transport {
            method,
            handle: handle.to_string(),
            url: send.url.clone(),
            error: Box::new(error),
        };
        let fetched = tokio::time::timeout(self.timeout, self.exchange.send(&send))
            .await
            .map_err(|_| failed(TransportError::Timeout))?
            .map_err(failed)?;
        self.reply(method, handle, &send.url, fetched)
    }

    fn reply(
        &self,
        method: &'static str,
        handle: &str,
        url: &str,
        fetched: Fetched,
    ) -> Result<RestReply, RestAdminError> {
        let mut reply = RestReply {
            status: fetched.status,
            response_code: None,
            handle: None,
            message: None,
            url: url.to_string(),
            document: None,
        };
        if fetched.body.is_empty() && fetched.status == 401 {
            return Ok(reply);
        }
        let unreadable = |error: String| RestAdminError::Unreadable {
            method,
            handle: handle.to_string(),
            url: url.to_string(),
            status: fetched.status,
            error,
        };
        if !fetched.has_media_type("application/json") {
            let got = fetched.content_type.as_deref().unwrap_or("none");
            return Err(unreadable(format!("Content-Type {got}")));
        }
        let document: Json =
            serde_json::from_slice(&fetched.body).map_err(|e| unreadable(e.to_string()))?;
        let answer = RestAnswer::from_json(&document, &self.limits)
            .map_err(|e: JsonError| unreadable(e.to_string()))?;
        reply.response_code = Some(answer.response_code);
        reply.handle = answer.handle;
        reply.message = answer.message;
        reply.document = Some(document);
        Ok(reply)
    }
}

/// `Basic base64(quote(identity):secret)`, as pyhandle makes it.
fn basic_authorization(identity: &str, secret: &str) -> String {
    let user = utf8_percent_encode(identity, QUOTE).to_string();
    format!(
        "Basic {}",
        Base64::encode_string(format!("{user}:{secret}").as_bytes())
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_and_urls_are_as_pyhandle_sends_them() {
        // pyhandle: base64(quote("300:21.T1/USER") + ":" + password).
        let auth = basic_authorization("300:21.T1/USER", "pw");
        assert_eq!(
            auth,
            format!("Basic {}", Base64::encode_string(b"300%3A21.T1/USER:pw"))
        );
        let a = RestAdmin::new("http://127.0.0.1:8000/", "300:21.T1/USER", "pw").unwrap();
        assert_eq!(a.base(), "http://127.0.0.1:8000");
        assert_eq!(
            a.url("21.T1/x y", &[2, 5], Some(true)),
            "http://127.0.0.1:8000/api/handles/21.T1/x%20y?index=2&index=5&overwrite=true"
        );
        assert_eq!(
            a.url("21.T1/x", &[], None),
            "http://127.0.0.1:8000/api/handles/21.T1/x"
        );
        assert!(RestAdmin::new("ftp://x", "300:a/b", "pw").is_err());
    }
}
