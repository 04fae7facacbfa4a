//! Ketama against libmemcached's C API, uhashring and libketama.
//!
//! libmemcached: `peers/libmemcached_ketama.c`, compiled with `cc ...
//! -lmemcached` once per test run, adds the servers in list order with
//! their weights and prints the server `memcached_generate_hash` picks, in
//! weighted ketama mode (flavor `libmemcached`) and spymemcached mode
//! (flavor `spymemcached`). First it must reproduce libmemcached's own
//! 99-key fixture in both modes, which proves the harness sets the modes
//! as libmemcached's test does.
//!
//! uhashring: `HashRing(nodes={name: {"weight": w}}, hash_fn="ketama")` and
//! `get_node(key)` (`peers/uhashring_ketama.py`), flavor `uhashring`.
//!
//! libketama: last.fm's `ketama.c` as PyPI's `ketama` extension builds it,
//! `Ketama(server_file)` and `get_server(key)` (`peers/libketama_peer.py`,
//! which also cleans up the SysV shared memory libketama keeps its
//! continuum in), flavor `libketama`, nodes named `host:port` as in the
//! server file. libketama sorts its points with `qsort`, so a point two
//! servers share has no defined owner: only lists without one are compared
//! (the library's own ring is checked for equal points owned by different
//! nodes, and such a list is drawn again, saying so). The points per server
//! from `get_points()` must equal the library's `stats()`, and the notes'
//! rounding example (weights 94, 315, 500, 627, 64) must give the last
//! server 32 points in libketama where libmemcached gives 28.
//!
//! Server lists: three random ones (2 to 12 servers `10.0.N.M`, ports
//! random but always including 11211, weights 1 to 1000), and the two
//! orders of a pair whose names share a point (`172.31.1.125-35` and
//! `172.31.1.202-38`, from uhashring's issue 6): both peers break that tie
//! deterministically (libmemcached for the earlier server, uhashring for
//! the later one), so ringwise must too. uhashring confirms the shared
//! point itself: it reports fewer distinct points than points.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use super::{
    Rng, assert_agree, cluster_file, library_counts, peer_file, process, random_keys,
    ringwise_lookup, run_peer, run_python_peer, shared_points,
};
use crate::support::TempDir;

const SEED: u64 = 0x6B65_7461_6D61;
const KEYS: usize = 10_000;
/// libmemcached's `test/fixtures/ketama.hpp`, C escapes decoded (a copy of
/// the reference vectors beside the compatibility notes).
const FIXTURE: &str = include_str!("../../../ringwise/tests/fixtures/libmemcached_ketama.tsv");
const COMPILE_HINT: &str = "run scripts/install-test-deps (Debian: libmemcached-dev and a C \
                            compiler); this test is never skipped";

/// One memcached server of a list.
#[derive(Clone, Debug)]
struct Server {
    host: String,
    port: u16,
    weight: u32,
}

impl Server {
    fn new(host: &str, port: u16, weight: u32) -> Server {
        Server {
            host: host.to_owned(),
            port,
            weight,
        }
    }

    /// `host:port`, the node name of the libmemcached flavors.
    fn address(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }
}

/// 2 to 12 distinct servers `10.0.N.M`, one of them on port 11211 and a
/// third of the others too, weights 1 to 1000.
fn random_servers(rng: &mut Rng) -> Vec<Server> {
    let n = rng.between(2, 12);
    let default_port = rng.below(n);
    let mut servers: Vec<Server> = Vec::with_capacity(n);
    while servers.len() < n {
        let host = format!("10.0.{}.{}", rng.below(16), rng.between(1, 254));
        let port = match servers.len() == default_port || rng.below(3) == 0 {
            true => 11211,
            false => rng.between(1024, 65535) as u16,
        };
        let weight = rng.between(1, 1000) as u32;
        if !servers.iter().any(|s| s.host == host && s.port == port) {
            servers.push(Server::new(&host, port, weight));
        }
    }
    servers
}

/// The pair of uhashring's issue 6: `172.31.1.125-35` and
/// `172.31.1.202-38` have one MD5 point in common, and at equal weights
/// both have 40 names.
fn colliding_pair() -> Vec<Server> {
    vec![
        Server::new("172.31.1.125", 11211, 1),
        Server::new("172.31.1.202", 11211, 1),
    ]
}

/// Three random lists and the colliding pair in both orders.
fn server_lists() -> Vec<Vec<Server>> {
    let mut rng = Rng(SEED);
    let mut lists: Vec<_> = (0..3).map(|_| random_servers(&mut rng)).collect();
    let pair = colliding_pair();
    lists.push(pair.iter().rev().cloned().collect());
    lists.push(pair);
    lists
}

