//! Exact movement between two slot tables of the same size (slots, or
//! maglev with one table size).
//!
//! Both look a hash up as `table[h % M]`, so slot `s` receives exactly the
//! hashes `h < 2^64` with `h % M == s`: `floor(2^64 / M)` of them, plus one
//! when `s < 2^64 mod M`. Comparing the two tables' owners slot by slot
//! gives the moved slots (as inclusive runs with one old and one new
//! owner, the form `CLUSTER SETSLOT` plans take) and the exact moved
//! fraction. Example: slots, `M` = 16384 divides `2^64`, every slot is
//! exactly `2^-14` of the space; maglev's `M` = 65537 gives slots of
//! `281470681808895` or one more hash.
//!
//! php-memcache's 1024 buckets are such a table too: bucket `b` receives
//! the keys whose 32-bit hash is `b` modulo 1024, exactly 2^-10 of them
//! (`diff_buckets`).
//!
//! Cost: O(M) owner reads (one array read each).

use std::collections::BTreeMap;

use super::report::{Method, MovedRange, Movement, Names};
use crate::algo::AnyPlacement;
use crate::algo::php_memcache::PhpMemcache;
use crate::node::NodeId;
use crate::placement::Placement;

/// The table size both snapshots share, if both are slot tables.
pub(super) fn common_size(old: &AnyPlacement, new: &AnyPlacement) -> Option<u64> {
    let same_kind = old.algorithm() == new.algorithm();
    match (old.table_size(), new.table_size()) {
        (Some(a), Some(b)) if a == b && same_kind => Some(a),
        _ => None,
    }
}

/// Hashes `h < 2^64` with `h % size == slot`.
fn hashes_in(slot: u64, size: u64) -> u128 {
    let space = 1u128 << 64;
    let size = u128::from(size);
    space / size + u128::from(u128::from(slot) < space % size)
}

pub(super) fn diff(old: &AnyPlacement, new: &AnyPlacement, size: u64, names: Names) -> Movement {
    diff_slots(|s| old.owner(s), |s| new.owner(s), size, names)
}

/// Two php-memcache snapshots: their 1024 buckets, each `h % 1024` of the
/// 32-bit key hash, so each exactly 2^-10 of the keys, as a table's slot.
pub(super) fn diff_buckets(old: &PhpMemcache, new: &PhpMemcache, names: Names) -> Movement {
    let size = u64::from(crate::algo::php_memcache::BUCKETS);
    diff_slots(|b| old.bucket(b), |b| new.bucket(b), size, names)
}

/// The slot-by-slot comparison of two tables of `size` slots, given each
/// slot's owner.
fn diff_slots(
    old: impl Fn(u64) -> Option<NodeId>,
    new: impl Fn(u64) -> Option<NodeId>,
    size: u64,
    names: Names,
) -> Movement {
    let mut ranges: Vec<MovedRange> = Vec::new();
    let mut flows: BTreeMap<(u32, u32), u128> = BTreeMap::new();
    for slot in 0..size {
        let (Some(a), Some(b)) = (old(slot), new(slot)) else {
            continue;
        };
        let (from, to) = (names.old(a), names.new_index(b));
        if from == to {
            continue;
        }
        *flows.entry((from, to)).or_default() += hashes_in(slot, size);
        match ranges.last_mut() {
            Some(r) if r.end + 1 == slot && (r.from, r.to) == (from, to) => r.end = slot,
            _ => ranges.push(MovedRange {
                start: slot,
                end: slot,
                from,
                to,
            }),
        }
    }
    names.finish(Method::Table { size }, ranges, flows, 2f64.powi(64))
}
