//! The cache's settings: its size, the lifetimes of "not found" and of stale answers, who may
//! bypass it and how often, and the shared Redis tier. Each is a command-line option and a key
//! of the `--config` file (the command line wins).

use std::time::Duration;

use clap::Args as ClapArgs;
use ipnet::IpNet;

use super::{ConfigError, ConfigFile};

/// The cache's size when none is given, in MiB.
pub const DEFAULT_CACHE_SIZE_MB: u64 = 256;
/// How long a "not found" (or "no matching values") answer is kept, when not given.
pub const DEFAULT_NEGATIVE_TTL_SECS: u64 = 10;
/// How long past its expiry a record may still answer while the upstream fails.
pub const DEFAULT_STALE_IF_ERROR_SECS: u64 = 86_400;
/// Upstream queries the cache bypasses may send per second (also the burst).
pub const DEFAULT_BYPASS_PER_SECOND: u32 = 10;
/// The prefix of the gateway's keys in Redis.
pub const DEFAULT_REDIS_PREFIX: &str = "handle-gateway:";
/// The time one Redis command may take.
pub const DEFAULT_REDIS_TIMEOUT_MS: u64 = 250;

/// The cache's command-line options (flattened into [`super::Args`]).
#[derive(ClapArgs, Debug, Clone, Default)]
pub struct CacheArgs {
    /// Size of the in-process cache of resolved records, in MiB; 0 turns the cache off (every
    /// request resolves) [default: 256].
    #[arg(long, value_name = "MB")]
    pub cache_size_mb: Option<u64>,
    /// How long a "not found" answer is cached, in seconds; 0: not cached [default: 10].
    #[arg(long, value_name = "SECS")]
    pub negative_ttl_secs: Option<u64>,
    /// How long past its expiry a cached record may answer while the upstream fails, in
    /// seconds; 0: never [default: 86400].
    #[arg(long, value_name = "SECS")]
    pub stale_if_error_secs: Option<u64>,
    /// Clients in this address range (CIDR, e.g. 127.0.0.0/8; repeat the option for more)
    /// may bypass the cache with `Cache-Control: no-cache`.
    #[arg(long, value_name = "CIDR")]
    pub bypass_from: Vec<String>,
    /// Requests carrying this token in `X-Bypass-Token` may bypass the cache with
    /// `Cache-Control: no-cache`.
    #[arg(long, value_name = "TOKEN", env = "HANDLE_GATEWAY_BYPASS_TOKEN")]
    pub bypass_token: Option<String>,
    /// Upstream queries the bypasses may send per second, all clients together (also the
    /// burst); a bypass over the limit is answered from the cache [default: 10].
    #[arg(long, value_name = "N")]
    pub bypass_per_second: Option<u32>,
    /// The shared second tier: a Redis server (`redis://HOST:PORT/DB`), in a build with the
    /// `redis` feature.
    #[arg(long = "redis", value_name = "URL")]
    pub redis_url: Option<String>,
}

/// A secret (the bypass token): compared in constant time, never printed.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// The secret `text`.
    pub fn new(text: impl Into<String>) -> Secret {
        Secret(text.into())
    }

    /// True when `given` is the secret (in time that does not depend on where they differ).
    ///
    /// ```
    /// use handle_gateway::config::Secret;
    /// assert!(Secret::new("s3cret").matches("s3cret"));
    /// assert!(!Secret::new("s3cret").matches("s3cres"));
    /// ```
    pub fn matches(&self, given: &str) -> bool {
        let (a, b) = (self.0.as_bytes(), given.as_bytes());
        a.len() == b.len() && a.iter().zip(b).fold(0u8, |d, (x, y)| d | (x ^ y)) == 0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(..)")
    }
}

/// The cache's settings (see the README's "Cache" section).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CacheSettings {
    /// The in-process cache's size in bytes (0: no cache, every request resolves).
    pub max_bytes: u64,
    /// How long "not found" and "no matching values" answers are kept (zero: not kept).
    pub negative_ttl: Duration,
    /// How long past its expiry a record may answer while the upstream fails (zero: never).
    pub stale_if_error: Duration,
    /// The address ranges whose clients may bypass the cache.
    pub bypass_from: Vec<IpNet>,
    /// The token (`X-Bypass-Token`) that lets any client bypass the cache.
    pub bypass_token: Option<Secret>,
    /// Upstream queries the bypasses may send per second (also the burst).
    pub bypass_per_second: u32,
    /// The Redis tier's URL, when there is one.
    pub redis_url: Option<String>,
    /// The prefix of the gateway's keys in Redis.
    pub redis_prefix: String,
    /// The time one Redis command may take.
    pub redis_timeout: Duration,
}

impl Default for CacheSettings {
    fn default() -> Self {
        CacheSettings {
            max_bytes: DEFAULT_CACHE_SIZE_MB << 20,
            negative_ttl: Duration::from_secs(DEFAULT_NEGATIVE_TTL_SECS),
            stale_if_error: Duration::from_secs(DEFAULT_STALE_IF_ERROR_SECS),
            bypass_from: Vec::new(),
            bypass_token: None,
            bypass_per_second: DEFAULT_BYPASS_PER_SECOND,
            redis_url: None,
            redis_prefix: DEFAULT_REDIS_PREFIX.into(),
            redis_timeout: Duration::from_millis(DEFAULT_REDIS_TIMEOUT_MS),
        }
    }
}

