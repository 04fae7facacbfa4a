//! gRPC's `ring_hash` against real grpcio channels.
//!
//! Each of four random configurations has 2 to 12 loopback endpoints
//! `127.0.N.M:PORT` with weights 1 to 5, given to gRPC the one way its
//! Python API allows: by repeating an address in the `ipv4:` target (gRPC
//! merges duplicates into one endpoint whose weight is the count, at its
//! first position), the repeats shuffled so that first positions vary. The
//! service config (`ring_hash_experimental` with `requestHashHeader:
//! "x-key"`, gRFC A76) asks for rings below, at and above gRPC's ring-size
//! cap (4096): one config leaves the sizes out (gRPC's defaults 1024 and
//! 4096), one asks for 4096, one for 8192 to 16384 (capped to 4096), one
//! raises the cap with the channel argument `grpc.lb.ring_hash.ring_size_cap`.
//! A fifth has 20 endpoints and a cap of 8: gRPC's ring then holds 9
//! points (its running sums end a hair above 8), and 11 endpoints get no
//! point and no call.
//!
//! The peer, `peers/grpc_ring_hash.py`, starts a grpcio server on every
//! address (each answers its own address) and sends 3,000 random keys in
//! the header over one channel (a key with commas as several values of
//! the header, which gRPC joins with `,`): every answer must be ringwise's `lookup
//! --cluster-format grpc` of the same JSON (the importer's cluster, whose
//! `ringwise import grpc` text the library checks for shared points and
//! ring sizes). Then it stops one server
//! and sends the keys again: gRPC's picker walks past the endpoint that is
//! no longer READY, so each key must land on ringwise's first replica that
//! is not the stopped node (`lookup --replicas 2`).
//!
//! gRPC sorts points with `std::sort`, so a point two endpoints share has
//! no defined owner: every configuration here is checked to have none.

use std::collections::HashSet;
use std::fs;
use std::net::Ipv4Addr;
use std::path::Path;
use std::process::Command;

use super::process::{free_port, server};
use super::{
    Rng, assert_agree, library_counts, peer_file, peer_python, random_keys, ringwise_lookup_with,
    run_peer, shared_points,
};
use crate::support::{TempDir, assert_success, ringwise, stdout};

const SEED: u64 = 0x6772_7063;
const KEYS: usize = 3_000;
const HEADER: &str = "x-key";

/// One channel's configuration: the target's addresses (repeated for
/// weight), the ring sizes of the service config (`None`: left out) and
/// the channel's cap (`None`: gRPC's default).
#[derive(Debug)]
struct Channel {
    target: Vec<String>,
    min_ring_size: Option<u64>,
    max_ring_size: Option<u64>,
    cap: Option<u64>,
}

impl Channel {
    /// The JSON both read: the peer (the target, the service config given
    /// to grpcio verbatim, the channel args) and ringwise's `grpc` kind.
    fn json(&self) -> String {
        let mut lb = Vec::new();
        if let Some(min) = self.min_ring_size {
            lb.push(format!("\"minRingSize\": {min}"));
        }
        if let Some(max) = self.max_ring_size {
            lb.push(format!("\"maxRingSize\": {max}"));
        }
        lb.push(format!("\"requestHashHeader\": \"{HEADER}\""));
        let args = match self.cap {
            Some(cap) => {
                format!(",\n  \"channelArgs\": {{\"grpc.lb.ring_hash.ring_size_cap\": {cap}}}")
            }
            None => String::new(),
        };
        format!(
            "{{\n  \"target\": \"ipv4:{}\",\n  \"serviceConfig\": {{\"loadBalancingConfig\": \
             [{{\"ring_hash_experimental\": {{{}}}}}]}}{args}\n}}\n",
            self.target.join(","),
            lb.join(", ")
        )
    }

    /// The distinct addresses of the target.
    fn endpoints(&self) -> Vec<&String> {
        let mut endpoints: Vec<&String> = Vec::new();
        for address in &self.target {
            if !endpoints.contains(&address) {
                endpoints.push(address);
            }
        }
        endpoints
    }
}

