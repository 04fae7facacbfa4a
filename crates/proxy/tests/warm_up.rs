//! A membership change through the proxy's file: keys moved to the new
//! server are read from their previous one during the warm-up window,
//! copied, and never read stale after a write.
//!
//! Three memcacheds in a ring file, 3,000 keys `set` through the proxy;
//! the file gains a fourth server and the proxy gets SIGHUP. Then:
//!
//! - with a warm-up window, every key reads back through the proxy (the
//!   moved ones from their previous server), each moved key is now on the
//!   new server too, and the old servers' `fallback_hits` count exactly the
//!   moved keys; a `set`, `delete` or `incr` of a moved key goes to the new
//!   server and removes the old copy, and `incr` starts from the old value;
//! - without one (`--warm-up 0`), exactly the moved keys miss;
//! - after the window ends, a moved key not read in it misses;
//! - writers of versioned values and readers running across the change
//!   never read a version older than the last one written and read back;
//! - without a signal, the polled file is followed, a refused one changes
//!   nothing, and the counters come as JSON lines.

use std::collections::HashSet;
use std::fs;
use std::path::Path;
use std::process::Command;
use std::thread::sleep;
use std::time::{Duration, Instant};

use ringwise::ClusterSpec;

use crate::servers::{Server, exchange, exchange_until, held, memcached, proxy};

const KEYS: usize = 3_000;

fn ring_file(path: &Path, servers: &[&Server]) {
    let mut toml = String::from("algorithm = \"ring\"\n");
    for s in servers {
        toml.push_str(&format!("[[nodes]]\nname = \"{}\"\n", s.address()));
    }
    fs::write(path, toml).expect("write the cluster file");
}

fn keys() -> Vec<Vec<u8>> {
    (0..KEYS)
        .map(|i| format!("warm:{i}").into_bytes())
        .collect()
}

fn set_all(port: u16, keys: &[Vec<u8>]) {
    let mut request = Vec::new();
    for key in keys {
        request.extend_from_slice(
            &[
                b"set ",
                &key[..],
                format!(" 7 0 {}\r\n", key.len()).as_bytes(),
                key,
                b"\r\n",
            ]
            .concat(),
        );
    }
    assert_eq!(exchange(port, &request), b"STORED\r\n".repeat(keys.len()));
}

/// The keys whose owner differs between two files.
fn moved(before: &Path, after: &Path, keys: &[Vec<u8>]) -> HashSet<Vec<u8>> {
    let built = |p: &Path| {
        let text = fs::read_to_string(p).expect("read");
        ClusterSpec::from_toml_built(&text).expect("valid").1
    };
    let (a, b) = (built(before), built(after));
    keys.iter()
        .filter(|k| a.locate(k) != b.locate(k))
        .cloned()
        .collect()
}

/// Sends SIGHUP and waits for the proxy to say the routing changed.
fn hang_up(proxy: &Server) {
    let status = Command::new("kill")
        .args(["-HUP", &proxy.process.id().to_string()])
        .status()
        .expect("run kill");
    assert!(status.success());
    let log = proxy.process.dir().join("log");
    let deadline = Instant::now() + Duration::from_secs(20);
    while !fs::read_to_string(&log)
        .unwrap_or_default()
        .contains("changed the routing")
    {
        assert!(
            Instant::now() < deadline,
            "the proxy did not change its routing"
        );
        sleep(Duration::from_millis(10));
    }
}

fn stats(port: u16) -> serde_json::Value {
    let text = exchange_until(port, b"", b"\n");
    serde_json::from_slice(&text).expect("the stats document")
}

/// `get` of one key through the proxy: its value, if any.
fn get(port: u16, key: &[u8]) -> Option<Vec<u8>> {
    let answer = exchange(port, &[b"get ", key, b"\r\n"].concat());
    let start = answer.windows(2).position(|w| w == b"\r\n")? + 2;
    let end = answer.len().checked_sub(7)?;
    answer
        .starts_with(b"VALUE ")
        .then(|| answer[start..end].to_vec())
}

/// Four memcacheds, a ring file of the first three that will gain the
/// fourth, and the proxy on it with `args` (no polling: SIGHUP only).
struct Change {
    dir: std::path::PathBuf,
    servers: Vec<Server>,
    before: std::path::PathBuf,
    after: std::path::PathBuf,
    file: std::path::PathBuf,
    proxy: Server,
}

impl Change {
    fn start(name: &str, args: &[&str]) -> Change {
        let dir = crate::process::scratch_dir(name);
        let servers: Vec<Server> = (0..4).map(|_| memcached()).collect();
        let (before, after) = (dir.join("before.toml"), dir.join("after.toml"));
        ring_file(&before, &servers[..3].iter().collect::<Vec<_>>());
        ring_file(&after, &servers.iter().collect::<Vec<_>>());
        let file = dir.join("cluster.toml");
        fs::copy(&before, &file).expect("copy");
        let path = file.to_string_lossy().into_owned();
        let mut all = vec!["--cluster", path.as_str(), "--reload-interval", "3600000"];
        all.extend_from_slice(args);
        let proxy = proxy(&all);
        Change {
            dir,
            servers,
            before,
            after,
            file,
            proxy,
        }
    }

