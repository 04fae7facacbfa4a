//! `Ring`: the Karger ring with virtual nodes (the seed recipe), built from
//! points.
//!
//! Paper: Karger, Lehman, Leighton, Panigrahy, Levine, Lewin, "Consistent
//! Hashing and Random Trees", STOC 1997; virtual nodes and replica lists as in
//! DeCandia et al., "Dynamo", SOSP 2007.
//!
//! How it works: every node has points on a circle of `2^64` hashes; a key
//! belongs to the node of the first point `>=` its hash, wrapping past the
//! largest point to the first. Where the points come from is the ring's
//! [`PointScheme`] (`ring/points.rs`): by default [`Vnodes`], node `N` of
//! weight `w` at `hash("N#0")`, `hash("N#1")`, ... for `round(vnodes·w)`
//! points. Equal points rank by the ring's [`Tie`] rule, by default node
//! name, so ties never depend on insertion order. With the `md5` hash and
//! integer weights this is the Python `ConsistentHashRing` of the seed
//! article bit for bit: its list of `(point, name)` tuples sorts exactly like
//! our `(point, id)` pairs because ids are assigned in name order (Python
//! compares `str` by code point, which is UTF-8 byte order).
//!
//! A node's [`Vnodes`] points depend only on its own name and weight, so
//! adding a node moves keys only to it and removing one moves only its keys
//! (monotonicity).
//!
//! Cost: `P` points take 12 bytes each (`u64` point + `u32` owner label,
//! packed) plus a bucket index of 2.25 to 4.5 bytes per point and 4 per node
//! (`ring/index.rs`). `owner` is O(1) expected: one read of a `u16` slot
//! answers about half of all hashes (those whose bucket holds no point), the
//! others read the bucket's first two entries too. The batch call overlaps
//! these reads across 128 hashes. Building sorts by bucket in O(P); adding
//! or removing a node merges sorted lists in O(P) (runs of entries copied
//! with `memcpy`: owners are labels that other nodes' changes leave alone),
//! without rehashing anyone else.
//!
//! Quirks: weights are rounded to whole points, so a weight below
//! `0.5 / vnodes` still gets one point. Replica walks are O(points visited),
//! which is small unless a node with very few points is asked for.

use crate::Error;
use crate::algo::params::{Given, Layout, Param, Params, Pinned, Registered};
use crate::budget::reserve::reserve_peak;
use crate::budget::{MAX_POINTS, MAX_POINTS_CEILING, PEAK_BYTES_PER_POINT};
use crate::hash::{KeyHasher, StableHash};
use crate::node::{Node, NodeId, NodeTable};
use crate::placement::{Distinct, Placement};
use crate::stats::PlacementStats;

mod index;
pub(crate) mod points;
pub(crate) mod view;

pub(crate) use points::numbered_texts;
pub use points::{DEFAULT_VNODES, Explicit, Members, PointScheme, Vnodes, Width, point_count};
pub use view::RingView;

use index::{BLOCK, BucketIndex, Entry};

/// Zone-aware picks scan the zones taken up to this many picks, then keep
/// a set.
const LINEAR_ZONES: usize = 16;

/// How equal points rank: the first in this order owns the hashes up to
/// the point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Tie {
    /// By node name (bytes): independent of input order. The seed recipe's.
    #[default]
    ByName,
    /// The node listed first wins (libmemcached's order).
    FirstListed,
    /// The node listed (added) last wins (uhashring's dict overwrite).
    LastListed,
}

/// An immutable ring. Build it with [`Ring::builder`]; change membership
/// with [`Placement::with_node`] / [`Placement::without_node`], which return
/// new snapshots.
#[derive(Debug, Clone)]
pub struct Ring<S = Vnodes> {
    scheme: S,
    tie: Tie,
    nodes: NodeTable,
    /// Listed position of each id (the builder's order, then join order);
    /// read only by list-order ties.
    listed: Vec<u32>,
    /// Sorted by `(point, tie rank of owner)`; owners are labels, which
    /// `index` maps to ids.
    entries: Vec<Entry>,
    index: BucketIndex,
    /// The point budget, kept for membership changes.
    max_points: u64,
}

/// Collects the scheme, tie rule and nodes of a [`Ring`]; nothing is
/// checked until [`RingBuilder::build`].
#[derive(Debug, Clone)]
#[must_use = "a builder does nothing until `build()`"]
pub struct RingBuilder<S = Vnodes> {
    scheme: S,
    tie: Tie,
    nodes: Vec<(Node, Option<Vec<u64>>)>,
    max_points: u64,
}

impl Ring {
    /// A builder with the defaults: [`Vnodes`] of `xxh3` with
    /// [`DEFAULT_VNODES`], ties by name, no nodes.
    pub fn builder() -> RingBuilder {
        RingBuilder {
            scheme: Vnodes::unchecked(DEFAULT_VNODES, StableHash::default()),
            tie: Tie::ByName,
            nodes: Vec::new(),
            max_points: MAX_POINTS,
        }
    }
}

impl<H: KeyHasher> RingBuilder<Vnodes<H>> {
    /// Hashes the point texts `"name#i"` with `hasher` (keys go through
    /// [`crate::Keyed`]; give it the same hash for the seed recipe).
    pub fn hasher<H2: KeyHasher>(self, hasher: H2) -> RingBuilder<Vnodes<H2>> {
        RingBuilder {
            scheme: self.scheme.with_hasher(hasher),
            tie: self.tie,
            nodes: self.nodes,
            max_points: self.max_points,
        }
    }

