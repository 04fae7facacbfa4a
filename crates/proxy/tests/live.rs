//! Membership from a real etcd (`--membership etcd://...`): the proxy
//! routes by the members under the prefix and follows each change, with
//! the warm-up window.
//!
//! One etcd, four memcacheds. Three members are written under
//! `PREFIX/nodes/` (JSON with their `address`, as `ringwise join` writes
//! them, here without a lease); the proxy starts on `--membership`; 2,000
//! keys are set through it. Then a fourth member is written: once the
//! proxy says the membership changed its routing, every key still reads
//! back (the moved ones from their previous server) and each key is held
//! by the server the library's ring over the four names says. Then one
//! member is deleted: its keys read back too (their previous server is
//! still up), now from their next server.

use std::fs;
use std::thread::sleep;
use std::time::{Duration, Instant};

use ringwise::ClusterSpec;

use crate::etcd::Etcd;
use crate::servers::{Server, exchange, held, memcached, proxy};

const KEYS: usize = 2_000;
const PREFIX: &str = "/proxy-test";

fn member(etcd: &Etcd, name: &str, server: &Server) {
    let value = format!(r#"{{"address":"{}"}}"#, server.address());
    etcd.put(&format!("{PREFIX}/nodes/{name}"), value.as_bytes());
}

fn wait_for_change(proxy: &Server, count: usize) {
    let log = proxy.process.dir().join("log");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let text = fs::read_to_string(&log).unwrap_or_default();
        if text.matches("the membership changed the routing").count() >= count {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the proxy did not follow etcd: {text}"
        );
        sleep(Duration::from_millis(10));
    }
}

fn ring_of(names: &[&str]) -> ringwise::Keyed<ringwise::AnyPlacement> {
    let mut toml = String::from("algorithm = \"ring\"\n");
    for name in names {
        toml.push_str(&format!("[[nodes]]\nname = \"{name}\"\n"));
    }
    ClusterSpec::from_toml_built(&toml).expect("a ring").1
}

#[test]
fn the_proxy_follows_etcd() {
    let etcd = Etcd::single();
    let servers: Vec<Server> = (0..4).map(|_| memcached()).collect();
    let names = ["cache-a", "cache-b", "cache-c", "cache-d"];
    for i in 0..3 {
        member(&etcd, names[i], &servers[i]);
    }
    let endpoint = etcd.endpoint(0);
    let url = format!("etcd://{}{PREFIX}", endpoint.trim_start_matches("http://"));
    let proxied = proxy(&["--membership", &url, "--warm-up", "3600"]);
    let keys: Vec<String> = (0..KEYS).map(|i| format!("live:{i}")).collect();
    let sets: Vec<u8> = keys
        .iter()
        .flat_map(|k| format!("set {k} 0 0 {}\r\n{k}\r\n", k.len()).into_bytes())
        .collect();
    assert_eq!(exchange(proxied.port, &sets), b"STORED\r\n".repeat(KEYS));
    let hit = |k: &str| format!("VALUE {k} 0 {}\r\n{k}\r\nEND\r\n", k.len()).into_bytes();
    // A fourth member.
    member(&etcd, names[3], &servers[3]);
    wait_for_change(&proxied, 1);
    let four = ring_of(&names);
    for key in &keys {
        assert_eq!(
            exchange(proxied.port, format!("get {key}\r\n").as_bytes()),
            hit(key)
        );
    }
    for key in &keys {
        let owner = four.locate(key).expect("an owner");
        let at = names.iter().position(|n| *n == owner).expect("a name");
        // The copy to a new owner is not awaited: it lands within moments.
        let deadline = Instant::now() + Duration::from_secs(5);
        while held(servers[at].port, key.as_bytes()).is_none() && Instant::now() < deadline {
            sleep(Duration::from_millis(1));
        }
        assert!(
            held(servers[at].port, key.as_bytes()).is_some(),
            "{key} on {owner}"
        );
    }
    // One member leaves: its keys are read from it while the window lasts.
    etcd.delete(&format!("{PREFIX}/nodes/{}", names[1]));
    wait_for_change(&proxied, 2);
    for key in &keys {
        assert_eq!(
            exchange(proxied.port, format!("get {key}\r\n").as_bytes()),
            hit(key)
        );
    }
}
