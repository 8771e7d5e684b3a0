//! The test server's RFC 2169 resolver: `GET /uri-res/N2Ls?<urn>` answers the URN's URLs as a
//! `text/uri-list`, `GET /uri-res/N2L?<urn>` a 302 to the first of them, from the [`Urns`] of
//! the JSON handle file's `urns` section. Pure: `respond` maps a request line's path and
//! query to an [`HttpReply`]; the HTTP listener sends it.
//!
//! Answers: 200 (`N2Ls`), 302 with `Location` (`N2L`), 404 for a URN it does not know (and for
//! `N2L` of a URN without URLs), 400 when the query is not a URN, 501 for the other RFC 2169
//! services (`N2R`, `N2C`, ...), 404 for any other path.

use std::collections::BTreeMap;

use super::http_reply::HttpReply;
use crate::ident::Urn;
use crate::wire::uri_list::URI_LIST_MEDIA_TYPE;

/// URNs and their URLs, in order of preference. Keyed by the URN's canonical form, so that a
/// URN asked in any lexically equivalent spelling is found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Urns {
    urls: BTreeMap<String, Vec<String>>,
}

impl Urns {
    /// No URNs.
    pub fn new() -> Urns {
        Urns::default()
    }

    /// Sets the URLs of `urn` (replacing any it had).
    pub fn insert(&mut self, urn: &Urn, urls: Vec<String>) {
        self.urls.insert(urn.canonical(), urls);
    }

    /// The URLs of `urn`, or of any URN lexically equivalent to it.
    pub fn get(&self, urn: &Urn) -> Option<&[String]> {
        self.urls.get(&urn.canonical()).map(Vec::as_slice)
    }

    /// How many URNs there are.
    pub fn len(&self) -> usize {
        self.urls.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.urls.is_empty()
    }
}

/// The answer to `GET <path_and_query>` (the request target as sent: `/uri-res/N2Ls?urn:...`).
pub(crate) fn respond(urns: &Urns, path_and_query: &str) -> HttpReply {
    let (path, query) = path_and_query
        .split_once('?')
        .unwrap_or((path_and_query, ""));
    let Some(service) = path.strip_prefix("/uri-res/") else {
        // The PURL-like form of the HUL resolver: /urn-3:<authority path>:<name>.
        return match path.strip_prefix('/').and_then(parse_urn) {
            Some(urn @ Urn::Urn3(_)) => match urns.get(&urn) {
                Some([first, ..]) => HttpReply::empty(302).with_header("Location", first.clone()),
                _ => text(404, "URN not found\n"),
            },
            _ => text(404, "not found\n"),
        };
    };
    let n2ls = match service {
        "N2Ls" => true,
        "N2L" => false,
        _ => return text(501, "only N2L and N2Ls are implemented\n"),
    };
    let Some(urn) = parse_urn(query) else {
        return text(400, "the query is not a urn:fdc or urn-3 URN\n");
    };
    match (urns.get(&urn), n2ls) {
        (None, _) => text(404, "URN not found\n"),
        (Some(urls), true) => {
            let mut body = format!("# {}\r\n", urn.canonical());
            for url in urls {
                body.push_str(url);
                body.push_str("\r\n");
            }
            HttpReply::new(200, URI_LIST_MEDIA_TYPE, body)
        }
        (Some([first, ..]), false) => HttpReply::empty(302).with_header("Location", first.clone()),
        (Some([]), false) => text(404, "no location for this URN\n"),
    }
}

/// The URN of a query: as written, or percent-decoded when a client escaped it.
fn parse_urn(query: &str) -> Option<Urn> {
    if let Ok(urn) = Urn::parse(query) {
        return Some(urn);
    }
    let decoded = percent_encoding::percent_decode_str(query)
        .decode_utf8()
        .ok()?;
    Urn::parse(&decoded).ok()
}

