//! HTTPS: a rustls listener of the certificate chain and key named in the config
//! (`tls_cert`, `tls_key`, PEM files). Handshakes run beside the accept loop (a slow client
//! holds up no other), each within [`HANDSHAKE_TIMEOUT`].

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use thiserror::Error;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_rustls::server::TlsStream;
use tokio_rustls::TlsAcceptor;

/// The time a client has to complete its TLS handshake.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Why the certificate or key cannot be used.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum TlsError {
    /// A PEM file cannot be read or holds nothing usable.
    #[error("{key} {path}: {reason}", path = path.display())]
    File {
        /// `tls_cert` or `tls_key`.
        key: &'static str,
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// rustls refuses the pair (a key that is not the certificate's, say).
    #[error("tls_cert/tls_key: {0}")]
    Config(#[from] rustls::Error),
}

/// The acceptor of the PEM certificate chain `cert` and private key `key`.
pub fn acceptor(cert: &Path, key: &Path) -> Result<TlsAcceptor, TlsError> {
    let bad = |k: &'static str, p: &Path, reason: String| TlsError::File {
        key: k,
        path: p.to_owned(),
        reason,
    };
    let chain = CertificateDer::pem_file_iter(cert)
        .map_err(|e| bad("tls_cert", cert, e.to_string()))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| bad("tls_cert", cert, e.to_string()))?;
    if chain.is_empty() {
        return Err(bad("tls_cert", cert, "no CERTIFICATE in the file".into()));
    }
    let key_der =
        PrivateKeyDer::from_pem_file(key).map_err(|e| bad("tls_key", key, e.to_string()))?;
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()?
    .with_no_client_auth()
    .with_single_cert(chain, key_der)?;
    let mut config = config;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}

/// A TCP listener whose connections are TLS, for `axum::serve`.
#[derive(Debug)]
pub struct TlsListener {
    incoming: mpsc::Receiver<(TlsStream<TcpStream>, SocketAddr)>,
    local: SocketAddr,
}

impl TlsListener {
    /// Accepts on `listener`, handshaking with `acceptor`.
    pub fn new(listener: TcpListener, acceptor: TlsAcceptor) -> std::io::Result<TlsListener> {
        let local = listener.local_addr()?;
        let (tx, incoming) = mpsc::channel(64);
        tokio::spawn(async move {
            loop {
                let (tcp, peer) = match listener.accept().await {
                    Ok(c) => c,
                    Err(e) => {
                        // Out of file descriptors, say: wait rather than spin.
                        tracing::warn!("accept: {e}");
                        tokio::time::sleep(Duration::from_millis(100)).await;
                        continue;
                    }
                };
                let (acceptor, sender) = (acceptor.clone(), tx.clone());
                tokio::spawn(async move {
                    match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(tcp)).await {
                        Ok(Ok(tls)) => {
                            let _ = sender.send((tls, peer)).await;
                        }
                        Ok(Err(e)) => tracing::debug!("TLS handshake with {peer}: {e}"),
                        Err(_) => tracing::debug!("TLS handshake with {peer}: timed out"),
                    }
                });
                if tx.is_closed() {
                    break;
                }
            }
        });
        Ok(TlsListener { incoming, local })
    }
}

impl axum::serve::Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.incoming.recv().await {
            Some(c) => c,
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> std::io::Result<SocketAddr> {
        Ok(self.local)
    }
}
