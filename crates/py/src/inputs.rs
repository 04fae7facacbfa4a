//! What the Python calls read from outside: cluster files (through the
//! CLI's 64 MiB cap, with its messages), cluster text, and iterables of
//! keys or nodes (never a lone `str`, `bytes`, `bytearray` or
//! `memoryview`, whose items would be its characters or byte values).

use std::io::Read as _;
use std::path::Path;

use pyo3::exceptions::{PyOSError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyMemoryView, PyString};

use crate::errors::raise;

/// The largest cluster file read: 64 MiB, as `ringwise --cluster` reads
/// one (crates/cli/src/cluster.rs, `MAX_CLUSTER_FILE_BYTES`): 20 times a
/// 100,000-node file (about 3 MB). A bigger one (`/dev/zero`,
/// `/dev/urandom`) is refused after reading at most one byte past the cap.
pub const MAX_CLUSTER_FILE_BYTES: u64 = 64 << 20;

/// The CLI's words for a file over the cap, `what` being the file's path
/// (or "the text given to from_toml").
fn too_big(what: &str) -> PyErr {
    raise(
        "ClusterFileError",
        format!(
            "{what}: a cluster file is at most 64 MiB (a 100,000-node file is about 3 MB); \
             is this the right file?"
        ),
    )
}

/// The text of the cluster file at `path`: at most 64 MiB (one byte past
/// the cap is read, never more), UTF-8. The GIL is released while
/// reading, so a slow or blocking file (a FIFO, a network mount) does
/// not stop the interpreter's other threads.
///
/// Errors, as the CLI's: a file that cannot be opened or read is an
/// `OSError` (`FileNotFoundError`, `PermissionError`... from its errno)
/// saying "cannot read cluster file PATH"; over the cap, or not UTF-8, a
/// `ClusterFileError` naming the path.
pub fn read_cluster_file(py: Python<'_>, path: &Path) -> PyResult<String> {
    let read = py.detach(|| -> std::io::Result<Vec<u8>> {
        let file = std::fs::File::open(path)?;
        let mut bytes = Vec::new();
        file.take(MAX_CLUSTER_FILE_BYTES + 1)
            .read_to_end(&mut bytes)?;
        Ok(bytes)
    });
    let bytes = read.map_err(|e| {
        let message = format!("cannot read cluster file {}: {e}", path.display());
        match e.raw_os_error() {
            // OSError(errno, message) picks the subclass of the errno.
            Some(errno) => PyOSError::new_err((errno, message)),
            None => PyOSError::new_err(message),
        }
    })?;
    if bytes.len() as u64 > MAX_CLUSTER_FILE_BYTES {
        return Err(too_big(&path.display().to_string()));
    }
    String::from_utf8(bytes).map_err(|e| {
        raise(
            "ClusterFileError",
            format!(
                "in {}: the cluster file is not UTF-8 at byte {}; save it as UTF-8 text",
                path.display(),
                e.utf8_error().valid_up_to()
            ),
        )
    })
}

/// Refuses cluster text over the file cap before it is parsed: the same
/// bound whether the text comes from a file or from a string.
pub fn check_cluster_text(text: &str) -> PyResult<()> {
    if text.len() as u64 > MAX_CLUSTER_FILE_BYTES {
        return Err(too_big(&format!(
            "the text given to from_toml ({} bytes)",
            text.len()
        )));
    }
    Ok(())
}

/// What `value` is when it is one `str`, `bytes`, `bytearray` or
/// `memoryview`: iterating it gives characters or byte values, never the
/// keys or names a caller meant.
fn lone_text(value: &Bound<'_, PyAny>) -> Option<&'static str> {
    if value.is_instance_of::<PyString>() {
        Some("a str")
    } else if value.is_instance_of::<PyBytes>() {
        Some("a bytes")
    } else if value.is_instance_of::<PyByteArray>() {
        Some("a bytearray")
    } else if value.is_instance_of::<PyMemoryView>() {
        Some("a memoryview")
    } else {
        None
    }
}

/// `TypeError` when `value`, given to `call` where an iterable of `items`
/// is expected, is one `str`/`bytes`/`bytearray`/`memoryview`: "locate_many
/// expects an iterable of keys, got a str: wrap one key in a list".
pub fn refuse_lone_text(
    value: &Bound<'_, PyAny>,
    call: &str,
    items: &str,
    one: &str,
) -> PyResult<()> {
    match lone_text(value) {
        Some(kind) => Err(PyTypeError::new_err(format!(
            "{call} expects an iterable of {items}, got {kind}: wrap one {one} in a list"
        ))),
        None => Ok(()),
    }
}
