//! A memcached load generator for benchmarking the proxy against
//! nutcracker (see `crates/proxy/bench/vs-nutcracker.sh`): std threads and
//! blocking sockets, nothing else.
//!
//! ```text
//! cargo run --release -p ringwise-proxy --example load -- \
//!     --target 127.0.0.1:22122 --connections 8 --pipeline 16 --seconds 10 \
//!     --keys 100000 --value-bytes 100 --get-ratio 0.9 [--warm] [--seed N]
//! ```
//!
//! Each connection (one thread each) sends a batch of `--pipeline`
//! requests in one write (gets and sets drawn from a SplitMix64 seeded by
//! `--seed` and the connection's number, keys `key:<n>` uniform over
//! `--keys`), then reads exactly the answers it expects (`STORED`;
//! `VALUE <key> <flags> <bytes>` + data + `END`, or `END`), checks them,
//! and sends the next batch. A batch's round trip is the latency of every
//! request in it; every batch holds the same number of requests, so the
//! percentiles of the batches are those of the requests. Any other answer
//! (`SERVER_ERROR ...`, a wrong key or length) counts as an error; a broken
//! connection counts its unanswered requests as errors and reconnects.
//! `--warm` first sets every key once (not timed). Prints one JSON line:
//!
//! ```text
//! {"target":..,"connections":..,"pipeline":..,"seconds":..,"requests":..,
//!  "requests_per_s":..,"p50_us":..,"p99_us":..,"p999_us":..,"errors":..,...,
//!  "first_error":"SERVER_ERROR ..." or null}
//! ```
//!
//! `--idle N` instead opens N connections (with `--touch`, one `get` on
//! each first), prints `{"idle":N,"opened":n}` and holds them open for
//! `--seconds` (the benchmark reads the server's VmRSS meanwhile).

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::process::ExitCode;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

#[derive(Debug, Clone)]
struct Args {
    target: String,
    connections: usize,
    pipeline: usize,
    seconds: f64,
    keys: u64,
    value_bytes: usize,
    get_ratio: f64,
    warm: bool,
    seed: u64,
    idle: usize,
    touch: bool,
}

const USAGE: &str = "usage: load --target HOST:PORT [--connections C] [--pipeline D] \
[--seconds S] [--keys K] [--value-bytes V] [--get-ratio R] [--warm] [--seed N] \
[--idle N [--touch]]";

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        target: String::new(),
        connections: 1,
        pipeline: 1,
        seconds: 10.0,
        keys: 100_000,
        value_bytes: 100,
        get_ratio: 0.9,
        warm: false,
        seed: 1,
        idle: 0,
        touch: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = |name: &str| it.next().ok_or_else(|| format!("{name} needs a value"));
        fn num<T: std::str::FromStr>(name: &str, text: String) -> Result<T, String> {
            text.parse()
                .map_err(|_| format!("{name}: not a number: {text:?}"))
        }
        match flag.as_str() {
            "--target" => args.target = value("--target")?,
            "--connections" => args.connections = num("--connections", value("--connections")?)?,
            "--pipeline" => args.pipeline = num("--pipeline", value("--pipeline")?)?,
            "--seconds" => args.seconds = num("--seconds", value("--seconds")?)?,
            "--keys" => args.keys = num("--keys", value("--keys")?)?,
            "--value-bytes" => args.value_bytes = num("--value-bytes", value("--value-bytes")?)?,
            "--get-ratio" => args.get_ratio = num("--get-ratio", value("--get-ratio")?)?,
            "--seed" => args.seed = num("--seed", value("--seed")?)?,
            "--idle" => args.idle = num("--idle", value("--idle")?)?,
            "--warm" => args.warm = true,
            "--touch" => args.touch = true,
            "-h" | "--help" => return Err(USAGE.to_string()),
            other => return Err(format!("unknown flag {other:?}\n{USAGE}")),
        }
    }
    if args.target.is_empty() {
        return Err(format!("--target is required\n{USAGE}"));
    }
    if args.connections == 0 || args.pipeline == 0 || args.keys == 0 {
        return Err("--connections, --pipeline and --keys must be at least 1".to_string());
    }
    if !(0.0..=1.0).contains(&args.get_ratio) || args.seconds.is_nan() || args.seconds < 0.0 {
        return Err("--get-ratio must be in [0, 1] and --seconds >= 0".to_string());
    }
    Ok(args)
}

/// SplitMix64 (Steele, Lea, Flood 2014).
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// A connection with a read buffer.
struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
    start: usize,
    end: usize,
}

