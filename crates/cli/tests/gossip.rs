//! `ringwise join`, `watch`, `config` and `lookup --membership
//! gossip://...` as processes on loopback, with no server at all: the
//! scenarios every source shares (crates/cli/tests/membership.rs). The
//! first participant listens on a port chosen here and is every later
//! one's seed; the others take port 0 (any free port). Every process is
//! killed by its pid when the test ends, however it ends.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::membership::{lookup_and_config, membership, registrars_leave_every_ring};

/// The URLs of one gossip cluster `cluster`: the first call listens on
/// the seed address, every later one on a free port, seeded by it.
fn urls(cluster: &str) -> impl Fn() -> String {
    let seed = std::net::UdpSocket::bind("127.0.0.1:0")
        .and_then(|s| s.local_addr())
        .expect("a free UDP port")
        .to_string();
    let first = AtomicBool::new(true);
    let cluster = format!("{cluster}-{}", std::process::id());
    move || {
        if first.swap(false, Ordering::Relaxed) {
            format!("gossip://{seed}?cluster={cluster}")
        } else {
            format!("gossip://127.0.0.1:0?seeds={seed}&cluster={cluster}")
        }
    }
}

#[test]
fn gossip_through_membership_urls() {
    lookup_and_config(&urls("lookup"));
}

#[test]
fn gossip_registrars_leave_every_ring() {
    // ttl 3 s: the failure detector's bound; a SIGTERMed member announces
    // that it left and is gone within a few gossip rounds.
    let urls = urls("leave");
    registrars_leave_every_ring(&|| membership(&urls()), 3, Duration::from_secs(2));
}
