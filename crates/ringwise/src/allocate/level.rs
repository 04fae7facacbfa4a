//! One replica: the joining node's points by levelling the heaviest
//! nodes down (water-filling), so that the balance no longer depends on
//! where the names' hashes happened to start the ring: whatever the
//! layout, the heaviest nodes give, and nobody's share grows.
//!
//! How it works. With one replica a point at `a + x` inside range
//! `(a, b]` takes exactly `x` hashes from the range's owner and nothing
//! from anyone else, so a join is a choice of donors and amounts. Node `n`
//! holds `L_n` of the circle against its weight's share `t_n` (the
//! joiner's counted, so the shares sum to 1). Donors are ranked by
//! `L_n / t_n`, heaviest first (rank `k` of `D`); for a level `λ` the
//! donor of rank `k` gives `L_n − λ·t_n·(1 + s·k/(D − 1))` when that is
//! positive, out of its largest ranges first, each range at most all but
//! one hash (the point lands strictly inside it), one joiner point per
//! range, while the joiner has points left. A bisection finds the `λ` at
//! which the gifts equal `λ·t_j`: the joiner ends at the level too.
//! Points left over split the largest gifts over the donor's next largest
//! range (ranges stay even for later joiners), or, when no donor has a
//! range left (a heavy node joining a small ring), go inside the joiner's
//! own gifts, evenly spaced: its take is the same.
//!
//! Why the stagger `s` (`1/V` for `V` points per unit of weight, from
//! `Allocator::stagger`). A join of `T` points has at most `T` donors;
//! every other node's share over the mean grows by `(N + 1)/N`. A flat
//! level is perfect until `N = T + 1` and then fails at once: 17 equal
//! nodes, the 18th joins with 16 points, one node gives nothing and stands
//! at `18/17 = 1.059`. Staggered levels keep the nodes spread over about
//! `1/V`, the spread a node drifts by between its gifts once `N > T`
//! (`(1 + 1/N)^(N/T) ≈ e^(1/16) = 1.065`): the heaviest now are the next
//! donors, and the peak stays near `λ·(1 + s/2)`. Measured
//! (`examples/allocation.rs --table`, 12 name sets, 10 to 100 nodes): a
//! flat level 1.059 at 18 nodes; `s` = 0.05 1.054, 1/16 1.041 for every
//! set, 0.075 1.040 with a lowest node of 0.92 (1/16: 0.97); the joiner at
//! its full share instead of the level, 1.050.
//!
//! Worked example. Nodes `a` and `b` of weight 1 hold 0.6 and 0.4 of the
//! circle, `c` of weight 2 joins with two points: shares ¼, ¼, ½, ratios
//! 2.4 and 1.6. With `s = 0` and `λ = 1` `a` gives 0.35 and `b` 0.15, and
//! the sum 0.5 is `λ·t_c`: every node ends at its share, provided the
//! largest ranges of `a` and `b` hold 0.35 and 0.15.
//!
//! Cost: O(P log P) to sort the ranges, then 64 bisection steps of
//! O(N + T) each, and O(T² · P) at worst to spread left-over points:
//! well under a millisecond for 100 nodes. Quirks: a donor's largest range
//! bounds its gift per point, so with few points a heavy node can stay
//! above the level; the measure of `allocate/model.rs` (used for `R > 1`)
//! is not consulted. Determinism: only `f64` sums, products and
//! comparisons in a fixed order, ties broken by index.

use crate::node::NodeId;

/// 2^64 as a float: fractions of the circle.
const CIRCLE: f64 = 18_446_744_073_709_551_616.0;
/// Bisection steps for the level: 64 halvings reach `f64` precision.
const STEPS: usize = 64;

/// One range the joiner takes part of: range `index` (ending at
/// `points[index]`), `amount` of it as a fraction of the circle.
#[derive(Debug, Clone, Copy)]
struct Gift {
    index: usize,
    amount: f64,
    /// The joiner's points in it, evenly spaced (more than one only when
    /// no donor has a range left).
    pieces: u32,
}