fn bad(what: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what)
}

impl Conn {
    fn open(target: &str) -> io::Result<Conn> {
        let stream = TcpStream::connect(target)?;
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(Duration::from_secs(10)))?;
        stream.set_write_timeout(Some(Duration::from_secs(10)))?;
        Ok(Conn {
            stream,
            buf: vec![0; 64 * 1024],
            start: 0,
            end: 0,
        })
    }

    /// Reads more bytes (at least one) after those buffered.
    fn fill(&mut self) -> io::Result<()> {
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
        } else if self.end == self.buf.len() {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
            if self.end == self.buf.len() {
                self.buf.resize(self.buf.len() * 2, 0);
            }
        }
        let n = self.stream.read(&mut self.buf[self.end..])?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the server closed the connection",
            ));
        }
        self.end += n;
        Ok(())
    }

    /// The next line, without its `\r\n`, as a range of `buf` (consumed).
    fn line(&mut self) -> io::Result<std::ops::Range<usize>> {
        let mut searched = self.start;
        loop {
            if let Some(i) = memchr::memchr(b'\n', &self.buf[searched..self.end]) {
                let nl = searched + i;
                let line = self.start..nl.saturating_sub(1).max(self.start);
                self.start = nl + 1;
                return Ok(line);
            }
            searched = self.end;
            let before = self.start;
            self.fill()?;
            // fill may move the buffered bytes to the front.
            searched = searched - before + self.start;
        }
    }

    /// Consumes `n` bytes (reading them if need be).
    fn skip(&mut self, n: usize) -> io::Result<std::ops::Range<usize>> {
        while self.end - self.start < n {
            if self.buf.len() - self.start < n {
                self.buf.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
                if self.buf.len() < n {
                    self.buf.resize(n, 0);
                }
            }
            self.fill()?;
        }
        let range = self.start..self.start + n;
        self.start += n;
        Ok(range)
    }
}

/// One request of a batch: the key's number, and whether it is a get.
#[derive(Clone, Copy)]
struct Sent {
    key: u64,
    get: bool,
}

/// What a batch's answers held.
#[derive(Default)]
struct Answers {
    errors: u64,
    hits: u64,
    /// The first wrong answer's line (what the errors were).
    first_error: Option<String>,
}

impl Answers {
    fn error(&mut self, line: &[u8]) {
        self.errors += 1;
        if self.first_error.is_none() {
            self.first_error = Some(String::from_utf8_lossy(line).into_owned());
        }
    }
}

/// Reads the answers of `sent`; an `Err` is a broken connection.
fn read_answers(conn: &mut Conn, sent: &[Sent], value_bytes: usize) -> io::Result<Answers> {
    let mut out = Answers::default();
    let mut key = Vec::with_capacity(32);
    for request in sent {
        let line = conn.line()?;
        let text = &conn.buf[line];
        if !request.get {
            if text != b"STORED" {
                out.error(text);
            }
            continue;
        }
        if text == b"END" {
            continue;
        }
        let Some(header) = text.strip_prefix(b"VALUE ") else {
            // SERVER_ERROR and the like: a one-line answer.
            out.error(text);
            continue;
        };
        let mut words = header.split(|&b| b == b' ');
        let got_key = words.next().unwrap_or_default();
        let _flags = words.next();
        let len = words
            .next()
            .and_then(|w| std::str::from_utf8(w).ok())
            .and_then(|w| w.parse::<usize>().ok())
            .ok_or_else(|| {
                bad(format!(
                    "bad VALUE line {:?}",
                    String::from_utf8_lossy(text)
                ))
            })?;
        key.clear();
        let _ = write!(key, "key:{}", request.key);
        let right = got_key == key.as_slice() && len == value_bytes;
        let block = conn.skip(len + 2)?;
        if !conn.buf[block].ends_with(b"\r\n") {
            return Err(bad("a data block without its \\r\\n".to_string()));
        }
        let end = conn.line()?;
        if &conn.buf[end] != b"END" {
            return Err(bad("a VALUE without its END".to_string()));
        }
        if right {
            out.hits += 1;
        } else {
            out.errors += 1;
            out.first_error
                .get_or_insert_with(|| "a VALUE of the wrong key or length".to_string());
        }
    }
    Ok(out)
}

/// A batch larger than this is written from a second thread while this one
/// reads the answers. Written whole before reading, a batch of large sets
/// and gets (100 KB values, pipelined) can fill the socket buffers both
/// ways: the server blocked writing answers that nobody reads, so no longer
/// reading requests, the client blocked writing them. Smaller batches fit
/// the buffers and are written inline, as before.
const WRITE_ASIDE: usize = 64 * 1024;

