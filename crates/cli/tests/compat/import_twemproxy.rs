//! `--cluster-format twemproxy`: ringwise reading the very `nutcracker.yml`
//! a real nutcracker runs from, against that nutcracker.
//!
//! One seeded random file of four pools, each over its own 2 to 6
//! memcached servers (weights 1 to 300): `hash: md5` with unnamed servers;
//! `hash: fnv1a_64`, `hash_tag: "{}"` and named servers; no `hash:` at all
//! (twemproxy's default, fnv1a_64); `hash: crc32a`. Each pool carries
//! placement-neutral keys (timeouts, connection counts, `preconnect`...)
//! that the importer must read as notes. nutcracker checks the file (`-t`)
//! and serves it; 3,000 keys a pool are `set` through it and found by
//! asking every memcached (the helpers of `twemproxy.rs`), and `ringwise
//! lookup --cluster nutcracker.yml --cluster-format twemproxy --pool P`
//! must name the same server for every key. `ringwise import twemproxy`'s
//! output, read back as a cluster file, must be the cluster the library
//! reads from the file directly.
//!
//! Unnamed servers listen on 11211 when it is free on 127.0.0.1 (one
//! pool's first server), so twemproxy's `host`-only name of that port is
//! compared. Server lists whose ring has a point two servers share are
//! drawn again (twemproxy's `qsort` leaves its owner to chance).

use std::collections::HashSet;
use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use super::process::{self, Guard, free_port};
use super::twemproxy::{
    INSTALL_HINT, READY_WITHIN, Running, held, memcached, nutcracker_binary, set_all,
};
use super::{Rng, assert_agree, random_keys, ringwise_lookup_with, shared_points};
use crate::support::{TempDir, assert_success, ringwise, stdout};

const SEED: u64 = 0x0069_6D70_7477;
const KEYS: usize = 3_000;

/// One pool: its name, `hash:` line (if any), tag and naming.
struct Pool {
    name: &'static str,
    hash: Option<&'static str>,
    tagged: bool,
    named: bool,
}

const POOLS: [Pool; 4] = [
    Pool {
        name: "sessions",
        hash: Some("md5"),
        tagged: false,
        named: false,
    },
    Pool {
        name: "cache",
        hash: Some("fnv1a_64"),
        tagged: true,
        named: true,
    },
    Pool {
        name: "defaults",
        hash: None,
        tagged: false,
        named: false,
    },
    Pool {
        name: "crc",
        hash: Some("crc32a"),
        tagged: false,
        named: false,
    },
];

/// A pool's servers: port, weight, explicit name.
type Servers = Vec<(u16, u32, Option<String>)>;

fn pool_yaml(pool: &Pool, listen: u16, servers: &Servers, rng: &mut Rng) -> String {
    let mut yaml = format!("{}:\n  listen: 127.0.0.1:{listen}\n", pool.name);
    if let Some(hash) = pool.hash {
        yaml.push_str(&format!("  hash: {hash}\n"));
    }
    if pool.tagged {
        yaml.push_str("  hash_tag: \"{}\"\n");
    }
    // Placement-neutral keys, a random few, in random order.
    let neutral = [
        "distribution: ketama",
        "timeout: 5000",
        "backlog: 512",
        "preconnect: false",
        "server_connections: 1",
        "auto_eject_hosts: false",
        "server_retry_timeout: 30000",
        "server_failure_limit: 3",
        "tcpkeepalive: true",
    ];
    for line in neutral.iter().filter(|_| rng.below(2) == 0) {
        yaml.push_str(&format!("  {line}\n"));
    }
    yaml.push_str("  servers:\n");
    for (port, weight, name) in servers {
        match name {
            Some(name) => yaml.push_str(&format!("    - 127.0.0.1:{port}:{weight} {name}\n")),
            None => yaml.push_str(&format!("    - 127.0.0.1:{port}:{weight}\n")),
        }
    }
    yaml
}

/// Servers for `pool` on ports not in `taken`, the first on 11211 if
/// `default` (and it is free), drawn again while two share a ring point.
fn servers(rng: &mut Rng, pool: &Pool, default: bool, taken: &mut HashSet<u16>) -> Servers {
    loop {
        let mut servers: Servers = Vec::new();
        let n = rng.between(2, 6);
        while servers.len() < n {
            let port = match servers.is_empty() && default && !taken.contains(&11211) {
                true => std::net::TcpListener::bind(("127.0.0.1", 11211))
                    .map_or_else(|_| free_port(), |_| 11211),
                false => free_port(),
            };
            if taken.contains(&port) || servers.iter().any(|s| s.0 == port) {
                continue;
            }
            let name = pool
                .named
                .then(|| format!("mc-{}.{}", rng.below(1000), servers.len()));
            servers.push((port, rng.between(1, 300) as u32, name));
        }
        let yaml = pool_yaml(pool, 1, &servers, &mut Rng(1));
        let imported = ringwise_import::import(ringwise_import::Kind::Twemproxy, &yaml, None)
            .expect("the importer reads the pool");
        let toml = imported
            .to_toml(ringwise_import::Kind::Twemproxy, "test")
            .expect("a cluster file");
        if shared_points(&toml).is_empty() {
            taken.extend(servers.iter().map(|s| s.0));
            return servers;
        }
    }
}

