//! What can be resolved ([`Resolvable`]): text in any identifier form, or an already parsed
//! identifier; turned into the handle to send before anything touches the network.

use super::error::ResolveError;

/// A handle ready to be resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The handle to send, as text.
    pub handle: String,
    /// True when the identifier is a CORDRA id (digit prefix, 32-hex-digit suffix).
    pub cordra: bool,
    /// The input as given (for messages).
    pub input: String,
}

/// Anything [`crate::resolver::Resolver::resolve`] accepts.
pub trait Resolvable {
    /// The handle to resolve, or why there is none (no packet is sent then).
    fn to_target(&self) -> Result<Target, ResolveError>;
}

impl Resolvable for str {
    fn to_target(&self) -> Result<Target, ResolveError> {
        parse_text(self)
    }
}

impl Resolvable for String {
    fn to_target(&self) -> Result<Target, ResolveError> {
        parse_text(self)
    }
}

impl<T: Resolvable + ?Sized> Resolvable for &T {
    fn to_target(&self) -> Result<Target, ResolveError> {
        (**self).to_target()
    }
}

impl Resolvable for Target {
    fn to_target(&self) -> Result<Target, ResolveError> {
        Ok(self.clone())
    }
}

fn invalid(input: &str, reason: impl Into<String>) -> ResolveError {
    ResolveError::InvalidIdentifier {
        input: input.to_string(),
        reason: reason.into(),
    }
}

/// Minimal parse of text (until the identifier layer is merged): a bare handle, a prefix
/// (no `/`), or `hdl:` forms.
fn parse_text(input: &str) -> Result<Target, ResolveError> {
    let text = input.trim();
    if text.is_empty() {
        return Err(invalid(input, "empty identifier"));
    }
    if let Some(at) = text.find(|c: char| c.is_control()) {
        return Err(invalid(input, format!("control character at byte {at}")));
    }
    if let Some((prefix, suffix)) = text.split_once('/') {
        if prefix.is_empty() || prefix.split('.').any(str::is_empty) {
            return Err(invalid(input, "empty prefix segment"));
        }
        if suffix.is_empty() {
            return Err(invalid(input, "empty suffix"));
        }
    }
    Ok(Target {
        handle: text.to_string(),
        cordra: is_cordra(text),
        input: input.to_string(),
    })
}

fn is_cordra(handle: &str) -> bool {
    let Some((prefix, suffix)) = handle.split_once('/') else {
        return false;
    };
    let suffix = suffix.split(['?', '#']).next().unwrap_or("");
    prefix
        .split('.')
        .all(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
        && suffix.len() == 32
        && suffix.bytes().all(|b| b.is_ascii_hexdigit())
}
