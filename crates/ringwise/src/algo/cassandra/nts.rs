//! Cassandra's `NetworkTopologyStrategy`: a replica count per datacenter,
//! distinct racks first.
//!
//! Source: Cassandra `locator/NetworkTopologyStrategy.java`,
//! `calculateNaturalReplicas` (3.x: `calculateNaturalEndpoints`), which
//! this reproduces step for step, order included; the DataStax
//! python-driver's `NetworkTopologyStrategy.make_token_replica_map` is the
//! peer the tests compare with (`crates/cli/tests/compat/cassandra/nts.rs`).
//!
//! Every node has a datacenter ([`crate::Node::datacenter`]) and a rack
//! (its [`crate::Node::zone`]; a cluster file may call it `rack`). The
//! replication map gives a replica count `rf` per datacenter. For a key,
//! Cassandra walks the ring once from the first token at or after the
//! key's, and offers each token's node to its datacenter's tally:
//!
//! 1. A datacenter that is not in the map, or that has all its replicas,
//!    takes nothing.
//! 2. A node of a rack not yet used in its datacenter is taken.
//! 3. A node of a used rack is taken only while the datacenter may still
//!    repeat racks: `rf - racks` times at most (`racks` counting the
//!    datacenter's racks), so while fewer racks than `rf` exist, the first
//!    nodes met fill the difference, in ring order; a node already taken
//!    is never taken twice.
//!
//! A datacenter wants `min(rf, its node count)` replicas; the walk ends
//! when every datacenter has them (or the ring is walked once). The list
//! is in the order the nodes were taken: the primary first, then the
//! replicas of all datacenters interleaved as the ring meets them, which
//! is the order `nodetool getendpoints` prints.
//!
//! Worked example: one datacenter, racks `r1` (nodes a, b) and `r2`
//! (node c), tokens in ring order a, b, c and `rf = 2`: a (new rack r1) is
//! taken, b (r1 again; `rf - racks = 0` repeats) is skipped, c (new rack
//! r2) is taken: `[a, c]`. With `rf = 3`, one repeat is allowed, so b is
//! taken when met: `[a, b, c]`. (The python-driver takes the same nodes,
//! but orders skipped nodes after the racks: `[a, c, b]`.)
//!
//! Cost: [`NetworkTopology::new`] copies the ring's points (12 bytes
//! each) and numbers the datacenters and racks, O(P + N log N); a lookup
//! is a binary search, then O(points walked): about `sum(rf)` points per
//! key when tokens are spread evenly, up to every point when a datacenter
//! holds few nodes. No allocation per key once the [`Walk`] has grown.

use std::collections::{BTreeMap, HashMap};

use crate::Error;
use crate::algo::ring::RingView;
use crate::node::NodeId;

/// Marks a node whose datacenter has no replicas.
const NO_DC: u32 = u32::MAX;

/// A ring with Cassandra's `NetworkTopologyStrategy` replication.
#[derive(Debug, Clone)]
pub struct NetworkTopology {
    /// The ring's points in ring order, and their owners.
    points: Vec<u64>,
    owners: Vec<NodeId>,
    /// Per node: its datacenter's index in `dcs` (or [`NO_DC`]), and its
    /// rack's number among every (datacenter, rack) pair.
    node_dc: Vec<u32>,
    node_rack: Vec<u32>,
    /// The datacenters that want replicas and have nodes.
    dcs: Vec<Datacenter>,
    racks: usize,
    /// Datacenters of the map without a node, in map order.
    unknown: Vec<String>,
}

#[derive(Debug, Clone, Copy)]
struct Datacenter {
    /// `min(rf, nodes)`: the replicas it wants.
    wanted: u32,
    /// `rf - racks`: the rack repeats it allows (negative: none).
    repeats: i64,
}

/// A lookup's scratch space, reused from key to key.
#[derive(Debug, Clone, Default)]
pub struct Walk {
    generation: u32,
    node_seen: Vec<u32>,
    rack_seen: Vec<u32>,
    left: Vec<(u32, i64)>,
}