    /// Virtual nodes per unit of weight.
    pub fn vnodes(mut self, vnodes: u32) -> Self {
        self.scheme.set_vnodes(vnodes);
        self
    }
}

impl<S: PointScheme> RingBuilder<S> {
    /// Makes points with another scheme.
    pub fn scheme<S2: PointScheme>(self, scheme: S2) -> RingBuilder<S2> {
        RingBuilder {
            scheme,
            tie: self.tie,
            nodes: self.nodes,
            max_points: self.max_points,
        }
    }

    /// How equal points rank.
    pub fn tie(mut self, tie: Tie) -> Self {
        self.tie = tie;
        self
    }

    /// The point budget: `build` (and later joins) refuse a ring of more
    /// points. From 1 to [`MAX_POINTS_CEILING`]; default [`MAX_POINTS`].
    pub fn max_points(mut self, max_points: u64) -> Self {
        self.max_points = max_points;
        self
    }

    /// Adds one node; the scheme makes its points.
    pub fn node(mut self, node: Node) -> Self {
        self.nodes.push((node, None));
        self
    }

    /// Adds nodes; the scheme makes their points.
    pub fn nodes(mut self, nodes: impl IntoIterator<Item = Node>) -> Self {
        self.nodes.extend(nodes.into_iter().map(|n| (n, None)));
        self
    }

    /// Adds a node with exactly these points (any order, repeats allowed).
    pub fn node_points(mut self, node: Node, points: impl IntoIterator<Item = u64>) -> Self {
        self.nodes.push((node, Some(points.into_iter().collect())));
        self
    }

    /// Validates everything and builds the ring. O(P) expected.
    pub fn build(self) -> Result<Ring<S>, Error> {
        self.scheme.validate()?;
        check_budget(self.max_points)?;
        let order: Vec<Node> = self.nodes.iter().map(|(n, _)| n.clone()).collect();
        let nodes = NodeTable::new(order.iter().cloned())?;
        let listed = listed_positions(&nodes, &order);
        let mut given: Vec<Option<Vec<u64>>> = vec![None; nodes.len()];
        for (node, points) in self.nodes {
            if let Some(id) = nodes.id(&node.name) {
                given[id as usize] = points;
            }
        }
        let is_given: Vec<bool> = given.iter().map(Option::is_some).collect();
        let limit = self.max_points;
        let members = Members {
            nodes: &nodes,
            listed: &listed,
        };
        let entries = generate(&self.scheme, &members, limit, |id| {
            given[id as usize].take()
        })?;
        let ring = Ring::assemble(self.scheme, self.tie, nodes, listed, entries);
        if is_given.contains(&true) && !ring.scheme.shares_given_points() {
            ring.refuse_shared_given(|id, _| is_given[id as usize])?;
        }
        Ok(Ring {
            max_points: limit,
            ..ring
        })
    }
}

impl<S: PointScheme> Ring<S> {
    /// Builds a ring over an already validated node table, every node's
    /// points made by `scheme`, ties by name. O(P) expected.
    pub fn from_table(nodes: NodeTable, scheme: S) -> Result<Self, Error> {
        Ring::from_table_within(nodes, scheme, MAX_POINTS)
    }

    /// [`Ring::from_table`] with the point budget `max_points`.
    pub(crate) fn from_table_within(
        nodes: NodeTable,
        scheme: S,
        max_points: u64,
    ) -> Result<Self, Error> {
        scheme.validate()?;
        check_budget(max_points)?;
        let listed: Vec<u32> = (0..nodes.len() as u32).collect();
        let members = Members {
            nodes: &nodes,
            listed: &listed,
        };
        let entries = generate(&scheme, &members, max_points, |_| None)?;
        let ring = Ring::assemble(scheme, Tie::ByName, nodes, listed, entries);
        Ok(Ring { max_points, ..ring })
    }

    /// A new snapshot with `node` added at exactly `points`; like
    /// [`Placement::with_node`] for rings whose points are given, e.g.
    /// [`Explicit`] ones. O(P).
    pub fn with_node_points(
        &self,
        node: Node,
        points: impl IntoIterator<Item = u64>,
    ) -> Result<Self, Error> {
        self.insert(node, Some(points.into_iter().collect()))
    }

    /// Sorts `entries` (owners are ids) by point and tie rank, and indexes
    /// them. Entries are labelled by id, or for list-order ties by list
    /// rank, so that labels order ties.
    fn assemble(
        scheme: S,
        tie: Tie,
        nodes: NodeTable,
        listed: Vec<u32>,
        entries: Vec<Entry>,
    ) -> Self {
        let (labelled, ids) = match tie_ranks(tie, &listed) {
            None => (entries, (0..nodes.len() as NodeId).collect()),
            Some((rank, id_of)) => {
                let by_rank = entries
                    .into_iter()
                    .map(|e| e.with_owner(rank[e.owner as usize]));
                (by_rank.collect(), id_of)
            }
        };
        let (entries, index) = match scheme.predecessor() {
            false => index::sort_entries(labelled, ids),
            true => {
                let (sorted, _) = index::sort_entries(labelled, ids.clone());
                index::sort_entries(successor_form(sorted, scheme.width()), ids)
            }
        };
        Ring {
            scheme,
            tie,
            nodes,
            listed,
            entries,
            index,
            max_points: MAX_POINTS,
        }
    }

