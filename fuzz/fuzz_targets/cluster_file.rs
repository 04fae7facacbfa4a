//! Any bytes as a cluster file: `ClusterSpec::from_toml` must answer with a
//! spec or an `Error`, never panic; a spec that builds must place keys on
//! its own nodes, with distinct replicas led by the owner.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ringwise::{ClusterSpec, NodeId, Placement};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(mut spec) = ClusterSpec::from_toml(text) else {
        return;
    };
    // Small builds only: the fuzzer hunts wrong answers and panics, not
    // the documented cost of a 2^28-point ring (caps are tested elsewhere).
    let params = &mut spec.params;
    params.max_points = params.max_points.min(1 << 14);
    params.min_ring_size = params.min_ring_size.min(1 << 12);
    params.max_ring_size = params.max_ring_size.min(1 << 12);
    if params.table_size > 70_000 || spec.nodes.len() > 512 {
        return;
    }
    let Ok(keyed) = spec.build() else {
        return;
    };
    let placement = keyed.placement();
    let len = placement.len();
    let mut replicas = Vec::new();
    for key in [&b""[..], b"a", b"user:1", b"{tag}x", data] {
        let owner = keyed.owner(key);
        assert_eq!(owner.is_some(), len > 0);
        if let Some(id) = owner {
            assert!((id as usize) < len);
            assert!(keyed.locate(key).is_some());
        }
        keyed.replicas_into(key, 3, &mut replicas);
        assert_eq!(replicas.len(), len.min(3));
        assert_eq!(replicas.first().copied(), owner);
        let mut sorted: Vec<NodeId> = replicas.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), replicas.len(), "replicas repeat a node");
    }
});
