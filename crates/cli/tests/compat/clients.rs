//! The client libraries' rings against the real libraries, and
//! an exact migration plan between two of them.
//!
//! - `dalli`: Debian's ruby-dalli (`peers/dalli_peer.rb`) `set`s every key
//!   through `Dalli::Client` against real memcached servers (weights 1 to
//!   10); each memcached is then asked for every key, and the one that
//!   holds it is Dalli's choice.
//! - `redis-rb`: Debian's ruby-redis `Redis::Distributed`
//!   (`peers/redis_distributed.rb`) `SET`s every key against real
//!   `redis-server`s; the holder is found with `EXISTS` on each. Keys carry
//!   `{tags}` at the start, inside, empty and after a newline-free prefix.
//! - `groupcache`: groupcache's `consistenthash` from Debian's
//!   golang-github-golang-groupcache-dev, compiled offline with Debian's Go
//!   (`peers/groupcache_peer.go`), answers `Get` for every key.
//! - `php-memcache`: Debian's php-memcache (`peers/php_memcache_peer.php`)
//!   with `memcache.hash_strategy = consistent`, `hash_function` crc32 and
//!   fnv, `set`s every key against real memcached servers (weights 1 to
//!   10), found as for Dalli.
//! - the plan: `ringwise plan --from dalli.toml --to groupcache.toml` on
//!   the same servers, its exact fraction and flows against a count over
//!   100,000 keys routed by both real libraries.
//!
//! Server lists (2 to 10 servers on free loopback ports) and keys come from
//! a seeded generator; three lists a client (four for php-memcache: two
//! per hash), 3,000 keys each. Every server is killed by its pid when its
//! list is done, however the test ends (`process::Guard`).

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use super::process::{self, free_port};
use super::twemproxy::{READY_WITHIN, Running, held, memcached};
use super::{Rng, assert_agree, cluster_file, peer_file, random_keys, repo_root, ringwise_lookup};
use crate::support::{TempDir, assert_success, ringwise, stdout};

const KEYS: usize = 3_000;
const LISTS: usize = 3;
const BATCH: usize = 500;
const HINT: &str = "run scripts/install-test-deps (Debian: ruby-dalli, ruby-redis, php-cli, \
                    php-memcache, golang-go, golang-github-golang-groupcache-dev, memcached, \
                    redis-server); these tests are never skipped";

/// One server of a list: its port and weight.
#[derive(Debug, Clone, Copy)]
struct Server {
    port: u16,
    weight: u32,
}

impl Server {
    fn address(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }
}

/// 2 to 10 servers on distinct free ports, weights 1 to `max_weight`.
fn servers(rng: &mut Rng, max_weight: usize) -> Vec<Server> {
    (0..rng.between(2, 10))
        .map(|_| Server {
            port: free_port(),
            weight: rng.between(1, max_weight) as u32,
        })
        .collect()
}

/// The cluster file of `algorithm` over `servers` named `name(server)`.
fn cluster(header: &str, servers: &[Server], name: impl Fn(&Server) -> String) -> String {
    let nodes: Vec<_> = (servers.iter())
        .map(|s| (name(s), format!("weight = {}", s.weight)))
        .collect();
    cluster_file(header, &nodes)
}

/// A list of `servers(rng, max_weight)` and its memcached servers, once each answers with its own
/// pid; a list whose servers could not start (a port taken in between) is
/// drawn again.
fn memcached_list(rng: &mut Rng, max_weight: usize) -> (Vec<Server>, Vec<Running>) {
    'draw: loop {
        let list = servers(rng, max_weight);
        let deadline = Instant::now() + READY_WITHIN;
        let mut running: Vec<Running> = list.iter().map(|s| memcached(s.port)).collect();
        for server in &mut running {
            if let Err(why) = server.ready(deadline) {
                println!("a memcached did not start, drawing the list again: {why}");
                continue 'draw;
            }
        }
        return (list, running);
    }
}

fn connect(port: u16) -> std::io::Result<(TcpStream, BufReader<TcpStream>)> {
    let stream = TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    let reader = BufReader::new(stream.try_clone()?);
    Ok((stream, reader))
}

