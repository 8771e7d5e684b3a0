//! `handle_resolver.testing.TestNetwork`: the library's loopback test network (a root and a
//! service of several sites), started in-process on the shared runtime, for tests.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use handle_resolver::auth::PrivateKey;
use handle_resolver::testing::{Faults, TestNetwork as Lib, Urns};
use handle_resolver::wire::{
    encode_vlist, AdminRecord, HandleValue as Value, InterfaceType, Permissions, ValueReference,
};
use handle_resolver::Identifier;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use tokio::runtime::Runtime;

use crate::record::values_from_py;
use crate::runtime::{shared, PerProcess};

/// Every permission of an HS_ADMIN value.
const ALL_PERMISSIONS: u16 = 0x0FFF;

/// The first index from `from` that no value of `values` has.
fn free_index(values: &[Value], from: u32) -> u32 {
    (from..)
        .find(|i| !values.iter().any(|v| v.index == *i))
        .unwrap_or(from)
}

fn lock<T>(m: &Mutex<T>) -> PyResult<MutexGuard<'_, T>> {
    m.lock()
        .map_err(|_| PyRuntimeError::new_err("a lock was poisoned by a panic"))
}

/// A loopback Handle System for tests: a root server holding `0.NA/<prefix>` and the
/// service handle, and `sites` sites of `servers_per_site` servers each on 127.0.0.1, all
/// in this process. Resolve through it with `Resolver(root=net.root)`. It holds
/// `PREFIX/demo` (URL, EMAIL, DESC), `PREFIX/alias` (an HS_ALIAS to it), `PREFIX/secret` (a
/// public URL and a non-public value) and the admin identity `300:0.NA/PREFIX` with the
/// secret `admin_secret`, allowed everything under the prefix; `0.NA/PREFIX` also holds the
/// admin group that pyhandle's default HS_ADMIN names (`200:0.NA/PREFIX`, an HS_VLIST
/// listing the identity). Every site holds and serves a copy of `0.NA/PREFIX`, so that a
/// client talking to one server can check the identity. Stop it with `close()` or a `with`
/// block.
///
/// With `http=True` every server also has an HTTP side (the native protocol over HTTP, the
/// REST API), which the servers' records list as `http_interface`: `"adm+qry"` (default),
/// `"adm"`, `"qry"`, `"out-of-service"` (the reference's names), or `None`, left out. A
/// native request over HTTP of a kind not listed is refused as the reference refuses it
/// (`Received query request on non-query interface`); the REST API answers all the same.
/// A site has one server unless `servers_per_site` says more; with several, each answers
/// native resolutions only of the handles its site's hash gives it (301 otherwise, as the
/// reference), so one server's URL (`rest_url`) serves every handle only with one.
#[pyclass(frozen, module = "handle_resolver._native")]
pub(crate) struct TestNetwork {
    net: Mutex<Option<PerProcess<Lib>>>,
    rt: Arc<Runtime>,
    prefix: String,
    secret: String,
    urns: Mutex<Urns>,
    /// The root's address, also for a forked child (whose servers are the parent's).
    root: String,
}

impl TestNetwork {
    fn with<T>(&self, f: impl FnOnce(&Lib) -> T) -> PyResult<T> {
        let slot = lock(&self.net)?;
        match slot.as_ref().and_then(PerProcess::get) {
            Some(net) => Ok(f(net)),
            None => Err(PyRuntimeError::new_err(
                "the test network is closed (or belongs to the parent process)",
            )),
        }
    }
}

#[pymethods]
impl TestNetwork {
    /// Not a test class (for pytest, which collects classes named `Test*`).
    #[classattr]
    #[allow(non_upper_case_globals)]
    const __test__: bool = false;