/// Sends `out` and reads the answers of `sent`; an `Err` is a broken
/// connection.
fn exchange(conn: &mut Conn, out: &[u8], sent: &[Sent], value_bytes: usize) -> io::Result<Answers> {
    if out.len() <= WRITE_ASIDE {
        conn.stream.write_all(out)?;
        return read_answers(conn, sent, value_bytes);
    }
    let mut writer = conn.stream.try_clone()?;
    std::thread::scope(|scope| {
        let written = scope.spawn(move || writer.write_all(out));
        let read = read_answers(conn, sent, value_bytes);
        let written = written
            .join()
            .unwrap_or_else(|_| Err(io::Error::other("the writer thread panicked")));
        written.and(read)
    })
}

fn push_set(out: &mut Vec<u8>, key: u64, value: &[u8]) {
    let _ = write!(out, "set key:{key} 0 0 {}\r\n", value.len());
    out.extend_from_slice(value);
    out.extend_from_slice(b"\r\n");
}

/// Sets every key once, 100 per batch.
fn warm(args: &Args, value: &[u8]) -> io::Result<u64> {
    let mut conn = Conn::open(&args.target)?;
    let mut errors = 0;
    let mut out = Vec::new();
    let mut sent = Vec::new();
    let mut key = 0;
    while key < args.keys {
        out.clear();
        sent.clear();
        for k in key..(key + 100).min(args.keys) {
            push_set(&mut out, k, value);
            sent.push(Sent { key: k, get: false });
        }
        key += sent.len() as u64;
        errors += exchange(&mut conn, &out, &sent, value.len())?.errors;
    }
    Ok(errors)
}

/// What one connection did.
#[derive(Default)]
struct Tally {
    requests: u64,
    errors: u64,
    gets: u64,
    hits: u64,
    first_error: Option<String>,
    /// Each batch's round trip, nanoseconds.
    batches: Vec<u64>,
    finished: Option<Instant>,
}

fn drive(args: &Args, index: usize, value: &[u8], barrier: &Barrier) -> Tally {
    let mut tally = Tally::default();
    let mut rng = SplitMix64(args.seed ^ (index as u64).wrapping_mul(0xA24B_AED4_963E_E407));
    let mut conn = Conn::open(&args.target);
    barrier.wait();
    let deadline = Instant::now() + Duration::from_secs_f64(args.seconds);
    let mut out = Vec::with_capacity(args.pipeline * (value.len() + 48));
    let mut sent = Vec::with_capacity(args.pipeline);
    while Instant::now() < deadline {
        let c = match conn.as_mut() {
            Ok(c) => c,
            Err(_) => {
                tally.errors += args.pipeline as u64;
                tally.requests += args.pipeline as u64;
                std::thread::sleep(Duration::from_millis(10));
                conn = Conn::open(&args.target);
                continue;
            }
        };
        out.clear();
        sent.clear();
        for _ in 0..args.pipeline {
            let key = rng.next() % args.keys;
            let get = rng.unit() < args.get_ratio;
            if get {
                let _ = write!(out, "get key:{key}\r\n");
            } else {
                push_set(&mut out, key, value);
            }
            sent.push(Sent { key, get });
        }
        let began = Instant::now();
        let result = exchange(c, &out, &sent, value.len());
        let took = began.elapsed();
        tally.requests += sent.len() as u64;
        match result {
            Ok(read) => {
                tally.errors += read.errors;
                if tally.first_error.is_none() {
                    tally.first_error = read.first_error;
                }
                tally.hits += read.hits;
                tally.gets += sent.iter().filter(|s| s.get).count() as u64;
                tally.batches.push(took.as_nanos() as u64);
            }
            Err(err) => {
                eprintln!("connection {index}: {err}; reconnecting");
                tally.errors += sent.len() as u64;
                tally
                    .first_error
                    .get_or_insert_with(|| format!("connection broken: {err}"));
                conn = Conn::open(&args.target);
            }
        }
    }
    tally.finished = Some(Instant::now());
    tally
}

/// This process's CPU time so far, in clock ticks (utime + stime of
/// /proc/self/stat; 0 where there is none).
fn own_cpu_ticks() -> u64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0;
    };
    // The fields after the command's closing parenthesis: state is field
    // 3, utime 14, stime 15.
    let Some((_, rest)) = stat.rsplit_once(')') else {
        return 0;
    };
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let field = |n: usize| {
        fields
            .get(n - 3)
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0)
    };
    field(14) + field(15)
}

