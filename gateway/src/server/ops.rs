//! The operator's layer around the proxy: who the client is (the trusted-proxy rule), the
//! base URL of links, the per-client rate limit, `/healthz`, the metrics and the access
//! log. Every request passes `observe` before the proxy sees it.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Instant;

use axum::body::HttpBody as _;
use axum::extract::{ConnectInfo, Request, State};
use axum::middleware::Next;
use axum::response::Response;
use axum::Router;

use super::country::{CountryDb, CountryDbError};
use super::forwarded;
use super::limit::{self, ClientLimiter};
use super::observe::{combined_line, AccessLog, AccessLogError, Metrics};
use super::to_response;
use crate::config::OpsSettings;
use crate::redirect::Answer;

/// The gateway's own path answering `200 ok` while it serves (the reference has no such
/// path: a handle `healthz` would be `0.NA/healthz`, which this path shadows).
pub const HEALTH_PATH: &str = "/healthz";

/// The path of the Prometheus metrics (on the `metrics_listen` address only).
pub const METRICS_PATH: &str = "/metrics";

/// What the operator's settings make of each request.
#[derive(Debug, Default)]
pub struct Ops {
    pub(crate) settings: OpsSettings,
    limiter: Option<ClientLimiter>,
    access_log: Option<AccessLog>,
    countries: Option<Arc<CountryDb>>,
    /// The counters of `/metrics`.
    pub metrics: Metrics,
    /// The address the listener took (set once it is bound): the proxy's own URL for
    /// requests without `Host`.
    pub(crate) local: std::sync::OnceLock<std::net::SocketAddr>,
}

