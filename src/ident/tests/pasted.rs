//! Identifiers as people paste them (resolver and REST URLs, proxy URLs without a scheme),
//! the CORDRA case rule and the handle length limit.

use proptest::prelude::*;

use crate::ident::{
    CordraId, ErrorKind, Handle, HandleUri, Identifier, IdentifierKind, ParseOptions, UriForm,
    MAX_HANDLE_LENGTH,
};

fn handle_of(input: &str) -> String {
    match Identifier::parse(input) {
        Ok(id) => id.to_handle().unwrap().into_string(),
        Err(e) => panic!("{input:?}: {e}"),
    }
}

#[test]
fn resolver_urls_name_the_handle_a_user_means() {
    for (input, handle) in [
        // A DOI whose suffix holds '/' (refused before: "the local name contains '/'").
        (
            "https://doi.org/10.1093/nar/gkaa1100",
            "10.1093/nar/gkaa1100",
        ),
        ("https://hdl.handle.net/20.500.1/a/b/c", "20.500.1/a/b/c"),
        ("http://dx.doi.org/10.1000/x/y", "10.1000/x/y"),
        // The proxies decode the whole path, '%2F' included, and keep '+'.
        ("https://doi.org/10.1000%2Fabc", "10.1000/abc"),
        ("https://doi.org/10.1000/a+b", "10.1000/a+b"),
        (
            "https://doi.org/10.1002/(SICI)1097-4636(199606)31:2%3C147::AID-JBM1%3E3.0.CO;2-N",
            "10.1002/(SICI)1097-4636(199606)31:2<147::AID-JBM1>3.0.CO;2-N",
        ),
        ("https://hdl.handle.net/20.500.1/caf%C3%A9", "20.500.1/café"),
        // Leading slashes are skipped, as the proxies do.
        ("https://doi.org//10.1000/x", "10.1000/x"),
        // Characters outside the URI grammar, as a proxy takes them.
        ("https://hdl.handle.net/10.1045/a<b>", "10.1045/a<b>"),
        // Another host keeps its resolver segment.
        (
            "http://arrow.resolver.au.gov:2641/hdl/100.102/a/b",
            "100.102/a/b",
        ),
    ] {
        assert_eq!(handle_of(input), handle, "{input}");
    }
}

#[test]
fn rest_api_urls_name_their_handle() {
    for (input, handle) in [
        // Read before as prefix "handles": HANDLES/20.500.1/1.
        (
            "https://hdl.handle.net/api/handles/20.500.1/1",
            "20.500.1/1",
        ),
        ("https://doi.org/api/handles/10.1000/a/b", "10.1000/a/b"),
        ("https://doi.org/API/Handles/10.1000/x", "10.1000/x"),
        // A handle server's own REST API.
        ("http://127.0.0.1:8000/api/handles/20.500.1/1", "20.500.1/1"),
    ] {
        assert_eq!(handle_of(input), handle, "{input}");
    }
    let uri = HandleUri::parse("https://hdl.handle.net/api/handles/20.500.1/1?type=URL").unwrap();
    assert_eq!(
        uri.form(),
        &UriForm::Http {
            secure: true,
            authority: "hdl.handle.net".into(),
            segment: Some("api/handles".into()),
        }
    );
    assert_eq!(uri.query(), Some("type=URL"));
    assert_eq!(
        uri.to_string(),
        "https://hdl.handle.net/api/handles/20.500.1/1?type=URL"
    );
}

#[test]
fn proxy_urls_without_a_scheme_are_urls_not_prefixes() {
    // Read before as prefix "doi.org" (DOI.ORG when normalized).
    for (input, handle) in [
        ("doi.org/10.1000/x", "10.1000/x"),
        ("DOI.org/10.1000/a/b", "10.1000/a/b"),
        ("dx.doi.org/10.1000/x", "10.1000/x"),
        ("www.doi.org/10.1000/x", "10.1000/x"),
        ("hdl.handle.net/20.500.1/1", "20.500.1/1"),
        ("hdl.handle.net/api/handles/20.500.1/1", "20.500.1/1"),
    ] {
        assert_eq!(handle_of(input), handle, "{input}");
    }
    let id = Identifier::parse("doi.org/10.1000/x?noredirect").unwrap();
    assert_eq!(id.query(), Some("noredirect"));
    let d = id.describe("doi.org/10.1000/x?noredirect");
    assert_eq!(d.prefix.as_deref(), Some("10.1000"));
    // Other text without a scheme is a bare handle, as always.
    assert_eq!(handle_of("cnri.test/x"), "cnri.test/x");
    assert_eq!(handle_of("doi.org.x/10.1000/x"), "doi.org.x/10.1000/x");
}

