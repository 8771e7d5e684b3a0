//! The command line and the `--config` file: where to listen and where to resolve.
//!
//! Every option of the command line may also be given in the TOML file named by `--config`
//! (the command line wins):
//!
//! ```toml
//! listen = "127.0.0.1:8080"
//! server = "127.0.0.1:2641"      # or: root = "127.0.0.1:2641"
//! timeout_ms = 5000
//! max_in_flight_per_server = 64
//! ```
//!
//! The cache's settings ([`CacheSettings`], see `cache.rs` beside this file and the README's
//! "Cache" section) are keys of the same file: `cache_size_mb`, `negative_ttl_secs`,
//! `stale_if_error_secs`, `bypass_from`, `bypass_token`, `bypass_per_second`, `redis_url`,
//! `redis_prefix`, `redis_timeout_ms`. So are the operator's ([`OpsSettings`], `ops.rs`):
//! `trusted_proxies`, `public_base_url`, `rate_per_second`, `burst`, `request_timeout_ms`, `access_log`,
//! `metrics_listen`, `tls_cert`, `tls_key`, `match_client_address`, `geoip_db`.
//!
//! `handle-gateway --check-config FILE` reads FILE as the gateway would and names the line
//! at fault ([`check_file`]).

pub mod cache;
pub mod ops;

pub use cache::{CacheArgs, CacheSettings, Secret};
pub use ops::{OpsArgs, OpsSettings, RateLimit, TlsFiles};

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Parser;
use handle_resolver::transport::addr::{Endpoint, RootEndpoint};
use serde::Deserialize;
use thiserror::Error;

/// The largest `max_in_flight_per_server` taken (more would be no bound at all).
pub const MAX_IN_FLIGHT_BOUND: usize = 1_000_000;

/// The listening address when none is given.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8080";

/// `handle-gateway`'s command line.
#[derive(Parser, Debug, Clone, Default)]
#[command(
    name = "handle-gateway",
    version,
    about = "An HTTP gateway to the Handle System: redirects as the handle.net proxy does, \
             resolved over the native protocol"
)]
pub struct Args {
    /// Address to listen on [default: 127.0.0.1:8080].
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<SocketAddr>,
    /// Send every resolution to this server (HOST:PORT, or an http(s):// URL), as
    /// `resolve --server`.
    #[arg(long, value_name = "HOST:PORT", conflicts_with_all = ["root", "demo"])]
    pub server: Option<String>,
    /// Resolve from this root (HOST:PORT, an http(s):// URL or a root file) [default: the
    /// global root of the Handle System].
    #[arg(long, value_name = "HOST:PORT", conflicts_with = "demo")]
    pub root: Option<String>,
    /// Resolve through the bundled test network, started in-process on loopback (a root
    /// and the handles 20.500.1/demo and 20.500.1/alias).
    #[arg(long)]
    pub demo: bool,
    /// A TOML file of further settings (see the README); the command line wins.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// The time a resolution may take, in milliseconds [default: the resolver's].
    #[arg(long, value_name = "MS")]
    pub timeout_ms: Option<u64>,
    /// At most this many requests in flight to any one handle server at once (the rest
    /// wait, within their timeout; 1 to 1000000) [default: no bound but the resolver's own
    /// on UDP, learned from each server's losses and queueing].
    #[arg(long, value_name = "N")]
    pub max_in_flight_per_server: Option<usize>,
    /// Validate this TOML file (with the command line's options) and exit: 0 when the
    /// gateway would start with it, else 1 with the file and the line at fault.
    #[arg(long, value_name = "FILE")]
    pub check_config: Option<PathBuf>,
    #[command(flatten)]
    pub cache: cache::CacheArgs,
    #[command(flatten)]
    pub ops: ops::OpsArgs,
}