/// `text` as a JSON string (`null` for none).
fn json_string(text: Option<&str>) -> String {
    let Some(text) = text else {
        return "null".to_string();
    };
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The `q` quantile of sorted `ns`, in microseconds.
fn quantile_us(ns: &[u64], q: f64) -> f64 {
    if ns.is_empty() {
        return 0.0;
    }
    let rank = ((q * ns.len() as f64).ceil() as usize).clamp(1, ns.len());
    ns[rank - 1] as f64 / 1000.0
}

fn idle(args: &Args) -> io::Result<()> {
    let mut conns = Vec::with_capacity(args.idle);
    for _ in 0..args.idle {
        let mut conn = Conn::open(&args.target)?;
        if args.touch {
            conn.stream.write_all(b"get key:0\r\n")?;
            let mut line = conn.line()?;
            while &conn.buf[line.clone()] != b"END" {
                line = conn.line()?;
            }
        }
        conns.push(conn);
    }
    println!("{{\"idle\":{},\"opened\":{}}}", args.idle, conns.len());
    io::stdout().flush()?;
    std::thread::sleep(Duration::from_secs_f64(args.seconds));
    drop(conns);
    Ok(())
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(args) => args,
        Err(err) => {
            eprintln!("{err}");
            return ExitCode::from(2);
        }
    };
    if args.idle > 0 {
        return match idle(&args) {
            Ok(()) => ExitCode::SUCCESS,
            Err(err) => {
                eprintln!("idle connections to {}: {err}", args.target);
                ExitCode::FAILURE
            }
        };
    }
    let value: Arc<Vec<u8>> = Arc::new(
        (0..args.value_bytes)
            .map(|i| b'a' + (i % 26) as u8)
            .collect(),
    );
    let mut warm_errors = 0;
    if args.warm {
        match warm(&args, &value) {
            Ok(errors) => warm_errors = errors,
            Err(err) => {
                eprintln!("warming {}: {err}", args.target);
                return ExitCode::FAILURE;
            }
        }
    }
    if args.seconds == 0.0 {
        println!(
            "{{\"target\":\"{}\",\"warmed\":{},\"errors\":{warm_errors}}}",
            args.target, args.keys
        );
        return ExitCode::SUCCESS;
    }
    // Every connection opens, then all start together.
    let barrier = Arc::new(Barrier::new(args.connections + 1));
    let threads: Vec<_> = (0..args.connections)
        .map(|index| {
            let (args, value, barrier) = (args.clone(), value.clone(), barrier.clone());
            std::thread::spawn(move || drive(&args, index, &value, &barrier))
        })
        .collect();
    barrier.wait();
    let began = Instant::now();
    let mut all = Tally::default();
    let mut last = began;
    for thread in threads {
        let Ok(tally) = thread.join() else {
            eprintln!("a connection's thread panicked");
            return ExitCode::FAILURE;
        };
        all.requests += tally.requests;
        all.errors += tally.errors;
        if all.first_error.is_none() {
            all.first_error = tally.first_error;
        }
        all.gets += tally.gets;
        all.hits += tally.hits;
        all.batches.extend_from_slice(&tally.batches);
        if let Some(done) = tally.finished {
            last = last.max(done);
        }
    }
    let elapsed = (last - began).as_secs_f64();
    let client_cpu_ticks = own_cpu_ticks();
    all.batches.sort_unstable();
    println!(
        "{{\"target\":\"{}\",\"connections\":{},\"pipeline\":{},\"seconds\":{:.3},\
         \"requests\":{},\"requests_per_s\":{:.1},\"p50_us\":{:.1},\"p99_us\":{:.1},\
         \"p999_us\":{:.1},\"errors\":{},\"gets\":{},\"hits\":{},\"batches\":{},\
         \"warm_errors\":{warm_errors},\"client_cpu_ticks\":{client_cpu_ticks},\
         \"first_error\":{}}}",
        args.target,
        args.connections,
        args.pipeline,
        elapsed,
        all.requests,
        all.requests as f64 / elapsed.max(1e-9),
        quantile_us(&all.batches, 0.50),
        quantile_us(&all.batches, 0.99),
        quantile_us(&all.batches, 0.999),
        all.errors,
        all.gets,
        all.hits,
        all.batches.len(),
        json_string(all.first_error.as_deref()),
    );
    ExitCode::SUCCESS
}
