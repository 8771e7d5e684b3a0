//! The resolver: global resolution procedure, site choice, referrals and caching.
