//! Ring ownership as a map of arcs, and streaming a moved range over it:
//! the "applied" check of a ring or Cassandra token plan, shared by the
//! library's movement test and the CLI's plan test (which includes this
//! file by path). Positions are the 64-bit circle (tokens through
//! `token_point`).

#![allow(dead_code)] // each test binary uses its own part of it

/// Token ownership as a map: each key `p` owns `(previous key, p]`, the
/// first key also the wrap past the last; a node's name per arc.
pub type Ownership = std::collections::BTreeMap<u64, String>;

/// The owner of position `x`: the first key `>= x`, wrapping.
pub fn owner_at(arcs: &Ownership, x: u64) -> String {
    let next = arcs.range(x..).next().or_else(|| arcs.iter().next());
    next.expect("owned").1.clone()
}

/// Streams `(start, end]` from `from` to `to`: checks that `from` owns all
/// of it now, then hands it over (splitting the arcs at both ends).
pub fn stream(arcs: &mut Ownership, start: u64, end: u64, from: &str, to: &str) {
    for x in [start, end] {
        let owner = owner_at(arcs, x);
        arcs.entry(x).or_insert(owner);
    }
    let inside: Vec<u64> = if start < end {
        arcs.range(start + 1..=end).map(|(&k, _)| k).collect()
    } else {
        // Wrapping (start == end: the whole circle).
        let high = arcs.range(start.saturating_add(1)..).map(|(&k, _)| k);
        let high: Vec<u64> = if start == u64::MAX {
            Vec::new()
        } else {
            high.collect()
        };
        high.into_iter()
            .chain(arcs.range(..=end).map(|(&k, _)| k))
            .collect()
    };
    for k in inside {
        let owner = arcs.get_mut(&k).expect("a key");
        assert_eq!(
            owner, from,
            "({start}, {end}] streams from {from}: arc ending at {k}"
        );
        *owner = to.to_owned();
    }
}

/// The arcs with neighbours of one owner merged (a key is kept when the
/// arc after it has another owner), and the set of owners.
pub fn canonical(arcs: &Ownership) -> (Vec<(u64, String)>, Vec<String>) {
    let list: Vec<(u64, String)> = arcs.iter().map(|(k, v)| (*k, v.clone())).collect();
    let kept = (0..list.len())
        .filter(|&i| list[i].1 != list[(i + 1) % list.len()].1)
        .map(|i| list[i].clone())
        .collect();
    let mut owners: Vec<String> = arcs.values().cloned().collect();
    owners.sort();
    owners.dedup();
    (kept, owners)
}
