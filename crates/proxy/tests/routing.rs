//! Keys set through the proxy land on the server the library's placement
//! names, for several algorithms of a cluster file.
//!
//! For each algorithm, a pool of 2 to 6 fresh memcacheds (random count),
//! 3,000 random keys (printable ASCII, some with a `{tag}`, some up to 250
//! bytes) `set` through the proxy in one pipeline with the key as the
//! value; then each key is asked of every memcached directly: exactly the
//! server that `ringwise::ClusterSpec` over the same file locates holds it,
//! with its value, and the others do not.

use ringwise::ClusterSpec;

use crate::rng::Rng;
use crate::servers::{Server, cluster_file, exchange, held, memcached, proxy};

const KEYS: usize = 3_000;

fn random_keys(rng: &mut Rng) -> Vec<Vec<u8>> {
    let mut seen = std::collections::HashSet::new();
    let mut keys = Vec::with_capacity(KEYS);
    while keys.len() < KEYS {
        let len = match rng.below(50) {
            0 => rng.between(200, 250),
            _ => rng.between(1, 30),
        };
        let mut key: Vec<u8> = (0..len).map(|_| rng.between(0x21, 0x7e) as u8).collect();
        if rng.below(10) == 0 {
            key.extend_from_slice(format!("{{t{}}}", rng.below(5)).as_bytes());
        }
        key.truncate(250);
        if seen.insert(key.clone()) {
            keys.push(key);
        }
    }
    keys
}

#[test]
fn keys_land_where_the_placement_says() {
    let dir = crate::process::scratch_dir("ringwise-proxy-routing");
    let mut rng = Rng(0x0070_726f_7879);
    for algorithm in ["ring", "ketama", "jump", "maglev", "rendezvous", "anchor"] {
        let servers: Vec<Server> = (0..rng.between(2, 6)).map(|_| memcached()).collect();
        let file = cluster_file(&dir, algorithm, &servers);
        let text = std::fs::read_to_string(&file).expect("read the cluster file");
        let (_, keyed) = ClusterSpec::from_toml_built(&text).expect("a valid cluster file");
        let proxied = proxy(&["--cluster", &file]);
        let keys = random_keys(&mut rng);
        let mut request = Vec::new();
        for key in &keys {
            request.extend_from_slice(b"set ");
            request.extend_from_slice(key);
            request.extend_from_slice(format!(" 0 0 {}\r\n", key.len()).as_bytes());
            request.extend_from_slice(key);
            request.extend_from_slice(b"\r\n");
        }
        let answers = exchange(proxied.port, &request);
        assert_eq!(
            answers,
            b"STORED\r\n".repeat(KEYS),
            "{algorithm}: every set stored"
        );
        let mut per_server = vec![0usize; servers.len()];
        for key in &keys {
            let owner = keyed.locate(key).expect("a node");
            for (i, server) in servers.iter().enumerate() {
                let value = held(server.port, key);
                if server.address() == owner {
                    assert_eq!(
                        value.as_deref(),
                        Some(&key[..]),
                        "{algorithm}: {owner} holds the key"
                    );
                    per_server[i] += 1;
                } else {
                    assert_eq!(
                        value,
                        None,
                        "{algorithm}: only {owner} holds the key, not {}",
                        server.address()
                    );
                }
            }
        }
        assert!(
            per_server.iter().all(|&n| n > 0),
            "{algorithm}: every server got keys: {per_server:?}"
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}
