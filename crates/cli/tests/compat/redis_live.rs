//! Real Redis Clusters made by a real `redis-cli --cluster create`, read
//! live with `--redis`:
//!
//! - for 3, 4, 5 and 6 masters (replicas 0, the names given to redis-cli
//!   in name order), the table redis-cli assigned (read back with `CLUSTER
//!   NODES`) equals, slot for slot, the default layout of `ringwise lookup
//!   --algo slots --nodes ...` (one key per slot, 16384 keys), and
//!   `ringwise lookup --redis` names for 2,000 random keys the owner the
//!   cluster routes them to (`GET` on the first node: nil, or `-MOVED`);
//! - a `plan --redis ... --add NEW --keys FILE` on a 3-master cluster
//!   holding 3,000 keys, whose printed redis-cli script (real node ids, the
//!   new master's asked from itself) is run with `sh`: afterwards the keys
//!   each node holds (`KEYS *` on each, not the plan's word) changed place
//!   exactly as the plan's moved keys say, every key reads back its value
//!   from its owner, and every master agrees on the table (`--redis`
//!   again).
//!
//! Every server is started by the test on loopback and killed by its pid
//! when the test ends, however it ends (`process::Guard`).

use std::collections::BTreeMap;
use std::process::Command;
use std::thread::sleep;
use std::time::{Duration, Instant};

use super::redis::{Connection, Server};
use super::redis_cluster::{Table, owners};
use super::{Rng, answers, assert_agree, lines, random_keys};
use crate::support::{TempDir, assert_success, ringwise, stdout};

const SEED: u64 = 0x6c69_7665;
const READY_WITHIN: Duration = Duration::from_secs(30);
const HINT: &str = "run scripts/install-test-deps (redis-tools has redis-cli)";

/// `n` fresh servers in name order, made one cluster by `redis-cli
/// --cluster create` with `masters` of them as masters; connections to
/// each once every one of them says `cluster_state:ok`.
fn create(n: usize, masters: usize, tag: &str) -> (Vec<Server>, Vec<Connection>) {
    let mut servers: Vec<Server> = (0..n).map(|_| Server::spawn(tag)).collect();
    servers.sort_by_key(Server::name);
    let deadline = Instant::now() + READY_WITHIN;
    let mut conns: Vec<Connection> = servers
        .iter_mut()
        .map(|s| s.ready(deadline).unwrap_or_else(|why| panic!("{why}")))
        .collect();
    let names: Vec<String> = servers[..masters].iter().map(Server::name).collect();
    let out = Command::new("redis-cli")
        .arg("--cluster")
        .arg("create")
        .args(&names)
        .args(["--cluster-replicas", "0", "--cluster-yes"])
        .output()
        .unwrap_or_else(|e| panic!("cannot run redis-cli: {e}; {HINT}"));
    assert!(
        out.status.success(),
        "redis-cli --cluster create failed:\n{}",
        String::from_utf8_lossy(&out.stdout)
    );
    for (conn, server) in conns.iter_mut().zip(&servers).take(masters) {
        wait_ok(conn, server, deadline);
    }
    (servers, conns)
}

/// Waits until `conn` says `cluster_state:ok`.
fn wait_ok(conn: &mut Connection, server: &Server, deadline: Instant) {
    loop {
        let info = conn.command(&[b"CLUSTER", b"INFO"]).expect("CLUSTER INFO");
        if info.contains("cluster_state:ok") {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{} not ok within {READY_WITHIN:?}:\n{info}\n{}",
            server.name(),
            server.log()
        );
        sleep(Duration::from_millis(50));
    }
}

/// The slot table of `CLUSTER NODES`, parsed here (not by ringwise): the
/// ranges of each of `servers`, by index.
fn table_of(conn: &mut Connection, servers: &[Server]) -> Table {
    let text = conn
        .command(&[b"CLUSTER", b"NODES"])
        .expect("CLUSTER NODES");
    let mut table = vec![Vec::new(); servers.len()];
    for line in text.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let address = fields[1].split('@').next().expect("an address");
        let at = servers
            .iter()
            .position(|s| s.name() == address)
            .unwrap_or_else(|| panic!("{address} is not one of the servers"));
        for range in fields.iter().skip(8).filter(|f| !f.starts_with('[')) {
            let (a, b) = range.split_once('-').unwrap_or((range, range));
            table[at].push((a.parse().expect("a slot"), b.parse().expect("a slot")));
        }
    }
    table
}

/// One key per slot, `k...` found by trying names in order.
fn key_per_slot() -> Vec<String> {
    let mut keys = vec![String::new(); 16384];
    let mut left = keys.len();
    let mut i = 0u64;
    while left > 0 {
        let key = format!("k{i}");
        let slot = usize::from(ringwise::key_slot(key.as_bytes()));
        if keys[slot].is_empty() {
            keys[slot] = key;
            left -= 1;
        }
        i += 1;
    }
    keys
}

/// `ringwise lookup ARGS` on `keys` from stdin.
fn lookup(args: &[&str], keys: &[String]) -> Vec<String> {
    let mut all = vec!["lookup"];
    all.extend_from_slice(args);
    let out = ringwise(&all, lines(keys).as_bytes());
    assert_success(&out);
    answers("lookup", keys, &stdout(&out))
}

