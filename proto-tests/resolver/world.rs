//! A scripted world: a root at 127.0.0.1 and a service of two three-server sites
//! (127.0.0.10-12 primary, 127.0.0.20-22 mirror) reached through `0.NA/20.500.1` →
//! HS_SERV `0.SERV/20.500.1`.

use std::net::SocketAddr;
use std::sync::Arc;

use handle_resolver::testing::{Store, TestKey};
use handle_resolver::wire::{HandleValue, SiteInfo};
use handle_resolver::{Resolver, ResolverBuilder};

use super::mock::{addr, site, site_value, store_server, MockNet};

pub const PREFIX: &str = "20.500.1";

pub struct World {
    pub net: Arc<MockNet>,
    pub root: SocketAddr,
    pub root_site: SiteInfo,
    pub root_store: Arc<Store>,
    pub sites: Vec<SiteInfo>,
    pub store: Arc<Store>,
}

impl World {
    /// The scripted world; servers sign CT answers when `key` is given.
    pub fn new(key: Option<TestKey>) -> World {
        let net = MockNet::new();
        let root = addr(1);
        let root_site = site(&[root], true, "root", key.as_ref());
        let root_store = Arc::new(Store::new());
        root_store.insert("0.NA/0.NA", vec![site_value(1, &root_site)]);
        let site_a = site(
            &[addr(10), addr(11), addr(12)],
            true,
            "site A",
            key.as_ref(),
        );
        let site_b = site(
            &[addr(20), addr(21), addr(22)],
            false,
            "site B",
            key.as_ref(),
        );
        root_store.insert(
            format!("0.NA/{PREFIX}"),
            vec![HandleValue::new(1, "HS_SERV", format!("0.SERV/{PREFIX}"))],
        );
        root_store.insert(
            format!("0.SERV/{PREFIX}"),
            vec![site_value(1, &site_a), site_value(2, &site_b)],
        );
        net.serve(root, store_server(root_store.clone(), None, key.clone()));
        let store = Arc::new(Store::new());
        store.home_prefix(PREFIX);
        for info in [&site_a, &site_b] {
            for (i, s) in info.servers.iter().enumerate() {
                let a = SocketAddr::new(s.address, 2641);
                net.serve(
                    a,
                    store_server(store.clone(), Some((info.clone(), i)), key.clone()),
                );
            }
        }
        World {
            net,
            root,
            root_site,
            root_store,
            sites: vec![site_a, site_b],
            store,
        }
    }

    /// A resolver builder bootstrapped at the root, on the scripted network.
    pub fn builder(&self) -> ResolverBuilder {
        Resolver::builder()
            .root_sites([self.root_site.clone()])
            .exchange(self.net.clone())
            .rng_seed(3)
    }

    pub fn resolver(&self) -> Resolver {
        self.builder().build().unwrap()
    }

    /// The address of the server of site `s` the hash picks for `handle`.
    pub fn hashed(&self, s: usize, handle: &str) -> SocketAddr {
        let server = self.sites[s].server_for(handle.as_bytes()).unwrap();
        SocketAddr::new(server.address, 2641)
    }

    /// Every server address of site `s`.
    pub fn servers(&self, s: usize) -> Vec<SocketAddr> {
        self.sites[s]
            .servers
            .iter()
            .map(|x| SocketAddr::new(x.address, 2641))
            .collect()
    }
}

/// `n` URL values `http://example.org/<handle>/<i>`.
pub fn urls(handle: &str, n: u32) -> Vec<HandleValue> {
    (1..=n)
        .map(|i| HandleValue::new(i, "URL", format!("http://example.org/{handle}/{i}")))
        .collect()
}
