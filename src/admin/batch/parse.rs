//! The batch file parser: text in, [`Batch`] out, no I/O (files named by `FILE` values
//! come from the caller's [`FileSource`]).
//!
//! It reads the file as the reference's `GenericBatch` does (FORMAT.md beside the samples):
//! lines end at LF, CR or CRLF; the main loop counts every line it reads (`n`), lines a
//! command consumes (secrets, value lines, NA lines, session lines, a block's closing blank
//! line) are not counted; a bad value line abandons its block and leaves the rest of the block
//! to the main loop.

use bytes::Bytes;

use crate::ident::MAX_HANDLE_LENGTH;
use crate::wire::{AdminRecord, HandleValue, Permissions, SiteInfo, Ttl, ValueReference};

use super::{
    AuthKind, Batch, BatchError, Command, Entry, ErrorKind, HomeTarget, Operation, Protocol,
    SessionOptions,
};

/// Where the data of `FILE` values comes from: the bytes of the file at the path as written
/// in the batch file, or `None` when it cannot be read.
pub trait FileSource {
    /// The bytes of `path`, or `None`.
    fn read(&mut self, path: &str) -> Option<Vec<u8>>;
}

impl<F: FnMut(&str) -> Option<Vec<u8>>> FileSource for F {
    fn read(&mut self, path: &str) -> Option<Vec<u8>> {
        self(path)
    }
}

/// Java's `String.trim()`: every character up to U+0020 goes at both ends.
pub(crate) fn jtrim(s: &str) -> &str {
    s.trim_matches(|c: char| c <= ' ')
}

/// Java's `Integer.parseInt` (optional sign, ASCII digits, 32 bits), or the text of its
/// `NumberFormatException`.
pub(crate) fn parse_int(s: &str) -> Result<i32, String> {
    let bad = || format!("For input string: \"{s}\"");
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    s.parse::<i32>().map_err(|_| bad())
}

/// Splits the input into lines as `BufferedReader.readLine` does.
struct Lines<'a> {
    rest: &'a str,
    /// Physical number of the next line (1-based).
    next: u32,
}

impl<'a> Lines<'a> {
    fn new(text: &'a str) -> Self {
        Self {
            rest: text,
            next: 1,
        }
    }

    /// The next line and its physical number, or `None` at the end.
    fn next_line(&mut self) -> Option<(u32, &'a str)> {
        if self.rest.is_empty() {
            return None;
        }
        let end = self.rest.find(['\n', '\r']).unwrap_or(self.rest.len());
        let line = self.rest.get(..end).unwrap_or("");
        let after = self.rest.get(end..).unwrap_or("");
        self.rest = if let Some(r) = after.strip_prefix("\r\n") {
            r
        } else {
            after.get(1..).unwrap_or("")
        };
        let number = self.next;
        self.next = self.next.saturating_add(1);
        Some((number, line))
    }

    /// The next line without taking it.
    fn peek(&self) -> Option<&'a str> {
        let mut copy = Lines {
            rest: self.rest,
            next: self.next,
        };
        copy.next_line().map(|(_, l)| l)
    }
}

