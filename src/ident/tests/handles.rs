//! Handle, CORDRA and URI rules.

use std::collections::HashSet;

use crate::ident::{
    CordraId, ErrorKind, Handle, HandleUri, Identifier, IdentifierKind, ParseOptions, UriForm,
};

fn h(s: &str) -> Handle {
    Handle::parse(s).unwrap()
}

#[test]
fn splits_at_the_first_slash() {
    let handle = h("10.1045/a/b/c");
    assert_eq!((handle.prefix(), handle.suffix()), ("10.1045", "a/b/c"));
    assert_eq!(handle.prefix_segments().collect::<Vec<_>>(), ["10", "1045"]);
    assert_eq!(handle.as_bytes(), b"10.1045/a/b/c");
}

#[test]
fn prefix_folds_case_suffix_does_not() {
    assert_eq!(h("CNRI.test/x"), h("cnri.TEST/x"));
    assert_ne!(h("cnri/x"), h("cnri/X"));
    let set: HashSet<Handle> = [h("CNRI.test/x"), h("cnri.TEST/x"), h("cnri.test/X")].into();
    assert_eq!(set.len(), 2);
    // `0.` handles fold as a whole.
    assert_eq!(h("0.na/10.abc"), h("0.NA/10.ABC"));
    assert_ne!(h("0/abc"), h("0/ABC"));
}

#[test]
fn normalized_upper_cases_prefix_and_whole_0_handles_but_not_non_ascii() {
    assert_eq!(h("cnri.test/Abc").normalized().as_str(), "CNRI.TEST/Abc");
    assert_eq!(h("0.na/10.abc").normalized().as_str(), "0.NA/10.ABC");
    assert_eq!(h("préfix/é").normalized().as_str(), "PRéFIX/é");
    assert!(!h("a/b").is_normalized());
    assert!(h("A/b").is_normalized());
}

#[test]
fn derived_prefixes_and_prefix_handles() {
    let handle = h("20.500.12345/ABC");
    assert_eq!(handle.parents().collect::<Vec<_>>(), ["20.500", "20"]);
    assert_eq!(h("10/x").parents().count(), 0);
    assert_eq!(h("abc.def/x").prefix_handle().as_str(), "0.NA/ABC.DEF");
    assert!(h("0.na/10").is_prefix_handle());
    assert_eq!(
        h("0.NA/a.b.c").parent_prefix_handle().unwrap().as_str(),
        "0.NA/A.B"
    );
    assert_eq!(h("10.1/x").parent_prefix_handle(), None);
    assert_eq!(
        Handle::for_prefix("20.500").unwrap().as_str(),
        "0.NA/20.500"
    );
    assert_eq!(
        Handle::for_prefix("a/b").unwrap_err().kind(),
        ErrorKind::SlashInPrefix
    );
}

#[test]
fn bytes_and_serde() {
    assert_eq!(
        Handle::parse_bytes("10.1/é".as_bytes()).unwrap(),
        h("10.1/é")
    );
    let err = Handle::parse_bytes(b"10.1/ab\xc3").unwrap_err();
    assert_eq!((err.kind(), err.offset()), (ErrorKind::InvalidUtf8, 7));
    let json = serde_json::to_string(&h("10.1045/x")).unwrap();
    assert_eq!(json, "\"10.1045/x\"");
    assert_eq!(
        serde_json::from_str::<Handle>(&json).unwrap(),
        h("10.1045/x")
    );
    assert!(serde_json::from_str::<Handle>("\"10.1045\"").is_err());
    assert_eq!("10.1/x".parse::<Handle>().unwrap(), h("10.1/x"));
}

#[test]
fn cordra_rules() {
    let id = CordraId::parse("100.102/f58fb49eb1f848f0a606e84cef294be5?q=1&r=%20#frag").unwrap();
    assert_eq!(id.suffix(), "F58FB49EB1F848F0A606E84CEF294BE5");
    assert_eq!(id.query(), Some("q=1&r=%20"));
    assert_eq!(id.fragment(), Some("frag"));
    assert_eq!(
        id.to_handle().as_str(),
        "100.102/F58FB49EB1F848F0A606E84CEF294BE5"
    );
    let err = CordraId::parse("100.102/F58FB49EB1F848f0A606E84CEF294BE").unwrap_err();
    assert_eq!(
        err.to_string(),
        "suffix has 31 hex digits, a CORDRA id needs 32 (at byte 8)"
    );
    let err = CordraId::parse("100.102/F58FB49EB1F848f0A606E84CEF294BEX").unwrap_err();
    assert_eq!(
        (err.kind(), err.offset(), err.text()),
        (ErrorKind::CordraSuffixNotHex, 39, "X")
    );
    let err = CordraId::parse("10.1a/F58FB49EB1F848f0A606E84CEF294BE5").unwrap_err();
    assert_eq!((err.kind(), err.offset()), (ErrorKind::CordraPrefix, 4));
}