/// Starts every memcached and the nutcracker of `conf`.
fn start(conf: &Path, all: &[(u16, Servers)]) -> Result<(Vec<Running>, Guard), String> {
    let deadline = Instant::now() + READY_WITHIN;
    let mut memcacheds: Vec<Running> = all
        .iter()
        .flat_map(|(_, s)| s.iter().map(|s| memcached(s.0)))
        .collect();
    for server in &mut memcacheds {
        server.ready(deadline)?;
    }
    process::output(
        Command::new(nutcracker_binary())
            .arg("-t")
            .arg("-c")
            .arg(conf),
        INSTALL_HINT,
    );
    let dir = process::scratch_dir("ringwise-nutcracker-import");
    let mut command = process::server(nutcracker_binary());
    command
        .arg("-c")
        .arg(conf)
        .arg("-o")
        .arg(dir.join("log"))
        .arg("-p")
        .arg(dir.join("nutcracker.pid"))
        .args(["-s", &free_port().to_string(), "-a", "127.0.0.1"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut proxy = Running {
        process: Guard::spawn(&mut command, dir, INSTALL_HINT),
        port: all[0].0,
        what: "nutcracker",
    };
    for (listen, _) in all {
        proxy.port = *listen;
        proxy.ready(deadline)?;
    }
    Ok((memcacheds, proxy.process))
}

#[test]
fn ringwise_reads_the_nutcracker_yml_nutcracker_runs() {
    let dir = TempDir::create("compat-import-twemproxy");
    let mut rng = Rng(SEED);
    let mut failure = String::new();
    let (all, conf, running) = loop {
        let mut taken = HashSet::new();
        let all: Vec<(u16, Servers)> = POOLS
            .iter()
            .enumerate()
            .map(|(i, pool)| (free_port(), servers(&mut rng, pool, i == 0, &mut taken)))
            .collect();
        let yaml: String = POOLS
            .iter()
            .zip(&all)
            .map(|(pool, (listen, servers))| pool_yaml(pool, *listen, servers, &mut rng))
            .collect::<Vec<_>>()
            .join("\n");
        let conf = dir.write("nutcracker.yml", &format!("# seeded by {SEED:#x}\n{yaml}"));
        match start(Path::new(&conf), &all) {
            Ok(running) => break (all, conf, running),
            // Ports are chosen free, but may be taken before a server binds.
            Err(why) if failure.is_empty() => failure = why,
            Err(why) => panic!("the pools did not start twice: {failure}\n{why}"),
        }
    };
    let text = fs::read_to_string(&conf).expect("read nutcracker.yml");
    for (pool, (listen, servers)) in POOLS.iter().zip(&all) {
        let keys: Vec<String> = random_keys(&mut rng, KEYS)
            .into_iter()
            .enumerate()
            .map(|(i, k)| match (pool.tagged, i % 3) {
                (true, 0) => format!("user:{{t{}}}:{k}", i % 40),
                _ => k,
            })
            .collect();
        set_all(*listen, &keys).unwrap_or_else(|e| panic!("setting through nutcracker: {e}"));
        // The node each server is in ringwise: its name, else 127.0.0.1:PORT.
        let node =
            |s: &(u16, u32, Option<String>)| s.2.clone().unwrap_or(format!("127.0.0.1:{}", s.0));
        let mut theirs: Vec<Option<String>> = vec![None; keys.len()];
        for server in servers {
            for (i, held) in held(server.0, &keys)
                .expect("asking memcached")
                .into_iter()
                .enumerate()
            {
                if held {
                    assert!(theirs[i].is_none(), "{:?} held twice", keys[i]);
                    theirs[i] = Some(node(server));
                }
            }
        }
        let theirs: Vec<String> = theirs
            .into_iter()
            .map(|t| t.expect("some memcached holds every key"))
            .collect();
        let args = ["--cluster-format", "twemproxy", "--pool", pool.name];
        let ours = ringwise_lookup_with(Path::new(&conf), &args, &keys);
        assert_agree(
            &format!("pool {} of {conf}: {servers:?}", pool.name),
            &keys,
            &theirs,
            &ours,
        );

        // `ringwise import` prints the same cluster the library reads.
        let out = ringwise(&["import", "twemproxy", &conf, "--pool", pool.name], b"");
        assert_success(&out);
        let printed = ringwise::ClusterSpec::from_toml(&stdout(&out)).expect("a cluster file");
        let direct =
            ringwise_import::import(ringwise_import::Kind::Twemproxy, &text, Some(pool.name))
                .expect("import")
                .spec()
                .expect("spec");
        assert_eq!(printed, direct, "pool {}", pool.name);
    }
    drop(running);
}