/// The five channels: random endpoints and weights, the ring sizes of
/// the module docs.
fn channels(rng: &mut Rng) -> Vec<Channel> {
    // (min, max, cap, endpoints, most repeats of one address)
    let sizes = [
        (None, None, None, (2, 12), 5),
        (Some(4096), Some(4096), None, (2, 12), 5),
        (Some(8192), Some(16384), None, (2, 12), 5),
        (Some(6000), Some(8_388_608), Some(6500), (2, 12), 5),
        // More endpoints than points: 20 running sums of 0.4 end a hair
        // above 8, so gRPC's ring holds 9 points and 11 endpoints none.
        (Some(8), Some(8), Some(8), (20, 20), 1),
    ];
    let mut taken = HashSet::new();
    sizes
        .into_iter()
        .map(|(min_ring_size, max_ring_size, cap, (lo, hi), repeats)| {
            let mut target = Vec::new();
            for _ in 0..rng.between(lo, hi) {
                let ip = Ipv4Addr::new(127, 0, rng.below(4) as u8, rng.between(1, 254) as u8);
                let address = loop {
                    let address = format!("{ip}:{}", free_port());
                    if taken.insert(address.clone()) {
                        break address;
                    }
                };
                for _ in 0..rng.between(1, repeats) {
                    target.push(address.clone());
                }
            }
            // Fisher-Yates: repeats interleave, first positions move.
            for i in (1..target.len()).rev() {
                target.swap(i, rng.below(i + 1));
            }
            Channel {
                target,
                min_ring_size,
                max_ring_size,
                cap,
            }
        })
        .collect()
}

/// Keys a gRPC header can carry as they are: printable ASCII.
fn ascii_keys(rng: &mut Rng) -> Vec<String> {
    let mut keys: Vec<String> = random_keys(rng, KEYS * 2)
        .into_iter()
        .filter(|k| k.is_ascii())
        .collect();
    keys.truncate(KEYS);
    keys
}

/// `ringwise import grpc CONFIG`: the cluster file the lookups use.
fn imported(config: &Path) -> String {
    let out = ringwise(
        &["import", "grpc", config.to_str().expect("utf-8 path")],
        b"",
    );
    assert_success(&out);
    stdout(&out)
}

/// Runs the peer on `config` and `keys`, stopping `stop` between its two
/// passes: both passes' answers.
fn grpcio(config: &Path, stop: &str, dir: &Path, keys: &[String]) -> (Vec<String>, Vec<String>) {
    // Started through setpriv: the peer runs servers, which must die with
    // the test binary.
    let mut command: Command = server(peer_python());
    command
        .arg(peer_file("grpc_ring_hash.py"))
        .arg(config)
        .arg(stop);
    let mut answers = run_peer(&mut command, dir, keys);
    assert_eq!(answers.len(), 2 * keys.len(), "two passes of answers");
    let second = answers.split_off(keys.len());
    (answers, second)
}

#[test]
fn grpcio_ring_hash_agrees() {
    let dir = TempDir::create("compat-grpc");
    let mut rng = Rng(SEED);
    for (i, channel) in channels(&mut rng).iter().enumerate() {
        let keys = ascii_keys(&mut rng);
        let config = dir.path().join(format!("channel-{i}.json"));
        fs::write(&config, channel.json()).expect("write the channel config");
        let toml = imported(&config);
        assert_eq!(shared_points(&toml), [], "channel {i}: no shared point");
        let points: u64 = library_counts(&toml).values().sum();
        // The running sums may end a hair above the cap: one point more.
        let cap = channel.cap.unwrap_or(4096);
        assert!(
            points <= cap + 1,
            "channel {i}: {points} points above the cap {cap}"
        );
        let endpoints = channel.endpoints();
        let stop = *rng.pick(&endpoints);
        let owning = library_counts(&toml).values().filter(|&&p| p > 0).count();
        if channel.cap == Some(8) {
            assert_eq!((points, owning, endpoints.len()), (9, 9, 20), "channel {i}");
        }

        let (first, second) = grpcio(&config, stop, dir.path(), &keys);
        let what = format!(
            "grpcio channel {i} ({} endpoints, {points} points)",
            endpoints.len()
        );
        let ours = ringwise_lookup_with(&config, &["--cluster-format", "grpc"], &keys);
        assert_agree(&what, &keys, &first, &ours);

        let walked: Vec<String> = ringwise_lookup_with(
            &config,
            &["--cluster-format", "grpc", "--replicas", "2"],
            &keys,
        )
        .iter()
        .map(|replicas| {
            let mut names = replicas.split(',').filter(|name| *name != stop.as_str());
            names
                .next()
                .expect("a replica that is not the stopped one")
                .to_owned()
        })
        .collect();
        assert_agree(
            &format!("{what} with {stop} stopped"),
            &keys,
            &second,
            &walked,
        );
    }
}
