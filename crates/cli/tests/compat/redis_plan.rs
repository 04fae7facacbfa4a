//! `ringwise plan` applied to a real Redis Cluster: the plan's slot moves,
//! carried out the way an operator does, leave the cluster holding exactly
//! the table ringwise wrote, and move exactly the keys the plan listed.
//!
//! Four `redis-server --cluster-enabled yes` nodes on loopback (killed by
//! their pid however the test ends, see `process::Guard`): three hold a
//! random slot table (2 to 24 ranges, single slots among them), the fourth
//! is met with no slots, as a node is before it is given any. 2,000 keys
//! are `SET` on their owners. Then two changes, each planned from the
//! previous `--write` file, so the chain is what an operator runs:
//!
//! 1. join: `plan --from three.toml --add <fourth> --ranges --keys FILE
//!    --write join.toml --format json`;
//! 2. leave: `plan --from join.toml --remove <second> ...`.
//!
//! Each plan is applied with Redis's migration protocol, slot by slot:
//! `CLUSTER SETSLOT S IMPORTING <donor>` on the receiver, `SETSLOT S
//! MIGRATING <receiver>` on the donor, `CLUSTER GETKEYSINSLOT` and
//! `MIGRATE` for the keys the donor holds, then `SETSLOT S NODE <receiver>`
//! on the receiver, the donor and every other node (commands pipelined a
//! node at a time). Keys are present, so `MIGRATE` really runs: a plan
//! whose moves were wrong would leave keys behind or lose them.
//!
//! Checks, none taken from the plan itself: every node's `CLUSTER SLOTS`
//! equals, slot for slot, the table of the written file as ringwise builds
//! it; every key's owner by the cluster's routing (`GET` on the first node:
//! a value, or `-MOVED` naming the owner) equals `ringwise lookup` on the
//! written file; every key still has its value on that owner; and the keys
//! whose owner changed are exactly the plan's moved keys, with the same
//! donor and receiver.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::thread::sleep;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::redis::{Connection, Resp, Server, encode};
use super::redis_cluster::{random_table, slot_list, start};
use super::{Rng, cluster_file, lines, ringwise_lookup};
use crate::support::{TempDir, assert_success, ringwise, stdout};

const SEED: u64 = 0x0070_6C61_6E73;
const KEYS: usize = 2_000;
const SLOTS: u16 = 16_384;
const SETTLE_WITHIN: Duration = Duration::from_secs(20);

#[test]
fn a_slot_plan_applied_to_a_real_redis_cluster_yields_the_written_table() {
    let dir = TempDir::create("compat-redis-plan");
    let mut table = random_table(&mut Rng(SEED));
    table.push(Vec::new());
    let (nodes, mut conns) = start(&table);
    let names: Vec<String> = nodes.iter().map(Server::name).collect();
    // Redis 7 turns a master that loses its last slot into a replica of
    // the node that took it, which then refuses SETSLOT; the leaving node
    // stays an empty master instead, to be removed with CLUSTER FORGET.
    for conn in &mut conns {
        conn.ok(&[b"CONFIG", b"SET", b"cluster-allow-replica-migration", b"no"]);
    }
    let ids: Vec<String> = conns
        .iter_mut()
        .map(|c| c.command(&[b"CLUSTER", b"MYID"]).expect("CLUSTER MYID"))
        .collect();
    let three: Vec<(String, String)> = names
        .iter()
        .zip(&table[..3])
        .map(|(name, ranges)| (name.clone(), slot_list(ranges)))
        .collect();
    let mut from = dir.write("three.toml", &cluster_file("algorithm = \"slots\"", &three));
    let keys: Vec<String> = (0..KEYS).map(|i| format!("key:{i}")).collect();
    let key_file = dir.write("keys.txt", &lines(&keys));
    let owners = routed_owners(&mut conns[0], &names[0], &keys);
    store(&mut conns, &names, &keys, &owners);
    for (step, change) in [("join", "--add"), ("leave", "--remove")] {
        let node = if step == "join" { &names[3] } else { &names[1] };
        let before = routed_owners(&mut conns[0], &names[0], &keys);
        let target = dir.path().join(format!("{step}.toml"));
        let target_text = target.to_str().expect("utf-8 path");
        let doc = plan(&[
            "--from",
            &from,
            change,
            node,
            "--ranges",
            "--keys",
            &key_file,
            "--write",
            target_text,
        ]);
        apply(&mut conns, &names, &ids, &moves(&doc));
        let expected = written_table(&target, &names, &ids);
        settle(&mut conns, &names, &expected, step);
        let after = routed_owners(&mut conns[0], &names[0], &keys);
        assert_eq!(
            after,
            ringwise_lookup(&target, &keys),
            "{step}: the cluster routes every key as the written file does"
        );
        check_values(&mut conns, &names, &keys, &after);
        let moved: Vec<Value> = keys
            .iter()
            .zip(before.iter().zip(&after))
            .filter(|(_, (b, a))| b != a)
            .map(|(k, (b, a))| serde_json::json!([k, b, a]))
            .collect();
        assert!(!moved.is_empty(), "{step}: some keys move");
        assert_eq!(
            doc["keys"]["moved_keys"],
            Value::Array(moved),
            "{step}: the plan's moved keys are the keys the cluster moved"
        );
        from = target_text.to_owned();
    }
    drop(nodes);
}

