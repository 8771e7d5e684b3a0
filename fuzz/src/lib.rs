//! What the fuzz targets and the seed program share: the value types the `value` and `json`
//! targets pick from.

/// Every type with a typed view, plus one without. The `value` target's mode byte
/// `(i << 1) | 1` selects `TYPES[i]`.
pub const TYPES: [&str; 17] = [
    "URL",
    "EMAIL",
    "DESC",
    "HS_ADMIN",
    "HS_SITE",
    "HS_SITE.6",
    "HS_SITE.PREFIX",
    "HS_NA_DELEGATE",
    "HS_SERV",
    "HS_SERV.PREFIX",
    "HS_VLIST",
    "HS_ALIAS",
    "HS_PUBKEY",
    "HS_SECKEY",
    "HS_NAMESPACE",
    "10320/loc",
    "X-UNKNOWN",
];
