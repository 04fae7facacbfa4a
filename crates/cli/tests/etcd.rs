//! `ringwise join`, `watch`, `config` and `lookup --etcd` as processes
//! against a real etcd on loopback (Debian's `etcd-server`, installed by
//! scripts/install-test-deps): a registrar killed with SIGKILL leaves every
//! ring within TTL + 2 s, a graceful stop within 1 s, a paused watcher
//! relists after compaction, a duplicate name is refused, a dead endpoint
//! listed first is passed over; an unreachable etcd, a refused TLS
//! handshake and a refused user each give one line naming the endpoint.
//! Every process started here is killed by its pid when the test ends,
//! however it ends.

use std::time::{Duration, Instant};

use crate::membership::{Lines, Process, registrars_leave_every_ring, until, until_ring};
use crate::support::{ringwise, stderr, stdout};

#[path = "../../etcd/tests/support/etcd.rs"]
#[allow(
    dead_code,
    reason = "the etcd crate's helpers; these tests need a single member"
)]
// Also the docs test's etcd (one copy of the file in this binary).
pub(crate) mod server;

use server::Etcd;

fn join(endpoints: &str, name: &str, ttl: &str) -> Process {
    let args = [
        "join", "--etcd", endpoints, "--prefix", "/t", "--name", name, "--ttl", ttl,
    ];
    Process::start(&args).0
}

/// `ringwise watch --format json` on `/t` at `endpoints`, and its lines.
fn watch(endpoints: &str) -> (Process, Lines) {
    Process::start(&[
        "watch", "--etcd", endpoints, "--prefix", "/t", "--format", "json",
    ])
}

/// The scenario every source shares (`membership::registrars_leave_every_ring`),
/// through `--etcd --prefix`: TTL 3 s, a SIGTERMed `join` gone within 1 s.
#[test]
fn killed_and_stopped_registrars_leave_every_ring() {
    let etcd = Etcd::single();
    let endpoints = etcd.endpoints();
    let flags = || {
        ["--etcd", &endpoints, "--prefix", "/t"]
            .map(str::to_owned)
            .to_vec()
    };
    registrars_leave_every_ring(&flags, 3, Duration::from_secs(1));
}

/// A `watch` process stopped (SIGSTOP) while a member leaves and etcd
/// compacts. etcd keeps a stalled watcher in sync only while its stream
/// has room (HTTP/2 windows and socket buffers, about 10 MiB on loopback
/// here, then 128 queued responses): the changes written meanwhile (250
/// keys of 64 KiB under the prefix, outside `nodes/`, then 250 deletes of
/// them) overflow it, etcd stops sending to it and, after the compaction,
/// answers its watch as compacted. On SIGCONT the process logs the
/// compaction and lists again (its stderr says so), and the member is gone
/// from the ring it prints. Without the flood the resumed watch would
/// just read the events buffered on its open stream.
#[test]
fn a_paused_watcher_relists_after_compaction() {
    let etcd = Etcd::single();
    let endpoints = etcd.endpoints();
    let _a = join(&endpoints, "a", "10");
    let mut b = join(&endpoints, "b", "10");
    // Progress every 5 s: a pause is noticed as silence only after 17 s,
    // so the relist below is the compaction's.
    let watch = [
        "watch",
        "--etcd",
        &endpoints,
        "--prefix",
        "/t",
        "--format",
        "json",
        "--progress-every",
        "5",
    ];
    let (watcher, lines, logs) = Process::start_logged(&watch);
    until(&lines, Duration::from_secs(10), |m| m.len() == 2);
    watcher.signal("STOP");
    let started = Instant::now();
    let filler = vec![0u8; 64 << 10];
    for i in 0..250 {
        etcd.put(&format!("/t/filler/{i}"), &filler);
    }
    for i in 0..250 {
        etcd.delete(&format!("/t/filler/{i}"));
    }
    println!(
        "filler written in {:?}; {} keys",
        started.elapsed(),
        etcd.count()
    );
    b.signal("TERM");
    assert!(b.wait(Duration::from_secs(5)).is_some_and(|s| s.success()));
    let set = ringwise(
        &[
            "config",
            "--etcd",
            &endpoints,
            "--prefix",
            "/t",
            "--set",
            "vnodes=100",
        ],
        b"",
    );
    assert!(set.status.success(), "{}", stderr(&set));
    // Compact everything so far while the watcher sleeps.
    etcd.compact();
    watcher.signal("CONT");
    let (_, ring) = until_ring(&lines, Duration::from_secs(10), |m| m == ["a"]);
    assert_eq!(ring["fingerprint"].as_str().map(str::len), Some(16));
    // The logs: the watch ended as compacted, then a fresh list.
    let mut compacted = false;
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let Ok((_, line)) = logs.recv_timeout(left) else {
            panic!("no relist logged (compaction seen: {compacted})");
        };
        compacted |= line.contains("was compacted");
        if line.contains("listed again") {
            assert!(compacted, "a relist, but not after a compaction: {line}");
            assert!(line.contains("relists=1"), "{line}");
            break;
        }
    }
}

