//! One `nutcracker.yml` given to a real nutcracker and to the proxy: what
//! one writes the other reads, from the same memcached.
//!
//! Three pools (random seeds): 2 to 6 memcacheds with random weights 1 to
//! 5, some servers named (`host:port:weight name`, which twemproxy hashes
//! by the name), `hash` fnv1a_64 (its default), md5 or crc32a, one with
//! `hash_tag: "{}"`. 3,000 random keys: the first half `set` through
//! nutcracker and read back through the proxy, the second half the other
//! way (values: the key); then every key is asked of every memcached
//! directly, and exactly one holds it: the same server served both.

use crate::process::free_port;
use crate::rng::Rng;
use crate::servers::{Server, exchange_len, held, memcached, nutcracker, proxy};

const KEYS: usize = 3_000;

fn sets(keys: &[Vec<u8>]) -> Vec<u8> {
    let mut request = Vec::new();
    for key in keys {
        request.extend_from_slice(b"set ");
        request.extend_from_slice(key);
        request.extend_from_slice(format!(" 0 0 {}\r\n", key.len()).as_bytes());
        request.extend_from_slice(key);
        request.extend_from_slice(b"\r\n");
    }
    request
}

/// One `get` per key, and the answers they must get (each key's value).
fn gets(keys: &[Vec<u8>]) -> (Vec<u8>, Vec<u8>) {
    let (mut request, mut answers) = (Vec::new(), Vec::new());
    for key in keys {
        request.extend_from_slice(b"get ");
        request.extend_from_slice(key);
        request.extend_from_slice(b"\r\n");
        answers.extend_from_slice(b"VALUE ");
        answers.extend_from_slice(key);
        answers.extend_from_slice(format!(" 0 {}\r\n", key.len()).as_bytes());
        answers.extend_from_slice(key);
        answers.extend_from_slice(b"\r\nEND\r\n");
    }
    (request, answers)
}

#[test]
fn the_same_nutcracker_yml_routes_alike() {
    let dir = crate::process::scratch_dir("ringwise-proxy-twemproxy");
    for (seed, hash, tagged) in [
        (1u64, "fnv1a_64", false),
        (2, "md5", true),
        (3, "crc32a", false),
    ] {
        let mut rng = Rng(0x0074_7770_0000 + seed);
        let servers: Vec<Server> = (0..rng.between(2, 6)).map(|_| memcached()).collect();
        let listen = free_port();
        let mut yaml = format!(
            "pool:\n  listen: 127.0.0.1:{listen}\n  hash: {hash}\n  distribution: ketama\n  \
             auto_eject_hosts: false\n  timeout: 5000\n"
        );
        if tagged {
            yaml.push_str("  hash_tag: \"{}\"\n");
        }
        yaml.push_str("  servers:\n");
        for (i, server) in servers.iter().enumerate() {
            let weight = rng.between(1, 5);
            let name = if rng.below(2) == 0 {
                format!(" cache-{i}")
            } else {
                String::new()
            };
            yaml.push_str(&format!("    - {}:{weight}{name}\n", server.address()));
        }
        let twemproxy = nutcracker(&yaml, listen);
        let path = dir.join(format!("nutcracker-{seed}.yml"));
        std::fs::write(&path, &yaml).expect("write nutcracker.yml");
        let proxied = proxy(&["--nutcracker", &path.to_string_lossy()]);
        let keys: Vec<Vec<u8>> = (0..KEYS)
            .map(|i| {
                let tag = if tagged && i % 3 == 0 {
                    format!("{{u{}}}", i % 7)
                } else {
                    String::new()
                };
                format!("k{}:{tag}{}", rng.next() % 1_000_000, i).into_bytes()
            })
            .collect();
        let (first, second) = keys.split_at(KEYS / 2);
        let through = |server: &Server, request: &[u8], expected: &[u8]| {
            exchange_len(server.port, request, expected.len()) == expected
        };
        let stored = |n: usize| b"STORED\r\n".repeat(n);
        assert!(
            through(&twemproxy, &sets(first), &stored(first.len())),
            "{hash}: sets through nutcracker"
        );
        assert!(
            through(&proxied, &sets(second), &stored(second.len())),
            "{hash}: sets through the proxy"
        );
        let (request, expected) = gets(first);
        assert!(
            through(&proxied, &request, &expected),
            "{hash}: the proxy reads what nutcracker wrote"
        );
        let (request, expected) = gets(second);
        assert!(
            through(&twemproxy, &request, &expected),
            "{hash}: nutcracker reads what the proxy wrote"
        );
        let mut per_server = vec![0usize; servers.len()];
        for key in &keys {
            let holders: Vec<usize> = (0..servers.len())
                .filter(|&i| held(servers[i].port, key).is_some())
                .collect();
            assert_eq!(
                holders.len(),
                1,
                "{hash}: one server holds {:?}",
                String::from_utf8_lossy(key)
            );
            per_server[holders[0]] += 1;
        }
        assert!(
            per_server.iter().all(|&n| n > 0),
            "{hash}: every server got keys: {per_server:?}"
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}
