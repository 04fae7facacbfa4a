//! Joins, leaves (clean) and kills: every watcher converges to the same
//! members and the same fingerprint, at 10 members (7 in-process, 3 real
//! processes: SIGTERM leaves at once, SIGKILL leaves when the failure
//! detector says so) and at 50 (in-process; a dropped registrar stops
//! gossiping like a killed one).

use std::net::SocketAddr;
use std::time::Duration;

use ringwise_gossip::{Gossip, Member, Registrar};

use crate::support::{Process, cluster, converge, gossip, watchers};

/// Joins `names` concurrently, each its own in-process node.
pub async fn join_all(
    cluster: &str,
    seeds: &[SocketAddr],
    ttl: Duration,
    names: Vec<String>,
) -> Vec<Registrar> {
    let joins: Vec<_> = names
        .into_iter()
        .map(|name| {
            let gossip: Gossip = gossip(cluster, seeds, ttl);
            tokio::spawn(async move { gossip.join(&name, Member::default()).await })
        })
        .collect();
    let mut registrars = Vec::new();
    for join in joins {
        registrars.push(join.await.expect("joined").expect("registered"));
    }
    registrars
}

fn named(prefix: &str, range: std::ops::Range<usize>) -> Vec<String> {
    range.map(|i| format!("{prefix}{i}")).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_members_with_processes_join_leave_and_sigkill() {
    let ttl = Duration::from_secs(4);
    let deadline = Duration::from_secs(40);
    let cluster = cluster("ten");
    let first = gossip(&cluster, &[], ttl)
        .join("m0", Member::default())
        .await;
    let first = first.expect("the first member registers without seeds");
    let seeds = [first.address()];
    let mut registrars = vec![first];
    registrars.extend(join_all(&cluster, &seeds, ttl, named("m", 1..7)).await);
    let mut processes: Vec<Process> = (7..10)
        .map(|i| Process::start(&cluster, &seeds, &format!("m{i}"), ttl, "{}"))
        .collect();
    let watchers = watchers(&cluster, &seeds, ttl, 3).await;
    let mut expected = named("m", 0..10);
    converge(&watchers, &expected, deadline).await;
    // The members joined as processes hold their addresses: a watcher
    // can reach them.
    let ring = watchers[0].load();
    assert_eq!(ring.placement.members.len(), 10);

    // SIGTERM: the member announces `left` and exits 0.
    let status = processes[0].signal("TERM").expect("m7 was running");
    assert!(status.success(), "m7 exited with {status}");
    expected.retain(|n| n != "m7");
    converge(&watchers, &expected, deadline).await;

    // SIGKILL: nothing said; the failure detector declares it dead.
    processes[1].signal("KILL");
    expected.retain(|n| n != "m8");
    converge(&watchers, &expected, ttl + deadline).await;

    // A clean leave of an in-process member.
    let leaving = registrars.pop().expect("m6");
    assert_eq!(leaving.name(), "m6");
    leaving.shutdown().await;
    expected.retain(|n| n != "m6");
    converge(&watchers, &expected, deadline).await;

    // A member that comes back under a killed member's name joins (a new
    // generation), and a one-shot read agrees with the watchers.
    let _back = Process::start(&cluster, &seeds, "m8", ttl, r#"{"weight": 2}"#);
    expected.push("m8".into());
    converge(&watchers, &expected, deadline).await;
    let (read, _views) = ringwise_gossip::read(&gossip(&cluster, &seeds, ttl))
        .await
        .expect("read");
    assert_eq!(read.fingerprint, watchers[0].load().placement.fingerprint);
    assert_eq!(read.member("m8").and_then(|m| m.member.weight), Some(2.0));
    for watcher in watchers {
        assert_eq!(watcher.status().relists, 0);
        watcher.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_members_join_leave_and_stop() {
    let ttl = Duration::from_secs(6);
    let deadline = Duration::from_secs(60);
    let cluster = cluster("fifty");
    let seed = gossip(&cluster, &[], ttl)
        .join("n0", Member::default())
        .await;
    let seed = seed.expect("the seed member registers");
    let seeds = [seed.address()];
    let mut registrars = join_all(&cluster, &seeds, ttl, named("n", 1..50)).await;
    registrars.insert(0, seed);
    let watchers = watchers(&cluster, &seeds, ttl, 4).await;
    let mut expected = named("n", 0..50);
    converge(&watchers, &expected, deadline).await;

    // Five leave at once, cleanly.
    let leaving: Vec<Registrar> = registrars.drain(45..).collect();
    for registrar in leaving {
        registrar.shutdown().await;
    }
    expected.truncate(45);
    converge(&watchers, &expected, deadline).await;

    // Five stop gossiping without a word (dropped, as if killed).
    registrars.truncate(40);
    expected.truncate(40);
    converge(&watchers, &expected, ttl + deadline).await;

    // Five join again.
    let seeds = [registrars[0].address(), registrars[1].address()];
    registrars.extend(join_all(&cluster, &seeds, ttl, named("n", 50..55)).await);
    expected.extend(named("n", 50..55));
    converge(&watchers, &expected, deadline).await;
}

/// A clean leave is the `left` mark, not the failure detector: at a ttl
/// of 40 s (gossip every second, so a silent node is declared dead after
/// 12 s at the least) the watchers drop the leaver during the 3 rounds it
/// keeps gossiping after its mark, while it is still alive.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_member_that_leaves_is_dropped_while_it_still_gossips() {
    let ttl = Duration::from_secs(40);
    let deadline = Duration::from_secs(60);
    let cluster = cluster("left");
    let first = gossip(&cluster, &[], ttl)
        .join("l0", Member::default())
        .await;
    let first = first.expect("l0 registers");
    let seeds = [first.address()];
    let mut members = join_all(&cluster, &seeds, ttl, named("l", 1..3)).await;
    let watchers = watchers(&cluster, &seeds, ttl, 2).await;
    converge(&watchers, &named("l", 0..3), deadline).await;
    let leaving = members.pop().expect("l2");
    assert!(leaving.is_registered());
    let shutdown = tokio::spawn(leaving.shutdown());
    converge(&watchers, &named("l", 0..2), deadline).await;
    assert!(
        !shutdown.is_finished(),
        "the watchers dropped l2 only after it had stopped gossiping"
    );
    shutdown.await.expect("l2 left");
    drop(first);
}
