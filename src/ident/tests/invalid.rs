//! Invalid inputs, each rejected with the right kind of error, at an offset inside the input.

use crate::ident::{ErrorKind as K, Identifier, ParseOptions};

/// (input, expected kind) with the CORDRA URI profile (`ParseOptions::strict`); the default
/// rejects them too, with the same kind, but for the resolver URLs of [`PASTED`].
const STRICT: &[(&str, K)] = &[
    ("", K::Empty),
    ("10.1045", K::MissingSlash),
    ("/abc", K::EmptyPrefix),
    ("10.1045/", K::EmptySuffix),
    ("10..1045/x", K::EmptyPrefixSegment),
    (".10/x", K::EmptyPrefixSegment),
    (" 20.500.1/1", K::PrefixWhitespace),
    ("20.500.1 /1", K::PrefixWhitespace),
    ("10.\u{a0}1045/x", K::PrefixWhitespace),
    ("10./x", K::EmptyPrefixSegment),
    ("10.1045/a\u{7}b", K::ControlCharacter),
    ("10.1045/a\nb", K::ControlCharacter),
    ("10.1045/a\u{85}", K::ControlCharacter),
    ("10.1045/a\u{7f}", K::ControlCharacter),
    ("hdl:10.1045", K::MissingSlash),
    ("hdl:/10.1045/x", K::EmptyPrefix),
    ("hdl:10.1045/", K::EmptySuffix),
    ("hdl:10.1045/a/b", K::ExtraPathSegment),
    ("hdl://10.1045/a/b", K::ExtraPathSegment),
    ("hdl://", K::EmptyPrefix),
    ("hdl:///x", K::EmptyPrefix),
    ("hdl:10.1045/a%2", K::InvalidPercentEncoding),
    ("hdl:10.1045/a%zz", K::InvalidPercentEncoding),
    ("hdl:10.1045/a%FF", K::InvalidUtf8),
    ("hdl:10.1045/a%C3", K::InvalidUtf8),
    ("hdl:10.1045/x?a b", K::InvalidQuery),
    ("hdl:10.1045/x?a<b", K::InvalidQuery),
    ("hdl:10.1045/x?a%g1", K::InvalidPercentEncoding),
    ("hdl:10.1045/x#a b", K::InvalidFragment),
    ("hdl:10.1045/x#a#b", K::InvalidFragment),
    ("hdl:10.1045/a%00b", K::ControlCharacter),
    ("hdl:10..1/x", K::EmptyPrefixSegment),
    ("hdl:10.1045/a b", K::InvalidUriCharacter),
    ("hdl:10 .1045/a", K::InvalidUriCharacter),
    (
        "https://hdl.handle.net/10.1045/a<b>",
        K::InvalidUriCharacter,
    ),
    ("doi:10.1045/a\\b", K::InvalidUriCharacter),
    ("hdl:10.1%2Fx/y", K::SlashInPrefix),
    ("ftp://example.com/10.1045/x", K::UnsupportedScheme),
    ("info:doi/10.1045/x", K::UnsupportedScheme),
    ("cnri.test:x/y", K::UnsupportedScheme),
    ("http:10.1045/x", K::InvalidAuthority),
    ("http:///10.1045/x", K::InvalidAuthority),
    ("https://exa mple.com/10.1/x", K::InvalidAuthority),
    ("https://user@host/10.1/x", K::InvalidAuthority),
    ("http://hdl.handle.net", K::EmptyPrefix),
    ("http://hdl.handle.net/", K::EmptyPrefix),
    ("http://hdl.handle.net/10.1045", K::MissingSlash),
    ("http://hdl.handle.net/10.1045/a/b", K::ExtraPathSegment),
    ("http://host/hdl/10.1045/a/b", K::ExtraPathSegment),
    ("doi:11.1045/x", K::DoiPrefix),
    ("doi:abc/x", K::DoiPrefix),
    ("doi:10/x", K::DoiPrefix),
    ("doi:10.1045", K::MissingSlash),
    ("doi:10.1045/", K::EmptySuffix),
    ("urn:", K::InvalidUrn),
    ("urn:fdc", K::InvalidUrn),
    ("urn:x:y", K::InvalidUrnNamespaceId),
    ("urn:-fdc:y", K::InvalidUrnNamespaceId),
    ("urn:fdc_x:y", K::InvalidUrnNamespaceId),
    ("urn:isbn:0451450523", K::UnsupportedUrnNamespace),
    ("urn:ietf:rfc:4198", K::UnsupportedUrnNamespace),
    ("urn:fdc:example.com", K::MissingUrnPart),
    ("urn:fdc:example.com:2002", K::MissingUrnPart),
    ("urn:fdc::2002:A", K::EmptyUrnPart),
    ("urn:fdc:example.com::A", K::EmptyUrnPart),
    ("urn:fdc:example.com:2002:", K::EmptyUrnPart),
    ("urn:fdc:example:2002:A", K::InvalidProviderId),
    ("urn:fdc:example..com:2002:A", K::InvalidProviderId),
    ("urn:fdc:.example.com:2002:A", K::InvalidProviderId),
    ("urn:fdc:-example.com:2002:A", K::InvalidProviderId),
    ("urn:fdc:example-.com:2002:A", K::InvalidProviderId),
    ("urn:fdc:example.9com:2002:A", K::InvalidProviderId),
    ("urn:fdc:example.com-:2002:A", K::InvalidProviderId),
    ("urn:fdc:exa_mple.com:2002:A", K::InvalidProviderId),
    ("urn:fdc:exämple.com:2002:A", K::InvalidProviderId),
    ("urn:fdc:example.com:20021:A", K::DateIdFormat),
    ("urn:fdc:example.com:2002123:A", K::DateIdFormat),
    ("urn:fdc:example.com:200212311:A", K::DateIdFormat),
    ("urn:fdc:example.com:2002a:A", K::DateIdFormat),
    ("urn:fdc:example.com:-2002:A", K::DateIdFormat),
    ("urn:fdc:example.com:200213:A", K::DateIdNotADate),
    ("urn:fdc:example.com:200200:A", K::DateIdNotADate),
    ("urn:fdc:example.com:20020230:A", K::DateIdNotADate),
    ("urn:fdc:example.com:20230229:A", K::DateIdNotADate),
    ("urn:fdc:example.com:19000229:A", K::DateIdNotADate),
    ("urn:fdc:example.com:20020431:A", K::DateIdNotADate),
    ("urn:fdc:example.com:20020100:A", K::DateIdNotADate),
    ("urn:fdc:example.com:2002:A/B", K::UrnCharacter),
    ("urn:fdc:example.com:2002:A B", K::UrnCharacter),
    ("urn:fdc:example.com:2002:A?x", K::UrnCharacter),
    ("urn:fdc:example.com:2002:A#x", K::UrnCharacter),
    ("urn:fdc:example.com:2002:café", K::UrnCharacter),
    ("urn:fdc:example.com:2002:A~", K::UrnCharacter),
    ("urn:fdc:example.com:2002:A%G0", K::InvalidPercentEncoding),
    ("urn:fdc:example.com:2002:A%", K::InvalidPercentEncoding),
    ("urn:fdc:example.com:2002:A\t", K::ControlCharacter),
    ("urn:urn-3:HUL.OIS", K::MissingUrnPart),
    ("urn-3:", K::MissingUrnPart),
    ("urn:urn-3:HUL..OIS:Home", K::EmptyUrnPart),
    ("urn:urn-3::Home", K::EmptyUrnPart),
    ("urn:urn-3:HUL.OIS:", K::EmptyUrnPart),
    ("urn:urn-3:HUL/OIS:Home", K::UrnCharacter),
    ("urn-3:HBS.Baker.TC:19 23", K::UrnCharacter),
    ("urn-3:HBS.Baker.TC:1923/x", K::UrnCharacter),
    ("urn-3:HBS~:1923", K::UrnCharacter),
    ("urn:urn-3:H%2:x", K::InvalidPercentEncoding),
];

