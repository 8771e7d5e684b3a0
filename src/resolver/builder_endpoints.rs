//! [`ResolverBuilder`]'s server and root as a front end's option names them ([`Endpoint`],
//! [`RootEndpoint`]: `HOST[:PORT]`, `hdl://`, `http(s)://`, a root file): the one place
//! `resolve`, `admin` and Python turn what they read into the builder's settings.

use super::builder::ResolverBuilder;
use crate::transport::addr::{Endpoint, RootEndpoint};

impl ResolverBuilder {
    /// Sends every request to this one server, without service lookup, as an [`Endpoint`]
    /// names it (what `--server` takes): [`Self::server`] or [`Self::server_http`].
    ///
    /// ```
    /// use handle_resolver::transport::addr::Endpoint;
    /// use handle_resolver::Resolver;
    ///
    /// let server = Endpoint::parse("http://127.0.0.1:8000")?;
    /// let builder = Resolver::builder().server_at(&server);
    /// # drop(builder);
    /// # Ok::<(), handle_resolver::transport::addr::EndpointError>(())
    /// ```
    pub fn server_at(self, endpoint: &Endpoint) -> Self {
        match endpoint {
            Endpoint::Native(addr) => self.server(*addr),
            Endpoint::Http { addr, host, tls } => self.server_http(*addr, host.as_deref(), *tls),
        }
    }

    /// The root as a [`RootEndpoint`] names it (what `--root` takes): a root file
    /// ([`Self::root_file`]) or a root server ([`Self::root_server`],
    /// [`Self::root_server_http`]).
    ///
    /// ```
    /// use handle_resolver::transport::addr::RootEndpoint;
    /// use handle_resolver::Resolver;
    ///
    /// let root = RootEndpoint::parse("127.0.0.1:2641")?;
    /// let builder = Resolver::builder().root_at(&root);
    /// # drop(builder);
    /// # Ok::<(), handle_resolver::transport::addr::EndpointError>(())
    /// ```
    pub fn root_at(self, root: &RootEndpoint) -> Self {
        match root {
            RootEndpoint::File(path) => self.root_file(path),
            RootEndpoint::Server(Endpoint::Native(addr)) => self.root_server(*addr),
            RootEndpoint::Server(Endpoint::Http { addr, host, tls }) => {
                self.root_server_http(*addr, host.as_deref(), *tls)
            }
        }
    }
}