/// The TOML file of `--config`: the options of the command line, by the same names.
#[derive(Deserialize, Debug, Clone, Default, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    /// `--listen`.
    pub listen: Option<SocketAddr>,
    /// `--server`.
    pub server: Option<String>,
    /// `--root`.
    pub root: Option<String>,
    /// `--demo`.
    pub demo: Option<bool>,
    /// `--timeout-ms`.
    pub timeout_ms: Option<u64>,
    /// `--max-in-flight-per-server`.
    pub max_in_flight_per_server: Option<usize>,
    /// `--cache-size-mb`.
    pub cache_size_mb: Option<u64>,
    /// `--negative-ttl-secs`.
    pub negative_ttl_secs: Option<u64>,
    /// `--stale-if-error-secs`.
    pub stale_if_error_secs: Option<u64>,
    /// `--bypass-from` (address ranges).
    pub bypass_from: Option<Vec<String>>,
    /// `--bypass-token`.
    pub bypass_token: Option<String>,
    /// `--bypass-per-second`.
    pub bypass_per_second: Option<u32>,
    /// `--redis`.
    pub redis_url: Option<String>,
    /// The prefix of the gateway's keys in Redis (default `handle-gateway:`).
    pub redis_prefix: Option<String>,
    /// How long one Redis command may take, in milliseconds (default 250).
    pub redis_timeout_ms: Option<u64>,
    /// `--trusted-proxy` (address ranges).
    pub trusted_proxies: Option<Vec<String>>,
    /// `--public-base-url`.
    pub public_base_url: Option<String>,
    /// `--rate-per-second`.
    pub rate_per_second: Option<u32>,
    /// `--burst`.
    pub burst: Option<u32>,
    /// `--request-timeout-ms`.
    pub request_timeout_ms: Option<u64>,
    /// `--access-log` (`stdout` or a file).
    pub access_log: Option<String>,
    /// `--metrics-listen`.
    pub metrics_listen: Option<SocketAddr>,
    /// `--tls-cert` (PEM).
    pub tls_cert: Option<PathBuf>,
    /// `--tls-key` (PEM).
    pub tls_key: Option<PathBuf>,
    /// `--match-client-address`.
    pub match_client_address: Option<bool>,
    /// `--geoip-db`.
    pub geoip_db: Option<PathBuf>,
}

/// Where resolutions go.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Upstream {
    /// Every resolution to this server (`--server`).
    Server(Endpoint),
    /// From this root (`--root`).
    Root(RootEndpoint),
    /// From the global root of the Handle System (no option).
    GlobalRoot,
    /// Through the bundled test network (`--demo`).
    Demo,
}

/// The settings the gateway runs with.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Settings {
    /// The listening address.
    pub listen: SocketAddr,
    /// Where resolutions go.
    pub upstream: Upstream,
    /// The time a resolution may take.
    pub timeout: Option<Duration>,
    /// The most requests in flight to one handle server (`None`: the resolver's own bound).
    pub max_in_flight_per_server: Option<usize>,
    /// The cache: sizes, lifetimes, bypass, the Redis tier.
    pub cache: CacheSettings,
    /// The operator's: trusted proxies, public base URL, rate limit, request timeout.
    pub ops: OpsSettings,
}

/// Why the settings cannot be used.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The `--config` file cannot be read.
    #[error("--config {path}: cannot read: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The `--config` file is not the expected TOML.
    #[error("--config {}: line {line} `{text}`: {}", path.display(), source.message())]
    Toml {
        /// The file.
        path: PathBuf,
        /// The line at fault (from 1).
        line: usize,
        /// Its text (trimmed).
        text: String,
        /// Why.
        source: Box<toml::de::Error>,
    },
    /// A key of the `--config` file has a value the gateway cannot use.
    #[error("--config {}: line {line}: {source}", path.display())]
    Key {
        /// The file.
        path: PathBuf,
        /// The line of the key (from 1).
        line: usize,
        /// Why.
        source: Box<ConfigError>,
    },
    /// An option's value cannot be read.
    #[error("{option} {value}: {reason}")]
    Value {
        /// The option.
        option: &'static str,
        /// Its value.
        value: String,
        /// Why.
        reason: String,
    },
    /// Options that exclude each other.
    #[error("{0}")]
    Conflict(String),
}

