//! `hash-type consistent` against a real HAProxy (Debian's 2.6).
//!
//! One haproxy process (`-db`: foreground, its pid is the one to kill;
//! started through `setpriv --pdeathsig KILL`, killed by pid when the test
//! ends) holds three random server lists (2 to 12 servers, weights 1 to
//! 256, about a third of them with an explicit random `id`, the others
//! numbered by HAProxy) and, for each list, one backend per key hash and
//! modifier: `sdbm`, `djb2`, `wt6`, `crc32`, each with and without
//! `avalanche`, all `balance hdr(X-Key)`. Every server is a port of one
//! frontend of the same haproxy that answers its own port
//! (`http-request return ... %[dst_port]`), so the body names the server
//! the backend chose. Keys go in the `X-Key` header of pipelined requests
//! (HAProxy hashes the header's first comma-separated value: the keys
//! hold no comma or quote). Every key must agree with `ringwise lookup`.
//!
//! Then the Runtime API (the stats socket, `level admin`): on one backend
//! of each list a server gets a new weight (`set server b/s weight N`) and
//! another is disabled (`disable server b/s`); the keys that move must be
//! exactly those `ringwise plan --reweight ... --remove ... --keys` lists.
//!
//! Every backend is also read by the importer from the very haproxy.cfg
//! haproxy runs (`--cluster-format haproxy --pool BACKEND`), for `lookup`
//! and for the `plan` of the run-time changes.

use std::collections::HashMap;
use std::fs;
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::Stdio;
use std::thread::sleep;
use std::time::{Duration, Instant};

use super::nginx::route;
use super::process::{Guard, free_port};
use super::{Rng, assert_agree, cluster_file, random_keys, ringwise_lookup, ringwise_lookup_with};
use crate::support::{TempDir, assert_success, ringwise, stdout};

const SEED: u64 = 0x6861_7072_6f78;
const LISTS: usize = 3;
const KEYS: usize = 3_000;
const READY_WITHIN: Duration = Duration::from_secs(10);
const INSTALL_HINT: &str = "run scripts/install-test-deps (it installs the Debian package \
                            `haproxy`); this test is never skipped";
/// HAProxy's key hashes and ringwise's names for them (the same).
const FUNCTIONS: [&str; 4] = ["sdbm", "djb2", "wt6", "crc32"];

/// A server: its name, answer port, weight and explicit id.
#[derive(Debug, Clone)]
struct Server {
    name: String,
    port: u16,
    weight: u32,
    id: Option<u32>,
}

/// A backend: which list, hash function and modifier, and its front port.
#[derive(Debug)]
struct Backend {
    list: usize,
    function: &'static str,
    avalanche: bool,
    front: u16,
}

impl Backend {
    fn name(&self) -> String {
        let modifier = if self.avalanche { "-avalanche" } else { "" };
        format!("b{}-{}{modifier}", self.list, self.function)
    }
}

fn server_lists(rng: &mut Rng) -> Vec<Vec<Server>> {
    (0..LISTS)
        .map(|list| {
            let n = rng.between(2, 12);
            let mut ids = Vec::new();
            (0..n)
                .map(|j| {
                    let id = match rng.below(3) {
                        0 => loop {
                            let id = rng.between(1, 40) as u32;
                            if !ids.contains(&id) {
                                ids.push(id);
                                break Some(id);
                            }
                        },
                        _ => None,
                    };
                    Server {
                        name: format!("l{list}s{j}"),
                        port: free_port(),
                        weight: rng.between(1, 256) as u32,
                        id,
                    }
                })
                .collect()
        })
        .collect()
}

fn backends(lists: &[Vec<Server>]) -> Vec<Backend> {
    let mut all = Vec::new();
    for list in 0..lists.len() {
        for function in FUNCTIONS {
            for avalanche in [false, true] {
                all.push(Backend {
                    list,
                    function,
                    avalanche,
                    front: free_port(),
                });
            }
        }
    }
    all
}

fn server_line(server: &Server) -> String {
    let id = server.id.map(|id| format!(" id {id}")).unwrap_or_default();
    format!(
        "  server {} 127.0.0.1:{} weight {}{id}\n",
        server.name, server.port, server.weight
    )
}

/// The `backend` section of one backend, as an operator would write it.
fn backend_section(backend: &Backend, servers: &[Server]) -> String {
    let modifier = if backend.avalanche { " avalanche" } else { "" };
    let mut text = format!(
        "backend {}\n  balance hdr(X-Key)\n  hash-type consistent {}{modifier}\n",
        backend.name(),
        backend.function
    );
    text.extend(servers.iter().map(server_line));
    text
}

