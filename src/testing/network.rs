//! A whole test network on loopback: a root server and N sites of M servers, wired together
//! with HS_SITE / HS_SERV values so that a resolver can run the full chain
//! root → `0.NA/<prefix>` (→ `0.SERV/<prefix>`) → the hashed server of a site.

use std::sync::Arc;

use bytes::Bytes;

use super::faults::Faults;
use super::server::{interfaces, TestServer, TestServerConfig};
use super::store::Store;
use crate::wire::{HandleValue, HashOption, InterfaceType, ProtocolVersion, ServerInfo, SiteInfo};

/// Builder of a [`TestNetwork`].
#[derive(Debug, Clone)]
pub struct TestNetworkBuilder {
    sites: usize,
    servers_per_site: usize,
    prefixes: Vec<String>,
    hash_option: HashOption,
    via_serv: bool,
    seed: u64,
    udp_workers: usize,
    case_insensitive: bool,
    http: bool,
    http_kind: Option<InterfaceType>,
}

impl Default for TestNetworkBuilder {
    fn default() -> Self {
        Self {
            sites: 2,
            servers_per_site: 3,
            prefixes: vec!["20.500.1".into()],
            hash_option: HashOption::ByHandle,
            via_serv: true,
            seed: 1,
            udp_workers: 1,
            case_insensitive: false,
            http: false,
            http_kind: Some(InterfaceType::AdminAndQuery),
        }
    }
}

impl TestNetworkBuilder {
    /// Number of sites of the service (default 2). Site 0 is primary, the others mirrors.
    pub fn sites(mut self, n: usize) -> Self {
        self.sites = n.max(1);
        self
    }

    /// Servers per site (default 3); the hash rule picks one per handle.
    pub fn servers_per_site(mut self, n: usize) -> Self {
        self.servers_per_site = n.max(1);
        self
    }

    /// The prefixes the service homes (default `["20.500.1"]`); replaces the list.
    pub fn prefixes<I, S>(mut self, prefixes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.prefixes = prefixes.into_iter().map(Into::into).collect();
        self
    }

    /// Hash option of the sites (default by whole handle).
    pub fn hash_option(mut self, h: HashOption) -> Self {
        self.hash_option = h;
        self
    }

    /// `true` (default): `0.NA/<prefix>` holds an HS_SERV value naming `0.SERV/<prefix>`,
    /// which holds the HS_SITE values. `false`: the HS_SITE values sit in `0.NA/<prefix>`.
    pub fn via_serv(mut self, yes: bool) -> Self {
        self.via_serv = yes;
        self
    }

    /// Seed of the servers' fault RNGs (server k gets `seed + k`).
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// UDP worker tasks per server (default 1).
    pub fn udp_workers(mut self, n: usize) -> Self {
        self.udp_workers = n;
        self
    }

    /// Service stores fold case in suffixes too.
    pub fn case_insensitive(mut self, yes: bool) -> Self {
        self.case_insensitive = yes;
        self
    }

    /// Every server also serves the native protocol over HTTP, and its site record says so
    /// (default off).
    pub fn http(mut self, yes: bool) -> Self {
        self.http = yes;
        self
    }

    /// How the servers' records list their HTTP sides (with [`http`](Self::http)): `Some(kind)`
    /// (default [`InterfaceType::AdminAndQuery`]) or `None`, left out. A native request over
    /// HTTP of a kind the record does not list the interface for is refused as the reference
    /// refuses it ([`TestServerConfig::http_kind`]); the REST API is served all the same.
    pub fn http_kind(mut self, kind: Option<InterfaceType>) -> Self {
        self.http_kind = kind;
        self
    }

    /// Starts every server and writes the service information.
    pub async fn build(self) -> std::io::Result<TestNetwork> {
        let mut seed = self.seed;
        let mut config = |store: Arc<Store>, id: u32, desc: String, primary: bool| {
            let mut c = TestServerConfig::new(store);
            c.seed = seed;
            seed = seed.wrapping_add(1);
            c.server_id = id;
            c.description = desc;
            c.primary = primary;
            c.udp_workers = self.udp_workers;
            c.http = self.http;
            c.http_kind = self.http_kind;
            c
        };
        let root_store = Arc::new(Store::new());
        root_store.home_prefix("0.NA");
        root_store.home_prefix("0.SERV");
        let root =
            TestServer::start(config(root_store.clone(), 1, "test root".into(), true)).await?;
        root_store.insert("0.NA/0.NA", vec![root.site_value(1)]);

        let mut sites = Vec::with_capacity(self.sites);
        for s in 0..self.sites {
            let store = Arc::new(if self.case_insensitive {
                Store::case_insensitive()
            } else {
                Store::new()
            });
            for p in &self.prefixes {
                store.home_prefix(p);
            }
            let mut servers = Vec::with_capacity(self.servers_per_site);
            for k in 0..self.servers_per_site {
                let c = config(
                    store.clone(),
                    k as u32 + 1,
                    format!("test site {s}"),
                    s == 0,
                );
                servers.push(TestServer::start(c).await?);
            }
            let info = SiteInfo {
                data_format_version: 1,
                protocol_version: ProtocolVersion::V2_11,
                serial: 1,
                primary: s == 0,
                multi_primary: false,
                // Bit 0x80 = primary (PROTOCOL.md §7.1); kept in step with `primary`.
                primary_mask: if s == 0 { 0x80 } else { 0 },
                hash_option: self.hash_option,
                hash_filter: Bytes::new(),
                attributes: vec![(
                    Bytes::from_static(b"desc"),
                    Bytes::from(format!("test site {s}")),
                )],
                servers: servers.iter().map(TestServer::server_info).collect(),
            };
            for (k, server) in servers.iter().enumerate() {
                server.set_site(info.clone(), k)?;
            }
            sites.push(TestSite {
                servers,
                info,
                store,
            });
        }

        let net = TestNetwork {
            root,
            sites,
            prefixes: self.prefixes,
        };
        for p in &net.prefixes {
            let site_values = net.site_values();
            if self.via_serv {
                let serv = format!("0.SERV/{p}");
                root_store.insert(
                    format!("0.NA/{p}"),
                    vec![HandleValue::new(
                        1,
                        &b"HS_SERV"[..],
                        Bytes::from(serv.clone()),
                    )],
                );
                root_store.insert(serv, site_values);
            } else {
                root_store.insert(format!("0.NA/{p}"), site_values);
            }
        }
        Ok(net)
    }
}

