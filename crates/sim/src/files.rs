//! [`write_atomically`]: the one way every ringwise binary writes a file
//! (`ringwise`'s cluster files, SVGs and man pages, the simulator's
//! charts, `ringwise-cachebench`'s chart).
//!
//! The bytes go to a temporary file in the target's directory, are flushed
//! and synced, and the temporary is renamed over the target (then the
//! directory is synced, best effort). A reader sees the old file or the new
//! one, never half of one; a full disk, a failing writer or a killed
//! process leaves the old file as it was, and a failure removes the
//! temporary. The truncate-then-write it replaces turned a 156-node
//! cluster file on a full filesystem into a *valid* 151-node one.
//!
//! The mode of the new file ([`Mode`]): a file that holds a secret is
//! created 0600, or stricter when the file the secret came from is
//! (`source & 0o600`); any other file keeps the mode of the file it
//! replaces, or gets the usual `0666 & !umask` when it is new.
//!
//! A target that exists and is not a regular file (`/dev/stdout`, a FIFO,
//! `/dev/null`) cannot be replaced by a rename and must not be (renaming
//! over `/dev/null` as root replaces the device): it is written in place.
//! A symbolic link is followed: the file it points to is replaced, the link
//! stays.
//!
//! Output is streamed through a buffer into the temporary file: a large
//! document is never held in memory by this module.

use std::fmt;
use std::fs::{self, File, Permissions};
use std::io::{self, BufWriter, Write};
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The permissions of a file [`write_atomically`] creates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// A file without a secret: the mode of the file it replaces, else
    /// `0666 & !umask`.
    Plain,
    /// A file that holds a secret (a `siphash` key): `0600`, and no more
    /// than `source` allows (`source & 0o600`) when the secret was read
    /// from a file of mode `source`. Whatever the target had before.
    Secret {
        /// The permission bits of the file the secret came from.
        source: Option<u32>,
    },
}

impl Mode {
    /// A secret read from the files at `sources` (those that exist): 0600
    /// and each one's permission bits.
    pub fn secret_from<'a>(sources: impl IntoIterator<Item = &'a Path>) -> Mode {
        let source = sources
            .into_iter()
            .filter_map(|path| fs::metadata(path).ok())
            .map(|m| m.permissions().mode() & 0o777)
            .reduce(|a, b| a & b);
        Mode::Secret { source }
    }

    /// The permission bits of a secret file.
    fn secret_bits(source: Option<u32>) -> u32 {
        0o600 & source.unwrap_or(0o600)
    }
}

/// A file could not be written; the target is as it was.
#[derive(Debug)]
pub struct WriteError {
    /// The file that was to be written.
    pub path: PathBuf,
    /// What failed, in words: "cannot create a temporary file in /x",
    /// "writing", "syncing to disk", ...; empty when the reason says it
    /// all ("is a directory").
    pub stage: String,
    /// The operating system's reason.
    pub error: io::Error,
    /// Whether the target existed before: "is unchanged" or "was not
    /// created".
    existed: bool,
    /// Whether the target was written in place (not a regular file): then
    /// nothing can be said about what it holds.
    in_place: bool,
}

impl WriteError {
    /// The kind of the underlying I/O error (`StorageFull`, ...).
    pub fn kind(&self) -> io::ErrorKind {
        self.error.kind()
    }
}

impl fmt::Display for WriteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = self.path.display();
        let reason = reason(&self.error);
        match self.stage.is_empty() {
            true => write!(f, "cannot write {path}: {reason}")?,
            false => write!(f, "cannot write {path}: {}: {reason}", self.stage)?,
        }
        match (self.in_place, self.existed) {
            (true, _) => Ok(()),
            (false, true) => write!(f, "; {path} is unchanged"),
            (false, false) => write!(f, "; {path} was not created"),
        }
    }
}

impl std::error::Error for WriteError {}

/// The OS error without its "(os error 28)" and in lower case, as the
/// rest of the sentence: "no space left on device".
fn reason(error: &io::Error) -> String {
    let text = error.to_string();
    let text = match text.find(" (os error") {
        Some(at) => &text[..at],
        None => &text,
    };
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => text.to_owned(),
    }
}

