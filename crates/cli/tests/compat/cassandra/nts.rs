//! `ringwise lookup --replication` against cassandra-driver's own
//! NetworkTopologyStrategy replica map.
//!
//! Seeded random two-datacenter rings (5 to 8 nodes on 2 or 3 racks, and
//! 3 to 6 nodes on 1 to 3 racks, 8 random tokens a node) with replication
//! maps that ask for fewer, as many and more replicas than racks and than
//! nodes. The peer (`peers/cassandra_nts.py`) answers each key with the
//! driver's `make_token_replica_map` list and with a transcription of
//! Cassandra's `calculateNaturalReplicas`. Required: the same *set* of
//! replicas as the driver for every key, and the same *order* as
//! Cassandra. The driver keeps another order (datacenter by datacenter,
//! skipped-rack nodes last), and with vnodes it can list a skipped node
//! twice where Cassandra takes another node of the rack (its
//! `skipped_hosts` list is not deduplicated); for those keys the driver's
//! distinct replicas must be among ringwise's, and they are counted.

use std::fmt::Write as _;

use crate::compat::{Rng, lines, peer_file, peer_python, random_keys, run_peer};
use crate::support::{TempDir, assert_success, ringwise, stdout};

const SEED: u64 = 0x6e74_7372_696e_6773;
const RINGS: usize = 6;
const KEYS: usize = 1_000;
const MAPS: &[&str] = &[
    "dc1=3,dc2=2",
    "dc1=1",
    "dc1=5,dc2=4",
    "dc1=2,dc2=3",
    "dc1=12,dc2=1",
];

#[test]
fn replicas_match_the_drivers_network_topology_strategy() {
    let dir = TempDir::create("compat-cassandra-nts");
    let mut rng = Rng(SEED);
    let mut compared = 0;
    let mut driver_duplicates = 0;
    for ring in 0..RINGS {
        let cluster = dir.path().join(format!("ring-{ring}.toml"));
        std::fs::write(&cluster, random_cluster(&mut rng)).expect("write the cluster");
        let keys = random_keys(&mut rng, KEYS);
        for map in MAPS {
            let mut command = std::process::Command::new(peer_python());
            command
                .arg(peer_file("cassandra_nts.py"))
                .arg(&cluster)
                .arg(map);
            let theirs = run_peer(&mut command, dir.path(), &keys);
            let path = cluster.to_str().expect("utf-8 path");
            let out = ringwise(
                &["lookup", "--cluster", path, "--replication", map],
                lines(&keys).as_bytes(),
            );
            assert_success(&out);
            let ours = crate::compat::answers("lookup", &keys, &stdout(&out));
            assert_eq!(theirs.len(), keys.len(), "the peer answers every key");
            for ((key, peer), ours) in keys.iter().zip(&theirs).zip(&ours) {
                let (driver, java) = peer.split_once('\t').expect("two lists");
                let ours_list: Vec<&str> = ours.split(',').collect();
                let driver_list: Vec<&str> = driver.split(',').collect();
                let mut ours_set = ours_list.clone();
                ours_set.sort_unstable();
                let mut driver_set = driver_list.clone();
                driver_set.sort_unstable();
                driver_set.dedup();
                let context = || {
                    format!(
                        "ring {ring}, --replication {map}, key {key:?}: ringwise {ours}, driver {driver}, Cassandra {java}"
                    )
                };
                assert_eq!(ours, java, "order: {}", context());
                if driver_set.len() < driver_list.len() {
                    driver_duplicates += 1;
                    assert!(
                        driver_set.iter().all(|n| ours_set.contains(n)),
                        "{}",
                        context()
                    );
                } else {
                    assert_eq!(ours_set, driver_set, "set: {}", context());
                }
                compared += 1;
            }
        }
    }
    assert_eq!(compared, RINGS * MAPS.len() * KEYS);
    // Most keys must be compared exactly with the driver, or the proof is void.
    assert!(
        driver_duplicates * 10 < compared,
        "{driver_duplicates} of {compared} driver lists repeat a node"
    );
    eprintln!("{compared} keys compared; the driver repeated a node for {driver_duplicates}");
}

/// A cluster file of two datacenters with racks and 8 random tokens a node.
fn random_cluster(rng: &mut Rng) -> String {
    let mut toml = String::from("algorithm = \"cassandra\"\n");
    let mut n = 0;
    for (dc, nodes, racks) in [
        ("dc1", rng.between(5, 8), rng.between(2, 3)),
        ("dc2", rng.between(3, 6), rng.between(1, 3)),
    ] {
        for i in 0..nodes {
            let tokens: Vec<String> = (0..8).map(|_| (rng.next() as i64).to_string()).collect();
            let field = if rng.below(2) == 0 { "rack" } else { "zone" };
            let _ = write!(
                toml,
                "\n[[nodes]]\nname = \"n{n}\"\ndatacenter = \"{dc}\"\n{field} = \"r{}\"\ntokens = [{}]\n",
                i % racks,
                tokens.join(", ")
            );
            n += 1;
        }
    }
    toml
}
