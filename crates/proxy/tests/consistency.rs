//! The proxy's consistency promise judged by a history checker
//! (`ringwise-history`) over randomized concurrent clients, against real
//! memcacheds, while the membership flaps and servers are stalled,
//! killed and restarted.
//!
//! Clients (threads, one connection each) `set` unique values, `delete`,
//! `incr` counters, and read with one-key and multi-key `get`s, each
//! operation recorded with when it began and when its answer came (none:
//! indeterminate). Meanwhile the test's own thread (servers must be
//! started from it, see `process::server`) is the nemesis: it rewrites
//! the cluster file to a random subset of four servers (servers leave and
//! come back, windows overlap), reorders it, SIGSTOPs a server for a
//! while (it is ejected and re-admitted), or SIGKILLs one and starts it
//! again on its port. The proxy keeps two connections to each server, so
//! that ordering across connections is tried too. Afterwards every read
//! must keep the promise (`ringwise_history::check`); when one does not,
//! the nemesis's steps and the proxy's log around the first such read
//! are printed, stamped alike.
//!
//! `RINGWISE_HISTORY_SECONDS` (default 30) and `RINGWISE_HISTORY_SEED`
//! (default: the recorded seeds below) set the run; `scripts/proxy-history`
//! runs it for as long as asked.

use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::sleep;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use ringwise_history::{COUNTER_BASE, Kind, Op, check, summary};
use ringwise_proxy::log::stamp;

use crate::process::scratch_dir;
use crate::rng::Rng;
use crate::servers::{Server, memcached_on, proxy};

/// Seeds run by the test command (one per run, by the day), recorded so a
/// failure can be replayed with `RINGWISE_HISTORY_SEED`.
const SEEDS: [u64; 4] = [0x5eed_0001, 0x5eed_0002, 0x5eed_0003, 0x5eed_0004];

const CLIENTS: u32 = 6;
const REGISTERS: usize = 40;
const COUNTERS: usize = 8;