impl NetworkTopology {
    /// The strategy on `ring`'s points with `replication`, `(datacenter,
    /// rf)` pairs. Every node needs a datacenter and a rack (zone); a
    /// datacenter named twice is an error; one without nodes is kept aside
    /// ([`NetworkTopology::unknown_datacenters`]), as Cassandra ignores it.
    pub fn new(ring: &dyn RingView, replication: &[(String, u32)]) -> Result<Self, Error> {
        let mut map: HashMap<&str, u32> = HashMap::with_capacity(replication.len());
        for (dc, rf) in replication {
            if map.insert(dc.as_str(), *rf).is_some() {
                return Err(Error::InvalidLayout {
                    node: None,
                    message: format!(
                        "datacenter {dc:?} is given twice in the replication map: give each \
                         datacenter's replica count once"
                    ),
                });
            }
        }
        let nodes = ring.nodes();
        // Datacenters and (datacenter, rack) pairs, numbered in name order.
        let mut per_dc: BTreeMap<&str, (u32, Vec<&str>)> = BTreeMap::new();
        for node in nodes.iter() {
            let missing = |what: &str, field: &str| Error::InvalidLayout {
                node: Some(node.name.clone()),
                message: format!(
                    "NetworkTopologyStrategy places replicas by datacenter and rack, and this \
                     node has no {what}: give every node `{field} = \"...\"` (in --nodes, \
                     NAME@RACK gives the rack)"
                ),
            };
            let dc = node
                .datacenter
                .as_deref()
                .ok_or_else(|| missing("datacenter", "datacenter"))?;
            let rack = node
                .zone
                .as_deref()
                .ok_or_else(|| missing("rack", "rack"))?;
            let entry = per_dc.entry(dc).or_insert((0, Vec::new()));
            entry.0 += 1;
            entry.1.push(rack);
        }
        let mut dcs = Vec::new();
        let mut dc_index: HashMap<&str, u32> = HashMap::new();
        let mut rack_index: HashMap<(&str, &str), u32> = HashMap::new();
        for (dc, (count, racks)) in &mut per_dc {
            racks.sort_unstable();
            racks.dedup();
            for rack in racks.iter() {
                let next = rack_index.len() as u32;
                rack_index.insert((dc, rack), next);
            }
            let rf = map.get(dc).copied().unwrap_or(0);
            if rf > 0 {
                dc_index.insert(dc, dcs.len() as u32);
                dcs.push(Datacenter {
                    wanted: rf.min(*count),
                    repeats: i64::from(rf) - racks.len() as i64,
                });
            }
        }
        let unknown = replication
            .iter()
            .filter(|(dc, _)| !per_dc.contains_key(dc.as_str()))
            .map(|(dc, _)| dc.clone())
            .collect();
        let (node_dc, node_rack) = nodes
            .iter()
            .map(|n| {
                let dc = n.datacenter.as_deref().unwrap_or_default();
                let rack = n.zone.as_deref().unwrap_or_default();
                let index = dc_index.get(dc).copied().unwrap_or(NO_DC);
                (index, rack_index.get(&(dc, rack)).copied().unwrap_or(0))
            })
            .unzip();
        let (points, owners) = ring.points().unzip();
        Ok(NetworkTopology {
            points,
            owners,
            node_dc,
            node_rack,
            dcs,
            racks: rack_index.len(),
            unknown,
        })
    }

    /// The replication map's datacenters that no node is in (Cassandra
    /// places nothing there; usually a misspelt name).
    pub fn unknown_datacenters(&self) -> &[String] {
        &self.unknown
    }

    /// The replicas of the key of ring position `hash` (its token's point),
    /// in Cassandra's order, into `out` (cleared first).
    pub fn replicas_into(&self, hash: u64, out: &mut Vec<NodeId>, walk: &mut Walk) {
        out.clear();
        if self.points.is_empty() || self.dcs.is_empty() {
            return;
        }
        walk.start(self.node_dc.len(), self.racks);
        walk.left.clear();
        walk.left
            .extend(self.dcs.iter().map(|dc| (dc.wanted, dc.repeats)));
        let mut to_fill = self.dcs.iter().filter(|dc| dc.wanted > 0).count();
        let start = self.points.partition_point(|&p| p < hash);
        let len = self.points.len();
        for step in 0..len {
            if to_fill == 0 {
                break;
            }
            let node = self.owners[(start + step) % len];
            let dc = self.node_dc[node as usize];
            if dc == NO_DC {
                continue;
            }
            let (left, repeats) = &mut walk.left[dc as usize];
            if *left == 0 {
                continue;
            }
            let rack = self.node_rack[node as usize] as usize;
            let seen = &mut walk.node_seen[node as usize];
            if walk.rack_seen[rack] != walk.generation {
                // A new rack, hence a new node.
                walk.rack_seen[rack] = walk.generation;
            } else if *repeats <= 0 || *seen == walk.generation {
                continue;
            } else {
                *repeats -= 1;
            }
            *seen = walk.generation;
            out.push(node);
            *left -= 1;
            if *left == 0 {
                to_fill -= 1;
            }
        }
    }
}

