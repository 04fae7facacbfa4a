//! `Groupcache`: the ring of groupcache's `consistenthash` package, and of
//! its many copies in Go services.
//!
//! Source: `github.com/golang/groupcache/consistenthash/consistenthash.go`
//! at 8c9f03a (Debian's `golang-github-golang-groupcache-dev`): `New`,
//! `Add`, `Get`; `http.go` for `HTTPPool`'s `defaultReplicas`.
//!
//! How it works: `consistenthash.New(replicas, nil)` hashes with
//! `crc32.ChecksumIEEE`; `Add(peers...)` gives peer `n` the points
//! `crc32(strconv.Itoa(i) + n)` for `i < replicas` (the number **before**
//! the name: `"0http://10.0.0.1:8080"`); `Get(key)` takes the first point
//! `>=` `crc32(key)`, wrapping to the smallest. `replicas` is the
//! parameter `groupcache_replicas`, default 50 as `HTTPPool` uses; a node
//! is the peer string exactly as given to `Add` (groupcache's own peers
//! are base URLs, `http://10.0.0.1:8080`).
//!
//! Worked example: `crc32("0http://10.0.0.1:8080")` is the first point of
//! `http://10.0.0.1:8080`; a key whose CRC-32 equals it belongs to that
//! peer, one above it to the peer of the next point.
//!
//! Cost: `replicas` points per node; lookup and memory as the ring's. A
//! node's points depend only on its name: a join moves keys only to the
//! new node (an O(P) merge).
//!
//! Quirks: points live in a Go map from point to peer, so of two peers on
//! one point the one added later owns it ([`crate::Tie::LastListed`]), the
//! list's order being the order of `Add`. groupcache has no weights and no
//! removal (a new `Map` is built); `Get` on an empty map returns `""`.

use crate::Error;
use crate::algo::flavour::Flavour;
use crate::algo::ketama::unweighted_count;
use crate::algo::params::{Param, Params};
use crate::algo::ring::{Members, PointScheme, Tie, Width};
use crate::hash::{StableHash, cell_point, crc32};
use crate::node::Node;

/// groupcache's point scheme: `replicas` points per node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Groupcache {
    replicas: u32,
}

impl Groupcache {
    /// `replicas` points per node (at least 1).
    pub fn new(replicas: u32) -> Result<Self, Error> {
        if replicas == 0 {
            return Err(Error::InvalidParameter {
                algorithm: "groupcache",
                parameter: "groupcache_replicas",
                value: "0".into(),
                expected: "at least 1 point per node (groupcache's HTTPPool uses 50)",
            });
        }
        Ok(Groupcache { replicas })
    }

    /// Points per node.
    pub fn replicas(&self) -> u32 {
        self.replicas
    }
}

impl PointScheme for Groupcache {
    fn counts(&self, members: &Members<'_>) -> Result<Vec<u64>, Error> {
        let reason = "consistenthash has no weights: every peer takes `replicas` points";
        let count = |n: &Node| unweighted_count("groupcache", n, self.replicas.into(), reason);
        members.nodes.iter().map(count).collect()
    }

    fn points(&self, node: &Node, count: u64, out: &mut Vec<u64>) -> Result<(), Error> {
        let mut text = Vec::with_capacity(node.name.len() + 8);
        for i in 0..count {
            text.clear();
            text.extend_from_slice(i.to_string().as_bytes());
            text.extend_from_slice(node.name.as_bytes());
            out.push(cell_point(crc32(&text), true));
        }
        Ok(())
    }

    fn width(&self) -> Width {
        Width::U32
    }
}

impl Flavour for Groupcache {
    fn from_params(params: &Params) -> Result<Self, Error> {
        Groupcache::new(params.groupcache_replicas)
    }

    fn tie(_: &Params) -> Tie {
        Tie::LastListed
    }

    const DEFAULT_HASH: StableHash = StableHash::Crc32;

    const READS: &'static [Param] = &[Param::GroupcacheReplicas, Param::MaxPoints];
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::cell_value;

    #[test]
    fn the_number_comes_before_the_name() {
        let mut out = Vec::new();
        let scheme = Groupcache::new(50).expect("scheme");
        (scheme.points(&Node::new("http://10.0.0.1:8080"), 2, &mut out)).expect("points");
        let values: Vec<u32> = out.into_iter().map(cell_value).collect();
        assert_eq!(
            values,
            [
                crc32(b"0http://10.0.0.1:8080"),
                crc32(b"1http://10.0.0.1:8080")
            ]
        );
        assert!(Groupcache::new(0).is_err());
    }
}