fn read_line(reader: &mut impl BufRead) -> std::io::Result<Vec<u8>> {
    let mut line = Vec::new();
    reader.read_until(b'\n', &mut line)?;
    if line.ends_with(b"\r\n") {
        line.truncate(line.len() - 2);
    }
    Ok(line)
}

/// Which of `keys` the redis-server on `port` holds (`EXISTS`, pipelined).
fn held_by_redis(port: u16, keys: &[String]) -> std::io::Result<Vec<bool>> {
    let (mut stream, mut reader) = connect(port)?;
    let mut held = Vec::with_capacity(keys.len());
    for batch in keys.chunks(BATCH) {
        let requests: Vec<u8> = (batch.iter())
            .flat_map(|k| super::redis::encode(&[b"EXISTS", k.as_bytes()]))
            .collect();
        stream.write_all(&requests)?;
        for key in batch {
            match read_line(&mut reader)?.as_slice() {
                b":1" => held.push(true),
                b":0" => held.push(false),
                other => panic!(
                    "redis {port}, EXISTS {key:?}: {:?}",
                    String::from_utf8_lossy(other)
                ),
            }
        }
    }
    Ok(held)
}

/// The one holder of each key, by `name`, from each server's `held` list.
fn holders(
    servers: &[Server],
    keys: &[String],
    held: impl Fn(u16, &[String]) -> std::io::Result<Vec<bool>>,
    name: impl Fn(&Server) -> String,
) -> Vec<String> {
    let mut owners: Vec<Option<String>> = vec![None; keys.len()];
    for server in servers {
        let answers = held(server.port, keys).expect("asking a server for every key");
        for (i, held) in answers.into_iter().enumerate() {
            if !held {
                continue;
            }
            if let Some(other) = &owners[i] {
                panic!("{:?} is held by {other} and {}", keys[i], name(server));
            }
            owners[i] = Some(name(server));
        }
    }
    (keys.iter().zip(owners))
        .map(|(key, owner)| owner.unwrap_or_else(|| panic!("no server holds {key:?}")))
        .collect()
}

/// Runs a peer with `keys` on its stdin (through a file in `dir`); its
/// stdout's lines.
fn run(command: &mut Command, dir: &Path, keys: &[String]) -> Vec<String> {
    let input = dir.join("peer-keys");
    let text: String = keys.iter().map(|k| format!("{k}\n")).collect();
    std::fs::write(&input, text).expect("write the peer's keys");
    command.stdin(File::open(&input).expect("open the peer's keys"));
    let out = process::output(command, HINT);
    (String::from_utf8(out)
        .expect("the peer prints UTF-8")
        .lines())
    .map(str::to_owned)
    .collect()
}

fn ruby(script: &str) -> Command {
    let mut command = Command::new("ruby");
    command.arg(peer_file(script));
    command
}

fn php(hash_function: &str, mode: &str, servers: &[Server]) -> Command {
    let mut command = Command::new("php");
    command
        .arg(peer_file("php_memcache_peer.php"))
        .args([hash_function, mode]);
    command.args(
        servers
            .iter()
            .map(|s| format!("{}:{}", s.address(), s.weight)),
    );
    command
}

fn dalli(mode: &str, servers: &[Server]) -> Command {
    let mut command = ruby("dalli_peer.rb");
    command.arg(mode);
    command.args(
        servers
            .iter()
            .map(|s| format!("{}:{}", s.address(), s.weight)),
    );
    command
}

/// The groupcache peer, built once per run into `target/` (Go's build
/// cache there too) from Debian's GOPATH sources, with no network.
fn groupcache_peer() -> &'static Path {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BUILT.get_or_init(|| {
        let target = repo_root().join("target/go-peers");
        std::fs::create_dir_all(&target).expect("create target/go-peers");
        let binary = target.join("groupcache-peer");
        process::output(
            Command::new("go")
                .args(["build", "-o"])
                .arg(&binary)
                .arg(peer_file("groupcache_peer.go"))
                .env("GOPATH", "/usr/share/gocode")
                .env("GO111MODULE", "off")
                .env("GOFLAGS", "")
                .env("GOPROXY", "off")
                .env("GOCACHE", target.join("cache")),
            HINT,
        );
        binary
    })
}