#[test]
fn lookup_and_config_read_and_write_etcd() {
    let etcd = Etcd::single();
    let endpoints = etcd.endpoints();
    let base = ["--etcd", endpoints.as_str(), "--prefix", "/t"];
    let run = |args: &[&str]| ringwise(&[args, &base].concat(), b"");
    let empty = run(&["lookup", "k"]);
    assert_eq!(empty.status.code(), Some(65), "{}", stderr(&empty));
    let _a = join(&endpoints, "a", "10");
    let _b = join(&endpoints, "b", "10");
    let (_watcher, lines) = watch(&endpoints);
    until(&lines, Duration::from_secs(10), |m| m.len() == 2);

    let keys: Vec<String> = (0..50).map(|i| format!("user:{i}")).collect();
    let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
    let live = run(&[&["lookup"], keys.as_slice()].concat());
    let file = ringwise(
        &[&["lookup", "--nodes", "a,b"], keys.as_slice()].concat(),
        b"",
    );
    assert!(live.status.success(), "{}", stderr(&live));
    assert_eq!(
        stdout(&live),
        stdout(&file),
        "etcd's ring is the file's ring"
    );

    let set = run(&[
        "config",
        "--set",
        "algorithm=maglev",
        "--set",
        "table_size=251",
    ]);
    assert!(set.status.success(), "{}", stderr(&set));
    let live = run(&[&["lookup"], keys.as_slice()].concat());
    let file = ringwise(
        &[
            &[
                "lookup",
                "--nodes",
                "a,b",
                "--algo",
                "maglev",
                "--table-size",
                "251",
            ],
            keys.as_slice(),
        ]
        .concat(),
        b"",
    );
    assert_eq!(stdout(&live), stdout(&file));
    // A bad setting is refused and nothing is written.
    let bad = run(&["config", "--set", "table_size=250"]);
    assert_eq!(bad.status.code(), Some(2), "{}", stderr(&bad));
    assert!(stderr(&bad).contains("table_size"), "{}", stderr(&bad));
    let shown = run(&["config"]);
    let shown: serde_json::Value = serde_json::from_str(&stdout(&shown)).expect("JSON");
    assert_eq!(shown["table_size"], 251);
    // etcd away: exit 69 within the timeout.
    let gone = ringwise(
        &[
            "lookup",
            "--etcd",
            "http://127.0.0.1:1",
            "--etcd-timeout",
            "0.5",
            "k",
        ],
        b"",
    );
    assert_eq!(gone.status.code(), Some(69), "{}", stderr(&gone));
}

