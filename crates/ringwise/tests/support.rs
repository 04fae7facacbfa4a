//! Helpers shared by the test modules: node names and proptest strategies of
//! node sets, the totality checks every placement must pass, and child
//! processes that cannot outlive a failing test (`support/process.rs`).

pub mod ownership;
pub mod process;
pub mod redis;
pub mod rng;
pub mod vectors;

use std::collections::HashSet;
use std::fmt::Debug;

use proptest::prelude::*;
use ringwise::{Node, NodeId, Placement};

/// The name of the node that owns `hash`; `None` only without nodes.
pub fn owner_name<P: Placement>(placement: &P, hash: u64) -> Option<&str> {
    placement
        .owner(hash)
        .and_then(|id| placement.nodes().name(id))
}

/// The x86 `crc32q` instruction by its definition, one bit at a time: the
/// seed's low 32 bits start the CRC-32C (no inversions), then the key's 8
/// little-endian bytes. The models of `anchor` and `memento` hash with it,
/// independently of the library's table-driven one.
pub fn crc32c_u64(key: u64, seed: u64) -> u32 {
    let mut crc = seed as u32;
    for byte in key.to_le_bytes() {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = (crc >> 1) ^ (0x82F6_3B78 & (crc & 1).wrapping_neg());
        }
    }
    crc
}

/// Nodes of weight 1 without zones, in the order given.
pub fn nodes<S: AsRef<str>>(names: impl IntoIterator<Item = S>) -> Vec<Node> {
    names.into_iter().map(|n| Node::new(n.as_ref())).collect()
}

/// Valid node names: numbered ones, short ASCII ones, and other scripts
/// (two-, three- and four-byte UTF-8), whose byte order is not their
/// letter order.
pub fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        (0u32..1000).prop_map(|i| format!("node-{i}")),
        "[a-z]{1,6}",
        "[а-яё日本語🦀]{1,4}",
    ]
}

/// The lists of `items` without the later repeats of a name, in the order
/// generated (so the first of equal names is kept, and the order stays a
/// join order). Node tables refuse repeated names.
pub fn distinct<T: Clone + Debug>(
    items: impl Strategy<Value = Vec<T>>,
    name: fn(&T) -> &str,
) -> impl Strategy<Value = Vec<T>> {
    items.prop_map(move |items| {
        let mut seen = HashSet::new();
        items
            .into_iter()
            .filter(|item| seen.insert(name(item).to_owned()))
            .collect()
    })
}

/// What every placement promises without nodes, for each of `hashes`: no
/// owner, no replicas (the buffer is cleared), no batch owners.
pub fn assert_empty<P: Placement>(empty: &P, hashes: &[u64]) {
    assert!(empty.is_empty());
    assert_eq!(empty.len(), 0);
    let mut out = vec![7];
    for &h in hashes {
        assert_eq!(empty.owner(h), None, "hash {h}");
        for n in 0..=3 {
            out.push(7);
            empty.replicas_into(h, n, &mut out);
            assert!(out.is_empty(), "hash {h}, {n} replicas: {out:?}");
        }
    }
    out.push(7);
    empty.owners_into(hashes, &mut out);
    assert!(out.is_empty());
}

/// What every placement promises on zero, one and two nodes, for each of
/// `hashes`: [`assert_empty`]; the single node owns every hash and is its
/// only replica; two nodes give two distinct replicas (however many are
/// asked for), the owner first, and both own some of `hashes`. The batch
/// call, made through the trait object as generic code makes it, agrees
/// with `owner` hash for hash.
pub fn assert_total<P: Placement>(empty: &P, one: &P, two: &P, hashes: &[u64]) {
    assert_empty(empty, hashes);
    assert_eq!((one.len(), two.len()), (1, 2));
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    for &h in hashes {
        assert_eq!(one.owner(h), Some(0), "hash {h}");
        one.replicas_into(h, 3, &mut out);
        assert_eq!(out, [0], "hash {h}");
        let owner = two.owner(h).expect("two nodes");
        seen.insert(owner);
        for n in [1, 2, 5] {
            two.replicas_into(h, n, &mut out);
            assert_eq!(out.len(), n.min(2), "hash {h}, {n} replicas");
            assert_eq!(out[0], owner, "hash {h}: the owner comes first");
            if n > 1 {
                assert_ne!(out[0], out[1], "hash {h}: replicas repeat");
            }
        }
    }
    assert_eq!(seen, HashSet::from([0, 1]), "both nodes own some hash");
    let as_trait: &dyn Placement = two;
    assert_eq!(as_trait.len(), 2);
    as_trait.owners_into(hashes, &mut out);
    let single: Vec<NodeId> = hashes.iter().filter_map(|&h| two.owner(h)).collect();
    assert_eq!(out, single);
}