/// `ringwise plan --format json` with `args`.
fn plan(args: &[&str]) -> Value {
    let out = ringwise(&[&["plan", "--format", "json"], args].concat(), b"");
    assert_success(&out);
    serde_json::from_str(&stdout(&out)).expect("one JSON document")
}

/// The plan's ranges as single slot moves `(slot, donor, receiver)`.
fn moves(doc: &Value) -> Vec<(u16, String, String)> {
    let ranges = doc["ranges"].as_array().expect("--ranges lists the moves");
    let mut out = Vec::new();
    for r in ranges {
        let bound = |v: &Value| u16::try_from(v.as_u64().expect("a slot")).expect("a slot");
        let text = |v: &Value| v.as_str().expect("a node name").to_owned();
        for slot in bound(&r["start"])..=bound(&r["end"]) {
            out.push((slot, text(&r["from"]), text(&r["to"])));
        }
    }
    out
}

/// Carries out the slot moves with Redis's migration protocol (see the
/// module doc); each phase is pipelined a node at a time.
fn apply(
    conns: &mut [Connection],
    names: &[String],
    ids: &[String],
    moves: &[(u16, String, String)],
) {
    let at = |name: &str| {
        names
            .iter()
            .position(|n| n == name)
            .expect("a cluster node")
    };
    let moves: Vec<(String, usize, usize)> = moves
        .iter()
        .map(|(slot, from, to)| (slot.to_string(), at(from), at(to)))
        .collect();
    let setslot = |slot: &str, state: &str, id: &str| -> Vec<String> {
        ["CLUSTER", "SETSLOT", slot, state, id]
            .map(str::to_owned)
            .into()
    };
    let mut phase: Vec<(usize, Vec<String>)> = Vec::new();
    for (slot, from, to) in &moves {
        phase.push((*to, setslot(slot, "IMPORTING", &ids[*from])));
        phase.push((*from, setslot(slot, "MIGRATING", &ids[*to])));
    }
    all_ok(conns, &phase);
    let listed: Vec<(usize, Vec<String>)> = moves
        .iter()
        .map(|(slot, from, _)| {
            let get = ["CLUSTER", "GETKEYSINSLOT", slot, &KEYS.to_string()];
            (*from, get.map(str::to_owned).into())
        })
        .collect();
    let held = pipeline(conns, &listed);
    for ((_, from, to), keys) in moves.iter().zip(&held) {
        migrate(&mut conns[*from], &names[*to], keys.items());
    }
    // The receiver first, then the donor, then everyone else.
    for turn in 0..3 {
        let phase: Vec<(usize, Vec<String>)> = moves
            .iter()
            .flat_map(|(slot, from, to)| {
                let node = setslot(slot, "NODE", &ids[*to]);
                let order = (0..conns.len()).filter(move |i| match turn {
                    0 => i == to,
                    1 => i == from,
                    _ => i != to && i != from,
                });
                order.map(move |i| (i, node.clone()))
            })
            .collect();
        all_ok(conns, &phase);
    }
}

/// `MIGRATE host port "" 0 5000 KEYS ...` from the donor to `target`.
fn migrate(donor: &mut Connection, target: &str, keys: &[Resp]) {
    if keys.is_empty() {
        return;
    }
    let (host, port) = target.split_once(':').expect("host:port");
    let mut args: Vec<&[u8]> = vec![b"MIGRATE", host.as_bytes(), port.as_bytes()];
    args.extend([&b""[..], b"0", b"5000", b"KEYS"]);
    args.extend(keys.iter().map(|k| k.text().as_bytes()));
    donor.ok(&args);
}

/// Sends each `(node, command)`, pipelined a node at a time, and returns
/// the replies in the order given.
fn pipeline(conns: &mut [Connection], commands: &[(usize, Vec<String>)]) -> Vec<Resp> {
    let mut replies: Vec<Option<Resp>> = vec![None; commands.len()];
    for (node, conn) in conns.iter_mut().enumerate() {
        let mine: Vec<usize> = (0..commands.len())
            .filter(|&i| commands[i].0 == node)
            .collect();
        let bytes: Vec<u8> = mine
            .iter()
            .flat_map(|&i| {
                let args: Vec<&[u8]> = commands[i].1.iter().map(|a| a.as_bytes()).collect();
                encode(&args)
            })
            .collect();
        conn.stream.write_all(&bytes).expect("send a pipeline");
        for i in mine {
            replies[i] = Some(conn.value().expect("a reply"));
        }
    }
    replies.into_iter().map(|r| r.expect("answered")).collect()
}

