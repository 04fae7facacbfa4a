//! The cluster description: which algorithm, its parameters and the nodes,
//! as one validated value that builds the placement.
//!
//! With the `cluster-file` feature (default) it is read from one TOML
//! document (`cluster/file.rs`):
//!
//! ```toml
//! algorithm = "ring"      # optional, default "ring"
//! hash = "xxh3"           # optional, default "xxh3"
//! vnodes = 160            # optional, default 160 (ring)
//! table_size = 65537      # optional, a prime (maglev)
//! probes = 21             # optional (multiprobe)
//! max_points = 16777216   # optional: the ring's point budget, up to 2^28
//! # epsilon = 0.25        # optional: bounded loads for keys looked up together
//! # secret = "00112233445566778899aabbccddeeff"   # required by hash = "siphash"
//!
//! [[nodes]]
//! name = "cache-a"
//! weight = 2              # optional, default 1; fractions allowed
//! zone = "eu-west-1a"     # optional
//! ```
//!
//! Every error names the line and, where there is one, the field. Unknown
//! keys are errors (a typo like `vnode = 100` must not silently mean 160).

use crate::Error;
use crate::algo::{Algorithm, AnyPlacement, Params};
use crate::layers::Keyed;
use crate::node::{Node, NodeTable};

#[cfg(feature = "cluster-file")]
mod file;

/// A validated cluster description.
#[derive(Debug, Clone, PartialEq)]
pub struct ClusterSpec {
    /// The placement algorithm.
    pub algorithm: Algorithm,
    /// The algorithm's parameters; `params.hash` is also the key hash.
    pub params: Params,
    /// Bounded loads: no node above `(1 + epsilon)` × its fair share of the
    /// keys looked up together (`None`: unbounded).
    pub epsilon: Option<f64>,
    /// The members.
    pub nodes: NodeTable,
    /// Node names in the order they were listed: jump's and memento's
    /// bucket order (join order). Empty means name order.
    pub listed: Vec<String>,
}

impl ClusterSpec {
    /// A spec of `algorithm` with its default parameters (and default key
    /// hash) over `nodes`, listed in the order given.
    pub fn new(algorithm: Algorithm, nodes: Vec<Node>) -> Result<Self, Error> {
        Ok(ClusterSpec {
            algorithm,
            params: Params {
                hash: algorithm.default_hash(),
                ..Params::DEFAULT
            },
            epsilon: None,
            listed: nodes.iter().map(|n| n.name.clone()).collect(),
            nodes: NodeTable::new(nodes)?,
        })
    }

    /// Builds the placement this spec describes, with its key hash.
    pub fn build(&self) -> Result<Keyed<AnyPlacement>, Error> {
        let placement = AnyPlacement::build(self.algorithm, self.join_order(), &self.params)?;
        Ok(Keyed::new(placement, self.params.hash))
    }

    /// The parameters of [`Params::NAMES`] that differ from their defaults
    /// but that the algorithm does not read (`table_size` on a ring...):
    /// settings that do nothing, for a caller to warn about.
    pub fn ignored_params(&self) -> Vec<&'static str> {
        let reads = self.algorithm.reads();
        self.params
            .differing(&Params::DEFAULT)
            .into_iter()
            .filter(|name| !reads.contains(name))
            .collect()
    }

    /// The nodes in listed order (name order when `listed` is empty).
    pub fn join_order(&self) -> Vec<Node> {
        if self.listed.is_empty() {
            return self.nodes.iter().cloned().collect();
        }
        let by_id = |name: &String| self.nodes.id(name).and_then(|id| self.nodes.get(id));
        self.listed.iter().filter_map(by_id).cloned().collect()
    }
}
