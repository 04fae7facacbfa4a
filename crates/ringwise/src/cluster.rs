//! The cluster description: which algorithm, its parameters and the nodes,
//! as one validated value that builds the placement.
//!
//! With the `cluster-file` feature (default) it is read from one TOML
//! document (`cluster/file.rs`):
//!
//! ```toml
//! algorithm = "ring"      # optional, default "ring"
//! hash = "xxh3"           # optional, default: the algorithm's own
//! # hash_tag = "{}"       # optional: hash only the part of a key between the braces
//! vnodes = 160            # optional, default 160 (ring)
//! table_size = 65537      # optional, a prime (maglev)
//! probes = 21             # optional (multiprobe)
//! max_points = 16777216   # optional: the ring's point budget, up to 2^28
//! # flavor = "libmemcached"  # ketama: libmemcached, spymemcached, libketama, twemproxy, uhashring
//! # min_ring_size = 1024    # envoy-ring, grpc-ring
//! # max_ring_size = 8388608 # envoy-ring, grpc-ring
//! # ring_size_cap = 4096    # grpc-ring: gRPC's channel argument
//! # num_tokens = 16         # cassandra: tokens of a node that lists none
//! # capacity = 1024         # anchor, dx: fixed bucket count (default: twice the nodes, at least 256)
//! # removed = [1, 3]        # memento, anchor, dx: buckets whose node left, in the order they left
//! # epsilon = 0.25        # optional: bounded loads for keys looked up together
//! # secret = "00112233445566778899aabbccddeeff"   # required by hash = "siphash"
//!
//! [[nodes]]
//! name = "cache-a"
//! weight = 2              # optional, default 1; fractions allowed
//! zone = "eu-west-1a"     # optional
//! # points = [1, 2]       # ring: this node's points, instead of generated ones
//! # tokens = [-9, 42]     # cassandra: its tokens, as `nodetool ring` shows them
//! # slots = ["0-5460"]    # slots: its slots, as `CLUSTER SLOTS` shows them (all nodes)
//! ```
//!
//! `[[nodes]]` are listed in the peer's order where a peer's placement
//! depends on it (ketama ties, envoy-ring point counts, the buckets of
//! jump, jumpback, binomial, fliphash and memento).
//!
//! `removed` keeps the history of memento, anchor and dx, where any node
//! can leave: the numbers of the buckets whose node left and that no join
//! took back, counted from 0, in the order they left; the `[[nodes]]` fill
//! the other buckets in order. `removed = [1, 3]` over nodes a, b, c puts
//! them on buckets 0, 2, 4, and the next join takes bucket 3 back
//! (`algo/removals.rs`). [`ClusterSpec::pinned`] writes it.
//!
//! Every error names the line and, where there is one, the field. Unknown
//! keys are errors (a typo like `vnode = 100` must not silently mean 160).

use crate::Error;
use crate::algo::{Algorithm, AnyPlacement, Layout};
use crate::layers::{HashTag, Keyed};
use crate::node::{Node, NodeTable};
use crate::param::{Param, Params};
use crate::placement::Placement;

#[cfg(feature = "cluster-file")]
mod file;
pub(crate) mod parts;

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
    /// Node names in the order they were listed: the bucket algorithms'
    /// (jump, jumpback, binomial, fliphash, memento) bucket order (join order), the list order of the compatibility
    /// flavours. Empty means name order.
    pub listed: Vec<String>,
    /// Points, tokens or slots fixed by hand, by node name.
    pub layout: Layout,
    /// Memento, anchor, dx: the buckets whose node left and that no join
    /// has taken back, in the order they left; `listed` fills the other
    /// buckets of `0..nodes + removed` in order. Empty for the rest.
    pub removed: Vec<u32>,
    /// Hash only the tagged part of keys ([`HashTag`]).
    pub hash_tag: Option<HashTag>,
    /// Whether `params.hash` was named (a cluster file's `hash`) rather
    /// than the algorithm's default: a caller that changes the algorithm
    /// or its flavour keeps a named hash and re-derives a default one.
    pub hash_named: bool,
}

impl ClusterSpec {
    /// Builds the placement this spec describes, with its key hash.
    pub fn build(&self) -> Result<Keyed<AnyPlacement>, Error> {
        let placement = AnyPlacement::build_removed(
            self.algorithm,
            self.join_order(),
            &self.params,
            &self.layout,
            &self.removed,
        )?;
        Ok(Keyed::new(placement, self.params.hash).with_hash_tag(self.hash_tag))
    }

    /// The parameters that differ from their defaults but that the
    /// algorithm does not read (`table_size` on a ring...): settings that
    /// do nothing, for a caller to warn about.
    pub fn ignored_params(&self) -> Vec<Param> {
        let reads = self.algorithm.reads();
        self.params
            .differing(&Params::DEFAULT)
            .into_iter()
            .filter(|param| !reads.contains(param))
            .collect()
    }

