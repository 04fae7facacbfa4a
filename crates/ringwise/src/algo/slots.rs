//! `Slots`: Redis Cluster's 16384 hash slots, owned by nodes through a table.
//!
//! Reference: the Redis Cluster specification; `keyHashSlot` in
//! `redis/redis src/cluster.c` ([`crate::key_slot`], see `hash/redis_crc16.rs`);
//! `clusterManagerCommandCreate` in `redis/redis src/redis-cli.c` for the
//! initial layout.
//!
//! How it works: a key's slot is `CRC16(hash tag) & 0x3FFF` and a fixed
//! table says which node owns each slot. [`Placement::owner`] takes the slot
//! from the hash, `hash % 16384`; with the [`crate::RedisSlot`] hasher the hash *is*
//! the slot, so generic keyed lookups land where Redis would.
//!
//! The table changes only by these documented, deterministic steps:
//! - **Build** (nodes that list no slots, `slot_layout` chooses how):
//!   - `redis-cli` (the default): what `redis-cli --cluster create` gives the
//!     same masters listed in name order, replicas 0 (`clusterManagerCommandCreate`):
//!     masters dealt one host at a time (`10.0.0.1:7000`, `10.0.0.2:7000`,
//!     `10.0.0.1:7001`, ...), each taking the next contiguous run of a
//!     32-bit float cursor advanced by `16384 / N` and rounded with
//!     `lround`. For 3 nodes: 0–5460, 5461–10922, 10923–16383.
//!   - `even`: node `i` of `N` (name order) gets `[i·16384/N, (i+1)·16384/N)`
//!     in integers. For 3 nodes: 0–5460, 5461–10921, 10922–16383.
//!
//!   Both give every node `floor` or `ceil` of `16384 / N` slots; they
//!   differ in where the odd slots fall (`tests/slots_properties.rs` and the
//!   CLI's `compat/redis_create.rs`, which compares with a real
//!   `redis-cli --cluster create` for 3 to 6 masters). Name order, not
//!   listed order, so that the same nodes in any order are the same
//!   cluster, as for ringwise's other order-free algorithms: list them to
//!   redis-cli in name order to get the same table. Real clusters are
//!   read from `CLUSTER NODES` and set with [`Slots::migrate`], not rebuilt.
//! - **Add** a node to `N`: it takes exactly `floor(16384 / (N+1))` slots,
//!   one at a time, each the highest-numbered slot of the node that holds the
//!   most slots at that moment (ties: the smaller id, i.e. name). Worked
//!   example, 3 → 4 nodes with 5461/5461/5462 slots (the `even` layout): the new node needs
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

