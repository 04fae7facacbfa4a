//! `hash-balance-factor`: HAProxy's bounded-load rule over a
//! [`Haproxy`] tree, for one request given the requests in flight.
//!
//! Source: haproxy `src/lb_chash.c` (`chash_server_is_eligible`, the walk
//! in `chash_get_server_hash`), `src/backend.c` (`recount_servers`, which
//! sets `cumulative_weight`), `src/cfgparse-listen.c` (the factor's
//! check), tag v2.6.0.
//!
//! The rule, in HAProxy's unsigned 32-bit arithmetic: with `F` the factor,
//! `S` the requests in flight on the backend and `W` the sum of the
//! effective weights (`16·weight`) of its servers,
//!
//! ```text
//! slots_total = ((S + 1)·F + 99) / 100
//! per_weight  = slots_total / W,   rest = slots_total % W
//! slots(s)    = ew(s)·per_weight + ((cw(s) + ew(s))·rest) / W - (cw(s)·rest) / W
//! slots(s)    = max(slots(s), 1)
//! eligible(s) = served(s) < slots(s)
//! ```
//!
//! where `ew(s)` is the server's effective weight and `cw(s)` the sum of
//! those listed before it (so the rest is spread in listed order). The
//! request goes to the nearest point's server ([`Haproxy`]'s rule) if
//! eligible; else HAProxy walks the points clockwise from there to the
//! first eligible server, and after wrapping past the end a second time it
//! stops and takes the server it is on, eligible or not.
//!
//! Worked example (`balance_factor_example` below): two servers of weight 1
//! (`W = 32`), `F = 150`, 9 requests in flight: `slots_total = (10·150 +
//! 99)/100 = 15`, `per_weight = 0`, `rest = 15`; the first server gets
//! `(16·15)/32 - 0 = 7` slots, the second `(32·15)/32 - (16·15)/32 = 15 -
//! 7 = 8`.

use crate::Error;
use crate::algo::haproxy::{Haproxy, POINTS_PER_WEIGHT};
use crate::node::NodeId;

/// A [`Haproxy`] tree with the requests in flight on each server, and a
/// factor: looks a request up as `hash-balance-factor` does.
#[derive(Debug, Clone)]
pub struct Balanced<'a> {
    tree: &'a Haproxy,
    /// Slots of each server (by node id).
    slots: Vec<u32>,
    /// Requests in flight on each server (by node id).
    served: Vec<u32>,
}

impl Haproxy {
    /// The bounded-load view for `factor` (HAProxy's `hash-balance-factor`,
    /// more than 100) and `served` requests in flight per node id (0 for
    /// ids past its end). Refuses a factor of 100 or less, as HAProxy
    /// does, and more in-flight requests than a `u32` counts.
    pub fn balanced(&self, factor: u32, served: &[u32]) -> Result<Balanced<'_>, Error> {
        if factor <= 100 {
            return Err(Error::InvalidParameter {
                algorithm: "haproxy",
                parameter: "hash-balance-factor",
                value: factor.to_string(),
                expected: "a percentage above 100 (HAProxy refuses 1 to 100; 0 turns the \
                           rule off: leave the option out)",
            });
        }
        let n = self.nodes.len();
        let served: Vec<u32> = (0..n)
            .map(|i| served.get(i).copied().unwrap_or(0))
            .collect();
        let total = served.iter().try_fold(0u32, |sum, &s| sum.checked_add(s));
        let total = total.ok_or_else(|| Error::InvalidParameter {
            algorithm: "haproxy",
            parameter: "in-flight",
            value: "their sum".into(),
            expected: "in-flight counts that sum to at most 4294967295",
        })?;
        let weight = |id: NodeId| {
            let w = self.nodes.get(id).map_or(0.0, |n| n.weight);
            w as u32 * POINTS_PER_WEIGHT
        };
        let all: u32 = self.listed.iter().map(|&id| weight(id)).sum::<u32>().max(1);
        let slots_total = total.wrapping_add(1).wrapping_mul(factor).wrapping_add(99) / 100;
        let (per_weight, rest) = (slots_total / all, slots_total % all);
        let mut slots = vec![0; n];
        let mut before = 0u32;
        for &id in &self.listed {
            let ew = weight(id);
            let share = ew.wrapping_mul(per_weight).wrapping_add(
                (before.wrapping_add(ew).wrapping_mul(rest) / all)
                    .wrapping_sub(before.wrapping_mul(rest) / all),
            );
            slots[id as usize] = share.max(1);
            before += ew;
        }
        Ok(Balanced {
            tree: self,
            slots,
            served,
        })
    }
}

impl Balanced<'_> {
    /// The slots of node `id` (the in-flight requests it may hold).
    pub fn slots(&self, id: NodeId) -> u32 {
        self.slots.get(id as usize).copied().unwrap_or(0)
    }

    /// The server HAProxy sends a request of key hash `hash` to.
    pub fn owner(&self, hash: u64) -> Option<NodeId> {
        let tree = self.tree;
        if tree.points.is_empty() {
            return None;
        }
        let eligible = |id: NodeId| self.served[id as usize] < self.slots[id as usize];
        let mut at = tree.pick(tree.key(hash));
        let mut wraps = 0;
        while !eligible(tree.owners[at]) {
            at += 1;
            if at == tree.points.len() {
                wraps += 1;
                if wraps > 1 {
                    // HAProxy breaks before taking the first point again.
                    at -= 1;
                    break;
                }
                at = 0;
            }
        }
        Some(tree.owners[at])
    }
}

#[cfg(test)]
mod tests {
    use crate::node::Node;
    use crate::placement::Placement;

    use super::*;

    #[test]
    fn balance_factor_example() {
        let tree = Haproxy::new(vec![Node::new("a"), Node::new("b")], false, 1 << 24).expect("ok");
        let (a, b) = (
            tree.nodes().id("a").expect("a"),
            tree.nodes().id("b").expect("b"),
        );
        let mut served = vec![0; 2];
        served[a as usize] = 7;
        served[b as usize] = 2;
        let view = tree.balanced(150, &served).expect("valid");
        assert_eq!((view.slots(a), view.slots(b)), (7, 8));
        // `a` is full: every request goes to `b`; `b` is not.
        for h in (0..64u64).map(|i| i << 58) {
            assert_eq!(view.owner(h), Some(b));
        }
        assert!(tree.balanced(100, &served).is_err());
    }

    #[test]
    fn an_unloaded_tree_answers_like_the_plain_one() {
        let nodes = (0..5).map(|i| Node::new(format!("s{i}")).weight(f64::from(i + 1)));
        let tree = Haproxy::new(nodes.collect(), true, 1 << 24).expect("ok");
        let view = tree.balanced(125, &[]).expect("valid");
        for h in (0..4096u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15)) {
            assert_eq!(view.owner(h), tree.owner(h));
        }
    }
}