    /// The fourth server joins: the file, then SIGHUP.
    fn join(&self) {
        fs::copy(&self.after, &self.file).expect("copy");
        hang_up(&self.proxy);
    }
}

impl Drop for Change {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.dir);
    }
}

#[test]
fn moved_keys_are_read_from_their_previous_server() {
    let stats_port = crate::process::free_port();
    let stats_address = format!("127.0.0.1:{stats_port}");
    let change = Change::start(
        "ringwise-proxy-warm-up",
        &["--warm-up", "3600", "--stats", &stats_address],
    );
    let (servers, proxied) = (&change.servers, &change.proxy);
    let keys = keys();
    set_all(proxied.port, &keys);
    let moved = moved(&change.before, &change.after, &keys);
    assert!(
        moved.len() > KEYS / 8 && moved.len() < KEYS / 2,
        "{} of {KEYS} moved",
        moved.len()
    );
    change.join();
    let new = &servers[3];
    // Three moved keys are kept for the writes below.
    let mut sample = moved.iter().cloned().collect::<Vec<_>>();
    sample.sort();
    let (written, deleted, incremented) = (sample[0].clone(), sample[1].clone(), sample[2].clone());
    for key in &keys {
        if [&written, &deleted, &incremented].contains(&key) {
            continue;
        }
        assert_eq!(
            get(proxied.port, key).as_deref(),
            Some(&key[..]),
            "{:?} reads back",
            String::from_utf8_lossy(key)
        );
        if moved.contains(key) {
            // The copy is sent (not awaited) before the answer: it lands
            // within moments.
            let deadline = Instant::now() + Duration::from_secs(5);
            while held(new.port, key).is_none() && Instant::now() < deadline {
                sleep(Duration::from_millis(1));
            }
            assert_eq!(
                held(new.port, key).as_deref(),
                Some(&key[..]),
                "a moved key is copied to the new server"
            );
        }
    }
    let fallback: u64 = stats(stats_port)["servers"]
        .as_array()
        .expect("servers")
        .iter()
        .map(|s| s["fallback_hits"].as_u64().unwrap_or(0))
        .sum();
    assert_eq!(
        fallback as usize,
        moved.len() - 3,
        "one fallback per moved key read"
    );
    // Writes of moved keys go to the new server and remove the old copy.
    let old_holder = |key: &[u8]| {
        servers[..3]
            .iter()
            .find(|s| held(s.port, key).is_some())
            .map(Server::address)
    };
    assert!(old_holder(&written).is_some());
    assert_eq!(
        exchange(
            proxied.port,
            &[b"set ", &written[..], b" 0 0 3\r\nnew\r\n"].concat()
        ),
        b"STORED\r\n"
    );
    assert_eq!(held(new.port, &written).as_deref(), Some(&b"new"[..]));
    assert_eq!(
        old_holder(&written),
        None,
        "the old copy is gone after a set"
    );
    assert_eq!(
        exchange(proxied.port, &[b"delete ", &deleted[..], b"\r\n"].concat()),
        b"DELETED\r\n"
    );
    assert_eq!(get(proxied.port, &deleted), None);
    assert_eq!(
        old_holder(&deleted),
        None,
        "the old copy is gone after a delete"
    );
    // incr finds the value the key had before the change.
    let owner = servers[..3]
        .iter()
        .find(|s| held(s.port, &incremented).is_some())
        .expect("an old holder");
    assert_eq!(
        exchange(
            owner.port,
            &[b"set ", &incremented[..], b" 0 0 2\r\n41\r\n"].concat()
        ),
        b"STORED\r\n"
    );
    assert_eq!(
        exchange(
            proxied.port,
            &[b"incr ", &incremented[..], b" 1\r\n"].concat()
        ),
        b"42\r\n"
    );
    assert_eq!(held(new.port, &incremented).as_deref(), Some(&b"42"[..]));
}

#[test]
fn without_warm_up_or_after_it_moved_keys_miss() {
    for warm_up in ["0", "2"] {
        let change = Change::start("ringwise-proxy-cold", &["--warm-up", warm_up]);
        let proxied = &change.proxy;
        let keys = keys();
        set_all(proxied.port, &keys);
        let moved = moved(&change.before, &change.after, &keys);
        change.join();
        if warm_up != "0" {
            sleep(Duration::from_millis(2_500));
        }
        let mut missed = HashSet::new();
        for key in &keys {
            match get(proxied.port, key) {
                Some(value) => assert_eq!(value, *key),
                None => {
                    missed.insert(key.clone());
                }
            }
        }
        assert_eq!(
            missed, moved,
            "--warm-up {warm_up}: exactly the moved keys miss"
        );
    }
}