/// The joiner's `count` points on the ring `points` (sorted, distinct,
/// at least one) owned by `owners`; `targets` sum to 1 over every node
/// id, the joiner `joiner` included (it owns no point yet); `spread_by`
/// is the stagger `s`. Sorted, distinct, none on an existing point; fewer
/// than `count` only when the ring has fewer free ranges.
pub(super) fn allocate(
    points: &[u64],
    owners: &[NodeId],
    targets: &[f64],
    joiner: NodeId,
    count: usize,
    spread_by: f64,
) -> Vec<u64> {
    let p = points.len();
    let span = |i: usize| match p {
        1 => 1u128 << 64,
        _ => u128::from(points[i].wrapping_sub(points[(i + p - 1) % p])),
    };
    // Per node: its ranges, largest first (ties: the lower index).
    let mut ranges: Vec<Vec<usize>> = vec![Vec::new(); targets.len()];
    let mut load = vec![0.0; targets.len()];
    for (i, &o) in owners.iter().enumerate() {
        ranges[o as usize].push(i);
        load[o as usize] += span(i) as f64 / CIRCLE;
    }
    for list in &mut ranges {
        list.sort_by(|&a, &b| span(b).cmp(&span(a)).then(a.cmp(&b)));
    }
    // Donors heaviest first by load over share (ties: the lower id).
    let mut donors: Vec<usize> = (0..targets.len())
        .filter(|&n| n != joiner as usize && !ranges[n].is_empty())
        .collect();
    let ratio = |n: usize| load[n] / targets[n];
    donors.sort_by(|&a, &b| ratio(b).total_cmp(&ratio(a)).then(a.cmp(&b)));
    let room = |i: usize| (span(i).saturating_sub(1)) as f64 / CIRCLE;
    let gifts_at = |level: f64, out: &mut Vec<Gift>| -> f64 {
        out.clear();
        let mut total = 0.0;
        let last = donors.len().saturating_sub(1).max(1) as f64;
        for (k, &n) in donors.iter().enumerate() {
            let mut want = load[n] - level * targets[n] * (1.0 + spread_by * k as f64 / last);
            for &i in &ranges[n] {
                if want <= 0.0 || out.len() == count {
                    break;
                }
                let amount = want.min(room(i));
                if amount > 0.0 {
                    out.push(Gift {
                        index: i,
                        amount,
                        pieces: 1,
                    });
                    total += amount;
                    want -= amount;
                }
            }
        }
        total
    };
    // The joiner ends at the level too: it takes `λ·t_j`.
    let share = targets[joiner as usize];
    let (mut low, mut high) = (0.0f64, donors.first().map_or(1.0, |&n| ratio(n)));
    let mut gifts = Vec::with_capacity(count);
    for _ in 0..STEPS {
        let mid = 0.5 * (low + high);
        match gifts_at(mid, &mut gifts) > mid * share {
            true => low = mid,
            false => high = mid,
        }
    }
    gifts_at(high, &mut gifts);
    spread(&mut gifts, &ranges, owners, count, &room);
    let mut chosen: Vec<u64> = Vec::with_capacity(count);
    for g in &gifts {
        let start = points[(g.index + p - 1) % p];
        let limit = span(g.index).saturating_sub(1).max(1);
        let offset = ((g.amount * CIRCLE).round() as u128).clamp(1, limit);
        // Pieces at offset·j/pieces: distinct, since offset ≥ pieces.
        let pieces = u128::from(g.pieces);
        chosen.extend((1..=pieces).map(|j| start.wrapping_add((offset * j / pieces) as u64)));
    }
    chosen.sort_unstable();
    chosen.dedup();
    chosen
}