fn haproxy_cfg(dir: &Path, lists: &[Vec<Server>], backends: &[Backend]) -> String {
    let mut cfg = format!(
        "global\n  nbthread 1\n  stats socket {}/admin.sock level admin\n\n\
         defaults\n  mode http\n  timeout connect 5s\n  timeout client 30s\n  \
         timeout server 30s\n\n",
        dir.display()
    );
    let binds: Vec<String> = lists
        .iter()
        .flatten()
        .map(|s| format!("127.0.0.1:{}", s.port))
        .collect();
    cfg += &format!(
        "frontend answer\n  bind {}\n  http-request return status 200 content-type \
         text/plain lf-string \"%[dst_port]\"\n\n",
        binds.join(",")
    );
    for backend in backends {
        cfg += &format!(
            "frontend f-{0}\n  bind 127.0.0.1:{1}\n  default_backend {0}\n\n",
            backend.name(),
            backend.front
        );
        cfg += &backend_section(backend, &lists[backend.list]);
        cfg += "\n";
    }
    cfg
}

/// Starts haproxy on `cfg` and waits until every front port answers.
fn start(dir: &Path, cfg: &str, backends: &[Backend]) -> Result<Guard, String> {
    let scratch = super::process::scratch_dir("ringwise-haproxy");
    let file = scratch.join("haproxy.cfg");
    fs::write(&file, cfg).expect("write haproxy.cfg");
    fs::write(dir.join("haproxy.cfg"), cfg).expect("keep a copy");
    let log = fs::File::create(scratch.join("haproxy.log")).expect("log file");
    let mut command = super::process::server(haproxy_binary());
    command
        .arg("-db")
        .arg("-f")
        .arg(&file)
        .stdin(Stdio::null())
        .stdout(log.try_clone().expect("log file"))
        .stderr(log);
    let mut haproxy = Guard::spawn(&mut command, scratch, INSTALL_HINT);
    let deadline = Instant::now() + READY_WITHIN;
    for backend in backends {
        while std::net::TcpStream::connect(("127.0.0.1", backend.front)).is_err() {
            if let Some(status) = haproxy.exited() {
                return Err(format!("haproxy exited ({status}): {}", log_of(&haproxy)));
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "no answer within {READY_WITHIN:?}: {}",
                    log_of(&haproxy)
                ));
            }
            sleep(Duration::from_millis(20));
        }
    }
    Ok(haproxy)
}

/// Debian puts haproxy in /usr/sbin, which may not be on a user's PATH.
fn haproxy_binary() -> &'static str {
    match Path::new("/usr/sbin/haproxy").exists() {
        true => "/usr/sbin/haproxy",
        false => "haproxy",
    }
}

fn log_of(haproxy: &Guard) -> String {
    fs::read_to_string(haproxy.dir().join("haproxy.log")).unwrap_or_default()
}

/// One Runtime API command on the stats socket; HAProxy answers and
/// closes the connection.
fn runtime(dir: &Path, command: &str) -> String {
    let mut socket = UnixStream::connect(dir.join("admin.sock")).expect("stats socket");
    socket
        .write_all(format!("{command}\n").as_bytes())
        .expect("send a command");
    let mut answer = String::new();
    socket.read_to_string(&mut answer).expect("read the answer");
    answer
}

/// The server names HAProxy routed `keys` to through `backend`.
fn routed(
    haproxy: &Guard,
    backend: &Backend,
    names: &HashMap<String, String>,
    keys: &[String],
) -> Vec<String> {
    let ports = route(backend.front, keys)
        .unwrap_or_else(|err| panic!("routing through haproxy: {err}: {}", log_of(haproxy)));
    ports
        .into_iter()
        .map(|port| names.get(port.trim()).cloned().unwrap_or(port))
        .collect()
}

/// The cluster file of a backend.
fn cluster(backend: &Backend, servers: &[Server]) -> String {
    let header = format!(
        "algorithm = \"haproxy\"\nhash = \"{}\"\navalanche = {}",
        backend.function, backend.avalanche
    );
    let nodes: Vec<(String, String)> = servers
        .iter()
        .map(|s| {
            let id = s.id.map(|id| format!("\nid = {id}")).unwrap_or_default();
            (s.name.clone(), format!("weight = {}{id}", s.weight))
        })
        .collect();
    cluster_file(&header, &nodes)
}

/// Keys HAProxy hashes whole: no comma (it takes the first value of a
/// list) and no quote (a quoted string is one value).
fn header_keys(rng: &mut Rng, n: usize) -> Vec<String> {
    let mut keys = random_keys(rng, 2 * n);
    keys.retain(|k| !k.contains(',') && !k.contains('"'));
    keys.truncate(n);
    assert_eq!(keys.len(), n, "enough keys without a comma or quote");
    keys
}

