//! Resolving the identifiers of a run: streamed from the command line and stdin, at most
//! `--concurrency` in flight, printed as they complete or (`--keep-order`) in input order
//! through a reorder window of at most `--concurrency` identifiers, so memory stays bounded
//! whatever the input's length.
//!
//! The run stops sending at Ctrl-C or SIGTERM: the resolutions in flight are dropped, stdout
//! is flushed, the summary printed, and the status is 130. In completion order every result
//! already finished has been written; with `--keep-order` the output stops before the first
//! unfinished identifier (results that finished after it are dropped with it), so that it is
//! a prefix of the input to resume from. The summary counts the identifiers started and not
//! written (`unfinished`) and names the first of them. Into a file or pipe, stdout is flushed
//! at least once a second, so an interrupted run has everything it printed on disk.

use std::collections::BTreeMap;
use std::pin::pin;
use std::time::Duration;

use futures::stream::{FuturesUnordered, StreamExt};
use handle_resolver::ident::ParseOptions;
use handle_resolver::Identifier;
use handle_resolver::{Query, ResolveError, Resolver};
use tokio::sync::mpsc;

use crate::input::{self, Item};
use crate::out::{self, Out};
use crate::progress::{Progress, Stopped};
use crate::render::{Context, BAD_INPUT, INTERRUPTED, OK};
use crate::report::{self, Finished, Resolution};
use crate::{tsv, urn, Args, Format};

/// Identifiers read ahead of the resolutions (the reader thread waits beyond that).
const READ_AHEAD: usize = 1024;

/// An identifier started and not yet written: where it is in the input.
struct Pending {
    /// The identifier as read.
    input: String,
    /// Its stdin line (`None`: from the command line).
    line: Option<u64>,
}

/// One identifier done, with its place in the input.
struct Done {
    seq: u64,
    input: String,
    finished: Finished,
}

/// Resolves every identifier of `args`; returns the exit status (the worst row met, or 130
/// when interrupted).
pub async fn run(
    resolver: &Resolver,
    args: &Args,
    ctx: &Context,
    o: &mut Out,
) -> std::io::Result<u8> {
    let bulk = args.bulk();
    let window = args.concurrency.max(1) as usize;
    let query = args.query();
    let options = args.parse_options();
    let urns = match urn::resolver(args) {
        Ok(r) => r,
        Err(e) => {
            out::error(format!("--urn-resolver: {e}"));
            return Ok(BAD_INPUT);
        }
    };
    let how = How {
        resolver,
        urns: &urns,
        query: &query,
        options,
        cordra: args.cordra,
    };
    let mut sink = Sink {
        args,
        ctx,
        bulk,
        keep_order: args.keep_order,
        next: 0,
        waiting: BTreeMap::new(),
        progress: Progress::new(bulk && !args.quiet),
        status: OK,
        pending: BTreeMap::new(),
    };
    let (tx, mut rx) = mpsc::channel::<(Item, Option<u64>)>(READ_AHEAD);
    let _reader = input::spawn_reader(
        args.ids.clone(),
        tx,
        sink.progress.visible(),
        sink.progress.total_setter(),
    )?;
    let mut stop = pin!(stop_signal());
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    if args.format() == Format::Tsv {
        o.line(tsv::HEADER)?;
    }
    let mut in_flight = FuturesUnordered::new();
    let mut next_seq = 0u64;
    let mut input_open = true;
    let mut interrupted = false;
    loop {
        if !input_open && in_flight.is_empty() {
            break;
        }
        // In input order, the window spans from the next result to print; otherwise it
        // counts the resolutions running.
        let room = if sink.keep_order {
            next_seq < sink.next + window as u64
        } else {
            in_flight.len() < window
        };
        tokio::select! {
            biased;
            () = &mut stop => {
                interrupted = true;
                break;
            }
            _ = tick.tick() => {
                if !o.is_terminal() {
                    o.flush()?;
                }
            }
            Some(done) = in_flight.next(), if !in_flight.is_empty() => sink.deliver(done, o)?,
            item = rx.recv(), if input_open && room => {
                let seq = next_seq;
                match item {
                    None => input_open = false,
                    Some((Item::Id(input), line)) => {
                        next_seq += 1;
                        sink.pending.insert(seq, Pending { input: input.clone(), line });
                        in_flight.push(resolve_one(&how, seq, input));
                    }
                    Some((Item::Unreadable { text, why }, line)) => {
                        next_seq += 1;
                        sink.pending.insert(seq, Pending { input: text.clone(), line });
                        let finished = Finished::Unreadable { why };
                        sink.deliver(Done { seq, input: text, finished }, o)?;
                    }
                }
            }
        }
    }
    // Stop sending: what is in flight is dropped, and so are the results waiting for their
    // turn behind an unfinished one (--keep-order): the output stays a prefix of the input.
    // A run that was not stopped has written everything.
    drop(in_flight);
    drop(rx);
    o.flush()?;
    let stopped = interrupted.then(|| Stopped {
        unfinished: sink.pending.len() as u64,
        resume: resume_point(&sink.pending, next_seq, sink.keep_order),
    });
    let summary = sink.progress.finish(stopped.as_ref());
    if bulk || interrupted {
        out::note_plain(summary);
    }
    Ok(if interrupted {
        INTERRUPTED
    } else {
        sink.status
    })
}

