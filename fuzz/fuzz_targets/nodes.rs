//! Any text as `--nodes LIST`: the CLI's own parser (`crates/cli/src/nodes.rs`,
//! compiled here as is) answers with nodes or an error, never panics; the
//! nodes it gives are one per comma-separated item, and a cluster of them
//! is either refused with an `Error` or builds and places keys on them.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ringwise::{Algorithm, ClusterSpec, Placement};

#[path = "../../crates/cli/src/nodes.rs"]
mod nodes;

fuzz_target!(|data: &[u8]| {
    let Ok(list) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(parsed) = nodes::parse(list) else {
        return;
    };
    assert_eq!(parsed.len(), list.split(',').count());
    assert!(parsed.iter().all(|n| !n.name.is_empty()));
    let Ok(mut spec) = ClusterSpec::new(Algorithm::Ring, parsed) else {
        return;
    };
    spec.params.vnodes = 4;
    spec.params.max_points = 1 << 14;
    let Ok(keyed) = spec.build() else {
        return;
    };
    let owner = keyed.owner(b"key");
    assert_eq!(owner.is_some(), !keyed.placement().is_empty());
    if let Some(name) = keyed.locate(b"key") {
        assert!(spec.nodes.contains(name));
    }
});