/// `join --allocate 16`: each node's points are chosen against the ring
/// etcd holds when it joins and stored with it, so every client builds
/// the same balanced ring; a file written from it reads back the same.
#[test]
fn nodes_join_etcd_with_allocated_points() {
    let etcd = Etcd::single();
    let endpoints = etcd.endpoints();
    let base = ["--etcd", endpoints.as_str(), "--prefix", "/t"];
    let run = |args: &[&str]| ringwise(&[args, &base].concat(), b"");
    let (_watcher, lines) = watch(&endpoints);
    let mut joined = Vec::new();
    for (i, name) in ["a", "b", "c", "d", "e", "f"].iter().enumerate() {
        let args = [
            "join",
            "--etcd",
            &endpoints,
            "--prefix",
            "/t",
            "--name",
            name,
            "--ttl",
            "10",
            "--allocate",
            "16",
        ];
        joined.push(Process::start(&args).0);
        // One at a time: the next allocates against the ring with this one.
        until(&lines, Duration::from_secs(10), |m| m.len() == i + 1);
    }
    let inspect = run(&["inspect", "--format", "json"]);
    assert!(inspect.status.success(), "{}", stderr(&inspect));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&inspect)).expect("JSON");
    let nodes = doc["nodes"].as_array().expect("nodes");
    assert_eq!(nodes.len(), 6);
    assert!(nodes.iter().all(|n| n["points"] == 16), "{doc}");
    let peak = doc["max"].as_f64().expect("max");
    assert!(peak < 1.10, "six allocated nodes: peak/mean {peak}");
    // A second allocation under a name already there is refused.
    let (again, text) = Process::run(
        &[&["join", "--name", "a", "--allocate", "16"], &base[..]].concat(),
        Duration::from_secs(5),
    );
    assert_eq!(again.code(), Some(2), "{text}");
    // The same ring from a file of the same points.
    let points = stdout(&run(&["inspect", "--points"]));
    let mut file = String::new();
    for name in ["a", "b", "c", "d", "e", "f"] {
        let mine: Vec<&str> = points
            .lines()
            .filter_map(|l| l.split_once('\t'))
            .filter(|(_, n)| *n == name)
            .map(|(p, _)| p)
            .collect();
        file += &format!(
            "[[nodes]]\nname = \"{name}\"\npoints = [{}]\n",
            mine.join(", ")
        );
    }
    let keys: Vec<String> = (0..200).map(|i| format!("user:{i}")).collect();
    let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
    let dir = crate::support::TempDir::create("etcd-allocated");
    let path = dir.write("ring.toml", &file);
    let live = run(&[&["lookup"], keys.as_slice()].concat());
    let from_file = ringwise(
        &[&["lookup", "--cluster", &path], keys.as_slice()].concat(),
        b"",
    );
    assert_eq!(
        stdout(&live),
        stdout(&from_file),
        "etcd's ring is the file's ring"
    );
}

/// `lookup` with a dead endpoint (a closed loopback port) listed first and
/// a live one: it answers every time (it used to exit 69 in about half
/// the runs, when its first call went to the dead one).
#[test]
fn lookup_passes_over_a_dead_endpoint_listed_first() {
    let etcd = Etcd::single();
    let live = etcd.endpoints();
    let endpoints = format!("http://127.0.0.1:{},{live}", server::free_port());
    let _a = join(&live, "a", "10");
    let (_watcher, lines) = watch(&live);
    until(&lines, Duration::from_secs(10), |m| m == ["a"]);
    for run in 0..10 {
        let (status, text) = Process::run(
            &["lookup", "--etcd", &endpoints, "--prefix", "/t", "user:1"],
            Duration::from_secs(10),
        );
        assert_eq!(status.code(), Some(0), "run {run}: {text}");
    }
}

/// Every registered algorithm, the compatibility flavours included, runs
/// live: after `config --set algorithm=NAME`, `lookup --etcd` answers as
/// `lookup --nodes` over the same members in the same (join) order.
#[test]
fn every_algorithm_runs_live_from_etcd() {
    let etcd = Etcd::single();
    let endpoints = etcd.endpoints();
    let base = ["--etcd", endpoints.as_str(), "--prefix", "/t"];
    let run = |args: &[&str]| ringwise(&[args, &base].concat(), b"");
    let (_watcher, lines) = watch(&endpoints);
    // One at a time, so that join order is a, b, c.
    let mut members = Vec::new();
    for name in ["a", "b", "c"] {
        members.push(join(&endpoints, name, "10"));
        let count = members.len();
        until(&lines, Duration::from_secs(10), |m| m.len() == count);
    }
    let keys: Vec<String> = (0..50).map(|i| format!("user:{i}")).collect();
    let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
    for algorithm in ringwise::Algorithm::NAMES {
        let set = run(&["config", "--set", &format!("algorithm={algorithm}")]);
        assert!(set.status.success(), "{algorithm}: {}", stderr(&set));
        let live = run(&[&["lookup"], keys.as_slice()].concat());
        assert!(live.status.success(), "{algorithm}: {}", stderr(&live));
        let listed = ["lookup", "--nodes", "a,b,c", "--algo", algorithm];
        let file = ringwise(&[&listed[..], keys.as_slice()].concat(), b"");
        assert!(file.status.success(), "{algorithm}: {}", stderr(&file));
        assert_eq!(stdout(&live), stdout(&file), "{algorithm}");
    }
}

