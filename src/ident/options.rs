//! [`ParseOptions`]: how identifiers are read: as people paste them (the default), by the
//! CORDRA URI profile (strict), leniently, and whether only CORDRA ids are accepted.

/// Options for [`Identifier::parse_with`](super::Identifier::parse_with) and
/// [`HandleUri::parse_with`](super::HandleUri::parse_with).
///
/// The default reads what people paste as the handle they mean: a resolver URL
/// (`https://doi.org/10.1093/nar/gkaa1100`, `https://hdl.handle.net/20.500.1/a/b`, a REST URL
/// `…/api/handles/<handle>`) is read as the proxies read it: the whole path, percent-decoded,
/// is the handle, so a `/` in the suffix needs no `%2F`; and a proxy URL without its scheme
/// (`doi.org/10.1000/x`) is one too. `hdl:`, `hdl://` and `doi:` URIs keep their URI grammar.
/// [`strict`](Self::strict) reads resolver URLs by the CORDRA URI profile instead.
///
/// ```
/// use handle_resolver::ident::{ErrorKind, ParseOptions};
/// use handle_resolver::Identifier;
///
/// let id = Identifier::parse("https://hdl.handle.net/20.500.1/a/b?noredirect")?;
/// assert_eq!(id.to_handle()?.as_str(), "20.500.1/a/b");
/// assert_eq!(id.query(), Some("noredirect"));
/// assert_eq!(Identifier::parse("doi.org/10.1000/x")?.to_handle()?.as_str(), "10.1000/x");
///
/// let strict = ParseOptions::default().strict(true);
/// let err = Identifier::parse_with("https://hdl.handle.net/20.500.1/a/b", strict).unwrap_err();
/// assert_eq!(err.kind(), ErrorKind::ExtraPathSegment); // the profile wants a%2Fb
///
/// assert!(Identifier::parse("hdl:10.1000/a/b").is_err()); // URI grammar: write a%2Fb
/// let lenient = ParseOptions::default().lenient(true);
/// let id = Identifier::parse_with("hdl:10.1000/a/b", lenient)?;
/// assert_eq!(id.to_handle()?.suffix(), "a/b");
/// # Ok::<(), handle_resolver::ident::IdentError>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ParseOptions {
    lenient: bool,
    strict: bool,
    cordra_only: bool,
}

impl ParseOptions {
    /// Lenient parsing: in URIs everything after the prefix's `/` is the local name (a `/` in
    /// it need not be written `%2F`), and query and fragment are only checked for control
    /// characters.
    pub fn lenient(mut self, on: bool) -> Self {
        self.lenient = on;
        self
    }

    /// The CORDRA URI profile's strict reading of resolver URLs: after an optional resolver
    /// segment (`/hdl/`), exactly `PREFIX/LOCAL`, each part percent-decoded on its own, a `/`
    /// in the local name written `%2F`, the URI grammar checked; text without a scheme is a
    /// bare handle, never a URL. [`cordra_only`](Self::cordra_only) implies it.
    pub fn strict(mut self, on: bool) -> Self {
        self.strict = on;
        self
    }

    /// Accept only CORDRA ids, read by the CORDRA URI profile ([`strict`](Self::strict)): a
    /// handle that breaks a CORDRA rule is rejected saying which rule and where, and so is a
    /// URN.
    pub fn cordra_only(mut self, on: bool) -> Self {
        self.cordra_only = on;
        self
    }

    /// Whether parsing is lenient.
    pub fn is_lenient(&self) -> bool {
        self.lenient
    }

    /// Whether resolver URLs are read by the CORDRA URI profile (asked for, or implied by
    /// [`cordra_only`](Self::cordra_only)).
    pub fn is_strict(&self) -> bool {
        self.strict || self.cordra_only
    }

    /// Whether only CORDRA ids are accepted.
    pub fn is_cordra_only(&self) -> bool {
        self.cordra_only
    }
}
