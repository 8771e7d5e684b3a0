//! The examples given in the specifications (RFC 3650-3652, CORDRA, RFC 4198, urn-3).

use crate::ident::{DateId, HandleUri, Identifier, IdentifierKind, UriForm, Urn};

const CORDRA_SUFFIX: &str = "F58FB49EB1F848F0A606E84CEF294BE5";

fn cordra(input: &str) -> Identifier {
    let id = Identifier::parse(input).unwrap();
    assert_eq!(id.kind(), IdentifierKind::Cordra, "{input}");
    id
}

#[test]
fn cordra_examples_in_every_uri_form_name_the_same_id() {
    let forms = [
        "hdl://100.102/F58FB49EB1F848f0A606E84CEF294BE5",
        "hdl:100.102/F58FB49EB1F848f0A606E84CEF294BE5",
        "http://hdl.handle.net/100.102/F58FB49EB1F848f0A606E84CEF294BE5",
        "http://arrow.resolver.au.gov:2641/hdl/100.102/F58FB49EB1F848f0A606E84CEF294BE5",
        "100.102/F58FB49EB1F848f0A606E84CEF294BE5",
    ];
    let first = cordra(forms[0]);
    for form in forms {
        let id = cordra(form);
        assert_eq!(id, first, "{form}");
        let handle = id.normalized_handle().unwrap();
        assert_eq!(handle.prefix(), "100.102");
        assert_eq!(
            handle.suffix(),
            CORDRA_SUFFIX,
            "suffix normalized to upper case"
        );
        // What is sent is the handle as written (handles are case sensitive).
        assert_eq!(
            id.to_handle().unwrap().suffix(),
            "F58FB49EB1F848f0A606E84CEF294BE5"
        );
    }
}

#[test]
fn arrow_resolver_url_keeps_host_port_and_resolver_segment() {
    let uri = HandleUri::parse(
        "http://arrow.resolver.au.gov:2641/hdl/100.102/F58FB49EB1F848f0A606E84CEF294BE5",
    )
    .unwrap();
    assert_eq!(
        uri.form(),
        &UriForm::Http {
            secure: false,
            authority: "arrow.resolver.au.gov:2641".into(),
            segment: Some("hdl".into()),
        }
    );
    assert_eq!(
        uri.to_string(),
        "http://arrow.resolver.au.gov:2641/hdl/100.102/F58FB49EB1F848f0A606E84CEF294BE5"
    );
}

#[test]
fn doi_example_is_a_handle_under_prefix_10_1045() {
    for input in [
        "10.1045/april2006-paskin",
        "doi:10.1045/april2006-paskin",
        "https://doi.org/10.1045/april2006-paskin",
        "hdl:10.1045/april2006-paskin",
    ] {
        let id = Identifier::parse(input).unwrap();
        assert_eq!(id.kind(), IdentifierKind::Handle, "{input}");
        let h = id.to_handle().unwrap();
        assert_eq!(h.as_str(), "10.1045/april2006-paskin");
        assert_eq!(h.prefix_handle().as_str(), "0.NA/10.1045");
        assert_eq!(h.parents().collect::<Vec<_>>(), ["10"]);
    }
    let d = Identifier::parse("10.1045/april2006-paskin")
        .unwrap()
        .describe("x");
    assert_eq!(d.hdl_uri.as_deref(), Some("hdl:10.1045/april2006-paskin"));
    assert!(d
        .resolver_urls
        .contains(&"https://doi.org/10.1045/april2006-paskin".to_string()));
}

#[test]
fn handle_20_500_12345_slash_1_is_a_handle_not_cordra() {
    let id = Identifier::parse("20.500.12345/1").unwrap();
    assert_eq!(id.kind(), IdentifierKind::Handle);
    let h = id.to_handle().unwrap();
    assert_eq!(h.parents().collect::<Vec<_>>(), ["20.500", "20"]);
    assert_eq!(h.prefix_handle().as_str(), "0.NA/20.500.12345");
}