/// Parses a whole batch file. Never fails: what the reference would log as `INVALID` is an
/// [`Entry`] holding a [`BatchError`] naming the line. `text` is the file decoded as the
/// reference decodes it (`String::from_utf8_lossy`: bytes that are not UTF-8 become U+FFFD);
/// the first line they leave no command says so ([`ErrorKind::NotUtf8`]).
///
/// ```
/// use handle_resolver::admin::batch::{parse, Command};
/// let text = "AUTHENTICATE SECKEY:300:20.500.1/ADMIN\ns3cret\n\nDELETE 20.500.1/old\n";
/// let batch = parse(text, &mut |_: &str| None);
/// assert_eq!(batch.lines, 3);
/// assert!(matches!(batch.entries[1].command, Ok(Command::Delete { .. })));
/// assert_eq!(batch.entries[1].n, 3);
/// ```
pub fn parse(text: &str, files: &mut dyn FileSource) -> Batch {
    let mut lines = Lines::new(text);
    let mut entries = Vec::new();
    let mut n: u32 = 0;
    // Whether a line that is no command was said to be not UTF-8 (once per file).
    let mut said_not_utf8 = false;
    while let Some((line_no, line)) = lines.next_line() {
        n = n.saturating_add(1);
        if line.is_empty() {
            continue;
        }
        let (command, rest) = match line.find(' ') {
            Some(i) if i >= 1 => (
                jtrim(line.get(..i).unwrap_or("")).to_uppercase(),
                jtrim(line.get(i + 1..).unwrap_or("")),
            ),
            _ => (jtrim(line).to_uppercase(), ""),
        };
        let mut push = |command: Result<Command, BatchError>| {
            entries.push(Entry {
                line: line_no,
                n,
                command,
            })
        };
        let err = |kind: ErrorKind| BatchError {
            line: line_no,
            kind,
        };
        match command.as_str() {
            "AUTHENTICATE" => push(authenticate(rest, &mut lines).map_err(err)),
            "CREATE" | "ADD" | "MODIFY" => {
                let op = match command.as_str() {
                    "CREATE" => Operation::Create,
                    "ADD" => Operation::Add,
                    _ => Operation::Modify,
                };
                if rest.is_empty() {
                    push(Err(err(ErrorKind::HandleName)));
                    continue;
                }
                match values(&mut lines, files) {
                    Ok(values) if values.is_empty() => push(Err(err(ErrorKind::NoValues {
                        handle: rest.to_string(),
                    }))),
                    Ok(values) => push(Ok(Command::Values {
                        op,
                        handle: rest.to_string(),
                        values,
                    })),
                    Err(e) => {
                        push(Err(e));
                        push(Err(err(ErrorKind::NoValues {
                            handle: rest.to_string(),
                        })));
                    }
                }
            }
            "DELETE" => push(if rest.is_empty() {
                Err(err(ErrorKind::HandleName))
            } else {
                Ok(Command::Delete {
                    handle: rest.to_string(),
                })
            }),
            "REMOVE" => push(remove(rest).map_err(err)),
            "HOME" | "UNHOME" => {
                let home = command == "HOME";
                match home_target(rest) {
                    Ok(target) => {
                        let prefixes = na_lines(&mut lines);
                        push(Ok(Command::Home {
                            home,
                            target,
                            prefixes,
                        }));
                    }
                    Err(kind) => push(Err(err(kind))),
                }
            }
            "SESSIONSETUP" => {
                let (options, errors) = session_setup(&mut lines, line_no);
                for e in errors {
                    push(Err(e));
                }
                if let Some(options) = options {
                    push(Ok(Command::SessionSetup(options)));
                }
            }
            _ => {
                // Bytes that were not UTF-8 come as U+FFFD (the caller decodes as the
                // reference does): say so once, on the first line they make invalid.
                let kind = match line.find(char::REPLACEMENT_CHARACTER) {
                    Some(byte) if !said_not_utf8 => {
                        said_not_utf8 = true;
                        ErrorKind::NotUtf8 {
                            line: line_no,
                            byte,
                        }
                    }
                    _ => ErrorKind::CommandLine,
                };
                push(Err(err(kind)))
            }
        }
    }
    Batch { entries, lines: n }
}

/// `AUTHENTICATE KIND:INDEX:HANDLE` and its secret / key line.
fn authenticate(rest: &str, lines: &mut Lines<'_>) -> Result<Command, ErrorKind> {
    let mut tokens = rest.split(':').filter(|t| !t.is_empty());
    let no_such = || ErrorKind::Authentication("java.util.NoSuchElementException".into());
    let kind = tokens.next().ok_or_else(no_such)?.to_uppercase();
    let index = tokens.next().ok_or_else(no_such)?;
    let index = parse_int(jtrim(index))
        .map_err(|m| ErrorKind::Authentication(format!("java.lang.NumberFormatException: {m}")))?;
    let handle = jtrim(tokens.next().ok_or_else(no_such)?).to_string();
    let kind = match kind.as_str() {
        "SECKEY" => AuthKind::SecretKey,
        "PUBKEY" => AuthKind::PrivateKey,
        _ => return Err(ErrorKind::AuthenticationLines),
    };
    // The secret / key line is taken whatever it is.
    let secret = lines.next_line().map(|(_, l)| jtrim(l)).unwrap_or("");
    let index = index as u32;
    match kind {
        AuthKind::SecretKey => {
            if secret.is_empty() {
                return Err(ErrorKind::Authentication(
                    "java.lang.Exception: Secret key without password".into(),
                ));
            }
            Ok(Command::Authenticate {
                index,
                handle,
                key: super::AuthKey::Secret(Bytes::copy_from_slice(secret.as_bytes())),
            })
        }
        AuthKind::PrivateKey => {
            let (path, passphrase) = match secret.find('|') {
                Some(i) if i > 0 => (
                    jtrim(secret.get(..i).unwrap_or("")),
                    Some(jtrim(secret.get(i + 1..).unwrap_or("")).to_string()),
                ),
                _ => (secret, None),
            };
            if path.is_empty() {
                return Err(ErrorKind::Authentication(
                    "java.lang.NullPointerException".into(),
                ));
            }
            Ok(Command::Authenticate {
                index,
                handle,
                key: super::AuthKey::KeyFile {
                    path: path.to_string(),
                    passphrase,
                },
            })
        }
    }
}

