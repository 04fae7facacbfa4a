//! Where a ring puts a node's points: the point schemes.
//!
//! A ring is a sorted list of `(point, node)` and one lookup rule (first
//! point `>=` the key's hash, wrapping). Deployed rings differ only in how
//! they make the points (and the key hash, and how equal points rank), so
//! the scheme is a type parameter of [`crate::Ring`] and the lookup code is
//! shared by all of them:
//!
//! - [`Vnodes`]: the seed recipe. Node `N` of weight `w` gets
//!   `round(vnodes · w)` points (at least one) at `hash("N#0")`,
//!   `hash("N#1")`, ... With `md5` and integer weights this is the Python
//!   `ConsistentHashRing` of the seed article bit for bit.
//! - [`Explicit`]: no generator; every node's points are given
//!   ([`crate::RingBuilder::node_points`], [`crate::Ring::with_node_points`]),
//!   e.g. Cassandra tokens read from `nodetool ring`.
//!
//! A scheme is **independent** when a node's points depend on nothing but
//! the node itself (both schemes here). Then adding a node moves keys only
//! to it and removing one moves only its keys, and the ring merges or
//! filters points instead of regenerating them. Ketama-style schemes, whose
//! point counts depend on the total weight, say `false` and are regenerated
//! on every membership change, like their peers do.

use std::fmt;

use crate::Error;
use crate::budget::MAX_VNODES;
use crate::hash::{KeyHasher, StableHash};
use crate::node::{Node, NodeId, NodeTable};

pub use crate::param::DEFAULT_VNODES;

/// How a ring makes the points of a node.
pub trait PointScheme: Clone + fmt::Debug + Send + Sync {
    /// Checks the scheme's own settings; called once by every build.
    fn validate(&self) -> Result<(), Error> {
        Ok(())
    }

    /// How many points each node gets (indexed by id), as a member of
    /// `members`; checked against the point budget before any point is
    /// made. O(N).
    fn counts(&self, members: &Members<'_>) -> Result<Vec<u64>, Error>;

    /// Appends the `count` points of `node` to `out`.
    fn points(&self, node: &Node, count: u64, out: &mut Vec<u64>) -> Result<(), Error>;

    /// True when a node's points depend only on the node itself (see the
    /// module docs); `false` makes every membership change a rebuild.
    fn independent(&self) -> bool {
        true
    }

    /// How the peer writes a point (for display): a 64-bit value unless
    /// the scheme is a 32-bit or signed-token flavour.
    fn width(&self) -> Width {
        Width::U64
    }

    /// True when a point given by hand may also be another node's, the tie
    /// rule deciding who owns it ([`Explicit`]: how deployed rings with
    /// shared points are written down). `false` (every other scheme) refuses
    /// a given point that is another node's, given or made: one of the two
    /// would own nothing there.
    fn shares_given_points(&self) -> bool {
        false
    }

    /// True when the peer gives a key to the greatest point `<=` its hash,
    /// wrapping to the last point (Dalli, redis-rb), instead of the first
    /// point `>=` it. The ring stores such a ring in successor form (each
    /// point moved to the last key it owns, `ring.rs`, `successor_form`),
    /// where a point's position depends on the next point, so every
    /// membership change regenerates it, whatever [`Self::independent`] says.
    fn predecessor(&self) -> bool {
        false
    }
}

/// The members a scheme makes points for: the node table (name order) and
/// the position of each node in the listed order (the builder's order,
/// then join order), which list-order flavours such as Envoy's read.
#[derive(Debug, Clone, Copy)]
pub struct Members<'a> {
    /// The nodes, by id.
    pub nodes: &'a NodeTable,
    /// `listed[id]`: the node's position in the listed order.
    pub listed: &'a [u32],
}

impl Members<'_> {
    /// Ids in listed order.
    pub fn listed_ids(&self) -> Vec<NodeId> {
        let mut ids = vec![0; self.listed.len()];
        for (id, &position) in self.listed.iter().enumerate() {
            ids[position as usize] = id as NodeId;
        }
        ids
    }

    /// The sum of all weights.
    pub fn total_weight(&self) -> f64 {
        self.nodes.iter().map(|n| n.weight).sum()
    }
}

/// How a placement's peer writes a point or key hash.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Width {
    /// The 64-bit value itself.
    U64,
    /// A 32-bit value in its cell ([`crate::hash::cell_value`]): ketama,
    /// nginx.
    U32,
    /// A signed 64-bit token ([`crate::hash::point_token`]): Cassandra.
    I64,
}

