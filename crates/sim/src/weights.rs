//! Experiment 5: weights. `small-1` and `small-2` of weight 1 and `big` of
//! weight 2 share the keys; `big` should get half. With few points per node
//! the noise still shows (the article: 26.1 / 20.7 / 53.2 % at 100 vnodes).

use ringwise::{Error, Node, Placement};
use serde::ser::{Serialize, SerializeMap, Serializer};

use crate::config::Config;
use crate::error::SimError;
use crate::keys::Keys;
use crate::tally::{Numbering, par_load};

/// Names with a share each, serialized as a JSON object in this order.
#[derive(Debug, Clone, PartialEq)]
pub struct Shares(pub Vec<(String, f64)>);

impl Serialize for Shares {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (name, share) in &self.0 {
            map.serialize_entry(name, share)?;
        }
        map.end()
    }
}

/// One vnodes value of the weights experiment.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct WeightsRow {
    pub vnodes: u32,
    /// Share of the keys per node: `small-1`, `small-2`, `big`.
    pub shares: Shares,
}

/// The article's nodes: names and weights.
pub const NODES: [(&str, f64); 3] = [("small-1", 1.0), ("small-2", 1.0), ("big", 2.0)];

/// Runs the experiment for every `config.weight_vnodes`.
pub fn run<P: Placement>(
    config: &Config,
    keys: &Keys,
    build: &(impl Fn(Vec<Node>, u32) -> Result<P, Error> + Sync),
) -> Result<Vec<WeightsRow>, SimError> {
    let names: Vec<String> = NODES.iter().map(|(n, _)| (*n).to_owned()).collect();
    let mut rows = Vec::new();
    for &vnodes in &config.weight_vnodes {
        let nodes = NODES.iter().map(|&(n, w)| Node::new(n).weight(w)).collect();
        let ring = build(nodes, vnodes)?;
        let ids = Numbering::new(&ring, &names);
        let mut count = vec![0u64; names.len()];
        keys.for_each_chunk(|first, hashes| {
            let load = par_load(&ring, &ids, names.len(), first, hashes);
            for (c, l) in count.iter_mut().zip(load.count) {
                *c += l;
            }
        });
        let total = keys.len() as f64;
        rows.push(WeightsRow {
            vnodes,
            shares: Shares(
                names
                    .iter()
                    .cloned()
                    .zip(count.iter().map(|&c| c as f64 / total))
                    .collect(),
            ),
        });
    }
    Ok(rows)
}
