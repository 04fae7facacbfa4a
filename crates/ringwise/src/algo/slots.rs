//! `Slots`: Redis Cluster's 16384 hash slots, owned by nodes through a table.
//!
//! Reference: the Redis Cluster specification; `keyHashSlot` in
//! `redis/redis src/cluster.c` ([`crate::key_slot`], see `hash/redis_crc16.rs`);
//! `redis-cli --cluster create` for the initial layout.
//!
//! How it works: a key's slot is `CRC16(hash tag) & 0x3FFF` and a fixed
//! table says which node owns each slot. [`Placement::owner`] takes the slot
//! from the hash, `hash % 16384`; with the [`crate::RedisSlot`] hasher the hash *is*
//! the slot, so generic keyed lookups land where Redis would.
//!
//! The table changes only by these documented, deterministic steps:
//! - **Build**: node `i` of `N` (name order) gets the contiguous slots
//!   `[i·16384/N, (i+1)·16384/N)`. For 3 nodes: 0–5460, 5461–10921,
//!   10922–16383. (`redis-cli --cluster create` rounds a float cursor
//!   instead and gives 0–5460, 5461–10922, 10923–16383: the same sizes,
//!   placed differently. Real clusters are read from `CLUSTER SLOTS` and set
//!   with [`Slots::migrate`], not rebuilt.)
//! - **Add** a node to `N`: it takes exactly `floor(16384 / (N+1))` slots,
//!   one at a time, each the highest-numbered slot of the node that holds the
//!   most slots at that moment (ties: the smaller id, i.e. name). Worked
//!   example, 3 → 4 nodes with 5461/5461/5462 slots: the new node needs
//!   4096; the third node gives 16383 first (5462 > 5461), then the three
//!   take turns from their tops, ending at 4096 each.
//! - **Remove** a node: its slots, in ascending order, go one at a time to
//!   the remaining node that holds the fewest slots at that moment (ties:
//!   the smaller id).
//! - **Migrate** one slot to a named node: the operator's explicit move.
//!
//! Guarantees: after any build/add/remove sequence every node holds
//! `floor` or `ceil` of `16384 / N` slots (loads start within one of each
//! other, and taking from the fullest or giving to the emptiest keeps them
//! so). Adding moves exactly the new node's slots; removing moves exactly
//! the removed node's. The table depends on the node set only at build;
//! afterwards on the history of changes, like a real cluster.
//!
//! Cost: 2 bytes per slot (ids fit `u16` because at most 16384 nodes are
//! allowed, one slot each), 32 KiB per snapshot. Lookup is one array read.
//! Changes copy the table and are O(16384 + moved·N).
//!
//! Quirks: Redis has no weights, so weights other than 1 are refused rather
//! than silently ignored. Redis replicas are extra servers, not placement;
//! [`Slots::replicas_into`] returns the owner and then the next nodes in
//! name order, wrapping (chained declustering), in O(n).

use crate::Error;
use std::ops::RangeInclusive;

use crate::algo::params::{Given, Layout, Params, Pinned, Registered};
use crate::hash::{SLOT_COUNT, StableHash};
use crate::node::{Node, NodeId, NodeTable};
use crate::placement::Placement;

const ALGORITHM: &str = "slots";

/// An immutable Redis Cluster slot table.
#[derive(Debug, Clone)]
pub struct Slots {
    nodes: NodeTable,
    /// Owner id of each slot; empty when there is no node.
    table: Box<[u16]>,
}

impl Slots {
    /// Validates `nodes` and builds the balanced contiguous layout.
    pub fn new(nodes: impl IntoIterator<Item = Node>) -> Result<Self, Error> {
        Self::from_table(NodeTable::new(nodes)?)
    }

    /// Builds the balanced contiguous layout over a validated node table.
    pub fn from_table(nodes: NodeTable) -> Result<Self, Error> {
        check(&nodes)?;
        let n = nodes.len();
        let mut table = vec![0u16; if n == 0 { 0 } else { SLOT_COUNT }];
        for i in 0..n {
            table[i * SLOT_COUNT / n..(i + 1) * SLOT_COUNT / n].fill(i as u16);
        }
        Ok(Slots {
            nodes,
            table: table.into(),
        })
    }

    /// Number of slots each node holds, by id.
    pub fn slot_counts(&self) -> Vec<usize> {
        let mut counts = vec![0; self.nodes.len()];
        for &id in self.table.iter() {
            counts[usize::from(id)] += 1;
        }
        counts
    }