/// Runs `ringwise ARGS`; its stderr must be one line of words, the error,
/// naming `endpoint`, and its exit code `code`: no debug dump of the gRPC
/// status (tonic's `Status { code: ..., metadata: MetadataMap {...} }`),
/// no retry warnings before it (`join`, `watch` and `config` log to
/// stderr). Returns the line.
fn one_line(args: &[&str], code: i32, endpoint: &str) -> String {
    let (status, text) = Process::run(args, Duration::from_secs(30));
    assert_eq!(status.code(), Some(code), "ringwise {args:?}: {text}");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1, "ringwise {args:?}: one line, got {text}");
    let line = lines[0];
    assert!(line.starts_with("ringwise: error: "), "{line}");
    for mark in ["{", "}", "MetadataMap", "Status", "tonic", "Some(", "Os "] {
        assert!(
            !line.contains(mark),
            "ringwise {args:?}: {mark:?} in {line}"
        );
    }
    assert!(line.contains(endpoint), "{endpoint} not named: {line}");
    line.to_owned()
}

/// Nothing listening, then a member that never answers (stopped with
/// SIGSTOP: the kernel accepts the connection): exit 69 with one line per
/// command, from every command that talks to etcd.
#[test]
fn an_unreachable_etcd_is_one_line_naming_it() {
    let dead = format!("http://127.0.0.1:{}", server::free_port());
    let short = ["--etcd", dead.as_str(), "--etcd-timeout", "0.5"];
    let commands: [&[&str]; 4] = [
        &["lookup", "k"],
        &["join", "--name", "a"],
        &["watch"],
        &["config"],
    ];
    for command in commands {
        let line = one_line(&[command, &short].concat(), 69, &dead);
        assert!(
            line.contains(&format!("nothing listens at {dead} (connection refused)")),
            "{line}"
        );
        assert!(line.ends_with("the address is right (--etcd)"), "{line}");
    }

    let mut etcd = Etcd::single();
    etcd.pause(0);
    let silent = etcd.endpoint(0);
    for command in [&["lookup", "k"][..], &["join", "--name", "a"]] {
        let args = [command, &["--etcd", &silent, "--etcd-timeout", "0.5"]].concat();
        let line = one_line(&args, 69, &silent);
        assert!(line.contains("did not answer within 0.5 s"), "{line}");
        assert!(line.ends_with("(--etcd, --etcd-timeout)"), "{line}");
    }
    etcd.resume(0);
}

/// A TLS etcd with a CA made here, and a plain one: https:// to the plain
/// one, a CA that did not sign the server's certificate, http:// to the
/// TLS one exit 69 with one line each; TLS files with an http:// endpoint
/// are a usage error (2).
#[test]
fn refused_tls_handshakes_are_one_line_naming_the_endpoint() {
    let pki = server::Pki::new();
    let secure = pki.etcd();
    let plain = Etcd::single();
    let ca = pki.path("ca.pem");
    let ca = ca.to_str().expect("a UTF-8 path");
    let other = pki.path("other-ca.pem");
    let other = other.to_str().expect("a UTF-8 path");
    let endpoint = secure.endpoint(0);
    // It serves the right CA's clients (and the refusals below are about
    // the handshake).
    let (status, text) = Process::run(
        &["config", "--etcd", &endpoint, "--etcd-ca", ca],
        Duration::from_secs(30),
    );
    assert!(status.success(), "{text}");

    let https_to_plain = plain.endpoint(0).replace("http://", "https://");
    let line = one_line(
        &["lookup", "--etcd", &https_to_plain, "--etcd-ca", ca, "k"],
        69,
        &https_to_plain,
    );
    assert!(line.contains("does not speak TLS"), "{line}");
    assert!(line.ends_with("(--etcd-ca)"), "{line}");

    let line = one_line(
        &["lookup", "--etcd", &endpoint, "--etcd-ca", other, "k"],
        69,
        &endpoint,
    );
    assert!(
        line.contains("is not signed by a CA this client trusts"),
        "{line}"
    );
    assert!(
        line.ends_with("give the CA certificate that signed it (--etcd-ca)"),
        "{line}"
    );

    let plain_to_secure = endpoint.replace("https://", "http://");
    let line = one_line(
        &["watch", "--etcd", &plain_to_secure, "--etcd-timeout", "0.5"],
        69,
        &plain_to_secure,
    );
    assert!(line.contains("write https://"), "{line}");

    let line = one_line(
        &["lookup", "--etcd", &plain_to_secure, "--etcd-ca", ca, "k"],
        2,
        &plain_to_secure,
    );
    assert!(
        line.contains("is plain HTTP, yet TLS files are given"),
        "{line}"
    );
}

