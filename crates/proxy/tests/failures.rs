//! A server SIGKILLed or SIGSTOPped under the proxy, and a client that
//! never reads.
//!
//! Three memcacheds, the proxy with `--auto-eject-hosts true
//! --server-failure-limit 2 --server-retry-timeout 4000 --timeout 1000`,
//! 3,000 keys set through it:
//!
//! - a server SIGKILLed: the other servers' keys keep reading back the
//!   whole time; the dead one's keys fail twice (the limit), then miss and
//!   can be set again (they live on their next server), one failure more
//!   per retry that finds it still dead; the stats count its ejections; a memcached started again on its port
//!   is asked again after the retry timeout and takes its keys back;
//! - a server SIGSTOPped: the same through timeouts, then SIGCONT;
//! - a client that sends 200 MB of gets without reading: the proxy's
//!   resident memory grows by less than 64 MB (its queue and buffers are
//!   bounded), and it still answers another client;
//! - 16 clients that pipeline 160 MB of sets to a SIGSTOPped server: the
//!   proxy's peak memory grows by less than 64 MB (what may wait for one
//!   server is bounded, the rest fails at once), every set is answered
//!   with a `SERVER_ERROR` within a few timeouts (each counts from when
//!   it was sent, not from when the one before it ended), the other
//!   server answers meanwhile, and after SIGCONT the server is used
//!   again.

use std::fs;
use std::io::Write;
use std::net::TcpStream;
use std::process::Command;
use std::thread::sleep;
use std::time::{Duration, Instant};

use ringwise::ClusterSpec;

use crate::servers::{Server, cluster_file, exchange, exchange_until, memcached, proxy};

const KEYS: usize = 3_000;

fn signal(pid: u32, name: &str) {
    let status = Command::new("kill")
        .args([&format!("-{name}"), &pid.to_string()])
        .status()
        .expect("run kill");
    assert!(status.success(), "kill -{name} {pid}");
}

fn set_request(keys: &[String]) -> Vec<u8> {
    keys.iter()
        .flat_map(|k| format!("set {k} 0 0 {}\r\n{k}\r\n", k.len()).into_bytes())
        .collect()
}

fn get(port: u16, key: &str) -> Vec<u8> {
    exchange(port, format!("get {key}\r\n").as_bytes())
}

fn hit(key: &str) -> Vec<u8> {
    format!("VALUE {key} 0 {}\r\n{key}\r\nEND\r\n", key.len()).into_bytes()
}

fn ejections(stats_port: u16, address: &str) -> u64 {
    let text = exchange_until(stats_port, b"", b"\n");
    let doc: serde_json::Value = serde_json::from_slice(&text).expect("stats");
    doc["servers"]
        .as_array()
        .and_then(|all| all.iter().find(|s| s["address"] == address))
        .and_then(|s| s["ejections"].as_u64())
        .unwrap_or(0)
}