    #[new]
    #[pyo3(signature = (*, sites=2, servers_per_site=1, prefix="20.500.1", http=false, admin_secret="test-admin-secret", http_interface=Some("adm+qry")))]
    fn new(
        py: Python<'_>,
        sites: usize,
        servers_per_site: usize,
        prefix: &str,
        http: bool,
        admin_secret: &str,
        http_interface: Option<&str>,
    ) -> PyResult<Self> {
        let http_kind = match http_interface {
            None => None,
            Some("adm+qry") => Some(InterfaceType::AdminAndQuery),
            Some("adm") => Some(InterfaceType::Admin),
            Some("qry") => Some(InterfaceType::Query),
            Some("out-of-service") => Some(InterfaceType::OutOfService),
            Some(other) => {
                return Err(PyValueError::new_err(format!(
                    "http_interface {other:?}: \"adm+qry\", \"adm\", \"qry\", \"out-of-service\" or None"
                )))
            }
        };
        if sites == 0 || servers_per_site == 0 || sites * servers_per_site > 64 {
            return Err(PyValueError::new_err(
                "sites and servers_per_site: at least 1, at most 64 servers in all",
            ));
        }
        let rt = shared()?;
        let builder = Lib::builder()
            .sites(sites)
            .servers_per_site(servers_per_site)
            .prefixes([prefix])
            .http(http)
            .http_kind(http_kind);
        let net = py
            .detach(|| rt.block_on(builder.build()))
            .map_err(|e| PyRuntimeError::new_err(format!("cannot start the test network: {e}")))?;
        let demo = format!("{prefix}/demo");
        net.insert(
            &demo,
            vec![
                Value::new(1, "URL", "https://example.org/demo"),
                Value::new(2, "EMAIL", "demo@example.org"),
                Value::new(3, "DESC", "a handle served by the test network"),
            ],
        );
        net.insert(
            format!("{prefix}/alias"),
            vec![Value::new(1, "HS_ALIAS", demo.clone())],
        );
        // The admin identity `300:0.NA/<prefix>`: its key (not public), the HS_ADMIN value
        // that lets it do everything under the prefix and the admin group pyhandle's default
        // HS_ADMIN names (`200:0.NA/<prefix>`, an HS_VLIST listing it), in the sites' stores
        // (where requests about the prefix's handles go; each serves its copy, so that a
        // client asking one server can check the identity) and beside the service reference
        // in the root's prefix handle (where a list of the prefix's handles goes).
        let prefix_handle = format!("0.NA/{prefix}");
        let failed = |e: &dyn std::fmt::Display| PyRuntimeError::new_err(e.to_string());
        let admin = AdminRecord::new(ALL_PERMISSIONS, prefix_handle.clone(), 300)
            .encode()
            .map_err(|e| failed(&e))?;
        let admin = Value::new(100, "HS_ADMIN", admin);
        let mut key = Value::new(300, "HS_SECKEY", admin_secret.to_string());
        key.permissions = Permissions(0x0C);
        let members = [ValueReference {
            handle: prefix_handle.clone().into(),
            index: 300,
        }];
        let group = Value::new(
            200,
            "HS_VLIST",
            encode_vlist(&members).map_err(|e| failed(&e))?,
        );
        net.insert(
            &prefix_handle,
            vec![admin.clone(), group.clone(), key.clone()],
        );
        for site in &net.sites {
            site.store.serve_handle(&prefix_handle);
        }
        let root_store = net.root_store();
        let mut at_root = root_store
            .get(&prefix_handle)
            .map(|h| h.values.clone())
            .unwrap_or_default();
        at_root.extend([admin.clone(), group, key]);
        root_store.insert(&prefix_handle, at_root);
        // A handle with a value only its administrator reads.
        let mut hidden = Value::new(2, "SECRET", "not for everyone");
        hidden.permissions = Permissions(0x0C);
        net.insert(
            format!("{prefix}/secret"),
            vec![
                Value::new(1, "URL", "https://example.org/secret"),
                hidden,
                admin,
            ],
        );
        let root_addr = net.root.addr().to_string();
        Ok(TestNetwork {
            net: Mutex::new(Some(PerProcess::new(net))),
            rt,
            prefix: prefix.to_string(),
            secret: admin_secret.to_string(),
            urns: Mutex::new(Urns::new()),
            root: root_addr,
        })
    }

    /// The root server, `"127.0.0.1:PORT"`: `Resolver(root=net.root)` (also in a forked
    /// child, where the servers are the parent's).
    #[getter]
    fn root(&self) -> &str {
        &self.root
    }

    /// The prefix the service homes.
    #[getter]
    fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The admin identity, `"300:0.NA/PREFIX"`.
    #[getter]
    fn admin_identity(&self) -> String {
        format!("300:0.NA/{}", self.prefix)
    }

    /// Its secret key.
    #[getter]
    fn admin_secret(&self) -> &str {
        &self.secret
    }

    /// Every server of every site, `"127.0.0.1:PORT"`, site by site.
    #[getter]
    fn servers(&self) -> PyResult<Vec<String>> {
        self.with(|n| {
            n.sites
                .iter()
                .flat_map(|s| &s.servers)
                .map(|s| s.addr().to_string())
                .collect()
        })
    }

    /// The server the primary site's hash picks for `handle` (`Resolver(server=...)`).
    fn server_for(&self, handle: &str) -> PyResult<Option<String>> {
        self.with(|n| {
            n.sites
                .first()
                .and_then(|s| s.server_for(handle.as_bytes()))
                .map(|s| s.addr().to_string())
        })
    }

