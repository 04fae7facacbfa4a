//! `ringwise-cachebench` end to end against real memcached servers (Debian's
//! `memcached`, installed by scripts/install-test-deps; never skipped),
//! each run short (3 → 4 servers, 3,000 keys, seconds):
//!
//! - at 3 → 4 servers a ring loses about 1/4 of its cached keys (at most
//!   1/(N+1) + 8 points), `modulo` about 3/4 (at least 60 %), measured on
//!   the first read of each key after the change, which is a count, not a
//!   time;
//! - a killed server does not crash the client: its requests fail and are
//!   counted, the placement drops it when membership says so (the last
//!   intervals have no errors), and the keys that moved are its share;
//! - every memcached a run started is gone when it ends, and when it is
//!   stopped with SIGINT half-way;
//! - with `--membership etcd://`, `zk://` (a real etcd or ZooKeeper on
//!   loopback) or `gossip://` each server registers itself with `ringwise
//!   join`, the placement follows what the source lists (an added server,
//!   a killed one whose lease or session expires or whom the failure
//!   detector declares dead), and every registrar has left etcd and
//!   ZooKeeper when the run ends;
//! - through `ringwise-proxy` (the placements `proxy` and `proxy-cold`),
//!   the database's peak after 3 → 4 servers is lowest with the proxy's
//!   warm-up window, higher without it, highest for `modulo`, and the
//!   stale-read check reads no version older than the last acknowledged
//!   write.
//!
//! `ringwise-proxy` is another package's binary, which Cargo builds for
//! its own tests only (`CARGO_BIN_EXE_*` names this crate's binaries, and
//! a binary cannot be a dev-dependency), so [`proxy_built`] builds it
//! once per test binary with the Cargo running the tests
//! (`cargo build -p ringwise-proxy`, the same profile, target directory
//! and target): it lands beside `ringwise-cachebench`, where the program
//! looks for it, and a run of the whole workspace finds it built already.
//!
//! Nothing here asserts how long anything took.

// The etcd and ZooKeeper helpers both include the core's process helpers by
// path: two copies of one small file.
#![allow(clippy::duplicate_mod)]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::thread::sleep;
use std::time::{Duration, Instant};

use serde_json::Value;

#[path = "../../etcd/tests/support/etcd.rs"]
#[allow(
    dead_code,
    reason = "the etcd crate's helpers; these tests need a single member"
)]
mod server;

// docs/cachebench.md's examples, run as a transcript.
mod docs;

// Help and --version on a full device.
mod files;

#[path = "../../zookeeper/tests/support/zookeeper.rs"]
#[allow(
    dead_code,
    reason = "the ZooKeeper crate's helpers; these tests need one server"
)]
mod zk_server;

use server::Etcd;
use zk_server::Zk;

const BENCH: &str = env!("CARGO_BIN_EXE_ringwise-cachebench");

/// The short run's options: 3 servers, 3,000 keys, 3,000 requests/s.
const SHORT: &[&str] = &[
    "--nodes",
    "3",
    "--keys",
    "3000",
    "--rps",
    "3000",
    "--threads",
    "2",
    "--interval",
    "0.25",
    "--warmup",
    "1",
    "--warmup-max",
    "10",
    "--after-min",
    "1.5",
    "--after-max",
    "4",
    "--memory",
    "16",
    "--format",
    "json",
];

/// The short run with `extra` options (an option given there replaces
/// SHORT's value).
fn run(extra: &[&str]) -> Value {
    let short = SHORT
        .chunks(2)
        .filter(|pair| !extra.contains(&pair[0]))
        .flatten();
    let output = Command::new(BENCH)
        .args(short)
        .args(extra)
        .stdin(Stdio::null())
        .output()
        .expect("ringwise-cachebench runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "{extra:?} failed ({}): {stderr}",
        output.status
    );
    serde_json::from_slice(&output.stdout).expect("one JSON document")
}

