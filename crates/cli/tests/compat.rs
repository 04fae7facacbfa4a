//! The compatibility flavours proved from the peer side: `ringwise lookup`
//! and `ringwise token` on cluster files against the real programs whose
//! placements they claim to reproduce, key by key, with 100 % agreement
//! required.
//!
//! - `ketama`: libmemcached's C API (weighted ketama and spymemcached
//!   modes; a small C program, `peers/libmemcached_ketama.c`, compiled at
//!   run time), uhashring (`peers/uhashring_ketama.py`) and last.fm's
//!   libketama (PyPI's `ketama` extension, `peers/libketama_peer.py`);
//! - `twemproxy`: a real nutcracker (`distribution: ketama`, `fnv1a_64` and
//!   `md5`, a hash tag, named servers) in front of real memcached servers,
//!   each key `set` through it and found by asking every memcached;
//! - `nginx`: a real nginx routing `hash $http_x_key consistent;` to
//!   backends that name themselves;
//! - `varnish`: a real varnishd whose `directors.shard()` directors route
//!   `by=KEY` (alt 0 and 1) and `by=HASH` to loopback backends that name
//!   themselves;
//! - `haproxy`: a real haproxy routing `balance hdr(X-Key)` with `hash-type
//!   consistent` (sdbm, djb2, wt6, crc32, with and without avalanche) to
//!   ports that name themselves, then its Runtime API's weight changes and
//!   disabled servers against `ringwise plan`;
//! - `redis_cluster`: three `redis-server --cluster-enabled yes` nodes with
//!   an explicit random slot table, asked `GET key` and read by `-MOVED`;
//! - `redis_plan`: a `ringwise plan` (join, then leave) carried out on four
//!   such nodes with `SETSLOT`/`MIGRATE`; the cluster must end with the
//!   written table and have moved exactly the planned keys;
//! - `cassandra`: cassandra-driver's Murmur3 token function
//!   (`peers/cassandra_murmur3.py`) against `ringwise token`;
//! - `clients`: the client libraries' rings (Dalli and redis-rb in Ruby,
//!   groupcache's `consistenthash` in Go, pecl memcache in PHP) against
//!   real memcached and redis servers, and an exact Dalli → groupcache
//!   migration plan against both libraries;
//! - `grpc`: grpcio channels with a `ring_hash` service config to loopback
//!   grpcio servers that answer their own address
//!   (`peers/grpc_ring_hash.py`), then with one server stopped.
//!
//! Server lists, slot tables and keys come from a seeded generator; the
//! answers come from the peers, never from tables in this file. Peers
//! that sort their points with `qsort` (libketama, twemproxy) leave a
//! point two servers share to chance: they are compared on server lists
//! without one (`shared_points` asks the library's ring). Keys are
//! printable ASCII without whitespace or backslash (so each is one line,
//! echoed unescaped by `lookup`) and some non-ASCII UTF-8.
//!
//! The peers are installed by `scripts/install-test-deps` (Debian: nginx, varnish,
//! redis-server, nutcracker, memcached, libmemcached-dev and a C compiler;
//! PyPI: a venv at `target/peers-venv`). A missing one fails its test with that hint: these
//! tests are never skipped. Every server a test starts is killed by its pid
//! when the test ends, however it ends (`process::Guard`).

#[path = "../../ringwise/tests/support/process.rs"]
mod process;
#[path = "../../ringwise/tests/support/redis.rs"]
mod redis;
#[path = "../../ringwise/tests/support/rng.rs"]
mod rng;

mod cassandra;
mod clients;
mod grpc;
mod haproxy;
mod haproxy_template;
mod import_nginx;
mod import_twemproxy;
mod ketama;
mod libmemcached_config;
mod nginx;
mod redis_cluster;
mod redis_live;
mod redis_plan;
mod twemproxy;
mod varnish;

use std::fs::File;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::{assert_success, ringwise, stdout};

use rng::Rng;

const INSTALL_HINT: &str = "run scripts/install-test-deps; these tests are never skipped";

