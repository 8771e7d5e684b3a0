//! [`ParseOptions`]: strict or lenient URI reading, and whether only CORDRA ids are accepted.

/// Options for [`Identifier::parse_with`](super::Identifier::parse_with) and
/// [`HandleUri::parse_with`](super::HandleUri::parse_with). The default is strict.
///
/// ```
/// use handle_resolver::ident::{Identifier, ParseOptions};
///
/// assert!(Identifier::parse("hdl:10.1000/a/b").is_err()); // strict: write a%2Fb
/// let lenient = ParseOptions::default().lenient(true);
/// let id = Identifier::parse_with("hdl:10.1000/a/b", lenient)?;
/// assert_eq!(id.to_handle()?.suffix(), "a/b");
/// # Ok::<(), handle_resolver::ident::IdentError>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ParseOptions {
    lenient: bool,
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

    /// Accept only CORDRA ids: a handle that breaks a CORDRA rule is rejected saying which
    /// rule and where, and so is a URN.
    pub fn cordra_only(mut self, on: bool) -> Self {
        self.cordra_only = on;
        self
    }

    /// Whether parsing is lenient.
    pub fn is_lenient(&self) -> bool {
        self.lenient
    }

    /// Whether only CORDRA ids are accepted.
    pub fn is_cordra_only(&self) -> bool {
        self.cordra_only
    }
}
