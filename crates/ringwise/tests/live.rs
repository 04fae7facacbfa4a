//! Concurrent readers against a writer that swaps membership 10,000 times.

use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;

use ringwise::{Live, Node, Placement, Ring, StableHash};

/// The owner by brute force: the first point >= hash, else the first point.
fn brute_owner(ring: &Ring, hash: u64) -> Option<u32> {
    let mut points = ring.iter();
    let first = ring.iter().next().map(|(_, o)| o);
    points.find(|&(p, _)| p >= hash).map(|(_, o)| o).or(first)
}

#[test]
fn readers_always_see_one_whole_snapshot() {
    const SWAPS: u64 = 10_000;
    let names: Vec<String> = (0..16).map(|i| format!("n{i}")).collect();
    let start = Ring::builder()
        .hasher(StableHash::Xxh3)
        .vnodes(8)
        .nodes(names[..8].iter().map(Node::new))
        .build()
        .expect("valid");
    let live = Live::new(start);
    let done = AtomicBool::new(false);

    thread::scope(|scope| {
        let readers: Vec<_> = (0..4u64)
            .map(|r| {
                let (live, done) = (&live, &done);
                scope.spawn(move || {
                    let (mut reads, mut last_epoch) = (0u64, 0u64);
                    let mut x = r.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
                    while !done.load(Ordering::Acquire) || reads < 1000 {
                        let snapshot = live.load();
                        assert!(snapshot.epoch >= last_epoch, "epochs never go back");
                        last_epoch = snapshot.epoch;
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        let ring = &snapshot.placement;
                        let got = ring.owner(x);
                        assert_eq!(got, brute_owner(ring, x), "epoch {}", snapshot.epoch);
                        if let Some(id) = got {
                            let name = ring.nodes().name(id).expect("issued id");
                            assert!(ring.nodes().contains(name));
                        }
                        reads += 1;
                    }
                    reads
                })
            })
            .collect();

        for step in 0..SWAPS {
            let name = &names[(step.wrapping_mul(7) % 16) as usize];
            live.update(|ring| {
                if ring.nodes().contains(name) {
                    ring.without_node(name)
                } else {
                    ring.with_node(Node::new(name.clone()))
                }
            })
            .expect("valid change");
        }
        done.store(true, Ordering::Release);
        for reader in readers {
            assert!(reader.join().expect("reader passed") >= 1000);
        }
    });
    assert_eq!(live.load().epoch, SWAPS);
}

#[test]
fn a_failed_update_changes_nothing() {
    let live = Live::new(Ring::builder().node(Node::new("a")).build().expect("valid"));
    let result = live.update(|ring| ring.with_node(Node::new("a")));
    assert!(result.is_err());
    let snapshot = live.load();
    assert_eq!(snapshot.epoch, 0);
    assert_eq!(snapshot.placement.len(), 1);
}

#[test]
fn publish_never_goes_back_in_revision() {
    let live = Live::at_revision("r5", 5);
    assert_eq!(live.load().revision, 5);
    assert_eq!(
        live.publish(5, "again r5"),
        None,
        "same revision: no change"
    );
    assert_eq!(live.publish(4, "r4"), None, "older revision: no change");
    assert_eq!(live.load().placement, "r5");
    assert_eq!(live.publish(9, "r9"), Some(1));
    let now = live.load();
    assert_eq!((now.epoch, now.revision, now.placement), (1, 9, "r9"));
    // A plain update keeps the revision it was built on.
    assert_eq!(live.store("local"), 2);
    assert_eq!(live.load().revision, 9);
}
