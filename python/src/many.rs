//! What `resolve_many` shares between its blocking and its async form: the input, pulled
//! lazily and at most `concurrency` ahead of what the caller has read, and the resolutions
//! running.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use futures::future::BoxFuture;
use handle_resolver::{Attempt, HandleRecord as LibRecord, Query, ResolveError, Resolver};
use pyo3::prelude::*;
use pyo3::types::PyIterator;

use crate::config::identifier_text;
use crate::errors::resolve_error;
use crate::record::{pair, HandleRecord};

/// A resolution's result with every attempt made.
pub(crate) type Outcome = (Result<LibRecord, ResolveError>, Vec<Attempt>);

/// One resolution running: its number in the feed and its outcome.
pub(crate) type Pending = BoxFuture<'static, (u64, Outcome)>;

/// The input side: the caller's iterator, the inputs of the resolutions not yet handed back
/// (the only per-identifier memory held), and how many those are.
pub(crate) struct Feed {
    input: Option<Py<PyIterator>>,
    inputs: HashMap<u64, (Py<PyAny>, String)>,
    next_id: u64,
    concurrency: usize,
    query: Query,
    resolver: Resolver,
    /// Resolutions started and not handed back yet (also counted down when a finished one
    /// is dropped unread).
    pub(crate) outstanding: Arc<AtomicUsize>,
}

impl Feed {
    pub(crate) fn new(
        input: Bound<'_, PyIterator>,
        concurrency: usize,
        query: Query,
        resolver: Resolver,
    ) -> Feed {
        Feed {
            input: Some(input.unbind()),
            inputs: HashMap::new(),
            next_id: 0,
            concurrency: concurrency.max(1),
            query,
            resolver,
            outstanding: Arc::new(AtomicUsize::new(0)),
        }
    }

    /// True when the input is exhausted and every resolution handed back.
    pub(crate) fn finished(&self) -> bool {
        self.input.is_none() && self.outstanding.load(Ordering::Acquire) == 0
    }

    /// Pulls inputs until `concurrency` resolutions are outstanding or the input ends; the
    /// new resolutions go to `start`.
    pub(crate) fn fill(&mut self, py: Python<'_>, mut start: impl FnMut(Pending)) -> PyResult<()> {
        while self.outstanding.load(Ordering::Acquire) < self.concurrency {
            let Some(input) = &self.input else { break };
            let mut it = input.bind(py).clone();
            let item = match it.next() {
                Some(item) => item?,
                None => {
                    self.input = None;
                    break;
                }
            };
            let text = identifier_text(&item)?;
            let id = self.next_id;
            self.next_id += 1;
            let resolver = self.resolver.clone();
            let query = self.query.clone();
            let asked = text.clone();
            start(Box::pin(async move {
                let outcome = resolver.resolve_traced(asked.as_str(), &query).await;
                (id, outcome)
            }));
            self.inputs.insert(id, (item.unbind(), text));
            self.outstanding.fetch_add(1, Ordering::AcqRel);
        }
        Ok(())
    }

    /// `(input, HandleRecord | ResolveError)` for a finished resolution.
    pub(crate) fn hand_back<'py>(
        &mut self,
        py: Python<'py>,
        id: u64,
        outcome: Outcome,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (input, text) = match self.inputs.remove(&id) {
            Some(known) => {
                self.outstanding.fetch_sub(1, Ordering::AcqRel);
                known
            }
            None => (py.None(), String::new()),
        };
        result_pair(py, input, &text, outcome)
    }

    /// Stops: no more input is read; the caller drops the running resolutions.
    pub(crate) fn close(&mut self) {
        self.input = None;
        self.inputs.clear();
        self.outstanding.store(0, Ordering::Release);
    }
}

/// `(input, HandleRecord | ResolveError)`.
pub(crate) fn result_pair<'py>(
    py: Python<'py>,
    input: Py<PyAny>,
    text: &str,
    outcome: Outcome,
) -> PyResult<Bound<'py, PyAny>> {
    let value = match outcome {
        (Ok(record), _) => Bound::new(py, HandleRecord::from_library(record))?.into_any(),
        (Err(e), attempts) => resolve_error(py, &e, text, &attempts)?,
    };
    Ok(pair(py, input, value)?.into_any())
}

impl Feed {
    /// Forgets a finished resolution that was never handed back (its awaitable was
    /// cancelled).
    pub(crate) fn forget(&mut self, id: u64) {
        if self.inputs.remove(&id).is_some() {
            self.outstanding.fetch_sub(1, Ordering::AcqRel);
        }
    }
}