fn algorithm<'a>(document: &'a Value, name: &str) -> &'a Value {
    document["algorithms"]
        .as_array()
        .expect("algorithms")
        .iter()
        .find(|a| a["algorithm"] == name)
        .unwrap_or_else(|| panic!("{name} in {document}"))
}

fn number(value: &Value, field: &str) -> f64 {
    value[field]
        .as_f64()
        .unwrap_or_else(|| panic!("{field} in {value}"))
}

/// Every server of the run is gone: no process with its pid (that is not
/// a zombie) and nothing listening on its address.
fn assert_stopped(document: &Value) {
    for a in document["algorithms"].as_array().expect("algorithms") {
        for server in a["servers"].as_array().expect("servers") {
            let pid = server["pid"].as_u64().expect("started here");
            assert!(!alive(pid), "memcached pid {pid} still runs: {server}");
            let address = server["address"].as_str().expect("address");
            assert!(
                std::net::TcpStream::connect(address).is_err(),
                "{address} still accepts connections"
            );
        }
    }
}

fn alive(pid: u64) -> bool {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // "pid (comm) S ...": a state other than Z (zombie) or X (dead).
    let state = stat
        .rsplit(')')
        .next()
        .and_then(|s| s.split_whitespace().next());
    matches!(state, Some(s) if s != "Z" && s != "X")
}

#[test]
fn a_ring_loses_one_share_of_hits_and_modulo_most() {
    let document = run(&["--add", "1", "--algo", "modulo,ring"]);
    let ring = algorithm(&document, "ring");
    let modulo = algorithm(&document, "modulo");
    for a in [ring, modulo] {
        let steady = number(a, "steady_hit_rate");
        assert!(
            (0.92..0.98).contains(&steady),
            "steady hit rate {steady}: {a}"
        );
        assert_eq!(a["errors"], 0, "{a}");
        assert_eq!(a["servers"].as_array().map(Vec::len), Some(4));
    }
    let (ring_cold, modulo_cold) = (number(ring, "cold"), number(modulo, "cold"));
    assert!(
        ring_cold <= 0.25 + 0.08,
        "ring made {ring_cold} of its keys cold"
    );
    assert!(
        ring_cold >= 0.25 - 0.12,
        "ring made only {ring_cold} cold: nothing moved?"
    );
    assert!(modulo_cold >= 0.6, "modulo made only {modulo_cold} cold");
    // The keys that moved (placement) and the hits lost (servers) agree.
    for a in [ring, modulo] {
        let (moved, cold) = (number(a, "moved"), number(a, "cold"));
        assert!((moved - cold).abs() < 0.06, "moved {moved}, cold {cold}");
    }
    assert!(number(modulo, "peak_multiplier") > number(ring, "peak_multiplier"));
    assert_stopped(&document);
}

