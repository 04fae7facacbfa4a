//! `ringwise join`, `watch`, `config` and `lookup --etcd` as processes
//! against a real etcd on loopback (Debian's `etcd-server`, installed by
//! scripts/install-test-deps): a registrar killed with SIGKILL leaves every
//! ring within TTL + 2 s, a graceful stop within 1 s, a paused watcher
//! catches up, a duplicate name is refused. Every process started here is
//! killed by its pid when the test ends, however it ends.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use crate::support::{ringwise, stderr, stdout};

#[path = "../../etcd/tests/support/etcd.rs"]
#[allow(
    dead_code,
    reason = "the etcd crate's helpers; these tests need a single member"
)]
mod server;

use server::Etcd;

/// A `ringwise` process killed by its pid on drop.
struct Process(Child);

impl Process {
    fn start(args: &[&str]) -> (Process, Receiver<(Instant, String)>) {
        let mut child = Command::new(env!("CARGO_BIN_EXE_ringwise"))
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("ringwise runs");
        let out = child.stdout.take().expect("piped stdout");
        let (send, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                if send.send((Instant::now(), line)).is_err() {
                    break;
                }
            }
        });
        (Process(child), lines)
    }

    fn signal(&self, name: &str) {
        let status = Command::new("kill")
            .args([&format!("-{name}"), &self.0.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success(), "kill -{name}");
    }

    fn wait(&mut self, limit: Duration) -> Option<std::process::ExitStatus> {
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.0.try_wait() {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        None
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The members of each JSON ring `watch` prints, until one satisfies
/// `want` (returns when it was printed) or `limit` passes (panics).
fn until(
    lines: &Receiver<(Instant, String)>,
    limit: Duration,
    want: impl Fn(&[String]) -> bool,
) -> Instant {
    until_ring(lines, limit, want).0
}

/// [`until`], with the ring that satisfied `want`.
fn until_ring(
    lines: &Receiver<(Instant, String)>,
    limit: Duration,
    want: impl Fn(&[String]) -> bool,
) -> (Instant, serde_json::Value) {
    let deadline = Instant::now() + limit;
    let mut last = Vec::new();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match lines.recv_timeout(left) {
            Ok((at, line)) => {
                let ring: serde_json::Value =
                    serde_json::from_str(&line).expect("a JSON ring per line");
                last = ring["members"]
                    .as_array()
                    .expect("members")
                    .iter()
                    .map(|m| m["name"].as_str().expect("name").to_owned())
                    .collect();
                if want(&last) {
                    return (at, ring);
                }
            }
            Err(RecvTimeoutError::Timeout) => panic!("not within {limit:?}; last ring {last:?}"),
            Err(RecvTimeoutError::Disconnected) => panic!("watch ended; last ring {last:?}"),
        }
    }
}

fn join(endpoints: &str, name: &str, ttl: &str) -> Process {
    let args = [
        "join", "--etcd", endpoints, "--prefix", "/t", "--name", name, "--ttl", ttl,
    ];
    Process::start(&args).0
}

#[test]
fn killed_and_stopped_registrars_leave_every_ring() {
    let etcd = Etcd::single();
    let endpoints = etcd.endpoints();
    let watch = [
        "watch", "--etcd", &endpoints, "--prefix", "/t", "--format", "json",
    ];
    let (_w1, first) = Process::start(&watch);
    let (_w2, second) = Process::start(&watch);
    for lines in [&first, &second] {
        until(lines, Duration::from_secs(10), <[String]>::is_empty);
    }
    let mut killed = join(&endpoints, "killed", "3");
    let mut stopped = join(&endpoints, "stopped", "3");
    for lines in [&first, &second] {
        until(lines, Duration::from_secs(10), |m| m.len() == 2);
    }
    // A second "killed" is refused while the first holds the name.
    let taken = ringwise(
        &[
            "join", "--etcd", &endpoints, "--prefix", "/t", "--name", "killed",
        ],
        b"",
    );
    assert_eq!(taken.status.code(), Some(2), "{}", stderr(&taken));
    assert!(stderr(&taken).contains("is taken"), "{}", stderr(&taken));

    killed.signal("KILL");
    let at = Instant::now();
    for lines in [&first, &second] {
        let seen = until(lines, Duration::from_secs(5), |m| m == ["stopped"]);
        println!(
            "SIGKILL: gone after {:?} (TTL 3 s)",
            seen.duration_since(at)
        );
    }
    let _ = killed.wait(Duration::from_secs(1));

    stopped.signal("TERM");
    let at = Instant::now();
    for lines in [&first, &second] {
        let seen = until(lines, Duration::from_secs(1), <[String]>::is_empty);
        println!("SIGTERM: gone after {:?}", seen.duration_since(at));
    }
    let status = stopped
        .wait(Duration::from_secs(5))
        .expect("join exits on SIGTERM");
    assert!(status.success(), "{status}");
}

#[test]
fn a_paused_watcher_catches_up_after_compaction() {
    let etcd = Etcd::single();
    let endpoints = etcd.endpoints();
    let _a = join(&endpoints, "a", "10");
    let mut b = join(&endpoints, "b", "10");
    let watch = [
        "watch", "--etcd", &endpoints, "--prefix", "/t", "--format", "json",
    ];
    let (watcher, lines) = Process::start(&watch);
    until(&lines, Duration::from_secs(10), |m| m.len() == 2);
    watcher.signal("STOP");
    b.signal("TERM");
    assert!(b.wait(Duration::from_secs(5)).is_some_and(|s| s.success()));
    // Compact everything so far while the watcher sleeps.
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
    etcd_compact(&endpoints);
    watcher.signal("CONT");
    until(&lines, Duration::from_secs(10), |m| m == ["a"]);
}

/// Compacts etcd's history up to its current revision (etcd's v3 JSON
/// gateway, as `etcdctl compact` would).
fn etcd_compact(endpoints: &str) {
    let port: u16 = endpoints
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .expect("a port");
    let status = http_post(port, "/v3/kv/range", r#"{"key":"AA=="}"#);
    let revision: u64 = status
        .split("\"revision\":\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .and_then(|r| r.parse().ok())
        .unwrap_or_else(|| panic!("no revision in {status}"));
    let answer = http_post(
        port,
        "/v3/kv/compaction",
        &format!(r#"{{"revision":"{revision}","physical":true}}"#),
    );
    assert!(answer.contains("header"), "{answer}");
}

fn http_post(port: u16, path: &str, body: &str) -> String {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).expect("etcd");
    let request = format!(
        "POST {path} HTTP/1.0\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).expect("write");
    let mut answer = String::new();
    stream.read_to_string(&mut answer).expect("read");
    answer
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
    let watch = [
        "watch", "--etcd", &endpoints, "--prefix", "/t", "--format", "json",
    ];
    let (_watcher, lines) = Process::start(&watch);
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
    let watch = [
        "watch", "--etcd", &endpoints, "--prefix", "/t", "--format", "json",
    ];
    let (_watcher, lines) = Process::start(&watch);
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
    let again = run(&["join", "--name", "a", "--allocate", "16"]);
    assert_eq!(again.status.code(), Some(2), "{}", stderr(&again));
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