impl Width {
    /// `position` as the peer writes it.
    pub fn native(self, position: u64) -> i128 {
        match self {
            Width::U64 => position.into(),
            Width::U32 => crate::hash::cell_value(position).into(),
            Width::I64 => crate::hash::point_token(position).into(),
        }
    }
}

/// The seed recipe's points: `hash("name#i")` for `i < round(vnodes·w)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Vnodes<H = StableHash> {
    vnodes: u32,
    hasher: H,
}

impl<H: KeyHasher> Vnodes<H> {
    /// `vnodes` points per unit of weight, hashed with `hasher`; `vnodes`
    /// must be in `1..=`[`MAX_VNODES`].
    pub fn new(vnodes: u32, hasher: H) -> Result<Self, Error> {
        let scheme = Vnodes { vnodes, hasher };
        scheme.check()?;
        Ok(scheme)
    }

    /// Virtual nodes per unit of weight.
    pub fn vnodes(&self) -> u32 {
        self.vnodes
    }

    /// The hash of the point texts.
    pub fn hasher(&self) -> &H {
        &self.hasher
    }

    pub(super) fn unchecked(vnodes: u32, hasher: H) -> Self {
        Vnodes { vnodes, hasher }
    }

    pub(super) fn with_hasher<H2>(self, hasher: H2) -> Vnodes<H2> {
        Vnodes {
            vnodes: self.vnodes,
            hasher,
        }
    }

    pub(super) fn set_vnodes(&mut self, vnodes: u32) {
        self.vnodes = vnodes;
    }

    fn check(&self) -> Result<(), Error> {
        if self.vnodes == 0 || self.vnodes > MAX_VNODES {
            return Err(Error::InvalidVnodes {
                vnodes: self.vnodes.into(),
            });
        }
        Ok(())
    }
}

impl<H: KeyHasher + Clone + fmt::Debug + Send + Sync> PointScheme for Vnodes<H> {
    fn validate(&self) -> Result<(), Error> {
        self.check()
    }

    fn counts(&self, members: &Members<'_>) -> Result<Vec<u64>, Error> {
        let count = |n: &Node| point_count(self.vnodes, n.weight);
        Ok(members.nodes.iter().map(count).collect())
    }

    /// `hash("name#i")`, `TEXTS` texts hashed at a time through
    /// `hash_each` (for md5 that is eight lanes at once, the largest part
    /// of building an md5 ring). The texts live in one buffer, a slot of
    /// `"name#"` and room for 20 digits each, written once per node; a
    /// round rewrites only each slot's digits (no copy of the text, no
    /// allocation per text).
    fn points(&self, node: &Node, count: u64, out: &mut Vec<u64>) -> Result<(), Error> {
        let name = node.name.as_bytes();
        let head = name.len() + 1;
        let stride = head + DIGITS;
        let lanes = (TEXTS as u64).min(count) as usize;
        let mut slots = vec![0u8; lanes * stride];
        for slot in slots.chunks_exact_mut(stride) {
            slot[..name.len()].copy_from_slice(name);
            slot[name.len()] = b'#';
        }
        let mut lens = [0usize; TEXTS];
        let mut hashes = [0u64; TEXTS];
        out.reserve(count as usize);
        let mut done = 0u64;
        while done < count {
            let n = (count - done).min(lanes as u64) as usize;
            for (j, (slot, len)) in slots
                .chunks_exact_mut(stride)
                .zip(&mut lens[..n])
                .enumerate()
            {
                *len = head + write_decimal(&mut slot[head..], done + j as u64);
            }
            let texts: [&[u8]; TEXTS] = std::array::from_fn(|j| match j < n {
                true => &slots[j * stride..j * stride + lens[j]],
                false => &[],
            });
            self.hasher.hash_each(&texts[..n], &mut hashes[..n]);
            out.extend_from_slice(&hashes[..n]);
            done += n as u64;
        }
        Ok(())
    }
}

/// Point texts hashed together by [`Vnodes::points`].
const TEXTS: usize = 64;

/// The most decimal digits of a `u64`.
const DIGITS: usize = 20;

/// Writes `n` in decimal at the start of `out` (at least [`DIGITS`] long),
/// as `format!("{n}")` would; returns the number of digits.
fn write_decimal(out: &mut [u8], n: u64) -> usize {
    let mut len = 1;
    let mut rest = n / 10;
    while rest > 0 {
        rest /= 10;
        len += 1;
    }
    let mut rest = n;
    for digit in out[..len].iter_mut().rev() {
        *digit = b'0' + (rest % 10) as u8;
        rest /= 10;
    }
    len
}