#[test]
fn query_and_fragment_of_resolver_urls_are_kept_off_the_handle() {
    for (input, query, fragment) in [
        (
            "https://hdl.handle.net/20.500.1/1?noredirect",
            Some("noredirect"),
            None,
        ),
        (
            "https://doi.org/10.1000/x?locatt=view:json#sec-2",
            Some("locatt=view:json"),
            Some("sec-2"),
        ),
        ("https://doi.org/10.1000/x#a b", None, Some("a%20b")),
        ("https://doi.org/10.1000/x?a b", Some("a%20b"), None),
    ] {
        let id = Identifier::parse(input).unwrap();
        assert_eq!((id.query(), id.fragment()), (query, fragment), "{input}");
        let suffix = id.to_handle().unwrap().suffix().to_string();
        assert!(suffix == "1" || suffix == "x", "{input}: {suffix}");
        assert_eq!(Identifier::parse(&id.to_string()).unwrap(), id, "{input}");
    }
}

#[test]
fn pasted_urls_still_reject_what_no_reading_can_mend() {
    for (input, kind, at) in [
        ("https://doi.org/10.1000", ErrorKind::MissingSlash, 23),
        ("https://doi.org/", ErrorKind::EmptyPrefix, 16),
        ("https://doi.org/%2F10.1/x", ErrorKind::EmptyPrefix, 16),
        ("https://doi.org/10..1/x", ErrorKind::EmptyPrefixSegment, 19),
        ("doi.org/10..1/x", ErrorKind::EmptyPrefixSegment, 11),
        ("https://doi.org/10.1000/", ErrorKind::EmptySuffix, 24),
        (
            "https://doi.org/10.1000/a%zz",
            ErrorKind::InvalidPercentEncoding,
            25,
        ),
        ("https://doi.org/10.1000/a%FF", ErrorKind::InvalidUtf8, 25),
        (
            "https://doi.org/10.1000/a%00",
            ErrorKind::ControlCharacter,
            25,
        ),
        (
            "https://doi.org/10.1000/x?\u{1}",
            ErrorKind::ControlCharacter,
            26,
        ),
        (
            "https://doi.org/api/handles/10.1000",
            ErrorKind::MissingSlash,
            35,
        ),
        (
            "https://do i.org/10.1000/x",
            ErrorKind::InvalidAuthority,
            10,
        ),
    ] {
        let err = Identifier::parse(input).unwrap_err();
        assert_eq!((err.kind(), err.offset()), (kind, at), "{input:?}: {err}");
    }
}

