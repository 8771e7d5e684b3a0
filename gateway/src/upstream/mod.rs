//! Where the gateway resolves: a [`Resolver`] built from the [`Settings`] (`--server`,
//! `--root`, the global root, or the bundled test network of `--demo`), asked for public
//! values only, as the reference's proxy asks, every resolution through the gateway's
//! [`Cache`].
//!
//! The resolver's own answer cache is off (`cache_size(0)`): the gateway's cache keeps the
//! records, so that their lifetimes, "not found", stale-if-error, the bypass and the shared
//! tier have one set of rules, and `X-Cache` tells what happened. The resolver still keeps
//! the service information of prefixes (where a prefix's servers are), which is no answer.

use std::net::IpAddr;
use std::sync::atomic::{AtomicU8, Ordering};

use handle_resolver::wire::HandleValue;
use handle_resolver::Handle;
use handle_resolver::{BuildError, Query, Resolver};

use crate::cache::{Cache, Key, LookupError, Record, Served};
use crate::config::{Settings, Upstream};

/// The handles of the `--demo` network's prefix.
pub const DEMO_PREFIX: &str = "20.500.1";

/// The resolver the gateway asks, and what keeps its test network running (`--demo`).
pub struct Resolution {
    resolver: Resolver,
    cache: Cache,
    #[cfg(feature = "demo")]
    _demo: Option<handle_resolver::testing::TestNetwork>,
}

impl std::fmt::Debug for Resolution {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Resolution").finish_non_exhaustive()
    }
}

/// Why the resolver cannot be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum UpstreamError {
    /// The resolver's settings are refused.
    #[error("cannot build the resolver: {0}")]
    Build(#[from] BuildError),
    /// The test network of `--demo` cannot start.
    #[error("--demo: cannot start the test network: {0}")]
    Demo(std::io::Error),
    /// The cache cannot start (its Redis tier's URL is refused).
    #[error("cannot start the cache: {0}")]
    Cache(#[from] crate::cache::CacheError),
    /// `--demo` in a build without the `demo` feature.
    #[error("--demo: this build has no test network (feature `demo`)")]
    NoDemo,
}

/// The demo network's handles: a URL, an alias, a 10320/loc choice.
#[cfg(feature = "demo")]
async fn demo_network() -> std::io::Result<handle_resolver::testing::TestNetwork> {
    let network = handle_resolver::testing::TestNetwork::builder()
        .prefixes([DEMO_PREFIX])
        .build()
        .await?;
    network.insert(
        format!("{DEMO_PREFIX}/demo"),
        vec![
            HandleValue::new(1, "URL", "https://example.org/demo"),
            HandleValue::new(2, "EMAIL", "demo@example.org"),
        ],
    );
    network.insert(
        format!("{DEMO_PREFIX}/alias"),
        vec![HandleValue::new(
            1,
            "HS_ALIAS",
            format!("{DEMO_PREFIX}/demo"),
        )],
    );
    network.insert(
        format!("{DEMO_PREFIX}/loc"),
        vec![HandleValue::new(
            1,
            "10320/loc",
            "<locations><location href=\"https://example.org/page\" view=\"html\"/>\
             <location href=\"https://example.org/data.json\" view=\"json\" \
             http_role=\"conneg\" ctype=\"application/json\" weight=\"0\"/></locations>",
        )],
    );
    Ok(network)
}

impl Resolution {
    /// Builds the resolver of `settings` (starting the test network for `--demo`).
    pub async fn start(settings: &Settings) -> Result<Resolution, UpstreamError> {
        let mut builder = Resolver::builder().cache_size(0);
        if let Some(t) = settings.timeout {
            builder = builder.timeout(t);
        }
        if let Some(n) = settings.max_in_flight_per_server {
            builder = builder.max_in_flight_per_server(n);
        }
        #[cfg(feature = "demo")]
        let mut demo = None;
        builder = match &settings.upstream {
            Upstream::Server(e) => builder.server_at(e),
            Upstream::Root(r) => builder.root_at(r),
            Upstream::GlobalRoot => builder,
            Upstream::Demo => {
                #[cfg(feature = "demo")]
                {
                    let network = demo_network().await.map_err(UpstreamError::Demo)?;
                    let root = network.root.addr();
                    demo = Some(network);
                    builder.root_server(root)
                }
                #[cfg(not(feature = "demo"))]
                return Err(UpstreamError::NoDemo);
            }
        };
        Ok(Resolution {
            resolver: builder.build()?,
            cache: Cache::new(&settings.cache).await?,
            #[cfg(feature = "demo")]
            _demo: demo,
        })
    }

    /// The public values of `handle` (with `types` / `indexes` filters when given), in the
    /// server's order, through the cache; HS_ALIAS values are returned, not followed.
    pub async fn values(
        &self,
        handle: &str,
        types: &[String],
        indexes: &[u32],
    ) -> Result<Vec<HandleValue>, LookupError> {
        self.lookup(false)
            .values(handle, types, indexes)
            .await
            .map(Record::into_values)
    }

    /// The resolutions of one request (`bypass`: the request may bypass the cache, see
    /// [`Resolution::trusts`]), which remember how they were served.
    pub fn lookup(&self, bypass: bool) -> Lookup<'_> {
        Lookup {
            resolution: self,
            bypass,
            served: AtomicU8::new(0),
        }
    }

    /// True when a request from `client` carrying this `X-Bypass-Token` may bypass the
    /// cache (`bypass_from`, `bypass_token`).
    pub fn trusts(&self, client: IpAddr, token: Option<&str>) -> bool {
        self.cache.trusts(client, token)
    }

    /// A resolution at the upstream, no cache.
    async fn fetch(
        &self,
        handle: &Handle,
        types: &[String],
        indexes: &[u32],
    ) -> Result<Vec<HandleValue>, LookupError> {
        let query = Query::new()
            .public_only(true)
            .follow_aliases(false)
            .types(types.iter().cloned())
            .indexes(indexes.iter().copied());
        let record = self.resolver.resolve_with(handle, &query).await?;
        Ok(record.values)
    }
}

/// The resolutions of one request: each through the cache, the way each was served kept
/// for the answer's `X-Cache` header.
#[derive(Debug)]
pub struct Lookup<'a> {
    resolution: &'a Resolution,
    bypass: bool,
    /// 0: nothing resolved yet; else 1 + the [`Served`] order of the last of them.
    served: AtomicU8,
}

impl Lookup<'_> {
    /// The public values of `handle` (with `types` / `indexes` filters when given), in the
    /// server's order, with their age; HS_ALIAS values are returned, not followed.
    pub async fn values(
        &self,
        handle: &str,
        types: &[String],
        indexes: &[u32],
    ) -> Result<Record, LookupError> {
        let h = Handle::parse(handle).map_err(|_| LookupError::NotAHandle(handle.to_owned()))?;
        let key = Key::new(&h, types, indexes);
        let fetch = || self.resolution.fetch(&h, types, indexes);
        let (result, served) = self.resolution.cache.get(key, fetch, self.bypass).await;
        let rank = match served {
            Served::Hit => 1,
            Served::Miss => 2,
            Served::Bypass => 3,
            _ => 4,
        };
        self.served.fetch_max(rank, Ordering::Relaxed);
        result
    }

    /// How the request's resolutions were served (the last of hit, miss, bypass, stale), or
    /// `None` when it made none.
    pub fn served(&self) -> Option<Served> {
        match self.served.load(Ordering::Relaxed) {
            0 => None,
            1 => Some(Served::Hit),
            2 => Some(Served::Miss),
            3 => Some(Served::Bypass),
            _ => Some(Served::Stale),
        }
    }
}
