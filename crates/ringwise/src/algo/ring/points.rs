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

use crate::hash::{KeyHasher, StableHash};
use crate::node::{Node, NodeTable};
use crate::{Error, MAX_VNODES};

pub use crate::algo::params::DEFAULT_VNODES;

/// How a ring makes the points of a node.
pub trait PointScheme: Clone + fmt::Debug + Send + Sync {
    /// Checks the scheme's own settings; called once by every build.
    fn validate(&self) -> Result<(), Error> {
        Ok(())
    }

    /// How many points `node` gets as a member of `nodes`; checked against
    /// [`crate::MAX_POINTS`] before any point is made.
    fn count(&self, node: &Node, nodes: &NodeTable) -> Result<u64, Error>;

    /// Appends the `count` points of `node` (a member of `nodes`) to `out`.
    fn points(&self, node: &Node, nodes: &NodeTable, out: &mut Vec<u64>) -> Result<(), Error>;

    /// True when a node's points depend only on the node itself (see the
    /// module docs); `false` makes every membership change a rebuild.
    fn independent(&self) -> bool {
        true
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

    fn count(&self, node: &Node, _: &NodeTable) -> Result<u64, Error> {
        Ok(point_count(self.vnodes, node.weight))
    }

    /// `hash("name#i")`, one text buffer reused: the index is counted up in
    /// place rather than formatted anew for every point.
    fn points(&self, node: &Node, _: &NodeTable, out: &mut Vec<u64>) -> Result<(), Error> {
        let name = node.name.as_bytes();
        let mut text = Vec::with_capacity(name.len() + 21);
        text.extend_from_slice(name);
        text.extend_from_slice(b"#0");
        for _ in 0..point_count(self.vnodes, node.weight) {
            out.push(self.hasher.hash(&text));
            increment_decimal(&mut text, name.len() + 1);
        }
        Ok(())
    }
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
        }
    }
}

impl PointScheme for Explicit {
    fn count(&self, node: &Node, _: &NodeTable) -> Result<u64, Error> {
        Err(Explicit::refuse(node))
    }

    fn points(&self, node: &Node, _: &NodeTable, _: &mut Vec<u64>) -> Result<(), Error> {
        Err(Explicit::refuse(node))
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
