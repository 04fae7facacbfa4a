//! A celebrity key with 30 % of the reads: with `--hot-keys 3` its reads
//! spread over its three replicas within the load bound, every read
//! answers the value last written, and a write is seen by every read
//! after it.
//!
//! Four memcacheds in a ring file, 1,000 keys and `celebrity` set through
//! the proxy. Three clients read for two phases (30 % `celebrity`, the
//! rest uniform; pipelined 100 at a time, each answer checked): one to
//! let the proxy find the hot key, one measured through the stats port
//! (requests per server). Without `--hot-keys` (the same servers, a second
//! proxy) the celebrity's owner takes about 0.3 + 0.7 / 4 = 47.5 % of the
//! reads, max/mean about 1.9; with it max/mean must stay under 1.35
//! (ε = 0.25, plus the bound's +1 per period). Then `celebrity` is set to
//! a new value and 900 reads from three clients must all see it; then a
//! set too large for memcached (which deletes the key) and 900 reads
//! must all miss.

use std::thread::sleep;
use std::time::{Duration, Instant};

use crate::rng::Rng;
use crate::servers::{Server, cluster_file, exchange, exchange_until, memcached, proxy};

/// 900 reads of `celebrity` from three clients at once all answer
/// `expected`.
fn every_read_is(port: u16, expected: &[u8]) {
    std::thread::scope(|scope| {
        for _ in 0..3 {
            scope.spawn(|| {
                let request = b"get celebrity\r\n".repeat(300);
                assert!(exchange(port, &request) == expected.repeat(300));
            });
        }
    });
}

fn requests(stats_port: u16) -> Vec<u64> {
    let text = exchange_until(stats_port, b"", b"\n");
    let doc: serde_json::Value = serde_json::from_slice(&text).expect("stats");
    let servers = doc["servers"].as_array().expect("servers").clone();
    servers
        .iter()
        .map(|s| s["requests"].as_u64().unwrap_or(0))
        .collect()
}

fn hit(key: &str, value: &str) -> Vec<u8> {
    format!("VALUE {key} 0 {}\r\n{value}\r\nEND\r\n", value.len()).into_bytes()
}

/// Three clients reading for `time`, each answer checked.
fn read_phase(port: u16, time: Duration, celebrity: &str, seed: u64) {
    std::thread::scope(|scope| {
        for c in 0..3 {
            scope.spawn(move || {
                let mut rng = Rng(seed + c);
                let end = Instant::now() + time;
                while Instant::now() < end {
                    let (mut request, mut expected) = (Vec::new(), Vec::new());
                    for _ in 0..100 {
                        let key = match rng.below(10) < 3 {
                            true => "celebrity".to_owned(),
                            false => format!("h:{}", rng.below(1000)),
                        };
                        let value = if key == "celebrity" {
                            celebrity.to_owned()
                        } else {
                            key.clone()
                        };
                        request.extend_from_slice(format!("get {key}\r\n").as_bytes());
                        expected.extend_from_slice(&hit(&key, &value));
                    }
                    assert!(
                        exchange(port, &request) == expected,
                        "every read answers the value written"
                    );
                }
            });
        }
    });
}

fn spread(port: u16, stats_port: u16) -> f64 {
    read_phase(port, Duration::from_millis(1_200), "famous", 1);
    let before = requests(stats_port);
    read_phase(port, Duration::from_millis(2_000), "famous", 100);
    let after = requests(stats_port);
    let counts: Vec<u64> = after.iter().zip(&before).map(|(a, b)| a - b).collect();
    let mean = counts.iter().sum::<u64>() as f64 / counts.len() as f64;
    let max = *counts.iter().max().expect("servers") as f64;
    eprintln!("requests per server {counts:?}: max/mean {:.3}", max / mean);
    max / mean
}

#[test]
fn a_celebrity_key_spreads_within_the_bound() {
    let dir = crate::process::scratch_dir("ringwise-proxy-hot");
    let servers: Vec<Server> = (0..4).map(|_| memcached()).collect();
    let file = cluster_file(&dir, "ring", &servers);
    let (plain_stats, hot_stats) = (crate::process::free_port(), crate::process::free_port());
    let plain = proxy(&[
        "--cluster",
        &file,
        "--stats",
        &format!("127.0.0.1:{plain_stats}"),
    ]);
    let hot = proxy(&[
        "--cluster",
        &file,
        "--hot-keys",
        "3",
        "--hot-share",
        "0.1",
        "--hot-epsilon",
        "0.25",
        "--stats",
        &format!("127.0.0.1:{hot_stats}"),
    ]);
    let mut sets = Vec::new();
    for i in 0..1000 {
        let key = format!("h:{i}");
        sets.extend_from_slice(format!("set {key} 0 0 {}\r\n{key}\r\n", key.len()).as_bytes());
    }
    sets.extend_from_slice(b"set celebrity 0 0 6\r\nfamous\r\n");
    assert_eq!(exchange(hot.port, &sets), b"STORED\r\n".repeat(1001));
    let without = spread(plain.port, plain_stats);
    let with = spread(hot.port, hot_stats);
    assert!(
        without > 1.6,
        "without --hot-keys the owner is overloaded: max/mean {without:.3}"
    );
    assert!(
        with < 1.35,
        "with --hot-keys max/mean {with:.3} is over the bound"
    );
    // A write, then every read sees it (no replica keeps the old value).
    assert_eq!(
        exchange(hot.port, b"set celebrity 0 0 5\r\nnewer\r\n"),
        b"STORED\r\n"
    );
    sleep(Duration::from_millis(10));
    every_read_is(hot.port, &hit("celebrity", "newer"));
    // A set too large for memcached deletes the key (memcached's rule): on
    // every replica, so no read finds the value before it.
    let value = vec![b'x'; (2 << 20) + 1];
    let too_large = [
        &format!("set celebrity 0 0 {}\r\n", value.len()).into_bytes()[..],
        &value,
        b"\r\n",
    ]
    .concat();
    assert_eq!(
        exchange(hot.port, &too_large),
        b"SERVER_ERROR object too large for cache\r\n"
    );
    sleep(Duration::from_millis(10));
    every_read_is(hot.port, b"END\r\n");
    let _ = std::fs::remove_dir_all(dir);
}
