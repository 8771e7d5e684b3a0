//! TLS for HTTPS, on rustls with the `ring` provider (no OpenSSL):
//! - a native HTTPS interface is pinned to the server's key from its HS_SITE record: the
//!   certificate (self-signed, as handle servers make them) must carry exactly that key, and
//!   the handshake must be signed with it; chains, names and validity dates are not what
//!   trust rests on there. Only RSA keys can be pinned: rustls does not speak the DSA cipher
//!   suites, so an HTTPS interface of a DSA-keyed server is not used (the reference client
//!   trusts any certificate there and relies on message signatures instead; we use its HTTP
//!   interface, where `certify` gives the same protection);
//! - without a key to pin (a URL the user typed, a REST proxy) the certificate is checked
//!   against the web PKI roots for the host name;
//! - [`unverified`], only where a user asks for it (pyhandle's `HTTPS_verify=False` for a
//!   server's REST API): any certificate, the handshake still signed with its key.

use std::sync::{Arc, LazyLock};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, ClientConfig, DigitallySignedStruct, SignatureScheme};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;
use tokio_rustls::TlsConnector;

use super::super::error::TransportError;
use super::target::HttpTarget;
use crate::wire::PublicKey;

/// The crypto provider every TLS setting here uses.
pub(crate) fn provider() -> Arc<CryptoProvider> {
    static PROVIDER: LazyLock<Arc<CryptoProvider>> =
        LazyLock::new(|| Arc::new(rustls::crypto::ring::default_provider()));
    PROVIDER.clone()
}

/// Client settings that check certificates against the web PKI roots.
pub(crate) fn web_pki() -> Result<Arc<ClientConfig>, TransportError> {
    static CONFIG: LazyLock<Result<Arc<ClientConfig>, String>> = LazyLock::new(|| {
        let roots = rustls::RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
        };
        ClientConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .map(|b| Arc::new(b.with_root_certificates(roots).with_no_client_auth()))
            .map_err(|e| e.to_string())
    });
    CONFIG.clone().map_err(TransportError::Tls)
}

/// Client settings that accept any certificate (the handshake must still be signed with its
/// key): what a user asks for with pyhandle's `HTTPS_verify=False`, never a default.
pub(crate) fn unverified() -> Result<Arc<ClientConfig>, TransportError> {
    with_key_check(None)
}

/// Client settings whose certificate check is `key`: exactly the certificate carrying that
/// key, or with `None` any certificate; either way the handshake signed with its key.
fn with_key_check(key: Option<rsa::RsaPublicKey>) -> Result<Arc<ClientConfig>, TransportError> {
    let provider = provider();
    let verifier = KeyCheck {
        key,
        algorithms: provider.signature_verification_algorithms,
    };
    let config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| TransportError::Tls(e.to_string()))?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier))
        .with_no_client_auth();
    Ok(Arc::new(config))
}

/// Client settings that accept exactly the certificate carrying `key` (HS_PUBKEY bytes).
fn pinned(key: &[u8]) -> Result<Arc<ClientConfig>, TransportError> {
    let rsa = match PublicKey::decode(key) {
        Ok(k) => k.to_rsa().map_err(|_| {
            TransportError::Tls("the server's key is not RSA: cannot pin it".into())
        })?,
        Err(e) => return Err(TransportError::Tls(format!("the server's key: {e}"))),
    };
    with_key_check(Some(rsa))
}

/// The TLS handshake on `stream` for `target`.
pub(crate) async fn connect(
    target: &HttpTarget,
    stream: TcpStream,
) -> Result<TlsStream<TcpStream>, TransportError> {
    let config = match &target.pinned_key {
        Some(key) => pinned(key)?,
        None => web_pki()?,
    };
    let name = match &target.host {
        Some(host) => ServerName::try_from(host.clone())
            .map_err(|_| TransportError::Tls(format!("{host:?} is not a server name")))?,
        None => ServerName::IpAddress(target.addr.ip().into()),
    };
    TlsConnector::from(config)
        .connect(name, stream)
        .await
        .map_err(|e| TransportError::Tls(e.to_string()))
}

/// Accepts the certificate whose public key is `key` (with `None`, any certificate), and
/// handshakes signed with the certificate's key.
#[derive(Debug)]
struct KeyCheck {
    key: Option<rsa::RsaPublicKey>,
    algorithms: rustls::crypto::WebPkiSupportedAlgorithms,
}

impl ServerCertVerifier for KeyCheck {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let Some(expected) = &self.key else {
            return Ok(ServerCertVerified::assertion());
        };
        match certificate_key(end_entity) {
            Some(key) if key == *expected => Ok(ServerCertVerified::assertion()),
            Some(_) => Err(rustls::Error::InvalidCertificate(
                CertificateError::ApplicationVerificationFailure,
            )),
            None => Err(rustls::Error::InvalidCertificate(
                CertificateError::BadEncoding,
            )),
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

/// The RSA key of a DER certificate, if it has one.
fn certificate_key(der: &[u8]) -> Option<rsa::RsaPublicKey> {
    use rsa::pkcs8::DecodePublicKey;
    use x509_cert::der::{Decode, Encode};
    let cert = x509_cert::Certificate::from_der(der).ok()?;
    let spki = cert.tbs_certificate.subject_public_key_info.to_der().ok()?;
    rsa::RsaPublicKey::from_public_key_der(&spki).ok()
}
