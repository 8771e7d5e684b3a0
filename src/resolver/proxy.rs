//! [`Proxy`]: resolution through the REST API of a handle proxy (`GET
//! {base}/api/handles/{handle}?type=..&index=..`, the handle.net JSON) instead of the native
//! procedure: one GET per resolution through [`Exchange::fetch`], the JSON read into the same
//! values a native answer gives, the response codes into the same [`ResolveError`]s. HTTP
//! 429 and 503 are waited out as `Retry-After` says, at most [`MAX_RETRIES`] times and never
//! longer than [`MAX_RETRY_WAIT`] a time (the resolution's one deadline still bounds it all).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use percent_encoding::{utf8_percent_encode, AsciiSet};

use crate::ident::chars::HANDLE_PATH;
use tokio::time::Instant;

use crate::transport::addr::{BaseUrl, BaseUrlError};
use crate::transport::{Exchange, Fetched, HttpError, HttpGet, TransportError, TransportKind};
use crate::wire::json::RestAnswer;
use crate::wire::{HandleValue, Limits, ProtocolVersion, ResponseCode};

use super::ask::RequestSpec;
use super::error::ResolveError;
use super::record::{Attempt, AttemptOutcome, Rejection, Source};
use super::support::trace::{Recorded, Trace};

/// Most retries after a 429 or 503.
const MAX_RETRIES: u32 = 2;
/// Longest wait before one retry (a longer `Retry-After` is not waited out: the error is
/// returned at once).
const MAX_RETRY_WAIT: Duration = Duration::from_secs(5);
/// Most bytes of one REST answer (a record of thousands of values fits; a server that
/// sends more is cut off with an error).
const MAX_REST_BODY: usize = 4 << 20;

/// What is percent-encoded in a query parameter's value: what a path would, and `&`, `=`,
/// `+`, `/`.
const QUERY: &AsciiSet = &HANDLE_PATH.add(b'&').add(b'=').add(b'+').add(b'/');

/// A handle proxy's REST API.
#[derive(Clone)]
pub(crate) struct Proxy {
    /// `http(s)://host[:port][/path]`, without a trailing `/`.
    base: String,
    /// The same, as a URI: what an error names when a request's URL could not be made.
    base_uri: http::Uri,
    /// The proxy's address when the URL names one by an IP literal (for the trace and
    /// errors).
    addr: Option<SocketAddr>,
    exchange: Arc<dyn Exchange>,
    /// Bounds on what one answer may hold.
    limits: Limits,
}

impl std::fmt::Debug for Proxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Proxy").field("base", &self.base).finish()
    }
}

impl Proxy {
    /// A proxy at `url` (`http://` or `https://`, host, optional port and path; no query or
    /// fragment).
    pub(crate) fn new(
        url: &str,
        exchange: Arc<dyn Exchange>,
        limits: Limits,
    ) -> Result<Self, BaseUrlError> {
        let checked = BaseUrl::parse(url)?;
        let base_uri = checked.as_str().parse().map_err(|_| BaseUrlError {
            url: url.to_string(),
            reason: "it is not a URI",
        })?;
        Ok(Self {
            base: checked.as_str().to_string(),
            base_uri,
            addr: checked.literal_addr(),
            exchange,
            limits,
        })
    }

    /// The URL asked for `spec`, or why it cannot be made (a URI's parser refuses it).
    fn url(&self, spec: &RequestSpec) -> Result<http::Uri, ResolveError> {
        let text = self.url_text(spec);
        http::Uri::try_from(text.as_str()).map_err(|e| ResolveError::Proxy {
            url: Box::new(self.base_uri.clone()),
            error: HttpError::Url {
                url: text,
                reason: e.to_string(),
            }
            .into(),
        })
    }

    /// The text of the URL asked for `spec`: the handle and the query percent-encoded.
    fn url_text(&self, spec: &RequestSpec) -> String {
        let mut url = format!(
            "{}/api/handles/{}",
            self.base,
            utf8_percent_encode(spec.handle.as_str(), HANDLE_PATH)
        );
        let mut params: Vec<String> = Vec::new();
        for t in &spec.types {
            let t = String::from_utf8_lossy(t);
            params.push(format!("type={}", utf8_percent_encode(&t, QUERY)));
        }
        for i in &spec.indexes {
            params.push(format!("index={i}"));
        }
        if spec.authoritative() {
            params.push("auth=true".into());
        }
        if spec.certify() {
            params.push("cert=true".into());
        }
        if !params.is_empty() {
            url.push('?');
            url.push_str(&params.join("&"));
        }
        url
    }

