//! URN rules: fdc ABNF and dates, urn-3, equivalence, resolution URLs.

use crate::ident::{DateId, ErrorKind, Identifier, Urn, Urn3};

fn canonical(s: &str) -> String {
    Urn::parse(s).unwrap().canonical()
}

#[test]
fn fdc_equivalence() {
    let base = "urn:fdc:example.com:2002:A572007";
    assert_eq!(canonical("URN:FDC:Example.COM:2002:A572007"), base);
    assert_ne!(
        Urn::parse(base).unwrap(),
        Urn::parse("urn:fdc:example.com:2002:a572007").unwrap(),
        "the ResourceId is case-sensitive"
    );
    assert_eq!(
        Urn::parse("urn:fdc:example.com:2002:a%2fb").unwrap(),
        Urn::parse("urn:fdc:example.com:2002:a%2Fb").unwrap()
    );
    assert_eq!(
        canonical("urn:fdc:example.com:2002:a%2fb%c3"),
        "urn:fdc:example.com:2002:a%2Fb%C3"
    );
}

#[test]
fn fdc_dates_are_real_days() {
    let date = |d: &str| {
        Urn::parse(&format!("urn:fdc:example.com:{d}:x")).map(|u| match u {
            Urn::Fdc(u) => u.date_id(),
            Urn::Urn3(_) => unreachable!(),
        })
    };
    assert_eq!(
        date("20000229").unwrap(),
        DateId::Day {
            year: 2000,
            month: 2,
            day: 29
        }
    );
    assert_eq!(
        date("20240229").unwrap(),
        DateId::Day {
            year: 2024,
            month: 2,
            day: 29
        }
    );
    assert_eq!(
        date("20241231").unwrap(),
        DateId::Day {
            year: 2024,
            month: 12,
            day: 31
        }
    );
    assert_eq!(
        date("199912").unwrap(),
        DateId::Month {
            year: 1999,
            month: 12
        }
    );
    for bad in [
        "19000229", "20230229", "20020431", "20021232", "200213", "200200", "20020100",
    ] {
        assert_eq!(
            date(bad).unwrap_err().kind(),
            ErrorKind::DateIdNotADate,
            "{bad}"
        );
    }
    for (reserved, value, digits) in [("1", 1, 1), ("07", 7, 2), ("123", 123, 3), ("000", 0, 3)] {
        let d = date(reserved).unwrap();
        assert_eq!(d, DateId::Reserved { value, digits });
        assert!(d.is_reserved());
        assert_eq!(d.to_string(), reserved, "kept exactly");
    }
    let u = Urn::parse("urn:fdc:example.com:12:x").unwrap();
    assert_eq!(u.notes().len(), 1);
    assert!(Urn::parse("urn:fdc:example.com:2002:x")
        .unwrap()
        .notes()
        .is_empty());
}

#[test]
fn fdc_provider_and_resource_grammar() {
    for ok in [
        "a.b",
        "1a.com",
        "a-b.c-d.org",
        "x.y.z.example",
        "example.c0m9",
    ] {
        assert!(Urn::parse(&format!("urn:fdc:{ok}:2002:x")).is_ok(), "{ok}");
    }
    let all_resource_chars = "urn:fdc:example.com:2002:aZ09()+,-.:=@;$_!*'%41";
    assert!(Urn::parse(all_resource_chars).is_ok());
}

#[test]
fn urn3_grammar_and_equivalence() {
    let u = Urn3::parse("urn:urn-3:A(1)+,-=@;$_!*'%41.B:res.name:with:colons").unwrap();
    assert_eq!(u.authorities().count(), 2);
    assert_eq!(u.resource_name(), "res.name:with:colons");
    assert_eq!(
        Urn::parse("URN-3:HUL.OIS:Home").unwrap(),
        Urn::parse("urn:URN-3:hul.ois:HOME").unwrap()
    );
    assert_eq!(
        u.resolution_urls("bad host").unwrap_err().kind(),
        ErrorKind::InvalidResolverHost
    );
    assert_eq!(
        Urn3::parse("urn:fdc:a.b:2002:x").unwrap_err().kind(),
        ErrorKind::UnsupportedUrnNamespace
    );
}

#[test]
fn urns_are_not_handles() {
    let id = Identifier::parse("urn:fdc:example.com:2002:A572007").unwrap();
    let err = id.to_handle().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::UrnIsNotAHandle);
    assert!(err.to_string().contains("N2L"));
    assert_eq!(id.hdl_uri(), None);
}

#[test]
fn serializes_canonical() {
    let u = Urn::parse("urn-3:HBS.Baker.TC:1923").unwrap();
    assert_eq!(
        serde_json::to_string(&u).unwrap(),
        "\"urn:urn-3:hbs.baker.tc:1923\""
    );
    assert_eq!(u.to_string(), "urn:urn-3:HBS.Baker.TC:1923");
}
