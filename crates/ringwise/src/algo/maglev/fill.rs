//! Filling a Maglev table: Envoy's nested rounds, replayed in turn order.
//!
//! Envoy loops `for round in 1.. { for node in name order { ... } }` and lets
//! a node claim a slot in a round only if `round·w ≥ target`. Looping over
//! every node every round costs O(rounds · N), and with skewed weights the
//! rounds number about M (the heaviest node claims in every one). Instead each
//! node, after claiming, computes the next round in which the same test
//! passes, and [`Turns`] hands out `(round, id)` in the order Envoy's loops
//! would: the same slots, at O(1) per claim for equal weights and at most
//! O(log N) otherwise.
//!
//! Finding a free slot walks the node's permutation over a bitmap of taken
//! slots (8 KiB at `M = 65537`, in L1 cache): about `M ln M` probes in all.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use xxhash_rust::xxh64::xxh64;

use crate::node::{NodeId, NodeTable};

/// One node while filling (Envoy's `TableBuildEntry`).
struct Entry {
    /// `perm[next]`: the next slot to try, kept below `M` by adding `skip`
    /// and subtracting `M` once (both are below `M`, so no overflow and no
    /// multiplication or division per step).
    slot: u64,
    skip: u64,
    weight: f64,
    target: f64,
}

/// Slot owners: Envoy's rounds replayed in `(round, id)` order.
pub(super) fn fill(nodes: &NodeTable, m: u64) -> Vec<u32> {
    if nodes.is_empty() {
        return Vec::new();
    }
    let total = nodes.total_weight();
    let mut entries: Vec<Entry> = nodes
        .iter()
        .map(|n| Entry {
            slot: xxh64(n.name.as_bytes(), 0) % m,
            skip: xxh64(n.name.as_bytes(), 1) % (m - 1) + 1,
            weight: n.weight / total,
            target: 0.0,
        })
        .collect();
    let max_w = entries.iter().map(|e| e.weight).fold(0.0, f64::max);
    let mut owners = vec![0u32; m as usize];
    let mut taken = vec![0u64; (m as usize).div_ceil(64)];
    let mut turns = Turns::new(nodes.len());
    for _ in 0..m {
        let Some((round, id)) = turns.pop() else {
            break;
        };
        let entry = &mut entries[id as usize];
        entry.target += max_w;
        owners[entry.claim(&mut taken, m)] = id;
        // The heaviest node claims every round, so the table is full by
        // round M: later turns never come.
        if let Some(next) = entry.next_round(round, m) {
            turns.push(next, id);
        }
    }
    owners
}

/// The nodes' turns in `(round, id)` order, as Envoy's nested loops visit
/// them. Nearly every turn is in the next round, so those wait in a plain
/// list (pushed in the order served, hence in id order); only later turns
/// go through the heap. Equal weights never touch it.
struct Turns {
    round: u64,
    current: Vec<NodeId>,
    served: usize,
    next: Vec<NodeId>,
    later: BinaryHeap<Reverse<(u64, NodeId)>>,
}

impl Turns {
    /// Everyone claims in round 1 (`1·w ≥ 0`).
    fn new(nodes: usize) -> Self {
        Turns {
            round: 1,
            current: (0..nodes as NodeId).collect(),
            served: 0,
            next: Vec::with_capacity(nodes),
            later: BinaryHeap::new(),
        }
    }

    fn pop(&mut self) -> Option<(u64, NodeId)> {
        loop {
            let listed = self.current.get(self.served).copied();
            let heaped = match self.later.peek() {
                Some(&Reverse((round, id))) if round == self.round => Some(id),
                _ => None,
            };
            let id = match (listed, heaped) {
                (Some(a), Some(b)) if b < a => self.later.pop().map(|_| b),
                (Some(a), _) => {
                    self.served += 1;
                    Some(a)
                }
                (None, Some(b)) => self.later.pop().map(|_| b),
                (None, None) => None,
            };
            if let Some(id) = id {
                return Some((self.round, id));
            }
            std::mem::swap(&mut self.current, &mut self.next);
            self.next.clear();
            self.served = 0;
            // An empty round list means every node waits in the heap:
            // jump to the earliest of their rounds.
            self.round = if self.current.is_empty() {
                self.later.peek()?.0.0
            } else {
                self.round + 1
            };
        }
    }