/// Writes the file at `path` with what `write` streams into its writer:
/// into a temporary file in the same directory, flushed, synced and
/// renamed over `path`. On any error (including one `write` returns) the
/// target is untouched and the temporary removed.
pub fn write_atomically<F>(path: &Path, mode: Mode, write: F) -> Result<(), WriteError>
where
    F: FnOnce(&mut dyn Write) -> io::Result<()>,
{
    let fail = |stage: &str, error: io::Error, existed: bool| WriteError {
        path: path.to_owned(),
        stage: stage.to_owned(),
        error,
        existed,
        in_place: false,
    };
    // What the path names now, following links.
    let existing = match fs::metadata(path) {
        Ok(metadata) => Some(metadata),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(fail("cannot look at it", e, true)),
    };
    if let Some(metadata) = &existing {
        let kind = metadata.file_type();
        if kind.is_dir() {
            return Err(fail("", io::Error::from(io::ErrorKind::IsADirectory), true));
        }
        if kind.is_char_device() || kind.is_fifo() || kind.is_socket() || kind.is_block_device() {
            return write_in_place(path, write);
        }
    }
    // A link is replaced at its target, so the link stays a link.
    let target = match fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() && existing.is_some() => {
            fs::canonicalize(path).map_err(|e| fail("cannot follow the link", e, true))?
        }
        _ => path.to_owned(),
    };
    let existed = existing.is_some();
    let bits = match (mode, &existing) {
        (Mode::Secret { source }, _) => Some(Mode::secret_bits(source)),
        (Mode::Plain, Some(metadata)) => Some(metadata.permissions().mode() & 0o777),
        (Mode::Plain, None) => None,
    };
    let dir = match target.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_owned(),
        _ => PathBuf::from("."),
    };
    let name = target
        .file_name()
        .map_or_else(|| "output".into(), |n| n.to_string_lossy().into_owned());
    let prefix = format!(".{name}.");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    // Created with the final mode at once (a secret is never readable by
    // others, not even between create and rename); a plain new file gets
    // 0666 & !umask from the kernel, as File::create would give it.
    builder.permissions(Permissions::from_mode(bits.unwrap_or(0o666)));
    let temporary = builder.tempfile_in(&dir).map_err(|e| {
        let stage = format!("cannot create a temporary file in {}", dir.display());
        fail(&stage, e, existed)
    })?;
    let mut out = BufWriter::with_capacity(1 << 16, temporary);
    write(&mut out).map_err(|e| fail("writing", e, existed))?;
    out.flush().map_err(|e| fail("writing", e, existed))?;
    let temporary = out
        .into_inner()
        .map_err(|e| fail("writing", e.into_error(), existed))?;
    if let Some(bits) = bits {
        // The umask may have cleared bits an existing file had: give them
        // back (a secret's bits are already only ever fewer).
        temporary
            .as_file()
            .set_permissions(Permissions::from_mode(bits))
            .map_err(|e| fail("setting its mode", e, existed))?;
    }
    temporary
        .as_file()
        .sync_all()
        .map_err(|e| fail("syncing to disk", e, existed))?;
    // On error the temporary comes back inside PersistError and is removed
    // when dropped.
    temporary.persist(&target).map_err(|e| {
        let stage = format!("renaming the temporary file over {}", target.display());
        fail(&stage, e.error, existed)
    })?;
    // The rename is durable once the directory is synced; the file itself
    // already is, so a failure here is not reported.
    if let Ok(dir) = File::open(&dir) {
        let _ = dir.sync_all();
    }
    Ok(())
}