/// The value lines of a block, up to an empty line or the end; the first bad line ends the
/// block (the lines after it stay for the main loop).
fn values(
    lines: &mut Lines<'_>,
    files: &mut dyn FileSource,
) -> Result<Vec<HandleValue>, BatchError> {
    let mut out = Vec::new();
    while let Some(peeked) = lines.peek() {
        if peeked.is_empty() {
            lines.next_line();
            break;
        }
        let Some((line_no, line)) = lines.next_line() else {
            break;
        };
        let v = value(line, files).map_err(|kind| BatchError {
            line: line_no,
            kind,
        })?;
        out.push(v);
    }
    Ok(out)
}

/// Space-separated tokens (runs collapse) with the byte offset just after each.
fn tokens(line: &str) -> impl Iterator<Item = (&str, usize)> {
    let mut pos = 0;
    std::iter::from_fn(move || {
        let rest = line.get(pos..)?;
        let start = pos + (rest.len() - rest.trim_start_matches(' ').len());
        let tail = line.get(start..)?;
        if tail.is_empty() {
            return None;
        }
        let len = tail.find(' ').unwrap_or(tail.len());
        pos = start + len;
        Some((tail.get(..len).unwrap_or(""), pos))
    })
}

/// One value line: `index type ttl perms kind [data]`.
fn value(line: &str, files: &mut dyn FileSource) -> Result<HandleValue, ErrorKind> {
    let mut t = tokens(line);
    let (index, _) = t.next().ok_or(ErrorKind::ValueIndex)?;
    let index = parse_int(index).map_err(|_| ErrorKind::ValueIndex)?;
    let (type_name, _) = t.next().ok_or(ErrorKind::MissingField)?;
    let (ttl, _) = t.next().ok_or(ErrorKind::MissingField)?;
    let ttl = parse_int(ttl).map_err(|_| ErrorKind::ValueTtl)?;
    let (perms, _) = t.next().ok_or(ErrorKind::MissingField)?;
    if perms.chars().count() < 4 {
        return Err(ErrorKind::ValuePermissions);
    }
    let flag = |i: usize| perms.chars().nth(i) == Some('1');
    let mut bits = 0u8;
    for (i, bit) in [
        Permissions::ADMIN_READ,
        Permissions::ADMIN_WRITE,
        Permissions::PUBLIC_READ,
        Permissions::PUBLIC_WRITE,
    ]
    .into_iter()
    .enumerate()
    {
        if flag(i) {
            bits |= bit;
        }
    }
    let (kind, after) = t.next().ok_or(ErrorKind::MissingField)?;
    let kind = kind.to_uppercase();
    if !matches!(kind.as_str(), "UTF8" | "ADMIN" | "FILE" | "LIST") {
        return Err(ErrorKind::DataKind(kind));
    }
    // The rest of the line; nothing at all after the kind is a missing field.
    let raw = line.get(after..).unwrap_or("");
    if raw.is_empty() {
        return Err(ErrorKind::MissingField);
    }
    let rest = jtrim(raw);
    let data: Bytes = match kind.as_str() {
        "UTF8" => Bytes::copy_from_slice(rest.as_bytes()),
        "ADMIN" => admin_data(rest)?,
        "FILE" => {
            let bytes = files
                .read(rest)
                .ok_or_else(|| ErrorKind::File(rest.to_string()))?;
            if type_name == "HS_SITE" && !crate::wire::looks_like_binary(&bytes) {
                site_from_text(&bytes).ok_or_else(|| ErrorKind::File(rest.to_string()))?
            } else {
                Bytes::from(bytes)
            }
        }
        _ => list_data(rest)?,
    };
    let mut v = HandleValue::new(index as u32, type_name.to_string(), data);
    v.ttl = Ttl::Relative(ttl);
    v.permissions = Permissions(bits);
    Ok(v)
}

