//! Handle names as the trust claims write them: `index:handle` value references (`iss`,
//! `sub`, `chain`), and the comparisons and permission scopes of the reference library
//! (`Util.equalsPrefixCI`, `isHandleUnderPrefix`, `isDerivedFrom`, `getZeroNAHandle`).

use std::fmt;

use crate::ident::Handle;

/// The trust root's handle: the chain of every signature ends at a self-signed certificate
/// about a key of this handle.
pub const TRUST_ROOT_HANDLE: &str = "0.0/0.0";

/// One value of a handle record, written `index:handle` in claims (`301:0.NA/0.NA`); index 0
/// stands for the handle as a whole.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ValueId {
    /// The handle.
    pub handle: String,
    /// The value's index (0: the handle itself, no particular value).
    pub index: u32,
}

impl ValueId {
    /// The value `index` of `handle`.
    pub fn new(handle: impl Into<String>, index: u32) -> Self {
        Self {
            handle: handle.into(),
            index,
        }
    }

    /// Reads `index:handle` as the reference library's `ValueReference.fromString` does: a
    /// decimal index before the first `:`, else the whole text is a handle (index 0).
    ///
    /// ```
    /// use handle_resolver::trust::ValueId;
    /// assert_eq!(ValueId::parse("301:0.NA/0.NA"), ValueId::new("0.NA/0.NA", 301));
    /// assert_eq!(ValueId::parse("0.GHR/20"), ValueId::new("0.GHR/20", 0));
    /// assert_eq!(ValueId::parse("x:10.1/a"), ValueId::new("x:10.1/a", 0));
    /// ```
    pub fn parse(text: &str) -> Self {
        if let Some((index, handle)) = text.split_once(':') {
            if !index.is_empty() && index.bytes().all(|b| b.is_ascii_digit()) {
                if let Ok(index) = index.parse::<u32>() {
                    return Self::new(handle, index);
                }
            }
        }
        Self::new(text, 0)
    }

    /// True when both name the same value: equal indexes and [`same_handle`].
    pub fn same(&self, other: &ValueId) -> bool {
        self.index == other.index && same_handle(&self.handle, &other.handle)
    }
}

impl fmt::Display for ValueId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.index == 0 {
            f.write_str(&self.handle)
        } else {
            write!(f, "{}:{}", self.index, self.handle)
        }
    }
}

/// A handle in the form used to compare it: the prefix in ASCII upper case, the whole handle
/// for the `0.` prefixes ([`Handle::normalized`]). Text that is not a handle compares as it
/// is.
pub(crate) fn handle_key(handle: &str) -> String {
    match Handle::parse(handle) {
        Ok(h) => h.normalized().into_string(),
        Err(_) => handle.to_string(),
    }
}

/// True when two handles are the same handle (the prefix compared without ASCII case, the
/// suffix exactly; `0.` handles compared without case throughout).
///
/// ```
/// use handle_resolver::trust::same_handle;
/// assert!(same_handle("0.na/0.na", "0.NA/0.NA"));
/// assert!(same_handle("10.ABC/x", "10.abc/x"));
/// assert!(!same_handle("10.1/X", "10.1/x"));
/// ```
pub fn same_handle(a: &str, b: &str) -> bool {
    a == b || handle_key(a) == handle_key(b)
}

/// The prefix handle (`0.NA/<prefix>`) responsible for `handle`, upper case; `0.NA/0.NA` for
/// text without a `/`.
fn zero_na_handle(handle: &str) -> String {
    match handle.split_once('/') {
        Some((prefix, _)) => format!("0.NA/{}", prefix.to_ascii_uppercase()),
        None => "0.NA/0.NA".to_string(),
    }
}

/// `handle` belongs to the prefix named by the prefix handle `prefix_handle`
/// (`0.NA/10.1045` covers `10.1045/x`).
fn is_under_prefix(handle: &str, prefix_handle: &str) -> bool {
    let prefix_handle = prefix_handle.to_ascii_uppercase();
    let Some(prefix) = prefix_handle.strip_prefix("0.NA/") else {
        return false;
    };
    handle_key(handle).starts_with(&format!("{prefix}/"))
}

/// `handle` is a prefix handle derived from `ancestor` (`0.NA/10.1045.2` from
/// `0.NA/10.1045`).
fn is_derived_from(handle: &str, ancestor: &str) -> bool {
    let handle = handle.to_ascii_uppercase();
    let ancestor = ancestor.to_ascii_uppercase();
    handle.starts_with("0.NA/") && handle.starts_with(&format!("{ancestor}."))
}

