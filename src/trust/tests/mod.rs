//! Tests with the reference client's 2019 root file and with chains signed here.

mod real_file;
mod synthetic;

use std::collections::BTreeMap;

use crate::root::read_bootstrap_handles;
use crate::wire::{HandleValue, Limits};

/// The reference client's `bootstrap_handles` (Handle.Net 9.2.0).
pub(super) fn reference_records() -> BTreeMap<String, Vec<HandleValue>> {
    let file = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/reference/root-files/bootstrap_handles"
    ))
    .unwrap();
    read_bootstrap_handles(&file, &Limits::default())
        .unwrap()
        .handles
}

/// The file's `lastUpdate` (2019-07-26T18:15:40Z), in seconds: inside every validity
/// period its signatures and certificates state (the latest `nbf` is 2019-07-17, the
/// earliest `exp` 2019-11-10).
pub(super) const LAST_UPDATE: u64 = 1_564_164_940;