impl ConfigFile {
    /// Reads and parses a TOML file.
    pub fn read(path: &Path) -> Result<ConfigFile, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_owned(),
            source,
        })?;
        toml::from_str(&text).map_err(|source| {
            let line = source.span().map_or(1, |s| line_of(&text, s.start));
            ConfigError::Toml {
                path: path.to_owned(),
                line,
                text: text
                    .lines()
                    .nth(line - 1)
                    .unwrap_or("")
                    .trim()
                    .chars()
                    .take(80)
                    .collect(),
                source: Box::new(source),
            }
        })
    }
}

/// The line (from 1) of byte `offset` of `text`.
fn line_of(text: &str, offset: usize) -> usize {
    1 + text
        .as_bytes()
        .iter()
        .take(offset)
        .filter(|&&b| b == b'\n')
        .count()
}

/// The line (from 1) where `key` is set in TOML `text`, if it is.
fn key_line(text: &str, key: &str) -> Option<usize> {
    text.lines()
        .position(|l| {
            l.trim_start()
                .strip_prefix(key)
                .is_some_and(|rest| rest.trim_start().starts_with('='))
        })
        .map(|i| i + 1)
}

/// `--check-config FILE`: the settings the gateway would start with, from FILE and the
/// command line; an error names FILE and the line at fault.
///
/// ```
/// use clap::Parser;
/// use handle_gateway::config::{check_file, Args};
/// let file = std::env::temp_dir().join(format!("check-doc-{}.toml", std::process::id()));
/// std::fs::write(&file, "server = \"127.0.0.1:2641\"\nrate_per_second = \"many\"\n")?;
/// let e = check_file(&Args::parse_from(["handle-gateway"]), &file).unwrap_err();
/// assert!(e.to_string().contains("line 2"), "{e}");
/// # std::fs::remove_file(&file)?;
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn check_file(args: &Args, path: &Path) -> Result<Settings, ConfigError> {
    let file = ConfigFile::read(path)?;
    Settings::from_parts(args, &file).map_err(|e| {
        let keys: Vec<String> = match &e {
            ConfigError::Value {
                option: "--redis", ..
            } => vec!["redis_url".into()],
            ConfigError::Value { option, .. } => {
                vec![option.trim_start_matches('-').replace('-', "_")]
            }
            ConfigError::Conflict(_) => vec!["server".into(), "root".into(), "demo".into()],
            _ => Vec::new(),
        };
        let text = std::fs::read_to_string(path).unwrap_or_default();
        match keys.iter().find_map(|k| key_line(&text, k)) {
            Some(line) => ConfigError::Key {
                path: path.to_owned(),
                line,
                source: Box::new(e),
            },
            None => e,
        }
    })
}

impl Settings {
    /// The settings of a command line (and of its `--config` file).
    ///
    /// ```
    /// use clap::Parser;
    /// use handle_gateway::config::{Args, Settings, Upstream};
    /// let args = Args::parse_from(["handle-gateway", "--server", "127.0.0.1:2641"]);
    /// let settings = Settings::from_args(&args)?;
    /// assert_eq!(settings.listen.to_string(), "127.0.0.1:8080");
    /// assert!(matches!(settings.upstream, Upstream::Server(_)));
    /// # Ok::<(), handle_gateway::config::ConfigError>(())
    /// ```
    pub fn from_args(args: &Args) -> Result<Settings, ConfigError> {
        let file = match &args.config {
            Some(path) => ConfigFile::read(path)?,
            None => ConfigFile::default(),
        };
        Self::from_parts(args, &file)
    }