/// The libmemcached peer, compiled once per test run into the target's
/// scratch directory.
pub(super) fn libmemcached_peer() -> &'static Path {
    static PEER: OnceLock<PathBuf> = OnceLock::new();
    PEER.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR"));
        let binary = dir.join(format!("libmemcached_ketama-{}", std::process::id()));
        process::output(
            Command::new("cc")
                .args(["-O2", "-Wall", "-Werror", "-o"])
                .arg(&binary)
                .arg(peer_file("libmemcached_ketama.c"))
                .arg("-lmemcached"),
            COMPILE_HINT,
        );
        // One fixed name, replaced atomically: runs of the tests in
        // parallel processes each compile and keep the newest.
        let fixed = dir.join("libmemcached_ketama");
        std::fs::rename(&binary, &fixed).expect("move the compiled peer into place");
        fixed
    })
}

/// What libmemcached (`mode` is `ketama` or `spy`) picks for `keys`.
fn libmemcached(mode: &str, servers: &[Server], dir: &TempDir, keys: &[String]) -> Vec<String> {
    let list: String = servers
        .iter()
        .map(|s| format!("{} {} {}\n", s.host, s.port, s.weight))
        .collect();
    let file = dir.write("servers.txt", &list);
    let mut command = Command::new(libmemcached_peer());
    command.args([mode, &file]);
    run_peer(&mut command, dir.path(), keys)
}

/// The cluster file of `servers` for a libmemcached flavor.
fn libmemcached_cluster(flavor: &str, servers: &[Server], dir: &TempDir) -> PathBuf {
    let nodes: Vec<_> = servers
        .iter()
        .map(|s| (s.address(), format!("weight = {}", s.weight)))
        .collect();
    let header = format!("algorithm = \"ketama\"\nflavor = \"{flavor}\"");
    PathBuf::from(dir.write("cluster.toml", &cluster_file(&header, &nodes)))
}

/// The libmemcached peer in `mode` against ringwise's `flavor` on every
/// server list.
fn libmemcached_agrees(mode: &str, flavor: &str, tag: &str) {
    let dir = TempDir::create(tag);
    let mut rng = Rng(SEED ^ 1);
    for (i, servers) in server_lists().iter().enumerate() {
        let keys = random_keys(&mut rng, KEYS);
        let peer = libmemcached(mode, servers, &dir, &keys);
        let cluster = libmemcached_cluster(flavor, servers, &dir);
        let ours = ringwise_lookup(&cluster, &keys);
        assert_agree(
            &format!("{flavor}, list {i}: {servers:?}"),
            &keys,
            &peer,
            &ours,
        );
    }
}

/// The fixture's rows (key, ketama server, spy server) and its servers:
/// `10.0.1.1` to `10.0.1.8` on port 11211 with the weights of its header.
fn fixture() -> (Vec<[String; 3]>, Vec<Server>) {
    let rows = FIXTURE
        .lines()
        .filter(|line| !line.starts_with('#'))
        .map(|line| {
            let fields: Vec<&str> = line.split('\t').collect();
            [fields[0], fields[3], fields[4]].map(str::to_owned)
        })
        .collect();
    let weights = [600, 300, 200, 350, 1000, 800, 950, 100];
    let servers = (1..)
        .zip(weights)
        .map(|(i, w)| Server::new(&format!("10.0.1.{i}"), 11211, w))
        .collect();
    (rows, servers)
}

#[test]
fn libmemcached_peer_reproduces_its_fixture() {
    let dir = TempDir::create("compat-fixture");
    let (rows, servers) = fixture();
    assert_eq!(rows.len(), 99, "the fixture has 99 rows");
    let keys: Vec<String> = rows.iter().map(|row| row[0].clone()).collect();
    for (mode, column) in [("ketama", 1), ("spy", 2)] {
        let peer = libmemcached(mode, &servers, &dir, &keys);
        let expected: Vec<String> = rows
            .iter()
            .map(|row| format!("{}:11211", row[column]))
            .collect();
        assert_agree(
            &format!("libmemcached {mode} vs its fixture"),
            &keys,
            &peer,
            &expected,
        );
    }
}

#[test]
fn libmemcached_weighted_ketama_agrees() {
    libmemcached_agrees("ketama", "libmemcached", "compat-libmemcached");
}

#[test]
fn spymemcached_agrees() {
    libmemcached_agrees("spy", "spymemcached", "compat-spy");
}