/// 3 → 4 servers through `ringwise-proxy`, with and without its warm-up
/// window, beside `modulo` on the same key stream: the warm-up window
/// answers the moved keys from their previous servers (few of them go
/// cold, the proxy counts its fallback hits), so the database's peak is
/// the lowest; without it a ring's share goes cold; modulo's most. The
/// stale-read check runs across the change: no stale read.
#[test]
fn the_proxy_warm_up_keeps_the_database_load_lowest() {
    proxy_built();
    let document = run(&[
        "--add",
        "1",
        "--algo",
        "modulo,proxy-cold,proxy",
        "--check-stale",
        "300",
        // The peaks come in the first intervals: no need to wait for
        // modulo's recovery.
        "--warmup-max",
        "5",
        "--after-max",
        "2.5",
    ]);
    let modulo = algorithm(&document, "modulo");
    let cold = algorithm(&document, "proxy-cold");
    let warm = algorithm(&document, "proxy");
    for a in [modulo, cold, warm] {
        let steady = number(a, "steady_hit_rate");
        assert!((0.92..0.98).contains(&steady), "steady {steady}: {a}");
        assert_eq!(a["errors"], 0, "{a}");
        let check = &a["stale_check"];
        assert_eq!(check["stale"], 0, "a stale read: {check}");
        assert!(number(check, "reads_after") > 0.0, "{check}");
        assert!(number(check, "writes") > 0.0, "{check}");
    }
    // Both proxies' rings move about a quarter of the keys; without the
    // window that quarter goes cold, with it almost none does.
    for a in [cold, warm] {
        let moved = number(a, "moved");
        assert!((0.13..=0.33).contains(&moved), "moved {moved}: {a}");
        assert!(a["proxy"]["pid"].as_u64().is_some(), "{a}");
    }
    let (moved, went_cold) = (number(cold, "moved"), number(cold, "cold"));
    assert!(
        (moved - went_cold).abs() < 0.06,
        "proxy-cold: moved {moved}, cold {went_cold}"
    );
    assert!(number(warm, "cold") < 0.06, "proxy: {warm}");
    assert_eq!(cold["fallback_hits"], 0, "{cold}");
    assert!(number(warm, "fallback_hits") > 0.0, "{warm}");
    let peak = |a: &Value| number(a, "peak_multiplier");
    assert!(
        peak(warm) < peak(cold) && peak(cold) < peak(modulo),
        "DB peaks: proxy {}, proxy-cold {}, modulo {}",
        peak(warm),
        peak(cold),
        peak(modulo)
    );
    assert_stopped(&document);
    for a in [cold, warm] {
        let pid = a["proxy"]["pid"].as_u64().expect("started here");
        assert!(!alive(pid), "ringwise-proxy pid {pid} still runs: {a}");
    }
}

#[test]
fn a_killed_server_is_counted_then_dropped() {
    let document = run(&["--kill", "1", "--algo", "ring", "--detect", "0.5"]);
    let ring = algorithm(&document, "ring");
    assert!(
        number(ring, "errors") > 0.0,
        "requests to the killed server fail: {ring}"
    );
    // The ring dropped it: its share moved, the others' keys stayed.
    let moved = number(ring, "moved");
    assert!((0.15..0.5).contains(&moved), "moved {moved}");
    let cold = number(ring, "cold");
    assert!((cold - moved).abs() < 0.08, "cold {cold}, moved {moved}");
    let points = ring["intervals"].as_array().expect("intervals");
    let last = points.last().expect("intervals after the change");
    assert_eq!(last["phase"], "after");
    assert_eq!(
        last["errors"], 0,
        "no request goes to the dropped server: {last}"
    );
    assert_stopped(&document);
}

/// `ringwise-proxy` built beside `ringwise-cachebench` (see the module
/// doc): `cargo build -p ringwise-proxy` once per test binary, with the
/// profile and target directory (and `--target`, when cross-compiling)
/// that hold `ringwise-cachebench`.
pub fn proxy_built() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let bench = Path::new(BENCH);
            let profile_dir = bench.parent().expect("the binary's directory");
            let target_dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
                .parent()
                .expect("the target directory");
            let profile = match profile_dir.file_name().and_then(|n| n.to_str()) {
                Some("debug") | None => "dev".to_owned(),
                Some(name) => name.to_owned(),
            };
            let mut command = Command::new(env!("CARGO"));
            command
                .current_dir(env!("CARGO_MANIFEST_DIR"))
                .args([
                    "build",
                    "--quiet",
                    "-p",
                    "ringwise-proxy",
                    "--profile",
                    &profile,
                ])
                .arg("--target-dir")
                .arg(target_dir);
            // target/TRIPLE/PROFILE when the tests were built with --target.
            let triple_dir = profile_dir.parent().expect("the profile's directory");
            if triple_dir != target_dir
                && let Some(triple) = triple_dir.file_name()
            {
                command.arg("--target").arg(triple);
            }
            let output = command.output().expect("cargo runs");
            assert!(
                output.status.success(),
                "cargo build -p ringwise-proxy failed: {}",
                String::from_utf8_lossy(&output.stderr)
            );
            let proxy = bench.with_file_name("ringwise-proxy");
            assert!(proxy.exists(), "cargo built no {}", proxy.display());
            proxy
        })
        .clone()
}

