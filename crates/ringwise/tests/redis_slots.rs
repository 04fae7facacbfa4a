//! `key_slot` against a real Redis: `CLUSTER KEYSLOT` for 12,000+ keys.
//!
//! Starts `redis-server` in cluster mode on a free loopback port, with its
//! config, data and log in a fresh temporary directory and persistence off,
//! as a child process. A guard kills that child by its pid (`Child::kill`,
//! then `wait`) and removes the directory when dropped, so the server stops
//! even when an assertion fails. The test speaks RESP over a plain
//! `TcpStream`, pipelining 1,000 commands per round trip.
//!
//! Keys come from a seeded generator: random binary bytes, strings of
//! braces and a few letters (braces in every position, empty tags `{}`,
//! nested `{{x}}`, unclosed `{`), Unicode text, `prefix{tag}suffix` shapes,
//! the empty key and every vector of the compatibility notes §3.
//!
//! A missing `redis-server` fails the test: it is never skipped.

use std::fs::{self, File};
use std::io::{BufRead, BufReader, Write};
use std::net::{Shutdown, TcpStream};
use std::process::{Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

use ringwise::key_slot;

use crate::support::process::{Guard, free_port, scratch_dir};

const SEED: u64 = 0x5107_5EED;
const RANDOM_KEYS: usize = 12_000;
const BATCH: usize = 1_000;
const READY_WITHIN: Duration = Duration::from_secs(10);
const INSTALL_HINT: &str = "run scripts/install-test-deps (it installs the Debian package \
                            `redis-server`); this test is never skipped";

/// A running `redis-server`; dropping it kills the process and removes its
/// directory (the [`Guard`] does).
struct Server {
    process: Guard,
    port: u16,
}

impl Server {
    /// Starts a server and waits until it answers PING. Retries with a new
    /// port if the chosen one was taken in between.
    fn start() -> Server {
        let mut last_failure = String::new();
        for _ in 0..3 {
            let mut server = Server::spawn();
            match server.wait_ready() {
                Ok(()) => return server,
                Err(why) => last_failure = why,
            }
        }
        panic!("redis-server did not start: {last_failure}");
    }

    fn spawn() -> Server {
        let dir = scratch_dir("ringwise-redis");
        let log = File::create(dir.join("redis.log")).expect("create the log file");
        let port = free_port();
        let mut command = Command::new("redis-server");
        command
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--cluster-enabled", "yes", "--cluster-config-file"])
            .arg(dir.join("nodes.conf"))
            .arg("--dir")
            .arg(&dir)
            .args(["--save", "", "--appendonly", "no"])
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("clone the log handle"))
            .stderr(log);
        let process = Guard::spawn(&mut command, dir, INSTALL_HINT);
        Server { process, port }
    }

    fn wait_ready(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + READY_WITHIN;
        loop {
            if let Some(status) = self.process.exited() {
                return Err(format!("it exited ({status}); log:\n{}", self.log()));
            }
            if let Ok(mut conn) = self.connect()
                && conn.command(&[b"PING"]).is_ok_and(|r| r == "+PONG")
            {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "no PONG within {READY_WITHIN:?}; log:\n{}",
                    self.log()
                ));
            }
            sleep(Duration::from_millis(50));
        }
    }

    fn connect(&self) -> std::io::Result<Connection> {
        let stream = TcpStream::connect(("127.0.0.1", self.port))?;
        stream.set_read_timeout(Some(Duration::from_secs(10)))?;
        Ok(Connection {
            reader: BufReader::new(stream.try_clone()?),
            stream,
        })
    }

    fn log(&self) -> String {
        fs::read_to_string(self.process.dir().join("redis.log")).unwrap_or_default()
    }
}

struct Connection {
    stream: TcpStream,
    reader: BufReader<TcpStream>,
}

