//! `ringwise join`, `watch`, `config` and `lookup --membership zk://...`
//! as processes against a real ZooKeeper on loopback (Debian's
//! `zookeeper`, installed by scripts/install-test-deps; the servers are
//! the ZooKeeper crate's test helpers, killed by pid however a test ends):
//! the scenarios every source shares (crates/cli/tests/membership.rs),
//! a `watch` paused past its session timeout that relists and drops the
//! member that left meanwhile, and digest authentication.

use std::time::{Duration, Instant};

use crate::membership::{
    Process, join_at, lookup_and_config, membership, registrars_leave_every_ring, until, until_ring,
};
use crate::support::{ringwise, stderr, stdout};

#[path = "../../zookeeper/tests/support/zookeeper.rs"]
#[allow(
    dead_code,
    reason = "the ZooKeeper crate's helpers; these tests need one server"
)]
// Also the docs test's ZooKeeper (one copy of the file in this binary).
pub(crate) mod server;

use server::Zk;

fn url(zk: &Zk, prefix: &str) -> String {
    format!("zk://{}{prefix}", zk.hosts().join(","))
}

#[test]
fn zookeeper_through_membership_urls() {
    let zk = Zk::single();
    let url = url(&zk, "/t");
    lookup_and_config(&|| url.clone());
}

#[test]
fn zookeeper_registrars_leave_every_ring() {
    let zk = Zk::single();
    let url = url(&zk, "/t");
    // A session of 3 s: killed, the member leaves when ZooKeeper expires
    // it; stopped, its session is closed and the znode goes at once.
    registrars_leave_every_ring(&|| membership(&url), 3, Duration::from_secs(1));
}

/// A `watch` stopped (SIGSTOP) for longer than its session timeout while a
/// member leaves: on SIGCONT its session has expired, it opens a new one,
/// lists again (its log says so) and the member is gone from its ring.
#[test]
fn a_paused_watch_relists_after_its_session_expired() {
    let zk = Zk::single();
    let url = url(&zk, "/t");
    let _a = join_at(&url, "a", "10");
    let mut b = join_at(&url, "b", "10");
    let watch = [
        "watch",
        "--membership",
        &url,
        "--format",
        "json",
        "--ttl",
        "2",
    ];
    let (watcher, lines, logs) = Process::start_logged(&watch);
    until(&lines, Duration::from_secs(20), |m| m.len() == 2);
    watcher.signal("STOP");
    b.signal("TERM");
    assert!(b.wait(Duration::from_secs(5)).is_some_and(|s| s.success()));
    // Past the watcher's 2 s session (ZooKeeper may round it up to its
    // tick; 250 ms here) and the server's expiry sweep.
    std::thread::sleep(Duration::from_secs(5));
    watcher.signal("CONT");
    let (_, ring) = until_ring(&lines, Duration::from_secs(20), |m| m == ["a"]);
    assert_eq!(ring["fingerprint"].as_str().map(str::len), Some(16));
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let Ok((_, line)) = logs.recv_timeout(left) else {
            panic!("no relist logged");
        };
        if line.contains("listed again") {
            assert!(line.contains("relists=1"), "{line}");
            break;
        }
    }
}

/// `--zk-auth USER:PASSWORD`: the members' and the settings' znodes get a
/// digest ACL (CREATOR_ALL); a client without the credentials is refused
/// with one line naming the znode (exit 69), one with them reads and
/// writes; a wrong use of the flag is a usage error.
#[test]
fn digest_authentication_passes_through() {
    let zk = Zk::single();
    let url = url(&zk, "/auth");
    let _a = Process::start(&[
        "join",
        "--membership",
        &url,
        "--zk-auth",
        "ops:s3cret",
        "--name",
        "a",
    ])
    .0;
    let lookup = |auth: &[&str]| {
        ringwise(
            &[&["lookup", "--membership", &url], auth, &["user:1"]].concat(),
            b"",
        )
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let out = lookup(&["--zk-auth", "ops:s3cret"]);
        if stdout(&out) == "user:1\ta\n" {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "a never listed: {}",
            stderr(&out)
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let refused = lookup(&[]);
    assert_eq!(refused.status.code(), Some(69), "{}", stdout(&refused));
    assert!(stderr(&refused).contains("NoAuth"), "{}", stderr(&refused));
    assert_eq!(stderr(&refused).lines().count(), 1, "{}", stderr(&refused));
    let set = |auth: &[&str]| {
        let args = ["config", "--membership", &url, "--set", "vnodes=100"];
        ringwise(&[&args[..], auth].concat(), b"")
    };
    let refused = set(&["--zk-auth", "ops:wrong"]);
    assert_eq!(refused.status.code(), Some(69), "{}", stdout(&refused));
    let allowed = set(&["--zk-auth", "ops:s3cret"]);
    assert!(allowed.status.success(), "{}", stderr(&allowed));
    let bad = lookup(&["--zk-auth", "ops"]);
    assert_eq!(bad.status.code(), Some(2), "{}", stderr(&bad));
    assert!(stderr(&bad).contains("--zk-auth"), "{}", stderr(&bad));
    let etcd = ringwise(
        &[
            "lookup",
            "--membership",
            "etcd://127.0.0.1:1/t",
            "--zk-auth",
            "ops:x",
            "user:1",
        ],
        b"",
    );
    assert_eq!(etcd.status.code(), Some(2), "{}", stderr(&etcd));
    assert!(
        stderr(&etcd).contains("--zk-auth is ZooKeeper's"),
        "{}",
        stderr(&etcd)
    );
}
