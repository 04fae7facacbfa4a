//! Ketama flavor `twemproxy` against a real twemproxy (`nutcracker`) in
//! front of real memcached servers.
//!
//! Four configurations, one after the other, each a nutcracker pool with
//! `distribution: ketama` and `auto_eject_hosts: false` over 2 to 12
//! `memcached -l 127.0.0.1 -p PORT -U 0 -u root` servers (`-u root` is
//! memcached's required user when run as root, ignored otherwise) with
//! weights 1 to 1000:
//!
//! 1. `hash: fnv1a_64` (twemproxy's default; ringwise `fnv1a64-twemproxy`,
//!    its 32-bit FNV-1a with sign-extended bytes), servers `host:port:weight`;
//! 2. `hash: md5` (ringwise `md5-le32`), servers `host:port:weight`;
//! 3. `hash: fnv1a_64` with `hash_tag: "{}"`, and keys holding tags (many
//!    sharing one, some `{}` or unclosed);
//! 4. `hash: fnv1a_64`, servers with explicit names (`host:port:weight
//!    name`): twemproxy hashes the name then.
//!
//! Without a name twemproxy hashes `host` for port 11211 and `host:port`
//! otherwise; ringwise's node is `127.0.0.1:PORT` and its flavor drops
//! `:11211` itself. So one memcached of each unnamed configuration listens
//! on 11211 when that port is free on 127.0.0.1; when it is not, the test
//! says so on its output and still compares the rest.
//!
//! Every memcached and the nutcracker run in the foreground as children,
//! each killed by its pid when its configuration ends, however it ends
//! (`process::Guard`); nutcracker's config (checked first with `-t`), log,
//! pid file and stats port (loopback) are its own. Keys (10,000 a pool:
//! printable ASCII, some non-ASCII UTF-8, some up to 250 bytes) are `set`
//! through nutcracker, pipelined, with the key as the value; then every
//! memcached is asked `get` for every key, and the one that holds it (it
//! must be exactly one, with the key as its value) is twemproxy's choice.
//! `ringwise lookup` on the cluster file must name the same server for
//! every key.
//!
//! twemproxy sorts its points with `qsort`, so a point two servers share
//! has no defined owner: only server lists without one are compared (the
//! library's own ring is checked for equal points owned by different
//! nodes, and such a list is drawn again, saying so).

use std::collections::HashSet;
use std::fs::{self, File};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

use super::process::{self, Guard, free_port, scratch_dir};
use super::{Rng, assert_agree, cluster_file, random_keys, ringwise_lookup, shared_points};
use crate::support::TempDir;

const SEED: u64 = 0x0074_7765_6D70;
const KEYS: usize = 10_000;
/// Requests in flight on a connection.
const BATCH: usize = 1_000;
pub(super) const READY_WITHIN: Duration = Duration::from_secs(10);
pub(super) const INSTALL_HINT: &str = "run scripts/install-test-deps (it installs the Debian packages \
                            `nutcracker` and `memcached`); this test is never skipped";

/// One pool's settings.
#[derive(Debug)]
struct Config {
    /// twemproxy's `hash:`.
    hash: &'static str,
    /// ringwise's name of the same key hash.
    ringwise_hash: &'static str,
    /// `hash_tag: "{}"`.
    tagged: bool,
    /// Servers with explicit names.
    named: bool,
}

const CONFIGS: [Config; 4] = [
    Config {
        hash: "fnv1a_64",
        ringwise_hash: "fnv1a64-twemproxy",
        tagged: false,
        named: false,
    },
    Config {
        hash: "md5",
        ringwise_hash: "md5-le32",
        tagged: false,
        named: false,
    },
    Config {
        hash: "fnv1a_64",
        ringwise_hash: "fnv1a64-twemproxy",
        tagged: true,
        named: false,
    },
    Config {
        hash: "fnv1a_64",
        ringwise_hash: "fnv1a64-twemproxy",
        tagged: false,
        named: true,
    },
];

/// One memcached of a pool.
#[derive(Debug, Clone)]
struct Server {
    port: u16,
    weight: u32,
    name: Option<String>,
}

impl Server {
    /// The ringwise node: the explicit name, else `127.0.0.1:PORT`.
    fn node(&self) -> String {
        self.name
            .clone()
            .unwrap_or_else(|| format!("127.0.0.1:{}", self.port))
    }

