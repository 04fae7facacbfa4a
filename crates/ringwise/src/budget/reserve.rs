//! The memory reservation of a large build: reserve its documented peak
//! (and release it at once, untouched) before building, so that a process
//! under a memory limit gets [`Error::OutOfMemory`] instead of an abort
//! half-way through the build.
//!
//! Callers pass the peak they document: a ring build
//! [`crate::PEAK_BYTES_PER_POINT`] per point, a maglev table
//! [`crate::Maglev::PEAK_BYTES_PER_SLOT`] per slot. Untouched pages cost no
//! memory, so the probe is free where the memory is there; below
//! [`RESERVE_FROM`] it is skipped.

use crate::error::Error;

/// Builds whose documented peak reaches this many bytes first reserve it
/// (and release it at once, untouched), so that a process under a memory
/// limit gets [`Error::OutOfMemory`] instead of an abort half-way.
const RESERVE_FROM: u64 = 64 << 20;

/// Reserves `bytes` (the documented peak of a build) and releases them:
/// fails cleanly where the build would abort. Untouched pages cost no
/// memory, so this is free where the memory is there.
pub(crate) fn reserve_peak(what: &'static str, bytes: u64) -> Result<(), Error> {
    if bytes < RESERVE_FROM {
        return Ok(());
    }
    let mut probe: Vec<u8> = Vec::new();
    usize::try_from(bytes)
        .ok()
        .and_then(|len| probe.try_reserve_exact(len).ok())
        .ok_or(Error::OutOfMemory { what, bytes })
}