#[test]
fn a_dead_or_stopped_server_is_ejected_and_taken_back() {
    for how in ["KILL", "STOP"] {
        let dir = crate::process::scratch_dir("ringwise-proxy-failures");
        let mut servers: Vec<Server> = (0..3).map(|_| memcached()).collect();
        let file = cluster_file(&dir, "ring", &servers);
        let text = fs::read_to_string(&file).expect("read");
        let (_, keyed) = ClusterSpec::from_toml_built(&text).expect("valid");
        let stats_port = crate::process::free_port();
        let stats = format!("127.0.0.1:{stats_port}");
        let proxied = proxy(&[
            "--cluster",
            &file,
            "--auto-eject-hosts",
            "true",
            "--server-failure-limit",
            "2",
            "--server-retry-timeout",
            "4000",
            "--timeout",
            "1000",
            "--stats",
            &stats,
        ]);
        let keys: Vec<String> = (0..KEYS).map(|i| format!("f:{i}")).collect();
        assert_eq!(
            exchange(proxied.port, &set_request(&keys)),
            b"STORED\r\n".repeat(KEYS)
        );
        let victim = servers[0].address();
        let (theirs, others): (Vec<&String>, Vec<&String>) = keys
            .iter()
            .partition(|k| keyed.locate(k.as_bytes()) == Some(victim.as_str()));
        let pid = servers[0].process.id();
        signal(pid, how);
        // The others' keys read back throughout; the victim's fail until
        // it is ejected (twice, the limit), then miss.
        let mut failed = 0;
        // 300 of its keys: a few seconds, about one retry timeout.
        for (i, key) in theirs.iter().take(300).enumerate() {
            let answer = get(proxied.port, key);
            if answer.starts_with(b"SERVER_ERROR") {
                failed += 1;
            } else {
                assert_eq!(
                    answer, b"END\r\n",
                    "{how}: after ejection the key has moved (miss)"
                );
            }
            let other = others[i % others.len()];
            assert_eq!(
                get(proxied.port, other),
                hit(other),
                "{how}: the other servers answer"
            );
        }
        // Two failures eject it; each retry after the timeout (the loop
        // may outlast one) costs one more failure and ejection.
        let ejected = ejections(stats_port, &victim);
        assert!(ejected >= 1, "{how}: ejected");
        assert!(
            (2..=ejected + 1).contains(&failed),
            "{how}: {failed} failures, {ejected} ejections"
        );
        let moved = theirs[0];
        assert_eq!(
            exchange(proxied.port, &set_request(std::slice::from_ref(moved))),
            b"STORED\r\n"
        );
        assert_eq!(
            get(proxied.port, moved),
            hit(moved),
            "{how}: stored on its next server"
        );
        // Back: SIGCONT, or a new memcached on the same port.
        match how {
            "STOP" => signal(pid, "CONT"),
            _ => {
                let port = servers[0].port;
                servers[0] = crate::servers::memcached_on(port);
            }
        }
        sleep(Duration::from_millis(4_100));
        let deadline = Instant::now() + Duration::from_secs(10);
        let back = theirs[1];
        loop {
            assert_eq!(
                exchange(proxied.port, &set_request(std::slice::from_ref(back))),
                b"STORED\r\n"
            );
            if crate::servers::held(servers[0].port, back.as_bytes()).is_some() {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "{how}: the server is never taken back"
            );
            sleep(Duration::from_millis(100));
        }
        let _ = fs::remove_dir_all(dir);
    }
}

/// The resident set of `pid`, in kB.
fn rss_kb(pid: u32) -> u64 {
    status_kb(pid, "VmRSS:")
}

/// A `/proc/PID/status` line in kB (`VmRSS:`, `VmHWM:` the peak).
fn status_kb(pid: u32, field: &str) -> u64 {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).expect("read /proc status");
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("no {field} in /proc/{pid}/status"))
}