    /// The pool's `servers:` item.
    fn item(&self) -> String {
        let address = format!("127.0.0.1:{}:{}", self.port, self.weight);
        match &self.name {
            Some(name) => format!("{address} {name}"),
            None => address,
        }
    }
}

/// 11211 on 127.0.0.1 if it is free now.
fn default_port_if_free() -> Option<u16> {
    TcpListener::bind(("127.0.0.1", 11211)).ok().map(|_| 11211)
}

/// 2 to 12 servers on distinct free ports (the first on 11211 if `default`
/// is given), weights 1 to 1000, named `cache-...` if `named`.
fn random_servers(rng: &mut Rng, default: Option<u16>, named: bool) -> Vec<Server> {
    let n = rng.between(2, 12);
    let mut servers: Vec<Server> = Vec::with_capacity(n);
    while servers.len() < n {
        let port = match (servers.is_empty(), default) {
            (true, Some(port)) => port,
            _ => free_port(),
        };
        if servers.iter().any(|s| s.port == port) {
            continue;
        }
        let name = named.then(|| {
            let letters: String = (0..rng.between(1, 8))
                .map(|_| char::from(b'a' + rng.below(26) as u8))
                .collect();
            format!("cache-{letters}.{}", servers.len())
        });
        servers.push(Server {
            port,
            weight: rng.between(1, 1000) as u32,
            name,
        });
    }
    servers
}

/// The cluster file of a pool.
fn cluster_toml(config: &Config, servers: &[Server]) -> String {
    let mut header = format!(
        "algorithm = \"ketama\"\nflavor = \"twemproxy\"\nhash = \"{}\"",
        config.ringwise_hash
    );
    if config.tagged {
        header.push_str("\nhash_tag = \"{}\"");
    }
    let nodes: Vec<_> = servers
        .iter()
        .map(|s| (s.node(), format!("weight = {}", s.weight)))
        .collect();
    cluster_file(&header, &nodes)
}

/// The test's keys: `random_keys`, a tenth of them replaced by long ones
/// (200 to 250 ASCII bytes, memcached's limit), and for a tagged pool a
/// third of them carrying a `{tag}` (one of 40, so many keys share one),
/// an empty `{}` or an unclosed `{`.
fn keys(rng: &mut Rng, tagged: bool) -> Vec<String> {
    let mut seen = HashSet::new();
    let mut keys = Vec::with_capacity(KEYS);
    while keys.len() < KEYS {
        for key in random_keys(rng, KEYS - keys.len()) {
            let key = match (rng.below(10), rng.below(3)) {
                (0, _) => {
                    let fill = rng.between(200, 250) - key.len().min(200);
                    let pad: String = (0..fill)
                        .map(|_| char::from(b'a' + rng.below(26) as u8))
                        .collect();
                    format!("{key}{pad}")
                }
                (_, 0) if tagged => match rng.below(10) {
                    0 => format!("{key}{{}}x"),
                    1 => format!("x{{{key}"),
                    _ => format!("user:{{t{}}}:{key}", rng.below(40)),
                },
                _ => key,
            };
            if key.len() <= 250 && seen.insert(key.clone()) {
                keys.push(key);
            }
        }
    }
    keys
}

/// A running server and the port it serves.
pub(super) struct Running {
    pub(super) process: Guard,
    pub(super) port: u16,
    pub(super) what: &'static str,
}

impl Running {
    /// Waits until the port accepts connections: for a memcached, until
    /// its `stats` show this process's pid (not another program that held
    /// the port, 11211 above all, while this one failed to bind it).
    pub(super) fn ready(&mut self, deadline: Instant) -> Result<(), String> {
        let (what, id) = (self.what, self.process.id());
        let own = |port| match what {
            "memcached" => stats_pid(port).is_ok_and(|pid| pid == id),
            _ => TcpStream::connect(("127.0.0.1", port)).is_ok(),
        };
        while !own(self.port) {
            if let Some(status) = self.process.exited() {
                return Err(format!("{} exited ({status}): {}", self.what, self.log()));
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "{} accepts no connection within {READY_WITHIN:?}: {}",
                    self.what,
                    self.log()
                ));
            }
            sleep(Duration::from_millis(10));
        }
        Ok(())
    }

    pub(super) fn log(&self) -> String {
        fs::read_to_string(self.process.dir().join("log")).unwrap_or_default()
    }
}