/// One site of the service.
#[derive(Debug)]
pub struct TestSite {
    /// Its servers, in server-record order (the order the hash indexes).
    pub servers: Vec<TestServer>,
    /// Its service information (what its HS_SITE value holds).
    pub info: SiteInfo,
    /// The store all its servers share.
    pub store: Arc<Store>,
}

impl TestSite {
    /// The server the hash rule picks for `handle`.
    pub fn server_for(&self, handle: &[u8]) -> Option<&TestServer> {
        self.servers.get(self.info.server_index_for(handle)?)
    }

    /// UDP datagrams received by all its servers.
    pub fn udp_requests(&self) -> u64 {
        self.servers.iter().map(TestServer::udp_requests).sum()
    }

    /// TCP requests received by all its servers.
    pub fn tcp_requests(&self) -> u64 {
        self.servers.iter().map(TestServer::tcp_requests).sum()
    }

    /// Sets the faults of every server of the site.
    pub fn set_faults(&self, faults: Faults) {
        for s in &self.servers {
            s.set_faults(faults.clone());
        }
    }
}

/// A root server plus the sites of one service. Dropping it stops every server.
#[derive(Debug)]
pub struct TestNetwork {
    /// The root ("GHR") server: homes `0.NA` and `0.SERV`; holds `0.NA/0.NA` (its own
    /// HS_SITE), `0.NA/<prefix>` and, with `via_serv`, `0.SERV/<prefix>`.
    pub root: TestServer,
    /// The service's sites.
    pub sites: Vec<TestSite>,
    prefixes: Vec<String>,
}

impl TestNetwork {
    /// A builder with the defaults (2 sites × 3 servers, prefix `20.500.1`, via HS_SERV).
    pub fn builder() -> TestNetworkBuilder {
        TestNetworkBuilder::default()
    }

    /// The prefixes served.
    pub fn prefixes(&self) -> &[String] {
        &self.prefixes
    }

    /// The root's HS_SITE value: what a resolver bootstraps from (the "root info").
    pub fn root_values(&self) -> Vec<HandleValue> {
        vec![self.root.site_value(1)]
    }

    /// The root's site information.
    pub fn root_site(&self) -> SiteInfo {
        self.root.site_info()
    }

    /// One HS_SITE value per site (indexes 1, 2, ...).
    pub fn site_values(&self) -> Vec<HandleValue> {
        self.sites
            .iter()
            .enumerate()
            .filter_map(|(i, s)| {
                let data = s.info.encode().ok()?;
                Some(HandleValue::new(i as u32 + 1, &b"HS_SITE"[..], data))
            })
            .collect()
    }

    /// Stores `handle` on every site.
    pub fn insert(&self, handle: impl AsRef<[u8]>, values: Vec<HandleValue>) {
        for s in &self.sites {
            s.store.insert(handle.as_ref(), values.clone());
        }
    }

    /// The store of the root server (to add `0.NA/...` handles, referrals, ...).
    pub fn root_store(&self) -> &Arc<Store> {
        self.root.store()
    }

    /// UDP datagrams received by every server of every site (the root excluded).
    pub fn udp_requests(&self) -> u64 {
        self.sites.iter().map(TestSite::udp_requests).sum()
    }

    /// TCP requests received by every server of every site (the root excluded).
    pub fn tcp_requests(&self) -> u64 {
        self.sites.iter().map(TestSite::tcp_requests).sum()
    }

    /// HTTP requests received by every server of every site (the root excluded).
    pub fn http_requests(&self) -> u64 {
        self.sites
            .iter()
            .flat_map(|s| &s.servers)
            .map(TestServer::http_requests)
            .sum()
    }

    /// Sets the faults of every server, the root included.
    pub fn set_faults(&self, faults: Faults) {
        self.root.set_faults(faults.clone());
        for s in &self.sites {
            s.set_faults(faults.clone());
        }
    }
}

/// A server record for an address that nobody serves (for "dead server" tests).
pub fn unreachable_server(server_id: u32, port: u16) -> ServerInfo {
    let mut s = ServerInfo::new(server_id, super::server::LOOPBACK);
    s.interfaces = interfaces(port);
    s
}
