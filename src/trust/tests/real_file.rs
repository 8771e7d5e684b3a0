//! The 2019 root file: every record verifies; any one-byte change fails exactly the record
//! that holds it (and the records whose chain passes through it, when it is a certificate).

use super::{reference_records, LAST_UPDATE};
use crate::trust::*;

#[test]
fn every_record_of_the_2019_file_verifies() {
    let records = reference_records();
    let v = verify_records(&records, &TrustRoot::global(), LAST_UPDATE);
    for (handle, r) in v.iter() {
        if let Err(e) = r {
            panic!("{handle}: {e}");
        }
    }
    assert!(v.all_verified());
    assert_eq!(v.len(), 11);
}
