//! [`Report`]: everything a run measured, as one serializable value (the
//! JSON document of `ringwise simulate --format json`).

use serde::Serialize;

use crate::config::Config;
use crate::skipped::Skipped;
use crate::{bounded, compare, cost, failure, modulo, rendezvous, seeds, single, weights};

/// Everything a run measured. Experiments that were not selected are absent.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The parameters of the run.
    pub params: Config,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub modulo: Option<Vec<modulo::ModuloRow>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub single: Option<Vec<single::SingleRow>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seeds: Option<Vec<seeds::SeedsRow>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<Vec<failure::FailureRow>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub weights: Option<Vec<weights::WeightsRow>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rendezvous: Option<rendezvous::RendezvousRow>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<cost::Cost>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compare: Option<Vec<compare::CompareRow>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bounded: Option<bounded::BoundedRow>,
    /// Experiments the algorithm cannot perform (jump cannot remove the
    /// most loaded node, slots have no weights...), and comparison rows
    /// left out for their cost (the allocated ring above
    /// [`compare::MAX_ALLOCATED_NODES`]), with the reason.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<Skipped>,
    /// Wall time of the run, seconds.
    pub elapsed_s: f64,
}