    /// Resolves `spec` through the proxy: the handle as the proxy spelled it, the values and
    /// where they came from, or the error the answer stands for.
    pub(crate) async fn resolve(
        &self,
        spec: &RequestSpec,
        trace: &Trace,
    ) -> Result<(String, Vec<HandleValue>, Source), ResolveError> {
        let url = self.url(spec)?;
        let get = HttpGet {
            url: url.to_string(),
            accept: "application/json",
            max_body: MAX_REST_BODY,
        };
        let mut retries = 0;
        loop {
            let mut record = Recorded::start(
                trace,
                Attempt {
                    handle: spec.handle.clone(),
                    server: self.addr,
                    transport: TransportKind::Rest,
                    number: 0,
                    rtt: Duration::ZERO,
                    transmissions: 0,
                    outcome: AttemptOutcome::Cancelled,
                    url: Some(url.clone()),
                    session: None,
                },
            );
            let fetched = self.exchange.fetch(&get).await;
            let rtt = Instant::now().saturating_duration_since(record.started);
            let fetched = match fetched {
                Ok(f) => f,
                Err(error) => {
                    record.finish(AttemptOutcome::Failed(error.clone()), rtt, 1);
                    return Err(self.failure(&url, error));
                }
            };
            if matches!(fetched.status, 429 | 503) {
                let wait = retry_after(&fetched, SystemTime::now());
                let busy = HttpError::Busy {
                    status: fetched.status,
                    retries,
                    retry_after: fetched.retry_after.clone(),
                };
                record.finish(AttemptOutcome::Failed(busy.clone().into()), rtt, 1);
                match wait {
                    Some(wait) if retries < MAX_RETRIES && wait <= MAX_RETRY_WAIT => {
                        retries += 1;
                        tokio::time::sleep(wait).await;
                        continue;
                    }
                    _ => return Err(self.failure(&url, busy.into())),
                }
            }
            return match self.read(spec, &url, fetched) {
                Ok((code, outcome)) => {
                    record.finish(AttemptOutcome::Response(code), rtt, 1);
                    outcome
                }
                Err(error) => {
                    record.finish(
                        AttemptOutcome::Rejected(Rejection::Http(error.clone())),
                        rtt,
                        1,
                    );
                    Err(self.failure(&url, error.into()))
                }
            };
        }
    }

    /// Reads one answer: its response code, and the values or the error it stands for.
    /// `Err` when the body is not the REST API's JSON.
    #[allow(clippy::type_complexity)]
    fn read(
        &self,
        spec: &RequestSpec,
        url: &http::Uri,
        fetched: Fetched,
    ) -> Result<
        (
            ResponseCode,
            Result<(String, Vec<HandleValue>, Source), ResolveError>,
        ),
        HttpError,
    > {
        let json = fetched.has_media_type("application/json");
        if !json {
            return Err(HttpError::ContentType {
                status: fetched.status,
                got: fetched.content_type,
                expected: "application/json",
            });
        }
        // The values as the native answer carries them; the proxy's own cap on the body
        // (`MAX_REST_BODY`) is below the codec's.
        let answer = RestAnswer::from_slice(&fetched.body, &self.limits).map_err(|error| {
            HttpError::Json {
                status: fetched.status,
                error,
            }
        })?;
        let code = ResponseCode::from_code(answer.response_code);
        let asked = spec.handle.as_str();
        if code != ResponseCode::Success {
            let message = answer.message.unwrap_or_default();
            return Ok((
                code,
                Err(ResolveError::from_response(
                    code,
                    message,
                    self.addr,
                    &spec.handle,
                )),
            ));
        }
        let handle = match answer.handle {
            Some(h) if h != asked => h,
            _ => asked.to_string(),
        };
        let source = Source {
            server: self.addr,
            transport: TransportKind::Rest,
            site_serial: 0,
            site: None,
            certified: false,
            authoritative: false,
            protocol_version: ProtocolVersion::V2_11,
            url: Some(url.clone()),
        };
        Ok((code, Ok((handle, answer.values, source))))
    }

    fn failure(&self, url: &http::Uri, error: TransportError) -> ResolveError {
        ResolveError::Proxy {
            url: Box::new(url.clone()),
            error,
        }
    }
}

/// How long `Retry-After` asks to wait: delay seconds, or an HTTP date (RFC 9110 §10.2.3)
/// from `now`. `None` when absent or unreadable.
fn retry_after(fetched: &Fetched, now: SystemTime) -> Option<Duration> {
    let value = fetched.retry_after.as_deref()?.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

// The interim JSON decoding below stays after the tests until the wire codec replaces it.
#[cfg(test)]
#[allow(clippy::items_after_test_module)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_reads_seconds_and_dates() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_445_412_480);
        let f = Fetched::new(429, "").with_retry_after("3");
        assert_eq!(retry_after(&f, now), Some(Duration::from_secs(3)));
        // RFC 9110's example date, 10 s after `now`.
        let f = Fetched::new(503, "").with_retry_after("Wed, 21 Oct 2015 07:28:10 GMT");
        assert_eq!(retry_after(&f, now), Some(Duration::from_secs(10)));
        let f = Fetched::new(503, "").with_retry_after("soon");
        assert_eq!(retry_after(&f, now), None);
        assert_eq!(retry_after(&Fetched::new(503, ""), now), None);
    }

    #[test]
    fn proxy_urls_are_checked() {
        let ex: Arc<dyn Exchange> = Arc::new(crate::transport::NetTransport::new());
        let p = Proxy::new("http://127.0.0.1:8000/", ex.clone(), Limits::default()).unwrap();
        assert_eq!(p.base, "http://127.0.0.1:8000");
        assert_eq!(p.addr, Some("127.0.0.1:8000".parse().unwrap()));
        let p = Proxy::new("https://hdl.handle.net", ex.clone(), Limits::default()).unwrap();
        assert_eq!(p.addr, None);
        for bad in [
            "ftp://x",
            "http://",
            "http://x/?a",
            "http://u@x",
            "hdl.handle.net",
        ] {
            assert!(
                Proxy::new(bad, ex.clone(), Limits::default()).is_err(),
                "{bad}"
            );
        }
    }
}
