//! The one way the CLI reads a cluster file's bytes: through the 64 MiB
//! cap of `ringwise_sim::input` (the reader Python shares), as UTF-8, its
//! failures mapped to their exit codes. Every command that reads a cluster
//! file, or a program's configuration (`import.rs`), comes here.

use std::path::Path;

use ringwise_sim::input;

use crate::Failure;

/// The text of the cluster file at `path`: at most 64 MiB, UTF-8.
pub fn read_text(path: &Path) -> Result<String, Failure> {
    text(path, read_bytes(path)?)
}

/// The bytes of the cluster file at `path`, read through the 64 MiB cap
/// (`ringwise_sim::input`, the reader Python shares): every command that
/// reads a cluster file comes here (`plan --allocate` too, before it looks
/// for a blank file).
pub fn read_bytes(path: &Path) -> Result<Vec<u8>, Failure> {
    input::read_cluster_bytes(path).map_err(read_failure)
}

/// `bytes` as text: a file that is not UTF-8 is bad data.
pub fn text(path: &Path, bytes: Vec<u8>) -> Result<String, Failure> {
    input::cluster_text(path, bytes).map_err(read_failure)
}

/// A file that cannot be read is 66; one over the cap or not UTF-8 is bad
/// data, 65.
fn read_failure(e: input::ReadError) -> Failure {
    match e.is_unreadable() {
        true => Failure::no_input(anyhow::Error::new(e)),
        false => Failure::data(anyhow::Error::new(e)),
    }
}
