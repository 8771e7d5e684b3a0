//! `admin keygen` and `admin convert-key`: the reference's `hdl-keygen` and
//! `hdl-convert-key`, and the other formats, through `handle_resolver::auth::KeyMaterial`.
//!
//! Passphrases never come from the command line: from a file (one trailing newline
//! stripped), an environment variable, or typed at the terminal (not echoed; twice for a
//! new one), read as `handle_resolver::auth::KeySource` reads secrets. Private keys are
//! written with permissions 0600; an existing file is replaced only with --force.

use std::fs::OpenOptions;
use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use handle_resolver::auth::{
    Credentials, KeyFileError, KeyFormat, KeyMaterial, KeySource, KeySpec, Pkcs8Encryption,
    PrivateKey,
};
use zeroize::Zeroizing;

use super::{BAD_INPUT, OK};

/// How much of a key file is read: one byte more than the library takes (64 KiB), so that
/// a larger file is refused by its size.
const KEY_FILE_READ_LIMIT: u64 = 64 * 1024 + 1;

/// Where a passphrase comes from.
#[derive(Debug, Clone, Default, clap::Args)]
pub(super) struct NewPassphrase {
    /// Encrypt the private key with the passphrase in FILE (one trailing newline stripped).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["passphrase_env", "no_passphrase"])]
    passphrase_file: Option<PathBuf>,
    /// Encrypt the private key with the passphrase in the environment variable VAR.
    #[arg(long, value_name = "VAR", conflicts_with = "no_passphrase")]
    passphrase_env: Option<String>,
    /// Write the private key unencrypted. Without any of these options the passphrase is
    /// asked for on the terminal.
    #[arg(long)]
    no_passphrase: bool,
}

/// `admin keygen`.
#[derive(Debug, clap::Args)]
pub(super) struct KeygenArgs {
    /// The algorithm.
    #[arg(long, value_name = "rsa|dsa", default_value = "rsa", value_parser = ["rsa", "dsa"],
          ignore_case = true)]
    alg: String,
    /// Key size: RSA 2048 (default), 3072 or 4096; DSA 2048 (default; q of 224 bits, as the
    /// reference's hdl-keygen makes it), 1024 (the reference's default), 3072, or L/N:
    /// 1024/160, 2048/224, 2048/256, 3072/256.
    #[arg(long, value_name = "N")]
    bits: Option<String>,
    #[command(flatten)]
    passphrase: NewPassphrase,
    /// Replace PRIVFILE and PUBFILE if they exist.
    #[arg(long)]
    force: bool,
    /// The private key file (the reference's format).
    privfile: PathBuf,
    /// The public key file: the HS_PUBKEY value's data, to store as is.
    pubfile: PathBuf,
}

/// `admin convert-key`.
#[derive(Debug, clap::Args)]
pub(super) struct ConvertArgs {
    /// The input's format [default: detected from its content].
    #[arg(long, value_name = "FORMAT", value_parser = format_parser)]
    from: Option<KeyFormat>,
    /// The output's format: reference, pkcs8-pem, spki-pem or jwk.
    #[arg(long, value_name = "FORMAT", value_parser = format_parser)]
    to: KeyFormat,
    /// Write the public key only (reference: the HS_PUBKEY value data; jwk: the public
    /// members; spki-pem is always public).
    #[arg(long)]
    public: bool,
    /// The passphrase of an encrypted input, from FILE.
    #[arg(long, value_name = "FILE", conflicts_with = "in_passphrase_env")]
    in_passphrase_file: Option<PathBuf>,
    /// The passphrase of an encrypted input, from the environment variable VAR.
    #[arg(long, value_name = "VAR")]
    in_passphrase_env: Option<String>,
    /// Encrypt the output (reference or pkcs8-pem private key) with the passphrase in FILE.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["out_passphrase_env", "no_passphrase"])]
    out_passphrase_file: Option<PathBuf>,
    /// Encrypt the output with the passphrase in the environment variable VAR.
    #[arg(long, value_name = "VAR", conflicts_with = "no_passphrase")]
    out_passphrase_env: Option<String>,
    /// Write a private key unencrypted. A reference or pkcs8-pem private output without any
    /// of these options asks for a passphrase on the terminal.
    #[arg(long)]
    no_passphrase: bool,
    /// Encrypt a pkcs8-pem output in the legacy form the reference's tools read:
    /// PBEWithSHA1AndDESede (PKCS#12 PBE: SHA-1, 3DES), what its hdl-convert-key -crypt
    /// writes; an ASCII passphrase. Without it, PBES2 (PBKDF2-HMAC-SHA-256, AES-256-CBC),
    /// which the reference cannot read on JDK 17.
    #[arg(long, conflicts_with = "no_passphrase")]
    legacy_encryption: bool,
    /// Replace OUT if it exists.
    #[arg(long)]
    force: bool,
    /// The key file to read (`-`: standard input).
    input: PathBuf,
    /// The file to write (`-`: standard output).
    output: PathBuf,
}