impl Connection {
    /// Sends one command and returns its reply line without `\r\n`.
    fn command(&mut self, args: &[&[u8]]) -> std::io::Result<String> {
        let mut buf = Vec::new();
        encode(args, &mut buf);
        self.stream.write_all(&buf)?;
        self.reply()
    }

    fn reply(&mut self) -> std::io::Result<String> {
        let mut line = String::new();
        self.reader.read_line(&mut line)?;
        Ok(line.trim_end_matches("\r\n").to_owned())
    }
}

/// A RESP array of bulk strings: binary-safe.
fn encode(args: &[&[u8]], out: &mut Vec<u8>) {
    out.extend_from_slice(format!("*{}\r\n", args.len()).as_bytes());
    for arg in args {
        out.extend_from_slice(format!("${}\r\n", arg.len()).as_bytes());
        out.extend_from_slice(arg);
        out.extend_from_slice(b"\r\n");
    }
}

/// SplitMix64: a small seeded generator, enough for test keys.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

fn random_key(rng: &mut Rng) -> Vec<u8> {
    const BRACEY: &[u8] = b"{{{}}}ab1:\x00\xff";
    const TEXT: &[&str] = &["é", "日", "本", "🦀", "ё", "{", "}", "x", "\u{0}", "{}"];
    const PARTS: &[&str] = &["", "user", "{", "}", "{}", "{{", "}}", "é", ":", "🦀"];
    match rng.below(4) {
        0 => (0..rng.below(33)).map(|_| rng.next() as u8).collect(),
        1 => (0..rng.below(13)).map(|_| *rng.pick(BRACEY)).collect(),
        2 => (0..rng.below(9))
            .map(|_| *rng.pick(TEXT))
            .collect::<String>()
            .into_bytes(),
        _ => {
            let mut key = Vec::new();
            for _ in 0..rng.below(6) {
                key.extend_from_slice(rng.pick(PARTS).as_bytes());
                key.extend((0..rng.below(4)).map(|_| b'a' + rng.below(26) as u8));
            }
            key
        }
    }
}

fn keys() -> Vec<Vec<u8>> {
    let fixed: &[&[u8]] = &[
        b"",
        b"somekey",
        b"foo{hash_tag}",
        b"{user1000}.following",
        b"{123}1{abc}",
        b"{123",
        b"{}123",
        b"\x00\x01",
        b"foo{}{bar}",
        b"foo{{bar}}zap",
        b"foo{bar}{zap}",
        b"{}",
        b"{",
        b"}",
        b"}{",
        b"{{}}",
        b"{user:1000}:{x}",
    ];
    let mut rng = Rng(SEED);
    let mut keys: Vec<Vec<u8>> = fixed.iter().map(|k| k.to_vec()).collect();
    keys.extend((0..RANDOM_KEYS).map(|_| random_key(&mut rng)));
    keys
}

#[test]
fn cluster_keyslot_agrees_with_key_slot() {
    let server = Server::start();
    let mut conn = server.connect().expect("connect to redis-server");
    let keys = keys();
    let mut mismatches = Vec::new();
    let mut buf = Vec::new();
    for batch in keys.chunks(BATCH) {
        buf.clear();
        for key in batch {
            encode(&[b"CLUSTER", b"KEYSLOT", key], &mut buf);
        }
        conn.stream.write_all(&buf).expect("send a batch");
        for key in batch {
            let reply = conn.reply().expect("read a reply");
            let theirs: u16 = reply
                .strip_prefix(':')
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("unexpected reply {reply:?} for key {key:?}"));
            if theirs != key_slot(key) {
                mismatches.push((
                    String::from_utf8_lossy(key).into_owned(),
                    theirs,
                    key_slot(key),
                ));
            }
        }
    }
    let _ = conn.stream.shutdown(Shutdown::Both);
    assert!(
        mismatches.is_empty(),
        "{} of {} keys differ (key, redis, ours), first ones: {:?}",
        mismatches.len(),
        keys.len(),
        &mismatches[..mismatches.len().min(20)]
    );
}
