//! `varnish-shard` against a transcription of Varnish's own lookup:
//! `shard_lookup` (binary search for the first point `>=` the key, the
//! last point when there is none) and `shard_next` (distinct hosts walking
//! up, wrapping), from varnish-cache 7.1.1
//! `vmod/vmod_directors_shard_dir.c`, on the circle `shardcfg_hashcircle`
//! builds (`trunc(replicas × weight)` points `ident ‖ j`, `j` from 0).
//! Every point, its neighbours and both ends are looked up. The real
//! varnishd is the judge in `crates/cli/tests/compat/varnish.rs`.

use ringwise::wire::{cell_key, varnish_key};
use ringwise::{Node, Placement, Ring, VarnishShard};

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
    let scheme = VarnishShard::new(10, 1 << 24).expect("a scheme");
    let ring = Ring::builder()
        .scheme(scheme)
        .nodes(names.iter().map(|&(n, w)| Node::new(n).weight(w)))
        .build()
        .expect("builds");
    let mut circle: Vec<(u32, usize)> = Vec::new();
    for (id, &(name, weight)) in names.iter().enumerate() {
        for j in 0..(10.0 * weight) as u32 {
            circle.push((varnish_key(format!("{name}{j}").as_bytes()), id));
        }
    }
    circle.sort_unstable();
    assert_eq!(circle.len(), 10 + 25 + 19);
    assert_eq!(ring.iter().count(), circle.len() + 1, "one top point");
    let top = circle[circle.len() - 1].0;
    let mut keys: Vec<u32> = circle
        .iter()
        .flat_map(|&(p, _)| [p, p.wrapping_add(1), p.wrapping_sub(1)])
        .collect();
    keys.extend([0, u32::MAX, top + 1]);
    for key in keys {
        let want = varnish_walk(&circle, key, 3);
        let mut out = Vec::new();
        ring.replicas_into(cell_key(key), 3, &mut out);
        let got: Vec<usize> = out.iter().map(|&id| id as usize).collect();
        assert_eq!(got, want, "key {key}");
    }
}
