//! Where the gateway resolves: a [`Resolver`] built from the [`Settings`] (`--server`,
//! `--root`, the global root, or the bundled test network of `--demo`), asked for public
//! values only, as the reference's proxy asks.

use handle_resolver::wire::HandleValue;
use handle_resolver::Handle;
use handle_resolver::{BuildError, Query, ResolveError, Resolver};

use crate::config::{Settings, Upstream};

/// The handles of the `--demo` network's prefix.
pub const DEMO_PREFIX: &str = "20.500.1";

/// The resolver the gateway asks, and what keeps its test network running (`--demo`).
pub struct Resolution {
    resolver: Resolver,
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
    /// `--demo` in a build without the `demo` feature.
    #[error("--demo: this build has no test network (feature `demo`)")]
    NoDemo,
}

/// Why a handle's values are not there.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LookupError {
    /// The text is not a handle (no `/`, empty): as not found.
    #[error("not a handle: {0}")]
    NotAHandle(String),
    /// The resolution failed.
    #[error(transparent)]
    Resolve(#[from] ResolveError),
}

impl LookupError {
    /// True when the handle does not exist (or is no handle).
    pub fn is_not_found(&self) -> bool {
        match self {
            LookupError::NotAHandle(_) => true,
            LookupError::Resolve(e) => e.is_not_found(),
        }
    }
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
        let mut builder = Resolver::builder();
        if let Some(t) = settings.timeout {
            builder = builder.timeout(t);
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
            #[cfg(feature = "demo")]
            _demo: demo,
        })
    }

    /// The public values of `handle` (with `types` / `indexes` filters when given), in the
    /// server's order; HS_ALIAS values are returned, not followed.
    pub async fn values(
        &self,
        handle: &str,
        types: &[String],
        indexes: &[u32],
    ) -> Result<Vec<HandleValue>, LookupError> {
        let h = Handle::parse(handle).map_err(|_| LookupError::NotAHandle(handle.to_owned()))?;
        let query = Query::new()
            .public_only(true)
            .follow_aliases(false)
            .types(types.iter().cloned())
            .indexes(indexes.iter().copied());
        let record = self.resolver.resolve_with(&h, &query).await?;
        Ok(record.values)
    }
}