/// The pid in a memcached's `stats`.
fn stats_pid(port: u16) -> std::io::Result<u32> {
    let (mut stream, mut reader) = connect(port)?;
    stream.write_all(b"stats\r\n")?;
    loop {
        let line = read_line(&mut reader)?;
        if let Some(pid) = line.strip_prefix("STAT pid ") {
            return pid.parse().map_err(std::io::Error::other);
        }
        if line == "END" || line.is_empty() {
            return Err(std::io::Error::other(format!("no pid in stats: {line:?}")));
        }
    }
}

pub(super) fn memcached(port: u16) -> Running {
    let dir = scratch_dir("ringwise-memcached");
    let log = File::create(dir.join("log")).expect("create the log file");
    let mut command = process::server("memcached");
    command
        .args(["-l", "127.0.0.1", "-p", &port.to_string(), "-U", "0"])
        .args(["-u", "root", "-t", "1"])
        .stdin(Stdio::null())
        .stdout(log.try_clone().expect("clone the log handle"))
        .stderr(log);
    Running {
        process: Guard::spawn(&mut command, dir, INSTALL_HINT),
        port,
        what: "memcached",
    }
}

/// The nutcracker binary: Debian puts it in /usr/sbin, which may not be on
/// a user's PATH.
pub(super) fn nutcracker_binary() -> &'static str {
    match Path::new("/usr/sbin/nutcracker").exists() {
        true => "/usr/sbin/nutcracker",
        false => "nutcracker",
    }
}