    /// The settings of a command line and a config file's contents (the command line wins).
    pub fn from_parts(args: &Args, file: &ConfigFile) -> Result<Settings, ConfigError> {
        let listen = match args.listen.or(file.listen) {
            Some(a) => a,
            None => DEFAULT_LISTEN.parse().map_err(|e| ConfigError::Value {
                option: "--listen",
                value: DEFAULT_LISTEN.into(),
                reason: format!("{e}"),
            })?,
        };
        let cli_chosen = args.server.is_some() || args.root.is_some() || args.demo;
        let (server, root, demo) = if cli_chosen {
            (args.server.clone(), args.root.clone(), args.demo)
        } else {
            (
                file.server.clone(),
                file.root.clone(),
                file.demo.unwrap_or(false),
            )
        };
        let upstream = match (server, root, demo) {
            (Some(_), Some(_), _) | (Some(_), _, true) | (_, Some(_), true) => {
                return Err(ConfigError::Conflict(
                    "give one of server, root and demo".into(),
                ))
            }
            (Some(s), None, false) => {
                Upstream::Server(Endpoint::parse(&s).map_err(|e| ConfigError::Value {
                    option: "--server",
                    value: s.clone(),
                    reason: e.to_string(),
                })?)
            }
            (None, Some(r), false) => {
                Upstream::Root(RootEndpoint::parse(&r).map_err(|e| ConfigError::Value {
                    option: "--root",
                    value: r.clone(),
                    reason: e.to_string(),
                })?)
            }
            (None, None, true) => Upstream::Demo,
            (None, None, false) => Upstream::GlobalRoot,
        };
        let max_in_flight_per_server = args
            .max_in_flight_per_server
            .or(file.max_in_flight_per_server);
        if let Some(n) = max_in_flight_per_server.filter(|n| !(1..=MAX_IN_FLIGHT_BOUND).contains(n))
        {
            return Err(ConfigError::Value {
                option: "--max-in-flight-per-server",
                value: n.to_string(),
                reason: format!("from 1 to {MAX_IN_FLIGHT_BOUND}"),
            });
        }
        Ok(Settings {
            listen,
            upstream,
            timeout: args
                .timeout_ms
                .or(file.timeout_ms)
                .map(Duration::from_millis),
            max_in_flight_per_server,
            cache: CacheSettings::from_parts(&args.cache, file)?,
            ops: OpsSettings::from_parts(&args.ops, file)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Args {
        Args::parse_from(std::iter::once("handle-gateway").chain(list.iter().copied()))
    }

    #[test]
    fn the_command_line_wins_over_the_file() {
        let file: ConfigFile = toml::from_str(
            "listen = \"127.0.0.1:9000\"\nroot = \"127.0.0.1:2641\"\ntimeout_ms = 50",
        )
        .unwrap();
        let s = Settings::from_parts(&args(&["--server", "127.0.0.1:2642"]), &file).unwrap();
        assert_eq!(s.listen.to_string(), "127.0.0.1:9000");
        assert!(matches!(s.upstream, Upstream::Server(_)));
        assert_eq!(s.timeout, Some(Duration::from_millis(50)));
        let s = Settings::from_parts(&args(&[]), &file).unwrap();
        assert!(matches!(s.upstream, Upstream::Root(_)));
        let s = Settings::from_parts(&args(&[]), &ConfigFile::default()).unwrap();
        assert_eq!(s.upstream, Upstream::GlobalRoot);
    }

    #[test]
    fn bad_files_and_values_are_named() {
        let e = toml::from_str::<ConfigFile>("bogus = 1").unwrap_err();
        assert!(e.to_string().contains("bogus"), "{e}");
        let e = Settings::from_parts(
            &args(&["--server", "not an address"]),
            &ConfigFile::default(),
        )
        .unwrap_err();
        assert!(e.to_string().starts_with("--server not an address"), "{e}");
        let file = ConfigFile {
            server: Some("127.0.0.1:1".into()),
            demo: Some(true),
            ..ConfigFile::default()
        };
        assert!(Settings::from_parts(&args(&[]), &file).is_err());
        assert!(
            Args::try_parse_from(["handle-gateway", "--demo", "--server", "127.0.0.1:1"]).is_err()
        );
        let file: ConfigFile = toml::from_str("max_in_flight_per_server = 0").unwrap();
        let e = Settings::from_parts(&args(&[]), &file).unwrap_err();
        assert!(e.to_string().contains("from 1 to"), "{e}");
        let e = Settings::from_parts(
            &args(&["--max-in-flight-per-server", "18446744073709551615"]),
            &file,
        )
        .unwrap_err();
        assert!(e.to_string().contains("from 1 to 1000000"), "{e}");
        let file: ConfigFile = toml::from_str("max_in_flight_per_server = 8").unwrap();
        let s = Settings::from_parts(&args(&[]), &file).unwrap();
        assert_eq!(s.max_in_flight_per_server, Some(8));
    }
}
