//! `VarnishShard`: the circle of Varnish's `directors.shard()` director.
//!
//! Source: varnish-cache 7.1.1 (the version Debian 12 ships; commit
//! 7cee1c58), `vmod/vmod_directors_shard_cfg.c` (`shardcfg_hashcircle`,
//! `shardcfg_apply_change`), `vmod/vmod_directors_shard_dir.c`
//! (`shard_lookup`, `shard_next`, `sharddir_pick_be_locked`),
//! `vmod/vmod_directors_shard.c` (`add_backend`, `shard_get_key`) and
//! `vmod/vmod_directors.vcc`; the key hashes are in `hash/varnish.rs`.
//!
//! How it works: a ring of 32-bit points ([`crate::Ring`] with this point
//! scheme). `reconfigure(replicas)` (default 67, the parameter
//! `shard_replicas`) gives a backend of weight `w` `r = trunc(replicas ·
//! w)` points (at most `(2^32 - 2) / backends`), point `j` (for `j` from 0
//! to `r - 1`) being [`crate::wire::varnish_key`]`(ident ‖ decimal j)`:
//! the last four SHA-256 bytes, little-endian. The ident is the node name:
//! `add_backend(b, ident="...")`'s, or else the backend's VCL name. A key
//! goes to the first point `>=` its hash; `alt=n` is the `n`-th next
//! distinct backend of the walk from there ([`crate::Placement::replicas`]).
//!
//! Worked example (varnishd 7.1.1, `docs/examples/varnish.vcl`): backends
//! `cache1`, `cache2` (weight 2) and ident `10.0.0.3:8080`, replicas 100:
//! `cache1`'s points are `varnish_key("cache10")`, `("cache11")`, ... (no
//! separator); `by=KEY` `user:1` goes to `cache1`, `alt=1` to
//! `10.0.0.3:8080`, `alt=2` to `cache2`.
//!
//! Cost: `r` SHA-256 per backend, twice (the top point below needs every
//! backend's largest); lookup and memory as the ring's. A backend's points
//! depend only on its ident and weight, so a join moves keys only to the
//! new backend and a leave only the leaver's; every change rebuilds the
//! circle (O(P)), as Varnish does.
//!
//! Quirks (where Varnish's docs and code differ, the code wins):
//! - `shard_lookup` does not wrap (the docs say it does): a key above the
//!   largest point goes to that point. ringwise gives its backend one extra
//!   point at the top of the circle, so `alt` walks on from the smallest
//!   point as Varnish does; that backend shows `r + 1` points.
//! - The docs number the points 1 to `replicas`; the code counts from 0.
//! - The binary search of a two-point circle always starts at the second
//!   point: two backends at replicas 1 send every key to one. Refused.
//! - A weight below 1 is ignored by Varnish (weight 1): refused here, so
//!   the file says what runs. Points two backends share are `qsort`'s to
//!   order; ringwise gives them to the smaller name.
//! - `by=HASH` (the default) reads the request digest only in backend
//!   context (`varnish-req-hash`); in `vcl_recv` it hashes `req.url` with
//!   `varnish-key`, like `by=URL`; `by=KEY, key=d.key(S)` is `varnish-key`
//!   of `S`, the default key hash here.
//! - `rampup` and `warmup` send requests to the next backend at random
//!   (`VRND_RandomTestableDouble`): not reproduced; with the defaults they
//!   never act. Unhealthy backends are skipped: list the healthy ones.

use crate::Error;
use crate::algo::flavour::Flavour;
use crate::algo::params::{Param, Params};
use crate::algo::ring::{Members, PointScheme, Width, numbered_texts};
use crate::hash::{StableHash, cell_point, varnish_key};
use crate::node::Node;

/// The shard director's settings: the `replicas` of `reconfigure`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VarnishShard {
    replicas: u32,
    /// The point budget, checked before any point is hashed.
    max_points: u64,
}

impl VarnishShard {
    /// Varnish's default `reconfigure(replicas=67)`.
    pub const DEFAULT_REPLICAS: u32 = 67;

    /// `replicas` points per unit of weight (at least 1), within a budget
    /// of `max_points`.
    pub fn new(replicas: u32, max_points: u64) -> Result<Self, Error> {
        let scheme = VarnishShard {
            replicas,
            max_points,
        };
        scheme.validate()?;
        Ok(scheme)
    }

    /// Points per unit of weight.
    pub fn replicas(&self) -> u32 {
        self.replicas
    }

    /// A backend's points before the cap of `(2^32 - 2) / backends`:
    /// `trunc(replicas · weight)`, at most `2^32 - 1`.
    fn replicas_of(&self, node: &Node) -> Result<u64, Error> {
        if node.weight.is_nan() || node.weight < 1.0 {
            return Err(Error::Unsupported {
                algorithm: "varnish-shard",
                operation: format!("weigh node {:?} {}", node.name, node.weight),
                reason: "Varnish ignores an add_backend weight below 1 and uses 1: write \
                         weight = 1 (or more)",
                node: Some(node.name.clone()),
            });
        }
        Ok((f64::from(self.replicas) * node.weight).min(f64::from(u32::MAX)) as u64)
    }
}

/// The largest of the first `count` points of `node`.
fn largest_point(node: &Node, count: u64) -> u32 {
    let mut largest = 0;
    numbered_texts(node.name.as_bytes(), b"", count, |text| {
        largest = largest.max(varnish_key(text));
    });
    largest
}

