//! [`Progress`]: how far a run has come, for a progress bar.

/// Reports how far a run has come, for a progress bar. Units are keys
/// processed (a key counts once per pass that reads it).
pub trait Progress: Sync {
    /// The run will process `total` units.
    fn start(&self, total: u64);
    /// `units` more are done.
    fn advance(&self, units: u64);
}

/// No progress reporting.
#[derive(Debug, Clone, Copy)]
pub struct Quiet;

impl Progress for Quiet {
    fn start(&self, _: u64) {}
    fn advance(&self, _: u64) {}
}