fn text(status: u16, body: &'static str) -> HttpReply {
    HttpReply::new(status, "text/plain; charset=utf-8", body)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::uri_list::{decode_uri_list, MAX_URI_LIST_BYTES};

    fn urns() -> Urns {
        let mut urns = Urns::new();
        urns.insert(
            &Urn::parse("urn:fdc:example.org:2024:Img-1").unwrap(),
            vec![
                "http://example.org/img/1".into(),
                "http://mirror.example.net/img/1".into(),
            ],
        );
        urns.insert(&Urn::parse("urn-3:HUL.Test:empty").unwrap(), Vec::new());
        urns
    }

    #[test]
    fn n2ls_answers_the_list_in_order_for_any_equivalent_spelling() {
        for asked in [
            "urn:fdc:example.org:2024:Img-1",
            "URN:FDC:Example.ORG:2024:Img-1",
            "urn%3Afdc%3Aexample.org%3A2024%3AImg-1",
        ] {
            let reply = respond(&urns(), &format!("/uri-res/N2Ls?{asked}"));
            assert_eq!(reply.status, 200, "{asked}");
            assert_eq!(reply.content_type, Some("text/uri-list"));
            assert_eq!(
                decode_uri_list(&reply.body, MAX_URI_LIST_BYTES).unwrap(),
                [
                    "http://example.org/img/1",
                    "http://mirror.example.net/img/1"
                ]
            );
            assert!(reply
                .body
                .starts_with(b"# urn:fdc:example.org:2024:Img-1\r\n"));
        }
    }

    #[test]
    fn n2l_redirects_to_the_first_url() {
        let reply = respond(&urns(), "/uri-res/N2L?urn:fdc:example.org:2024:Img-1");
        assert_eq!(reply.status, 302);
        assert_eq!(
            reply.headers,
            [("Location", "http://example.org/img/1".to_string())]
        );
        assert!(reply.body.is_empty());
    }

    #[test]
    fn the_sample_file_serves_its_urns() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/fixtures/testserver/handles.json"
        );
        let file = crate::testing::StoreFile::parse(&std::fs::read_to_string(path).unwrap());
        let urns = file.unwrap().urns().unwrap();
        assert_eq!(urns.len(), 4);
        let reply = respond(&urns, "/uri-res/N2Ls?urn:urn-3:hbs.baker.tc:1923");
        assert_eq!(
            decode_uri_list(&reply.body, MAX_URI_LIST_BYTES).unwrap(),
            [
                "https://baker.example.edu/tc/1923",
                "https://archive.example.org/baker/tc/1923"
            ]
        );
        let reply = respond(&urns, "/uri-res/N2L?urn:fdc:example.org:2024:report-7");
        assert_eq!(
            reply.headers,
            [("Location", "https://example.org/reports/7.pdf".to_string())]
        );
        let bad = crate::testing::StoreFile::parse(r#"{"urns": {"urn:isbn:1": []}}"#).unwrap();
        assert!(matches!(
            bad.urns(),
            Err(crate::testing::StoreFileError::Urn { .. })
        ));
    }

    #[test]
    fn unknown_urns_bad_queries_and_other_services() {
        let r = |p: &str| respond(&urns(), p).status;
        assert_eq!(r("/uri-res/N2Ls?urn:fdc:example.org:2024:other"), 404);
        assert_eq!(r("/uri-res/N2L?urn:fdc:example.org:2024:Img-2"), 404);
        // The fdc ResourceId is case sensitive; urn-3 is not.
        assert_eq!(r("/uri-res/N2L?urn:fdc:example.org:2024:img-1"), 404);
        assert_eq!(r("/uri-res/N2Ls?urn-3:hul.test:EMPTY"), 200);
        assert_eq!(r("/uri-res/N2L?urn-3:hul.test:empty"), 404);
        assert_eq!(r("/uri-res/N2Ls?not-a-urn"), 400);
        assert_eq!(r("/uri-res/N2Ls"), 400);
        assert_eq!(r("/uri-res/N2Ls?urn:isbn:0451450523"), 400);
        assert_eq!(r("/uri-res/N2R?urn:fdc:example.org:2024:Img-1"), 501);
        assert_eq!(r("/uri-res/n2ls?urn:fdc:example.org:2024:Img-1"), 501);
        assert_eq!(r("/api/handles/20.500.1/1"), 404);
        assert_eq!(r(""), 404);
    }

    #[test]
    fn the_path_form_of_urn3_redirects() {
        let mut urns = Urns::new();
        urns.insert(
            &Urn::parse("urn-3:HBS.Baker.TC:1923").unwrap(),
            vec!["https://baker.example.edu/1923".into()],
        );
        let r = respond(&urns, "/urn-3:hbs.baker.tc:1923");
        assert_eq!(r.status, 302);
        assert_eq!(
            r.headers,
            [("Location", "https://baker.example.edu/1923".to_string())]
        );
        assert_eq!(respond(&urns, "/urn-3:hbs.baker.tc:1924").status, 404);
        assert_eq!(respond(&urns, "/urn:fdc:example.org:2024:x").status, 404);
    }
}
