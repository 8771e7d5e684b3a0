//! What can be resolved ([`Resolvable`]): text in any identifier form, or an already parsed
//! [`Identifier`], [`Handle`] or [`CordraId`]; turned into the [`Handle`] to send before
//! anything touches the network. The handle rules are `ident`'s; nothing here checks a
//! handle a second time.
//!
//! A handle is sent as written. One whose suffix merely looks like a CORDRA GUID keeps its
//! case: handles are case sensitive unless a service says otherwise, so upper-casing it would
//! make a case-sensitive server answer "not found". Its CORDRA form ([`Target::cordra`]) is
//! sent only when the resolver was asked for the CORDRA profile
//! ([`ResolverBuilder::strict_cordra`](super::ResolverBuilder::strict_cordra)).

use crate::ident::{CordraId, Handle, Identifier, ParseOptions};

use super::error::ResolveError;

/// A handle ready to be resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Target {
    /// The handle to send (as written; the server echoes it).
    pub handle: Handle,
    /// The CORDRA form of the handle (32-hex-digit suffix upper-cased) when the identifier is
    /// a CORDRA id (digit prefix, 32-hex-digit suffix); sent instead of `handle` only under
    /// the CORDRA profile.
    pub cordra: Option<Handle>,
    /// The input as given (for messages).
    pub input: String,
}

/// Anything [`Resolver::resolve`](super::Resolver::resolve) accepts.
pub trait Resolvable {
    /// The handle to resolve, or why there is none (no packet is sent then).
    fn to_target(&self) -> Result<Target, ResolveError>;
}

impl Resolvable for str {
    /// Parses any identifier form (the strict rules of [`Identifier::parse`]).
    fn to_target(&self) -> Result<Target, ResolveError> {
        let id = Identifier::parse_with(self.trim(), ParseOptions::default())?;
        let cordra = id.as_cordra().map(CordraId::to_handle);
        Ok(Target {
            handle: id.into_handle()?,
            cordra,
            input: self.to_string(),
        })
    }
}

impl Resolvable for String {
    fn to_target(&self) -> Result<Target, ResolveError> {
        self.as_str().to_target()
    }
}

impl<T: Resolvable + ?Sized> Resolvable for &T {
    fn to_target(&self) -> Result<Target, ResolveError> {
        (**self).to_target()
    }
}

impl Resolvable for Identifier {
    /// URNs are not handles: [`ResolveError::InvalidIdentifier`].
    fn to_target(&self) -> Result<Target, ResolveError> {
        Ok(Target {
            handle: self.to_handle()?,
            cordra: self.as_cordra().map(CordraId::to_handle),
            input: self.to_string(),
        })
    }
}

impl Resolvable for Handle {
    fn to_target(&self) -> Result<Target, ResolveError> {
        Ok(Target {
            handle: self.clone(),
            cordra: CordraId::from_handle(self).ok().map(|id| id.to_handle()),
            input: self.as_str().to_string(),
        })
    }
}

impl Resolvable for CordraId {
    fn to_target(&self) -> Result<Target, ResolveError> {
        Ok(Target {
            handle: self.written_handle(),
            cordra: Some(self.to_handle()),
            input: self.to_string(),
        })
    }
}

impl Resolvable for Target {
    fn to_target(&self) -> Result<Target, ResolveError> {
        Ok(self.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_form_becomes_a_handle() {
        let t = "hdl:20.500.12345/abc".to_target().unwrap();
        assert_eq!(t.handle.as_str(), "20.500.12345/abc");
        assert!(t.cordra.is_none());
        let t = " 20.500.12345/abc ".to_target().unwrap();
        assert_eq!(t.handle.as_str(), "20.500.12345/abc");
        assert_eq!(t.input, " 20.500.12345/abc ");
        let t = "https://hdl.handle.net/100.102/f58fb49eb1f848f0a606e84cef294be5"
            .to_target()
            .unwrap();
        // Sent as written; the CORDRA form is kept for the CORDRA profile.
        assert_eq!(
            t.handle.as_str(),
            "100.102/f58fb49eb1f848f0a606e84cef294be5"
        );
        assert_eq!(
            t.cordra.unwrap().as_str(),
            "100.102/F58FB49EB1F848F0A606E84CEF294BE5"
        );
        let h = Handle::parse("10.1045/x").unwrap();
        assert_eq!(h.to_target().unwrap().handle, h);
    }

    #[test]
    fn a_guid_like_suffix_keeps_its_case_in_every_form() {
        let written = "100.102/f58fb49eb1F848f0a606e84cef294be5";
        let upper = "100.102/F58FB49EB1F848F0A606E84CEF294BE5";
        let id = Identifier::parse(written).unwrap();
        let cordra = CordraId::parse(written).unwrap();
        let handle = Handle::parse(written).unwrap();
        let targets = [
            written.to_target().unwrap(),
            id.to_target().unwrap(),
            cordra.to_target().unwrap(),
            handle.to_target().unwrap(),
        ];
        for t in targets {
            assert_eq!(t.handle.as_str(), written, "{t:?}");
            assert_eq!(t.cordra.map(|h| h.into_string()).as_deref(), Some(upper));
        }
    }

    #[test]
    fn bad_input_and_urns_are_rejected_before_anything_is_sent() {
        let too_long = format!("10.1/{}", "x".repeat(crate::ident::MAX_HANDLE_LENGTH));
        for bad in [
            "",
            "no-slash/",
            "/x",
            "10..1/x",
            "urn:fdc:example.com:2002:A572007",
            "a\u{1}/b",
            too_long.as_str(),
        ] {
            assert!(
                matches!(bad.to_target(), Err(ResolveError::InvalidIdentifier(_))),
                "{bad:?}"
            );
        }
    }
}