#[test]
fn uhashring_agrees() {
    let dir = TempDir::create("compat-uhashring");
    let mut rng = Rng(SEED ^ 2);
    let lists = server_lists();
    for (i, servers) in lists.iter().enumerate() {
        // Names as uhashring users write them: `host:port`, and the bare
        // host for the colliding pair (its names are `host-i`).
        let colliding = i >= lists.len() - 2;
        let nodes: Vec<(String, u32)> = servers
            .iter()
            .map(|s| match colliding {
                true => (s.host.clone(), s.weight),
                false => (s.address(), s.weight),
            })
            .collect();
        let list: String = nodes.iter().map(|(n, w)| format!("{n} {w}\n")).collect();
        let file = dir.write("nodes.txt", &list);
        let keys = random_keys(&mut rng, KEYS);
        let mut peer = run_python_peer(
            "uhashring_ketama.py",
            &[Path::new(&file)],
            dir.path(),
            &keys,
        );
        let header = peer.remove(0);
        let counts: Vec<usize> = header
            .split(' ')
            .filter_map(|word| word.parse().ok())
            .collect();
        assert!(
            !colliding || counts[1] < counts[0],
            "uhashring sees no shared point in {nodes:?}: {header}"
        );
        let extra: Vec<_> = nodes
            .iter()
            .map(|(n, w)| (n.clone(), format!("weight = {w}")))
            .collect();
        let toml = cluster_file("algorithm = \"ketama\"\nflavor = \"uhashring\"", &extra);
        let cluster = dir.write("cluster.toml", &toml);
        let ours = ringwise_lookup(Path::new(&cluster), &keys);
        assert_agree(
            &format!("uhashring, list {i}: {nodes:?}"),
            &keys,
            &peer,
            &ours,
        );
    }
}

/// The cluster file of `servers` for flavor `libketama` (or another
/// flavor, for the rounding comparison): node names `host:port` exactly as
/// libketama's server file writes them.
fn libketama_toml(flavor: &str, servers: &[Server]) -> String {
    let nodes: Vec<_> = servers
        .iter()
        .map(|s| (s.address(), format!("weight = {}", s.weight)))
        .collect();
    let header = format!("algorithm = \"ketama\"\nflavor = \"{flavor}\"");
    cluster_file(&header, &nodes)
}

/// What libketama (`peers/libketama_peer.py`) makes of `servers`: the
/// points of each server by its name, and the server of each key.
fn libketama(
    servers: &[Server],
    file: &str,
    dir: &TempDir,
    keys: &[String],
) -> (BTreeMap<String, u64>, Vec<String>) {
    let list: String = servers
        .iter()
        .map(|s| format!("{}\t{}\n", s.address(), s.weight))
        .collect();
    let file = dir.write(file, &list);
    let mut answers = run_python_peer("libketama_peer.py", &[Path::new(&file)], dir.path(), keys);
    let header = answers.remove(0);
    let counts = header
        .split(' ')
        .map(|item| {
            let (name, count) = item.rsplit_once('=').expect("NAME=COUNT");
            (name.to_owned(), count.parse().expect("a count"))
        })
        .collect();
    (counts, answers)
}

#[test]
fn libketama_agrees() {
    let dir = TempDir::create("compat-libketama");
    let mut rng = Rng(SEED ^ 3);
    let mut compared = 0;
    while compared < 3 {
        let servers = random_servers(&mut rng);
        let toml = libketama_toml("libketama", &servers);
        // libketama's qsort leaves a shared point's owner to chance.
        let shared = shared_points(&toml);
        if !shared.is_empty() {
            println!("libketama: list {servers:?} left out, shared points {shared:?}");
            continue;
        }
        let keys = random_keys(&mut rng, KEYS);
        let file = format!("libketama-{compared}.txt");
        let (counts, peer) = libketama(&servers, &file, &dir, &keys);
        assert_eq!(
            counts,
            library_counts(&toml),
            "libketama's points per server, list {compared}: {servers:?}"
        );
        let cluster = dir.write("cluster.toml", &toml);
        let ours = ringwise_lookup(Path::new(&cluster), &keys);
        assert_agree(
            &format!("libketama, list {compared}: {servers:?}"),
            &keys,
            &peer,
            &ours,
        );
        compared += 1;
    }
}

/// The notes' rounding hazard (§1.7), on the real libketama: weights 94,
/// 315, 500, 627, 64. The last server's exact share is 8 groups; libketama
/// narrows a double to float and gets 8 (32 points), libmemcached (and
/// twemproxy) stay in float and get 7 (28 points).
#[test]
fn libketama_rounds_unlike_libmemcached() {
    let dir = TempDir::create("compat-libketama-rounding");
    let servers: Vec<Server> = (1..)
        .zip([94, 315, 500, 627, 64])
        .map(|(i, w)| Server::new(&format!("10.0.1.{i}"), 11211, w))
        .collect();
    let keys = random_keys(&mut Rng(SEED ^ 4), 1_000);
    let (counts, peer) = libketama(&servers, "rounding.txt", &dir, &keys);
    let last = servers[4].address();
    assert_eq!(counts[&last], 32, "libketama's points for weight 64");
    let toml = libketama_toml("libketama", &servers);
    assert_eq!(
        counts,
        library_counts(&toml),
        "libketama's points per server"
    );
    let libmemcached = library_counts(&libketama_toml("libmemcached", &servers));
    assert_eq!(
        libmemcached[&last], 28,
        "libmemcached's points for weight 64"
    );
    assert!(shared_points(&toml).is_empty(), "no shared point");
    let cluster = dir.write("cluster.toml", &toml);
    let ours = ringwise_lookup(Path::new(&cluster), &keys);
    assert_agree("libketama, rounding list", &keys, &peer, &ours);
}
