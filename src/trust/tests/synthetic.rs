//! Chains signed here with test keys.
