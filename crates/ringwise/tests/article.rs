//! The seed article's published examples and figures (md5, 100 vnodes).
//!
//! These are the article's own outputs, printed by its program; the
//! independent Python peer in `seed_peer.rs` checks the same recipe on random
//! clusters.

use ringwise::{KeyHasher, Keyed, Node, NodeId, Placement, Ring, StableHash};

fn ring(vnodes: u32, names: impl IntoIterator<Item = String>) -> Ring {
    Ring::builder()
        .hasher(StableHash::Md5)
        .vnodes(vnodes)
        .nodes(names.into_iter().map(Node::new))
        .build()
        .expect("valid ring")
}

fn ten(vnodes: u32) -> Ring {
    ring(vnodes, (0..10).map(|i| format!("node-{i}")))
}

fn key_hashes(count: usize) -> Vec<u64> {
    (0..count)
        .map(|i| StableHash::Md5.hash(format!("user:{i}").as_bytes()))
        .collect()
}

fn owners(ring: &Ring, hashes: &[u64]) -> Vec<String> {
    let ids: Vec<NodeId> = hashes
        .iter()
        .map(|&h| ring.owner(h).expect("nodes"))
        .collect();
    ids.into_iter()
        .map(|id| ring.nodes().name(id).expect("issued id").to_owned())
        .collect()
}

#[test]
fn cache_example() {
    let abc = ring(100, ["cache-a", "cache-b", "cache-c"].map(String::from));
    let without = abc.without_node("cache-a").expect("member");
    let abc = Keyed::new(abc, StableHash::Md5);
    assert_eq!(abc.locate("user:42"), Some("cache-a"));
    assert_eq!(abc.replicas("user:42", 2), ["cache-a", "cache-b"]);
    let without = Keyed::new(without, StableHash::Md5);
    assert_eq!(without.locate("user:42"), Some("cache-b"));
}

#[test]
fn adding_node_10_moves_7_71_percent_all_to_it() {
    let hashes = key_hashes(1_000_000);
    let before_ring = ten(100);
    let after_ring = before_ring
        .with_node(Node::new("node-10"))
        .expect("new name");
    let before = owners(&before_ring, &hashes);
    let after = owners(&after_ring, &hashes);
    let moved: Vec<_> = before.iter().zip(&after).filter(|(b, a)| b != a).collect();
    let fraction = moved.len() as f64 / hashes.len() as f64;
    assert_eq!(format!("{:.2}", fraction * 100.0), "7.71");
    assert!(moved.iter().all(|(_, a)| a.as_str() == "node-10"));
    let donors: std::collections::BTreeSet<_> = moved.iter().map(|(b, _)| b.as_str()).collect();
    assert_eq!(donors.len(), 10);

    // Load spread before the change: stddev / mean of keys per node, 5.7 %.
    let mut load = std::collections::HashMap::<&str, f64>::new();
    for name in &before {
        *load.entry(name).or_default() += 1.0;
    }
    let mean = hashes.len() as f64 / 10.0;
    let var = load.values().map(|l| (l - mean).powi(2)).sum::<f64>() / 10.0;
    assert_eq!(format!("{:.1}", var.sqrt() / mean * 100.0), "5.7");
}

#[test]
fn failure_with_one_vnode_falls_on_one_neighbour() {
    let hashes = key_hashes(1_000_000);
    let before_ring = ten(1);
    let before = owners(&before_ring, &hashes);
    let share = |name: &str, owners: &[String]| {
        owners.iter().filter(|o| o.as_str() == name).count() as f64 / hashes.len() as f64
    };
    assert_eq!(format!("{:.1}", share("node-1", &before) * 100.0), "27.8");
    let after = owners(
        &before_ring.without_node("node-1").expect("member"),
        &hashes,
    );
    let receivers: std::collections::BTreeSet<_> = before
        .iter()
        .zip(&after)
        .filter(|(b, a)| b != a)
        .map(|(b, a)| {
            assert_eq!(b, "node-1", "only the removed node's keys may move");
            a.as_str()
        })
        .collect();
    assert_eq!(receivers.into_iter().collect::<Vec<_>>(), ["node-9"]);
    assert_eq!(format!("{:.1}", share("node-9", &before) * 100.0), "0.3");
    assert_eq!(format!("{:.1}", share("node-9", &after) * 100.0), "28.1");
}