/// Mismatches shown when a peer and ringwise disagree.
const SHOWN: usize = 10;

/// `n` distinct keys of 1 to 40 characters: nine in ten printable ASCII
/// without space or backslash, the rest with non-ASCII characters (two-,
/// three- and four-byte UTF-8) among ASCII ones.
fn random_keys(rng: &mut Rng, n: usize) -> Vec<String> {
    const WIDE: [char; 8] = ['é', 'ß', 'ё', 'λ', '日', '本', '€', '🦀'];
    let mut seen = std::collections::HashSet::new();
    let mut keys = Vec::with_capacity(n);
    while keys.len() < n {
        let wide = rng.below(10) == 0;
        let key: String = (0..rng.between(1, 40))
            .map(|_| match wide && rng.below(3) == 0 {
                true => WIDE[rng.below(WIDE.len())],
                false => loop {
                    let c = char::from(b'!' + rng.below(94) as u8);
                    if c != '\\' {
                        break c;
                    }
                },
            })
            .collect();
        if seen.insert(key.clone()) {
            keys.push(key);
        }
    }
    keys
}

/// The repository's root.
fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A peer program's source under `tests/peers/`.
fn peer_file(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/peers")
        .join(name)
}

/// The python of the peers' venv, `target/peers-venv`.
fn peer_python() -> PathBuf {
    let python = repo_root().join("target/peers-venv/bin/python");
    assert!(
        python.exists(),
        "{} is missing: {INSTALL_HINT}",
        python.display()
    );
    python
}