fn groupcache(replicas: u32, peers: &[String]) -> Command {
    let mut command = Command::new(groupcache_peer());
    command.arg(replicas.to_string()).args(peers);
    command
}

#[test]
fn dalli_agrees() {
    let dir = TempDir::create("compat-dalli");
    let mut rng = Rng(0xDA11_1000);
    for _ in 0..LISTS {
        let keys = random_keys(&mut rng, KEYS);
        let (list, running) = memcached_list(&mut rng, 10);
        run(&mut dalli("set", &list), dir.path(), &keys);
        let theirs = holders(&list, &keys, held, Server::address);
        let file = cluster("algorithm = \"dalli\"", &list, Server::address);
        let ours = ringwise_lookup(Path::new(&dir.write("dalli.toml", &file)), &keys);
        assert_agree(&format!("dalli, {list:?}"), &keys, &theirs, &ours);
        drop(running);
    }
}

#[test]
fn php_memcache_agrees() {
    let dir = TempDir::create("compat-php-memcache");
    let mut rng = Rng(0x0070_6870_9E37);
    for (function, hash) in [("crc32", "crc32"), ("fnv", "fnv1a32-php")]
        .into_iter()
        .cycle()
        .take(4)
    {
        let keys = random_keys(&mut rng, KEYS);
        assert!(keys.iter().any(|k| !k.is_ascii()), "some non-ASCII keys");
        let (list, running) = memcached_list(&mut rng, 10);
        run(&mut php(function, "set", &list), dir.path(), &keys);
        let theirs = holders(&list, &keys, held, Server::address);
        let header = format!("algorithm = \"php-memcache\"\nhash = \"{hash}\"");
        let file = cluster(&header, &list, Server::address);
        let ours = ringwise_lookup(Path::new(&dir.write("php.toml", &file)), &keys);
        assert_agree(
            &format!("php-memcache {function}, {list:?}"),
            &keys,
            &theirs,
            &ours,
        );
        drop(running);
    }
}

/// 2 to 10 plain redis servers, once each answers PING; a set one of
/// whose servers could not start is made again.
fn redis_servers(rng: &mut Rng) -> Vec<super::redis::Server> {
    'draw: loop {
        let count = rng.between(2, 10);
        let mut running: Vec<_> = (0..count)
            .map(|_| super::redis::Server::spawn_plain("ringwise-redis-rb"))
            .collect();
        let deadline = Instant::now() + READY_WITHIN;
        for server in &mut running {
            if let Err(why) = server.ready(deadline) {
                println!("a redis-server did not start, starting the set again: {why}");
                continue 'draw;
            }
        }
        return running;
    }
}

/// `random_keys`, a third of them with a `{tag}`: at the start (one of
/// 30, so many share one), inside the key, empty, or opening twice.
fn tagged_keys(rng: &mut Rng) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    (random_keys(rng, KEYS).into_iter())
        .map(|key| match rng.below(9) {
            0 | 1 => format!("{{t{}}}:{key}", rng.below(30)),
            2 => format!("x{{t{}}}:{key}", rng.below(30)),
            3 if rng.below(2) == 0 => format!("{{}}}}{key}"),
            3 => format!("{{{{t}}{key}"),
            _ => key,
        })
        .filter(|key| seen.insert(key.clone()))
        .collect()
}

#[test]
fn redis_rb_agrees() {
    let dir = TempDir::create("compat-redis-rb");
    let mut rng = Rng(0x4ED1_5A8B);
    let id = |s: &Server| format!("redis://127.0.0.1:{}/0", s.port);
    for _ in 0..LISTS {
        let keys = tagged_keys(&mut rng);
        let running = redis_servers(&mut rng);
        let list: Vec<Server> = (running.iter())
            .map(|r| Server {
                port: r.port,
                weight: 1,
            })
            .collect();
        let mut peer = ruby("redis_distributed.rb");
        // As an application writes them: without the database, which
        // redis-rb adds to the node's id.
        peer.arg("set")
            .args(list.iter().map(|s| format!("redis://127.0.0.1:{}", s.port)));
        run(&mut peer, dir.path(), &keys);
        let theirs = holders(&list, &keys, held_by_redis, id);
        let file = cluster("algorithm = \"redis-rb\"", &list, id);
        let ours = ringwise_lookup(Path::new(&dir.write("redis-rb.toml", &file)), &keys);
        assert_agree(&format!("redis-rb, {list:?}"), &keys, &theirs, &ours);
        drop(running);
    }
}