/// `idx:12 permission characters:handle`.
fn admin_data(rest: &str) -> Result<Bytes, ErrorKind> {
    let (idx, after) = rest.split_once(':').ok_or(ErrorKind::AdminIndex)?;
    let idx = parse_int(jtrim(idx)).map_err(|_| ErrorKind::AdminIndex)?;
    let (perms, handle) = after.split_once(':').ok_or(ErrorKind::AdminPermissions)?;
    let perms = jtrim(perms);
    if perms.chars().count() != 12 {
        return Err(ErrorKind::AdminPermissions);
    }
    // The i-th character is bit i of the permissions, the reference's `AdminRecord.perms[i]`
    // (add_handle 0x0001 … add_value 0x0040, modify_admin 0x0080, remove_admin 0x0100,
    // add_admin 0x0200, read_value 0x0400, list_handles 0x0800): sample 01's
    // `000000010000` left 0x0080 in the record, `110011111111` 0x0FF3.
    let mut bits = 0u16;
    for (i, c) in perms.chars().enumerate() {
        if c == '1' {
            bits |= 1 << i;
        }
    }
    let handle = jtrim(handle);
    if handle.len() > MAX_HANDLE_LENGTH {
        // Longer than a handle can be: the wire decoder would refuse the value's data.
        return Err(ErrorKind::AdminHandle);
    }
    AdminRecord::new(bits, handle.as_bytes().to_vec(), idx as u32)
        .encode()
        .map_err(|_| ErrorKind::AdminHandle)
}

/// `idx:handle;idx:handle;...`.
fn list_data(rest: &str) -> Result<Bytes, ErrorKind> {
    let mut refs = Vec::new();
    for element in rest.split(';') {
        if element.is_empty() {
            continue;
        }
        let (idx, handle) = element.split_once(':').ok_or(ErrorKind::AdminIndex)?;
        let idx = parse_int(jtrim(idx)).map_err(|_| ErrorKind::AdminIndex)?;
        let handle = jtrim(handle);
        if handle.is_empty() || handle.len() > MAX_HANDLE_LENGTH {
            return Err(ErrorKind::ListHandle);
        }
        refs.push(ValueReference {
            handle: Bytes::copy_from_slice(handle.as_bytes()),
            index: idx as u32,
        });
    }
    crate::wire::encode_vlist(&refs).map_err(|_| ErrorKind::ListHandle)
}

/// A siteinfo JSON document as the binary HS_SITE encoding.
fn site_from_text(bytes: &[u8]) -> Option<Bytes> {
    let json: serde_json::Value = serde_json::from_slice(bytes).ok()?;
    let site: SiteInfo = crate::wire::json::site_from_json(&json, &Default::default()).ok()?;
    site.encode().ok()
}

/// `REMOVE i,j,k:handle`.
fn remove(rest: &str) -> Result<Command, ErrorKind> {
    if rest.is_empty() {
        return Err(ErrorKind::RemoveLine);
    }
    let colon = match rest.find(':') {
        Some(i) if i > 0 => i,
        _ => return Err(ErrorKind::Indexes),
    };
    let mut indexes = Vec::new();
    for part in rest.get(..colon).unwrap_or("").split(',') {
        let part = jtrim(part);
        if part.is_empty() {
            continue;
        }
        indexes.push(parse_int(part).map_err(|_| ErrorKind::Indexes)? as u32);
    }
    let handle = jtrim(rest.get(colon + 1..).unwrap_or(""));
    if handle.is_empty() {
        return Err(ErrorKind::RemoveHandle);
    }
    Ok(Command::Remove {
        handle: handle.to_string(),
        indexes,
    })
}