    /// [`Ring::joined`], refusing a given point that is another node's
    /// (and a made point that is another node's given one), as a build
    /// does. O(P) for the scan; a node's points are made again only for a
    /// point two nodes share, which hashes make rare.
    fn insert(&self, node: Node, given: Option<Vec<u64>>) -> Result<Self, Error> {
        let fresh_given = given.is_some();
        let name = node.name.clone();
        let (ring, fresh) = self.joined(node, given)?;
        if ring.scheme.shares_given_points() {
            return Ok(ring);
        }
        let at = ring.nodes.id(&name);
        if ring.regenerates() {
            // Everyone's points were made again and only the joiner's can
            // be given. (A predecessor ring stores its points moved to
            // successor form, so they would not compare with the made
            // ones: Dalli's `ё` and `lbuc` both make point 1529177671,
            // stored as 1533048872, the last key before the next point; a
            // fresh build keeps it as a tie and a join must too.)
            ring.refuse_shared_given(|id, _| fresh_given && Some(id) == at)?;
            return Ok(ring);
        }
        // The others' points were checked by their own build or join, so
        // only the runs of equal points that hold one of the joiner's can
        // break the rule: those are scanned, not the whole ring. A point
        // of the others is given when their scheme does not make it.
        let mut made = Vec::new();
        let mut given = |id, point| {
            if Some(id) == at {
                return fresh_given;
            }
            !ring.makes(id, point, &mut made)
        };
        for &point in &fresh {
            let from = ring.index.lower_bound(&ring.entries, point);
            let run = ring.entries[from..]
                .iter()
                .take_while(|e| e.point == point)
                .count();
            if run > 1 {
                ring.refuse_shared_given_in(from..from + run, &mut given)?;
            }
        }
        Ok(ring)
    }

    /// Whether the scheme makes `point` for node `id` (its generated
    /// points, not given ones). O(the node's points).
    fn makes(&self, id: NodeId, point: u64, made: &mut Vec<u64>) -> bool {
        let Some(node) = self.nodes.get(id) else {
            return false;
        };
        let members = Members {
            nodes: &self.nodes,
            listed: &self.listed,
        };
        let Ok(counts) = self.scheme.counts(&members) else {
            return false;
        };
        made.clear();
        let count = counts.get(id as usize).copied().unwrap_or(0);
        self.scheme.points(node, count, made).is_ok() && made.contains(&point)
    }

    /// Refuses two nodes on one point when either was given it by hand
    /// (`given(id, point)`): with ties by rank, one of them would own nothing
    /// there, and a node given only shared points nothing at all (Cassandra
    /// refuses a token on two nodes the same way). Points two made lists share
    /// (a hash collision) keep the tie rule. O(P): equal points are adjacent
    /// in ring order.
    fn refuse_shared_given(&self, given: impl FnMut(NodeId, u64) -> bool) -> Result<(), Error> {
        self.refuse_shared_given_in(0..self.entries.len(), given)
    }

    /// [`Ring::refuse_shared_given`] for the entries in `range` alone.
    fn refuse_shared_given_in(
        &self,
        range: std::ops::Range<usize>,
        mut given: impl FnMut(NodeId, u64) -> bool,
    ) -> Result<(), Error> {
        for pair in self.entries[range].windows(2) {
            let point = pair[0].point;
            if point != pair[1].point {
                continue;
            }
            let (a, b) = (self.index.id(pair[0].owner), self.index.id(pair[1].owner));
            if a == b || !(given(a, point) || given(b, point)) {
                continue;
            }
            // Blame the node given the point; of two, the one listed
            // later (the file's second claim).
            let later = |x: NodeId, y: NodeId| self.listed[x as usize] > self.listed[y as usize];
            let (other, blamed) = match (given(a, point), given(b, point)) {
                (true, false) => (b, a),
                (false, true) => (a, b),
                _ if later(a, b) => (b, a),
                _ => (a, b),
            };
            let name = |id| self.nodes.name(id).unwrap_or_default().to_owned();
            let (word, field) = match self.scheme.width() {
                Width::I64 => ("token", "tokens"),
                _ => ("point", "points"),
            };
            return Err(Error::InvalidLayout {
                node: Some(name(blamed)),
                message: format!(
                    "{word} {} given to node {:?} is also node {:?}'s: every {word} belongs \
                     to one node (one of them would own nothing there); remove it from \
                     node {:?}'s `{field}`",
                    self.scheme.width().native(point),
                    name(blamed),
                    name(other),
                    name(blamed),
                ),
            });
        }
        Ok(())
    }

