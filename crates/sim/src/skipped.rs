//! [`Skipped`]: an experiment, or a row of one, that a run left out and
//! why. Its own file because the experiments that skip (the comparison)
//! and the [`Report`](crate::Report) that lists them both need it, and
//! neither should depend on the other for it.

use serde::Serialize;

use crate::config::Experiment;

/// An experiment left out because the algorithm cannot do what it needs,
/// or a row of one left out for its cost (the reason says which).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Skipped {
    pub experiment: Experiment,
    pub reason: String,
}