#[test]
fn mint_uses_the_uuid_simple_form() {
    let a = CordraId::mint("20.500.12345").unwrap();
    let b = CordraId::mint("20.500.12345").unwrap();
    assert_ne!(a, b);
    assert_eq!(a.suffix().len(), 32);
    assert!(a
        .suffix()
        .bytes()
        .all(|c| c.is_ascii_digit() || c.is_ascii_uppercase()));
    assert_eq!(a.uuid().get_version_num(), 4);
    assert_eq!(format!("{:X}", a.uuid().simple()), a.suffix());
    assert_eq!(
        Identifier::parse(&a.to_string()).unwrap(),
        Identifier::Cordra(a.clone())
    );
    assert_eq!(
        CordraId::mint("cnri").unwrap_err().kind(),
        ErrorKind::CordraPrefix
    );
}

#[test]
fn identifier_reports_cordra_when_the_rules_are_met() {
    let kind = |s| Identifier::parse(s).unwrap().kind();
    assert_eq!(
        kind("100.102/F58FB49EB1F848f0A606E84CEF294BE5"),
        IdentifierKind::Cordra
    );
    assert_eq!(
        kind("100.102/F58FB49EB1F848f0A606E84CEF294BE"),
        IdentifierKind::Handle
    );
    assert_eq!(
        kind("cnri.1/F58FB49EB1F848f0A606E84CEF294BE5"),
        IdentifierKind::Handle
    );
    assert_eq!(
        kind("doi:10.1/F58FB49EB1F848f0A606E84CEF294BE5"),
        IdentifierKind::Cordra
    );
    // A bare handle keeps '?' and '#' in its suffix unless it is a CORDRA id.
    let id = Identifier::parse("10.1045/a?b#c").unwrap();
    assert_eq!(id.to_handle().unwrap().suffix(), "a?b#c");
    assert_eq!(id.query(), None);
}

#[test]
fn uri_schemes_are_case_insensitive() {
    for s in [
        "HDL:10.1045/x",
        "Hdl://10.1045/x",
        "DOI:10.1045/x",
        "HTTPS://doi.org/10.1045/x",
        "hTtP://hdl.handle.net/10.1045/x",
    ] {
        assert_eq!(
            HandleUri::parse(s).unwrap().handle().as_str(),
            "10.1045/x",
            "{s}"
        );
    }
}

#[test]
fn percent_encoding_in_both_directions() {
    let uri = HandleUri::parse("hdl:10.1045/caf%C3%A9%2Fb%20c").unwrap();
    assert_eq!(uri.handle().suffix(), "café/b c");
    assert_eq!(uri.to_string(), "hdl:10.1045/caf%C3%A9%2Fb%20c");
    let formatted = HandleUri::new(UriForm::HdlHost, h("10.1/a/b?c#d%e")).to_string();
    assert_eq!(formatted, "hdl://10.1/a%2Fb%3Fc%23d%25e");
    assert_eq!(
        HandleUri::parse(&formatted).unwrap().handle().suffix(),
        "a/b?c#d%e"
    );
    // A string without a scheme is a bare handle: nothing is decoded.
    let id = Identifier::parse("10.1045/a%2Fb").unwrap();
    assert_eq!(id.to_handle().unwrap().suffix(), "a%2Fb");
}