/// Runs `command` with `keys`, one a line, as its stdin (through a file in
/// `dir`), and returns its stdout's lines.
fn run_peer(command: &mut Command, dir: &Path, keys: &[String]) -> Vec<String> {
    let input = dir.join("peer-input");
    std::fs::write(&input, lines(keys)).expect("write the peer's input");
    command.stdin(File::open(&input).expect("open the peer's input"));
    let out = process::output(command, INSTALL_HINT);
    String::from_utf8(out)
        .expect("the peer prints UTF-8")
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Runs a python peer script from `tests/peers/` with `args`.
fn run_python_peer(script: &str, args: &[&Path], dir: &Path, keys: &[String]) -> Vec<String> {
    let mut command = Command::new(peer_python());
    command.arg(peer_file(script)).args(args);
    run_peer(&mut command, dir, keys)
}

fn lines(keys: &[String]) -> String {
    keys.iter().map(|k| format!("{k}\n")).collect()
}

/// A cluster file: `header` (the top-level keys), then one `[[nodes]]`
/// table per `(name, extra)` in order, `extra` being more `key = value`
/// lines of that node (its weight, its slots).
fn cluster_file(header: &str, nodes: &[(String, String)]) -> String {
    let mut toml = format!("{header}\n");
    for (name, extra) in nodes {
        toml.push_str(&format!("\n[[nodes]]\nname = \"{name}\"\n{extra}\n"));
    }
    toml
}

/// `ringwise lookup --cluster FILE` on `keys` from stdin: the node of each
/// key, checking that the lines come back as `KEY<TAB>NODE` in order.
fn ringwise_lookup(cluster: &Path, keys: &[String]) -> Vec<String> {
    ringwise_lookup_with(cluster, &[], keys)
}

/// `ringwise lookup --cluster FILE ARGS...` on `keys` from stdin, e.g.
/// with `--cluster-format twemproxy --pool alpha`.
fn ringwise_lookup_with(cluster: &Path, args: &[&str], keys: &[String]) -> Vec<String> {
    let path = cluster.to_str().expect("utf-8 path");
    let mut all = vec!["lookup", "--cluster", path];
    all.extend_from_slice(args);
    let out = ringwise(&all, lines(keys).as_bytes());
    assert_success(&out);
    answers("lookup", keys, &stdout(&out))
}

/// `ringwise token` on `keys` from stdin: the token of each key, as text.
fn ringwise_token(keys: &[String]) -> Vec<String> {
    let out = ringwise(&["token"], lines(keys).as_bytes());
    assert_success(&out);
    answers("token", keys, &stdout(&out))
}

/// The second field of each `KEY<TAB>VALUE` line, checking the keys.
fn answers(command: &str, keys: &[String], text: &str) -> Vec<String> {
    let rows: Vec<(&str, &str)> = text
        .lines()
        .map(|line| {
            line.split_once('\t')
                .unwrap_or_else(|| panic!("`ringwise {command}` printed {line:?}"))
        })
        .collect();
    assert_eq!(
        rows.len(),
        keys.len(),
        "`ringwise {command}`: one line a key"
    );
    for (row, key) in rows.iter().zip(keys) {
        assert_eq!(row.0, key, "`ringwise {command}` echoes the keys in order");
    }
    rows.into_iter()
        .map(|(_, value)| value.to_owned())
        .collect()
}

/// Asserts that the peer and ringwise answer every key alike; if not,
/// shows how many differ and the first few with both answers.
#[track_caller]
fn assert_agree(what: &str, keys: &[String], peer: &[String], ours: &[String]) {
    assert_eq!(peer.len(), keys.len(), "{what}: the peer answers every key");
    let differ: Vec<_> = keys
        .iter()
        .zip(peer.iter().zip(ours))
        .filter(|(_, (p, o))| p != o)
        .collect();
    assert!(
        differ.is_empty(),
        "{what}: {} of {} keys differ; first ones (key, peer, ringwise):\n{}",
        differ.len(),
        keys.len(),
        differ
            .iter()
            .take(SHOWN)
            .map(|(k, (p, o))| format!("  {k:?}\t{p}\t{o}\n"))
            .collect::<String>()
    );
}

/// The library's cluster from a cluster file's text.
fn library(toml: &str) -> ringwise::Keyed<ringwise::AnyPlacement> {
    ringwise::ClusterSpec::from_toml(toml)
        .expect("a valid cluster file")
        .build()
        .expect("the cluster builds")
}

/// Points of the cluster file's ring that two different nodes share, with
/// their owners: peers that sort points with `qsort` (libketama,
/// twemproxy) leave such a point's owner to chance, so a configuration
/// compared with them must have none.
fn shared_points(toml: &str) -> Vec<(u64, String, String)> {
    let keyed = library(toml);
    let ring = keyed
        .placement()
        .as_ring()
        .expect("a ring-shaped placement");
    let name = |id| ring.nodes().name(id).expect("a listed owner").to_owned();
    let points: Vec<_> = ring.points().collect();
    points
        .windows(2)
        .filter(|pair| pair[0].0 == pair[1].0 && pair[0].1 != pair[1].1)
        .map(|pair| (pair[0].0, name(pair[0].1), name(pair[1].1)))
        .collect()
}

/// Points per node of the cluster file's ring (the library's `stats()`),
/// by node name.
fn library_counts(toml: &str) -> std::collections::BTreeMap<String, u64> {
    let keyed = library(toml);
    let ring = keyed
        .placement()
        .as_ring()
        .expect("a ring-shaped placement");
    ring.stats()
        .nodes
        .into_iter()
        .map(|node| (node.name, node.points))
        .collect()
}

/// One HTTP/1.1 response's body, which must come with status 200 (`what`
/// names the request in the failure): nginx's and varnishd's peer tests
/// read their backends' answers with it.
pub(crate) fn http_body(reader: &mut impl BufRead, what: &str) -> std::io::Result<String> {
    let mut status = String::new();
    reader.read_line(&mut status)?;
    let mut length = 0;
    loop {
        let mut header = String::new();
        reader.read_line(&mut header)?;
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().expect("a Content-Length");
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body)?;
    let body = String::from_utf8_lossy(&body).into_owned();
    assert!(
        status.starts_with("HTTP/1.1 200"),
        "{what:?}: {} {body}",
        status.trim_end()
    );
    Ok(body)
}
