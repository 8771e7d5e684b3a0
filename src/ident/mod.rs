//! Identifiers: handles, CORDRA identifiers, `hdl:` URIs and URNs. No I/O.