fn format_parser(s: &str) -> Result<KeyFormat, String> {
    s.parse()
        .map_err(|e: handle_resolver::auth::UnknownKeyFormat| e.to_string())
}

/// An error message, already naming what it is about.
type Failure = String;

pub(super) fn keygen(args: &KeygenArgs) -> ExitCode {
    finish(run_keygen(args))
}

pub(super) fn convert(args: &ConvertArgs) -> ExitCode {
    finish(run_convert(args))
}

fn finish(result: Result<String, Failure>) -> ExitCode {
    match result {
        Ok(done) => {
            eprintln!("{done}");
            ExitCode::from(OK)
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(BAD_INPUT)
        }
    }
}

fn run_keygen(args: &KeygenArgs) -> Result<String, Failure> {
    let spec = spec(&args.alg, args.bits.as_deref())?;
    for path in [&args.privfile, &args.pubfile] {
        refuse_existing(path, args.force)?;
    }
    let passphrase = new_passphrase(
        args.passphrase.passphrase_file.as_deref(),
        args.passphrase.passphrase_env.as_deref(),
        args.passphrase.no_passphrase,
        &args.privfile,
        "",
    )?;
    let key = PrivateKey::generate(spec).map_err(|e| e.to_string())?;
    let private = key
        .to_reference_file(passphrase.as_deref().map(|p| p.as_slice()))
        .map_err(|e| e.to_string())?;
    let public = key.public_key().encode().map_err(|e| e.to_string())?;
    write_file(&args.privfile, &private, true, args.force)?;
    write_file(&args.pubfile, &public, false, args.force)?;
    // `PrivateKey(RSA-2048)`: the algorithm and size, nothing secret.
    let what = format!("{key:?}");
    let what = what
        .strip_prefix("PrivateKey(")
        .and_then(|w| w.strip_suffix(')'))
        .unwrap_or(&what);
    Ok(format!(
        "{what} key written: {} (reference private key, {}), {} (public key: HS_PUBKEY value data)",
        args.privfile.display(),
        if passphrase.is_some() {
            "encrypted"
        } else {
            "not encrypted"
        },
        args.pubfile.display()
    ))
}

/// The key spec of `--alg` and `--bits`.
fn spec(alg: &str, bits: Option<&str>) -> Result<KeySpec, Failure> {
    let number = |s: &str| {
        s.parse::<u32>()
            .map_err(|_| format!("--bits {s}: not a number"))
    };
    let spec = if alg.eq_ignore_ascii_case("rsa") {
        match bits {
            None => Ok(KeySpec::DEFAULT_RSA),
            Some(b) => KeySpec::rsa(number(b)?),
        }
    } else {
        match bits {
            None => Ok(KeySpec::DEFAULT_DSA),
            Some(b) => match b.split_once('/') {
                Some((l, n)) => KeySpec::dsa(number(l)?, Some(number(n)?)),
                None => KeySpec::dsa(number(b)?, None),
            },
        }
    };
    spec.map_err(|e| format!("--bits: {e}"))
}

