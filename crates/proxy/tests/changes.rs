//! Several membership changes in a row: what each one keeps of the
//! promise that the history checker judges at random in `consistency`,
//! pinned on fixed cases.
//!
//! - a server that leaves and comes back never serves the values it held
//!   before it left (it is flushed before it gets keys again);
//! - a change that moves nothing (the same servers listed in another
//!   order) does not end an earlier change's warm-up window;
//! - a membership file over the 64 MiB cap is refused and changes nothing;
//! - with every server ejected, none is asked (a stalled server that wakes
//!   holds values overwritten meanwhile until it is flushed): the client
//!   gets `SERVER_ERROR`. The 25-minute history run found this one.

use std::fs;
use std::path::Path;
use std::process::Command;
use std::thread::sleep;
use std::time::{Duration, Instant};

use crate::process::scratch_dir;
use crate::servers::{Server, exchange, exchange_until, memcached, proxy};

fn pool_file(path: &Path, servers: &[&Server]) {
    let mut toml = String::from("algorithm = \"ring\"\n");
    for s in servers {
        toml.push_str(&format!("[[nodes]]\nname = \"{}\"\n", s.address()));
    }
    let tmp = path.with_extension("tmp");
    fs::write(&tmp, toml).expect("write the cluster file");
    fs::rename(&tmp, path).expect("rename");
}

/// Sends SIGHUP and waits until the stats document's epoch is `epoch`.
fn reload(proxy: &Server, stats: u16, epoch: u64) {
    let status = Command::new("kill")
        .args(["-HUP", &proxy.process.id().to_string()])
        .status()
        .expect("run kill");
    assert!(status.success());
    let deadline = Instant::now() + Duration::from_secs(20);
    while document(stats)["epoch"] != epoch {
        assert!(
            Instant::now() < deadline,
            "no epoch {epoch}: {}",
            document(stats)
        );
        sleep(Duration::from_millis(10));
    }
}

fn document(port: u16) -> serde_json::Value {
    let text = exchange_until(port, b"", b"\n");
    serde_json::from_slice(&text).unwrap_or_default()
}

fn set(port: u16, key: &str, value: &str) {
    let request = format!("set {key} 0 0 {}\r\n{value}\r\n", value.len());
    assert_eq!(exchange(port, request.as_bytes()), b"STORED\r\n", "{key}");
}

fn get(port: u16, key: &str) -> Option<String> {
    let answer = exchange(port, format!("get {key}\r\n").as_bytes());
    let text = String::from_utf8_lossy(&answer).into_owned();
    let mut lines = text.split("\r\n");
    let header = lines.next()?;
    header
        .starts_with("VALUE ")
        .then(|| lines.next().unwrap_or("").to_owned())
}

fn keys() -> Vec<String> {
    (0..600).map(|i| format!("flap:{i}")).collect()
}

struct Pool {
    servers: Vec<Server>,
    file: std::path::PathBuf,
    proxy: Server,
    stats: u16,
    _dir: std::path::PathBuf,
}

fn start(name: &str, warm_up: &str) -> Pool {
    let dir = scratch_dir(name);
    let servers: Vec<Server> = (0..4).map(|_| memcached()).collect();
    let file = dir.join("pool.toml");
    pool_file(&file, &servers.iter().collect::<Vec<_>>());
    let stats = crate::process::free_port();
    let path = file.to_string_lossy().into_owned();
    let stats_address = format!("127.0.0.1:{stats}");
    let proxy = proxy(&[
        "--cluster",
        &path,
        "--reload-interval",
        "3600000",
        "--warm-up",
        warm_up,
        "--stats",
        &stats_address,
    ]);
    Pool {
        servers,
        file,
        proxy,
        stats,
        _dir: dir,
    }
}

#[test]
fn a_server_that_leaves_and_returns_never_serves_its_old_values() {
    for warm_up in ["0", "3600"] {
        let pool = start("ringwise-proxy-flap", warm_up);
        let port = pool.proxy.port;
        for key in keys() {
            set(port, &key, "old");
        }
        // The fourth server leaves; every key is written again (its keys on
        // their next servers); it comes back.
        let (all, three): (Vec<&Server>, Vec<&Server>) = (
            pool.servers.iter().collect(),
            pool.servers[..3].iter().collect(),
        );
        pool_file(&pool.file, &three);
        reload(&pool.proxy, pool.stats, 1);
        for key in keys() {
            set(port, &key, "new");
        }
        pool_file(&pool.file, &all);
        reload(&pool.proxy, pool.stats, 2);
        for key in keys() {
            let found = get(port, &key);
            match warm_up {
                // No window: its keys miss on it (it was flushed).
                "0" => assert_ne!(found.as_deref(), Some("old"), "{key}"),
                // A window: read from where they were written.
                _ => assert_eq!(found.as_deref(), Some("new"), "{key}"),
            }
        }
    }
}