/// (input, expected kind, expected offset) with `--cordra` (`ParseOptions::cordra_only`).
const CORDRA_ONLY: &[(&str, K, usize)] = &[
    (
        "100.102/F58FB49EB1F848f0A606E84CEF294BE",
        K::CordraSuffixLength,
        8,
    ),
    (
        "100.102/F58FB49EB1F848f0A606E84CEF294BE55",
        K::CordraSuffixLength,
        8,
    ),
    (
        "100.102/f58fb49e-b1f8-48f0-a606-e84cef294be5",
        K::CordraHyphenatedUuid,
        8,
    ),
    (
        "100.102/F58FB49EB1F848f0A606E84CEF294BEG",
        K::CordraSuffixNotHex,
        39,
    ),
    (
        "100.102/F58FB49EB1F848f0A606E84CEF294BE5/x",
        K::CordraSuffixNotHex,
        40,
    ),
    (
        "10.abc/F58FB49EB1F848f0A606E84CEF294BE5",
        K::CordraPrefix,
        3,
    ),
    ("abc/F58FB49EB1F848f0A606E84CEF294BE5", K::CordraPrefix, 0),
    ("10.1045/april2006-paskin", K::CordraSuffixNotHex, 9), // "a" is hex, "p" is not
    (
        "100.102/F58FB49EB1F848f0A606E84CEF294BE5?a b",
        K::InvalidQuery,
        42,
    ),
    (
        "100.102/F58FB49EB1F848f0A606E84CEF294BE5#a b",
        K::InvalidFragment,
        42,
    ),
    ("100.102/", K::EmptySuffix, 8),
    (
        "hdl:100.102/F58FB49EB1F848f0A606E84CEF294BE",
        K::CordraSuffixLength,
        12,
    ),
    (
        "hdl:100.x/F58FB49EB1F848f0A606E84CEF294BE5",
        K::CordraPrefix,
        8,
    ),
    ("hdl://100.102/%46%35%38", K::CordraSuffixLength, 14),
    ("urn:fdc:example.com:2002:A572007", K::NotCordra, 0),
    ("urn-3:HBS.Baker.TC:1923", K::NotCordra, 0),
];

