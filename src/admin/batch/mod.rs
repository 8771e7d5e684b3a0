//! The reference distribution's batch files (`hdl-genericbatch`): [`parse`] reads one
//! exactly as the reference's `GenericBatch` does, without I/O; [`Runner`] sends its commands,
//! independent ones at once; [`LogLine`] writes the reference's log lines.
//!
//! ```
//! use handle_resolver::admin::batch::{parse, Command};
//! let batch = parse("CREATE 20.500.1/x\n1 URL 86400 1110 UTF8 https://example.org/\n", &mut |_: &str| None);
//! let Ok(Command::Values { values, .. }) = &batch.entries[0].command else { panic!() };
//! assert_eq!(&values[0].data[..], b"https://example.org/");
//! ```

mod parse;
mod report;
mod run;

use std::net::SocketAddr;

use bytes::Bytes;

use crate::wire::HandleValue;

pub use parse::{parse, FileSource};
pub use report::{LogLine, Outcome, Report, Summary};
pub use run::Runner;

/// A parsed batch file: its entries in file order and the count of main-loop lines (the
/// reference's `Batch File Lines`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Batch {
    /// The commands and the errors, in file order.
    pub entries: Vec<Entry>,
    /// Lines the reference's main loop reads.
    pub lines: u32,
}

/// One command of a batch file, or why its lines are invalid.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Entry {
    /// Physical line number of the command line (1-based).
    pub line: u32,
    /// The reference's `[n]`: the ordinal of the command line among main-loop lines.
    pub n: u32,
    /// The command, or the error the reference logs as `INVALID`.
    pub command: Result<Command, BatchError>,
}

/// What an entry asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Command {
    /// `AUTHENTICATE`: the identity of the commands after it.
    Authenticate {
        /// The key's value index.
        index: u32,
        /// The identity's handle.
        handle: String,
        /// The secret or the key file.
        key: AuthKey,
    },
    /// `CREATE`, `ADD` or `MODIFY` with the values of its block.
    Values {
        /// Which.
        op: Operation,
        /// The handle.
        handle: String,
        /// The values (at least one).
        values: Vec<HandleValue>,
    },
    /// `DELETE handle`.
    Delete {
        /// The handle.
        handle: String,
    },
    /// `REMOVE i,j:handle` (the list may be empty).
    Remove {
        /// The handle.
        handle: String,
        /// The indexes.
        indexes: Vec<u32>,
    },
    /// `HOME` / `UNHOME` and its NA lines.
    Home {
        /// True for HOME.
        home: bool,
        /// The server whose site is asked.
        target: HomeTarget,
        /// Each NA line: its physical number and the prefix handle, or why it is none.
        prefixes: Vec<(u32, Result<String, ErrorKind>)>,
    },
    /// `SESSIONSETUP` and its lines.
    SessionSetup(SessionOptions),
}

impl Command {
    /// True for the commands the reference counts in `Total Entries` (HOME / UNHOME count
    /// one per NA line instead).
    pub fn counts(&self) -> bool {
        matches!(
            self,
            Command::Values { .. } | Command::Delete { .. } | Command::Remove { .. }
        )
    }
}

/// `CREATE`, `ADD` or `MODIFY`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    /// CREATE_HANDLE.
    Create,
    /// ADD_VALUE.
    Add,
    /// MODIFY_VALUE.
    Modify,
}

/// The two kinds of `AUTHENTICATE`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AuthKind {
    SecretKey,
    PrivateKey,
}

/// The key an `AUTHENTICATE` names.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AuthKey {
    /// `SECKEY`: the secret as written (trimmed), used as is.
    Secret(Bytes),
    /// `PUBKEY`: a private key file in the reference's format, with its passphrase.
    KeyFile {
        /// The path as written.
        path: String,
        /// The passphrase after `|` (trimmed; may be empty).
        passphrase: Option<String>,
    },
}

impl std::fmt::Debug for AuthKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AuthKey::Secret(_) => f.write_str("Secret(..)"),
            AuthKey::KeyFile { path, .. } => f
                .debug_struct("KeyFile")
                .field("path", path)
                .finish_non_exhaustive(),
        }
    }
}

/// The server of a `HOME` / `UNHOME` line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct HomeTarget {
    /// Its address.
    pub addr: SocketAddr,
    /// The protocol named.
    pub protocol: Protocol,
}

/// The protocol of a `HOME` / `UNHOME` line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// TCP.
    Tcp,
    /// UDP.
    Udp,
    /// HTTP.
    Http,
}

/// The lines of a `SESSIONSETUP` block.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SessionOptions {
    /// `USESESSION` above 0 (without it the block changes nothing).
    pub use_session: bool,
    /// `PUBEXNGKEYFILE`.
    pub public_exchange_key_file: Option<String>,
    /// `PUBEXNGKEYREF` (`index:handle`).
    pub public_exchange_key_ref: Option<String>,
    /// `PRIVEXNGKEYFILE`.
    pub private_exchange_key_file: Option<String>,
    /// `PASSPHRASE`.
    pub passphrase: Option<String>,
    /// `OPTIONS` first character.
    pub encrypted: bool,
    /// `OPTIONS` second character.
    pub authenticated: bool,
    /// `TIMEOUT` in hours.
    pub timeout_hours: Option<i32>,
}

