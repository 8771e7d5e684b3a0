//! The client's country from a GeoIP database the operator provides (`geoip_db`: a MaxMind DB
//! file such as GeoLite2-Country, read whole at start; feature `geoip`): the `country` that
//! chooses among a handle's `10320/loc` locations when the request names none
//! (`?country=` wins, as the reference reads only that).

use std::net::IpAddr;
use std::path::{Path, PathBuf};

/// Why the GeoIP database cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CountryDbError {
    /// The file cannot be read as a MaxMind DB.
    #[error("geoip_db {}: {reason}", path.display())]
    Open {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// This build reads no GeoIP database.
    #[error("geoip_db {}: this build reads no GeoIP database (build with the feature `geoip`)", .0.display())]
    NotBuilt(PathBuf),
}

/// An opened GeoIP database.
pub struct CountryDb {
    #[cfg(feature = "geoip")]
    reader: maxminddb::Reader<Vec<u8>>,
    /// A build without the feature has none (`open` refuses).
    #[cfg(not(feature = "geoip"))]
    none: std::convert::Infallible,
}

impl std::fmt::Debug for CountryDb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CountryDb").finish_non_exhaustive()
    }
}

impl CountryDb {
    /// Reads the database at `path` (into memory).
    pub fn open(path: &Path) -> Result<CountryDb, CountryDbError> {
        #[cfg(feature = "geoip")]
        {
            let reader =
                maxminddb::Reader::open_readfile(path).map_err(|e| CountryDbError::Open {
                    path: path.to_owned(),
                    reason: e.to_string(),
                })?;
            Ok(CountryDb { reader })
        }
        #[cfg(not(feature = "geoip"))]
        Err(CountryDbError::NotBuilt(path.to_owned()))
    }

    /// The country of `ip` (its `country.iso_code`, upper case): `None` when the database has
    /// no record for it, or one without a two-letter code.
    pub fn country(&self, ip: IpAddr) -> Option<String> {
        #[cfg(feature = "geoip")]
        {
            // An IPv4 client seen on an IPv6 listener (`::ffff:a.b.c.d`) as the IPv4 address.
            let found = self.reader.lookup(ip.to_canonical()).ok()?;
            let code: String = found
                .decode_path(&maxminddb::path!["country", "iso_code"])
                .ok()??;
            (code.len() == 2 && code.bytes().all(|b| b.is_ascii_alphabetic()))
                .then(|| code.to_ascii_uppercase())
        }
        #[cfg(not(feature = "geoip"))]
        {
            let _ = ip;
            match self.none {}
        }
    }
}
