//! The operator's settings: the trusted proxies (whose `X-Forwarded-For`, `Forwarded`,
//! `X-Forwarded-Proto` and `X-Forwarded-Host` are believed), the public base URL, the
//! per-client rate limit and the request timeout. Each is a command-line option and a key of
//! the `--config` file (the command line wins).

use std::time::Duration;

use clap::Args as ClapArgs;
use ipnet::IpNet;

use super::{ConfigError, ConfigFile};

/// The time one request may take when none is given, in milliseconds.
pub const DEFAULT_REQUEST_TIMEOUT_MS: u64 = 30_000;

/// The operator's command-line options (flattened into [`super::Args`]).
#[derive(ClapArgs, Debug, Clone, Default)]
pub struct OpsArgs {
    /// Peers in this address range (CIDR; repeat the option for more) are proxies whose
    /// `X-Forwarded-For`/`Forwarded`/`X-Forwarded-Proto`/`X-Forwarded-Host` are believed
    /// [default: none].
    #[arg(long, value_name = "CIDR")]
    pub trusted_proxy: Vec<String>,
    /// The gateway's public URL (`https://hdl.example.org`): the scheme and host of alias
    /// redirects and links, whatever the request's `Host`.
    #[arg(long, value_name = "URL")]
    pub public_base_url: Option<String>,
    /// Requests one client may send per second; over it, `429` with `Retry-After`
    /// [default: no limit].
    #[arg(long, value_name = "N")]
    pub rate_per_second: Option<u32>,
    /// Requests one client may send at once before the rate applies [default: the rate].
    #[arg(long, value_name = "N")]
    pub burst: Option<u32>,
    /// The time one request may take, in milliseconds; over it, `504` [default: 30000].
    #[arg(long, value_name = "MS")]
    pub request_timeout_ms: Option<u64>,
    /// The access log, in the combined format: `stdout` or a file appended to [default:
    /// none].
    #[arg(long, value_name = "stdout|FILE")]
    pub access_log: Option<String>,
    /// Serve `/metrics` (Prometheus) and `/healthz` on this second address [default: no
    /// metrics].
    #[arg(long, value_name = "ADDR")]
    pub metrics_listen: Option<std::net::SocketAddr>,
    /// HTTPS: the certificate chain (PEM) of the listener; with `--tls-key`.
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<std::path::PathBuf>,
    /// HTTPS: the private key (PEM: PKCS#8, PKCS#1 or SEC1) of `--tls-cert`.
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<std::path::PathBuf>,
    /// Choose among a handle's `10320/loc` locations by their `addresses` attribute too,
    /// matched against the client's address (as the handle.net proxy does; behind proxies,
    /// list them with `--trusted-proxy` so that the address is the client's) [default: off].
    #[arg(long)]
    pub match_client_address: bool,
    /// A GeoIP database (a MaxMind DB file, such as GeoLite2-Country): the client's country
    /// chooses among a handle's `10320/loc` locations when the request has no `?country=`
    /// (feature `geoip`) [default: none].
    #[arg(long, value_name = "FILE")]
    pub geoip_db: Option<std::path::PathBuf>,
}

/// The HTTPS listener's files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsFiles {
    /// The certificate chain, PEM.
    pub cert: std::path::PathBuf,
    /// The private key, PEM.
    pub key: std::path::PathBuf,
}

/// The per-client rate limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimit {
    /// Requests per second.
    pub per_second: u32,
    /// Requests at once.
    pub burst: u32,
}

/// The operator's settings (see the README's "Operating the gateway" section).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct OpsSettings {
    /// Peers whose forwarding headers are believed.
    pub trusted_proxies: Vec<IpNet>,
    /// The public base URL, without a trailing `/`.
    pub public_base_url: Option<String>,
    /// The per-client rate limit, when there is one.
    pub rate_limit: Option<RateLimit>,
    /// The time one request may take.
    pub request_timeout: Duration,
    /// The access log: `stdout` or a file.
    pub access_log: Option<String>,
    /// The address of `/metrics`.
    pub metrics_listen: Option<std::net::SocketAddr>,
    /// HTTPS: the certificate and key (else the listener speaks plain HTTP).
    pub tls: Option<TlsFiles>,
    /// `10320/loc` `addresses` matched against the client's address.
    pub match_client_address: bool,
    /// The GeoIP database of the client's country.
    pub geoip_db: Option<std::path::PathBuf>,
}

impl Default for OpsSettings {
    fn default() -> Self {
        OpsSettings {
            trusted_proxies: Vec::new(),
            public_base_url: None,
            rate_limit: None,
            request_timeout: Duration::from_millis(DEFAULT_REQUEST_TIMEOUT_MS),
            access_log: None,
            metrics_listen: None,
            tls: None,
            match_client_address: false,
            geoip_db: None,
        }
    }
}