    /// Queues node `id` for `round`, which is after the current one.
    fn push(&mut self, round: u64, id: NodeId) {
        if round == self.round + 1 {
            self.next.push(id);
        } else {
            self.later.push(Reverse((round, id)));
        }
    }
}

impl Entry {
    /// Takes the first free slot of this node's permutation. Some slot is
    /// free (the caller fills at most M), and `perm` visits all M.
    fn claim(&mut self, taken: &mut [u64], m: u64) -> usize {
        loop {
            let slot = self.slot as usize;
            self.slot += self.skip;
            if self.slot >= m {
                self.slot -= m;
            }
            let (word, bit) = (slot / 64, 1u64 << (slot % 64));
            if taken[word] & bit == 0 {
                taken[word] |= bit;
                return slot;
            }
        }
    }

    /// The first round after `now` in which `round·w ≥ target` holds, in
    /// the same `f64` arithmetic as Envoy (`round` is exact in `f64`); `None`
    /// past `last`. The quotient guesses it within one of the answer; the
    /// loops settle the exact round.
    fn next_round(&self, now: u64, last: u64) -> Option<u64> {
        let claims = |round: u64| round as f64 * self.weight >= self.target;
        let guess = (self.target / self.weight).ceil();
        // Not finite when the weight underflowed to 0: it never claims again.
        if !guess.is_finite() || guess > (last + 2) as f64 {
            return None;
        }
        let mut round = (guess as u64).max(now + 1);
        while round > now + 1 && claims(round - 1) {
            round -= 1;
        }
        while !claims(round) {
            if round >= last {
                return None;
            }
            round += 1;
        }
        Some(round)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::node::Node;

    /// Envoy's `OriginalMaglevTable::constructImplementationInternals`,
    /// loop for loop, with `perm[j] = (offset + j·skip) mod M` recomputed.
    fn envoy_fill(nodes: &NodeTable, m: u64) -> Vec<u32> {
        let total = nodes.total_weight();
        let weights: Vec<f64> = nodes.iter().map(|n| n.weight / total).collect();
        let max_w = weights.iter().copied().fold(0.0, f64::max);
        let mut targets = vec![0.0; weights.len()];
        let mut next = vec![0u64; weights.len()];
        let perm = |id: usize, j: u64| {
            let name = nodes.name_of(id as NodeId).as_bytes();
            (xxh64(name, 0) % m + (xxh64(name, 1) % (m - 1) + 1) * j) % m
        };
        let mut table = vec![u32::MAX; m as usize];
        let mut filled = 0;
        let mut round = 1u32;
        while filled < m {
            for id in 0..weights.len() {
                if filled == m || f64::from(round) * weights[id] < targets[id] {
                    continue;
                }
                targets[id] += max_w;
                while table[perm(id, next[id]) as usize] != u32::MAX {
                    next[id] += 1;
                }
                table[perm(id, next[id]) as usize] = id as u32;
                next[id] += 1;
                filled += 1;
            }
            round += 1;
        }
        table
    }

    fn weight() -> impl Strategy<Value = f64> {
        prop_oneof![
            (1u32..6).prop_map(f64::from),
            0.05f64..4.0,
            (-3.0f64..6.0).prop_map(|e| 10f64.powf(e)),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        #[test]
        fn turns_replay_envoys_loops_exactly(
            nodes in prop::collection::btree_map("[a-z]{1,6}", weight(), 1..30),
            m in prop::sample::select(vec![2u64, 3, 7, 17, 101, 257, 1009, 4099]),
        ) {
            prop_assume!(nodes.len() as u64 <= m);
            let nodes = NodeTable::new(nodes.into_iter().map(|(n, w)| Node::new(n).weight(w)))
                .expect("valid nodes");
            prop_assert_eq!(fill(&nodes, m), envoy_fill(&nodes, m));
        }
    }
}
