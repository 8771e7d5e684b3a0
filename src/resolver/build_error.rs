//! [`BuildError`]: why a [`ResolverBuilder`](super::ResolverBuilder) could not build a
//! resolver.

use thiserror::Error;

use crate::root::RootFileError;
use crate::transport::TransportKind;

/// Why a [`ResolverBuilder`](super::ResolverBuilder) could not build a resolver (a configuration mistake: nothing
/// was sent).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum BuildError {
    /// A root file could not be read.
    #[error("cannot read {path}: {message}")]
    ReadRootFile {
        /// The file.
        path: String,
        /// The operating system's reason.
        message: String,
    },
    /// A root file is not a `root_info` or `bootstrap_handles` file.
    #[error("{path}: {error}")]
    RootFile {
        /// The file.
        path: String,
        /// What is wrong with it.
        error: RootFileError,
    },
    /// The root information holds no site (and no server was fixed).
    #[error("no root site in the root information")]
    NoRootSites,
    /// The runtime of a [`crate::blocking::Resolver`] could not be started.
    #[error("cannot start the blocking resolver's runtime: {0}")]
    Runtime(String),
    /// The proxy URL is not an `http(s)://host[:port][/path]` URL.
    #[error(transparent)]
    ProxyUrl(#[from] crate::transport::addr::BaseUrlError),
    /// `certify(true)` promises answers whose signatures the resolver verified; a proxy's
    /// JSON carries no signature (ask the proxy to check with a certified `Query` instead).
    #[error("certify(true) needs the native protocol: a proxy's JSON carries no signature to verify (a certified Query asks the proxy to check, cert=true)")]
    CertifyOverProxy,
    /// No server of the first hop (the fixed [`server`](super::ResolverBuilder::server), else the
    /// root) has an interface for any of the chosen transports, so no request could ever be
    /// sent: a `HOST:PORT` root or server is reached over UDP and TCP only, an
    /// `http://HOST:PORT` one over HTTP only.
    #[error("the {} offers none of the chosen transports ({})", if *.server { "server" } else { "root" }, transport_list(.transports))]
    NoTransport {
        /// True for the fixed server, false for the root.
        server: bool,
        /// The transports chosen, in order.
        transports: Vec<TransportKind>,
    },
}

fn transport_list(kinds: &[TransportKind]) -> String {
    kinds
        .iter()
        .map(|k| k.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}