    /// With `http=True`: the base URL of the first server's HTTP side, which also answers
    /// the handle.net REST API (`GET /api/handles/...`) for every handle of its site, the
    /// admin identity's `0.NA/PREFIX` too. Its native side answers every resolution of the
    /// site when the site has one server (the default).
    #[getter]
    fn rest_url(&self) -> PyResult<Option<String>> {
        self.with(|n| {
            n.sites
                .first()
                .and_then(|s| s.servers.first())
                .and_then(|s| s.http_addr())
                .map(|a| format!("http://{a}"))
        })
    }

    /// Stores `handle` with `values` (`HandleValue`s or REST-shaped dicts) on every site.
    fn insert(&self, handle: &str, values: &Bound<'_, PyAny>) -> PyResult<()> {
        let values = values_from_py(values)?;
        self.with(|n| n.insert(handle, values))
    }

    /// Makes `identity` (`"INDEX:HANDLE"`, the handle under the network's prefix or any
    /// other, served by every site either way) an administrator of the prefix: its handle
    /// (made when missing) gets an
    /// HS_SECKEY value at INDEX holding `secret` (not public) or an HS_PUBKEY value at INDEX
    /// with the public key of `key_file` (PEM/DER PKCS#8 or the reference's key file), and an
    /// HS_ADMIN value naming itself; the prefix handle `0.NA/PREFIX` (on the sites and the
    /// root) gets an HS_ADMIN value naming it with every permission.
    #[pyo3(signature = (identity, *, secret=None, key_file=None))]
    fn add_identity(
        &self,
        identity: &str,
        secret: Option<&str>,
        key_file: Option<std::path::PathBuf>,
    ) -> PyResult<()> {
        let bad = || PyValueError::new_err(format!("identity {identity:?}: INDEX:HANDLE"));
        let (index, handle) = identity.split_once(':').ok_or_else(bad)?;
        let index: u32 = index.parse().map_err(|_| bad())?;
        let key = match (secret, key_file) {
            (Some(secret), None) => {
                let mut v = Value::new(index, "HS_SECKEY", secret.to_string());
                v.permissions = Permissions(0x0C);
                v
            }
            (None, Some(file)) => {
                let key = PrivateKey::from_file(&file)
                    .map_err(|e| PyValueError::new_err(format!("{}: {e}", file.display())))?;
                let data = key
                    .public_key()
                    .encode()
                    .map_err(|e| PyValueError::new_err(e.to_string()))?;
                Value::new(index, "HS_PUBKEY", data)
            }
            _ => return Err(PyValueError::new_err("give secret or key_file")),
        };
        let admin_of = |who: &str, at: u32| -> PyResult<Value> {
            let rec = AdminRecord::new(ALL_PERMISSIONS, who.to_string(), index)
                .encode()
                .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
            Ok(Value::new(at, "HS_ADMIN", rec))
        };
        let prefix_handle = format!("0.NA/{}", handle.split('/').next().unwrap_or(handle));
        self.with(|n| -> PyResult<()> {
            for store in n.sites.iter().map(|s| &s.store) {
                // The identity's own handle: its key and an HS_ADMIN value, beside what
                // it holds already (a value at the same index is replaced).
                let mut own = store
                    .get(handle)
                    .map(|h| h.values.clone())
                    .unwrap_or_default();
                own.retain(|v| v.index != index);
                own.push(key.clone());
                if !own.iter().any(|v| v.is_type("HS_ADMIN")) {
                    own.push(admin_of(handle, free_index(&own, 100))?);
                }
                store.insert(handle, own);
                // Served here whatever its prefix, as the admin identity's is.
                store.serve_handle(handle);
            }
            let stores = n.sites.iter().map(|s| &s.store);
            for store in stores.chain(std::iter::once(n.root_store())) {
                if let Some(prefix) = store.get(&prefix_handle) {
                    let mut values = prefix.values.clone();
                    values.push(admin_of(handle, free_index(&values, 101))?);
                    store.insert(&prefix_handle, values);
                }
            }
            Ok(())
        })?
    }

    /// A client's key and certificate, `(key_pem, certificate_pem)`: an RSA key (PKCS#8
    /// PEM) and a self-signed certificate for it whose subject's UID is `identity`, what
    /// pyhandle's client-certificate credentials hold (`add_identity(identity,
    /// key_file=...)` registers the key's HS_PUBKEY).
    ///
    /// With `passphrase`, the key is an `ENCRYPTED PRIVATE KEY` (PKCS#8, PBES2).
    #[staticmethod]
    #[pyo3(signature = (identity, passphrase=None))]
    fn client_certificate(identity: &str, passphrase: Option<&str>) -> PyResult<(String, String)> {
        let failed = |e: &dyn std::fmt::Display| PyRuntimeError::new_err(e.to_string());
        let (key, cert) = handle_resolver::testing::TestKey::embedded_2048()
            .client_certificate(identity)
            .map_err(|e| failed(&e))?;
        let Some(passphrase) = passphrase else {
            return Ok((key, cert));
        };
        let encrypted = PrivateKey::from_pkcs8_pem(&key)
            .and_then(|k| k.to_pkcs8_pem(Some(passphrase.as_bytes())))
            .map_err(|e| failed(&e))?;
        Ok((encrypted.to_string(), cert))
    }