impl PointScheme for VarnishShard {
    fn validate(&self) -> Result<(), Error> {
        if self.replicas == 0 {
            return Err(Error::InvalidParameter {
                algorithm: "varnish-shard",
                parameter: "shard_replicas",
                value: "0".into(),
                expected: "replicas of 1 or more, as reconfigure() takes (default 67)",
            });
        }
        Ok(())
    }

    fn counts(&self, members: &Members<'_>) -> Result<Vec<u64>, Error> {
        let nodes = members.nodes;
        let cap = (u64::from(u32::MAX) - 1) / (nodes.len() as u64).max(1);
        let counts = nodes
            .iter()
            .map(|node| self.replicas_of(node))
            .collect::<Result<Vec<u64>, Error>>()?;
        let total: u64 = counts.iter().sum();
        if total > self.max_points {
            return Err(Error::TooManyPoints {
                points: total,
                limit: self.max_points,
            });
        }
        if let Some((node, &r)) = nodes.iter().zip(&counts).find(|(_, r)| **r > cap) {
            return Err(Error::Unsupported {
                algorithm: "varnish-shard",
                operation: format!("give node {:?} {r} points", node.name),
                reason: "Varnish cuts a backend's points at (2^32 - 2) / backends, which \
                         ringwise does not reproduce: lower shard_replicas or the weight",
                node: Some(node.name.clone()),
            });
        }
        if total == 2 && counts.len() == 2 {
            return Err(Error::Unsupported {
                algorithm: "varnish-shard",
                operation: "build a circle of two backends with one point each".into(),
                reason: "Varnish's lookup of a two-point circle always starts at the second \
                         point, so one backend would take every key: use shard_replicas 2 \
                         or more",
                node: None,
            });
        }
        // The backend of the largest point (the last one in ring order on
        // a tie: the larger name) gets the top point.
        let top = nodes
            .iter()
            .zip(&counts)
            .enumerate()
            .filter(|(_, (_, count))| **count > 0)
            .max_by_key(|(id, (node, count))| (largest_point(node, **count), *id))
            .map(|(id, _)| id);
        let mut counts = counts;
        if let Some(id) = top {
            counts[id] += 1;
        }
        Ok(counts)
    }

    /// `varnish_key(ident ‖ j)` for each `j`, then the top point if
    /// `counts` gave this backend one.
    fn points(&self, node: &Node, count: u64, out: &mut Vec<u64>) -> Result<(), Error> {
        let own = self.replicas_of(node)?.min(count);
        numbered_texts(node.name.as_bytes(), b"", own, |text| {
            out.push(cell_point(varnish_key(text), true));
        });
        if count > own {
            out.push(u64::MAX);
        }
        Ok(())
    }

    /// The top point goes to whichever backend has the largest point.
    fn independent(&self) -> bool {
        false
    }

    fn width(&self) -> Width {
        Width::U32
    }
}

impl Flavour for VarnishShard {
    fn from_params(params: &Params) -> Result<Self, Error> {
        VarnishShard::new(params.shard_replicas, params.max_points)
    }

    const DEFAULT_HASH: StableHash = StableHash::VarnishKey;

    const READS: &'static [Param] = &[Param::ShardReplicas, Param::MaxPoints];
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo::params::Registered;
    use crate::algo::ring::Ring;
    use crate::hash::cell_key;
    use crate::placement::Placement;

    fn circle(names: &[(&str, f64)], replicas: u32) -> Result<Ring<VarnishShard>, Error> {
        let nodes = names.iter().map(|&(n, w)| Node::new(n).weight(w)).collect();
        let params = Params {
            shard_replicas: replicas,
            ..Params::DEFAULT
        };
        Ring::<VarnishShard>::build(nodes, &params)
    }

    /// varnishd 7.1.1 on loopback, `docs/examples/varnish.vcl` (cache1,
    /// cache2 weight 2, ident "10.0.0.3:8080", replicas 100), `by=KEY`
    /// with `alt=0`, `1`, `2`: the backends that answered.
    #[test]
    fn varnishd_answers() {
        let names = [("cache1", 1.0), ("cache2", 2.0), ("10.0.0.3:8080", 1.0)];
        let ring = circle(&names, 100).expect("builds");
        let (c1, c2, c3) = ("cache1", "cache2", "10.0.0.3:8080");
        for (key, want) in [
            ("user:1", [c1, c3, c2]),
            ("user:2", [c2, c1, c3]),
            ("user:5", [c1, c2, c3]),
        ] {
            let mut out = Vec::new();
            ring.replicas_into(cell_key(varnish_key(key.as_bytes())), 3, &mut out);
            let got: Vec<&str> = out.iter().filter_map(|&id| ring.nodes().name(id)).collect();
            assert_eq!(got, want, "{key}");
        }
    }

    #[test]
    fn refusals() {
        let unsupported = |r| matches!(r, Err(Error::Unsupported { .. }));
        assert!(unsupported(circle(&[("a", 1.0), ("b", 1.0)], 1)));
        assert!(unsupported(circle(&[("a", 0.5)], 67)));
        assert!(circle(&[("a", 1.0)], 2).is_ok() && circle(&[("a", 1.0), ("b", 1.0)], 2).is_ok());
        let zero = circle(&[("a", 1.0)], 0);
        assert!(
            matches!(zero, Err(Error::InvalidParameter { .. })),
            "{zero:?}"
        );
        let huge = circle(&[("a", 1000.0)], 100_000_000);
        assert!(matches!(huge, Err(Error::TooManyPoints { .. })), "{huge:?}");
    }
}
