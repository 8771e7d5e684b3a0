//! Property tests: round trips, normalization, URN equivalence, no panics.

use proptest::prelude::*;

use crate::ident::{
    CordraId, Handle, HandleUri, Identifier, IdentifierKind, ParseOptions, UriForm, Urn,
};

fn prefix() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::collection::vec("[A-Za-z0-9]{1,5}", 1..4).prop_map(|v| v.join(".")),
        "[A-Za-z]{1,4}".prop_map(|s| format!("0.{s}")),
    ]
}

/// Any suffix without control characters (may hold `/`, `%`, `?`, `#`, non-ASCII).
fn suffix() -> impl Strategy<Value = String> {
    "\\PC{1,16}"
}

fn handle() -> impl Strategy<Value = Handle> {
    (prefix(), suffix()).prop_map(|(p, s)| Handle::from_parts(&p, &s).unwrap())
}

fn query() -> impl Strategy<Value = Option<String>> {
    proptest::option::of("[A-Za-z0-9=&:@/?~._!$'()*+,;-]{0,8}")
}

fn form() -> impl Strategy<Value = UriForm> {
    prop_oneof![
        Just(UriForm::Hdl),
        Just(UriForm::HdlHost),
        any::<bool>().prop_map(|secure| UriForm::Http {
            secure,
            authority: "hdl.handle.net".into(),
            segment: None,
        }),
        Just(UriForm::Http {
            secure: false,
            authority: "arrow.resolver.au.gov:2641".into(),
            segment: Some("hdl".into()),
        }),
    ]
}

/// Flips the ASCII case of the characters where `mask` says so.
fn flip(s: &str, mask: &[bool]) -> String {
    s.chars()
        .zip(mask.iter().copied().cycle())
        .map(|(c, f)| {
            if f {
                if c.is_ascii_lowercase() {
                    c.to_ascii_uppercase()
                } else {
                    c.to_ascii_lowercase()
                }
            } else {
                c
            }
        })
        .collect()
}

fn fdc_parts() -> impl Strategy<Value = (String, String, String)> {
    let provider =
        prop::collection::vec("[a-z0-9]([a-z0-9-]{0,4}[a-z0-9])?", 1..3).prop_flat_map(|labels| {
            "[a-z]([a-z0-9]{0,4})".prop_map(move |top| format!("{}.{top}", labels.join(".")))
        });
    let date = prop_oneof![
        (1000u16..3000).prop_map(|y| format!("{y}")),
        (1000u16..3000, 1u8..13).prop_map(|(y, m)| format!("{y}{m:02}")),
        (1000u16..3000, 1u8..13, 1u8..29).prop_map(|(y, m, d)| format!("{y}{m:02}{d:02}")),
        "[0-9]{1,3}",
    ];
    let resource = prop::collection::vec(
        prop_oneof!["[A-Za-z0-9()+,.:=@;$_!*'-]{1,4}", "%[0-9a-fA-F]{2}"],
        1..5,
    )
    .prop_map(|v| v.concat());
    (provider, date, resource)
}

