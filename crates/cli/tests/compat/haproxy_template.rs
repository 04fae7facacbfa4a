//! `server-template` against a real HAProxy (Debian's 2.6): the servers a
//! template makes, their names, weights and automatic ids, read by the
//! importer from the very haproxy.cfg haproxy runs.
//!
//! One haproxy process (as in `haproxy.rs`) holds backends of seeded
//! random lines: `server` lines and `server-template` lines (a count or
//! a range `LOW-HIGH`, with or without a weight), half of each with an
//! explicit `id` (a template's goes to its first server; the automatic
//! numbering skips it), under a `default-server` weight. A template's servers share one address, so the servers are
//! told apart by name: the backend sends it (`http-send-name-header
//! X-Srv`) to one answering frontend that returns it as the body. Every
//! key must agree with `ringwise lookup --cluster-format haproxy`, and the
//! templates' servers must have held keys.

use std::collections::HashSet;
use std::fs;
use std::path::Path;
use std::process::Stdio;
use std::thread::sleep;
use std::time::{Duration, Instant};

use super::nginx::route;
use super::process::{Guard, free_port};
use super::{Rng, assert_agree, random_keys, ringwise_lookup_with};
use crate::support::TempDir;

const SEED: u64 = 0x7465_6d70_6c61;
const BACKENDS: usize = 6;
const KEYS: usize = 3_000;
const READY_WITHIN: Duration = Duration::from_secs(10);
const INSTALL_HINT: &str = "run scripts/install-test-deps (it installs the Debian package \
                            `haproxy`); this test is never skipped";
const FUNCTIONS: [&str; 4] = ["sdbm", "djb2", "wt6", "crc32"];

/// One backend's section and the names of its templates' servers.
struct Backend {
    name: String,
    front: u16,
    section: String,
    templated: Vec<String>,
}

/// A seeded backend of `server` and `server-template` lines, all reaching
/// the answering frontend on `answer`.
fn backend(rng: &mut Rng, index: usize, answer: u16) -> Backend {
    let name = format!("t{index}");
    let function = FUNCTIONS[index % FUNCTIONS.len()];
    let avalanche = if index % 2 == 1 { " avalanche" } else { "" };
    let mut section = format!(
        "backend {name}\n  balance hdr(X-Key)\n  hash-type consistent {function}{avalanche}\n  \
         http-send-name-header X-Srv\n  default-server weight {}\n",
        rng.between(1, 64)
    );
    let mut templated = Vec::new();
    let mut ids = Vec::new();
    // An explicit id not taken yet, or none, half the time each.
    let mut id = |rng: &mut Rng| match rng.below(2) {
        0 => loop {
            let id = rng.between(1, 30);
            if !ids.contains(&id) {
                ids.push(id);
                break format!(" id {id}");
            }
        },
        _ => String::new(),
    };
    let lines = rng.between(2, 6);
    for line in 0..lines {
        // At least one template in every backend.
        if line == 0 || rng.below(2) == 0 {
            let prefix = format!("{name}x{line}-");
            let (low, high) = match rng.below(2) {
                0 => (1, rng.between(1, 6)),
                _ => {
                    let low = rng.between(0, 9);
                    (low, low + rng.between(0, 5))
                }
            };
            let range = match low {
                1 if rng.below(2) == 0 => high.to_string(),
                _ => format!("{low}-{high}"),
            };
            let weight = match rng.below(2) {
                0 => format!(" weight {}", rng.between(1, 256)),
                _ => String::new(),
            };
            let id = id(rng);
            section +=
                &format!("  server-template {prefix} {range} 127.0.0.1:{answer}{weight}{id}\n");
            templated.extend((low..=high).map(|n| format!("{prefix}{n}")));
        } else {
            let id = id(rng);
            section += &format!(
                "  server {name}s{line} 127.0.0.1:{answer} weight {}{id}\n",
                rng.between(1, 256)
            );
        }
    }
    Backend {
        name,
        front: free_port(),
        section,
        templated,
    }
}

fn haproxy_cfg(answer: u16, backends: &[Backend]) -> String {
    let mut cfg = format!(
        "global\n  nbthread 1\n\ndefaults\n  mode http\n  timeout connect 5s\n  \
         timeout client 30s\n  timeout server 30s\n\n\
         frontend answer\n  bind 127.0.0.1:{answer}\n  http-request return status 200 \
         content-type text/plain lf-string \"%[req.hdr(X-Srv)]\"\n\n"
    );
    for b in backends {
        cfg += &format!(
            "frontend f-{0}\n  bind 127.0.0.1:{1}\n  default_backend {0}\n\n{2}\n",
            b.name, b.front, b.section
        );
    }
    cfg
}

/// Starts haproxy on `file` and waits until every front port answers.
fn start(file: &Path, backends: &[Backend]) -> Result<Guard, String> {
    let scratch = super::process::scratch_dir("ringwise-haproxy-template");
    let log = fs::File::create(scratch.join("haproxy.log")).expect("log file");
    let mut command = super::process::server(match Path::new("/usr/sbin/haproxy").exists() {
        true => "/usr/sbin/haproxy",
        false => "haproxy",
    });
    command
        .arg("-db")
        .arg("-f")
        .arg(file)
        .stdin(Stdio::null())
        .stdout(log.try_clone().expect("log file"))
        .stderr(log);
    let mut haproxy = Guard::spawn(&mut command, scratch, INSTALL_HINT);
    let log_of = |h: &Guard| fs::read_to_string(h.dir().join("haproxy.log")).unwrap_or_default();
    let deadline = Instant::now() + READY_WITHIN;
    for b in backends {
        while std::net::TcpStream::connect(("127.0.0.1", b.front)).is_err() {
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

#[test]
fn haproxy_server_templates_are_read_as_haproxy_names_weighs_and_numbers_them() {
    let dir = TempDir::create("compat-haproxy-template");
    let mut rng = Rng(SEED);
    let mut failure = String::new();
    let (haproxy, backends, cfg) = loop {
        let answer = free_port();
        let backends: Vec<Backend> = (0..BACKENDS)
            .map(|i| backend(&mut rng, i, answer))
            .collect();
        let cfg = dir.write("haproxy.cfg", &haproxy_cfg(answer, &backends));
        match start(Path::new(&cfg), &backends) {
            Ok(haproxy) => break (haproxy, backends, cfg),
            Err(why) if failure.is_empty() => failure = why,
            Err(why) => panic!("haproxy did not start twice: {failure}\n{why}"),
        }
    };
    let with_id = backends
        .iter()
        .flat_map(|b| b.section.lines())
        .filter(|l| l.contains("server-template") && l.contains(" id "))
        .count();
    assert!(with_id > 0, "the seed gives some template an id");
    let mut keys = random_keys(&mut rng, 2 * KEYS);
    keys.retain(|k| !k.contains(',') && !k.contains('"'));
    keys.truncate(KEYS);
    for b in &backends {
        let theirs = route(b.front, &keys).unwrap_or_else(|e| panic!("{}: {e}", b.name));
        let ours = ringwise_lookup_with(
            Path::new(&cfg),
            &["--cluster-format", "haproxy", "--pool", &b.name],
            &keys,
        );
        assert_agree(
            &format!("haproxy backend:\n{}", b.section),
            &keys,
            &theirs,
            &ours,
        );
        let templated: HashSet<&String> = b.templated.iter().collect();
        let held = theirs.iter().filter(|s| templated.contains(s)).count();
        assert!(held > 0, "{}: the templates' servers held no key", b.name);
    }
    drop(haproxy);
}