    /// A new snapshot where `slot` belongs to the node called `node`.
    pub fn migrate(&self, slot: u16, node: &str) -> Result<Self, Error> {
        if usize::from(slot) >= SLOT_COUNT {
            return Err(Error::InvalidParameter {
                algorithm: ALGORITHM,
                parameter: "slot",
                value: slot.to_string(),
                expected: "a slot number from 0 to 16383",
            });
        }
        let id = self.nodes.id(node).ok_or_else(|| Error::UnknownNode {
            name: node.to_owned(),
        })?;
        let mut table = self.table.clone();
        table[usize::from(slot)] = id as u16;
        Ok(Slots {
            nodes: self.nodes.clone(),
            table,
        })
    }
}

/// Gives `range` to `id`, refusing a slot past 16383 or one already owned.
fn claim(
    owner: &mut [Option<u16>],
    range: &RangeInclusive<u16>,
    id: u16,
    nodes: &NodeTable,
) -> Result<(), Error> {
    let name = |id: u16| nodes.name(NodeId::from(id)).unwrap_or("?").to_owned();
    let (start, end) = (usize::from(*range.start()), usize::from(*range.end()));
    if start > end || end >= SLOT_COUNT {
        return Err(Error::InvalidLayout {
            node: Some(name(id)),
            message: format!(
                "slots {start}-{end}: a range runs from a lower to a higher slot, \
                 both from 0 to 16383"
            ),
        });
    }
    for (slot, owned) in owner.iter_mut().enumerate().take(end + 1).skip(start) {
        if let Some(other) = owned.replace(id) {
            return Err(Error::InvalidLayout {
                node: Some(name(id)),
                message: format!(
                    "slot {slot} is also node {:?}'s: every slot belongs to one node",
                    name(other)
                ),
            });
        }
    }
    Ok(())
}

/// The error for a table with slots no one owns, naming the first ranges.
fn uncovered(owner: &[Option<u16>]) -> Error {
    let mut ranges: Vec<String> = Vec::new();
    let mut slot = 0;
    while slot < owner.len() {
        if owner[slot].is_some() {
            slot += 1;
            continue;
        }
        let start = slot;
        while slot < owner.len() && owner[slot].is_none() {
            slot += 1;
        }
        ranges.push(match slot - 1 {
            end if end == start => start.to_string(),
            end => format!("{start}-{end}"),
        });
    }
    let shown = ranges.len().min(5);
    let more = if ranges.len() > shown { ", ..." } else { "" };
    Error::InvalidLayout {
        node: None,
        message: format!(
            "slots {}{more} belong to no node: every one of the 16384 slots needs an owner",
            ranges[..shown].join(", ")
        ),
    }
}

/// Refuses weights (Redis has none) and more nodes than slots.
fn check(nodes: &NodeTable) -> Result<(), Error> {
    if nodes.len() > SLOT_COUNT {
        return Err(Error::InvalidParameter {
            algorithm: ALGORITHM,
            parameter: "nodes",
            value: nodes.len().to_string(),
            expected: "at most 16384 nodes (one slot each)",
        });
    }
    if nodes.iter().any(|n| n.weight != 1.0) {
        return Err(Error::Unsupported {
            algorithm: ALGORITHM,
            operation: "weigh nodes".into(),
            reason: "Redis Cluster slots have no weights; leave every weight at 1",
            node: None,
        });
    }
    Ok(())
}

impl Placement for Slots {
    /// The owner of slot `hash % 16384`; `None` without nodes. O(1): one
    /// read.
    #[inline]
    fn owner(&self, hash: u64) -> Option<NodeId> {
        let slot = (hash % SLOT_COUNT as u64) as usize;
        self.table.get(slot).map(|&id| NodeId::from(id))
    }

    /// The owner, then the next `n - 1` ids in name order, wrapping. O(n).
    fn replicas_into(&self, hash: u64, n: usize, out: &mut Vec<NodeId>) {
        out.clear();
        let Some(first) = self.owner(hash) else {
            return;
        };
        let len = self.nodes.len() as NodeId;
        out.extend((0..n.min(self.nodes.len()) as NodeId).map(|k| (first + k) % len));
    }

    /// The node table behind the ids.
    fn nodes(&self) -> &NodeTable {
        &self.nodes
    }

    /// The slot table: one `u16` per slot.
    fn heap_bytes(&self) -> usize {
        self.table.len() * 2
    }

