//! [`Query`]: what one resolution asks for (filters and flags), and what it becomes once the
//! resolver's own settings fill in what the query leaves unset ([`Asked`]).

use super::settings::Settings;

/// What to ask for: the filters and flags of one resolution, built step by step. A flag the
/// query does not set is the resolver's (its [`ResolverBuilder`](super::ResolverBuilder)
/// setting), so `Query::new()` asks what [`Resolver::resolve`](super::Resolver::resolve)
/// asks.
///
/// Certification is a policy of the resolver: with
/// [`ResolverBuilder::certify`](super::ResolverBuilder::certify) on, every answer is
/// certified, whatever the query says; a query can ask for certification on a resolver that
/// does not certify by default, never turn it off on one that does.
///
/// ```
/// use handle_resolver::Query;
///
/// let q = Query::new().types(["URL", "EMAIL"]).indexes([1, 2]).certify(true);
/// assert_eq!(q.type_filter(), ["URL", "EMAIL"]);
/// assert_eq!(q.index_filter(), [1, 2]);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Query {
    types: Vec<String>,
    indexes: Vec<u32>,
    certify: Option<bool>,
    authoritative: Option<bool>,
    public_only: Option<bool>,
    follow_aliases: Option<bool>,
}

impl Query {
    /// All values, with the resolver's flags.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds type names to return (none: all types). Matched by the server, ASCII
    /// case-insensitively; a trailing dot selects a hierarchy (`HS_SITE.`). Types and
    /// indexes are OR'ed by servers.
    pub fn types<I, S>(mut self, types: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.types.extend(types.into_iter().map(Into::into));
        self
    }

    /// Adds value indexes to return (none: all indexes).
    pub fn indexes(mut self, indexes: impl IntoIterator<Item = u32>) -> Self {
        self.indexes.extend(indexes);
        self
    }

    /// Asks for signed answers (CT) and verifies them with the server key of its HS_SITE.
    /// `false` cannot turn off a resolver that certifies every answer.
    pub fn certify(mut self, on: bool) -> Self {
        self.certify = Some(on);
        self
    }

    /// Asks primary sites only and bypasses the answer cache (AT).
    pub fn authoritative(mut self, on: bool) -> Self {
        self.authoritative = Some(on);
        self
    }

    /// Asks for public values only (PO; the resolver's default is on). Without it, a server
    /// answers 402 (authentication needed) for a handle with non-public values.
    pub fn public_only(mut self, on: bool) -> Self {
        self.public_only = Some(on);
        self
    }

    /// Follows HS_ALIAS values to the handle they name (at most 20 hops, as the handle.net
    /// proxy; loops detected), whatever the resolver's
    /// [`follow_aliases`](super::ResolverBuilder::follow_aliases) setting.
    pub fn follow_aliases(mut self, on: bool) -> Self {
        self.follow_aliases = Some(on);
        self
    }

    /// Whether HS_ALIAS values are followed: the query's choice, else the resolver's.
    pub(crate) fn follows_aliases(&self, settings: &Settings) -> bool {
        self.follow_aliases.unwrap_or(settings.follow_aliases)
    }

    /// The type filter (empty: all types).
    pub fn type_filter(&self) -> &[String] {
        &self.types
    }

    /// The index filter (empty: all indexes).
    pub fn index_filter(&self) -> &[u32] {
        &self.indexes
    }

    /// The query with the resolver's settings filled in.
    pub(crate) fn asked(&self, settings: &Settings) -> Asked {
        Asked {
            types: self.types.clone(),
            indexes: self.indexes.clone(),
            certify: settings.certify || self.certify == Some(true),
            authoritative: self.authoritative.unwrap_or(settings.authoritative),
            public_only: self.public_only.unwrap_or(settings.public_only),
        }
    }
}

/// A [`Query`] with every flag decided: what a resolution asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Asked {
    pub(crate) types: Vec<String>,
    pub(crate) indexes: Vec<u32>,
    pub(crate) certify: bool,
    pub(crate) authoritative: bool,
    pub(crate) public_only: bool,
}

impl Asked {
    /// True when the types asked for include HS_ALIAS, or every type is asked for.
    pub(crate) fn includes_aliases(&self) -> bool {
        self.types.is_empty()
            || self
                .types
                .iter()
                .any(|t| t.eq_ignore_ascii_case("HS_ALIAS"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unset_flags_are_the_resolvers_and_certify_cannot_be_turned_off() {
        let certifying = Settings {
            certify: true,
            authoritative: true,
            ..Settings::default()
        };
        for q in [
            Query::new(),
            Query::new().types(["URL"]),
            Query::new().certify(false),
            Query::new().certify(true).indexes([1]),
        ] {
            assert!(q.asked(&certifying).certify, "{q:?}");
        }
        let plain = Settings::default();
        assert!(!Query::new().asked(&plain).certify);
        assert!(Query::new().certify(true).asked(&plain).certify);
        // Other flags: the query's when set, else the resolver's.
        assert!(Query::new().asked(&certifying).authoritative);
        assert!(
            !Query::new()
                .authoritative(false)
                .asked(&certifying)
                .authoritative
        );
        assert!(Query::new().asked(&plain).public_only);
        assert!(!Query::new().public_only(false).asked(&plain).public_only);
    }

    #[test]
    fn filters_accumulate() {
        let q = Query::new()
            .types(["URL"])
            .types(["EMAIL"])
            .indexes([3])
            .indexes([1]);
        assert_eq!(q.type_filter(), ["URL", "EMAIL"]);
        assert_eq!(q.index_filter(), [3, 1]);
        assert!(!q.asked(&Settings::default()).includes_aliases());
        assert!(Query::new().asked(&Settings::default()).includes_aliases());
    }
}