/// Resolver URLs of [`STRICT`] that the default reads as the proxies do, with the handle
/// they name.
const PASTED: &[(&str, &str)] = &[
    ("https://hdl.handle.net/10.1045/a<b>", "10.1045/a<b>"),
    ("http://hdl.handle.net/10.1045/a/b", "10.1045/a/b"),
    ("http://host/hdl/10.1045/a/b", "10.1045/a/b"),
];

#[test]
fn strict_rejections() {
    assert!(STRICT.len() >= 60, "only {} invalid inputs", STRICT.len());
    let strict = ParseOptions::default().strict(true);
    for &(input, kind) in STRICT {
        for options in [strict, ParseOptions::default()] {
            let pasted = PASTED.iter().find(|p| p.0 == input);
            let err = match (Identifier::parse_with(input, options), pasted) {
                (Ok(id), Some(&(_, handle))) if options == ParseOptions::default() => {
                    assert_eq!(id.to_handle().unwrap().as_str(), handle);
                    continue;
                }
                (Ok(id), _) => panic!("{input:?} was accepted as {id:?} ({options:?})"),
                (Err(e), _) => e,
            };
            assert_eq!(err.kind(), kind, "{input:?}: {err}");
            assert!(
                err.offset() <= input.len(),
                "{input:?}: offset {}",
                err.offset()
            );
            assert!(err.to_string().contains("(at byte "), "{input:?}: {err}");
        }
    }
}

#[test]
fn cordra_only_rejections_say_where() {
    let options = ParseOptions::default().cordra_only(true);
    for &(input, kind, offset) in CORDRA_ONLY {
        let err = match Identifier::parse_with(input, options) {
            Ok(id) => panic!("{input:?} was accepted as {id:?}"),
            Err(e) => e,
        };
        assert_eq!(
            (err.kind(), err.offset()),
            (kind, offset),
            "{input:?}: {err}"
        );
    }
}

#[test]
fn lenient_still_rejects_what_is_not_grammar_related() {
    let options = ParseOptions::default().lenient(true);
    for input in [
        "hdl:10.1045/a%zz",
        "hdl:10.1045/x?\u{1}",
        "doi:9.1/x",
        "hdl:10.1045/",
    ] {
        assert!(Identifier::parse_with(input, options).is_err(), "{input:?}");
    }
}

#[test]
fn http_authority_is_a_host_and_an_optional_port() {
    // (input, offset of the problem): a bracketed IPv6 literal must close and be an IPv6
    // address; a port is digits up to 65535; a name has no brackets or colons of its own.
    for (input, at) in [
        ("http://[::1/10.1/x", 7),
        ("http://[zz::1]/10.1/x", 8),
        ("http://[::1]x/10.1/x", 12),
        ("http://::1/10.1/x", 7),
        ("http://host]/10.1/x", 11),
        ("http://host:80a/10.1/x", 12),
        ("http://host:65536/10.1/x", 12),
        ("http://host:2641:1/10.1/x", 12),
    ] {
        let err = Identifier::parse(input).unwrap_err();
        assert_eq!(
            (err.kind(), err.offset()),
            (K::InvalidAuthority, at),
            "{input:?}: {err}"
        );
    }
    for (input, authority) in [
        ("http://[::1]:8000/10.1/x", "[::1]:8000"),
        ("https://[2001:db8::5]/hdl/10.1/x", "[2001:db8::5]"),
        ("http://127.0.0.1:2641/10.1/x", "127.0.0.1:2641"),
        ("http://host:/10.1/x", "host:"),
    ] {
        let uri = crate::ident::HandleUri::parse(input).unwrap();
        assert!(
            matches!(uri.form(), crate::ident::UriForm::Http { authority: a, .. } if a == authority),
            "{input:?}: {uri:?}"
        );
        assert_eq!(uri.to_string(), input);
    }
}

#[test]
fn messages_count_hex_digits_in_good_grammar_and_point_at_prefix_white_space() {
    let one = crate::ident::CordraId::parse("100.102/A").unwrap_err();
    assert_eq!(
        one.to_string(),
        "suffix has 1 hex digit, a CORDRA id needs 32 (at byte 8)"
    );
    let e = Identifier::parse("20.500 .1/x").unwrap_err();
    assert_eq!(e.kind(), K::PrefixWhitespace);
    assert_eq!(e.offset(), 6);
}