impl CacheSettings {
    /// The settings of the command line's options and the file's keys (the command line
    /// wins; `--bypass-from` replaces the file's list).
    pub fn from_parts(args: &CacheArgs, file: &ConfigFile) -> Result<CacheSettings, ConfigError> {
        let d = CacheSettings::default();
        let size_mb = args.cache_size_mb.or(file.cache_size_mb);
        let max_bytes = match size_mb {
            Some(mb) => mb.checked_mul(1 << 20).ok_or_else(|| ConfigError::Value {
                option: "--cache-size-mb",
                value: mb.to_string(),
                reason: "too large".into(),
            })?,
            None => d.max_bytes,
        };
        let secs = |a: Option<u64>, f: Option<u64>, default: Duration| {
            a.or(f).map_or(default, Duration::from_secs)
        };
        let ranges: Vec<String> = if args.bypass_from.is_empty() {
            file.bypass_from.clone().unwrap_or_default()
        } else {
            args.bypass_from.clone()
        };
        let bypass_from = ranges
            .iter()
            .map(|r| parse_range(r, "--bypass-from"))
            .collect::<Result<Vec<_>, _>>()?;
        let bypass_per_second = args
            .bypass_per_second
            .or(file.bypass_per_second)
            .unwrap_or(d.bypass_per_second);
        if bypass_per_second == 0 {
            return Err(ConfigError::Value {
                option: "--bypass-per-second",
                value: "0".into(),
                reason: "at least 1 (leave bypass_from and bypass_token out to allow none)".into(),
            });
        }
        let redis_url = args.redis_url.clone().or(file.redis_url.clone());
        if redis_url.is_some() && !cfg!(feature = "redis") {
            return Err(ConfigError::Value {
                option: "--redis",
                value: redis_url.unwrap_or_default(),
                reason: "this build has no Redis tier (feature `redis`)".into(),
            });
        }
        Ok(CacheSettings {
            max_bytes,
            negative_ttl: secs(
                args.negative_ttl_secs,
                file.negative_ttl_secs,
                d.negative_ttl,
            ),
            stale_if_error: secs(
                args.stale_if_error_secs,
                file.stale_if_error_secs,
                d.stale_if_error,
            ),
            bypass_from,
            bypass_token: args
                .bypass_token
                .clone()
                .or(file.bypass_token.clone())
                .filter(|t| !t.is_empty())
                .map(Secret::new),
            bypass_per_second,
            redis_url,
            redis_prefix: file.redis_prefix.clone().unwrap_or(d.redis_prefix),
            redis_timeout: file
                .redis_timeout_ms
                .map_or(d.redis_timeout, Duration::from_millis),
        })
    }

    /// True when some client may bypass the cache.
    pub fn bypass_configured(&self) -> bool {
        !self.bypass_from.is_empty() || self.bypass_token.is_some()
    }
}

/// An address range: CIDR, or one address (a /32 or /128).
pub(crate) fn parse_range(text: &str, option: &'static str) -> Result<IpNet, ConfigError> {
    let t = text.trim();
    t.parse::<IpNet>()
        .or_else(|_| t.parse::<std::net::IpAddr>().map(IpNet::from))
        .map_err(|_| ConfigError::Value {
            option,
            value: text.to_owned(),
            reason: "not an address range (CIDR such as 127.0.0.0/8, or an address)".into(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Args, Settings};
    use clap::Parser;

    #[test]
    fn defaults_file_keys_and_options() {
        let s = CacheSettings::from_parts(&CacheArgs::default(), &ConfigFile::default()).unwrap();
        assert_eq!(s, CacheSettings::default());
        assert_eq!(s.max_bytes, 256 << 20);
        assert!(!s.bypass_configured());
        let file: ConfigFile = toml::from_str(
            "cache_size_mb = 1\nnegative_ttl_secs = 3\nstale_if_error_secs = 0\n\
             bypass_from = [\"10.0.0.0/8\", \"::1\"]\nbypass_token = \"t\"\nbypass_per_second = 2\n\
             redis_prefix = \"x:\"\nredis_timeout_ms = 9",
        )
        .unwrap();
        let args = Args::parse_from(["handle-gateway", "--negative-ttl-secs", "4"]);
        let s = Settings::from_parts(&args, &file).unwrap().cache;
        assert_eq!(s.max_bytes, 1 << 20);
        assert_eq!(s.negative_ttl, Duration::from_secs(4));
        assert_eq!(s.stale_if_error, Duration::ZERO);
        assert_eq!(s.bypass_from.len(), 2);
        assert!(s.bypass_token.as_ref().is_some_and(|t| t.matches("t")));
        assert_eq!(s.bypass_per_second, 2);
        assert_eq!(s.redis_prefix, "x:");
        assert_eq!(s.redis_timeout, Duration::from_millis(9));
        assert!(
            !format!("{s:?}").contains("\"t\""),
            "the token is not printed"
        );
    }

    #[test]
    fn bad_values_are_named() {
        let args = Args::parse_from(["handle-gateway", "--bypass-from", "10.0.0.0/33"]);
        let e = Settings::from_parts(&args, &ConfigFile::default()).unwrap_err();
        assert!(
            e.to_string().starts_with("--bypass-from 10.0.0.0/33"),
            "{e}"
        );
        let args = Args::parse_from(["handle-gateway", "--bypass-per-second", "0"]);
        assert!(Settings::from_parts(&args, &ConfigFile::default()).is_err());
        let e = toml::from_str::<ConfigFile>("cache_size = 1").unwrap_err();
        assert!(e.to_string().contains("cache_size"), "{e}");
        let args = Args::parse_from(["handle-gateway", "--redis", "redis://127.0.0.1:1/"]);
        let r = Settings::from_parts(&args, &ConfigFile::default());
        assert_eq!(r.is_ok(), cfg!(feature = "redis"));
    }
}