/// `ringwise` built beside this program: `scripts/test` builds the whole
/// workspace before any test runs (alone: `cargo build -p ringwise-cli`).
fn ringwise_cli() -> String {
    let path = Path::new(BENCH).with_file_name("ringwise");
    assert!(
        path.exists(),
        "{} is missing: build it with `cargo build -p ringwise-cli`",
        path.display()
    );
    path.display().to_string()
}

/// The short run with `--membership URL` (`kind`: the JSON's name of the
/// source) and `extra` options, its servers registered by `ringwise join`.
fn run_through(url: &str, kind: &str, extra: &[&str]) -> Value {
    let ringwise = ringwise_cli();
    let mut args = vec![
        "--membership",
        url,
        "--ringwise",
        &ringwise,
        "--algo",
        "ring",
    ];
    args.extend_from_slice(extra);
    let document = run(&args);
    assert_eq!(document["membership"], kind);
    assert_stopped(&document);
    document
}

/// [`run_through`] a fresh etcd; etcd holds no key once the run has ended
/// (every lease revoked or expired).
fn run_through_etcd(extra: &[&str]) -> Value {
    let etcd = Etcd::single();
    let url = format!(
        "etcd://{}/bench",
        etcd.endpoint(0).trim_start_matches("http://")
    );
    let document = run_through(&url, "etcd", extra);
    assert_eq!(etcd.count(), 0, "a registrar's member outlived the run");
    document
}

/// [`run_through`] a fresh ZooKeeper; no session holds an ephemeral znode
/// under the prefix once the run has ended (closed or expired).
fn run_through_zookeeper(extra: &[&str]) -> Value {
    let zk = Zk::single();
    let url = format!("zk://{}/bench", zk.host(0));
    let document = run_through(&url, "zookeeper", extra);
    let port = zk
        .host(0)
        .rsplit_once(':')
        .and_then(|(_, p)| p.parse().ok());
    let dump = zk_server::four_letters(port.expect("a port"), "dump").expect("dump");
    assert!(dump.contains("ephemeral"), "not a dump: {dump}");
    assert!(
        !dump.contains("/bench/"),
        "a registrar's znode outlived the run: {dump}"
    );
    document
}

/// [`run_through`] gossip on loopback: the client's own address is every
/// registrar's seed, nothing to run.
fn run_through_gossip(extra: &[&str]) -> Value {
    run_through("gossip://127.0.0.1:0", "gossip", extra)
}

/// An added server takes the share a ring gives it, through `source`.
fn an_added_server_joins(document: &Value) {
    let ring = algorithm(document, "ring");
    assert_eq!(ring["errors"], 0, "{ring}");
    assert_eq!(ring["servers"].as_array().map(Vec::len), Some(4));
    // The route the watcher built moved one share to the new server.
    let (moved, cold) = (number(ring, "moved"), number(ring, "cold"));
    assert!(
        (0.25 - 0.12..=0.25 + 0.08).contains(&moved),
        "moved {moved}"
    );
    assert!((moved - cold).abs() < 0.06, "moved {moved}, cold {cold}");
}

/// The options of a run whose last server is killed: membership drops it
/// within `--ttl` 2 s, and the run goes on 5 s after.
const KILL: &[&str] = &[
    "--kill",
    "1",
    "--after-min",
    "5",
    "--after-max",
    "10",
    "--ttl",
    "2",
];

/// A killed server's requests fail until membership drops it; then none.
fn a_killed_server_leaves(document: &Value) {
    let ring = algorithm(document, "ring");
    assert!(number(ring, "errors") > 0.0, "the kill was felt: {ring}");
    let moved = number(ring, "moved");
    assert!((0.15..0.5).contains(&moved), "moved {moved}");
    let points = ring["intervals"].as_array().expect("intervals");
    let last = points.last().expect("intervals after the change");
    assert_eq!(last["phase"], "after");
    assert_eq!(last["errors"], 0, "membership dropped the server: {last}");
}

