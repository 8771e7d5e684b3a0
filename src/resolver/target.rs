//! What can be resolved ([`Resolvable`]): text in any identifier form, or an already parsed
//! [`Identifier`], [`Handle`] or [`CordraId`]; turned into the handle to send before anything
//! touches the network.

use crate::ident::{CordraId, Handle, Identifier, ParseOptions};

use super::error::ResolveError;

/// A handle ready to be resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The handle to send, as text (as parsed; the server echoes it).
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
    /// Parses any identifier form (strict rules of [`Identifier::parse`]).
    fn to_target(&self) -> Result<Target, ResolveError> {
        match plain_handle(self) {
            Some(result) => result,
            None => parse_target(self),
        }
    }
}

/// The general path: any identifier form through [`Identifier::parse_with`].
fn parse_target(input: &str) -> Result<Target, ResolveError> {
    let id = Identifier::parse_with(input.trim(), ParseOptions::default())?;
    let mut t = id.to_target()?;
    t.input = input.to_string();
    Ok(t)
}

/// The fast path for a bare `PREFIX/SUFFIX` that cannot be anything else: no `:` (so no URI
/// scheme or URN), no `?` or `#` (so no CORDRA query or fragment) and a suffix that is not 32
/// bytes long (so not a CORDRA id). [`Identifier::parse_with`] reads such text with
/// [`Handle::parse`] alone (its CORDRA attempt fails and its error is dropped), so checking
/// it with [`Handle::parse`] gives the same handle and the same errors. `None`: not plain,
/// take the general path.
fn plain_handle(input: &str) -> Option<Result<Target, ResolveError>> {
    let s = input.trim();
    if is_clean_ascii_handle(s) {
        // Everything `Handle::parse` checks holds: same text, no second pass.
        return Some(Ok(Target {
            handle: s.to_string(),
            cordra: false,
            input: input.to_string(),
        }));
    }
    if s.bytes().any(|b| matches!(b, b':' | b'?' | b'#')) {
        return None;
    }
    if s.split_once('/')
        .is_some_and(|(_, suffix)| suffix.len() == 32)
    {
        return None;
    }
    Some(match Handle::parse(s) {
        Ok(handle) => Ok(Target {
            handle: handle.into_string(),
            cordra: false,
            input: input.to_string(),
        }),
        Err(e) => Err(e.into()),
    })
}

/// One pass over the bytes for the most common input, an ASCII `PREFIX/SUFFIX` that is
/// valid as it stands: no control character, no `:`, `?` or `#` (so no URI, URN, CORDRA
/// query or fragment), a prefix without spaces whose dot-separated segments are all
/// non-empty, a non-empty suffix not 32 bytes long (so not a CORDRA id). Anything else
/// (including every invalid handle, whose error must name the offending byte) takes the
/// checking path.
fn is_clean_ascii_handle(s: &str) -> bool {
    let bytes = s.as_bytes();
    let mut slash = None;
    // Start of the current prefix segment (while still in the prefix).
    let mut segment_start = 0usize;
    for (i, &b) in bytes.iter().enumerate() {
        if !b.is_ascii() || b.is_ascii_control() || matches!(b, b':' | b'?' | b'#') {
            return false;
        }
        if slash.is_some() {
            continue;
        }
        match b {
            b'/' => {
                if i == segment_start {
                    // Empty prefix, or a prefix ending with '.'.
                    return false;
                }
                slash = Some(i);
            }
            b'.' => {
                if i == segment_start {
                    return false;
                }
                segment_start = i + 1;
            }
            b' ' => return false,
            _ => {}
        }
    }
    match slash {
        Some(i) => {
            let suffix = bytes.len() - i - 1;
            suffix > 0 && suffix != 32
        }
        None => false,
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
        let handle = self.to_handle()?;
        Ok(Target {
            cordra: matches!(self, Identifier::Cordra(_)),
            handle: handle.as_str().to_string(),
            input: self.to_string(),
        })
    }
}

impl Resolvable for Handle {
    fn to_target(&self) -> Result<Target, ResolveError> {
        Ok(Target {
            handle: self.as_str().to_string(),
            cordra: CordraId::from_handle(self).is_ok(),
            input: self.as_str().to_string(),
        })
    }
}