/// A line the reference logs as `INVALID`: which physical line, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {kind}")]
#[non_exhaustive]
pub struct BatchError {
    /// Physical line number (1-based) of the offending line.
    pub line: u32,
    /// Why; its text is the reference's log text.
    pub kind: ErrorKind,
}

/// Why a line is invalid. The `Display` text is the reference's log text for it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ErrorKind {
    /// Not a command (also a whitespace-only line, a leading blank, a TAB separator).
    #[error("error in command line")]
    CommandLine,
    /// Not a command, on the first such line that holds bytes which are not UTF-8 (read as
    /// U+FFFD, as the reference reads them): the file is binary or in another encoding.
    /// Logged and counted as [`ErrorKind::CommandLine`], with the reason; later such lines
    /// are plain `CommandLine`s.
    #[error(
        "error in command line (the file is not UTF-8 text: line {line} has a byte that is \
         not UTF-8 at byte {byte})"
    )]
    NotUtf8 {
        /// Physical line number (1-based).
        line: u32,
        /// Offset in the line of its first byte that is not UTF-8.
        byte: usize,
    },
    /// CREATE / ADD / MODIFY / DELETE without a handle.
    #[error("error in handle name string")]
    HandleName,
    /// A value line's index is no number (or the line has no field).
    #[error("error in handle value index string")]
    ValueIndex,
    /// A value line's TTL is no number.
    #[error("error in handle value ttl string")]
    ValueTtl,
    /// A value line's permissions are shorter than 4 characters.
    #[error("error in handle value permission string")]
    ValuePermissions,
    /// A value line's data kind is none of UTF8, ADMIN, FILE, LIST.
    #[error("error in handle data type string: '{0}'")]
    DataKind(String),
    /// A value line ends before its data (the reference logs Java's null message).
    #[error("null")]
    MissingField,
    /// An ADMIN or LIST index is no number.
    #[error("error in admin index string")]
    AdminIndex,
    /// ADMIN permissions are not 12 characters.
    #[error("error in admin permission string")]
    AdminPermissions,
    /// A LIST element without a handle, or with one longer than
    /// [`MAX_HANDLE_LENGTH`](crate::ident::MAX_HANDLE_LENGTH).
    #[error("error admin handle string")]
    ListHandle,
    /// An ADMIN handle that cannot be encoded, or longer than
    /// [`MAX_HANDLE_LENGTH`](crate::ident::MAX_HANDLE_LENGTH): no handle is that long, and
    /// the wire decoder refuses such a value's data (the reference would send it).
    #[error("error admin handle string")]
    AdminHandle,
    /// A FILE value's file cannot be read (or an HS_SITE JSON file does not convert).
    #[error("error public key file: {0}")]
    File(String),
    /// A block without a good value: nothing is sent.
    #[error("no handle values for {handle}")]
    NoValues {
        /// The handle of the block.
        handle: String,
    },
    /// REMOVE without anything after it.
    #[error("error in remove handle line")]
    RemoveLine,
    /// REMOVE's indexes are not numbers, or there is no `:` after them.
    #[error("error in indexes string")]
    Indexes,
    /// REMOVE without a handle after the `:`.
    #[error("no handle name at remove handle line")]
    RemoveHandle,
    /// HOME / UNHOME without an address.
    #[error("error in homeNA handle line")]
    HomeLine,
    /// HOME / UNHOME with something else than `ip:port:protocol`.
    #[error("invalid address:port:protocol specification.")]
    HomeAddress,
    /// HOME / UNHOME with a protocol other than TCP, UDP, HTTP.
    #[error("error in protocol string")]
    Protocol,
    /// An NA line that is no `0.NA/` handle.
    #[error("invalid NA handle name: {0}")]
    NaHandle(String),
    /// AUTHENTICATE of another kind than SECKEY / PUBKEY.
    #[error("error in authentication lines")]
    AuthenticationLines,
    /// AUTHENTICATE that cannot be used (the reference's exception text).
    #[error("error in authentication: {0}")]
    Authentication(String),
    /// SESSIONSETUP with a USESESSION that is no number.
    #[error("error in session setup: {0}")]
    SessionSetup(String),
    /// A SESSIONSETUP line with an unknown key.
    #[error("Not predefined session line encounted.")]
    SessionLine,
    /// A SESSIONSETUP OPTIONS shorter than 2 characters.
    #[error("Error specifying session options.{0}")]
    SessionOptions(String),
    /// A SESSIONSETUP TIMEOUT that is no number.
    #[error("Error specifying session time out.{0} Default or previous value will be used.")]
    SessionTimeout(String),
    /// A SESSIONSETUP private exchange key that cannot be used.
    #[error("error in sessionsetup lines, {0}")]
    SessionKey(String),
    /// HOME / UNHOME whose server cannot be asked.
    #[error("error in home/unhome:{0}")]
    Home(String),
    /// HOME / UNHOME whose server answered no primary site.
    #[error("error in home/unhome NA handle, invalide server: {0}")]
    HomeServer(String),
}

impl ErrorKind {
    /// True for the session lines the reference logs as `INVALID [n]` (with a blank).
    pub fn spaced(&self) -> bool {
        matches!(
            self,
            ErrorKind::SessionLine | ErrorKind::SessionOptions(_) | ErrorKind::SessionTimeout(_)
        )
    }
}

#[cfg(test)]
mod tests;