    /// The ring with `node` joined, and its points sorted (empty when every
    /// point was made again).
    fn joined(&self, node: Node, given: Option<Vec<u64>>) -> Result<(Self, Vec<u64>), Error> {
        let (nodes, at) = self.nodes.with(node.clone())?;
        let mut listed: Vec<u32> = self.listed.clone();
        listed.insert(at as usize, self.nodes.len() as u32);
        let members = Members {
            nodes: &nodes,
            listed: &listed,
        };
        if self.regenerates() {
            // Everyone's points may change: make them all again.
            let mut given = given;
            let entries = generate(&self.scheme, &members, self.max_points, |id| {
                if id == at { given.take() } else { None }
            })?;
            return Ok((self.reassembled(nodes, listed, entries), Vec::new()));
        }
        let mut fresh = match given {
            Some(points) => points,
            None => {
                let mut points = Vec::new();
                let count = self.scheme.counts(&members)?[at as usize];
                check_total(self.entries.len() as u64 + count, self.max_points)?;
                self.scheme.points(&node, count, &mut points)?;
                points
            }
        };
        check_total(
            self.entries.len() as u64 + fresh.len() as u64,
            self.max_points,
        )?;
        fresh.sort_unstable();
        if self.tie != Tie::ByName {
            let shift = |e: &Entry| {
                let id = self.index.id(e.owner);
                e.with_owner(id + u32::from(id >= at))
            };
            let mut entries: Vec<Entry> = self.entries.iter().map(shift).collect();
            entries.extend(fresh.iter().map(|&point| Entry { point, owner: at }));
            return Ok((self.reassembled(nodes, listed, entries), fresh));
        }
        let (entries, index) = self.index.joined(&self.entries, &fresh, at);
        Ok((self.snapshot(nodes, listed, entries, index), fresh))
    }

    fn remove(&self, name: &str) -> Result<Self, Error> {
        let (nodes, at) = self.nodes.without(name)?;
        let mut listed = self.listed.clone();
        let gone = listed.remove(at as usize);
        for position in &mut listed {
            *position -= u32::from(*position > gone);
        }
        if self.regenerates() {
            let members = Members {
                nodes: &nodes,
                listed: &listed,
            };
            let entries = generate(&self.scheme, &members, self.max_points, |_| None)?;
            return Ok(self.reassembled(nodes, listed, entries));
        }
        let (entries, index) = self.index.left(&self.entries, at);
        Ok(self.snapshot(nodes, listed, entries, index))
    }

    /// Whether a membership change makes every point again: when a node's
    /// points depend on the others (the counts of ketama-style schemes), or
    /// when the ring is stored in successor form (a predecessor scheme).
    fn regenerates(&self) -> bool {
        !self.scheme.independent() || self.scheme.predecessor()
    }

    /// [`Ring::assemble`] with this ring's scheme, tie rule and budget.
    fn reassembled(&self, nodes: NodeTable, listed: Vec<u32>, entries: Vec<Entry>) -> Self {
        let ring = Ring::assemble(self.scheme.clone(), self.tie, nodes, listed, entries);
        Ring {
            max_points: self.max_points,
            ..ring
        }
    }

    fn snapshot(
        &self,
        nodes: NodeTable,
        listed: Vec<u32>,
        entries: Vec<Entry>,
        index: BucketIndex,
    ) -> Self {
        Ring {
            scheme: self.scheme.clone(),
            tie: self.tie,
            nodes,
            listed,
            entries,
            index,
            max_points: self.max_points,
        }
    }
}

impl<S> Ring<S> {
    /// How this ring makes points.
    pub fn scheme(&self) -> &S {
        &self.scheme
    }

    /// How equal points rank.
    pub fn tie(&self) -> Tie {
        self.tie
    }

    /// Number of points on the ring.
    pub fn point_count(&self) -> usize {
        self.entries.len()
    }

    /// `(point, owner)` in ring order.
    pub fn iter(
        &self,
    ) -> impl DoubleEndedIterator<Item = (u64, NodeId)> + ExactSizeIterator + Clone + '_ {
        self.entries
            .iter()
            .map(|e| (e.point, self.index.id(e.owner)))
    }

    /// Points per node, exact ownership shares and their spread. O(P + N).
    pub fn stats(&self) -> PlacementStats {
        PlacementStats::from_arcs(&self.nodes, self.iter())
    }

    /// Like [`Placement::replicas_into`], but first takes nodes from zones
    /// not used yet (clockwise), and only when every zone is used fills the
    /// rest with the remaining nodes in clockwise order. Nodes without a
    /// zone count as zones of their own, so without zones this equals
    /// `replicas_into`. O(points visited) expected: the zones taken are a
    /// set once there are more than 16 picks.
    pub fn zoned_replicas_into(&self, hash: u64, n: usize, out: &mut Vec<NodeId>) {
        out.clear();
        let Some(start) = self.successor(hash) else {
            return;
        };
        let want = n.min(self.nodes.len());
        let distinct_zones = want.min(self.nodes.zone_count());
        // The zones taken: a scan of the picks while they are few, a set
        // once they are many (a scan per point made `n` picks over nodes
        // without zones, each its own zone, O(points visited · n)).
        let mut taken: Option<std::collections::HashSet<u32>> = None;
        for owner in self.clockwise(start) {
            if out.len() == distinct_zones {
                break;
            }
            let zone = self.nodes.zone_of(owner);
            let fresh = match &mut taken {
                Some(set) => set.insert(zone),
                None => !out.iter().any(|&o| self.nodes.zone_of(o) == zone),
            };
            if fresh {
                out.push(owner);
                if taken.is_none() && out.len() >= LINEAR_ZONES {
                    taken = Some(out.iter().map(|&o| self.nodes.zone_of(o)).collect());
                }
            }
        }
        self.fill_clockwise(start, want, out);
    }

    /// Index of the first point `>= hash`, wrapping to 0.
    #[inline]
    fn successor(&self, hash: u64) -> Option<usize> {
        if self.entries.is_empty() {
            return None;
        }
        let i = self.index.lower_bound(&self.entries, hash);
        Some(if i == self.entries.len() { 0 } else { i })
    }

    /// Owners from `start` once around the ring.
    fn clockwise(&self, start: usize) -> impl Iterator<Item = NodeId> + '_ {
        let (before, after) = self.entries.split_at(start);
        after.iter().chain(before).map(|e| self.index.id(e.owner))
    }

    /// Owners of the ascending `hashes` into `owners`, sweeping forward from
    /// `(position, hash)` where the previous block stopped; returns where
    /// this one stops. Steps forward while few points lie between two
    /// hashes, and jumps through the index when many do.
    fn sweep(&self, hashes: &[u64], from: (usize, u64), owners: &mut [NodeId]) -> (usize, u64) {
        let len = self.entries.len();
        let (mut i, mut previous) = from;
        for (&hash, owner) in hashes.iter().zip(owners) {
            if hash < previous {
                i = self.index.lower_bound(&self.entries, hash);
            } else {
                let mut steps = 0;
                while i < len && self.entries[i].point < hash {
                    i += 1;
                    steps += 1;
                    if steps == 8 {
                        i = self.index.lower_bound(&self.entries, hash);
                        break;
                    }
                }
            }
            previous = hash;
            *owner = self
                .index
                .id(self.entries[if i == len { 0 } else { i }].owner);
        }
        (i, previous)
    }

    /// Appends nodes not in `out` clockwise from `start` until it has `want`.
    /// Repeats are found in O(1) expected ([`Distinct`]), so this is
    /// O(points visited), not O(points visited · want).
    fn fill_clockwise(&self, start: usize, want: usize, out: &mut Vec<NodeId>) {
        let mut picks = Distinct::new(out, want);
        for owner in self.clockwise(start) {
            if picks.is_full() {
                break;
            }
            picks.push(owner);
        }
    }
}