#[test]
fn strict_and_lenient() {
    let lenient = ParseOptions::default().lenient(true);
    let strict = ParseOptions::default().strict(true);
    for (s, suffix) in [
        ("hdl:10.1000/a/b", "a/b"),
        ("hdl://10.1000/a/b/c", "a/b/c"),
        ("http://hdl.handle.net/10.1000/a/b", "a/b"),
        ("http://host/hdl/10.1000/a/b", "a/b"),
    ] {
        let err = HandleUri::parse_with(s, strict).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::ExtraPathSegment, "{s}");
        assert!(err.to_string().contains("%2F"));
        let uri = HandleUri::parse_with(s, lenient).unwrap();
        assert_eq!(uri.handle().suffix(), suffix, "{s}");
        // By default hdl: URIs keep the URI grammar; resolver URLs are read as the proxies
        // read them.
        match HandleUri::parse(s) {
            Ok(uri) => {
                assert!(s.starts_with("http"), "{s}");
                assert_eq!(uri.handle().suffix(), suffix, "{s}");
            }
            Err(e) => {
                assert!(s.starts_with("hdl"), "{s}");
                assert_eq!(e.kind(), ErrorKind::ExtraPathSegment, "{s}");
            }
        }
    }
    // IRIs: non-ASCII is accepted even when strict; ASCII outside the grammar only leniently.
    let uri = HandleUri::parse("https://hdl.handle.net/10.1045/café?é=1").unwrap();
    assert_eq!(uri.handle().suffix(), "café");
    assert_eq!(
        uri.to_string(),
        "https://hdl.handle.net/10.1045/caf%C3%A9?%C3%A9=1"
    );
    assert_eq!(
        HandleUri::parse_with("hdl:10.1/a b", lenient)
            .unwrap()
            .handle()
            .suffix(),
        "a b"
    );
    // Lenient queries only refuse control characters (and are kept in URI form).
    let uri = HandleUri::parse_with("hdl:10.1/x?a b", lenient).unwrap();
    assert_eq!(uri.query(), Some("a%20b"));
    assert_eq!(uri.to_string(), "hdl:10.1/x?a%20b");
    // doi: suffixes may contain '/' even when strict.
    assert_eq!(
        HandleUri::parse("doi:10.1000/a/b")
            .unwrap()
            .handle()
            .suffix(),
        "a/b"
    );
}

#[test]
fn query_and_fragment_on_handle_uris_are_kept() {
    let id = Identifier::parse("https://hdl.handle.net/20.500.1/x?noredirect#top").unwrap();
    assert_eq!(id.kind(), IdentifierKind::Handle);
    assert_eq!(
        (id.query(), id.fragment()),
        (Some("noredirect"), Some("top"))
    );
    assert_eq!(id.to_handle().unwrap().as_str(), "20.500.1/x");
    assert_eq!(id.to_string(), "hdl:20.500.1/x?noredirect#top");
}

#[test]
fn query_and_fragment_are_kept_in_uri_form() {
    // Non-ASCII is accepted as in an IRI, and kept percent-encoded, so that the identifier
    // prints and parses back to itself. Lenient parsing also encodes what it let through.
    let cordra = "100.102/F58FB49EB1F848F0A606E84CEF294BE5";
    for (input, options) in [
        ("hdl:10.1/x?é#ü".to_string(), ParseOptions::default()),
        (format!("{cordra}?é#ü"), ParseOptions::default()),
        (format!("hdl:{cordra}?é#ü"), ParseOptions::default()),
        (
            "hdl:10.1/x?é#ü".to_string(),
            ParseOptions::default().lenient(true),
        ),
    ] {
        let id = Identifier::parse_with(&input, options).unwrap();
        assert_eq!(
            (id.query(), id.fragment()),
            (Some("%C3%A9"), Some("%C3%BC")),
            "{input:?}"
        );
        assert_eq!(Identifier::parse(&id.to_string()).unwrap(), id, "{input:?}");
    }
    let id = Identifier::parse_with("hdl:10.1/x?a b", ParseOptions::default().lenient(true));
    assert_eq!(id.unwrap().query(), Some("a%20b"));
    assert_eq!(
        CordraId::parse(&format!("{cordra}?é")).unwrap().query(),
        Some("%C3%A9")
    );
}

#[test]
fn error_offsets_point_into_the_input() {
    let cordra = ParseOptions::default().cordra_only(true);
    let err = Identifier::parse_with(
        "http://hdl.handle.net/100.102/F58FB49EB1F848f0A606E84CEF294BE",
        cordra,
    )
    .unwrap_err();
    assert_eq!(
        (err.kind(), err.offset()),
        (ErrorKind::CordraSuffixLength, 30)
    );
    // After a percent escape, offsets still count input bytes.
    let err = Identifier::parse("hdl:10.1/%41%42\u{0}").unwrap_err();
    assert_eq!(
        (err.kind(), err.offset()),
        (ErrorKind::ControlCharacter, 15)
    );
    let err = Identifier::parse("hdl:10.1/%41%42%00").unwrap_err();
    assert_eq!(
        (err.kind(), err.offset()),
        (ErrorKind::ControlCharacter, 15)
    );
}