#[test]
fn rfc4198_examples() {
    let cases = [
        (
            "urn:fdc:example.com:2002:A572007",
            "example.com",
            DateId::Year { year: 2002 },
            "A572007",
        ),
        (
            "urn:fdc:example.net:200406:ivr:51089",
            "example.net",
            DateId::Month {
                year: 2004,
                month: 6,
            },
            "ivr:51089",
        ),
        (
            "urn:fdc:example.org:20010527:img089322-038",
            "example.org",
            DateId::Day {
                year: 2001,
                month: 5,
                day: 27,
            },
            "img089322-038",
        ),
    ];
    for (input, provider, date, resource) in cases {
        let Urn::Fdc(u) = Urn::parse(input).unwrap() else {
            panic!("{input} is not fdc");
        };
        assert_eq!(u.provider_id(), provider);
        assert_eq!(u.date_id(), date);
        assert_eq!(u.resource_id(), resource);
        assert_eq!(u.canonical(), input, "already canonical");
        assert_eq!(u.to_string(), input);
        assert_eq!(
            u.resolution_urls(),
            [
                format!("http://{provider}/uri-res/N2L?{input}"),
                format!("http://{provider}/uri-res/N2Ls?{input}"),
            ]
        );
        let d = Identifier::parse(input).unwrap().describe(input);
        assert_eq!(
            (d.kind, d.handle, d.namespace),
            (IdentifierKind::Urn, None, Some("fdc"))
        );
    }
}

#[test]
fn urn3_examples() {
    let Urn::Urn3(u) = Urn::parse("urn:urn-3:HUL.OIS:Home").unwrap() else {
        panic!("not urn-3");
    };
    assert_eq!(u.authorities().collect::<Vec<_>>(), ["HUL", "OIS"]);
    assert_eq!(u.resource_name(), "Home");
    assert_eq!(u.canonical(), "urn:urn-3:hul.ois:home");

    let bare = Urn::parse("urn-3:HBS.Baker.TC:1923").unwrap();
    assert_eq!(bare.canonical(), "urn:urn-3:hbs.baker.tc:1923");
    assert_eq!(bare, Urn::parse("urn:urn-3:hbs.baker.tc:1923").unwrap());
    assert_eq!(
        bare.resolution_urls(),
        [
            "http://nrs.harvard.edu/uri-res/N2L?urn:urn-3:hbs.baker.tc:1923",
            "http://nrs.harvard.edu/uri-res/N2Ls?urn:urn-3:hbs.baker.tc:1923",
            "http://nrs.harvard.edu/urn-3:hbs.baker.tc:1923",
        ]
    );
    let Urn::Urn3(u) = bare else { panic!() };
    assert_eq!(
        u.resolution_urls("resolver.example.org:8080").unwrap()[2],
        "http://resolver.example.org:8080/urn-3:hbs.baker.tc:1923"
    );
}

#[test]
fn describe_reports_every_field_tools_rely_on() {
    let id = Identifier::parse("hdl:100.102/F58FB49EB1F848f0A606E84CEF294BE5?a=b#c").unwrap();
    let json = serde_json::to_value(id.describe("in")).unwrap();
    for key in [
        "input",
        "kind",
        "handle",
        "prefix",
        "suffix",
        "query",
        "fragment",
        "hdl_uri",
        "urn",
        "namespace",
        "resolver_urls",
    ] {
        assert!(json.get(key).is_some(), "missing {key}");
    }
    assert_eq!(json["kind"], "cordra");
    assert_eq!(json["query"], "a=b");
    assert_eq!(json["fragment"], "c");
    // The handle as sent (as written), its CORDRA form beside it.
    assert_eq!(json["handle"], "100.102/F58FB49EB1F848f0A606E84CEF294BE5");
    assert_eq!(json["cordra_handle"], format!("100.102/{CORDRA_SUFFIX}"));
    assert_eq!(
        json["hdl_uri"],
        "hdl:100.102/F58FB49EB1F848f0A606E84CEF294BE5?a=b#c"
    );
    assert!(json["urn"].is_null());
}