impl<S: PointScheme> RingView for Ring<S> {
    fn stats(&self) -> PlacementStats {
        Ring::stats(self)
    }

    fn point_count(&self) -> usize {
        Ring::point_count(self)
    }

    fn width(&self) -> Width {
        self.scheme.width()
    }

    fn points(&self) -> Box<dyn Iterator<Item = (u64, NodeId)> + '_> {
        Box::new(self.iter())
    }

    fn zoned_replicas_into(&self, hash: u64, n: usize, out: &mut Vec<NodeId>) {
        Ring::zoned_replicas_into(self, hash, n, out);
    }
}

impl<S: PointScheme> Placement for Ring<S> {
    /// The owner of the first point `>= hash`, wrapping. O(1) expected.
    #[inline]
    fn owner(&self, hash: u64) -> Option<NodeId> {
        if self.entries.is_empty() {
            return None;
        }
        Some(self.index.owner(&self.entries, hash))
    }

    /// The first `n` distinct nodes clockwise from `hash` (Dynamo's
    /// preference list, the seed's `get_nodes`). O(points visited): about
    /// `n` points when every node has as many points, up to all `P` when
    /// a node with few points is among the `n`.
    fn replicas_into(&self, hash: u64, n: usize, out: &mut Vec<NodeId>) {
        out.clear();
        if let Some(start) = self.successor(hash) {
            self.fill_clockwise(start, n.min(self.nodes.len()), out);
        }
    }

    fn nodes(&self) -> &NodeTable {
        &self.nodes
    }

    /// Hashes are resolved a block of 128 at a time. Ascending blocks are
    /// swept in one pass over the points; other blocks read every hash's
    /// index slot, then every needed entry, in passes whose cache misses
    /// overlap, instead of one lookup waiting for the next. Any order of
    /// hashes is correct. O(len).
    fn owners_into(&self, hashes: &[u64], out: &mut Vec<NodeId>) {
        out.clear();
        if self.entries.is_empty() {
            return;
        }
        out.resize(hashes.len(), 0);
        // The sweep's position and the hash it stands at.
        let mut at = (0, 0);
        for (block, owners) in hashes.chunks(BLOCK).zip(out.chunks_mut(BLOCK)) {
            if block.is_sorted() {
                at = self.sweep(block, at, owners);
            } else {
                self.index.owners_block(&self.entries, block, owners);
            }
        }
    }

    /// 12 bytes per point plus the bucket index (2.25 to 4.5 per point) and
    /// 4 bytes per node.
    fn heap_bytes(&self) -> usize {
        self.entries.capacity() * std::mem::size_of::<Entry>()
            + self.index.heap_bytes()
            + self.listed.capacity() * 4
    }

    /// Other nodes keep every point, so the only keys that move are those
    /// the new node takes. O(P).
    fn with_node(&self, node: Node) -> Result<Self, Error> {
        self.insert(node, None)
    }

    /// Only the node's keys move, to the next point clockwise of each of
    /// its points. O(P).
    fn without_node(&self, name: &str) -> Result<Self, Error> {
        self.remove(name)
    }
}

impl Registered for Ring {
    const RING_SHAPED: bool = true;

    fn as_ring(&self) -> Option<&dyn RingView> {
        Some(self)
    }

    /// The points of every node whose points are not the generated ones.
    fn pin(&self) -> Result<Pinned, Error> {
        Ok(Pinned {
            layout: Some(given_points(self)?),
            ..Pinned::default()
        })
    }

    fn build(nodes: Vec<Node>, params: &Params) -> Result<Self, Error> {
        let scheme = Vnodes::new(params.vnodes, params.hash)?;
        Ring::from_table_within(NodeTable::new(nodes)?, scheme, params.max_points)
    }