impl Resolvable for CordraId {
    fn to_target(&self) -> Result<Target, ResolveError> {
        Ok(Target {
            handle: self.to_handle().as_str().to_string(),
            cordra: true,
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
        assert_eq!(t.handle, "20.500.12345/abc");
        assert!(!t.cordra);
        let t = "https://hdl.handle.net/100.102/f58fb49eb1f848f0a606e84cef294be5"
            .to_target()
            .unwrap();
        assert_eq!(t.handle, "100.102/F58FB49EB1F848F0A606E84CEF294BE5");
        assert!(t.cordra);
        let h = Handle::parse("10.1045/x").unwrap();
        assert_eq!(h.to_target().unwrap().handle, "10.1045/x");
    }

    /// Inputs around every rule the fast path relies on.
    const SAMPLES: &[&str] = &[
        "20.500.12345/1",
        " 20.500.12345/abc ",
        "10.1045/april2006-paskin",
        "20.500.1/bench-17",
        "cnri.Test/x",
        "0.NA/20.500.12345",
        "0.na/10.abc",
        "10.1000/a/b",
        "10.1000/a%2Fb",
        "10.1000/a b",
        "10..1/x",
        ".10/x",
        "10./x",
        "10.1045",
        "10.1045/",
        "/x",
        "",
        "   ",
        "no-slash/",
        "a\u{1}/b",
        "a/b\u{7f}",
        "10.1/\u{e9}t\u{e9}",
        "\u{e9}.1/x",
        "100.102/f58fb49eb1f848f0a606e84cef294be5",
        "100.102/F58FB49EB1F848F0A606E84CEF294BE5",
        "100.102/f58fb49eb1f848f0a606e84cef294bzz",
        "10.abc/f58fb49eb1f848f0a606e84cef294be5",
        "100.102/f58fb49e-b1f8-48f0-a606-e84cef294be5",
        "100.102/f58fb49eb1f848f0a606e84cef294be5?v=2#top",
        "100.102/f58fb49eb1f848f0a606e84cef294be",
        "hdl:20.500.12345/abc",
        "hdl://20.500.12345/abc",
        "doi:10.1045/april2006-paskin",
        "https://hdl.handle.net/100.102/f58fb49eb1f848f0a606e84cef294be5",
        "urn:fdc:example.com:2002:A572007",
        "urn-3:x",
        "10.1/x:y",
        "10.1/x?y",
        "10.1/x#y",
        "a:b/c",
        "20.500.1/1/2/3",
    ];

    fn same(input: &str) {
        let slow = parse_target(input);
        let fast = input.to_target();
        assert_eq!(format!("{fast:?}"), format!("{slow:?}"), "{input:?}");
        assert_eq!(
            fast.as_ref().map(|t| t.input.as_str()).ok(),
            slow.as_ref().map(|t| t.input.as_str()).ok()
        );
    }

    #[test]
    fn the_fast_path_agrees_with_the_general_one_on_samples() {
        for s in SAMPLES {
            same(s);
        }
        // The fast path is taken for plain handles and left for the rest.
        assert!(plain_handle("20.500.1/bench-17").is_some());
        assert!(plain_handle("10.1045").is_some());
        assert!(plain_handle("hdl:20.500.1/x").is_none());
        assert!(plain_handle("100.102/f58fb49eb1f848f0a606e84cef294be5").is_none());
        // The one-pass check takes valid ASCII handles only; the rest are checked in full.
        assert!(is_clean_ascii_handle("20.500.1/bench-17"));
        assert!(is_clean_ascii_handle("10.1045/a b/c"));
        for s in [
            "10.1045", ".1/x", "1./x", "1..2/x", "/x", "1/", "1 2/x", "1/\u{7f}", "é/x",
        ] {
            assert!(!is_clean_ascii_handle(s), "{s:?}");
        }
    }

    proptest::proptest! {
        #[test]
        fn the_fast_path_agrees_with_the_general_one(
            s in r"[ 0-9a-fA-F.:/?#%_xyzNAé\x01\x7f-]{0,40}"
        ) {
            same(&s);
        }

        #[test]
        fn the_one_pass_check_agrees_on_dotted_prefixes(
            s in r"[ .0-9a]{0,7}/?[ ./a\t]{0,4}/?[.a]{0,2}"
        ) {
            same(&s);
        }

        #[test]
        fn the_fast_path_agrees_on_near_cordra_shapes(
            prefix in "[0-9.a]{0,8}",
            suffix in r"[0-9a-fA-Fg-]{30,34}",
            tail in r"(|\?v|#f| |/x)",
        ) {
            same(&format!("{prefix}/{suffix}{tail}"));
        }
    }

    #[test]
    fn bad_input_and_urns_are_rejected_before_anything_is_sent() {
        for bad in [
            "",
            "no-slash/",
            "/x",
            "urn:fdc:example.com:2002:A572007",
            "a\u{1}/b",
        ] {
            assert!(
                matches!(bad.to_target(), Err(ResolveError::InvalidIdentifier(_))),
                "{bad:?}"
            );
        }
    }
}