#[test]
fn no_stale_read_across_a_change() {
    let change = Change::start("ringwise-proxy-versions", &["--warm-up", "3600"]);
    let proxied = &change.proxy;
    let port = proxied.port;
    let versioned: Vec<Vec<u8>> = (0..200)
        .map(|i| format!("version:{i}").into_bytes())
        .collect();
    let write = |key: &[u8], v: u64| {
        let value = v.to_string();
        let request = [
            b"set ",
            key,
            format!(" 0 0 {}\r\n{value}\r\n", value.len()).as_bytes(),
        ]
        .concat();
        assert_eq!(exchange(port, &request), b"STORED\r\n");
    };
    for key in &versioned {
        write(key, 0);
    }
    let stop = std::sync::atomic::AtomicBool::new(false);
    let checked = std::sync::atomic::AtomicU64::new(0);
    std::thread::scope(|scope| {
        for worker in 0..3 {
            let (versioned, stop, checked) = (&versioned, &stop, &checked);
            scope.spawn(move || {
                let mut version = 1u64;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    // Each worker owns a third of the keys: it knows the
                    // last version written.
                    for key in versioned.iter().skip(worker).step_by(3) {
                        write(key, version);
                        let read = get(port, key).map(|v| String::from_utf8_lossy(&v).into_owned());
                        assert_eq!(
                            read,
                            Some(version.to_string()),
                            "a read after a write sees it"
                        );
                        checked.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                    version += 1;
                }
            });
        }
        sleep(Duration::from_millis(500));
        change.join();
        sleep(Duration::from_millis(1_500));
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
    });
    // It ran (a slow machine does fewer rounds; none may read stale).
    assert!(checked.load(std::sync::atomic::Ordering::Relaxed) > 100);
}

/// Without a signal: the file is polled (`--reload-interval 50`), a file
/// the proxy refuses changes nothing (and says so), and the counters come
/// as JSON lines on standard output (`--stats-interval 1`).
#[test]
fn the_file_is_followed_without_a_signal() {
    let dir = crate::process::scratch_dir("ringwise-proxy-poll");
    let servers: Vec<Server> = (0..2).map(|_| memcached()).collect();
    let file = dir.join("cluster.toml");
    ring_file(&file, &servers[..1].iter().collect::<Vec<_>>());
    let path = file.to_string_lossy().into_owned();
    let proxied = proxy(&[
        "--cluster",
        &path,
        "--reload-interval",
        "50",
        "--stats-interval",
        "1",
    ]);
    let log = proxied.process.dir().join("log");
    let wait_for = |text: &str, count: usize| {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let logged = fs::read_to_string(&log).unwrap_or_default();
            if logged.matches(text).count() >= count {
                return logged;
            }
            assert!(
                Instant::now() < deadline,
                "no {text:?} in the proxy's output: {logged}"
            );
            sleep(Duration::from_millis(10));
        }
    };
    fs::write(
        &file,
        "algorithm = \"ring\"\n[[nodes]]\nname = \"not an address\"\n",
    )
    .expect("write");
    wait_for("refused, routing unchanged", 1);
    assert_eq!(
        exchange(proxied.port, b"set k 0 0 1\r\nv\r\n"),
        b"STORED\r\n"
    );
    assert_eq!(
        held(servers[0].port, b"k").as_deref(),
        Some(&b"v"[..]),
        "still the first file's pool"
    );
    ring_file(&file, &servers.iter().collect::<Vec<_>>());
    wait_for("changed the routing", 1);
    let logged = wait_for("{\"epoch\":1", 1);
    let line = logged
        .lines()
        .find(|l| l.starts_with("{\"epoch\":1"))
        .expect("a JSON line");
    let doc: serde_json::Value = serde_json::from_str(line).expect("one JSON document a line");
    assert_eq!(doc["servers"].as_array().map(Vec::len), Some(2));
    let _ = fs::remove_dir_all(dir);
}

/// Keys of 187 to 250 bytes: their base64 form is over memcached's 250,
/// so the warm-up read asks them as written. Each moved one reads back
/// from its previous server, and an `append` to one finds its value.
#[test]
fn keys_up_to_250_bytes_are_warmed_and_written() {
    let change = Change::start("ringwise-proxy-long-keys", &["--warm-up", "3600"]);
    let port = change.proxy.port;
    let keys: Vec<Vec<u8>> = (0..400)
        .map(|i| {
            let len = 187 + i % 64;
            let mut key = format!("long:{i}:").into_bytes();
            key.resize(len, b'x');
            key
        })
        .collect();
    set_all(port, &keys);
    let moved = moved(&change.before, &change.after, &keys);
    assert!(moved.len() > 20, "{} moved", moved.len());
    change.join();
    let mut moved: Vec<Vec<u8>> = moved.into_iter().collect();
    moved.sort();
    // The last one is not read first: its append copies it.
    let (read, appended) = moved.split_at(moved.len() - 1);
    for key in read {
        assert_eq!(
            get(port, key).as_deref(),
            Some(&key[..]),
            "a moved long key"
        );
    }
    let key = &appended[0];
    let append = [b"append ", &key[..], b" 0 0 1\r\n!\r\n"].concat();
    assert_eq!(exchange(port, &append), b"STORED\r\n");
    let mut want = key.clone();
    want.push(b'!');
    assert_eq!(get(port, key).as_deref(), Some(&want[..]));
}