#[test]
fn an_added_server_joins_through_etcd() {
    an_added_server_joins(&run_through_etcd(&["--add", "1"]));
}

#[test]
fn a_killed_server_leaves_when_its_lease_expires() {
    a_killed_server_leaves(&run_through_etcd(KILL));
}

#[test]
fn an_added_server_joins_through_zookeeper() {
    an_added_server_joins(&run_through_zookeeper(&["--add", "1"]));
}

#[test]
fn a_killed_server_leaves_when_its_session_expires() {
    a_killed_server_leaves(&run_through_zookeeper(KILL));
}

#[test]
fn an_added_server_joins_through_gossip() {
    an_added_server_joins(&run_through_gossip(&["--add", "1"]));
}

#[test]
fn a_killed_server_leaves_when_gossip_declares_it_dead() {
    a_killed_server_leaves(&run_through_gossip(KILL));
}

/// A [`long_run`] once its 4 servers are up (or 30 s have passed): the
/// child, its PID and the servers' PIDs.
fn long_run_with_servers() -> (std::process::Child, u32, Vec<u64>) {
    let child = long_run();
    let pid = child.id();
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut servers = children(pid);
    while servers.len() < 4 && Instant::now() < deadline {
        sleep(Duration::from_millis(50));
        servers = children(pid);
    }
    (child, pid, servers)
}

/// Sends `signal` (`-INT`, `-KILL`) to `pid` with kill(1).
fn signal(pid: u32, signal: &str) {
    let sent = Command::new("kill")
        .args([signal, &pid.to_string()])
        .status();
    assert!(sent.is_ok_and(|s| s.success()), "kill {signal}");
}

#[test]
fn sigint_stops_every_server() {
    let (mut child, pid, servers) = long_run_with_servers();
    signal(pid, "-INT");
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Ok(Some(status)) = child.try_wait() {
            break Some(status);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        sleep(Duration::from_millis(20));
    };
    assert_eq!(servers.len(), 4, "3 servers and the one --add 1 adds");
    let status = status.expect("the run ends after SIGINT");
    assert_eq!(status.code(), Some(130), "stopped by SIGINT: {status}");
    for server in servers {
        assert!(!alive(server), "memcached {server} outlived the run");
    }
}

/// The memcached children of `parent`.
fn children(parent: u32) -> Vec<u64> {
    let Ok(entries) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u64>().ok())
        .filter(|pid| {
            let stat = fs::read_to_string(Path::new("/proc").join(pid.to_string()).join("stat"))
                .unwrap_or_default();
            let comm_is_memcached = stat.contains("(memcached)");
            let ppid = stat
                .rsplit(')')
                .next()
                .and_then(|s| s.split_whitespace().nth(1));
            comm_is_memcached && ppid == Some(&parent.to_string())
        })
        .collect()
}

#[test]
fn bad_options_are_refused_with_the_fix() {
    let cases: &[(&[&str], &str)] = &[
        (&["--algo", "mod"], "one of: modulo"),
        (&["--hit-rate", "1.5"], "--hit-rate"),
        (&["--remove", "3", "--nodes", "3"], "at least one must stay"),
        (
            &["--kill", "1", "--servers", "127.0.0.1:1,127.0.0.1:2"],
            "--kill",
        ),
        (&["--membership", "http://x"], "etcd://HOST:PORT"),
        (
            &["--membership", "etcd://127.0.0.1:1", "--algo", "ring,proxy"],
            "run the proxy placements without --membership",
        ),
        (&["--interval", "0"], "--interval"),
    ];
    for (args, expected) in cases {
        let output = Command::new(BENCH).args(*args).output().expect("runs");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{args:?} was accepted");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }
}

/// Runs the bench with `args` and a `PATH` of `path` (when given); it must
/// fail with one line on stderr, its error, naming `place`, and exit 69
/// (a program or server the run needs is unavailable, the CLI's code): no
/// debug dump (the old message showed the whole `Command` as `{:?}`).
fn fails_in_one_line(args: &[&str], path: Option<&Path>, place: &str) -> String {
    let mut command = Command::new(BENCH);
    command.args(args);
    if let Some(path) = path {
        command.env("PATH", path);
    }
    let output = command.output().expect("runs");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(69), "{args:?}: {stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{args:?}: one line, got {stderr}");
    let line = lines[0];
    assert!(line.starts_with("ringwise-cachebench: "), "{line}");
    for mark in ["{", "}", "\"-l\"", "Os ", "Some("] {
        assert!(!line.contains(mark), "{mark:?} in {line}");
    }
    assert!(line.contains(place), "{place} not named: {line}");
    line.to_owned()
}