#[test]
fn a_change_that_moves_nothing_keeps_the_window_open() {
    let pool = start("ringwise-proxy-reorder", "3600");
    let port = pool.proxy.port;
    let three: Vec<&Server> = pool.servers[..3].iter().collect();
    pool_file(&pool.file, &three);
    reload(&pool.proxy, pool.stats, 1);
    for key in keys() {
        set(port, &key, "v");
    }
    // The fourth joins (keys move to it), then the file lists the same
    // four in reverse: nothing moves, and the moved keys still read back
    // from their previous servers.
    let mut all: Vec<&Server> = pool.servers.iter().collect();
    pool_file(&pool.file, &all);
    reload(&pool.proxy, pool.stats, 2);
    all.reverse();
    pool_file(&pool.file, &all);
    reload(&pool.proxy, pool.stats, 3);
    for key in keys() {
        assert_eq!(get(port, &key).as_deref(), Some("v"), "{key}");
    }
}

#[test]
fn a_membership_file_over_the_cap_changes_nothing() {
    let pool = start("ringwise-proxy-huge-file", "0");
    let port = pool.proxy.port;
    set(port, "k", "v");
    // 65 MiB of zeros where the file was: refused, the routing stays.
    let zeros = vec![0u8; 65 << 20];
    fs::write(&pool.file, &zeros).expect("write");
    let status = Command::new("kill")
        .args(["-HUP", &pool.proxy.process.id().to_string()])
        .status()
        .expect("run kill");
    assert!(status.success());
    let log = pool.proxy.process.dir().join("log");
    let deadline = Instant::now() + Duration::from_secs(20);
    while !fs::read_to_string(&log).unwrap_or_default().contains("MiB") {
        assert!(Instant::now() < deadline, "no refusal in the log");
        sleep(Duration::from_millis(10));
    }
    assert_eq!(document(pool.stats)["epoch"], 0);
    assert_eq!(get(port, "k").as_deref(), Some("v"));
}

fn signal(server: &Server, name: &str) {
    let status = Command::new("kill")
        .args([&format!("-{name}"), &server.process.id().to_string()])
        .status()
        .expect("run kill");
    assert!(status.success(), "kill -{name}");
}

#[test]
fn with_every_server_ejected_none_is_asked() {
    let dir = scratch_dir("ringwise-proxy-all-out");
    let servers: Vec<Server> = (0..2).map(|_| memcached()).collect();
    let file = dir.join("pool.toml");
    pool_file(&file, &servers.iter().collect::<Vec<_>>());
    let text = fs::read_to_string(&file).expect("read");
    let (_, keyed) = ringwise::ClusterSpec::from_toml_built(&text).expect("valid");
    let path = file.to_string_lossy().into_owned();
    let proxy = proxy(&[
        "--cluster",
        &path,
        "--auto-eject-hosts",
        "true",
        "--server-failure-limit",
        "1",
        "--timeout",
        "300",
        "--server-retry-timeout",
        "60000",
    ]);
    let port = proxy.port;
    let (first, second) = (&servers[0], &servers[1]);
    let key = (0..1000)
        .map(|i| format!("k:{i}"))
        .find(|k| keyed.locate(k.as_bytes()) == Some(first.address().as_str()))
        .expect("a key of the first server");
    set(port, &key, "old");
    // The first server stalls and is ejected; the key is written on the
    // second; then the second stalls and is ejected too, and the first
    // wakes, still holding "old" (it is flushed only when retried).
    signal(first, "STOP");
    assert_eq!(get(port, &key), None, "a stalled server answers nothing");
    set(port, &key, "new");
    signal(second, "STOP");
    assert_eq!(get(port, &key), None);
    signal(first, "CONT");
    let answer = exchange(port, format!("get {key}\r\n").as_bytes());
    signal(second, "CONT");
    assert_eq!(
        String::from_utf8_lossy(&answer),
        "SERVER_ERROR ringwise-proxy: no server available (the pool has none, or all are ejected)\r\n",
        "an ejected server was asked"
    );
    let _ = fs::remove_dir_all(dir);
}