    /// With `http=True`: the servers' HTTP sides resolve `urn` (`urn:fdc:...`, `urn-3:...`)
    /// to `urls` over RFC 2169 (`Resolver(urn_resolver=net.rest_url)`).
    fn add_urn(&self, urn: &str, urls: Vec<String>) -> PyResult<()> {
        let parsed = Identifier::parse(urn)
            .ok()
            .and_then(|id| id.as_urn().cloned())
            .ok_or_else(|| {
                PyValueError::new_err(format!("{urn:?} is not a urn:fdc or urn-3 URN"))
            })?;
        let mut urns = lock(&self.urns)?;
        urns.insert(&parsed, urls);
        let all = urns.clone();
        self.with(|n| {
            for server in n.sites.iter().flat_map(|s| &s.servers) {
                server.set_urns(all.clone());
            }
        })
    }

    /// Stores `count` handles `PREFIX/0` ... `PREFIX/{count-1}`, each with one URL value
    /// `https://example.org/{i}` (for bulk runs).
    fn populate(&self, count: usize) -> PyResult<()> {
        let prefix = self.prefix.clone();
        self.with(|n| {
            for i in 0..count {
                n.insert(
                    format!("{prefix}/{i}"),
                    vec![Value::new(1, "URL", format!("https://example.org/{i}"))],
                );
            }
        })
    }

    /// Removes `handle` from every site; True when it was there.
    fn remove(&self, handle: &str) -> PyResult<bool> {
        self.with(|n| {
            n.sites
                .iter()
                .map(|s| s.store.remove(handle))
                .filter(|removed| *removed)
                .count()
                > 0
        })
    }

    /// The handles stored on the primary site (what admin requests changed).
    fn handles(&self) -> PyResult<usize> {
        self.with(|n| n.sites.first().map_or(0, |s| s.store.len()))
    }

    /// What every server (the root too, unless `sites_only`) does wrong from now on:
    /// `silent` (receive, never answer), `delay` (seconds before each answer),
    /// `drop_ratio` (share of UDP requests dropped), `garbage` (TCP: random bytes instead of
    /// the answer), `block_udp`, `block_tcp` (as a firewall). No argument: healthy again.
    #[pyo3(signature = (*, silent=false, delay=0.0, drop_ratio=0.0, garbage=false, block_udp=false, block_tcp=false, sites_only=false))]
    #[allow(clippy::too_many_arguments)]
    fn set_faults(
        &self,
        silent: bool,
        delay: f64,
        drop_ratio: f64,
        garbage: bool,
        block_udp: bool,
        block_tcp: bool,
        sites_only: bool,
    ) -> PyResult<()> {
        if !(delay.is_finite() && (0.0..=3600.0).contains(&delay)) {
            return Err(PyValueError::new_err("delay: seconds, 0 to 3600"));
        }
        if !(0.0..=1.0).contains(&drop_ratio) {
            return Err(PyValueError::new_err("drop_ratio: 0.0 to 1.0"));
        }
        let faults = Faults {
            silent,
            delay: Duration::from_secs_f64(delay),
            drop_ratio,
            garbage,
            block_udp,
            block_tcp,
            ..Faults::default()
        };
        self.with(|n| match sites_only {
            true => n.sites.iter().for_each(|s| s.set_faults(faults.clone())),
            false => n.set_faults(faults),
        })
    }

    /// Requests received by the sites' servers (the root excluded): UDP datagrams, TCP
    /// requests and HTTP requests.
    fn requests(&self) -> PyResult<u64> {
        self.with(|n| n.udp_requests() + n.tcp_requests() + n.http_requests())
    }

    /// Stops every server.
    fn close(&self) -> PyResult<()> {
        let taken = lock(&self.net)?.take();
        if let Some(net) = taken {
            let _entered = self.rt.enter();
            drop(net);
        }
        Ok(())
    }

    fn __enter__(slf: Bound<'_, Self>) -> Bound<'_, Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&self, _args: &Bound<'_, pyo3::types::PyTuple>) -> PyResult<bool> {
        self.close()?;
        Ok(false)
    }

    fn __repr__(&self) -> String {
        format!(
            "TestNetwork(root={:?}, prefix={:?})",
            self.root, self.prefix
        )
    }
}