#[test]
fn the_strict_profile_reads_resolver_urls_as_before() {
    let strict = ParseOptions::default().strict(true);
    let kind = |input: &str, options| Identifier::parse_with(input, options).unwrap_err().kind();
    assert_eq!(
        kind("https://doi.org/10.1093/nar/gkaa1100", strict),
        ErrorKind::ExtraPathSegment
    );
    // The profile reads `api` as the resolver's segment and `handles` as the prefix.
    assert_eq!(
        kind("https://hdl.handle.net/api/handles/20.500.1/1", strict),
        ErrorKind::ExtraPathSegment
    );
    assert_eq!(
        kind("https://hdl.handle.net/10.1000/a<b>", strict),
        ErrorKind::InvalidUriCharacter
    );
    assert_eq!(
        kind("https://doi.org/10.1%2Fx/y", strict),
        ErrorKind::SlashInPrefix
    );
    let bare = Identifier::parse_with("doi.org/10.1000/x", strict).unwrap();
    assert_eq!(bare.to_handle().unwrap().prefix(), "doi.org");
    assert_eq!(
        Identifier::parse_with("https://doi.org/10.1000/a%2Fb", strict)
            .unwrap()
            .to_handle()
            .unwrap()
            .suffix(),
        "a/b"
    );
    // CORDRA only implies the profile: a CORDRA id behind a proxy host without scheme is
    // not one.
    let cordra = ParseOptions::default().cordra_only(true);
    assert!(cordra.is_strict());
    assert_eq!(
        kind("doi.org/100.102/F58FB49EB1F848F0A606E84CEF294BE5", cordra),
        ErrorKind::CordraPrefix
    );
    assert_eq!(
        Identifier::parse("doi.org/100.102/F58FB49EB1F848F0A606E84CEF294BE5")
            .unwrap()
            .kind(),
        IdentifierKind::Cordra
    );
}

#[test]
fn a_cordra_like_suffix_is_sent_as_written_and_shown_in_cordra_form() {
    let written = "100.102/f58fb49eb1f848f0a606e84cef294be5";
    let upper = "100.102/F58FB49EB1F848F0A606E84CEF294BE5";
    for input in [
        written.to_string(),
        format!("hdl:{written}"),
        format!("https://hdl.handle.net/{written}"),
        format!("doi.org/{written}"),
    ] {
        let id = Identifier::parse(&input).unwrap();
        assert_eq!(id.kind(), IdentifierKind::Cordra, "{input}");
        assert_eq!(id.to_handle().unwrap().as_str(), written, "{input}");
        assert_eq!(id.normalized_handle().unwrap().as_str(), upper, "{input}");
        // Described as sent: as written, the CORDRA form beside it (and as the handle
        // under the CORDRA profile).
        let d = id.describe(&input);
        assert_eq!(d.handle.as_deref(), Some(written), "{input}");
        assert_eq!(d.cordra_handle.as_deref(), Some(upper), "{input}");
        let cordra = ParseOptions::default().cordra_only(true);
        assert_eq!(
            id.describe_with(&input, cordra).handle.as_deref(),
            Some(upper),
            "{input}"
        );
        assert_eq!(id.as_cordra().unwrap().to_handle().as_str(), upper);
        // Printed as written, so that it parses back to the handle it sends.
        let back = Identifier::parse(&id.to_string()).unwrap();
        assert_eq!(back.to_handle().unwrap().as_str(), written);
    }
    // The same CORDRA id, whatever the case.
    assert_eq!(
        CordraId::parse(written).unwrap(),
        CordraId::parse(upper).unwrap()
    );
    assert_eq!(
        Identifier::parse(written).unwrap(),
        Identifier::parse(upper).unwrap()
    );
}

