//! `Maglev`: Google's lookup table, with Envoy's weighted fill.
//!
//! Paper: Eisenbud et al., "Maglev: A Fast and Reliable Software Network
//! Load Balancer", NSDI 2016, §3.4 (pseudocode listing 1). Hashes, node order
//! and weights as in Envoy's `maglev_lb.cc` (compatibility notes §5.1): nodes
//! named like Envoy's hosts give Envoy's table slot for slot.
//!
//! How it works: the table has a prime number `M` of slots. Node `N` prefers
//! the slots `perm[j] = (offset + j·skip) mod M`, j = 0, 1, ..., with
//! `offset = xxh64(N, 0) mod M` and `skip = xxh64(N, 1) mod (M−1) + 1`. As `M`
//! is prime and `skip` in `1..M`, `perm` visits every slot once. Nodes take
//! turns in name order, each claiming its next preferred slot still free,
//! until all `M` are taken. Hash `h` belongs to `table[h mod M]`.
//!
//! Weights (Envoy): `w_i = weight_i / Σ weight`, `max_w = max w_i`, every
//! `target_i` starts at 0. In round `it = 1, 2, ...` node `i` sits out if
//! `it·w_i < target_i`; otherwise `target_i += max_w` and it claims a slot.
//! The heaviest node claims every round, one of half its weight every other
//! round. Example (Envoy's test): `:90` weight 1 and `:91` weight 2 give
//! `w = 1/3, 2/3`. `:91` claims every round; `:90` claims in round 1
//! (`1/3 ≥ 0`), round 2 (`2/3 ≥ 2/3`), not 3 (`1 < 4/3`), then 4, 6, 8, 10;
//! with `M = 17` the table is full in round 11 (`11/3 < 4`): 6 and 11 slots.
//! The build replays Envoy's rounds without visiting nodes that sit out
//! (see `maglev/fill.rs`).
//!
//! Balance: with equal weights every node claims once per round, so the
//! first `M mod N` nodes (in name order) own `⌈M/N⌉` slots and the others
//! `⌊M/N⌋`. With weights, node `i` owns between `M·w_i − N·w_i − 1` and
//! `M·w_i + 2` slots (it claims in about `r·w_i/max_w` of the `r` rounds).
//!
//! Cost: 2 bytes a slot up to 65,536 nodes (128 KiB at the default
//! `M = 65537`), 4 beyond. Lookup is one modulo and one read. Building probes
//! about `M ln M` slots of an L1-sized bitmap: O(M log M).
//!
//! Quirks: not minimally disruptive. A membership change rebuilds the table,
//! and besides the `M/N` slots that must move, others change hands too, more
//! as `N²/M` grows. Measured (removing or adding one node, 40 trials): at
//! `M = 65537`, 1.16 times the optimum with 40 nodes, 1.56 with 100, 3.6
//! with 300: keep `N²` under about `0.4·M` to stay under twice on average.
//! Single changes vary: the worst of about 34,000 random joins and leaves
//! at small N (conformance suite) moved 2.04 times the optimum, so the
//! tests allow at most 3 times. `M` must be prime, at least the node
//! count (every node claims a slot in round 1) and at most 2^24.

use crate::Error;
use crate::algo::params::{self, Param, Params, Pinned, Registered};
use crate::budget::reserve::reserve_peak;
use crate::node::{Node, NodeId, NodeTable};
use crate::placement::{Distinct, Placement};

mod fill;

/// Retry attempts per node before the name-order fallback.
const RETRIES_PER_NODE: u64 = 8;

/// An immutable Maglev table over a node table.
#[derive(Debug, Clone)]
pub struct Maglev {
    nodes: NodeTable,
    table_size: u64,
    slots: Slots,
}

/// Slot owners, as narrow as the node count allows.
#[derive(Debug, Clone)]
enum Slots {
    Narrow(Vec<u16>),
    Wide(Vec<u32>),
}

impl Maglev {
    /// Envoy's and the paper's default table size, a prime.
    pub const DEFAULT_TABLE_SIZE: u64 = params::DEFAULT_TABLE_SIZE;
    /// Largest table size accepted (64 MiB of slots at 4 bytes).
    pub const MAX_TABLE_SIZE: u64 = 1 << 24;

    /// The most heap bytes per slot a build holds at once: the `u32`
    /// owners (4), the taken bitmap (1/8) and the narrowed `u16` copy (2),
    /// rounded up; `tests/peak.rs` measures 6.0 at [`Self::MAX_TABLE_SIZE`]
    /// (100 MB), node table and per-node state aside.
    pub const PEAK_BYTES_PER_SLOT: u64 = 7;