#[test]
fn groupcache_agrees() {
    let dir = TempDir::create("compat-groupcache");
    let mut rng = Rng(0x6C0C_ACE5);
    for replicas in [50, 3, 400] {
        let keys = random_keys(&mut rng, KEYS);
        let peers: Vec<String> = (0..rng.between(2, 10))
            .map(|_| {
                format!(
                    "http://10.0.{}.{}:{}",
                    rng.below(256),
                    rng.below(256),
                    free_port()
                )
            })
            .collect();
        let theirs = run(&mut groupcache(replicas, &peers), dir.path(), &keys);
        let nodes: Vec<(String, String)> =
            peers.iter().map(|p| (p.clone(), String::new())).collect();
        let header = format!("algorithm = \"groupcache\"\ngroupcache_replicas = {replicas}");
        let file = cluster_file(&header, &nodes);
        let ours = ringwise_lookup(Path::new(&dir.write("groupcache.toml", &file)), &keys);
        assert_agree(
            &format!("groupcache {replicas}, {peers:?}"),
            &keys,
            &theirs,
            &ours,
        );
    }
}

/// `ringwise plan --from dalli.toml --to groupcache.toml` on one memcached
/// list: exact (arcs), and its fraction and flows within sampling error of
/// 100,000 keys routed by Dalli and by groupcache themselves.
#[test]
fn dalli_to_groupcache_plan_is_exact() {
    const ROUTED: usize = 100_000;
    let dir = TempDir::create("compat-dalli-groupcache");
    let mut rng = Rng(0xDA11_6C0C);
    // Weight 1 (at most 1): groupcache has no weights.
    let (list, running) = memcached_list(&mut rng, 1);
    let keys: Vec<String> = (0..ROUTED)
        .map(|i| format!("user:{i}:{}", rng.below(1 << 30)))
        .collect();
    let by_dalli = run(&mut dalli("route", &list), dir.path(), &keys);
    let names: Vec<String> = list.iter().map(Server::address).collect();
    let by_groupcache = run(&mut groupcache(50, &names), dir.path(), &keys);
    let mut counted: HashMap<(String, String), usize> = HashMap::new();
    for (a, b) in by_dalli.iter().zip(&by_groupcache) {
        if a != b {
            *counted.entry((a.clone(), b.clone())).or_default() += 1;
        }
    }
    let moved = counted.values().sum::<usize>() as f64 / ROUTED as f64;
    let from = dir.write(
        "dalli.toml",
        &cluster("algorithm = \"dalli\"", &list, Server::address),
    );
    let to = dir.write(
        "groupcache.toml",
        &cluster("algorithm = \"groupcache\"", &list, Server::address),
    );
    let out = ringwise(
        &["plan", "--from", &from, "--to", &to, "--format", "json"],
        b"",
    );
    assert_success(&out);
    let plan: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("plan --json");
    assert_eq!(plan["method"], "arcs", "{plan}");
    let exact = plan["moved"].as_f64().expect("moved");
    // 100,000 keys: a binomial standard error of at most 0.16 %; four of
    // them.
    let sigma = (exact * (1.0 - exact) / ROUTED as f64).sqrt();
    assert!(
        (exact - moved).abs() <= 4.0 * sigma + 1e-9,
        "plan says {exact}, the libraries moved {moved} of {ROUTED} keys"
    );
    for flow in plan["flows"].as_array().expect("flows") {
        let pair = (
            flow["from"].as_str().expect("from").to_owned(),
            flow["to"].as_str().expect("to").to_owned(),
        );
        let share = flow["fraction"].as_f64().expect("fraction");
        let seen = counted.remove(&pair).unwrap_or(0) as f64 / ROUTED as f64;
        let sigma = (share * (1.0 - share) / ROUTED as f64).sqrt();
        assert!(
            (share - seen).abs() <= 4.0 * sigma + 1e-9,
            "flow {pair:?}: plan {share}, libraries {seen}"
        );
    }
    assert!(
        counted.is_empty(),
        "flows the plan does not name: {counted:?}"
    );
    drop(running);
}