/// `resume from identifier 21 (stdin line 23: 20.500.1/x)`: the first identifier not written
/// (the first of `pending`, else the next one the run had not read), for the summary of a
/// stopped run.
fn resume_point(pending: &BTreeMap<u64, Pending>, next_seq: u64, keep_order: bool) -> String {
    let (ordinal, at) = match pending.first_key_value() {
        Some((seq, p)) => {
            let mut text: String = p.input.chars().take(80).collect();
            if text.len() < p.input.len() {
                text.push('…');
            }
            let at = match p.line {
                Some(line) => format!(" (stdin line {line}: {text})"),
                None => format!(" ({text})"),
            };
            (seq + 1, at)
        }
        None => (next_seq + 1, String::new()),
    };
    if keep_order {
        format!("resume from identifier {ordinal}{at}")
    } else {
        format!(
            "first unfinished: identifier {ordinal}{at}; results are in completion order \
             (--keep-order prints a prefix of the input to resume from)"
        )
    }
}

/// What each identifier is resolved with.
struct How<'a> {
    resolver: &'a Resolver,
    urns: &'a Resolver,
    query: &'a Query,
    options: ParseOptions,
    cordra: bool,
}

/// Resolves one identifier: a handle through the Handle System, a URN over HTTP (nothing is
/// sent for one that does not parse).
async fn resolve_one(how: &How<'_>, seq: u64, input: String) -> Done {
    let finished = match Identifier::parse_with(input.trim(), how.options) {
        Ok(id) if urn::is_urn(&id, how.cordra) => {
            Finished::Urn(Box::new(how.urns.resolve_urn(input.trim()).await))
        }
        Ok(id) => {
            // What is sent: as written, or a CORDRA id's CORDRA form (--cordra).
            let sent = if how.cordra {
                id.normalized_handle()
            } else {
                id.to_handle().ok()
            };
            let asked = sent.map_or_else(|| input.clone(), |h| h.normalized().to_string());
            let (result, attempts) = how.resolver.resolve_traced(&id, how.query).await;
            Finished::Resolved(Box::new(Resolution {
                asked,
                result,
                attempts,
            }))
        }
        Err(e) => Finished::Resolved(Box::new(Resolution {
            asked: input.clone(),
            result: Err(ResolveError::InvalidIdentifier(e)),
            attempts: Vec::new(),
        })),
    };
    Done {
        seq,
        input,
        finished,
    }
}

/// Where finished identifiers go: in order or not, counted, written.
struct Sink<'a> {
    args: &'a Args,
    ctx: &'a Context,
    bulk: bool,
    keep_order: bool,
    /// The next identifier to print in input order.
    next: u64,
    /// Finished identifiers waiting for their turn (`--keep-order`).
    waiting: BTreeMap<u64, Done>,
    progress: Progress,
    status: u8,
    /// Identifiers started and not yet written, by their place in the input.
    pending: BTreeMap<u64, Pending>,
}

impl Sink<'_> {
    fn deliver(&mut self, done: Done, o: &mut Out) -> std::io::Result<()> {
        if !self.keep_order {
            return self.write(done, o);
        }
        if done.seq != self.next {
            self.waiting.insert(done.seq, done);
            return Ok(());
        }
        self.write(done, o)?;
        self.next += 1;
        while let Some(done) = self.waiting.remove(&self.next) {
            self.write(done, o)?;
            self.next += 1;
        }
        Ok(())
    }

    fn write(&mut self, done: Done, o: &mut Out) -> std::io::Result<()> {
        self.pending.remove(&done.seq);
        let outcome = done.finished.outcome();
        let (args, ctx, bulk) = (self.args, self.ctx, self.bulk);
        self.progress
            .suspend(|| report::write(&done.input, &done.finished, args, ctx, bulk, o))?;
        self.progress.add(outcome);
        self.status = self.status.max(outcome.row().exit);
        Ok(())
    }
}

/// Completes at the first Ctrl-C (SIGINT) or SIGTERM; never when they cannot be caught.
async fn stop_signal() {
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let term = async {
            match signal(SignalKind::terminate()) {
                Ok(mut s) => {
                    s.recv().await;
                }
                Err(_) => std::future::pending::<()>().await,
            }
        };
        tokio::select! {
            () = ctrl_c => {}
            () = term => {}
        }
    }
    #[cfg(not(unix))]
    ctrl_c.await;
}