/// Why the operator's settings cannot be put to work.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OpsError {
    /// The access log cannot be opened.
    #[error(transparent)]
    AccessLog(#[from] AccessLogError),
    /// The GeoIP database cannot be read.
    #[error(transparent)]
    Countries(#[from] CountryDbError),
}

impl Ops {
    /// The operator's `settings` at work (the access log opened, the GeoIP database read).
    pub fn new(settings: OpsSettings) -> Result<Ops, OpsError> {
        let limiter = settings.rate_limit.and_then(ClientLimiter::new);
        let access_log = match &settings.access_log {
            Some(target) => Some(AccessLog::open(target)?),
            None => None,
        };
        let countries = match &settings.geoip_db {
            Some(path) => Some(Arc::new(CountryDb::open(path)?)),
            None => None,
        };
        Ok(Ops {
            settings,
            limiter,
            access_log,
            countries,
            metrics: Metrics::default(),
            local: std::sync::OnceLock::new(),
        })
    }

    /// True when the access log goes to a file (buffered: see [`Ops::flush_log`]).
    pub(crate) fn logs_to_file(&self) -> bool {
        matches!(self.access_log, Some(AccessLog::File(_)))
    }

    /// Writes out the access log's buffered lines.
    pub fn flush_log(&self) {
        if let Some(log) = &self.access_log {
            log.flush();
        }
    }

    /// Forgets the idle clients of the rate limit.
    pub(crate) fn forget_idle(&self) {
        if let Some(l) = &self.limiter {
            l.forget_idle();
        }
    }

    /// True when a rate limit is set.
    pub(crate) fn limits(&self) -> bool {
        self.limiter.is_some()
    }
}

/// Who the client is and the base URL of its links, as [`observe`] decided.
#[derive(Debug, Clone)]
pub(crate) struct ClientInfo {
    pub(crate) client: IpAddr,
    /// `10320/loc` `addresses` are matched against `client`.
    pub(crate) match_address: bool,
    /// The operator's GeoIP database.
    pub(crate) geoip: Option<Arc<CountryDb>>,
    pub(crate) base: Option<String>,
    /// The listener's address.
    pub(crate) local: Option<std::net::SocketAddr>,
}

fn text(status: u16, body: &str) -> Response {
    let mut a = Answer::new(status).header("Content-Type", "text/plain; charset=utf-8");
    a.body = body.as_bytes().to_vec();
    to_response(a)
}

/// The operator's layer: the client and base URL, `/healthz`, the rate limit, then the
/// proxy; the request counted and logged.
pub(crate) async fn observe(State(ops): State<Arc<Ops>>, mut req: Request, next: Next) -> Response {
    let started = Instant::now();
    let at = time::OffsetDateTime::now_utc();
    let _in_flight = ops.metrics.begin();
    let peer = req
        .extensions()
        .get::<ConnectInfo<super::Peer>>()
        .map(|c| c.0 .0);
    let local = ops.local.get().copied();
    let peer_ip = peer.map_or(IpAddr::from([127, 0, 0, 1]), |p| p.ip());
    let fwd = forwarded::read(req.headers(), peer_ip, &ops.settings.trusted_proxies);
    let client = fwd.client.unwrap_or(peer_ip);
    let tls = ops.settings.tls.is_some();
    let base = match (&ops.settings.public_base_url, &fwd.proto, &fwd.host) {
        (Some(url), _, _) => Some(url.clone()),
        (None, None, None) if !tls => None,
        (None, proto, host) => {
            let host = host.clone().or_else(|| {
                req.headers()
                    .get("host")
                    .and_then(|h| h.to_str().ok())
                    .map(|h| h.trim().to_owned())
                    .filter(|h| !h.is_empty())
            });
            let host = host
                .or_else(|| local.map(|l| l.to_string()))
                .unwrap_or_default();
            let scheme = if tls { "https" } else { "http" };
            Some(format!("{}://{host}", proto.as_deref().unwrap_or(scheme)))
        }
    };
    // What the access log writes of the request (taken only when there is a log): the
    // header values shared, not copied, and no map made for them (a map was 1,800
    // instructions a request, BENCHMARKS.md §18).
    let logged = ops.access_log.as_ref().map(|_| {
        let header = |name| req.headers().get(name).cloned();
        (
            req.method().clone(),
            req.uri().clone(),
            req.version(),
            [header("referer"), header("user-agent")],
        )
    });
    let response = if req.uri().path() == HEALTH_PATH {
        text(200, "ok\n")
    } else if let Some(wait) = ops.limiter.as_ref().and_then(|l| l.check(client).err()) {
        let mut r = text(429, "Too many requests\n");
        if let Ok(v) = limit::retry_after(wait).to_string().parse() {
            r.headers_mut().insert("retry-after", v);
        }
        r
    } else {
        req.extensions_mut().insert(ClientInfo {
            client,
            match_address: ops.settings.match_client_address,
            geoip: ops.countries.clone(),
            base,
            local,
        });
        match tokio::time::timeout(ops.settings.request_timeout, next.run(req)).await {
            Ok(r) => r,
            Err(_) => text(504, "Gateway Timeout: the resolution took too long\n"),
        }
    };
    let status = response.status().as_u16();
    let x_cache = response
        .headers()
        .get("x-cache")
        .and_then(|v| v.to_str().ok());
    ops.metrics.record(status, started.elapsed(), x_cache);
    if let (Some(log), Some((method, uri, version, [referer, agent]))) = (&ops.access_log, logged) {
        let bytes = response.body().size_hint().exact();
        log.write(&combined_line(
            client,
            at,
            &method,
            &uri,
            version,
            status,
            bytes,
            referer.as_ref(),
            agent.as_ref(),
        ));
    }
    response
}

/// The router of the `metrics_listen` address: `/metrics` and `/healthz`.
pub fn metrics_router(ops: Arc<Ops>) -> Router {
    Router::new()
        .route(
            METRICS_PATH,
            axum::routing::get(|State(ops): State<Arc<Ops>>| async move {
                let mut r = text(200, &ops.metrics.render());
                if let Ok(v) = "text/plain; version=0.0.4; charset=utf-8".parse() {
                    r.headers_mut().insert("content-type", v);
                }
                r
            }),
        )
        .route(
            HEALTH_PATH,
            axum::routing::get(|| async { text(200, "ok\n") }),
        )
        .with_state(ops)
}