proptest! {
    #[test]
    fn handle_format_then_parse(h in handle()) {
        let text = format!("{h}");
        let back = Handle::parse(&text).unwrap();
        prop_assert_eq!(back.as_str(), h.as_str());
        prop_assert_eq!(Handle::parse_bytes(h.as_bytes()).unwrap().to_string(), h.to_string());
    }

    #[test]
    fn uri_format_then_parse(h in handle(), form in form(), q in query(), f in query()) {
        let uri = HandleUri::new(form, h.clone()).with_query(q).with_fragment(f);
        let text = uri.to_string();
        let back = HandleUri::parse(&text).unwrap();
        prop_assert_eq!(back.handle().as_str(), h.as_str(), "{}", text);
        prop_assert_eq!(&back, &uri);
    }

    #[test]
    fn doi_format_then_parse(p in "[0-9]{1,5}", s in suffix()) {
        let h = Handle::from_parts(&format!("10.{p}"), &s).unwrap();
        let text = HandleUri::new(UriForm::Doi, h.clone()).to_string();
        prop_assert_eq!(HandleUri::parse(&text).unwrap().handle().to_string(), h.to_string());
    }

    #[test]
    fn identifier_format_then_parse(h in handle(), q in query(), f in query()) {
        let bare = Identifier::parse(h.as_str()).unwrap();
        prop_assert_eq!(&Identifier::parse(&bare.to_string()).unwrap(), &bare);
        if bare.kind() == IdentifierKind::Handle {
            let with_query = Identifier::Handle { handle: h, query: q, fragment: f };
            let text = with_query.to_string();
            prop_assert_eq!(Identifier::parse(&text).unwrap(), with_query, "{}", text);
        }
    }

    #[test]
    fn cordra_format_then_parse(p in "[0-9]{1,4}(\\.[0-9]{1,4}){0,2}", bits in any::<u128>(),
                                q in query(), lower in any::<bool>()) {
        let id = CordraId::from_uuid(&p, uuid::Uuid::from_u128(bits)).unwrap();
        let mut text = id.to_string();
        if lower { text = text.to_ascii_lowercase(); }
        prop_assert_eq!(&CordraId::parse(&text).unwrap(), &id);
        if let Some(q) = q {
            let text = format!("{id}?{q}");
            let parsed = Identifier::parse(&text).unwrap();
            prop_assert_eq!(parsed.kind(), IdentifierKind::Cordra);
            prop_assert_eq!(Identifier::parse(&parsed.to_string()).unwrap(), parsed);
        }
    }

    #[test]
    fn normalize_is_idempotent(h in handle()) {
        let n = h.normalized();
        prop_assert_eq!(n.normalized().to_string(), n.to_string());
        prop_assert!(n.is_normalized());
        prop_assert_eq!(&n, &h);
        prop_assert_eq!(n.prefix_handle().to_string(), h.prefix_handle().to_string());
    }

    #[test]
    fn equivalent_fdc_urns_have_equal_canonical_forms(
        (provider, date, resource) in fdc_parts(),
        mask in prop::collection::vec(any::<bool>(), 1..16),
    ) {
        let a = format!("urn:fdc:{provider}:{date}:{resource}");
        // Case may change in "urn", "fdc", the ProviderId and %XX escapes, nowhere else.
        let mut b = flip(&format!("urn:fdc:{provider}"), &mask);
        b.push(':');
        b.push_str(&date);
        b.push(':');
        let bytes = resource.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i] == b'%' {
                b.push('%');
                b.push_str(&flip(&resource[i + 1..i + 3], &mask));
                i += 3;
            } else {
                b.push(char::from(bytes[i]));
                i += 1;
            }
        }
        let (ua, ub) = (Urn::parse(&a).unwrap(), Urn::parse(&b).unwrap());
        prop_assert_eq!(ua.canonical(), ub.canonical());
        prop_assert_eq!(&ua, &ub);
        prop_assert_eq!(Urn::parse(&ua.canonical()).unwrap().canonical(), ua.canonical());
        prop_assert_eq!(Urn::parse(&ua.to_string()).unwrap(), ua);
    }

    #[test]
    fn equivalent_urn3_have_equal_canonical_forms(
        path in prop::collection::vec("[A-Za-z0-9()+,=@;$_!*'-]{1,5}", 1..4),
        name in "[A-Za-z0-9().:+,=@;$_!*'-]{1,10}",
        mask in prop::collection::vec(any::<bool>(), 1..16),
        bare in any::<bool>(),
    ) {
        let a = format!("urn:urn-3:{}:{name}", path.join("."));
        let flipped = flip(&a, &mask);
        let b = if bare { flipped[4..].to_string() } else { flipped };
        let (ua, ub) = (Urn::parse(&a).unwrap(), Urn::parse(&b).unwrap());
        prop_assert_eq!(ua.canonical(), ub.canonical());
        prop_assert_eq!(&ua, &ub);
        prop_assert_eq!(Urn::parse(&ub.to_string()).unwrap(), ub);
    }

    #[test]
    fn no_panic_on_arbitrary_strings(s in "\\PC{0,40}|.{0,40}") {
        check_no_panic(&s);
    }

    #[test]
    fn no_panic_on_identifier_like_strings(s in "[hdlurnfoitp3:/%?#.\\-0-9a-fA-F é\u{0}]{0,48}") {
        check_no_panic(&s);
    }

    #[test]
    fn every_scheme_survives_junk_and_what_parses_prints_back(
        scheme in prop::sample::select(vec![
            "hdl:", "hdl://", "HDL:", "doi:", "http://", "https://", "http://[::1]:80/",
            "urn:fdc:", "urn:urn-3:", "urn-3:", "URN:FDC:a.b:2002:", "doi.org/",
            "https://doi.org/api/handles/",
        ]),
        rest in "\\PC{0,32}|[%0-9a-fA-F:/.?#@\\[\\]\\- ]{0,40}",
    ) {
        let s = format!("{scheme}{rest}");
        check_no_panic(&s);
        if let Ok(id) = Identifier::parse(&s) {
            let printed = id.to_string();
            let back = Identifier::parse(&printed);
            prop_assert_eq!(back.as_ref(), Ok(&id), "{:?} printed as {:?}", s, printed);
        }
    }

    #[test]
    fn no_panic_on_arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
        match Handle::parse_bytes(&bytes) {
            Ok(h) => prop_assert_eq!(h.as_bytes(), &bytes[..]),
            Err(e) => prop_assert!(e.offset() <= bytes.len()),
        }
    }
}