/// Adds points until there are `count`: the largest gift is halved onto
/// its donor's next unused range (if that range has room for the half);
/// when no gift can be split that way, the gift of the largest pieces
/// gets one more point inside it (the joiner's take is unchanged). Stops
/// early only when every piece is down to a hash or two.
fn spread(
    gifts: &mut Vec<Gift>,
    ranges: &[Vec<usize>],
    owners: &[NodeId],
    count: usize,
    room: &dyn Fn(usize) -> f64,
) {
    let used = |gifts: &[Gift], i: usize| gifts.iter().any(|g| g.index == i);
    let mut placed: usize = gifts.iter().map(|g| g.pieces as usize).sum();
    while placed < count {
        let mut order: Vec<usize> = (0..gifts.len()).collect();
        order.sort_by(|&a, &b| gifts[b].amount.total_cmp(&gifts[a].amount).then(a.cmp(&b)));
        let split = order.iter().find_map(|&k| {
            let half = 0.5 * gifts[k].amount;
            let donor = owners[gifts[k].index] as usize;
            ranges[donor]
                .iter()
                .find(|&&i| {
                    gifts[k].pieces == 1 && !used(gifts, i) && room(i) >= half && half > 0.0
                })
                .map(|&i| (k, i, half))
        });
        match split {
            Some((k, i, half)) => {
                gifts[k].amount -= half;
                gifts.push(Gift {
                    index: i,
                    amount: half,
                    pieces: 1,
                });
            }
            None => {
                let piece = |g: &Gift| g.amount / f64::from(g.pieces + 1);
                let finest = (0..gifts.len())
                    .filter(|&k| piece(&gifts[k]) * CIRCLE >= 2.0)
                    .max_by(|&a, &b| {
                        piece(&gifts[a])
                            .total_cmp(&piece(&gifts[b]))
                            .then(b.cmp(&a))
                    });
                let Some(k) = finest else { return };
                gifts[k].pieces += 1;
            }
        }
        placed += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn splitmix(state: &mut u64) -> u64 {
        *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = *state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Each node's share of the circle on `points` owned by `owners`.
    fn loads(points: &[u64], owners: &[NodeId], nodes: usize) -> Vec<f64> {
        let mut load = vec![0.0; nodes];
        for (i, &o) in owners.iter().enumerate() {
            let before = points[(i + points.len() - 1) % points.len()];
            load[o as usize] += points[i].wrapping_sub(before) as f64 / CIRCLE;
        }
        load
    }

    /// On random rings (hashed points, so far from balanced; one to 40
    /// nodes, weights 1 to 3, one to 64 joiner points, with and without
    /// the stagger): the joiner gets `count` distinct points, none on an
    /// existing one; no existing node gains; the heaviest node over its
    /// share is no heavier after; the shares still sum to the circle.
    #[test]
    fn joins_only_take_and_take_from_the_heaviest() {
        let mut state = 29;
        for case in 0..300 {
            let nodes = 1 + (splitmix(&mut state) % 40) as usize;
            let per = 1 + (splitmix(&mut state) % 8) as usize;
            let mut ring: Vec<(u64, NodeId)> = (0..nodes * per)
                .map(|i| (splitmix(&mut state), (i % nodes) as NodeId))
                .collect();
            ring.sort_unstable();
            ring.dedup_by_key(|e| e.0);
            let (points, owners): (Vec<u64>, Vec<NodeId>) = ring.into_iter().unzip();
            let weights: Vec<f64> = (0..=nodes).map(|i| 1.0 + (i % 3) as f64).collect();
            let total: f64 = weights.iter().sum();
            let targets: Vec<f64> = weights.iter().map(|w| w / total).collect();
            let count = 1 + (splitmix(&mut state) % 64) as usize;
            let joiner = nodes as NodeId;
            let stagger = [0.0, 0.0625][case % 2];
            let chosen = allocate(&points, &owners, &targets, joiner, count, stagger);
            assert_eq!(chosen.len(), count, "case {case}");
            assert!(chosen.windows(2).all(|w| w[0] < w[1]), "case {case}");
            assert!(chosen.iter().all(|c| points.binary_search(c).is_err()));
            let mut after: Vec<(u64, NodeId)> =
                points.iter().copied().zip(owners.clone()).collect();
            after.extend(chosen.iter().map(|&c| (c, joiner)));
            after.sort_unstable();
            let (p2, o2): (Vec<u64>, Vec<NodeId>) = after.into_iter().unzip();
            let (old, new) = (
                loads(&points, &owners, nodes + 1),
                loads(&p2, &o2, nodes + 1),
            );
            for n in 0..nodes {
                assert!(new[n] <= old[n] + 1e-12, "case {case}: node {n} gained");
            }
            let sum: f64 = new.iter().sum();
            assert!((sum - 1.0).abs() < 1e-9, "case {case}: {sum}");
            let worst = |l: &[f64]| (0..nodes).map(|n| l[n] / targets[n]).fold(0.0, f64::max);
            assert!(worst(&new) <= worst(&old) + 1e-9, "case {case}");
            assert!(new[nodes] > 0.0, "case {case}: the joiner took nothing");
        }
    }
}