    /// A stable 64-bit hash of everything that decides placement: the
    /// algorithm, the key hash (with its secret), the hash tag, the
    /// parameters the algorithm reads, `epsilon`, the removed buckets (when
    /// there are any, so older fingerprints stand), and the nodes in listed
    /// order with their weights, zones, ids and given points, tokens or slots.
    /// Two specs with the same fingerprint build the same placement;
    /// clients that follow one store (`ringwise-etcd`) compare it to prove
    /// they hold the same ring. Parameters the algorithm ignores do not
    /// count.
    ///
    /// It is XXH3-64 of a canonical text (format `ringwise-fingerprint-v1`,
    /// one `field=value` line each, names length-prefixed so the text has
    /// one reading, numbers as decimal integers or IEEE bit patterns), so
    /// it is the same on every platform and Rust version. Cost: O(N + P
    /// given), one pass.
    pub fn fingerprint(&self) -> u64 {
        use std::fmt::Write;
        let mut text = String::from("ringwise-fingerprint-v1\n");
        let mut line = |field: &str, value: &dyn std::fmt::Display| {
            // Writing to a String cannot fail.
            let _ = writeln!(text, "{field}={value}");
        };
        line("algorithm", &self.algorithm);
        line("hash", &self.params.hash);
        if let crate::hash::StableHash::SipHash { key } = self.params.hash {
            line("secret", &hex(&key));
        }
        if let Some(tag) = self.hash_tag {
            line("hash_tag", &hex(tag.delimiters().as_bytes()));
        }
        for &param in self.algorithm.reads() {
            line(param.name(), &self.params.get(param));
        }
        if let Some(epsilon) = self.epsilon {
            line("epsilon", &format_args!("{:016x}", epsilon.to_bits()));
        }
        if !self.removed.is_empty() {
            let removed: Vec<String> = self.removed.iter().map(u32::to_string).collect();
            line("removed", &removed.join(","));
        }
        for node in self.join_order() {
            line("node", &sized(&node.name));
            line("weight", &format_args!("{:016x}", node.weight.to_bits()));
            if let Some(zone) = &node.zone {
                line("zone", &sized(zone));
            }
            if let Some(id) = node.id {
                line("id", &id);
            }
            if let Some(given) = self.layout.get(&node.name) {
                line(given.field(), &given.canonical());
            }
        }
        xxhash_rust::xxh3::xxh3_64(text.as_bytes())
    }

    /// The nodes in listed order (name order when `listed` is empty).
    pub fn join_order(&self) -> Vec<Node> {
        if self.listed.is_empty() {
            return self.nodes.iter().cloned().collect();
        }
        let by_id = |name: &String| self.nodes.id(name).and_then(|id| self.nodes.get(id));
        self.listed.iter().filter_map(by_id).cloned().collect()
    }

    /// The spec of `placement` (a snapshot of this spec's algorithm after
    /// membership changes), with the state it needs to be rebuilt exactly
    /// from a file: every node's slot ranges for `slots` (a grown table is
    /// not the balanced layout of its nodes), every token for `cassandra`,
    /// the bucket (join) order for `jump`, `jumpback`, `binomial`,
    /// `fliphash`, `memento`, `anchor` and `dx` (with the capacity of the
    /// last two, and for the last three the buckets removed and not taken
    /// back, in removal order: `removed`), for `ring` the points of every
    /// node whose points are not the generated ones (listed in the file,
    /// allocated, moved). Nodes keep their listed order; new ones follow in
    /// the snapshot's order. O(P + N) (a ring hashes its P points once),
    /// O(16384) for slots, O(capacity) for anchor and dx.
    ///
    /// Fails only for a ring whose point recipe cannot be re-run (the
    /// build's own errors).
    pub fn pinned(&self, placement: &AnyPlacement) -> Result<Self, Error> {
        let nodes = placement.nodes().clone();
        let mut listed: Vec<String> = self
            .join_order()
            .into_iter()
            .map(|n| n.name)
            .filter(|name| nodes.contains(name))
            .collect();
        let mut layout: Layout = self
            .layout
            .iter()
            .filter(|(name, _)| nodes.contains(name))
            .map(|(name, given)| (name.clone(), given.clone()))
            .collect();
        let mut params = self.params;
        let pinned = placement.pin()?;
        if let Some(order) = pinned.order {
            listed = names_of(&nodes, order.into_iter());
        }
        if let Some(given) = pinned.layout {
            layout = given;
        }
        if let Some(capacity) = pinned.capacity {
            params.capacity = capacity;
        }
        let removed = pinned.removed;
        // New nodes follow in the snapshot's order. Which names are listed
        // already is a set, not a scan of `listed` per node (`Vec::contains`
        // here made `plan --add` on 200k jump nodes
        // take 168 s).
        let already: std::collections::HashSet<&str> = listed.iter().map(String::as_str).collect();
        let missing: Vec<String> = nodes
            .iter()
            .filter(|node| !already.contains(node.name.as_str()))
            .map(|node| node.name.clone())
            .collect();
        drop(already);
        listed.extend(missing);
        Ok(ClusterSpec {
            nodes,
            listed,
            layout,
            params,
            removed,
            ..self.clone()
        })
    }
}

/// The names of `ids`, in order.
fn names_of(nodes: &NodeTable, ids: impl Iterator<Item = crate::NodeId>) -> Vec<String> {
    ids.filter_map(|id| nodes.name(id).map(str::to_owned))
        .collect()
}

/// `len:text`: the canonical text has one reading whatever a name holds.
fn sized(text: &str) -> String {
    format!("{}:{text}", text.len())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