/// No `memcached` on PATH (a PATH of an empty directory), or none at the
/// path given: one line saying so, with the ways out.
#[test]
fn a_missing_memcached_is_one_line_with_the_fix() {
    let empty =
        std::env::temp_dir().join(format!("ringwise-cachebench-path-{}", std::process::id()));
    fs::create_dir_all(&empty).expect("an empty directory");
    let line = fails_in_one_line(
        &["--nodes", "2", "--keys", "100"],
        Some(&empty),
        "memcached",
    );
    let _ = fs::remove_dir_all(&empty);
    assert_eq!(
        line,
        "ringwise-cachebench: cannot start memcached: no program \"memcached\" on PATH; install \
         Debian's `memcached` (scripts/install-test-deps does), or pass --memcached PATH, or \
         use running servers with --servers"
    );
    let line = fails_in_one_line(
        &[
            "--nodes",
            "2",
            "--keys",
            "100",
            "--memcached",
            "/nonexistent/memcached",
        ],
        None,
        "/nonexistent/memcached",
    );
    assert!(
        line.contains("no program /nonexistent/memcached;"),
        "{line}"
    );
}

/// A proxy placement whose `ringwise-proxy` is not there: one line with
/// the way to install it.
#[test]
fn a_missing_proxy_is_one_line_with_the_fix() {
    let line = fails_in_one_line(
        &[
            "--nodes",
            "2",
            "--keys",
            "100",
            "--algo",
            "proxy",
            "--proxy",
            "/nonexistent/ringwise-proxy",
        ],
        None,
        "/nonexistent/ringwise-proxy",
    );
    assert!(
        line.contains("cargo install --locked --path crates/proxy"),
        "{line}"
    );
}

/// A memcached on a loopback port, killed by its pid on drop.
struct Memcached {
    child: std::process::Child,
    address: String,
}