/// `ADDRESS:PORT:PROTOCOL` of HOME / UNHOME: a numeric address only.
fn home_target(rest: &str) -> Result<HomeTarget, ErrorKind> {
    if rest.is_empty() {
        return Err(ErrorKind::HomeLine);
    }
    let bad = || ErrorKind::HomeAddress;
    let (host, tail) = if let Some(r) = rest.strip_prefix('[') {
        let close = r.rfind("]:").ok_or_else(bad)?;
        let host = r.get(..close).ok_or_else(bad)?;
        if host.is_empty() {
            return Err(bad());
        }
        (host, r.get(close + 2..).ok_or_else(bad)?)
    } else {
        let (host, tail) = rest.split_once(':').ok_or_else(bad)?;
        if host.is_empty() || !host.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
            return Err(bad());
        }
        (host, tail)
    };
    let (port, proto) = tail.split_once(':').ok_or_else(bad)?;
    let word = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_alphanumeric() || c == '_');
    if port.is_empty() || !port.bytes().all(|b| b.is_ascii_digit()) || !word(proto) {
        return Err(bad());
    }
    let protocol = match proto.to_uppercase().as_str() {
        "TCP" => Protocol::Tcp,
        "UDP" => Protocol::Udp,
        "HTTP" => Protocol::Http,
        _ => return Err(ErrorKind::Protocol),
    };
    let ip: std::net::IpAddr = host.parse().map_err(|_| bad())?;
    let port: u16 = port.parse().map_err(|_| bad())?;
    Ok(HomeTarget {
        addr: std::net::SocketAddr::new(ip, port),
        protocol,
    })
}

/// The NA lines after HOME / UNHOME, up to an empty line or the end: each with its line
/// number, trimmed, or the error of one that is no prefix handle.
fn na_lines(lines: &mut Lines<'_>) -> Vec<(u32, Result<String, ErrorKind>)> {
    let mut out = Vec::new();
    while let Some((line_no, line)) = lines.next_line() {
        let na = jtrim(line);
        if na.is_empty() {
            break;
        }
        let ok = na.get(..5).is_some_and(|p| p.eq_ignore_ascii_case("0.NA/"));
        out.push((
            line_no,
            if ok {
                Ok(na.to_string())
            } else {
                Err(ErrorKind::NaHandle(na.to_string()))
            },
        ));
    }
    out
}

/// The lines of a SESSIONSETUP block: the options (`None` when the block changes nothing)
/// and the errors to log, in order.
fn session_setup(lines: &mut Lines<'_>, line_no: u32) -> (Option<SessionOptions>, Vec<BatchError>) {
    let mut errors = Vec::new();
    let mut o = SessionOptions::default();
    let mut use_session: Option<i32> = None;
    let err = |line, kind| BatchError { line, kind };
    while let Some(peeked) = lines.peek() {
        if jtrim(peeked).is_empty() {
            lines.next_line();
            break;
        }
        let Some((at, raw)) = lines.next_line() else {
            break;
        };
        let line = jtrim(raw);
        let Some(colon) = line.find(':') else {
            errors.push(err(at, ErrorKind::SessionLine));
            continue;
        };
        let key = line.get(..=colon).unwrap_or("").to_uppercase();
        let value = line.get(colon + 1..).unwrap_or("");
        if key.starts_with("USESESSION:") {
            match parse_int(jtrim(value)) {
                Ok(v) => use_session = Some(v),
                Err(m) => {
                    // The rest of the block goes back to the main loop.
                    errors.push(err(line_no, ErrorKind::SessionSetup(m)));
                    return (None, errors);
                }
            }
        } else if key.starts_with("PUBEXNGKEYFILE:") {
            o.public_exchange_key_file = Some(value.to_string());
        } else if key.starts_with("PUBEXNGKEYREF:") {
            o.public_exchange_key_ref = Some(value.to_string());
        } else if key.starts_with("PRIVEXNGKEYFILE:") {
            o.private_exchange_key_file = Some(value.to_string());
        } else if key.starts_with("PASSPHRASE:") {
            o.passphrase = Some(value.to_string());
        } else if key.starts_with("OPTIONS:") {
            let mut c = value.chars();
            match (c.next(), c.next()) {
                (Some(a), Some(b)) => {
                    o.encrypted = a == '1';
                    o.authenticated = b == '1';
                }
                _ => errors.push(err(
                    at,
                    ErrorKind::SessionOptions(format!(
                        "java.lang.StringIndexOutOfBoundsException: String index out of range: {}",
                        value.chars().count()
                    )),
                )),
            }
        } else if key.starts_with("TIMEOUT:") {
            match parse_int(value) {
                Ok(h) => o.timeout_hours = Some(h),
                Err(m) => errors.push(err(
                    at,
                    ErrorKind::SessionTimeout(format!("java.lang.NumberFormatException: {m}")),
                )),
            }
        } else {
            errors.push(err(at, ErrorKind::SessionLine));
        }
    }
    o.use_session = use_session.is_some_and(|v| v > 0);
    (Some(o), errors)
}
