//! Counting owners over key hashes: the inner loops every experiment shares.
//!
//! Placements answer in their own node ids, which are name ranks and change
//! when a node joins (`node-10` sorts between `node-1` and `node-2`). Each
//! experiment therefore numbers its nodes itself (`0..N` in the article's
//! order, the joining node `N`) and maps ids through [`Numbering`].

use std::collections::HashMap;

use rayon::prelude::*;
use ringwise::Placement;

/// Keys per parallel task: large enough to amortize, small enough to balance.
const TASK: usize = 1 << 14;

/// Placement ids → the experiment's node numbers.
#[derive(Debug, Clone)]
pub(crate) struct Numbering(Vec<u32>);

impl Numbering {
    /// Numbers the placement's nodes by their position in `names`.
    pub(crate) fn new<P: Placement>(placement: &P, names: &[String]) -> Self {
        let position: HashMap<&str, u32> = names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.as_str(), i as u32))
            .collect();
        let table = placement.nodes();
        Numbering(
            table
                .iter()
                .map(|node| {
                    position
                        .get(node.name.as_str())
                        .copied()
                        .unwrap_or(u32::MAX)
                })
                .collect(),
        )
    }

    /// The experiment's number of the owner of `hash`.
    #[inline]
    pub(crate) fn owner<P: Placement>(&self, placement: &P, hash: u64) -> usize {
        placement
            .owner(hash)
            .map_or(usize::MAX, |id| self.0[id as usize] as usize)
    }
}

/// What a node joining did to a set of keys.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct JoinTally {
    /// Keys whose owner changed.
    pub moved: u64,
    /// Of those, keys that went to the joining node.
    pub to_new: u64,
    /// Old owners that lost keys.
    pub donors: Vec<bool>,
    /// Keys per node before the join.
    pub load: Vec<u64>,
}

impl JoinTally {
    pub(crate) fn new(nodes: usize) -> Self {
        JoinTally {
            moved: 0,
            to_new: 0,
            donors: vec![false; nodes + 1],
            load: vec![0; nodes + 1],
        }
    }

    pub(crate) fn merge(mut self, other: Self) -> Self {
        self.moved += other.moved;
        self.to_new += other.to_new;
        for (a, b) in self.donors.iter_mut().zip(other.donors) {
            *a |= b;
        }
        for (a, b) in self.load.iter_mut().zip(other.load) {
            *a += b;
        }
        self
    }
}

/// A placement before and after node `nodes` joins, with their numberings.
pub(crate) struct Join<'a, P> {
    pub before: &'a P,
    pub after: &'a P,
    pub before_ids: &'a Numbering,
    pub after_ids: &'a Numbering,
    /// Nodes before the join; the joining node is number `nodes`.
    pub nodes: usize,
}

impl<P: Placement> Join<'_, P> {
    /// Tallies `hashes` with batch lookups (fast when they are sorted; the
    /// tally does not depend on key order).
    pub(crate) fn tally(&self, hashes: &[u64]) -> JoinTally {
        let mut t = JoinTally::new(self.nodes);
        let (mut before, mut after) = (Vec::new(), Vec::new());
        self.before.owners_into(hashes, &mut before);
        self.after.owners_into(hashes, &mut after);
        for (&b, &a) in before.iter().zip(&after) {
            let b = self.before_ids.0[b as usize] as usize;
            let a = self.after_ids.0[a as usize] as usize;
            t.load[b] += 1;
            if a != b {
                t.moved += 1;
                t.to_new += u64::from(a == self.nodes);
                t.donors[b] = true;
            }
        }
        t
    }
}

/// Keys per node and the index of each node's first key, as Python's
/// `Counter` needs for `most_common` ties (the first-seen wins).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Load {
    pub count: Vec<u64>,
    pub first: Vec<u64>,
}

impl Load {
    pub(crate) fn new(nodes: usize) -> Self {
        Load {
            count: vec![0; nodes],
            first: vec![u64::MAX; nodes],
        }
    }

    pub(crate) fn add(&mut self, node: usize, key_index: u64) {
        self.count[node] += 1;
        self.first[node] = self.first[node].min(key_index);
    }

    pub(crate) fn merge(mut self, other: Self) -> Self {
        for i in 0..self.count.len() {
            self.count[i] += other.count[i];
            self.first[i] = self.first[i].min(other.first[i]);
        }
        self
    }

    /// `Counter.most_common(1)`: the largest count, ties to the node seen
    /// first. `None` when every count is 0.
    pub(crate) fn most_common(&self) -> Option<usize> {
        (0..self.count.len())
            .filter(|&i| self.count[i] > 0)
            .min_by_key(|&i| (std::cmp::Reverse(self.count[i]), self.first[i]))
    }
}

/// Counts keys per node over `hashes` (numbered from `first_index`) on every
/// core.
pub(crate) fn par_load<P: Placement>(
    placement: &P,
    ids: &Numbering,
    nodes: usize,
    first_index: u64,
    hashes: &[u64],
) -> Load {
    hashes
        .par_chunks(TASK)
        .enumerate()
        .map(|(c, chunk)| {
            let mut load = Load::new(nodes);
            let base = first_index + (c * TASK) as u64;
            for (i, &h) in chunk.iter().enumerate() {
                load.add(ids.owner(placement, h), base + i as u64);
            }
            load
        })
        .reduce(|| Load::new(nodes), Load::merge)
}

/// Population standard deviation of integer counts, as Python's
/// `statistics.pstdev` (which is exact): `sqrt(n·Σx² − (Σx)²) / n`, with
/// the integer part computed exactly.
pub(crate) fn pstdev(values: &[u64]) -> f64 {
    let n = values.len() as u128;
    if n == 0 {
        return 0.0;
    }
    let sum: u128 = values.iter().map(|&v| u128::from(v)).sum();
    let squares: u128 = values.iter().map(|&v| u128::from(v) * u128::from(v)).sum();
    ((n * squares - sum * sum) as f64).sqrt() / n as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pstdev_matches_the_definition() {
        assert_eq!(pstdev(&[2, 4, 4, 4, 5, 5, 7, 9]), 2.0);
        assert_eq!(pstdev(&[5, 5, 5]), 0.0);
    }

    #[test]
    fn most_common_breaks_ties_by_first_seen() {
        let mut load = Load::new(3);
        load.add(2, 0);
        load.add(1, 1);
        load.add(1, 2);
        load.add(2, 3);
        assert_eq!(load.most_common(), Some(2));
        assert_eq!(Load::new(2).most_common(), None);
    }
}