fn run_convert(args: &ConvertArgs) -> Result<String, Failure> {
    if args.legacy_encryption && (args.to != KeyFormat::Pkcs8Pem || args.public) {
        return Err(format!(
            "--legacy-encryption encrypts a private key written as pkcs8-pem, not {}{}",
            if args.public { "a public key as " } else { "" },
            args.to
        ));
    }
    if args.output != Path::new("-") {
        refuse_existing(&args.output, args.force)?;
    }
    let shown = args.input.display();
    // At most one byte more than the library reads of a key file (64 KiB): a larger one is
    // refused by it without this reading the rest.
    let mut bytes = Zeroizing::new(Vec::new());
    let read = if args.input == Path::new("-") {
        std::io::stdin()
            .take(KEY_FILE_READ_LIMIT)
            .read_to_end(&mut bytes)
    } else {
        std::fs::File::open(&args.input)
            .and_then(|f| f.take(KEY_FILE_READ_LIMIT).read_to_end(&mut bytes))
    };
    read.map_err(|e| format!("{shown}: cannot read it: {e}"))?;
    let given = passphrase(
        args.in_passphrase_file.as_deref(),
        args.in_passphrase_env.as_deref(),
        "in",
    )?;
    let read = match KeyMaterial::read(&bytes, args.from, given.as_deref().map(|p| p.as_slice())) {
        // Encrypted and no passphrase given: ask on the terminal if there is one.
        Err(KeyFileError::NeedsPassphrase(_) | KeyFileError::Pkcs8NeedsPassphrase)
            if given.is_none()
                && args.input != Path::new("-")
                && std::io::stdin().is_terminal() =>
        {
            let typed = prompt(&format!("passphrase of {shown}: "))?;
            KeyMaterial::read(&bytes, args.from, Some(&typed))
        }
        other => other,
    }
    .map_err(|e| match e {
        KeyFileError::NeedsPassphrase(_) | KeyFileError::Pkcs8NeedsPassphrase => format!(
            "{shown}: {e}: give --in-passphrase-file or --in-passphrase-env (or run on a terminal)"
        ),
        e => format!("{shown}: {e}"),
    })?;
    if given.is_some() && !read.encrypted {
        eprintln!("note: {shown} is not encrypted; its passphrase was not needed");
    }
    let (in_format, in_private, in_encrypted) =
        (read.format, read.key.is_private(), read.encrypted);
    let key = if args.public {
        read.key.to_public()
    } else {
        read.key
    };
    let private_out = key.is_private() && args.to != KeyFormat::SpkiPem;
    let encrypts = private_out && matches!(args.to, KeyFormat::Reference | KeyFormat::Pkcs8Pem);
    let out_given = args.out_passphrase_file.is_some() || args.out_passphrase_env.is_some();
    let out_passphrase = if encrypts {
        new_passphrase(
            args.out_passphrase_file.as_deref(),
            args.out_passphrase_env.as_deref(),
            args.no_passphrase,
            &args.output,
            "out",
        )?
    } else if out_given {
        // The library refuses it, with the reason.
        passphrase(
            args.out_passphrase_file.as_deref(),
            args.out_passphrase_env.as_deref(),
            "out",
        )?
    } else {
        None
    };
    let encryption = if args.legacy_encryption {
        Pkcs8Encryption::LegacyPkcs12TripleDes
    } else {
        Pkcs8Encryption::default()
    };
    let out = key
        .write_with(
            args.to,
            out_passphrase.as_deref().map(|p| p.as_slice()),
            encryption,
        )
        .map_err(|e| format!("{}: {e}", args.output.display()))?;
    if args.output == Path::new("-") {
        let mut stdout = std::io::stdout().lock();
        stdout
            .write_all(&out)
            .and_then(|()| stdout.flush())
            .map_err(|e| format!("standard output: {e}"))?;
    } else {
        write_file(&args.output, &out, private_out, args.force)?;
    }
    let what = |f: KeyFormat, private: bool, encrypted: bool| {
        format!(
            "{f}, {}{}",
            if private { "private" } else { "public" },
            if encrypted { ", encrypted" } else { "" }
        )
    };
    Ok(format!(
        "{shown} ({}) -> {} ({}{})",
        what(in_format, in_private, in_encrypted),
        args.output.display(),
        what(args.to, private_out, out_passphrase.is_some()),
        if args.legacy_encryption {
            ": PBEWithSHA1AndDESede, the legacy form"
        } else {
            ""
        }
    ))
}

