//! `certificate_identity`: the Handle identity a client certificate names, as a handle server
//! reads it (the reference's `X509HSTrustManager`): its subject's UID, else CN, else O, the
//! first of each in the order RFC 2253 writes the subject (the last RDN first); for pyhandle's
//! client-certificate credentials (`handle_resolver.pyhandle`).

use handle_resolver::auth::pem_block;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use x509_cert::der::asn1::ObjectIdentifier;
use x509_cert::der::{Decode, DecodePem, Tag, Tagged};
use x509_cert::Certificate;

const UID: ObjectIdentifier = ObjectIdentifier::new_unwrap("0.9.2342.19200300.100.1.1");
const CN: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.5.4.3");
const O: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.5.4.10");

/// The certificate of a file: its `CERTIFICATE` PEM block (other blocks, such as the private
/// key of a `certificate_and_key` file, are passed over), or DER.
fn certificate(file: &[u8]) -> Result<Certificate, String> {
    const BEGIN: &[u8] = b"-----BEGIN CERTIFICATE-----";
    if !file.windows(BEGIN.len()).any(|w| w == BEGIN) {
        return Certificate::from_der(file).map_err(|e| format!("not a certificate: {e}"));
    }
    let block = pem_block(file, "CERTIFICATE").ok_or("the CERTIFICATE block has no end line")?;
    let block = std::str::from_utf8(block).map_err(|_| "the PEM block is not text")?;
    Certificate::from_pem(block).map_err(|e| format!("not a certificate: {e}"))
}

/// The identity text the certificate's subject names (`"300:20.500.1/USER"`, or a handle
/// without an index), `None` when it has no UID, CN or O.
fn identity(cert: &Certificate) -> Option<String> {
    let mut found: [Option<String>; 3] = [None, None, None];
    for rdn in cert.tbs_certificate.subject.0.iter().rev() {
        for atv in rdn.0.iter() {
            let slot = [UID, CN, O].iter().position(|oid| *oid == atv.oid);
            let (Some(slot), Some(text)) = (slot, text(&atv.value)) else {
                continue;
            };
            found[slot].get_or_insert(text);
        }
    }
    let [uid, cn, o] = found;
    uid.or(cn).or(o)
}

fn text(value: &x509_cert::der::Any) -> Option<String> {
    match value.tag() {
        Tag::Utf8String | Tag::PrintableString | Tag::Ia5String | Tag::TeletexString => {
            String::from_utf8(value.value().to_vec()).ok()
        }
        _ => None,
    }
}

/// The Handle identity (`"INDEX:HANDLE"`) a client certificate (PEM or DER bytes) names in
/// its subject: UID, else CN, else O; `None` when it names none. `ValueError` when the bytes
/// hold no certificate.
#[pyfunction]
pub(crate) fn certificate_identity(data: &[u8]) -> PyResult<Option<String>> {
    let cert = certificate(data).map_err(PyValueError::new_err)?;
    Ok(identity(&cert))
}