/// What a certificate allows its subject to sign (`perms` of the claims):
/// `{"perm": "everything"}`, or one of the scoped kinds with the prefix handle it is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Permission {
    /// `everything`, `thisHandle`, `derivedPrefixes` or `handlesUnderThisPrefix`; any other
    /// name grants nothing.
    pub perm: String,
    /// The handle the permission is about (absent for `everything`).
    pub handle: Option<String>,
}

impl Permission {
    /// Everything, anywhere (the root's and the global service's certificates).
    pub const EVERYTHING: &'static str = "everything";
    /// The handle itself, or handles under the prefix it names.
    pub const THIS_HANDLE: &'static str = "thisHandle";
    /// Prefix handles derived from the handle.
    pub const DERIVED_PREFIXES: &'static str = "derivedPrefixes";
    /// Handles under the prefix the handle names.
    pub const HANDLES_UNDER_THIS_PREFIX: &'static str = "handlesUnderThisPrefix";

    /// A permission of kind `perm` about `handle`.
    pub fn new(perm: impl Into<String>, handle: Option<String>) -> Self {
        Self {
            perm: perm.into(),
            handle,
        }
    }

    /// The `everything` permission.
    pub fn everything() -> Self {
        Self::new(Self::EVERYTHING, None)
    }

    /// True when this permission lets its holder sign values of `handle` (the reference
    /// library's `verifyPermissionsAreAuthorizedOverHandle`, one permission).
    ///
    /// ```
    /// use handle_resolver::trust::Permission;
    /// let p = Permission::new(Permission::HANDLES_UNDER_THIS_PREFIX, Some("0.NA/10.1".into()));
    /// assert!(p.authorizes("10.1/abc"));
    /// assert!(!p.authorizes("10.12/abc"));
    /// assert!(Permission::everything().authorizes("0.NA/0.NA"));
    /// ```
    pub fn authorizes(&self, handle: &str) -> bool {
        let about = self.handle.as_deref();
        match (self.perm.as_str(), about) {
            (Self::EVERYTHING, _) => true,
            (Self::THIS_HANDLE, Some(h)) => same_handle(handle, h) || is_under_prefix(handle, h),
            (Self::DERIVED_PREFIXES, Some(h)) => {
                is_derived_from(handle, h) || is_derived_from(&zero_na_handle(handle), h)
            }
            (Self::HANDLES_UNDER_THIS_PREFIX, Some(h)) => is_under_prefix(handle, h),
            _ => false,
        }
    }
}

/// True when some permission of `perms` lets its holder sign values of `handle`.
pub(crate) fn authorized(perms: &[Permission], handle: &str) -> bool {
    perms.iter().any(|p| p.authorizes(handle))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_ids_read_as_the_reference_reads_them() {
        assert_eq!(ValueId::parse("300:0.NA/0.NA").index, 300);
        assert_eq!(ValueId::parse(":0.NA/0.NA"), ValueId::new(":0.NA/0.NA", 0));
        // An index beyond a 32-bit integer is not an index.
        assert_eq!(ValueId::parse("99999999999:a/b").index, 0);
        assert_eq!(ValueId::new("0.0/0.0", 301).to_string(), "301:0.0/0.0");
        assert_eq!(ValueId::new("0.0/0.0", 0).to_string(), "0.0/0.0");
        assert!(ValueId::parse("301:0.na/0.na").same(&ValueId::new("0.NA/0.NA", 301)));
        assert!(!ValueId::parse("300:0.NA/0.NA").same(&ValueId::new("0.NA/0.NA", 301)));
    }

    #[test]
    fn scoped_permissions() {
        let this = Permission::new(Permission::THIS_HANDLE, Some("0.NA/10.5".into()));
        assert!(this.authorizes("0.na/10.5"));
        assert!(this.authorizes("10.5/x"));
        assert!(!this.authorizes("10.55/x"));
        let derived = Permission::new(Permission::DERIVED_PREFIXES, Some("0.NA/10".into()));
        assert!(derived.authorizes("0.NA/10.5"));
        // A handle under a derived prefix is covered through its prefix handle.
        assert!(derived.authorizes("10.5/x"));
        assert!(!derived.authorizes("0.NA/10"));
        assert!(!derived.authorizes("0.NA/100"));
        let none = Permission::new(Permission::HANDLES_UNDER_THIS_PREFIX, None);
        assert!(!none.authorizes("10.5/x"));
        assert!(!Permission::new("somethingElse", Some("0.NA/10".into())).authorizes("10/x"));
        assert!(!authorized(&[], "10/x"));
    }
}
