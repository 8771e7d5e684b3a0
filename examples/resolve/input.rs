//! Bulk input, streamed: the identifiers of the command line in order, each `-` replaced by
//! the lines of stdin as they arrive (never all in memory). A UTF-8 byte order mark at the
//! start of stdin is dropped; blank lines and `#` comment lines are skipped; a line that is
//! not UTF-8, or longer than [`MAX_LINE`], becomes an [`Item::Unreadable`] of its own, so
//! that it is reported in line with the others.

use std::io::BufRead;

use tokio::sync::mpsc;

/// The longest stdin line read as an identifier (longer ones are reported, not kept).
pub const MAX_LINE: usize = 64 * 1024;

/// One identifier to resolve, or a stdin line that cannot be one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    /// An identifier as given (surrounding blanks trimmed).
    Id(String),
    /// A stdin line that is not an identifier's text.
    Unreadable {
        /// The line, lossily decoded and cut at 200 characters.
        text: String,
        /// Why, with the line number: `stdin line 7: not UTF-8 (invalid byte at 3)`.
        why: String,
    },
}

/// The items of a stream of lines.
pub struct Lines<R> {
    reader: R,
    line: u64,
    buf: Vec<u8>,
}

impl<R: BufRead> Lines<R> {
    /// Reads `reader` line by line.
    pub fn new(reader: R) -> Self {
        Lines {
            reader,
            line: 0,
            buf: Vec::new(),
        }
    }

    /// The number of the line the last item came from (1-based; 0 before the first).
    pub fn line(&self) -> u64 {
        self.line
    }

    /// The next item (blank and comment lines skipped); `None` at the end of the input.
    pub fn next_item(&mut self) -> std::io::Result<Option<Item>> {
        loop {
            self.buf.clear();
            let Some(whole) = read_line_capped(&mut self.reader, &mut self.buf, MAX_LINE)? else {
                return Ok(None);
            };
            self.line += 1;
            let mut bytes = self.buf.as_slice();
            if self.line == 1 {
                bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
            }
            let text = |b: &[u8]| {
                String::from_utf8_lossy(b)
                    .trim()
                    .chars()
                    .take(200)
                    .collect::<String>()
            };
            if !whole {
                return Ok(Some(Item::Unreadable {
                    text: text(bytes),
                    why: format!("stdin line {}: longer than {MAX_LINE} bytes", self.line),
                }));
            }
            match std::str::from_utf8(bytes) {
                Ok(line) => {
                    let line = line.trim();
                    if line.is_empty() || line.starts_with('#') {
                        continue;
                    }
                    return Ok(Some(Item::Id(line.to_string())));
                }
                Err(e) => {
                    return Ok(Some(Item::Unreadable {
                        text: text(bytes),
                        why: format!(
                            "stdin line {}: not UTF-8 (invalid byte at {})",
                            self.line,
                            e.valid_up_to()
                        ),
                    }))
                }
            }
        }
    }
}

/// Appends one line (without its `\n`) to `buf`, keeping at most `cap` bytes of it; the
/// rest of a longer line is read and dropped. `None` at the end of the input, else whether
/// the line was kept whole.
fn read_line_capped<R: BufRead>(
    reader: &mut R,
    buf: &mut Vec<u8>,
    cap: usize,
) -> std::io::Result<Option<bool>> {
    let mut read_any = false;
    let mut whole = true;
    loop {
        let available = match reader.fill_buf() {
            Ok(a) => a,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            return Ok(read_any.then_some(whole));
        }
        read_any = true;
        let (chunk, used, end) = match available.iter().position(|&b| b == b'\n') {
            Some(i) => (&available[..i], i + 1, true),
            None => (available, available.len(), false),
        };
        let room = cap.saturating_sub(buf.len());
        if chunk.len() > room {
            whole = false;
        }
        buf.extend_from_slice(&chunk[..chunk.len().min(room)]);
        reader.consume(used);
        if end {
            return Ok(Some(whole));
        }
    }
}

/// How many items stdin holds, when it is a regular file (read through a second handle,
/// then rewound); `None` for a pipe or a terminal, whose length is unknown until its end.
#[cfg(unix)]
pub fn count_stdin() -> Option<u64> {
    use std::io::{Seek, SeekFrom};
    use std::os::fd::AsFd;
    let fd = std::io::stdin().as_fd().try_clone_to_owned().ok()?;
    let mut file = std::fs::File::from(fd);
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let start = file.stream_position().ok()?;
    let mut lines = Lines::new(std::io::BufReader::with_capacity(64 * 1024, &mut file));
    let mut n = 0u64;
    while let Ok(Some(_)) = lines.next_item() {
        n += 1;
    }
    drop(lines);
    file.seek(SeekFrom::Start(start)).ok()?;
    Some(n)
}

/// Not known off Unix.
#[cfg(not(unix))]
pub fn count_stdin() -> Option<u64> {
    None
}

/// The items of the command line's identifiers in order, each `-` read from stdin (a second
/// `-` finds stdin at its end). A read error on stdin ends the items with an
/// [`Item::Unreadable`] that says so.
pub struct Items {
    ids: std::vec::IntoIter<String>,
    stdin: Option<Lines<std::io::StdinLock<'static>>>,
    stdin_read: bool,
}

impl Items {
    /// The items of `ids`.
    pub fn new(ids: Vec<String>) -> Self {
        Items {
            ids: ids.into_iter(),
            stdin: None,
            stdin_read: false,
        }
    }
}

impl Items {
    /// The next item, with the stdin line it came from (`None` for a command-line
    /// identifier).
    pub fn next_with_line(&mut self) -> Option<(Item, Option<u64>)> {
        loop {
            if let Some(lines) = &mut self.stdin {
                match lines.next_item() {
                    Ok(Some(item)) => return Some((item, Some(lines.line()))),
                    Ok(None) => self.stdin = None,
                    Err(e) => {
                        self.stdin = None;
                        self.ids = Vec::new().into_iter();
                        let item = Item::Unreadable {
                            text: "-".into(),
                            why: format!("cannot read stdin: {e}"),
                        };
                        return Some((item, None));
                    }
                }
            }
            let id = self.ids.next()?;
            if id != "-" {
                return Some((Item::Id(id), None));
            }
            if !self.stdin_read {
                self.stdin_read = true;
                self.stdin = Some(Lines::new(std::io::stdin().lock()));
            }
        }
    }
}

impl Iterator for Items {
    type Item = Item;

    fn next(&mut self) -> Option<Item> {
        self.next_with_line().map(|(item, _)| item)
    }
}

/// Starts the thread that feeds `tx` with the [`Items`] of `ids`, each with its stdin line
/// ([`Items::next_with_line`]); the channel's bound holds the reader back while the
/// resolutions catch up. When `count` is set and the total is known up front (no `-`, or
/// stdin is a regular file), `on_total` gets it first.
pub fn spawn_reader(
    ids: Vec<String>,
    tx: mpsc::Sender<(Item, Option<u64>)>,
    count: bool,
    on_total: impl FnOnce(u64) + Send + 'static,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    std::thread::Builder::new()
        .name("stdin".into())
        .spawn(move || {
            if count {
                let args = ids.iter().filter(|id| *id != "-").count() as u64;
                let total = if ids.iter().any(|id| id == "-") {
                    count_stdin().map(|n| n + args)
                } else {
                    Some(args)
                };
                if let Some(total) = total {
                    on_total(total);
                }
            }
            let mut items = Items::new(ids);
            while let Some(read) = items.next_with_line() {
                if tx.blocking_send(read).is_err() {
                    return;
                }
            }
        })
}