#[test]
fn redis_cli_create_gives_the_default_layout_and_live_reads_route_like_redis() {
    let per_slot = key_per_slot();
    let mut rng = Rng(SEED);
    for masters in 3..=6 {
        let (servers, mut conns) = create(masters, masters, "ringwise-redis-create");
        let names: Vec<String> = servers.iter().map(Server::name).collect();
        let table = table_of(&mut conns[0], &servers);
        let mut theirs = vec![String::new(); 16384];
        for (node, ranges) in table.iter().enumerate() {
            for &(a, b) in ranges {
                for slot in a..=b {
                    theirs[usize::from(slot)] = names[node].clone();
                }
            }
        }
        let ours = lookup(&["--algo", "slots", "--nodes", &names.join(",")], &per_slot);
        assert_agree(
            &format!("{masters} masters: redis-cli --cluster create against the default layout"),
            &per_slot,
            &theirs,
            &ours,
        );
        let keys = random_keys(&mut rng, 2000);
        let routed = owners(&mut conns[0], &servers, &table, &keys);
        let seed = names[masters - 1].clone();
        let live = lookup(&["--redis", &seed], &keys);
        assert_agree(
            &format!("{masters} masters: --redis {seed} against GET/-MOVED"),
            &keys,
            &routed,
            &live,
        );
    }
}

/// The keys each server holds, whatever its slots (`KEYS *` on each).
fn holders(conns: &mut [Connection], names: &[String]) -> BTreeMap<String, String> {
    let mut held = BTreeMap::new();
    for (conn, name) in conns.iter_mut().zip(names) {
        let keys = conn.query(&[b"KEYS", b"*"]).expect("KEYS *");
        for key in keys.items() {
            let old = held.insert(key.text().to_owned(), name.clone());
            assert!(old.is_none(), "{:?} is on two nodes", key.text());
        }
    }
    held
}

#[test]
fn a_printed_redis_cli_script_moves_exactly_the_planned_keys() {
    let dir = TempDir::create("compat-redis-live-plan");
    let (servers, mut conns) = create(4, 3, "ringwise-redis-reshard");
    let names: Vec<String> = servers.iter().map(Server::name).collect();
    let table = table_of(&mut conns[0], &servers);
    let keys = random_keys(&mut Rng(SEED ^ 1), 3000);
    // SET each key on its owner (by the cluster's own -MOVED).
    let routed = owners(&mut conns[0], &servers, &table, &keys);
    for (key, owner) in keys.iter().zip(&routed) {
        let at = names.iter().position(|n| n == owner).expect("a server");
        let value = format!("v:{key}");
        conns[at].ok(&[b"SET", key.as_bytes(), value.as_bytes()]);
    }
    let before = holders(&mut conns, &names);
    assert_eq!(before.len(), keys.len());

    let key_file = dir.write("keys.txt", &lines(&keys));
    let out = ringwise(
        &[
            "plan", "--redis", &names[0], "--add", &names[3], "--keys", &key_file,
        ],
        b"",
    );
    assert_success(&out);
    let text = stdout(&out);
    // The moved keys: `KEY<TAB>OLD<TAB>NEW` lines after `keys: ...`.
    let listed: BTreeMap<String, (String, String)> = text
        .lines()
        .skip_while(|l| !l.starts_with("keys: "))
        .skip(1)
        .take_while(|l| !l.is_empty())
        .map(|l| {
            let cells: Vec<&str> = l.split('\t').collect();
            assert_eq!(cells.len(), 3, "a moved key line: {l:?}");
            (
                cells[0].to_owned(),
                (cells[1].to_owned(), cells[2].to_owned()),
            )
        })
        .collect();
    assert!(!listed.is_empty(), "the join moves keys:\n{text}");
    let script: String = text
        .lines()
        .skip_while(|l| *l != "#!/bin/sh")
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(script.contains("move "), "a script with moves:\n{text}");
    let path = dir.write("reshard.sh", &script);
    let run = Command::new("sh")
        .arg(&path)
        .output()
        .unwrap_or_else(|e| panic!("cannot run sh: {e}"));
    assert!(
        run.status.success(),
        "the plan's script failed ({}):\n{}\n{}",
        run.status,
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );

    let after = holders(&mut conns, &names);
    let moved: BTreeMap<String, (String, String)> = after
        .iter()
        .filter(|(k, node)| before.get(*k) != Some(node))
        .map(|(k, node)| (k.clone(), (before[k].clone(), node.clone())))
        .collect();
    assert_eq!(after.len(), keys.len(), "no key lost or doubled");
    assert_eq!(moved, listed, "the keys that moved are the plan's");
    // Every master agrees on the new table, and every key reads back from
    // the owner --redis names.
    let owner = lookup(&["--redis", &names[1]], &keys);
    for (key, node) in keys.iter().zip(&owner) {
        let at = names.iter().position(|n| n == node).expect("a server");
        let value = conns[at].command(&[b"GET", key.as_bytes()]).expect("GET");
        assert_eq!(value, format!("v:{key}"), "{key:?} on {node}");
    }
}
