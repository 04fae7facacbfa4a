//! One client cannot cost the proxy unbounded memory, nor break what other
//! clients share.
//!
//! - a `get` naming one 1 MB value 5,000 times (a 5 GB answer) is answered
//!   byte for byte, streamed: the proxy's peak memory grows by less than
//!   64 MB, and another client is answered meanwhile;
//! - a client pipelining multi-key gets of 100 KB values without reading
//!   holds at most its budget of values (128), not 128 requests of 20
//!   values each;
//! - retrievals of many keys, repeated, across parts (more than 32
//!   distinct keys, lines over 2048 bytes, `gat` among them) answer as
//!   memcached;
//! - padded and odd lines (spaces to over 2048 bytes, numbers with
//!   thousands of leading zeros, long ignored tokens, a `gat` line over
//!   2048 bytes, a value memcached refuses as too large) from one client,
//!   while a second client's traffic shares the server connection: the
//!   second client's requests all succeed, the server counts no failure
//!   and is never ejected, and the first client gets memcached's answers;
//! - a line that is not a `get` and does not end within memcached's 16 KB
//!   read buffer closes the connection, as memcached closes it;
//! - a server paused for less than the timeout while 40 clients pipeline
//!   5,120 gets: the requests past the connection's 4,096 are refused at
//!   once, and those refusals (the proxy's own) never count against the
//!   server: no failure, no ejection.
//! - one client pipelining 40 MB of sets to a paused server fills only its
//!   share of the shared server connection (4 MiB of 16): another
//!   client's `set`, sent meanwhile, waits and is stored once the server
//!   wakes, instead of being refused.

use std::fs;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::servers::{Server, cluster_file, exchange, exchange_until, memcached, proxy};

/// A `/proc/PID/status` line in kB (`VmRSS:`, `VmHWM:` the peak).
fn status_kb(pid: u32, field: &str) -> u64 {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).expect("read /proc status");
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("no {field} in /proc/{pid}/status"))
}

fn set(key: &str, value: &[u8]) -> Vec<u8> {
    let mut request = format!("set {key} 0 0 {}\r\n", value.len()).into_bytes();
    request.extend_from_slice(value);
    request.extend_from_slice(b"\r\n");
    request
}

fn stats(port: u16) -> serde_json::Value {
    let text = exchange_until(port, b"", b"\n");
    serde_json::from_slice(&text).expect("the stats document")
}

/// Sets its flag when dropped: the other clients stop when the test
/// fails, so that the scope waiting for them ends.
struct StopOnDrop<'a>(&'a AtomicBool);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Another client's gets and sets, until `stop`: how many, and the first
/// wrong answer.
fn other_client(port: u16, stop: &AtomicBool) -> (usize, Option<String>) {
    let mut done = 0;
    while !stop.load(Ordering::Relaxed) || done == 0 {
        let key = format!("other:{}", done % 50);
        let value = format!("v{done}");
        let mut request = set(&key, value.as_bytes());
        request.extend_from_slice(format!("get {key}\r\n").as_bytes());
        let want = format!(
            "STORED\r\nVALUE {key} 0 {}\r\n{value}\r\nEND\r\n",
            value.len()
        );
        let got = exchange(port, &request);
        if got != want.as_bytes() {
            return (done, Some(String::from_utf8_lossy(&got).into_owned()));
        }
        done += 1;
    }
    (done, None)
}

