//! Exact movement between two rings: merge the sorted point lists.
//!
//! Point `i` owns the hashes `(p[i-1], p[i]]` (point 0 also the wrap). Take
//! the union `B` of both rings' point values, sorted: between two
//! consecutive values `(B[k-1], B[k]]` neither ring has a point, so every
//! hash there has the same old owner (the old ring's first point `>=
//! B[k]`) and the same new owner. Walking `B` with one cursor per ring
//! yields each arc's two owners in O(P_old + P_new); arcs whose owner
//! changed (by name) become ranges, neighbours with the same pair merged.
//!
//! Worked example on a 100-position toy circle: old A@10, B@60; new A@10,
//! C@40, B@60. `B` = {10, 40, 60}: (60, 10] A→A, (10, 40] B→C, (40, 60]
//! B→B, so one range (10, 40] moves from B to C: 30 positions.
//!
//! Equal points: the ring's first entry at a value owns it (ties broken by
//! the ring's tie rule before we see them), so only the first entry per
//! value is kept.

use std::collections::BTreeMap;

use super::report::{Method, MovedRange, Movement, Names};
use crate::algo::haproxy::Haproxy;
use crate::algo::ring::RingView;
use crate::node::NodeId;

pub(super) fn diff(old: &dyn RingView, new: &dyn RingView, names: Names) -> Movement {
    let a = firsts(old.point_count(), old.points(), |id| names.old(id));
    let b = firsts(new.point_count(), new.points(), |id| names.new_index(id));
    merge(&a, &b, names, Method::Arcs)
}

/// Two HAProxy trees in successor form (`algo/haproxy/arcs.rs`): exact
/// ranges of the hash without `avalanche`, arcs of the mixed hash with it
/// ([`Method::MixedArcs`]: fraction and flows exact, no ranges listed).
pub(super) fn diff_haproxy(old: &Haproxy, new: &Haproxy, names: Names) -> Movement {
    let (p, q) = (old.successor_points(), new.successor_points());
    let a = firsts(p.len(), Box::new(p.into_iter()), |id| names.old(id));
    let b = firsts(q.len(), Box::new(q.into_iter()), |id| names.new_index(id));
    let method = match old.avalanche() {
        false => Method::Arcs,
        true => Method::MixedArcs,
    };
    merge(&a, &b, names, method)
}

/// The moved ranges and flows of two successor-form point lists; only the
/// flows for [`Method::MixedArcs`], whose arcs are no ranges of the hash.
fn merge(a: &[(u64, u32)], b: &[(u64, u32)], names: Names, method: Method) -> Movement {
    let mut ranges: Vec<MovedRange> = Vec::new();
    let mut flows: BTreeMap<(u32, u32), u128> = BTreeMap::new();
    let total = 2f64.powi(64);
    let (Some(last_a), Some(last_b)) = (a.last(), b.last()) else {
        return names.finish(method, ranges, flows, total);
    };
    // The first arc wraps: it starts after the highest point of either.
    let mut prev = last_a.0.max(last_b.0);
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        let head = |list: &[(u64, u32)], k: usize| list.get(k).map_or(u64::MAX, |e| e.0);
        // Past the last point of one ring its owner wraps to its first.
        let point = head(a, i).min(head(b, j));
        let (from, to) = (a[i % a.len()].1, b[j % b.len()].1);
        if from != to {
            let range = MovedRange {
                start: prev,
                end: point,
                from,
                to,
            };
            *flows.entry((from, to)).or_default() += range.arc_len();
            if method == Method::Arcs {
                push(&mut ranges, range);
            }
        }
        i += usize::from(i < a.len() && a[i].0 == point);
        j += usize::from(j < b.len() && b[j].0 == point);
        prev = point;
    }
    join_wrap(&mut ranges);
    names.finish(method, ranges, flows, total)
}

/// `(point, name index)` of the first entry at each point value.
fn firsts(
    count: usize,
    points: Box<dyn Iterator<Item = (u64, NodeId)> + '_>,
    index: impl Fn(u32) -> u32,
) -> Vec<(u64, u32)> {
    let mut out: Vec<(u64, u32)> = Vec::with_capacity(count);
    for (point, id) in points {
        if out.last().is_none_or(|&(p, _)| p != point) {
            out.push((point, index(id)));
        }
    }
    out
}

/// Appends `range`, extending the last one when it continues it.
fn push(ranges: &mut Vec<MovedRange>, range: MovedRange) {
    if let Some(last) = ranges.last_mut()
        && last.end == range.start
        && (last.from, last.to) == (range.from, range.to)
    {
        last.end = range.end;
        return;
    }
    ranges.push(range);
}

/// The last range and the first meet at the top of the circle when the
/// first arc (the wrap) continues the last: one range, wrapping.
fn join_wrap(ranges: &mut Vec<MovedRange>) {
    if ranges.len() < 2 {
        return;
    }
    let (first, last) = (ranges[0], ranges[ranges.len() - 1]);
    if last.end == first.start && (last.from, last.to) == (first.from, first.to) {
        ranges[0].start = last.start;
        ranges.pop();
    }
}