#[test]
fn a_stopped_server_cannot_grow_the_proxy() {
    const CLIENTS: usize = 16;
    const SETS: usize = 100;
    let dir = crate::process::scratch_dir("ringwise-proxy-stopped");
    let servers: Vec<Server> = (0..2).map(|_| memcached()).collect();
    let file = cluster_file(&dir, "ring", &servers);
    let text = fs::read_to_string(&file).expect("read");
    let (_, keyed) = ClusterSpec::from_toml_built(&text).expect("valid");
    let proxied = proxy(&["--cluster", &file, "--timeout", "1000"]);
    let victim = servers[0].address();
    let (theirs, others): (Vec<String>, Vec<String>) = (0..10_000)
        .map(|i| format!("s:{i}"))
        .partition(|k| keyed.locate(k.as_bytes()) == Some(victim.as_str()));
    let other = &others[0];
    assert_eq!(
        exchange(proxied.port, &set_request(std::slice::from_ref(other))),
        b"STORED\r\n"
    );
    let pid = servers[0].process.id();
    signal(pid, "STOP");
    let before = rss_kb(proxied.process.id());
    let value = vec![b'v'; 100_000];
    let started = Instant::now();
    let answers: Vec<Vec<u8>> = std::thread::scope(|scope| {
        let sessions: Vec<_> = (0..CLIENTS)
            .map(|c| {
                let mut request = Vec::new();
                for i in 0..SETS {
                    let key = &theirs[(c * SETS + i) % theirs.len()];
                    request.extend_from_slice(format!("set {key} 0 0 100000\r\n").as_bytes());
                    request.extend_from_slice(&value);
                    request.extend_from_slice(b"\r\n");
                }
                request.extend_from_slice(format!("get {other}\r\n").as_bytes());
                scope.spawn(move || exchange(proxied.port, &request))
            })
            .collect();
        sessions
            .into_iter()
            .map(|s| s.join().expect("a client"))
            .collect()
    });
    let took = started.elapsed();
    let grown = status_kb(proxied.process.id(), "VmHWM:").saturating_sub(before);
    let mut refused = 0;
    for answer in &answers {
        let text = String::from_utf8_lossy(answer);
        let lines: Vec<&str> = text.split_inclusive("\r\n").collect();
        assert_eq!(lines.len(), SETS + 3, "100 answers and a hit: {text:.300}");
        assert!(
            lines[..SETS].iter().all(|l| l.starts_with("SERVER_ERROR")),
            "the stopped server's sets fail: {text:.300}"
        );
        refused += lines[..SETS]
            .iter()
            .filter(|l| l.contains("too many requests wait"))
            .count();
        assert_eq!(
            lines[SETS..].concat().as_bytes(),
            hit(other),
            "the other server answers"
        );
    }
    assert!(refused > 0, "160 MB offered, none refused");
    assert!(
        grown < 64 * 1024,
        "the proxy's peak grew by {grown} kB for a stopped server"
    );
    // Serial timeouts would take 100 s; one each from its sending, ~2 s.
    assert!(took < Duration::from_secs(15), "answered in {took:?}");
    assert_eq!(
        get(proxied.port, other),
        hit(other),
        "another client is answered"
    );
    signal(pid, "CONT");
    let back = &theirs[0];
    let deadline = Instant::now() + Duration::from_secs(10);
    while exchange(proxied.port, &set_request(std::slice::from_ref(back))) != b"STORED\r\n" {
        assert!(Instant::now() < deadline, "the server is never used again");
        sleep(Duration::from_millis(100));
    }
    assert_eq!(
        get(proxied.port, back),
        hit(back),
        "read back after SIGCONT"
    );
    let _ = fs::remove_dir_all(dir);
}

#[test]
fn a_client_that_never_reads_cannot_grow_the_proxy() {
    let dir = crate::process::scratch_dir("ringwise-proxy-unread");
    let servers: Vec<Server> = (0..2).map(|_| memcached()).collect();
    let file = cluster_file(&dir, "ring", &servers);
    let proxied = proxy(&["--cluster", &file]);
    // A 100 KB value: each get answers 100 KB the client never reads.
    let value = vec![b'v'; 100_000];
    let set = [&b"set big 0 0 100000\r\n"[..], &value, b"\r\n"].concat();
    assert_eq!(exchange(proxied.port, &set), b"STORED\r\n");
    let before = rss_kb(proxied.process.id());
    let mut stream = TcpStream::connect(("127.0.0.1", proxied.port)).expect("connect");
    stream
        .set_write_timeout(Some(Duration::from_secs(2)))
        .expect("timeout");
    let batch = b"get big\r\n".repeat(10_000);
    let mut sent = 0usize;
    // 2,000 batches of 90 KB: 180 MB of requests, 2 TB of answers.
    for _ in 0..2_000 {
        match stream.write_all(&batch) {
            Ok(()) => sent += batch.len(),
            Err(_) => break, // the proxy stopped reading: as it should
        }
    }
    sleep(Duration::from_millis(500));
    let grown = rss_kb(proxied.process.id()).saturating_sub(before);
    assert!(
        sent < 180_000_000,
        "the proxy read all {sent} bytes of a client that does not read"
    );
    assert!(
        grown < 64 * 1024,
        "the proxy grew by {grown} kB for one client that never reads"
    );
    assert_eq!(
        exchange(proxied.port, b"get nothing\r\n"),
        b"END\r\n",
        "another client is answered"
    );
    drop(stream);
    let _ = fs::remove_dir_all(dir);
}
