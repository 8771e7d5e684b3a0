//! Output plumbing: one locked, buffered stdout for the whole run, and `error:`/`note:` lines
//! on stderr.
//!
//! Stdout is flushed after each identifier only when it is a terminal (so a person sees each
//! answer as it arrives); into a pipe or file it is flushed when the buffer fills, at least
//! once a second during a bulk run ([`Out::flush`] from its timer) and at the end, so bulk
//! output costs no syscall per line and an interrupted run loses nothing it printed. A closed pipe (`resolve ... | head`) is an
//! `io::ErrorKind::BrokenPipe` error that `main` turns into a quiet exit.

use std::fmt::Display;
use std::io::{BufWriter, IsTerminal, StdoutLock, Write};

/// Buffered, locked stdout.
pub struct Out {
    w: BufWriter<StdoutLock<'static>>,
    flush_each: bool,
}

impl Out {
    /// Locks stdout for the rest of the run.
    pub fn new() -> Self {
        let stdout = std::io::stdout();
        let flush_each = stdout.is_terminal();
        Out {
            w: BufWriter::with_capacity(64 * 1024, stdout.lock()),
            flush_each,
        }
    }

    /// Writes one line.
    pub fn line(&mut self, text: impl Display) -> std::io::Result<()> {
        writeln!(self.w, "{text}")
    }

    /// Ends one identifier's output (flushes when stdout is a terminal).
    pub fn done(&mut self) -> std::io::Result<()> {
        if self.flush_each {
            self.w.flush()
        } else {
            Ok(())
        }
    }

    /// True when stdout is a terminal (flushed after each identifier).
    pub fn is_terminal(&self) -> bool {
        self.flush_each
    }

    /// Flushes what is buffered (the bulk run's once-a-second timer).
    pub fn flush(&mut self) -> std::io::Result<()> {
        self.w.flush()
    }

    /// Flushes everything.
    pub fn finish(&mut self) -> std::io::Result<()> {
        self.w.flush()
    }
}

/// Writes `error: <message>` on stderr (never panics, even when stderr is closed).
pub fn error(message: impl Display) {
    let _ = std::io::stderr()
        .lock()
        .write_all(format!("error: {message}\n").as_bytes());
}

/// Writes `note: <message>` on stderr.
pub fn note(message: impl Display) {
    let _ = std::io::stderr()
        .lock()
        .write_all(format!("note: {message}\n").as_bytes());
}

/// Writes `message` on stderr as it is (the summary line of a bulk run).
pub fn note_plain(message: impl Display) {
    let _ = std::io::stderr()
        .lock()
        .write_all(format!("{message}\n").as_bytes());
}
