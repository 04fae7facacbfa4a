//! What the Python calls read from outside: cluster files (through the
//! CLI's 64 MiB cap, with its messages), cluster text, and iterables of
//! keys or nodes (never a lone `str`, `bytes`, `bytearray` or
//! `memoryview`, whose items would be its characters or byte values).

use std::path::Path;

use pyo3::exceptions::{PyOSError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyMemoryView, PyString};

use ringwise_sim::input;

use crate::errors::raise;

/// The text of the cluster file at `path`, through the reader `ringwise
/// --cluster` uses (`ringwise_sim::input`: at most 64 MiB, one byte past
/// the cap read and no more, UTF-8). The GIL is released while reading,
/// so a slow or blocking file (a FIFO, a network mount) does not stop the
/// interpreter's other threads.
///
/// Errors, as the CLI's: a file that cannot be opened or read is an
/// `OSError` (`FileNotFoundError`, `PermissionError`... from its errno)
/// saying "cannot read cluster file PATH"; over the cap, or not UTF-8, a
/// `ClusterFileError` naming the path.
pub fn read_cluster_file(py: Python<'_>, path: &Path) -> PyResult<String> {
    py.detach(|| input::read_cluster_file(path)).map_err(|e| {
        match (e.is_unreadable(), e.raw_os_error()) {
            // OSError(errno, message) picks the subclass of the errno.
            (true, Some(errno)) => PyOSError::new_err((errno, e.to_string())),
            (true, None) => PyOSError::new_err(e.to_string()),
            (false, _) => raise("ClusterFileError", e.to_string()),
        }
    })
}

/// Refuses cluster text over the file cap before it is parsed: the same
/// bound whether the text comes from a file or from a string.
pub fn check_cluster_text(text: &str) -> PyResult<()> {
    if text.len() as u64 > input::MAX_CLUSTER_FILE_BYTES {
        let what = format!("the text given to from_toml ({} bytes)", text.len());
        return Err(raise(
            "ClusterFileError",
            input::ReadError::too_big(&what).to_string(),
        ));
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