    /// Validates `nodes` and builds a table of `table_size` slots.
    pub fn new(nodes: Vec<Node>, table_size: u64) -> Result<Self, Error> {
        Self::from_table(NodeTable::new(nodes)?, table_size)
    }

    /// Builds a table of `table_size` slots over a validated node table.
    pub fn from_table(nodes: NodeTable, table_size: u64) -> Result<Self, Error> {
        check_table_size(table_size, nodes.len())?;
        reserve_peak(
            "a maglev table",
            table_size.saturating_mul(Self::PEAK_BYTES_PER_SLOT),
        )?;
        let owners = fill::fill(&nodes, table_size);
        let slots = if nodes.len() <= 1 << 16 {
            // Ids are below the node count, so they fit.
            Slots::Narrow(owners.iter().map(|&id| id as u16).collect())
        } else {
            Slots::Wide(owners)
        };
        Ok(Maglev {
            nodes,
            table_size,
            slots,
        })
    }

    /// The number of slots, `M`.
    pub fn table_size(&self) -> u64 {
        self.table_size
    }
}

impl Placement for Maglev {
    /// `table[hash mod M]`; `None` only without nodes. O(1): one read.
    #[inline]
    fn owner(&self, hash: u64) -> Option<NodeId> {
        // `table_size` is a prime, never 0.
        let slot = (hash % self.table_size) as usize;
        match &self.slots {
            Slots::Narrow(s) => s.get(slot).map(|&id| NodeId::from(id)),
            Slots::Wide(s) => s.get(slot).copied(),
        }
    }

    /// Replicas in Envoy's retry order: attempt `a` looks up
    /// `hash XOR (2^64 − a)` (attempt 0 is `hash` itself), skipping nodes
    /// already chosen. After `8·len` attempts (rare: only when asking for
    /// most of the nodes) the nodes still missing follow in name order,
    /// starting after the owner, so the answer always has `min(n, len)`
    /// distinct nodes. The attempt limit depends on the node count only,
    /// so `replicas(r)` is a prefix of `replicas(r + 1)`. O(n) table reads
    /// expected while `n <= len/2`; at most `8·len + len` for any `n`.
    fn replicas_into(&self, hash: u64, n: usize, out: &mut Vec<NodeId>) {
        out.clear();
        let len = self.nodes.len() as NodeId;
        let want = n.min(self.nodes.len());
        let mut picks = Distinct::new(out, want);
        for attempt in 0..u64::from(len).saturating_mul(RETRIES_PER_NODE) {
            if picks.is_full() {
                return;
            }
            if let Some(id) = self.owner(hash ^ attempt.wrapping_neg()) {
                picks.push(id);
            }
        }
        picks.fill_after_first(len);
    }

    /// The members behind the ids.
    fn nodes(&self) -> &NodeTable {
        &self.nodes
    }

    /// Heap bytes held by the slots (the node table aside).
    fn heap_bytes(&self) -> usize {
        match &self.slots {
            Slots::Narrow(s) => s.capacity() * 2,
            Slots::Wide(s) => s.capacity() * 4,
        }
    }
    /// Rebuilds the table with `node`; fails if `M` is below the new count.
    fn with_node(&self, node: Node) -> Result<Self, Error> {
        Self::from_table(self.nodes.with(node)?.0, self.table_size)
    }

    fn without_node(&self, name: &str) -> Result<Self, Error> {
        Self::from_table(self.nodes.without(name)?.0, self.table_size)
    }
}

impl Registered for Maglev {
    /// The table follows from the names, weights and table size.
    fn pin(&self) -> Result<Pinned, Error> {
        Ok(Pinned::default())
    }

    fn table_size(&self) -> Option<u64> {
        Some(Maglev::table_size(self))
    }

    fn build(nodes: Vec<Node>, params: &Params) -> Result<Self, Error> {
        Self::new(nodes, params.table_size)
    }

    const READS: &'static [Param] = &[Param::TableSize];
}

fn check_table_size(size: u64, nodes: usize) -> Result<(), Error> {
    let expected = if size > Maglev::MAX_TABLE_SIZE {
        "a prime number at most 2^24 = 16777216, e.g. 65537"
    } else if !is_prime(size) {
        "a prime number, e.g. 65537"
    } else if size < nodes as u64 {
        "a prime number at least the node count (every node needs a slot), e.g. 65537"
    } else {
        return Ok(());
    };
    Err(Error::InvalidParameter {
        algorithm: "maglev",
        parameter: "table_size",
        value: size.to_string(),
        expected,
    })
}

/// Trial division; `n` is at most 2^24, so at most 2^11 divisions.
fn is_prime(n: u64) -> bool {
    n >= 2 && (2..).take_while(|d| d * d <= n).all(|d| n % d != 0)
}