    /// Given points where listed, the seed recipe's elsewhere.
    fn build_with(nodes: Vec<Node>, params: &Params, layout: &Layout) -> Result<Self, Error> {
        if layout.is_empty() {
            return Self::build(nodes, params);
        }
        let scheme = Vnodes::new(params.vnodes, params.hash)?;
        let mut builder = Ring::builder().scheme(scheme).max_points(params.max_points);
        for node in nodes {
            builder = match layout.get(&node.name) {
                None => builder.node(node),
                Some(Given::Points(points)) => {
                    let points = points.clone();
                    builder.node_points(node, points)
                }
                Some(other) => {
                    return Err(Error::InvalidLayout {
                        node: Some(node.name),
                        message: format!(
                            "`{}` is not read by ring: give its points as `points = [...]`",
                            other.field()
                        ),
                    });
                }
            };
        }
        builder.build()
    }

    const READS: &'static [Param] = &[Param::Vnodes, Param::MaxPoints];
}

/// Every node's points as `(point, id)` entries: `given(id)` where it has
/// them, the scheme's otherwise. Refuses more than [`MAX_POINTS`] before
/// making any.
fn generate<S: PointScheme>(
    scheme: &S,
    members: &Members<'_>,
    limit: u64,
    mut given: impl FnMut(NodeId) -> Option<Vec<u64>>,
) -> Result<Vec<Entry>, Error> {
    let nodes = members.nodes;
    let lists: Vec<Option<Vec<u64>>> = (0..nodes.len() as NodeId).map(&mut given).collect();
    // A node given no points owns nothing, and a ring whose nodes all have
    // none would answer no key while it lists nodes (the fuzzer's
    // `points = []`): refused, as any other bad layout.
    if let Some(id) = lists
        .iter()
        .position(|l| l.as_ref().is_some_and(Vec::is_empty))
    {
        return Err(Error::InvalidLayout {
            node: nodes.name(id as NodeId).map(str::to_owned),
            message: "it is given an empty list (of points or tokens): a node needs at least \
                      one to own keys; list one or more, or leave the list out to have them \
                      generated"
                .into(),
        });
    }
    // The scheme counts only when some node has no given points (an
    // explicit ring refuses to count at all).
    let counts = if lists.iter().any(Option::is_none) {
        scheme.counts(members)?
    } else {
        vec![0; nodes.len()]
    };
    let total = lists.iter().zip(&counts).fold(0u64, |sum, (list, &count)| {
        sum.saturating_add(list.as_ref().map_or(count, |p| p.len() as u64))
    });
    check_total(total, limit)?;
    reserve_peak("a ring build", total.saturating_mul(PEAK_BYTES_PER_POINT))?;
    let mut entries = Vec::with_capacity(total as usize);
    let mut scratch = Vec::new();
    for (((id, node), list), count) in nodes.iter().enumerate().zip(lists).zip(counts) {
        let points = match list {
            Some(points) => points,
            None => {
                scratch.clear();
                scheme.points(node, count, &mut scratch)?;
                std::mem::take(&mut scratch)
            }
        };
        let owner = id as NodeId;
        entries.extend(points.iter().map(|&point| Entry { point, owner }));
        scratch = points;
    }
    Ok(entries)
}

fn check_total(points: u64, limit: u64) -> Result<(), Error> {
    if points > limit {
        return Err(Error::TooManyPoints { points, limit });
    }
    Ok(())
}

/// A point budget must allow a point and stay within the `u32` index.
fn check_budget(max_points: u64) -> Result<(), Error> {
    if (1..=MAX_POINTS_CEILING).contains(&max_points) {
        return Ok(());
    }
    Err(Error::InvalidParameter {
        algorithm: "ring",
        parameter: "max_points",
        value: max_points.to_string(),
        expected: "a point budget from 1 to 2^28 = 268435456",
    })
}

/// The position of each id (name order) in the listed `order`.
fn listed_positions(nodes: &NodeTable, order: &[Node]) -> Vec<u32> {
    let mut listed = vec![0; nodes.len()];
    for (position, node) in order.iter().enumerate() {
        if let Some(id) = nodes.id(&node.name) {
            listed[id as usize] = position as u32;
        }
    }
    listed
}

/// For list-order ties: each id's rank (smaller wins a tie) and the id of
/// each rank. `None` for ties by name, where the rank is the id.
fn tie_ranks(tie: Tie, listed: &[u32]) -> Option<(Vec<u32>, Vec<NodeId>)> {
    let last = listed.len() as u32;
    let rank: Vec<u32> = match tie {
        Tie::ByName => return None,
        Tie::FirstListed => listed.to_vec(),
        Tie::LastListed => listed.iter().map(|&p| last - 1 - p).collect(),
    };
    let mut id_of = vec![0; rank.len()];
    for (id, &r) in rank.iter().enumerate() {
        id_of[r as usize] = id as NodeId;
    }
    Some((rank, id_of))
}