fn check_no_panic(s: &str) {
    let lenient = ParseOptions::default().lenient(true);
    let cordra = ParseOptions::default().cordra_only(true);
    let strict = ParseOptions::default().strict(true);
    for options in [ParseOptions::default(), lenient, cordra, strict] {
        match Identifier::parse_with(s, options) {
            Ok(id) => {
                let d = id.describe(s);
                assert!(serde_json::to_string(&d).is_ok());
                assert_eq!(d.kind, id.kind());
            }
            Err(e) => {
                assert!(e.offset() <= s.len(), "{s:?}: {e}");
                assert!(!e.to_string().is_empty());
            }
        }
        if let Err(e) = HandleUri::parse_with(s, options) {
            assert!(e.offset() <= s.len(), "{s:?}: {e}");
        }
    }
    for result in [
        Handle::parse(s).map(|_| ()),
        CordraId::parse(s).map(|_| ()),
        Urn::parse(s).map(|_| ()),
    ] {
        if let Err(e) = result {
            assert!(e.offset() <= s.len(), "{s:?}: {e}");
        }
    }
}

/// Text mixing what the ASCII fast paths of the checks must treat exactly like the char-based
/// rules: dots, ASCII and non-ASCII white space, C0 and C1 controls, DEL, multi-byte letters.
fn tricky_text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[.a0 \\t\\n\\x0B\\x0C\\r\\x00\\x1F\\x7F\\u{80}\\u{85}\\u{9F}\\u{A0}\\u{2003}\\u{3000}é日]{0,12}",
        "[.a-z0-9]{0,12}",
        any::<String>(),
    ]
}

/// `check_controls` as it was: the first `char::is_control` character.
fn reference_controls(s: &str, base: usize) -> Result<(), crate::ident::IdentError> {
    match s.char_indices().find(|(_, c)| c.is_control()) {
        Some((i, c)) => Err(crate::ident::IdentError::ControlCharacter {
            at: base.saturating_add(i),
            text: c.to_string(),
        }),
        None => Ok(()),
    }
}

/// `check_prefix` as it was: char-based white space, then `split('.')` for empty segments.
fn reference_prefix(
    prefix: &str,
    span: &crate::ident::chars::Span<'_>,
) -> Result<(), crate::ident::IdentError> {
    use crate::ident::IdentError;
    if prefix.is_empty() {
        return Err(IdentError::EmptyPrefix {
            at: span.map(0),
            text: String::new(),
        });
    }
    if let Some((at, _)) = prefix.char_indices().find(|(_, c)| c.is_whitespace()) {
        return Err(IdentError::PrefixWhitespace {
            at: span.map(at),
            text: prefix.to_string(),
        });
    }
    let mut at = 0usize;
    for segment in prefix.split('.') {
        if segment.is_empty() {
            return Err(IdentError::EmptyPrefixSegment {
                at: span.map(at),
                text: prefix.to_string(),
            });
        }
        at = at.saturating_add(segment.len()).saturating_add(1);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    #[test]
    fn control_check_matches_the_char_based_rule(s in tricky_text(), base in 0usize..64) {
        prop_assert_eq!(
            crate::ident::chars::check_controls(&s, base),
            reference_controls(&s, base)
        );
    }

    #[test]
    fn prefix_check_matches_the_char_based_rules(s in tricky_text(), base in 0usize..64) {
        let span = crate::ident::chars::Span::plain(base, &s);
        prop_assert_eq!(
            crate::ident::handle::check_prefix(&s, &span),
            reference_prefix(&s, &span)
        );
    }
}

proptest! {
    /// `Identifier::parse_with` skips the CORDRA attempt when `CordraId::may_match` says no:
    /// that must only ever skip an attempt that would have failed.
    #[test]
    fn a_text_that_may_not_match_is_never_a_cordra_id(
        s in r"[0-9a-fA-F./?#g-]{0,40}",
        prefix in "[0-9.]{1,6}",
        suffix in "[0-9a-fA-F]{30,34}",
        tail in r"(|\?v|#f|\?v#f)",
    ) {
        for text in [s, format!("{prefix}/{suffix}{tail}")] {
            if !crate::ident::CordraId::may_match(&text) {
                prop_assert!(crate::ident::CordraId::parse(&text).is_err(), "{text:?}");
            }
        }
    }
}
