//! Slots with an explicit table against a real Redis Cluster.
//!
//! For each of three random slot tables (all 16,384 slots in 2 to 24
//! ranges, single slots among them, dealt to three nodes) the test starts
//! three `redis-server --cluster-enabled yes` nodes on free loopback ports
//! (config, data and log in scratch directories, persistence off; each
//! killed by its pid when the test ends, however it ends), gives each its
//! ranges with `CLUSTER ADDSLOTSRANGE`, joins them with `CLUSTER MEET` and
//! waits until every node says `cluster_state:ok`. Then it sends `GET key`
//! for 10,000 keys to the first node: a nil reply means that node owns the
//! key, `-MOVED slot host:port` names the owner. The `MOVED` slot must
//! belong to that owner in the table (so the cluster holds the table the
//! test meant), and `ringwise lookup` on a cluster file with the same table
//! must name the same owner for every key.

use std::io::Write;
use std::path::Path;
use std::thread::sleep;
use std::time::{Duration, Instant};

use super::redis::{Connection, Server, encode};
use super::{Rng, assert_agree, cluster_file, random_keys, ringwise_lookup};
use crate::support::TempDir;

const SEED: u64 = 0x0073_6C6F_7473;
const TABLES: usize = 3;
const NODES: usize = 3;
const SLOTS: u16 = 16_384;
const KEYS: usize = 10_000;
const BATCH: usize = 1_000;
const READY_WITHIN: Duration = Duration::from_secs(20);

/// Inclusive slot ranges per node.
pub(super) type Table = Vec<Vec<(u16, u16)>>;

/// All slots cut into 2 to 24 ranges (some of one slot), dealt at random
/// to the nodes, each node getting at least one.
pub(super) fn random_table(rng: &mut Rng) -> Table {
    let mut cuts = vec![0, SLOTS];
    for _ in 0..rng.between(1, 23) {
        let cut = rng.between(1, usize::from(SLOTS) - 2) as u16;
        cuts.push(cut);
        if rng.below(4) == 0 {
            cuts.push(cut + 1);
        }
    }
    cuts.sort_unstable();
    cuts.dedup();
    let mut table = vec![Vec::new(); NODES];
    for (i, pair) in cuts.windows(2).enumerate() {
        let node = match i < NODES {
            true => i,
            false => rng.below(NODES),
        };
        table[node].push((pair[0], pair[1] - 1));
    }
    table
}

/// One node per entry of `table` holding its ranges (a node without any
/// joins empty), once every node says `cluster_state:ok`; a connection to
/// each.
pub(super) fn start(table: &Table) -> (Vec<Server>, Vec<Connection>) {
    let mut nodes: Vec<Server> = (0..table.len())
        .map(|_| Server::spawn("ringwise-redis-cluster"))
        .collect();
    let deadline = Instant::now() + READY_WITHIN;
    let mut conns: Vec<Connection> = nodes
        .iter_mut()
        .map(|node| node.ready(deadline).unwrap_or_else(|why| panic!("{why}")))
        .collect();
    for (i, (conn, ranges)) in conns.iter_mut().zip(table).enumerate() {
        // Distinct epochs, as redis-cli --cluster create gives them.
        conn.ok(&[
            b"CLUSTER",
            b"SET-CONFIG-EPOCH",
            (i + 1).to_string().as_bytes(),
        ]);
        if ranges.is_empty() {
            continue;
        }
        let bounds: Vec<String> = ranges
            .iter()
            .flat_map(|(a, b)| [a.to_string(), b.to_string()])
            .collect();
        let mut args: Vec<&[u8]> = vec![b"CLUSTER", b"ADDSLOTSRANGE"];
        args.extend(bounds.iter().map(|b| b.as_bytes()));
        conn.ok(&args);
    }
    for node in &nodes[1..] {
        let port = node.port.to_string();
        conns[0].ok(&[b"CLUSTER", b"MEET", b"127.0.0.1", port.as_bytes()]);
    }
    // `cluster_state:ok` says every slot is served, not that every node
    // has met every other: a node without slots can still be unknown to
    // some (then `SETSLOT ... MIGRATING` to it fails with "I don't know
    // about node"), so wait for every node to list all of them, past the
    // handshake.
    let count = nodes.len();
    for (conn, node) in conns.iter_mut().zip(&nodes) {
        loop {
            let info = conn.command(&[b"CLUSTER", b"INFO"]).expect("CLUSTER INFO");
            let known = conn
                .command(&[b"CLUSTER", b"NODES"])
                .expect("CLUSTER NODES");
            let met = known.lines().filter(|l| !l.contains("handshake")).count();
            if info.contains("cluster_state:ok") && met == count {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "{} is not ok or knows {met} of {count} nodes within {READY_WITHIN:?}:\n{info}\n{known}\n{}",
                node.name(),
                node.log()
            );
            sleep(Duration::from_millis(50));
        }
    }
    (nodes, conns)
}

/// The owner of each key by the cluster: `GET key` on the first node,
/// pipelined. Checks each `MOVED` slot against `table`.
pub(super) fn owners(
    conn: &mut Connection,
    nodes: &[Server],
    table: &Table,
    keys: &[String],
) -> Vec<String> {
    let mut owners = Vec::with_capacity(keys.len());
    for batch in keys.chunks(BATCH) {
        let requests: Vec<u8> = batch
            .iter()
            .flat_map(|key| encode(&[b"GET", key.as_bytes()]))
            .collect();
        conn.stream.write_all(&requests).expect("send a batch");
        for key in batch {
            let reply = conn.reply().expect("a reply");
            let owner = match reply.strip_prefix("MOVED ") {
                None if reply == "nil" => nodes[0].name(),
                None => panic!("key {key:?}: unexpected reply {reply:?}"),
                Some(moved) => {
                    let (slot, owner) = moved.split_once(' ').expect("MOVED slot host:port");
                    let slot: u16 = slot.parse().expect("a slot");
                    let node = nodes.iter().position(|n| n.name() == owner);
                    let held = node
                        .is_some_and(|n| table[n].iter().any(|&(a, b)| (a..=b).contains(&slot)));
                    assert!(held, "key {key:?}: {owner} holds slot {slot} in {table:?}");
                    owner.to_owned()
                }
            };
            owners.push(owner);
        }
    }
    owners
}

pub(super) fn slot_list(ranges: &[(u16, u16)]) -> String {
    let items: Vec<String> = ranges
        .iter()
        .map(|&(a, b)| match a == b {
            true => format!("\"{a}\""),
            false => format!("\"{a}-{b}\""),
        })
        .collect();
    format!("slots = [{}]", items.join(", "))
}

#[test]
fn redis_cluster_slot_table_agrees() {
    let dir = TempDir::create("compat-redis");
    let mut rng = Rng(SEED);
    for t in 0..TABLES {
        let table = random_table(&mut rng);
        let keys = random_keys(&mut rng, KEYS);
        let (nodes, mut conns) = start(&table);
        let mut conn = conns.swap_remove(0);
        let theirs = owners(&mut conn, &nodes, &table, &keys);
        let file: Vec<_> = nodes
            .iter()
            .zip(&table)
            .map(|(node, ranges)| (node.name(), slot_list(ranges)))
            .collect();
        let cluster = dir.write(
            "cluster.toml",
            &cluster_file("algorithm = \"slots\"", &file),
        );
        let ours = ringwise_lookup(Path::new(&cluster), &keys);
        assert_agree(
            &format!("redis cluster, table {t}: {file:?}"),
            &keys,
            &theirs,
            &ours,
        );
        drop(nodes);
    }
}