/// No generator: every node's points are given explicitly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Explicit;

impl Explicit {
    fn refuse(node: &Node) -> Error {
        Error::Unsupported {
            algorithm: "ring",
            operation: format!("make points for node {:?}", node.name),
            reason: "this ring's points are explicit: give them with `node_points` \
                     or `with_node_points`",
            node: None,
        }
    }
}

impl PointScheme for Explicit {
    fn counts(&self, members: &Members<'_>) -> Result<Vec<u64>, Error> {
        match members.nodes.iter().next() {
            Some(node) => Err(Explicit::refuse(node)),
            None => Ok(Vec::new()),
        }
    }

    fn points(&self, node: &Node, _: u64, _: &mut Vec<u64>) -> Result<(), Error> {
        Err(Explicit::refuse(node))
    }

    /// Shared points are how a deployed ring's ties are written down.
    fn shares_given_points(&self) -> bool {
        true
    }
}

/// Calls `each` with the texts `prefix ‖ separator ‖ i` for `i` in
/// `0..count` (`"N#0"`, `"N#1"`, ...), one buffer reused: the index is
/// counted up in place rather than formatted anew for every point.
pub(crate) fn numbered_texts(
    prefix: &[u8],
    separator: &[u8],
    count: u64,
    mut each: impl FnMut(&[u8]),
) {
    let mut text = Vec::with_capacity(prefix.len() + separator.len() + 20);
    text.extend_from_slice(prefix);
    text.extend_from_slice(separator);
    let from = text.len();
    text.push(b'0');
    for _ in 0..count {
        each(&text);
        increment_decimal(&mut text, from);
    }
}

/// Points of a node: `round(vnodes * weight)`, at least one. Exact for
/// integer weights, so weight 2 at 100 vnodes is the seed's 200 points.
pub fn point_count(vnodes: u32, weight: f64) -> u64 {
    (f64::from(vnodes) * weight).round().max(1.0) as u64
}

/// Adds one to the decimal number that starts at `buf[from]`, like an
/// odometer: `"N#9"` becomes `"N#10"`, `"N#199"` becomes `"N#200"`. Cheaper
/// than formatting every index, and the same text as Python's f-string.
fn increment_decimal(buf: &mut Vec<u8>, from: usize) {
    for i in (from..buf.len()).rev() {
        if buf[i] == b'9' {
            buf[i] = b'0';
        } else {
            buf[i] += 1;
            return;
        }
    }
    buf.insert(from, b'1');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_counter_matches_format() {
        let mut buf = b"node#0".to_vec();
        for n in 0..=100_000u64 {
            assert_eq!(buf, format!("node#{n}").into_bytes());
            increment_decimal(&mut buf, 5);
        }
    }

    #[test]
    fn decimals_are_written_like_format() {
        let mut buf = [0u8; DIGITS];
        for n in (0..100_000u64).chain([u64::MAX, u64::MAX / 7, 10u64.pow(19), 10u64.pow(19) - 1]) {
            let len = write_decimal(&mut buf, n);
            assert_eq!(&buf[..len], n.to_string().as_bytes());
        }
    }

    #[test]
    fn vnode_points_are_the_hashes_of_the_texts() {
        let scheme = Vnodes::new(1, StableHash::Xxh3).expect("valid");
        for count in [1, 63, 64, 65, 200] {
            let mut out = Vec::new();
            scheme
                .points(&Node::new("cache-a"), count, &mut out)
                .expect("points");
            let texts = (0..count).map(|i| format!("cache-a#{i}"));
            let expected: Vec<u64> = texts.map(|t| StableHash::Xxh3.hash(t.as_bytes())).collect();
            assert_eq!(out, expected, "{count} points");
        }
    }

    #[test]
    fn point_counts_round() {
        assert_eq!(point_count(100, 2.0), 200);
        assert_eq!(point_count(100, 0.004), 1);
        assert_eq!(point_count(100, 0.125), 13);
        assert_eq!(point_count(160, 1.5), 240);
    }

    #[test]
    fn vnodes_are_checked() {
        assert!(Vnodes::new(0, StableHash::Md5).is_err());
        assert!(Vnodes::new(MAX_VNODES + 1, StableHash::Md5).is_err());
        assert!(Vnodes::new(MAX_VNODES, StableHash::Md5).is_ok());
    }
}