use crate::algo::params::{Given, Layout, Param, Params, Pinned, Registered};
use crate::hash::{SLOT_COUNT, StableHash};
use crate::node::{Node, NodeId, NodeTable};
use crate::param::SlotLayout;
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
    /// Validates `nodes` and builds the layout `redis-cli --cluster create`
    /// gives them ([`SlotLayout::RedisCli`]).
    pub fn new(nodes: impl IntoIterator<Item = Node>) -> Result<Self, Error> {
        Self::from_table(NodeTable::new(nodes)?)
    }

    /// Validates `nodes` and builds the contiguous `layout`.
    pub fn with_layout(
        nodes: impl IntoIterator<Item = Node>,
        layout: SlotLayout,
    ) -> Result<Self, Error> {
        Self::laid_out(NodeTable::new(nodes)?, layout)
    }

    /// Builds the default contiguous layout over a validated node table.
    pub fn from_table(nodes: NodeTable) -> Result<Self, Error> {
        Self::laid_out(nodes, SlotLayout::default())
    }

    /// Builds the contiguous `layout` over a validated node table. O(16384 + N).
    fn laid_out(nodes: NodeTable, layout: SlotLayout) -> Result<Self, Error> {
        check(&nodes)?;
        let n = nodes.len();
        let mut table = vec![0u16; if n == 0 { 0 } else { SLOT_COUNT }];
        match layout {
            SlotLayout::Even => {
                for i in 0..n {
                    table[i * SLOT_COUNT / n..(i + 1) * SLOT_COUNT / n].fill(i as u16);
                }
            }
            _ => {
                let ranges = redis_cli_ranges(n)?;
                for (id, range) in redis_cli_order(&nodes).into_iter().zip(ranges) {
                    table[range].fill(id);
                }
            }
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

/// The masters in the order `redis-cli --cluster create` deals slots to
/// them when given the names in name (id) order: its `interleaved` list,
/// which takes one node of each host in turn (hosts in order of first
/// appearance), so that consecutive ranges land on different machines.
/// The host is the text before the last `:` (after dropping a `@bus`
/// port), as its `parseClusterNodeAddress` reads `ip:port[@bus]`; a name
/// without `:` is a host of its own. O(N log N).
fn redis_cli_order(nodes: &NodeTable) -> Vec<u16> {
    let host = |name: &str| -> String {
        let name = name.rsplit_once('@').map_or(name, |(addr, _)| addr);
        name.rsplit_once(':')
            .map_or(name, |(host, _)| host)
            .to_owned()
    };
    // Each host's ids, hosts in order of first appearance.
    let mut hosts: Vec<(String, std::collections::VecDeque<u16>)> = Vec::new();
    let mut index = std::collections::HashMap::new();
    for (id, node) in nodes.iter().enumerate() {
        let h = host(&node.name);
        let at = *index.entry(h.clone()).or_insert_with(|| {
            hosts.push((h, Default::default()));
            hosts.len() - 1
        });
        hosts[at].1.push_back(id as u16);
    }
    let mut order = Vec::with_capacity(nodes.len());
    while order.len() < nodes.len() {
        for (_, ids) in &mut hosts {
            if let Some(id) = ids.pop_front() {
                order.push(id);
            }
        }
    }
    order
}

/// The slot range of each of `masters` masters, in deal order, as
/// `clusterManagerCommandCreate` in redis-cli computes them: a 32-bit
/// float cursor advanced by `16384 / masters`, each range ending at
/// `lround(cursor + slots_per_node - 1)` (the last at 16383) and the next
/// starting after it. The same f32 operations in the same order give the
/// same roundings (IEEE 754 single precision, as the C code's `float` on
/// every platform Redis builds on). For 3 masters: 0-5460, 5461-10922,
/// 10923-16383 (the integer split ends the second at 10921). O(masters).
///
/// From 7542 masters on (and for 2989 counts up to 16384), the float's
/// rounding drifts so far that redis-cli's ranges run past slot 16383
/// before the last master (it would write past its slot array): refused,
/// naming `slot_layout = "even"`. Redis advises at most about 1000.
pub(crate) fn redis_cli_ranges(masters: usize) -> Result<Vec<std::ops::Range<usize>>, Error> {
    let last_slot = SLOT_COUNT as i64 - 1;
    let slots_per_node = SLOT_COUNT as f32 / masters as f32;
    let mut ranges = Vec::with_capacity(masters);
    let mut first: i64 = 0;
    let mut cursor: f32 = 0.0;
    for i in 0..masters {
        let mut last = (cursor + slots_per_node - 1.0).round() as i64;
        if last > SLOT_COUNT as i64 || i == masters - 1 {
            last = last_slot;
        }
        if last < first {
            last = first;
        }
        if last > last_slot {
            return Err(Error::InvalidParameter {
                algorithm: ALGORITHM,
                parameter: "slot_layout",
                value: format!("\"redis-cli\" over {masters} nodes"),
                expected: "at most 7541 nodes for redis-cli's layout (its float cursor runs \
                           past slot 16383 for some counts above that); give \
                           `slot_layout = \"even\"` (--slot-layout even), or list each \
                           node's slots",
            });
        }
        ranges.push(first as usize..last as usize + 1);
        first = last + 1;
        cursor += slots_per_node;
    }
    Ok(ranges)
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

    fn build(nodes: Vec<Node>, params: &Params) -> Result<Self, Error> {
        Self::with_layout(nodes, params.slot_layout)
    }

    const READS: &'static [Param] = &[Param::SlotLayout];

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redis_cli_ranges_of_three_masters() {
        assert_eq!(
            redis_cli_ranges(3).expect("3 masters"),
            [0..5461, 5461..10923, 10923..16384]
        );
    }

    /// Every node count up to 7541 gets ranges that follow each other from
    /// 0 to 16383, each at least one slot; the first count whose float
    /// cursor overruns is refused, not clamped into another layout.
    #[test]
    fn redis_cli_ranges_cover_every_slot_once() {
        for masters in 1..=7541 {
            let ranges = redis_cli_ranges(masters).expect("within the limit");
            let mut next = 0;
            for r in &ranges {
                assert_eq!(r.start, next, "{masters} masters: {ranges:?}");
                assert!(r.end > r.start, "{masters} masters: empty range");
                next = r.end;
            }
            assert_eq!(next, SLOT_COUNT, "{masters} masters");
        }
        let refused = redis_cli_ranges(7542).expect_err("overruns");
        assert!(refused.to_string().contains("even"), "{refused}");
    }
}