/// The moves `ringwise plan` lists for `change`: `key -> (old, new)`.
fn planned(cluster: &Path, change: &[&str], keys: &Path) -> HashMap<String, (String, String)> {
    let mut args = vec!["plan", "--from", cluster.to_str().expect("utf-8")];
    args.extend_from_slice(change);
    args.extend(["--keys", keys.to_str().expect("utf-8")]);
    let out = ringwise(&args, b"");
    assert_success(&out);
    stdout(&out)
        .lines()
        .filter_map(|line| {
            let mut fields = line.split('\t');
            let (key, old, new) = (fields.next()?, fields.next()?, fields.next()?);
            Some((key.to_owned(), (old.to_owned(), new.to_owned())))
        })
        .collect()
}

#[test]
fn haproxy_consistent_hash_agrees() {
    let dir = TempDir::create("compat-haproxy");
    let mut rng = Rng(SEED);
    let mut failure = String::new();
    let (haproxy, lists, backends) = loop {
        let lists = server_lists(&mut rng);
        let backends = backends(&lists);
        let cfg = haproxy_cfg(dir.path(), &lists, &backends);
        match start(dir.path(), &cfg, &backends) {
            Ok(haproxy) => break (haproxy, lists, backends),
            Err(why) if failure.is_empty() => failure = why,
            Err(why) => panic!("haproxy did not start twice: {failure}\n{why}"),
        }
    };
    let names: HashMap<String, String> = lists
        .iter()
        .flatten()
        .map(|s| (s.port.to_string(), s.name.clone()))
        .collect();
    let keys: Vec<Vec<String>> = (0..LISTS).map(|_| header_keys(&mut rng, KEYS)).collect();
    let cfg = dir.path().join("haproxy.cfg");
    for backend in &backends {
        let keys = &keys[backend.list];
        let servers = &lists[backend.list];
        let theirs = routed(&haproxy, backend, &names, keys);
        let file = dir.write(
            &format!("{}.toml", backend.name()),
            &cluster(backend, servers),
        );
        let ours = ringwise_lookup(Path::new(&file), keys);
        assert_agree(
            &format!("haproxy backend {}: {servers:?}", backend.name()),
            keys,
            &theirs,
            &ours,
        );
        // The same backend read from the haproxy.cfg haproxy runs.
        let name = backend.name();
        let imported = ringwise_lookup_with(
            &cfg,
            &["--cluster-format", "haproxy", "--pool", &name],
            keys,
        );
        assert_agree(
            &format!("haproxy backend {name}, imported from haproxy.cfg"),
            keys,
            &theirs,
            &imported,
        );
    }

    // Run-time changes on one backend per list (a different hash each).
    for list in 0..LISTS {
        let backend = backends
            .iter()
            .filter(|b| b.list == list)
            .nth(list * 3 % 8)
            .expect("a backend of the list");
        let servers = &lists[list];
        let keys = &keys[list];
        let before = routed(&haproxy, backend, &names, keys);
        let heavier = &servers[rng.below(servers.len())];
        let weight = rng.between(1, 256);
        let answer = runtime(
            dir.path(),
            &format!(
                "set server {}/{} weight {weight}",
                backend.name(),
                heavier.name
            ),
        );
        assert!(answer.trim().is_empty(), "set server weight: {answer}");
        let mut change = vec![
            "--reweight".to_owned(),
            format!("{}={weight}", heavier.name),
        ];
        if servers.len() > 2 {
            let disabled = servers
                .iter()
                .find(|s| s.name != heavier.name)
                .expect("another server");
            let answer = runtime(
                dir.path(),
                &format!("disable server {}/{}", backend.name(), disabled.name),
            );
            assert!(answer.trim().is_empty(), "disable server: {answer}");
            change.extend(["--remove".to_owned(), disabled.name.clone()]);
        }
        let after = routed(&haproxy, backend, &names, keys);
        let moved: HashMap<String, (String, String)> = keys
            .iter()
            .zip(before.iter().zip(&after))
            .filter(|(_, (b, a))| b != a)
            .map(|(k, (b, a))| (k.clone(), (b.clone(), a.clone())))
            .collect();
        // The plan of the change to the backend of the haproxy.cfg.
        let key_file = dir.write(&format!("keys-{list}.txt"), &super::lines(keys));
        let name = backend.name();
        let mut change: Vec<&str> = change.iter().map(String::as_str).collect();
        change.extend(["--cluster-format", "haproxy", "--pool", &name]);
        let plan = planned(&cfg, &change, Path::new(&key_file));
        assert!(
            !moved.is_empty(),
            "{}: the change moved no key",
            backend.name()
        );
        let mut differ: Vec<String> = keys
            .iter()
            .filter(|k| moved.get(*k) != plan.get(*k))
            .map(|k| {
                format!(
                    "  {k:?}: haproxy {:?}, plan {:?}\n",
                    moved.get(k),
                    plan.get(k)
                )
            })
            .collect();
        differ.truncate(10);
        assert!(
            differ.is_empty(),
            "{} after {change:?}: moved keys differ from the plan's:\n{}",
            backend.name(),
            differ.concat()
        );
    }
    drop(haproxy);
}