/// A predecessor ring (a key belongs to the greatest point `<=` its hash,
/// wrapping to the last point) rewritten for the successor lookup every
/// ring shares: each run of equal points (sorted, labels in tie order)
/// moves to the last key position before the next distinct point, so it
/// owns exactly the keys from itself up to that point, and the last run,
/// moved to just before the first point, owns the wrap. O(P); the caller
/// sorts again (the last run comes first).
///
/// Worked example, 32-bit points 10 (A), 20 (B), 30 (A): Dalli gives keys
/// 10..=19 to A, 20..=29 to B, 30 and above and 0..=9 to A (the wrap to
/// the last point). In successor form A's first point ends the cell of
/// 19, B's the cell of 29, A's last the cell of 9: first point `>=` key 5
/// is `cell 9` (A), of key 25 `cell 29` (B), of key 35 none, wrapping to
/// the smallest, `cell 9` (A). Equal points keep their labels, so the tie
/// rule still picks the owner.
fn successor_form(sorted: Vec<Entry>, width: Width) -> Vec<Entry> {
    // The first key position a point owns: a 32-bit point its cell's
    // start, any other the point itself.
    let first_key = |point: u64| match width {
        Width::U32 => u64::from(crate::hash::cell_value(point)) << 32,
        _ => point,
    };
    let mut moved = Vec::with_capacity(sorted.len());
    let mut start = 0;
    while start < sorted.len() {
        let point = sorted[start].point;
        let run = sorted[start..]
            .iter()
            .take_while(|e| e.point == point)
            .count();
        let end = start + run;
        let next = sorted.get(end).unwrap_or(&sorted[0]).point;
        let last = first_key(next).wrapping_sub(1);
        moved.extend(sorted[start..end].iter().map(|e| Entry {
            point: last,
            owner: e.owner,
        }));
        start = end;
    }
    moved
}

