//! The one deadline of a call. Every call of the resolver (a resolution, a URN, an
//! administration request, a root refresh, a raw query, the mirror check) runs its work
//! through [`within`], which ends it at the resolver's timeout with the error the caller
//! names; dropping the work there cancels every request it has in flight (work shared with
//! other callers goes on for them).

use std::future::Future;
use std::time::Duration;

/// `work`, or `timed_out(after)` when it has not finished `after` from now.
pub(crate) async fn within<R, E>(
    after: Duration,
    work: impl Future<Output = Result<R, E>>,
    timed_out: impl FnOnce(Duration) -> E,
) -> Result<R, E> {
    match tokio::time::timeout(after, work).await {
        Ok(outcome) => outcome,
        Err(_) => Err(timed_out(after)),
    }
}