fn all_ok(conns: &mut [Connection], commands: &[(usize, Vec<String>)]) {
    for ((node, command), reply) in commands.iter().zip(pipeline(conns, commands)) {
        assert_eq!(reply.text(), "OK", "node {node}: {}", command.join(" "));
    }
}

/// Each key's owner by the cluster's routing: `GET` on the first node
/// answers a value or nil when it owns the key, `-MOVED slot host:port`
/// otherwise.
fn routed_owners(first: &mut Connection, first_name: &str, keys: &[String]) -> Vec<String> {
    let requests: Vec<u8> = keys
        .iter()
        .flat_map(|key| encode(&[b"GET", key.as_bytes()]))
        .collect();
    first.stream.write_all(&requests).expect("send the GETs");
    keys.iter()
        .map(|key| {
            let reply = first.reply().expect("a reply");
            match reply.strip_prefix("MOVED ") {
                Some(moved) => moved
                    .split_once(' ')
                    .expect("MOVED slot host:port")
                    .1
                    .to_owned(),
                None if !reply.starts_with("ASK") => first_name.to_owned(),
                None => panic!("key {key:?}: {reply:?} after the migration finished"),
            }
        })
        .collect()
}

fn value_of(key: &str) -> String {
    format!("value of {key}")
}

/// `SET` each key on its owner.
fn store(conns: &mut [Connection], names: &[String], keys: &[String], owners: &[String]) {
    let at = |name: &String| {
        names
            .iter()
            .position(|n| n == name)
            .expect("a cluster node")
    };
    let sets: Vec<(usize, Vec<String>)> = keys
        .iter()
        .zip(owners)
        .map(|(k, o)| (at(o), vec!["SET".into(), k.clone(), value_of(k)]))
        .collect();
    all_ok(conns, &sets);
}

/// Every key's value is on its owner.
fn check_values(conns: &mut [Connection], names: &[String], keys: &[String], owners: &[String]) {
    let at = |name: &String| {
        names
            .iter()
            .position(|n| n == name)
            .expect("a cluster node")
    };
    let gets: Vec<(usize, Vec<String>)> = keys
        .iter()
        .zip(owners)
        .map(|(k, o)| (at(o), vec!["GET".into(), k.clone()]))
        .collect();
    for (key, reply) in keys.iter().zip(pipeline(conns, &gets)) {
        assert_eq!(reply.text(), value_of(key), "key {key:?} kept its value");
    }
}

/// The written cluster file's table as ringwise builds it: the node id
/// owning each slot.
fn written_table(path: &Path, names: &[String], ids: &[String]) -> Vec<String> {
    let text = std::fs::read_to_string(path).expect("the written file");
    let spec = ringwise::ClusterSpec::from_toml(&text).expect("a cluster file");
    let keyed = spec.build().expect("it builds");
    let placement = keyed.placement();
    (0..SLOTS)
        .map(|slot| {
            use ringwise::Placement;
            let id = placement.owner(u64::from(slot)).expect("every slot owned");
            let name = placement.nodes().name(id).expect("a named node");
            let at = names
                .iter()
                .position(|n| n == name)
                .expect("a cluster node");
            ids[at].clone()
        })
        .collect()
}

/// The node id owning each slot by one node's `CLUSTER SLOTS`.
fn cluster_slots(conn: &mut Connection) -> Vec<Option<String>> {
    let reply = conn.query(&[b"CLUSTER", b"SLOTS"]).expect("CLUSTER SLOTS");
    let mut table = vec![None; usize::from(SLOTS)];
    for entry in reply.items() {
        let items = entry.items();
        let bound =
            |r: &Resp| -> usize { r.text().trim_start_matches(':').parse().expect("a slot") };
        let master = items[2].items()[2].text().to_owned();
        for owner in &mut table[bound(&items[0])..=bound(&items[1])] {
            *owner = Some(master.clone());
        }
    }
    table
}

/// Waits until every node's `CLUSTER SLOTS` is `expected` and it says
/// `cluster_state:ok`; fails with the differing slots by the deadline.
fn settle(conns: &mut [Connection], names: &[String], expected: &[String], step: &str) {
    let deadline = Instant::now() + SETTLE_WITHIN;
    let expected: Vec<Option<String>> = expected.iter().cloned().map(Some).collect();
    for (conn, name) in conns.iter_mut().zip(names) {
        loop {
            let table = cluster_slots(conn);
            let info = conn.command(&[b"CLUSTER", b"INFO"]).expect("CLUSTER INFO");
            if table == expected && info.contains("cluster_state:ok") {
                break;
            }
            if Instant::now() > deadline {
                let differ: BTreeMap<usize, (&Option<String>, &Option<String>)> = table
                    .iter()
                    .zip(&expected)
                    .enumerate()
                    .filter(|(_, (a, b))| a != b)
                    .take(10)
                    .collect();
                panic!(
                    "{step}: {name} does not hold the written table; first slots (cluster, written): {differ:?}\n{info}"
                );
            }
            sleep(Duration::from_millis(50));
        }
    }
}