fn seconds() -> u64 {
    std::env::var("RINGWISE_HISTORY_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(30)
}

fn seed() -> u64 {
    if let Some(seed) = std::env::var("RINGWISE_HISTORY_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
    {
        return seed;
    }
    let day = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() / 86_400);
    SEEDS[day as usize % SEEDS.len()]
}

/// Writes the cluster file atomically (a reader never sees half of it).
fn write_pool(path: &Path, addresses: &[String]) {
    let mut toml = String::from("algorithm = \"ring\"\n");
    for address in addresses {
        toml.push_str(&format!("[[nodes]]\nname = \"{address}\"\n"));
    }
    let tmp = path.with_extension("tmp");
    fs::write(&tmp, toml).expect("write the cluster file");
    fs::rename(&tmp, path).expect("rename the cluster file");
}

/// A free port below the kernel's ephemeral range (32768 and up): a
/// server killed and started again on its port must find it free, and an
/// ephemeral one can meanwhile be taken as a connection's own (seen:
/// memcached restarted after 18 minutes found it in use).
fn low_port(rng: &mut Rng) -> u16 {
    loop {
        let port = 21_000 + rng.below(11_000) as u16;
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
}

fn signal(pid: u32, name: &str) {
    let _ = Command::new("kill")
        .args([&format!("-{name}"), &pid.to_string()])
        .status();
}

/// One client's connection to the proxy, and what it records.
struct Client {
    port: u16,
    stream: Option<(TcpStream, BufReader<TcpStream>)>,
    process: u32,
    start: Instant,
    ops: Vec<Op>,
}

impl Client {
    fn now(&self) -> u64 {
        self.start.elapsed().as_nanos() as u64
    }

    /// Sends `request` and reads one answer with `read`; `None` (and a
    /// new connection next time) when no whole answer came.
    fn call<T>(
        &mut self,
        request: &[u8],
        read: impl FnOnce(&mut BufReader<TcpStream>) -> Option<T>,
    ) -> Option<T> {
        if self.stream.is_none() {
            let stream = TcpStream::connect(("127.0.0.1", self.port)).ok()?;
            stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
            let reader = BufReader::new(stream.try_clone().ok()?);
            self.stream = Some((stream, reader));
        }
        let (stream, reader) = self.stream.as_mut()?;
        let answer = stream.write_all(request).ok().and_then(|()| read(reader));
        if answer.is_none() {
            self.stream = None;
        }
        answer
    }

    fn record(&mut self, key: &[u8], kind: Kind, invoked: u64, done: bool) {
        let completed = done.then(|| self.now());
        self.ops.push(Op {
            process: self.process,
            key: key.to_vec(),
            kind,
            invoked,
            completed,
        });
    }

    fn set(&mut self, key: &[u8], value: &[u8]) {
        let mut request = format!("set {} 0 0 {}\r\n", text(key), value.len()).into_bytes();
        request.extend_from_slice(value);
        request.extend_from_slice(b"\r\n");
        let invoked = self.now();
        let stored = self.call(&request, line).is_some_and(|l| l == "STORED");
        self.record(key, Kind::Write(value.to_vec()), invoked, stored);
    }

    fn delete(&mut self, key: &[u8]) {
        let request = format!("delete {}\r\n", text(key)).into_bytes();
        let invoked = self.now();
        let answer = self.call(&request, line);
        let done = answer.is_some_and(|l| l == "DELETED" || l == "NOT_FOUND");
        self.record(key, Kind::Delete, invoked, done);
    }

    fn incr(&mut self, key: &[u8]) {
        let request = format!("incr {} 1\r\n", text(key)).into_bytes();
        let invoked = self.now();
        match self.call(&request, line) {
            Some(l) if l == "NOT_FOUND" => {}
            Some(l) => match l.parse::<u64>() {
                Ok(n) => self.record(key, Kind::Incr(Some(n)), invoked, true),
                Err(_) => self.record(key, Kind::Incr(None), invoked, false),
            },
            None => self.record(key, Kind::Incr(None), invoked, false),
        }
    }

    fn get(&mut self, keys: &[Vec<u8>]) {
        let names: Vec<String> = keys.iter().map(|k| text(k)).collect();
        let request = format!("get {}\r\n", names.join(" ")).into_bytes();
        let invoked = self.now();
        // A SERVER_ERROR (a server that timed out) tells nothing: no read.
        if let Some(found) = self.call(&request, values) {
            let completed = self.now();
            for key in keys {
                let value = found.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone());
                self.ops.push(Op {
                    process: self.process,
                    key: key.clone(),
                    kind: Kind::Read(value),
                    invoked,
                    completed: Some(completed),
                });
            }
        }
    }
}

fn text(key: &[u8]) -> String {
    String::from_utf8_lossy(key).into_owned()
}

fn line(reader: &mut BufReader<TcpStream>) -> Option<String> {
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    line.strip_suffix("\r\n").map(str::to_owned)
}

/// A retrieval's hits, or `None` for an error or a broken answer.
fn values(reader: &mut BufReader<TcpStream>) -> Option<Vec<(Vec<u8>, Vec<u8>)>> {
    let mut found = Vec::new();
    loop {
        let header = line(reader)?;
        if header == "END" {
            return Some(found);
        }
        let mut words = header.split(' ');
        let (Some("VALUE"), Some(key), Some(_), Some(len)) =
            (words.next(), words.next(), words.next(), words.next())
        else {
            return None;
        };
        let len: usize = len.parse().ok()?;
        let mut data = vec![0u8; len + 2];
        reader.read_exact(&mut data).ok()?;
        data.truncate(len);
        found.push((key.as_bytes().to_vec(), data));
    }
}

/// One client's random operations until `stop`.
fn work(mut client: Client, seed: u64, stop: Arc<AtomicBool>) -> Vec<Op> {
    let mut rng = Rng(seed);
    let registers: Vec<Vec<u8>> = (0..REGISTERS)
        .map(|i| format!("r:{i}").into_bytes())
        .collect();
    let counters: Vec<Vec<u8>> = (0..COUNTERS)
        .map(|i| format!("c:{i}").into_bytes())
        .collect();
    let mut written = 0u64;
    while !stop.load(Ordering::Relaxed) {
        written += 1;
        match rng.below(100) {
            0..=29 => {
                let key = rng.pick(&registers).clone();
                let value = format!("p{}-{written}", client.process);
                client.set(&key, value.as_bytes());
            }
            30..=39 => {
                let key = rng.pick(&registers).clone();
                client.delete(&key);
            }
            40..=44 => {
                let key = rng.pick(&counters).clone();
                let base = (u64::from(client.process) << 24 | written) * COUNTER_BASE;
                client.set(&key, base.to_string().as_bytes());
            }
            45..=54 => {
                let key = rng.pick(&counters).clone();
                client.incr(&key);
            }
            55..=84 => {
                let all = if rng.below(4) == 0 {
                    &counters
                } else {
                    &registers
                };
                let key = rng.pick(all).clone();
                client.get(&[key]);
            }
            _ => {
                let n = rng.between(2, 5);
                let keys: Vec<Vec<u8>> = (0..n)
                    .map(|_| {
                        let all = if rng.below(4) == 0 {
                            &counters
                        } else {
                            &registers
                        };
                        rng.pick(all).clone()
                    })
                    .collect();
                client.get(&keys);
            }
        }
    }
    client.ops
}

#[test]
fn any_sequence_of_changes_stalls_and_restarts_keeps_the_promise() {
    let seed = seed();
    let run = Duration::from_secs(seconds());
    eprintln!("consistency: seed {seed} for {run:?} (RINGWISE_HISTORY_SEED to replay)");
    let mut rng = Rng(seed);
    let mut servers: Vec<Server> = (0..4).map(|_| memcached_on(low_port(&mut rng))).collect();
    let addresses: Vec<String> = servers.iter().map(Server::address).collect();
    let dir = scratch_dir("ringwise-proxy-history");
    let pool = dir.join("pool.toml");
    write_pool(&pool, &addresses[..3]);
    let file = pool.to_string_lossy().into_owned();
    let stats_port = crate::process::free_port();
    let stats = format!("127.0.0.1:{stats_port}");
    let proxy = proxy(&[
        "--stats",
        &stats,
        "--cluster",
        &file,
        "--warm-up",
        "2",
        "--timeout",
        "300",
        "--auto-eject-hosts",
        "true",
        "--server-failure-limit",
        "2",
        "--server-retry-timeout",
        "800",
        "--reload-interval",
        "20",
        "--server-connections",
        "2",
    ]);
    let stop = Arc::new(AtomicBool::new(false));
    let start = Instant::now();
    let epoch = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    // The nemesis's steps, stamped as the proxy stamps its log.
    let mut steps: Vec<String> = Vec::new();
    let mut step = |what: String| steps.push(format!("{} {what}", stamp(epoch + start.elapsed())));
    let histories: Arc<Mutex<Vec<Op>>> = Arc::default();
    let workers: Vec<_> = (0..CLIENTS)
        .map(|process| {
            let client = Client {
                port: proxy.port,
                stream: None,
                process,
                start,
                ops: Vec::new(),
            };
            let (stop, histories) = (stop.clone(), histories.clone());
            let seed = seed ^ (u64::from(process) + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            std::thread::spawn(move || {
                let ops = work(client, seed, stop);
                histories.lock().expect("histories").extend(ops);
            })
        })
        .collect();
    let mut changes = 0;
    let mut listed: Vec<usize> = vec![0, 1, 2];
    while start.elapsed() < run {
        sleep(Duration::from_millis(rng.between(100, 900) as u64));
        match rng.below(10) {
            // A new membership: any two or more of the four servers.
            0..=4 => {
                let mut chosen: Vec<usize> = (0..4).filter(|_| rng.below(3) != 0).collect();
                while chosen.len() < 2 {
                    let i = rng.below(4);
                    if !chosen.contains(&i) {
                        chosen.push(i);
                    }
                }
                listed = chosen;
            }
            // The same servers listed in another order: no change.
            5 => listed.reverse(),
            // A stalled server: ejected, then re-admitted.
            6 | 7 => {
                let victim = &servers[rng.below(4)];
                step(format!("SIGSTOP {}", victim.address()));
                signal(victim.process.id(), "STOP");
                sleep(Duration::from_millis(rng.between(200, 1500) as u64));
                signal(victim.process.id(), "CONT");
                step(format!("SIGCONT {}", victim.address()));
            }
            // A server killed and started again, empty, on its port.
            _ => {
                let i = rng.below(4);
                let port = servers[i].port;
                step(format!("SIGKILL {}", servers[i].address()));
                signal(servers[i].process.id(), "KILL");
                sleep(Duration::from_millis(rng.between(50, 600) as u64));
                servers[i] = memcached_on(port);
                step(format!("restarted {} empty", servers[i].address()));
            }
        }
        let names: Vec<String> = listed.iter().map(|&i| addresses[i].clone()).collect();
        write_pool(&pool, &names);
        step(format!("cluster file: {}", names.join(" ")));
        changes += 1;
    }
    stop.store(true, Ordering::Relaxed);
    for worker in workers {
        worker.join().expect("a client thread");
    }
    let ops = std::mem::take(&mut *histories.lock().expect("histories"));
    let s = summary(&ops);
    let violations = check(&ops);
    eprintln!(
        "consistency: seed {seed}: {changes} nemesis steps, {} ops, {} reads ({} hits), {} \
         indeterminate, {} violations",
        s.ops,
        s.reads,
        s.hits,
        s.indeterminate,
        violations.len()
    );
    for v in violations.iter().take(10) {
        eprintln!("  {v}");
    }
    if let Some(first) = violations.first() {
        // What happened in the three seconds before the first bad read.
        let at = |ns: u64| stamp(epoch + Duration::from_nanos(ns));
        let (from, to) = (
            at(first.read.invoked.saturating_sub(3_000_000_000)),
            at(first.read.invoked + 100_000_000),
        );
        eprintln!(
            "consistency: first bad read began at {}; from {from}:",
            at(first.read.invoked)
        );
        let log = proxy.log();
        let mut lines: Vec<&str> = steps
            .iter()
            .map(String::as_str)
            .chain(log.lines())
            .collect();
        lines.retain(|l| {
            l.get(..24)
                .is_some_and(|t| (from.as_str()..=to.as_str()).contains(&t))
        });
        lines.sort();
        for line in lines {
            eprintln!("  {line}");
        }
    }
    // What the run exercised, from the proxy's own counters.
    let text = crate::servers::exchange_until(stats_port, b"", b"\n");
    let document: serde_json::Value = serde_json::from_slice(&text).unwrap_or_default();
    let total = |field: &str| -> u64 {
        let servers = document["servers"].as_array().cloned().unwrap_or_default();
        servers.iter().filter_map(|s| s[field].as_u64()).sum()
    };
    // `swept` is shown, not required: keys written soon after a change
    // leave a sweep nothing to delete.
    let exercised = ["fallback_hits", "ejections", "flushes", "sweeps"].map(|f| (f, total(f)));
    eprintln!(
        "consistency: seed {seed}: {exercised:?}, swept {}",
        total("swept")
    );
    assert!(s.hits > 1000, "too few hits to judge anything: {s:?}");
    for (field, n) in exercised {
        assert!(
            n > 0,
            "the run never exercised {field} (seed {seed}): {document}"
        );
    }
    assert!(
        violations.is_empty(),
        "{} reads broke the promise (seed {seed})",
        violations.len()
    );
    drop(proxy);
}