#[test]
fn a_key_named_thousands_of_times_is_streamed_in_bounded_memory() {
    const TIMES: usize = 5_000;
    let dir = crate::process::scratch_dir("ringwise-proxy-repeats");
    let servers: Vec<Server> = (0..2).map(|_| memcached()).collect();
    let file = cluster_file(&dir, "ring", &servers);
    let proxied = proxy(&["--cluster", &file]);
    let value: Vec<u8> = (0..1_000_000u32).map(|i| b'a' + (i % 26) as u8).collect();
    assert_eq!(exchange(proxied.port, &set("big", &value)), b"STORED\r\n");
    let mut block = b"VALUE big 0 1000000\r\n".to_vec();
    block.extend_from_slice(&value);
    block.extend_from_slice(b"\r\n");
    let before = status_kb(proxied.process.id(), "VmHWM:");
    let request = format!("get{}\r\n", " big".repeat(TIMES));
    let started = std::time::Instant::now();
    let stop = AtomicBool::new(false);
    let (total, (others, wrong)) = std::thread::scope(|scope| {
        let other = scope.spawn(|| other_client(proxied.port, &stop));
        let _stop = StopOnDrop(&stop);
        let mut stream = TcpStream::connect(("127.0.0.1", proxied.port)).expect("connect");
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .expect("timeout");
        stream.write_all(request.as_bytes()).expect("send the get");
        // Checked as it comes: 5 GB are never held here either.
        let expected_len = block.len() * TIMES + 5;
        let mut at = 0usize;
        let mut chunk = vec![0u8; 1 << 20];
        while at < expected_len {
            let n = match stream.read(&mut chunk) {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            let mut piece = &chunk[..n];
            while !piece.is_empty() {
                let (expected, offset) = match at < block.len() * TIMES {
                    true => (&block[..], at % block.len()),
                    false => (&b"END\r\n"[..], at - block.len() * TIMES),
                };
                let take = piece.len().min(expected.len() - offset);
                assert!(
                    piece[..take] == expected[offset..offset + take],
                    "the answer differs at byte {at}"
                );
                piece = &piece[take..];
                at += take;
            }
        }
        stop.store(true, Ordering::Relaxed);
        (at, other.join().expect("the other client"))
    });
    assert_eq!(total, block.len() * TIMES + 5, "the whole answer");
    assert_eq!(wrong, None, "the other client after {others} exchanges");
    let grown = status_kb(proxied.process.id(), "VmHWM:").saturating_sub(before);
    eprintln!(
        "a 5 GB answer in {:?}: the proxy's peak grew by {grown} kB; the other client made {others} exchanges meanwhile",
        started.elapsed()
    );
    assert!(
        grown < 64 * 1024,
        "the proxy's peak grew by {grown} kB for a 5 GB answer"
    );
    let _ = fs::remove_dir_all(dir);
}

#[test]
fn pipelined_multi_key_gets_hold_at_most_the_clients_budget() {
    let dir = crate::process::scratch_dir("ringwise-proxy-budget");
    let servers: Vec<Server> = (0..2).map(|_| memcached()).collect();
    let file = cluster_file(&dir, "ring", &servers);
    let proxied = proxy(&["--cluster", &file]);
    let value = vec![b'v'; 100_000];
    let keys: Vec<String> = (0..20).map(|i| format!("b:{i}")).collect();
    let sets: Vec<u8> = keys.iter().flat_map(|k| set(k, &value)).collect();
    assert_eq!(exchange(proxied.port, &sets), b"STORED\r\n".repeat(20));
    let before = status_kb(proxied.process.id(), "VmHWM:");
    let mut stream = TcpStream::connect(("127.0.0.1", proxied.port)).expect("connect");
    stream
        .set_write_timeout(Some(Duration::from_secs(2)))
        .expect("timeout");
    // Each get answers 2 MB the client never reads: 128 of them waiting
    // would be 256 MB.
    let request = format!("get {}\r\n", keys.join(" ")).repeat(1_000);
    let _ = stream.write_all(request.as_bytes());
    std::thread::sleep(Duration::from_millis(1_000));
    let grown = status_kb(proxied.process.id(), "VmHWM:").saturating_sub(before);
    assert!(
        grown < 64 * 1024,
        "the proxy's peak grew by {grown} kB for a client that never reads"
    );
    assert_eq!(
        exchange(proxied.port, b"get nothing\r\n"),
        b"END\r\n",
        "another client is answered"
    );
    drop(stream);
    let _ = fs::remove_dir_all(dir);
}

#[test]
fn a_pipeline_longer_than_the_budget_of_answers_the_proxy_gives_itself_is_all_answered() {
    // 300 unknown commands in one write: the proxy answers each itself
    // (`ERROR`), 128 at a time (the client's budget); the rest, and the
    // `mn` after them, must not wait for bytes the client will not send.
    let dir = crate::process::scratch_dir("ringwise-proxy-own-answers");
    let servers: Vec<Server> = (0..1).map(|_| memcached()).collect();
    let file = cluster_file(&dir, "ring", &servers);
    let proxied = proxy(&["--cluster", &file]);
    let answer = exchange(proxied.port, &b"bogus\r\n".repeat(300));
    assert_eq!(answer, b"ERROR\r\n".repeat(300));
    let _ = fs::remove_dir_all(dir);
}

#[test]
fn retrievals_of_many_repeated_keys_answer_as_memcached() {
    let dir = crate::process::scratch_dir("ringwise-proxy-many-keys");
    let direct = memcached();
    let pool: Vec<Server> = (0..3).map(|_| memcached()).collect();
    let file = cluster_file(&dir, "ketama", &pool);
    let proxied = proxy(&["--cluster", &file]);
    let keys: Vec<String> = (0..300).map(|i| format!("many:{i:03}")).collect();
    let mut sets = Vec::new();
    for (i, key) in keys.iter().enumerate().filter(|(i, _)| i % 3 != 0) {
        sets.extend_from_slice(&set(key, format!("{i}").repeat(i % 7 + 1).as_bytes()));
    }
    // Every key, then some again out of order, so repeats fall in other
    // parts than their first; a long key list with a long exptime token.
    let mut named: Vec<&str> = keys.iter().map(String::as_str).collect();
    named.extend(keys.iter().rev().step_by(7).map(String::as_str));
    named.extend(std::iter::repeat_n("many:001", 40));
    let list = named.join(" ");
    // Each line on a connection of its own: memcached closes one whose
    // `gat` line over 2048 bytes it reads in two pieces.
    let mut requests = vec![sets];
    for head in ["get", "gets", "gat 100000", "gats 0000000100000"] {
        requests.push(format!("{head} {list}\r\n").into_bytes());
    }
    requests.push(format!("get {}\r\n", "  many:002".repeat(500)).into_bytes());
    let all = |port: u16| -> Vec<u8> { requests.iter().flat_map(|r| exchange(port, r)).collect() };
    // gets' CAS values differ between one server and three: compared
    // through a pool of one below.
    let expected = all(direct.port);
    let got = all(proxied.port);
    let strip = |answer: &[u8]| -> Vec<u8> {
        String::from_utf8_lossy(answer)
            .split_inclusive("\r\n")
            .map(
                |l| match l.starts_with("VALUE ") && l.split(' ').count() == 5 {
                    true => l.rsplit_once(' ').map_or(l, |(head, _)| head).to_owned() + "\r\n",
                    false => l.to_owned(),
                },
            )
            .collect::<String>()
            .into_bytes()
    };
    assert!(
        strip(&expected) == strip(&got),
        "the proxy's answers differ from memcached's ({} and {} bytes)",
        expected.len(),
        got.len()
    );
    // Through a pool of one, CAS values and all.
    let one = memcached();
    let direct_again = memcached();
    let file = cluster_file(&dir, "ring", std::slice::from_ref(&one));
    let single = proxy(&["--cluster", &file]);
    let expected = all(direct_again.port);
    let got = all(single.port);
    assert!(
        expected == got,
        "one server: the proxy's answers differ from memcached's ({} and {} bytes)",
        expected.len(),
        got.len()
    );
    let _ = fs::remove_dir_all(dir);
}

/// Requests memcached reads (each under its 16 KB read buffer) but
/// would close a shared connection on if they came in two reads, or that
/// it refuses; about keys starting with `p`, each one's answers the same
/// in every round.
fn odd_requests(p: &str) -> Vec<Vec<u8>> {
    let pad = " ".repeat(6000);
    let zeros = "0".repeat(6000);
    let long = "t".repeat(9000);
    let mut odd: Vec<String> = vec![
        format!("set {p}:1 0 0 1{pad}\r\nx\r\nget {p}:1\r\n"),
        format!("set{pad}{p}:2 {zeros}5 0 1\r\ny\r\nget {p}:2\r\n"),
        format!("set {p}:3 0 0 1 {long}\r\nz\r\nget {p}:3\r\n"),
        format!("set {p}:4 0 {zeros}100 1 noreply\r\nw\r\nget {p}:4\r\n"),
        format!("set {p}:n 0 0 1\r\n5\r\nincr {p}:n {zeros}7{pad}\r\n"),
        format!("decr {p}:n 1{pad}noreply\r\nget {p}:n\r\n"),
        format!("touch {p}:1 {zeros}1000{pad}\r\n"),
        format!("delete {p}:3 0{pad}noreply\r\nget {p}:3\r\n"),
        format!("gat {zeros}100000 {p}:1 {p}:2{pad}{p}:1\r\n"),
        // (No CAS values: the other clients' writes move the shared
        // server's counter.)
        format!("gat 0 {}\r\n", format!("{p}:4 ").repeat(600)),
        format!("cas {p}:none 0 0 1 {zeros}1\r\nc\r\n"),
        format!("delete{pad}{p}:2{pad}\r\nget {p}:2\r\n"),
        format!("set {p}:5 0 0 1 noreply\r\nxy\r\nget {p}:5\r\n"),
        format!("set {p}:n 0 0 {zeros}2 {zeros}\r\n10\r\nincr {p}:n 18446744073709551615\r\n"),
    ];
    // Over memcached's 1 MB item size, under the proxy's 2 MiB: refused
    // by memcached (`SERVER_ERROR object too large for cache`), which is
    // the client's doing, not a failure of the server.
    let huge = "h".repeat(1_500_000);
    odd.push(format!(
        "set {p}:huge 0 0 {}\r\n{huge}\r\nget {p}:huge\r\n",
        huge.len()
    ));
    odd.into_iter().map(String::into_bytes).collect()
}

/// Another client's pipelined bursts of sets and gets until `stop`: how
/// many bursts, and the first wrong answer.
fn bursts(port: u16, stop: &AtomicBool, who: usize) -> (usize, Option<String>) {
    let mut done = 0;
    while !stop.load(Ordering::Relaxed) || done == 0 {
        let (mut request, mut want) = (Vec::new(), Vec::new());
        for i in 0..100 {
            let key = format!("burst:{who}:{i}");
            let value = format!("{done}-{i}");
            request.extend_from_slice(&set(&key, value.as_bytes()));
            request.extend_from_slice(format!("get {key}\r\n").as_bytes());
            let hit = format!("VALUE {key} 0 {}\r\n{value}\r\nEND\r\n", value.len());
            want.extend_from_slice(b"STORED\r\n");
            want.extend_from_slice(hit.as_bytes());
        }
        let got = exchange(port, &request);
        if got != want {
            return (
                done,
                Some(String::from_utf8_lossy(&got[..got.len().min(300)]).into()),
            );
        }
        done += 1;
    }
    (done, None)
}

#[test]
fn a_clients_odd_lines_cannot_break_a_shared_server_connection() {
    let dir = crate::process::scratch_dir("ringwise-proxy-isolation");
    let direct = memcached();
    let servers = vec![memcached()];
    let file = cluster_file(&dir, "ring", &servers);
    let stats_port = crate::process::free_port();
    let proxied = proxy(&[
        "--cluster",
        &file,
        "--auto-eject-hosts",
        "true",
        "--server-failure-limit",
        "1",
        "--stats",
        &format!("127.0.0.1:{stats_port}"),
    ]);
    let stop = AtomicBool::new(false);
    let (others, wrong) = std::thread::scope(|scope| {
        // Other clients' bursts share the one server connection.
        let (port, stop) = (proxied.port, &stop);
        let helpers: Vec<_> = (0..2)
            .map(|who| scope.spawn(move || bursts(port, stop, who)))
            .collect();
        let _stop = StopOnDrop(stop);
        // Three odd clients at once, each request alone, to memcached and
        // through the proxy.
        let odd: Vec<_> = ["a", "b", "c"]
            .map(|p| {
                let (direct, proxied) = (direct.port, proxied.port);
                scope.spawn(move || {
                    let odd = odd_requests(p);
                    for round in 0..10 {
                        for request in &odd {
                            let expected = exchange(direct, request);
                            let got = exchange(proxied, request);
                            if expected != got {
                                return Err(format!(
                                    "round {round}: {:?}: memcached answered {:?}, the proxy {:?}",
                                    String::from_utf8_lossy(&request[..request.len().min(80)]),
                                    String::from_utf8_lossy(&expected[..expected.len().min(300)]),
                                    String::from_utf8_lossy(&got[..got.len().min(300)]),
                                ));
                            }
                        }
                    }
                    Ok(())
                })
            })
            .into_iter()
            .collect();
        let odd: Vec<_> = odd.into_iter().map(|o| o.join()).collect();
        stop.store(true, Ordering::Relaxed);
        for answer in odd {
            assert_eq!(answer.expect("an odd client"), Ok(()));
        }
        helpers
            .into_iter()
            .map(|h| h.join().expect("another client"))
            .fold((0, None), |(n, w), (m, v)| (n + m, w.or(v)))
    });
    assert_eq!(wrong, None, "the other clients after {others} bursts");
    let doc = stats(stats_port);
    let server = &doc["servers"][0];
    assert_eq!(server["errors"], 0, "failures counted: {doc}");
    assert_eq!(server["ejections"], 0, "ejected: {doc}");
    let _ = fs::remove_dir_all(dir);
}

#[test]
fn a_line_past_memcacheds_read_buffer_closes_as_memcached_closes() {
    let dir = crate::process::scratch_dir("ringwise-proxy-long-line");
    let direct = memcached();
    let pool = [memcached()];
    let file = cluster_file(&dir, "ring", &pool);
    let proxied = proxy(&["--cluster", &file]);
    let long = format!("set k 0 0 1{}\r\nx\r\nmn\r\n", " ".repeat(20_000));
    for port in [direct.port, proxied.port] {
        let answer = exchange_until(port, long.as_bytes(), b"MN\r\n");
        assert_eq!(answer, b"", "closed without an answer (port {port})");
    }
    // A `get` line that long is read.
    let get = format!("get{}k\r\n", " ".repeat(20_000));
    assert_eq!(exchange(proxied.port, get.as_bytes()), b"END\r\n");
    let _ = fs::remove_dir_all(dir);
}

fn signal(pid: u32, name: &str) {
    let status = std::process::Command::new("kill")
        .args([&format!("-{name}"), &pid.to_string()])
        .status()
        .expect("run kill");
    assert!(status.success(), "kill -{name} {pid}");
}

#[test]
fn a_full_server_connection_refuses_without_counting_against_the_server() {
    const CLIENTS: usize = 40;
    let dir = crate::process::scratch_dir("ringwise-proxy-refusals");
    let servers = vec![memcached()];
    let file = cluster_file(&dir, "ring", &servers);
    let stats_port = crate::process::free_port();
    let proxied = proxy(&[
        "--cluster",
        &file,
        "--auto-eject-hosts",
        "true",
        "--server-failure-limit",
        "1",
        "--timeout",
        "5000",
        "--stats",
        &format!("127.0.0.1:{stats_port}"),
    ]);
    assert_eq!(exchange(proxied.port, &set("here", b"1")), b"STORED\r\n");
    // Paused for less than the timeout: nothing fails, but 40 clients'
    // 128 gets each (5,120) overflow the connection's 4,096 awaited
    // answers, and the proxy refuses the rest at once.
    let pid = servers[0].process.id();
    signal(pid, "STOP");
    let answers: Vec<Vec<u8>> = std::thread::scope(|scope| {
        let clients: Vec<_> = (0..CLIENTS)
            .map(|_| scope.spawn(|| exchange(proxied.port, &b"get here\r\n".repeat(128))))
            .collect();
        std::thread::sleep(Duration::from_millis(1_500));
        signal(pid, "CONT");
        clients
            .into_iter()
            .map(|c| c.join().expect("a client"))
            .collect()
    });
    let (mut hits, mut refused) = (0, 0);
    for answer in &answers {
        let text = String::from_utf8_lossy(answer);
        hits += text.matches("VALUE here 0 1\r\n1\r\nEND\r\n").count();
        refused += text.matches("too many requests wait").count();
    }
    assert_eq!(hits + refused, CLIENTS * 128, "every get answered");
    assert!(refused > 0, "none refused: {hits} hits");
    let doc = stats(stats_port);
    let server = &doc["servers"][0];
    assert_eq!(server["errors"], 0, "refusals counted as failures: {doc}");
    assert_eq!(server["ejections"], 0, "ejected: {doc}");
    assert_eq!(
        exchange(proxied.port, b"get here\r\n"),
        b"VALUE here 0 1\r\n1\r\nEND\r\n"
    );
    let _ = fs::remove_dir_all(dir);
}

#[test]
fn one_client_pipelining_large_values_fills_only_its_share_of_a_connection() {
    const SETS: usize = 80;
    let dir = crate::process::scratch_dir("ringwise-proxy-share");
    let servers = vec![memcached()];
    let file = cluster_file(&dir, "ring", &servers);
    let proxied = proxy(&["--cluster", &file, "--timeout", "5000"]);
    assert_eq!(exchange(proxied.port, &set("here", b"1")), b"STORED\r\n");
    let pid = servers[0].process.id();
    signal(pid, "STOP");
    // 40 MB of noreply sets, sent whole: past what the sockets hold, the
    // proxy queues them until the client's share (before: the whole
    // connection) is full, then refuses.
    let value = vec![b'v'; 500_000];
    let mut flood = Vec::with_capacity(SETS * (value.len() + 64));
    for i in 0..SETS {
        flood.extend_from_slice(format!("set big:{i} 0 0 {} noreply\r\n", value.len()).as_bytes());
        flood.extend_from_slice(&value);
        flood.extend_from_slice(b"\r\n");
    }
    // Then small ones, which fill whatever room the large ones left.
    for i in 0..40_000 {
        flood.extend_from_slice(format!("set small:{i} 0 0 2 noreply\r\nvv\r\n").as_bytes());
    }
    // Then a line the proxy answers itself: its answer means every set
    // before it was queued or refused.
    flood.extend_from_slice(b"no_such_command\r\n");
    let mut flooder = TcpStream::connect(("127.0.0.1", proxied.port)).expect("connect");
    flooder
        .write_all(&flood)
        .expect("the proxy reads every set");
    let mut error = [0u8; 7];
    flooder
        .read_exact(&mut error)
        .expect("the proxy's own answer");
    assert_eq!(&error, b"ERROR\r\n");
    let other = vec![b'o'; 1000];
    let answer = std::thread::scope(|scope| {
        let asked = scope.spawn(|| exchange(proxied.port, &set("other", &other)));
        std::thread::sleep(Duration::from_millis(500));
        signal(pid, "CONT");
        asked.join().expect("the other client")
    });
    assert_eq!(
        String::from_utf8_lossy(&answer),
        "STORED\r\n",
        "the other client's set was refused or failed"
    );
    assert!(exchange(proxied.port, b"get other\r\n").starts_with(b"VALUE other 0 1000\r\n"));
    drop(flooder);
    let _ = fs::remove_dir_all(dir);
}