impl Walk {
    /// Starts a lookup over `nodes` nodes and `racks` racks: a new
    /// generation, so nothing is marked seen.
    fn start(&mut self, nodes: usize, racks: usize) {
        self.node_seen.resize(nodes, 0);
        self.rack_seen.resize(racks, 0);
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            self.node_seen.fill(0);
            self.rack_seen.fill(0);
            self.generation = 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo::cassandra::Tokens;
    use crate::algo::params::{Given, Layout, Params, Registered};
    use crate::algo::ring::Ring;
    use crate::hash::token_point;
    use crate::node::Node;
    use crate::placement::Placement;

    /// A ring of `(name, dc, rack, token)` nodes, one token each.
    fn ring(nodes: &[(&str, &str, &str, i64)]) -> Ring<Tokens> {
        let mut layout = Layout::new();
        let list = nodes
            .iter()
            .map(|&(name, dc, rack, token)| {
                layout.insert(name.into(), Given::Tokens(vec![token]));
                Node::new(name).zone(rack).datacenter(dc)
            })
            .collect();
        Ring::<Tokens>::build_with(list, &Params::DEFAULT, &layout).expect("builds")
    }

    fn replicas(ring: &Ring<Tokens>, map: &[(&str, u32)], token: i64) -> Vec<String> {
        let map: Vec<(String, u32)> = map.iter().map(|&(d, r)| (d.into(), r)).collect();
        let nts = NetworkTopology::new(ring, &map).expect("valid");
        let mut out = Vec::new();
        nts.replicas_into(token_point(token), &mut out, &mut Walk::default());
        out.iter()
            .map(|&id| ring.nodes().name(id).unwrap_or_default().to_owned())
            .collect()
    }

    #[test]
    fn the_worked_example() {
        let r = ring(&[
            ("a", "dc1", "r1", 0),
            ("b", "dc1", "r1", 10),
            ("c", "dc1", "r2", 20),
        ]);
        assert_eq!(replicas(&r, &[("dc1", 2)], -5), ["a", "c"]);
        assert_eq!(replicas(&r, &[("dc1", 3)], -5), ["a", "b", "c"]);
        // From b: b (r1), c (r2); then a (r1) is a repeat, allowed once.
        assert_eq!(replicas(&r, &[("dc1", 3)], 5), ["b", "c", "a"]);
        assert_eq!(replicas(&r, &[("dc1", 9)], 5), ["b", "c", "a"]);
    }

    #[test]
    fn datacenters_interleave_in_ring_order() {
        let r = ring(&[
            ("a", "dc1", "r1", 0),
            ("x", "dc2", "r1", 5),
            ("b", "dc1", "r2", 10),
            ("y", "dc2", "r2", 15),
            ("c", "dc1", "r1", 20),
        ]);
        assert_eq!(replicas(&r, &[("dc1", 2), ("dc2", 1)], 1), ["x", "b", "c"]);
        assert_eq!(replicas(&r, &[("dc2", 2)], 1), ["x", "y"]);
        // A datacenter out of the map takes nothing.
        assert_eq!(replicas(&r, &[("dc1", 1)], 1), ["b"]);
    }

    #[test]
    fn a_node_without_a_datacenter_is_refused() {
        let mut layout = Layout::new();
        layout.insert("a".into(), Given::Tokens(vec![0]));
        let r =
            Ring::<Tokens>::build_with(vec![Node::new("a").zone("r1")], &Params::DEFAULT, &layout)
                .expect("builds");
        let e = NetworkTopology::new(&r, &[("dc1".into(), 1)]).expect_err("refused");
        assert!(e.to_string().contains("no datacenter"), "{e}");
        assert!(r.len() == 1);
    }
}