impl Memcached {
    fn start() -> Memcached {
        let port = server::free_port();
        // Through setpriv, as every server of the tests: it dies with the
        // test binary, even a SIGKILLed one.
        let child = Command::new("/usr/bin/setpriv")
            .args(["--pdeathsig", "KILL", "--", "memcached"])
            .args([
                "-l",
                "127.0.0.1",
                "-p",
                &port.to_string(),
                "-U",
                "0",
                "-u",
                "root",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("memcached runs (scripts/install-test-deps installs it)");
        let memcached = Memcached {
            child,
            address: format!("127.0.0.1:{port}"),
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(&memcached.address).is_err() {
            assert!(Instant::now() < deadline, "memcached never listened");
            sleep(Duration::from_millis(10));
        }
        memcached
    }
}

impl Drop for Memcached {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `--servers` naming a port where nothing listens (after one where a
/// real memcached does): one line naming that address, before any run.
#[test]
fn a_server_of_servers_that_is_not_running_is_named() {
    let memcached = Memcached::start();
    let dead = format!("127.0.0.1:{}", server::free_port());
    let list = format!("{},{dead}", memcached.address);
    let line = fails_in_one_line(&["--servers", &list, "--keys", "100"], None, &dead);
    assert_eq!(
        line,
        format!(
            "ringwise-cachebench: memcached at {dead} (--servers): nothing listens there \
             (connection refused); start memcached there, or list a running server in --servers"
        )
    );
}

/// `--membership` with nothing listening at the etcd address: the etcd
/// crate's one line, naming it.
#[test]
fn an_unreachable_etcd_of_membership_is_one_line() {
    let port = server::free_port();
    let url = format!("etcd://127.0.0.1:{port}");
    let line = fails_in_one_line(
        &["--nodes", "2", "--keys", "100", "--membership", &url],
        None,
        &format!("http://127.0.0.1:{port}"),
    );
    assert!(
        line.contains("--membership: etcd: cannot list the members: nothing listens at"),
        "{line}"
    );
}

/// A run long enough to be stopped half-way (a 30 s warm-up), started
/// through setpriv so that it too dies with this test binary.
fn long_run() -> std::process::Child {
    Command::new("/usr/bin/setpriv")
        .args(["--pdeathsig", "KILL", "--", BENCH])
        .args([
            "--nodes", "3", "--keys", "2000", "--rps", "1000", "--warmup", "30",
        ])
        .args(["--warmup-max", "60", "--memory", "16", "--format", "json"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("ringwise-cachebench runs")
}

/// Whether `pid` is a live memcached (not a zombie, and not another
/// program that got the pid once memcached was gone).
fn memcached_alive(pid: u64) -> bool {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    stat.contains("(memcached)") && alive(pid)
}

/// SIGKILL runs none of the run's guards: the servers die anyway, because
/// each was started through `setpriv --pdeathsig KILL` (before, they ran
/// on under PID 1). The kernel kills them as the run's main thread ends;
/// the test polls for that within a bound and asserts nothing about time.
#[test]
fn a_sigkilled_cachebench_leaves_no_memcached() {
    let (mut child, pid, servers) = long_run_with_servers();
    signal(pid, "-KILL");
    let status = child.wait().expect("the run is reaped");
    assert_eq!(status.code(), None, "ended by SIGKILL: {status}");
    assert_eq!(
        servers.len(),
        4,
        "3 servers and the one --add 1 adds were running"
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while servers.iter().any(|&p| memcached_alive(p)) && Instant::now() < deadline {
        sleep(Duration::from_millis(20));
    }
    let left: Vec<u64> = servers
        .into_iter()
        .filter(|&p| memcached_alive(p))
        .collect();
    for pid in &left {
        let _ = Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status();
    }
    assert!(
        left.is_empty(),
        "memcached {left:?} outlived the SIGKILLed run"
    );
}

/// The options that take a value whose range the parser checks, each
/// with a value out of it and the words of the range the error must say.
/// Paths (`--memcached`, `--ringwise`, `--svg`) are checked when used
/// (exit 69 or 74), not here.
const BAD_VALUES: &[(&str, &str, &str)] = &[
    ("--nodes", "0", "from 1 to 256"),
    ("--nodes", "257", "from 1 to 256"),
    ("--servers", "127.0.0.1", "HOST:PORT"),
    ("--servers", "127.0.0.1:0", "from 1 to 65,535"),
    ("--memory", "0", "from 2 to 65,536"),
    ("--memory", "1", "from 2 to 65,536"),
    ("--add", "0", "from 1 to 256"),
    ("--remove", "0", "from 1 to 256"),
    ("--kill", "300", "from 1 to 256"),
    ("--detect", "0", "above 0 and below 1,000,000"),
    ("--detect", "nan", "above 0 and below 1,000,000"),
    ("--algo", "mod", "one of: modulo"),
    ("--keys", "0", "from 1 to 50,000,000"),
    ("--keys", "1e3", "from 1 to 50,000,000"),
    ("--hit-rate", "1.5", "above 0 and below 1"),
    ("--hit-rate", "0", "above 0 and below 1"),
    ("--zipf", "-1", "from 0 (uniform) to 10"),
    ("--rps", "0", "1 to 10,000,000"),
    ("--threads", "0", "from 1 to 256"),
    ("--db-latency", "-1", "0 to 10,000"),
    ("--value-size", "0", "from 1 to 1,048,576"),
    ("--interval", "0", "above 0 and below 1,000,000"),
    ("--warmup", "inf", "above 0 and below 1,000,000"),
    ("--warmup-max", "-1", "above 0 and below 1,000,000"),
    ("--after-min", "0", "above 0 and below 1,000,000"),
    ("--after-max", "1e9", "above 0 and below 1,000,000"),
    ("--seed", "-1", "from 0 to 18,446,744,073,709,551,615"),
    ("--membership", "http://x", "etcd://HOST:PORT"),
    ("--ttl", "1", "from 2 to 86,400"),
    ("--format", "xml", "text, json"),
    ("--check-stale", "-1", "from 0 to 1,000,000"),
];

/// Every bad flag value exits 2 (the CLI's table: bad usage), naming the
/// flag, the value and the valid range; the table above covers every
/// option of `--help` that takes a value (`--memory 0` used to start
/// memcached and blame the port; other values exited 1).
#[test]
fn every_bad_flag_exits_2_naming_it() {
    for &(flag, value, range) in BAD_VALUES {
        let output = Command::new(BENCH)
            .args([flag, value])
            .output()
            .expect("runs");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{flag} {value}: {stderr}");
        for said in [flag, value, range] {
            assert!(
                stderr.contains(said),
                "{flag} {value}: {said:?} not in {stderr}"
            );
        }
    }
    let help = Command::new(BENCH).arg("--help").output().expect("runs");
    let help = String::from_utf8_lossy(&help.stdout);
    let checked_when_used = ["--memcached", "--ringwise", "--proxy", "--svg"];
    for line in help.lines() {
        let Some(flag) = line.split_whitespace().next() else {
            continue;
        };
        let takes_a_value = line.contains(&format!("{flag} <"));
        if flag.starts_with("--") && takes_a_value && !checked_when_used.contains(&flag) {
            assert!(
                BAD_VALUES.iter().any(|&(f, _, _)| f == flag),
                "{flag} has no bad value in BAD_VALUES"
            );
        }
    }
}

/// Options that do not go together: exit 2, naming both and the fix.
#[test]
fn options_that_do_not_go_together_exit_2_naming_both() {
    let two = "127.0.0.1:1,127.0.0.1:2";
    let cases: &[(&[&str], &[&str])] = &[
        (
            &["--remove", "3", "--nodes", "3"],
            &["--remove 3", "give --remove 1 to 2"],
        ),
        (
            &["--kill", "3", "--nodes", "3"],
            &["--kill 3", "give --kill 1 to 2"],
        ),
        (&["--kill", "1", "--servers", two], &["--kill", "--servers"]),
        (
            &["--add", "2", "--servers", two],
            &["--add 2 with --servers", "not 2"],
        ),
        (
            &["--warmup", "5", "--warmup-max", "2"],
            &["--warmup 5", "--warmup-max 2"],
        ),
        (
            &["--after-min", "5", "--after-max", "2"],
            &["--after-min 5", "--after-max 2"],
        ),
        (
            &["--membership", "etcd://127.0.0.1:1", "--servers", two],
            &["--membership", "--servers"],
        ),
        (
            &["--nodes", "3", "--servers", two],
            &["--nodes", "--servers"],
        ),
        (&["--add", "1", "--remove", "1"], &["--add", "--remove"]),
    ];
    for (args, said) in cases {
        let output = Command::new(BENCH).args(*args).output().expect("runs");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        for s in *said {
            assert!(stderr.contains(s), "{args:?}: {s:?} not in {stderr}");
        }
    }
}

/// `--help` states the exit-code table (the CLI's codes that apply).
#[test]
fn help_states_the_exit_codes() {
    let output = Command::new(BENCH).arg("--help").output().expect("runs");
    assert!(output.status.success());
    let help = String::from_utf8_lossy(&output.stdout);
    let table = help
        .split("Exit codes")
        .nth(1)
        .unwrap_or_else(|| panic!("no exit codes in --help: {help}"));
    for code in [
        "0   success",
        "2   bad command line",
        "69  unavailable",
        "74  I/O error",
        "130 stopped",
    ] {
        assert!(table.contains(code), "{code:?} not in {table}");
    }
}