/// A ring's nodes whose points are not the ones the seed recipe makes
/// (given in a file, allocated, or moved by a rebalance), with their
/// points in ring order. O(P) hashes.
fn given_points(ring: &Ring) -> Result<Layout, Error> {
    let nodes = ring.nodes();
    let mut held: Vec<Vec<u64>> = vec![Vec::new(); nodes.len()];
    for (point, id) in ring.iter() {
        held[id as usize].push(point);
    }
    let listed: Vec<u32> = (0..nodes.len() as u32).collect();
    let members = Members {
        nodes,
        listed: &listed,
    };
    let counts = ring.scheme().counts(&members)?;
    let mut layout = Layout::new();
    let mut made = Vec::new();
    for ((node, points), count) in nodes.iter().zip(held).zip(counts) {
        made.clear();
        ring.scheme().points(node, count, &mut made)?;
        made.sort_unstable();
        if made != points {
            layout.insert(node.name.clone(), Given::Points(points));
        }
    }
    Ok(layout)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ring(tie: Tie, nodes: &[(&str, &[u64])]) -> Ring<Explicit> {
        let builder = Ring::builder().scheme(Explicit).tie(tie);
        let builder = nodes.iter().fold(builder, |b, (name, points)| {
            b.node_points(Node::new(*name), points.iter().copied())
        });
        builder.build().expect("valid")
    }

    #[test]
    fn empty_ring_answers_none() {
        let ring = Ring::builder().build().expect("empty ring");
        assert_eq!(ring.owner(0), None);
        let mut out = vec![7];
        ring.replicas_into(1, 3, &mut out);
        assert!(out.is_empty());
    }

    #[test]
    fn ties_follow_the_rule() {
        // "b" is listed first; both own point 10.
        let listed = [("b", &[10u64][..]), ("a", &[10, 50][..])];
        fn name(r: &Ring<Explicit>, h: u64) -> Option<&str> {
            r.owner(h).and_then(|id| r.nodes().name(id))
        }
        assert_eq!(name(&ring(Tie::ByName, &listed), 5), Some("a"));
        assert_eq!(name(&ring(Tie::FirstListed, &listed), 5), Some("b"));
        assert_eq!(name(&ring(Tie::LastListed, &listed), 5), Some("a"));
        // A joining node is listed last.
        let first = ring(Tie::FirstListed, &listed);
        let joined = first.with_node_points(Node::new("0"), [10]).expect("joins");
        assert_eq!(name(&joined, 5), Some("b"));
        let last = ring(Tie::LastListed, &listed);
        let joined = last.with_node_points(Node::new("0"), [10]).expect("joins");
        assert_eq!(name(&joined, 5), Some("0"));
        assert_eq!(
            name(&joined.without_node("0").expect("leaves"), 5),
            Some("a")
        );
    }

    /// A deliberately weak hash: 256 distinct values (FNV-1a's low byte at
    /// the top), so most points collide and ties decide.
    #[derive(Debug, Clone, Copy)]
    struct Weak8;

    impl KeyHasher for Weak8 {
        fn hash(&self, bytes: &[u8]) -> u64 {
            let h = bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
                (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
            });
            (h & 0xff) << 56
        }
    }

    /// The same placement, point for point, with the same answers.
    fn assert_same<S: PointScheme>(changed: &Ring<S>, fresh: &Ring<S>) {
        assert!(changed.iter().eq(fresh.iter()), "points differ");
        assert_eq!(changed.nodes().len(), fresh.nodes().len());
        let probes = fresh
            .iter()
            .flat_map(|(p, _)| [p, p.wrapping_add(1), p.wrapping_sub(1)])
            .chain((0..512u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15)));
        let probes: Vec<u64> = probes.collect();
        for &h in &probes {
            assert_eq!(changed.owner(h), fresh.owner(h), "owner of {h:#x}");
            assert_eq!(changed.owner(h), model_owner(changed, h), "{h:#x}");
        }
        let (mut a, mut b) = (Vec::new(), Vec::new());
        changed.owners_into(&probes, &mut a);
        fresh.owners_into(&probes, &mut b);
        assert_eq!(a, b);
        let one: Vec<NodeId> = probes.iter().filter_map(|&h| fresh.owner(h)).collect();
        assert_eq!(a, one, "batch answers like one at a time");
    }

    /// Joins and leaves in a fixed pseudo-random order, each snapshot
    /// compared with a ring built from scratch on the same nodes.
    fn join_and_leave<S: PointScheme>(
        start: Ring<S>,
        fresh: impl Fn(&[String]) -> Ring<S>,
        join: impl Fn(&Ring<S>, &str) -> Ring<S>,
    ) {
        let mut ring = start;
        let mut members: Vec<String> = ring.nodes().iter().map(|n| n.name.clone()).collect();
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for step in 0..60 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let name = format!("n{}", x % 40);
            ring = if let Some(at) = members.iter().position(|m| *m == name) {
                members.remove(at);
                ring.without_node(&name).expect("member")
            } else {
                members.push(name.clone());
                join(&ring, &name)
            };
            assert_same(&ring, &fresh(&members));
            if step % 20 == 19 {
                // Leave everyone but one, then come back.
                while members.len() > 1 {
                    let name = members.pop().expect("non-empty");
                    ring = ring.without_node(&name).expect("member");
                    assert_same(&ring, &fresh(&members));
                }
            }
        }
    }

    #[test]
    fn joins_and_leaves_match_fresh_builds_with_a_weak_hash() {
        let build = |names: &[String]| {
            Ring::builder()
                .hasher(Weak8)
                .vnodes(50)
                .nodes(names.iter().map(|n| Node::new(n.as_str())))
                .build()
                .expect("valid")
        };
        let start = build(&["n1".into(), "n2".into()]);
        join_and_leave(start, build, |r, name| {
            r.with_node(Node::new(name)).expect("new")
        });
    }

    #[test]
    fn joins_and_leaves_match_fresh_builds_with_list_order_ties() {
        for tie in [Tie::FirstListed, Tie::LastListed] {
            let build = |names: &[String]| {
                Ring::builder()
                    .hasher(Weak8)
                    .vnodes(20)
                    .tie(tie)
                    .nodes(names.iter().map(|n| Node::new(n.as_str())))
                    .build()
                    .expect("valid")
            };
            let start = build(&["n9".into(), "n1".into()]);
            join_and_leave(start, build, |r, name| {
                r.with_node(Node::new(name)).expect("new")
            });
        }
    }

    #[test]
    fn joins_and_leaves_match_fresh_builds_with_xxh3() {
        let build = |names: &[String]| {
            Ring::builder()
                .vnodes(300)
                .nodes(names.iter().map(|n| Node::new(n.as_str())))
                .build()
                .expect("valid")
        };
        let start = build(&["n3".into()]);
        join_and_leave(start, build, |r, name| {
            r.with_node(Node::new(name)).expect("new")
        });
    }

    #[test]
    fn joins_and_leaves_match_fresh_builds_with_shared_points() {
        // Every node takes points from a small pool, so points repeat across
        // nodes and within one node's list.
        let points = |name: &str| -> Vec<u64> {
            let seed = Weak8.hash(name.as_bytes()) >> 56;
            (0..30u64)
                .map(|i| ((seed * 7 + i * 13) % 40) << 58 | (i % 3))
                .collect()
        };
        let build = |names: &[String]| {
            let builder = Ring::builder().scheme(Explicit);
            names
                .iter()
                .fold(builder, |b, n| {
                    b.node_points(Node::new(n.as_str()), points(n))
                })
                .build()
                .expect("valid")
        };
        let start = build(&["n5".into(), "n6".into()]);
        join_and_leave(start, build, |r, name| {
            r.with_node_points(Node::new(name), points(name))
                .expect("new")
        });
    }

    /// The owner of `h` read off the point list: the first point `>= h` in
    /// ring order (which already ranks ties by the rule), wrapping.
    fn model_owner<S: PointScheme>(ring: &Ring<S>, h: u64) -> Option<NodeId> {
        let mut points = ring.iter();
        let first = points.clone().next();
        points.find(|&(p, _)| p >= h).or(first).map(|(_, id)| id)
    }

    #[test]
    fn list_order_ties_answer_like_the_point_list() {
        // Listed in reverse name order, so list ranks and ids differ; many
        // points in few buckets plus wide gaps (empty buckets).
        let names = ["e", "d", "c", "b", "a"];
        for tie in [Tie::FirstListed, Tie::LastListed, Tie::ByName] {
            let builder = Ring::builder().scheme(Explicit).tie(tie);
            let ring = names
                .iter()
                .enumerate()
                .fold(builder, |b, (i, name)| {
                    let points = (0..40u64).map(move |j| ((j * 7 + i as u64 * 3) % 50) << 58);
                    b.node_points(Node::new(*name), points)
                })
                .build()
                .expect("valid");
            for h in (0..4096u64).map(|i| i << 52).chain([u64::MAX]) {
                assert_eq!(ring.owner(h), model_owner(&ring, h), "{tie:?} {h:#x}");
            }
        }
    }

    #[test]
    fn explicit_rings_need_points() {
        let r = ring(Tie::ByName, &[("a", &[1, 2])]);
        assert!(matches!(
            r.with_node(Node::new("b")),
            Err(Error::Unsupported { .. })
        ));
        let r = r.with_node_points(Node::new("b"), [3]).expect("joins");
        assert_eq!(r.owner(3), r.nodes().id("b"));
        assert_eq!(r.owner(4), r.nodes().id("a"));
    }
}