/// A passphrase for a new encrypted file: from `file` or `env`, none with `none`, or typed
/// twice on the terminal.
fn new_passphrase(
    file: Option<&Path>,
    env: Option<&str>,
    none: bool,
    for_file: &Path,
    prefix: &str,
) -> Result<Option<Zeroizing<Vec<u8>>>, Failure> {
    if none {
        return Ok(None);
    }
    if let Some(p) = passphrase(file, env, prefix)? {
        return Ok(Some(p));
    }
    if !std::io::stdin().is_terminal() {
        let dash = option_prefix(prefix);
        return Err(format!(
            "{}: a private key needs --{dash}passphrase-file FILE, --{dash}passphrase-env VAR \
             or --no-passphrase (there is no terminal to ask on)",
            for_file.display()
        ));
    }
    let shown = for_file.display();
    let first = prompt(&format!("new passphrase for {shown}: "))?;
    let again = prompt("the same passphrase again: ")?;
    if first != again {
        return Err("the passphrases differ".into());
    }
    Ok(Some(first))
}

/// A passphrase given by file or variable (`prefix` is `in`, `out` or empty, for the
/// option's name in messages), read as `KeySource` reads a secret key.
fn passphrase(
    file: Option<&Path>,
    env: Option<&str>,
    prefix: &str,
) -> Result<Option<Zeroizing<Vec<u8>>>, Failure> {
    let dash = option_prefix(prefix);
    let (option, source) = match (file, env) {
        (Some(f), _) => (
            format!("--{dash}passphrase-file"),
            KeySource::SecretFile(f.to_path_buf()),
        ),
        (None, Some(v)) => (
            format!("--{dash}passphrase-env"),
            KeySource::SecretEnv(v.into()),
        ),
        (None, None) => return Ok(None),
    };
    match source.load() {
        Ok(Credentials::SecretKey(k)) => Ok(Some(Zeroizing::new(k.expose().to_vec()))),
        Ok(_) => Err(format!("{option}: not a passphrase")),
        Err(e) => Err(format!("{option} {e}")),
    }
}

/// `in-`, `out-` or nothing: the start of a passphrase option's name.
fn option_prefix(prefix: &str) -> String {
    if prefix.is_empty() {
        String::new()
    } else {
        format!("{prefix}-")
    }
}

/// A line typed at the terminal, not echoed.
fn prompt(text: &str) -> Result<Zeroizing<Vec<u8>>, Failure> {
    let typed = Zeroizing::new(
        rpassword::prompt_password(text).map_err(|e| format!("cannot read the passphrase: {e}"))?,
    );
    if typed.is_empty() {
        return Err("an empty passphrase (for no encryption, give --no-passphrase)".into());
    }
    Ok(Zeroizing::new(typed.as_bytes().to_vec()))
}

fn refuse_existing(path: &Path, force: bool) -> Result<(), Failure> {
    if !force && path.exists() {
        return Err(format!(
            "{}: exists (give --force to replace it)",
            path.display()
        ));
    }
    Ok(())
}

/// Writes `bytes` to `path`: readable by its owner only when `private`. With `force` an
/// existing file is replaced by renaming a new one over it, never written in place: whoever
/// held the old file open (or a link it was) never sees the new key.
fn write_file(path: &Path, bytes: &[u8], private: bool, force: bool) -> Result<(), Failure> {
    if force && path.exists() {
        let name = path
            .file_name()
            .map_or_else(Default::default, |n| n.to_string_lossy());
        let fresh = path.with_file_name(format!(".{name}.new-{}", std::process::id()));
        write_file(&fresh, bytes, private, false)?;
        return std::fs::rename(&fresh, path).map_err(|e| {
            let _ = std::fs::remove_file(&fresh);
            format!("{}: cannot replace it: {e}", path.display())
        });
    }
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    if private {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    #[cfg(not(unix))]
    let _ = private;
    let shown = path.display();
    let mut f = options
        .open(path)
        .map_err(|e| format!("{shown}: cannot write it: {e}"))?;
    f.write_all(bytes)
        .and_then(|()| f.sync_all())
        .map_err(|e| format!("{shown}: cannot write it: {e}"))
}