fn nutcracker(config: &Config, servers: &[Server]) -> Running {
    let dir = scratch_dir("ringwise-nutcracker");
    let listen = free_port();
    let mut yaml = format!(
        "pool:\n  listen: 127.0.0.1:{listen}\n  hash: {}\n  distribution: ketama\n  \
         auto_eject_hosts: false\n  timeout: 5000\n",
        config.hash
    );
    if config.tagged {
        yaml.push_str("  hash_tag: \"{}\"\n");
    }
    yaml.push_str("  servers:\n");
    for server in servers {
        yaml.push_str(&format!("    - {}\n", server.item()));
    }
    let conf = dir.join("nutcracker.yml");
    fs::write(&conf, &yaml).expect("write nutcracker.yml");
    process::output(
        Command::new(nutcracker_binary())
            .arg("-t")
            .arg("-c")
            .arg(&conf),
        INSTALL_HINT,
    );
    let mut command = process::server(nutcracker_binary());
    command
        .arg("-c")
        .arg(&conf)
        .arg("-o")
        .arg(dir.join("log"))
        .arg("-p")
        .arg(dir.join("nutcracker.pid"))
        .args(["-s", &free_port().to_string(), "-a", "127.0.0.1"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    Running {
        process: Guard::spawn(&mut command, dir, INSTALL_HINT),
        port: listen,
        what: "nutcracker",
    }
}

/// The memcached servers and the nutcracker of a pool, once all accept
/// connections; dropping them kills each by its pid.
fn start(config: &Config, servers: &[Server]) -> Result<(Vec<Running>, Running), String> {
    let deadline = Instant::now() + READY_WITHIN;
    let mut memcacheds: Vec<Running> = servers.iter().map(|s| memcached(s.port)).collect();
    for server in &mut memcacheds {
        server.ready(deadline)?;
    }
    let mut proxy = nutcracker(config, servers);
    proxy.ready(deadline)?;
    Ok((memcacheds, proxy))
}

fn connect(port: u16) -> std::io::Result<(TcpStream, BufReader<TcpStream>)> {
    let stream = TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    let reader = BufReader::new(stream.try_clone()?);
    Ok((stream, reader))
}

fn read_line(reader: &mut impl BufRead) -> std::io::Result<String> {
    let mut line = Vec::new();
    reader.read_until(b'\n', &mut line)?;
    Ok(String::from_utf8_lossy(&line).trim_end().to_owned())
}

/// `set key 0 0 len` with the key as the value, through nutcracker.
pub(super) fn set_all(port: u16, keys: &[String]) -> std::io::Result<()> {
    let (mut stream, mut reader) = connect(port)?;
    for batch in keys.chunks(BATCH) {
        let requests: String = batch
            .iter()
            .map(|k| format!("set {k} 0 0 {}\r\n{k}\r\n", k.len()))
            .collect();
        stream.write_all(requests.as_bytes())?;
        for key in batch {
            let reply = read_line(&mut reader)?;
            assert_eq!(reply, "STORED", "nutcracker's reply to `set {key:?}`");
        }
    }
    Ok(())
}

/// Which of `keys` the memcached on `port` holds (`get`, pipelined); each
/// held value must be the key.
pub(super) fn held(port: u16, keys: &[String]) -> std::io::Result<Vec<bool>> {
    let (mut stream, mut reader) = connect(port)?;
    let mut held = Vec::with_capacity(keys.len());
    for batch in keys.chunks(BATCH) {
        let requests: String = batch.iter().map(|k| format!("get {k}\r\n")).collect();
        stream.write_all(requests.as_bytes())?;
        for key in batch {
            let line = read_line(&mut reader)?;
            if line == "END" {
                held.push(false);
                continue;
            }
            let length: usize = line
                .strip_prefix(&format!("VALUE {key} 0 "))
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("memcached {port}, `get {key:?}`: {line:?}"));
            let mut value = vec![0; length + 2];
            reader.read_exact(&mut value)?;
            assert_eq!(&value[..length], key.as_bytes(), "the value of {key:?}");
            assert_eq!(read_line(&mut reader)?, "END", "after the value of {key:?}");
            held.push(true);
        }
    }
    Ok(held)
}

/// The node of the one server that holds each key.
fn holders(servers: &[Server], keys: &[String]) -> std::io::Result<Vec<String>> {
    let mut owners: Vec<Option<String>> = vec![None; keys.len()];
    for server in servers {
        for (i, held) in held(server.port, keys)?.into_iter().enumerate() {
            if !held {
                continue;
            }
            if let Some(other) = &owners[i] {
                panic!("{:?} is held by {other} and {}", keys[i], server.node());
            }
            owners[i] = Some(server.node());
        }
    }
    Ok(keys
        .iter()
        .zip(owners)
        .map(|(key, owner)| owner.unwrap_or_else(|| panic!("no memcached holds {key:?}")))
        .collect())
}

/// Servers for `config` whose ring has no point two servers share.
fn servers_without_shared_points(rng: &mut Rng, config: &Config) -> Vec<Server> {
    loop {
        let default = match config.named {
            true => None,
            false => default_port_if_free(),
        };
        if default.is_none() && !config.named {
            println!(
                "twemproxy, {config:?}: port 11211 is taken on 127.0.0.1, so no server \
                 listens there and twemproxy's `host` naming of port 11211 is not compared"
            );
        }
        let servers = random_servers(rng, default, config.named);
        let shared = shared_points(&cluster_toml(config, &servers));
        if shared.is_empty() {
            return servers;
        }
        println!("twemproxy: {servers:?} drawn again, shared points {shared:?}");
    }
}

#[test]
fn twemproxy_agrees() {
    let dir = TempDir::create("compat-twemproxy");
    let mut rng = Rng(SEED);
    for config in &CONFIGS {
        let keys = keys(&mut rng, config.tagged);
        // Bytes >= 0x80 are where fnv1a_64's sign extension shows.
        assert!(keys.iter().any(|k| !k.is_ascii()), "some non-ASCII keys");
        let mut failure = String::new();
        let (servers, running) = loop {
            // Ports are chosen free, but may be taken before a server
            // binds them.
            let servers = servers_without_shared_points(&mut rng, config);
            match start(config, &servers) {
                Ok(running) => break (servers, running),
                Err(why) if failure.is_empty() => failure = why,
                Err(why) => panic!("the pool did not start twice: {failure}\n{why}"),
            }
        };
        let (memcacheds, proxy) = running;
        set_all(proxy.port, &keys)
            .unwrap_or_else(|err| panic!("setting through nutcracker: {err}: {}", proxy.log()));
        let theirs = holders(&servers, &keys).expect("asking the memcached servers");
        let cluster = dir.write("cluster.toml", &cluster_toml(config, &servers));
        let ours = ringwise_lookup(Path::new(&cluster), &keys);
        assert_agree(
            &format!("twemproxy, {config:?}: {servers:?}"),
            &keys,
            &theirs,
            &ours,
        );
        drop(proxy);
        drop(memcacheds);
    }
}
