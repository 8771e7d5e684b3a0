//! What the resolver's stages use and no stage owns: single flight (`flight.rs`), the trace
//! of one resolution's attempts (`trace.rs`), the hedged race (`hedging.rs`), the answer and
//! service caches (`cache.rs`), the wall clock (`clock.rs`) and the one deadline of a call
//! (`deadline.rs`).

pub(crate) mod cache;
pub(crate) mod clock;
pub(crate) mod deadline;
pub(crate) mod flight;
pub(crate) mod hedging;
pub(crate) mod trace;