#[test]
fn one_handle_length_limit() {
    let fits = format!("20.500.1/{}", "x".repeat(MAX_HANDLE_LENGTH - 9));
    assert_eq!(fits.len(), MAX_HANDLE_LENGTH);
    assert!(Handle::parse(&fits).is_ok());
    assert!(Identifier::parse(&fits).is_ok());
    let over = format!("{fits}y");
    for (input, at) in [
        (over.clone(), MAX_HANDLE_LENGTH),
        (format!("hdl:{over}"), MAX_HANDLE_LENGTH + 4),
        (format!("https://doi.org/{over}"), MAX_HANDLE_LENGTH + 16),
        // Offsets count input bytes: each '%78' is one byte of the handle.
        (
            format!(
                "https://doi.org/20.500.1/{}y",
                "%78".repeat(MAX_HANDLE_LENGTH - 9)
            ),
            16 + 9 + 3 * (MAX_HANDLE_LENGTH - 9),
        ),
    ] {
        let err = Identifier::parse(&input).unwrap_err();
        assert_eq!(
            (err.kind(), err.offset()),
            (ErrorKind::HandleTooLong, at),
            "{}",
            &input[..40]
        );
        assert!(err.to_string().contains("2049 bytes long"), "{err}");
        assert!(err.to_string().contains("at most 2048"), "{err}");
    }
    // A long prefix, a CORDRA id, a prefix handle.
    let long_prefix = format!("{}/x", "1".repeat(MAX_HANDLE_LENGTH));
    let err = Handle::parse(&long_prefix).unwrap_err();
    assert_eq!(
        (err.kind(), err.offset()),
        (ErrorKind::HandleTooLong, MAX_HANDLE_LENGTH)
    );
    let cordra = format!(
        "{}/F58FB49EB1F848F0A606E84CEF294BE5",
        "1".repeat(MAX_HANDLE_LENGTH)
    );
    assert_eq!(
        CordraId::parse(&cordra).unwrap_err().kind(),
        ErrorKind::HandleTooLong
    );
    assert_eq!(
        Identifier::parse(&cordra).unwrap_err().kind(),
        ErrorKind::HandleTooLong
    );
    assert_eq!(
        Handle::for_prefix(&"1".repeat(MAX_HANDLE_LENGTH - 5))
            .unwrap()
            .as_str()
            .len(),
        MAX_HANDLE_LENGTH
    );
    assert_eq!(
        Handle::for_prefix(&"1".repeat(MAX_HANDLE_LENGTH - 4))
            .unwrap_err()
            .kind(),
        ErrorKind::HandleTooLong
    );
    // The wire codec's default limit is the same constant.
    assert_eq!(
        crate::wire::Limits::default().max_handle_length,
        MAX_HANDLE_LENGTH
    );
}

/// A suffix made of what a proxy URL path can carry once `%`, `?` and `#` are escaped.
fn suffix() -> impl Strategy<Value = String> {
    "\\PC{1,16}"
}

proptest! {
    #[test]
    fn a_handle_in_a_proxy_url_reads_back(
        prefix in "[A-Za-z0-9]{1,5}(\\.[A-Za-z0-9]{1,5}){0,2}",
        suffix in suffix(),
        host in prop::sample::select(vec![
            "https://hdl.handle.net/", "https://doi.org/", "doi.org/",
            "https://hdl.handle.net/api/handles/", "http://127.0.0.1:8000/api/handles/",
        ]),
        escape_slash in any::<bool>(),
    ) {
        let mut path = String::new();
        for c in suffix.chars() {
            match c {
                '%' | '?' | '#' => path.push_str(&format!("%{:02X}", c as u32)),
                '/' if escape_slash => path.push_str("%2F"),
                c => path.push(c),
            }
        }
        let input = format!("{host}{prefix}/{path}");
        let id = Identifier::parse(&input).unwrap();
        let handle = id.to_handle().unwrap();
        prop_assert_eq!(handle.prefix(), prefix.as_str(), "{}", input);
        prop_assert_eq!(handle.suffix(), suffix.as_str(), "{}", input);
    }

    #[test]
    fn no_panic_on_pasted_junk(
        start in prop::sample::select(vec![
            "", "https://doi.org/", "doi.org/", "hdl.handle.net/", "https://hdl.handle.net/api/handles/",
            "http://h:1/hdl/", "https://doi.org//", "DOI.ORG/api/", "https://[::1]/api/handles/",
        ]),
        rest in "\\PC{0,32}|[%0-9a-fA-F:/.?#@+\\[\\] ]{0,40}",
    ) {
        let s = format!("{start}{rest}");
        for options in [
            ParseOptions::default(),
            ParseOptions::default().strict(true),
            ParseOptions::default().lenient(true),
            ParseOptions::default().cordra_only(true),
        ] {
            match Identifier::parse_with(&s, options) {
                Ok(id) => {
                    if let Ok(h) = id.to_handle() {
                        prop_assert!(h.as_str().len() <= MAX_HANDLE_LENGTH);
                    }
                    let printed = id.to_string();
                    prop_assert_eq!(Identifier::parse(&printed).ok(), Some(id), "{:?}", s);
                }
                Err(e) => {
                    prop_assert!(e.offset() <= s.len(), "{:?}: {}", s, e);
                    prop_assert!(!e.to_string().is_empty());
                }
            }
        }
    }
}