/// etcd with authentication on (root, and `reader` without a role): a
/// wrong password, a user without permission, no user at all: exit 69 with
/// one line each; root with its password works.
#[test]
fn refused_users_are_one_line_naming_the_endpoint() {
    let etcd = Etcd::single();
    etcd.enable_auth(&[("reader", "readerpw")]);
    let endpoint = etcd.endpoint(0);
    let at = ["--etcd", endpoint.as_str(), "--prefix", "/t"];

    let args = [
        &["lookup", "--etcd-user", "root:not-the-password", "k"][..],
        &at,
    ]
    .concat();
    let line = one_line(&args, 69, &endpoint);
    assert!(
        line.contains("refused user \"root\": no such user or a wrong password"),
        "{line}"
    );
    assert!(line.ends_with("(--etcd-user)"), "{line}");

    let args = [
        &["join", "--etcd-user", "reader:readerpw", "--name", "a"][..],
        &at,
    ]
    .concat();
    let line = one_line(&args, 69, &endpoint);
    assert!(
        line.contains("denied it to user \"reader\" (permission denied)"),
        "{line}"
    );

    let line = one_line(&[&["watch"][..], &at].concat(), 69, &endpoint);
    assert!(
        line.contains("has authentication on and no user was given"),
        "{line}"
    );

    let root = format!("root:{}", server::ROOT_PASSWORD);
    let (status, text) = Process::run(
        &[&["config", "--etcd-user", &root][..], &at].concat(),
        Duration::from_secs(30),
    );
    assert!(status.success(), "root with its password: {text}");
}

/// Every malformed `--etcd` endpoint (bad URL syntax, a bad port, no host,
/// an unknown scheme, whitespace, a path, a user in the URL...) is a bad
/// option: exit 2 before any connection, one line naming `--etcd` and the
/// endpoint, from every command that talks to etcd, with TLS files or
/// without. A well-formed endpoint where nothing listens is still 69.
#[test]
fn a_malformed_endpoint_is_a_bad_option() {
    let pki = server::Pki::new();
    let ca = pki.path("ca.pem");
    let ca = ca.to_str().expect("a UTF-8 path");
    let commands: [&[&str]; 4] = [
        &["lookup", "k"],
        &["join", "--name", "a"],
        &["watch"],
        &["config"],
    ];
    for bad in [
        "http://[::1",
        "https://[::1",
        "http://[::1]x:2379",
        "http://127.0.0.1:99999",
        "http://127.0.0.1:0",
        "http://127.0.0.1:port",
        "http://127.0.0.1",
        "http://:2379",
        "https://:2379",
        "ftp://127.0.0.1:2379",
        "http://127.0.0.1:2379/v3",
        "http://user:pw@127.0.0.1:2379",
        "http://exa mple:2379",
        "http://300.1.1.1:2379",
        "127.0.0.1:2379,,127.0.0.1:2380",
    ] {
        let shown = bad
            .split(',')
            .map(|e| format!("{e:?}"))
            .find(|e| e != "\"127.0.0.1:2379\"" && e != "\"127.0.0.1:2380\"")
            .expect("a bad item");
        for command in commands {
            for tls in [&[][..], &["--etcd-ca", ca]] {
                let args = [command, &["--etcd", bad], tls].concat();
                let line = one_line(&args, 2, &shown);
                assert!(line.starts_with("ringwise: error: --etcd: "), "{line}");
                assert!(line.contains("is not an etcd endpoint"), "{line}");
            }
        }
    }
    let dead = format!("https://127.0.0.1:{}", server::free_port());
    one_line(
        &["lookup", "--etcd", &dead, "--etcd-timeout", "0.5", "k"],
        69,
        &dead,
    );
}