/// Streams into a target that is not a regular file (a device, a FIFO):
/// there is nothing to rename over, and nothing to keep.
fn write_in_place<F>(path: &Path, write: F) -> Result<(), WriteError>
where
    F: FnOnce(&mut dyn Write) -> io::Result<()>,
{
    let fail = |stage: &str, error: io::Error| WriteError {
        path: path.to_owned(),
        stage: stage.to_owned(),
        error,
        existed: true,
        in_place: true,
    };
    let file = fs::OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(|e| fail("cannot open it", e))?;
    let mut out = BufWriter::with_capacity(1 << 16, file);
    write(&mut out).map_err(|e| fail("writing", e))?;
    out.flush().map_err(|e| fail("writing", e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("ringwise-files-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).expect("scratch dir");
        dir
    }

    fn entries(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .expect("read dir")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    fn mode_of(path: &Path) -> u32 {
        fs::metadata(path).expect("metadata").permissions().mode() & 0o777
    }

    #[test]
    fn a_failing_writer_leaves_the_target_and_no_temporary() {
        let dir = scratch("failing");
        let target = dir.join("cluster.toml");
        fs::write(&target, "old").expect("seed");
        let error = write_atomically(&target, Mode::Plain, |out| {
            out.write_all(b"half of the new")?;
            Err(io::Error::other("the writer gave up"))
        })
        .expect_err("the writer's error is the write's");
        assert_eq!(fs::read_to_string(&target).expect("read"), "old");
        assert_eq!(entries(&dir), ["cluster.toml"]);
        let message = error.to_string();
        assert!(
            message.contains("cluster.toml: writing: the writer gave up")
                && message.ends_with("cluster.toml is unchanged"),
            "{message}"
        );
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_new_file_is_written_whole_and_keeps_an_existing_mode() {
        let dir = scratch("modes");
        let target = dir.join("chart.svg");
        write_atomically(&target, Mode::Plain, |out| out.write_all(b"<svg/>")).expect("write");
        assert_eq!(fs::read_to_string(&target).expect("read"), "<svg/>");
        fs::set_permissions(&target, Permissions::from_mode(0o640)).expect("chmod");
        write_atomically(&target, Mode::Plain, |out| out.write_all(b"<svg></svg>"))
            .expect("rewrite");
        assert_eq!(mode_of(&target), 0o640);
        assert_eq!(entries(&dir), ["chart.svg"]);
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_secret_is_0600_or_stricter_whatever_the_target_had() {
        let dir = scratch("secret");
        let target = dir.join("new.toml");
        fs::write(&target, "old").expect("seed");
        fs::set_permissions(&target, Permissions::from_mode(0o644)).expect("chmod");
        let secret = Mode::Secret { source: None };
        write_atomically(&target, secret, |out| out.write_all(b"s")).expect("write");
        assert_eq!(mode_of(&target), 0o600);
        let stricter = Mode::Secret {
            source: Some(0o400),
        };
        write_atomically(&target, stricter, |out| out.write_all(b"s")).expect("write");
        assert_eq!(mode_of(&target), 0o400);
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_link_is_followed_and_stays_a_link() {
        let dir = scratch("link");
        let real = dir.join("real.toml");
        let link = dir.join("link.toml");
        fs::write(&real, "old").expect("seed");
        std::os::unix::fs::symlink(&real, &link).expect("symlink");
        write_atomically(&link, Mode::Plain, |out| out.write_all(b"new")).expect("write");
        assert!(
            fs::symlink_metadata(&link)
                .expect("link")
                .file_type()
                .is_symlink()
        );
        assert_eq!(fs::read_to_string(&real).expect("read"), "new");
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_device_is_written_in_place_and_never_replaced() {
        write_atomically(Path::new("/dev/null"), Mode::Plain, |out| {
            out.write_all(b"x")
        })
        .expect("write to /dev/null");
        let kind = fs::metadata("/dev/null").expect("null").file_type();
        assert!(kind.is_char_device());
        let full = write_atomically(Path::new("/dev/full"), Mode::Plain, |out| {
            out.write_all(&[0; 100])
        });
        if Path::new("/dev/full").exists() {
            let message = full.expect_err("/dev/full is full").to_string();
            assert!(message.contains("no space left on device"), "{message}");
        }
    }

    #[test]
    fn a_missing_directory_is_one_line_naming_the_file() {
        let error = write_atomically(Path::new("/nonexistent-dir/x.svg"), Mode::Plain, |out| {
            out.write_all(b"x")
        })
        .expect_err("no directory");
        let message = error.to_string();
        assert_eq!(
            message,
            "cannot write /nonexistent-dir/x.svg: cannot create a temporary file in \
             /nonexistent-dir: no such file or directory; /nonexistent-dir/x.svg was not created"
        );
    }
}