    /// A new snapshot with `node` added; it takes `floor(16384 / (N+1))`
    /// slots from the fullest nodes, highest slots first.
    fn with_node(&self, node: Node) -> Result<Self, Error> {
        let (nodes, at) = self.nodes.with(node)?;
        check(&nodes)?;
        if self.table.is_empty() {
            return Self::from_table(nodes);
        }
        let at = at as u16;
        let mut table: Vec<u16> = self
            .table
            .iter()
            .map(|&id| id + u16::from(id >= at))
            .collect();
        // Slots of each node in ascending order, so `pop` gives the highest.
        let mut held = vec![Vec::new(); nodes.len()];
        for (slot, &id) in table.iter().enumerate() {
            held[usize::from(id)].push(slot);
        }
        for _ in 0..SLOT_COUNT / nodes.len() {
            let donor = (0..held.len())
                .max_by(|&a, &b| held[a].len().cmp(&held[b].len()).then(b.cmp(&a)))
                .unwrap_or(0);
            if let Some(slot) = held[donor].pop() {
                table[slot] = at;
            }
        }
        Ok(Slots {
            nodes,
            table: table.into(),
        })
    }

    /// A new snapshot without the node called `name`; its slots, ascending,
    /// go one at a time to the node with the fewest slots.
    fn without_node(&self, name: &str) -> Result<Self, Error> {
        let (nodes, at) = self.nodes.without(name)?;
        if nodes.is_empty() {
            return Self::from_table(nodes);
        }
        let at = at as u16;
        let mut counts = self.slot_counts();
        counts[usize::from(at)] = usize::MAX;
        let mut table = self.table.to_vec();
        for id in table.iter_mut().filter(|id| **id == at) {
            let (taker, _) = counts
                .iter()
                .enumerate()
                .min_by_key(|&(i, &c)| (c, i))
                .unwrap_or((0, &0));
            counts[taker] += 1;
            *id = taker as u16;
        }
        for id in &mut table {
            *id -= u16::from(*id > at);
        }
        Ok(Slots {
            nodes,
            table: table.into(),
        })
    }
}

impl Slots {
    /// Every node's slots, as inclusive runs in slot order. O(16384).
    fn layout(&self) -> Layout {
        let mut runs: Layout = Layout::new();
        let mut slot = 0u64;
        while slot < SLOT_COUNT as u64 {
            let Some(id) = self.owner(slot) else {
                break;
            };
            let start = slot;
            while slot + 1 < SLOT_COUNT as u64 && self.owner(slot + 1) == Some(id) {
                slot += 1;
            }
            let name = self.nodes().name(id).unwrap_or_default().to_owned();
            let runs = runs.entry(name).or_insert_with(|| Given::Slots(Vec::new()));
            if let Given::Slots(ranges) = runs {
                ranges.push(start as u16..=slot as u16);
            }
            slot += 1;
        }
        runs
    }
}

impl Registered for Slots {
    /// Every node's slot ranges: a grown table is not the balanced layout
    /// of its nodes.
    fn pin(&self) -> Result<Pinned, Error> {
        Ok(Pinned {
            layout: Some(self.layout()),
            ..Pinned::default()
        })
    }

    fn table_size(&self) -> Option<u64> {
        Some(SLOT_COUNT as u64)
    }

    fn build(nodes: Vec<Node>, _: &Params) -> Result<Self, Error> {
        Self::new(nodes)
    }

    /// With a layout, the table as given (`CLUSTER SLOTS`): every slot
    /// owned by exactly one node.
    fn build_with(nodes: Vec<Node>, params: &Params, layout: &Layout) -> Result<Self, Error> {
        if layout.is_empty() {
            return Self::build(nodes, params);
        }
        let nodes = NodeTable::new(nodes)?;
        check(&nodes)?;
        let mut owner: Vec<Option<u16>> = vec![None; SLOT_COUNT];
        for (name, given) in layout {
            let id = nodes.id(name).unwrap_or(0) as u16;
            let Given::Slots(ranges) = given else {
                return Err(Error::InvalidLayout {
                    node: Some(name.clone()),
                    message: format!(
                        "`{}` is not read by slots: give its slots as `slots = [\"0-5460\"]`",
                        given.field()
                    ),
                });
            };
            for range in ranges {
                claim(&mut owner, range, id, &nodes)?;
            }
        }
        let table = owner
            .iter()
            .map(|o| o.ok_or(()))
            .collect::<Result<Vec<u16>, ()>>()
            .map_err(|()| uncovered(&owner))?;
        Ok(Slots {
            nodes,
            table: table.into(),
        })
    }

    fn default_hash() -> StableHash {
        StableHash::RedisCrc16
    }

    fn accepts_hash(_: StableHash) -> bool {
        true
    }
}