impl OpsSettings {
    /// The settings of the command line's options and the file's keys (the command line
    /// wins; `--trusted-proxy` replaces the file's list).
    pub fn from_parts(args: &OpsArgs, file: &ConfigFile) -> Result<OpsSettings, ConfigError> {
        let ranges: Vec<String> = if args.trusted_proxy.is_empty() {
            file.trusted_proxies.clone().unwrap_or_default()
        } else {
            args.trusted_proxy.clone()
        };
        let trusted_proxies = ranges
            .iter()
            .map(|r| super::cache::parse_range(r, "trusted_proxies"))
            .collect::<Result<Vec<_>, _>>()?;
        let public_base_url = match args
            .public_base_url
            .clone()
            .or(file.public_base_url.clone())
        {
            Some(url) => Some(parse_base_url(&url)?),
            None => None,
        };
        let rate = args.rate_per_second.or(file.rate_per_second);
        let burst = args.burst.or(file.burst);
        let rate_limit = match (rate, burst) {
            (None | Some(0), None) => None,
            (None | Some(0), Some(b)) => {
                return Err(ConfigError::Value {
                    option: "burst",
                    value: b.to_string(),
                    reason: "needs rate_per_second (at least 1)".into(),
                })
            }
            (Some(r), b) => Some(RateLimit {
                per_second: r,
                burst: b.unwrap_or(r).max(1),
            }),
        };
        let ms = args
            .request_timeout_ms
            .or(file.request_timeout_ms)
            .unwrap_or(DEFAULT_REQUEST_TIMEOUT_MS);
        if ms == 0 {
            return Err(ConfigError::Value {
                option: "request_timeout_ms",
                value: "0".into(),
                reason: "at least 1".into(),
            });
        }
        let tls = match (
            args.tls_cert.clone().or(file.tls_cert.clone()),
            args.tls_key.clone().or(file.tls_key.clone()),
        ) {
            (Some(cert), Some(key)) => Some(TlsFiles { cert, key }),
            (None, None) => None,
            (Some(p), None) | (None, Some(p)) => {
                return Err(ConfigError::Value {
                    option: if file.tls_cert.is_some() {
                        "tls_cert"
                    } else {
                        "tls_key"
                    },
                    value: p.display().to_string(),
                    reason: "give both tls_cert and tls_key".into(),
                })
            }
        };
        Ok(OpsSettings {
            trusted_proxies,
            public_base_url,
            rate_limit,
            request_timeout: Duration::from_millis(ms),
            access_log: args
                .access_log
                .clone()
                .or(file.access_log.clone())
                .filter(|a| !a.is_empty()),
            metrics_listen: args.metrics_listen.or(file.metrics_listen),
            tls,
            match_client_address: args.match_client_address
                || file.match_client_address.unwrap_or(false),
            geoip_db: args.geoip_db.clone().or(file.geoip_db.clone()),
        })
    }
}

/// `http://` or `https://` and a host (and port), no path, query or fragment.
fn parse_base_url(text: &str) -> Result<String, ConfigError> {
    let bad = |reason: &str| ConfigError::Value {
        option: "public_base_url",
        value: text.to_owned(),
        reason: reason.into(),
    };
    let t = text.trim().trim_end_matches('/');
    let rest = t
        .strip_prefix("https://")
        .or_else(|| t.strip_prefix("http://"))
        .ok_or_else(|| bad("not an http:// or https:// URL"))?;
    if rest.is_empty() || rest.contains(['/', '?', '#', ' ', '@']) {
        return Err(bad(
            "a scheme and a host (and port) only, such as https://hdl.example.org",
        ));
    }
    Ok(t.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Args, Settings};
    use clap::Parser;

    #[test]
    fn defaults_keys_and_bad_values() {
        let s = OpsSettings::from_parts(&OpsArgs::default(), &ConfigFile::default()).unwrap();
        assert_eq!(s, OpsSettings::default());
        let file: ConfigFile = toml::from_str(
            "trusted_proxies = [\"10.0.0.0/8\"]\npublic_base_url = \"https://hdl.example/\"\n\
             rate_per_second = 5\nburst = 20\nrequest_timeout_ms = 900\n\
             access_log = \"stdout\"\nmetrics_listen = \"127.0.0.1:9100\"",
        )
        .unwrap();
        let args = Args::parse_from(["handle-gateway", "--rate-per-second", "7"]);
        let s = Settings::from_parts(&args, &file).unwrap().ops;
        assert_eq!(s.trusted_proxies.len(), 1);
        assert_eq!(s.public_base_url.as_deref(), Some("https://hdl.example"));
        assert_eq!(
            s.rate_limit,
            Some(RateLimit {
                per_second: 7,
                burst: 20
            })
        );
        assert_eq!(s.request_timeout, Duration::from_millis(900));
        assert_eq!(s.access_log.as_deref(), Some("stdout"));
        assert_eq!(s.metrics_listen, Some("127.0.0.1:9100".parse().unwrap()));
        for bad in [
            "public_base_url = \"ftp://x\"",
            "public_base_url = \"https://x/path\"",
            "burst = 3",
            "request_timeout_ms = 0",
            "trusted_proxies = [\"10.0.0.0/40\"]",
        ] {
            let file: ConfigFile = toml::from_str(bad).unwrap();
            let e = Settings::from_parts(&Args::parse_from(["handle-gateway"]), &file);
            let key = bad.split(' ').next().unwrap_or_default();
            assert!(e.is_err_and(|e| e.to_string().starts_with(key)), "{bad}");
        }
    }
}
