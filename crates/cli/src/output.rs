//! Every file the CLI writes (`plan --write` and `--svg`, `inspect --svg`,
//! `man --dir`) goes through [`file()`]: the shared atomic writer of
//! `ringwise_sim::files` (a temporary file in the same directory, synced,
//! renamed over the target), its failure exit 74 with one line naming the
//! file, what failed and that the file is as it was.

use std::path::Path;

use ringwise_sim::files::{Mode, write_atomically};

use crate::Failure;

/// Writes `bytes` to `path` atomically with `mode`'s permissions.
pub fn file(path: &Path, mode: Mode, bytes: &[u8]) -> Result<(), Failure> {
    write_atomically(path, mode, |out| out.write_all(bytes)).map_err(Failure::write)
}
