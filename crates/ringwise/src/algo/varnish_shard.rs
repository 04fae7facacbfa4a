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
//! Worked example: backend `b0`'s first point is `varnish_key("b00")`, its
//! second `varnish_key("b01")` (the ident and the number are hashed as one
//! text; there is no separator).
//!
//! Cost: `r` SHA-256 per backend, twice (the top point below needs every
//! backend's largest); lookup and memory as the ring's. Since a backend's
//! points depend only on its own ident and weight, a join moves keys only
//! to the new backend and a leave only the leaver's, but every change
//! rebuilds the circle (O(P)), as Varnish does.
//!
//! Quirks, where the code and the docs differ (the code wins):
//! - `shard_lookup` does not wrap: a key above the largest point goes to
//!   that point, not to the smallest. ringwise gives the backend of the
//!   largest point one extra point at the very top of the circle, so its
//!   walk (`alt`) continues at the smallest point as Varnish's does; that
//!   backend shows one point more than `r`. The docs say "wrapping around".
//! - The docs number the points 1 to `replicas`; the code counts from 0.
//! - The binary search of a circle of exactly two points always starts at
//!   the second: two backends with one point each (replicas 1) send every
//!   key to one of them. ringwise refuses that circle.
//! - `add_backend(weight=)` below 1 is ignored by Varnish (weight 1, with
//!   a notice in the log): ringwise refuses it, so the file says what runs.
//! - Varnish sorts with `qsort`, so which backend owns a point two share is
//!   unspecified; ringwise gives it to the smaller name (the ring's tie).
//! - `by=HASH` (the default) hashes the request digest only in backend
//!   context (`vcl_backend_fetch`, or `resolve=LAZY`): that is
//!   `varnish-req-hash`; asked in `vcl_recv` it hashes `req.url` with
//!   `varnish-key`, like `by=URL`. `by=KEY` with `key=d.key(S)` is
//!   `varnish-key` of `S` (the default key hash here).
//! - `rampup` and `warmup` send a fraction of requests to the next backend
//!   at random (`VRND_RandomTestableDouble`) while a backend's health
//!   changed recently: not deterministic, so not reproduced. With the
//!   defaults (no warmup, rampup 0 s) they never act. Unhealthy backends
//!   (`healthy=CHOSEN` skips them) are not modelled: ringwise's members are
//!   the healthy ones.

use crate::Error;
use crate::algo::params::{Param, Params, Pinned, Registered};
use crate::algo::ring::{Members, PointScheme, Ring, RingView, Width, numbered_texts};
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

impl Registered for Ring<VarnishShard> {
    const RING_SHAPED: bool = true;

    fn as_ring(&self) -> Option<&dyn RingView> {
        Some(self)
    }

    /// Points follow from the names, weights and replicas.
    fn pin(&self) -> Result<Pinned, Error> {
        Ok(Pinned::default())
    }

    fn build(nodes: Vec<Node>, params: &Params) -> Result<Self, Error> {
        Ring::builder()
            .scheme(VarnishShard::new(params.shard_replicas, params.max_points)?)
            .max_points(params.max_points)
            .nodes(nodes)
            .build()
    }

    fn default_hash() -> StableHash {
        StableHash::VarnishKey
    }

    const READS: &'static [Param] = &[Param::ShardReplicas, Param::MaxPoints];
}

#[cfg(test)]
mod tests {
    use super::*;
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

    #[test]
    fn points_are_the_ident_and_a_number_from_zero() {
        let mut out = Vec::new();
        VarnishShard::new(67, 1 << 24)
            .and_then(|s| s.points(&Node::new("b0"), 3, &mut out))
            .expect("points");
        let want: Vec<u64> = ["b00", "b01", "b02"]
            .iter()
            .map(|t| cell_point(varnish_key(t.as_bytes()), true))
            .collect();
        assert_eq!(out, want);
    }

    /// `shard_lookup` and `shard_next` as the C code does them, on the
    /// circle as `shardcfg_hashcircle` builds it: the first point `>=`
    /// the key or else the last, then distinct hosts walking up.
    fn varnish_walk(circle: &[(u32, usize)], key: u32, n: usize) -> Vec<usize> {
        let start = circle
            .iter()
            .position(|&(p, _)| p >= key)
            .unwrap_or(circle.len() - 1);
        let mut hosts = Vec::new();
        for i in (0..circle.len()).map(|i| (start + i) % circle.len()) {
            if !hosts.contains(&circle[i].1) {
                hosts.push(circle[i].1);
            }
        }
        hosts.truncate(n);
        hosts
    }

    #[test]
    fn weights_truncate_and_lookups_do_not_wrap() {
        let names = [("a", 1.0), ("b", 2.5), ("c", 1.99)];
        let ring = circle(&names, 10).expect("builds");
        let mut circle: Vec<(u32, usize)> = Vec::new();
        for (id, &(name, weight)) in names.iter().enumerate() {
            for j in 0..(10.0 * weight) as u32 {
                circle.push((varnish_key(format!("{name}{j}").as_bytes()), id));
            }
        }
        circle.sort_unstable();
        assert_eq!(circle.len(), 10 + 25 + 19);
        assert_eq!(ring.len(), 3);
        assert_eq!(ring.iter().count(), circle.len() + 1, "one top point");
        let top = circle[circle.len() - 1];
        let mut keys: Vec<u32> = circle
            .iter()
            .flat_map(|&(p, _)| [p, p.wrapping_add(1), p.wrapping_sub(1)])
            .collect();
        keys.extend([0, u32::MAX, top.0 + 1]);
        for key in keys {
            let want = varnish_walk(&circle, key, 3);
            let mut out = Vec::new();
            ring.replicas_into(cell_key(key), 3, &mut out);
            let got: Vec<usize> = out.iter().map(|&id| id as usize).collect();
            assert_eq!(got, want, "key {key}");
            assert_eq!(
                ring.owner(cell_key(key)).map(|id| id as usize),
                Some(want[0])
            );
        }
    }

    #[test]
    fn refusals() {
        assert!(matches!(
            circle(&[("a", 1.0), ("b", 1.0)], 1),
            Err(Error::Unsupported { .. })
        ));
        assert!(circle(&[("a", 1.0)], 2).is_ok());
        assert!(circle(&[("a", 1.0), ("b", 1.0)], 2).is_ok());
        assert!(matches!(
            circle(&[("a", 0.5)], 67),
            Err(Error::Unsupported { .. })
        ));
        assert!(matches!(
            circle(&[("a", 1.0)], 0),
            Err(Error::InvalidParameter { .. })
        ));
        let huge = circle(&[("a", 1000.0)], 100_000_000);
        assert!(matches!(huge, Err(Error::TooManyPoints { .. })), "{huge:?}");
    }
}
