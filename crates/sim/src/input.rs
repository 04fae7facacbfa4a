//! The one reader of cluster files for every front end (`ringwise
//! --cluster`, `plan --from/--to`, Python's `Placement.from_file`): at
//! most [`MAX_CLUSTER_FILE_BYTES`], reading one byte past the cap and no
//! more, so `/dev/zero` is refused at once instead of filling memory (the
//! kernel's OOM killer ended a Python process at 23 GB before Python read
//! through this cap); then UTF-8.
//!
//! The messages are the ones both front ends print; each front end maps
//! [`ReadError::is_unreadable`] to its own error (the CLI's exit 66 against
//! 65, Python's `OSError` against `ClusterFileError`).

use std::fmt;
use std::io::Read as _;
use std::path::Path;

/// The largest cluster file read: 64 MiB, 20 times a 100,000-node file
/// (about 3 MB).
pub const MAX_CLUSTER_FILE_BYTES: u64 = 64 << 20;

/// A cluster file that could not be read, or not as text.
#[derive(Debug)]
pub struct ReadError {
    /// The whole sentence, naming the file.
    message: String,
    /// The file could not be opened or read (not: too big, not UTF-8).
    unreadable: bool,
    /// The operating system's error number, when it gave one.
    os_error: Option<i32>,
}

impl ReadError {
    /// The file could not be opened or read; otherwise what was read is
    /// bad (over the cap, not UTF-8).
    pub fn is_unreadable(&self) -> bool {
        self.unreadable
    }

    /// The operating system's error number (for Python's `OSError`
    /// subclasses), when the read failed with one.
    pub fn raw_os_error(&self) -> Option<i32> {
        self.os_error
    }

    /// `what` (a path, or "the text given to from_toml (N bytes)") is over
    /// [`MAX_CLUSTER_FILE_BYTES`].
    pub fn too_big(what: &str) -> Self {
        ReadError {
            message: format!(
                "{what}: a cluster file is at most 64 MiB (a 100,000-node file is about 3 MB); \
                 is this the right file?"
            ),
            unreadable: false,
            os_error: None,
        }
    }
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ReadError {}

/// The bytes of the cluster file at `path`, through the cap.
pub fn read_cluster_bytes(path: &Path) -> Result<Vec<u8>, ReadError> {
    let unreadable = |e: std::io::Error| ReadError {
        message: format!("cannot read cluster file {}: {e}", path.display()),
        unreadable: true,
        os_error: e.raw_os_error(),
    };
    let file = std::fs::File::open(path).map_err(unreadable)?;
    let mut bytes = Vec::new();
    file.take(MAX_CLUSTER_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(unreadable)?;
    if bytes.len() as u64 > MAX_CLUSTER_FILE_BYTES {
        return Err(ReadError::too_big(&path.display().to_string()));
    }
    Ok(bytes)
}

/// `bytes`, read from `path`, as text: a file that is not UTF-8 is bad
/// data, named by the byte where it stops being UTF-8.
pub fn cluster_text(path: &Path, bytes: Vec<u8>) -> Result<String, ReadError> {
    String::from_utf8(bytes).map_err(|e| ReadError {
        message: format!(
            "in {}: the cluster file is not UTF-8 at byte {}; save it as UTF-8 text",
            path.display(),
            e.utf8_error().valid_up_to()
        ),
        unreadable: false,
        os_error: None,
    })
}

/// The text of the cluster file at `path`: both steps.
pub fn read_cluster_file(path: &Path) -> Result<String, ReadError> {
    cluster_text(path, read_cluster_bytes(path)?)
}
