//! `ringwise join` with a weight the cluster's settings cannot build (10^6
//! at 160 points per unit: 1.6 x 10^8 points, past the 2^24 budget):
//! refused up front with exit 2, naming --weight, before anything is
//! registered; and such a member written by another program does not stop
//! a new client (it used to make `lookup --membership` and `watch` exit 65).

use std::time::Duration;

use crate::etcd::server::Etcd;
use crate::membership::Process;
use crate::support::{ringwise, stderr, stdout};

#[test]
fn join_refuses_a_weight_past_the_point_budget_before_registering() {
    let etcd = Etcd::single();
    let endpoints = etcd.endpoints();
    let base = ["--etcd", endpoints.as_str(), "--prefix", "/t"];
    let run = |args: &[&str]| ringwise(&[args, &base].concat(), b"");
    // A join that is not refused runs until stopped: killed after 10 s.
    let join = |name: &str, weight: &str| {
        let args = ["join", "--name", name, "--weight", weight, "--ttl", "10"];
        Process::run(&[&args[..], &base].concat(), Duration::from_secs(10))
    };
    let (status, said) = join("huge", "1000000");
    assert_eq!(status.code(), Some(2), "{said}");
    assert!(
        said.starts_with(
            "ringwise: error: --weight: member \"huge\" cannot be built under the cluster's \
             settings (every client would leave it out of the ring): the ring would hold \
             160000000 points, more than its budget of 16777216"
        ),
        "{said}"
    );
    assert_eq!(etcd.count(), 0, "nothing registered");
    // Under a lower budget set in the config, a smaller weight is refused.
    let set = run(&["config", "--set", "max_points=1000"]);
    assert!(set.status.success(), "{}", stderr(&set));
    let (status, said) = join("ten", "10");
    assert_eq!(status.code(), Some(2), "{said}");
    assert!(said.contains("1600 points"), "{said}");
    assert_eq!(etcd.count(), 1, "only the config");
    // Written by another program, it is left out and named: a new client
    // starts on the ring of the others.
    etcd.put("/t/nodes/a", b"{}");
    etcd.put("/t/nodes/huge", br#"{"weight": 1000000}"#);
    let keys = ["user:1", "user:2", "user:3"];
    let live = run(&[&["lookup"], &keys[..]].concat());
    assert!(live.status.success(), "{}", stderr(&live));
    let file = ringwise(&[&["lookup", "--nodes", "a"], &keys[..]].concat(), b"");
    assert_eq!(stdout(&live), stdout(&file));
}
