//! The compatibility flavours against their peers' own published output.
//!
//! - `fixtures/libmemcached_ketama.tsv`: libmemcached's 99-key ketama test
//!   (`test/fixtures/ketama.hpp`), weighted and spy tables, with each key's
//!   hash and the point it lands on;
//! - `fixtures/nginx_upstream.csv`: 1,000 requests logged by a real nginx
//!   (`$request_uri,$upstream_addr`, pingora-ketama's `test-data`) with 9
//!   servers of weight 100 and `hash $request_uri consistent`;
//! - the colliding ketama pair of uhashring's issue #6, for the tie rules.
//!
//! The live peers (libmemcached's C API, uhashring, nginx, redis,
//! cassandra-driver) are compared in the CLI's `compat` tests.

use ringwise::wire::{cell_key, cell_point, cell_value, md5_le32};
use ringwise::{Algorithm, AnyPlacement, ClusterSpec, Flavor, Keyed, Node, Params, Placement};

const KETAMA: &str = include_str!("fixtures/libmemcached_ketama.tsv");
const NGINX: &str = include_str!("fixtures/nginx_upstream.csv");

fn build(algorithm: Algorithm, nodes: Vec<Node>, params: &Params) -> Keyed<AnyPlacement> {
    let placement = AnyPlacement::build(algorithm, nodes, params).expect("builds");
    Keyed::new(placement, algorithm.default_hash_with(params))
}

fn fixture_servers() -> Vec<Node> {
    let weights = [600, 300, 200, 350, 1000, 800, 950, 100];
    (1..=8)
        .zip(weights)
        .map(|(i, w)| Node::new(format!("10.0.1.{i}:11211")).weight(f64::from(w)))
        .collect()
}

/// `(key, hash1, hash2, server, spy server)` rows.
fn ketama_rows() -> Vec<(&'static str, u32, u32, &'static str, &'static str)> {
    let rows = KETAMA.lines().filter(|l| !l.starts_with('#'));
    rows.map(|line| {
        let f: Vec<&str> = line.split('\t').collect();
        let number = |s: &str| s.parse::<u32>().expect("a number");
        (f[0], number(f[1]), number(f[2]), f[3], f[4])
    })
    .collect()
}

#[test]
fn libmemcached_fixture_weighted_and_spy() {
    let rows = ketama_rows();
    assert_eq!(rows.len(), 99);
    for flavor in [Flavor::Libmemcached, Flavor::Spymemcached] {
        let params = Params {
            flavor,
            ..Params::DEFAULT
        };
        let keyed = build(Algorithm::Ketama, fixture_servers(), &params);
        let ring = keyed.placement().as_ring().expect("a ring");
        assert_eq!(ring.point_count(), 1264, "{flavor}");
        for &(key, hash1, hash2, server, spy) in &rows {
            assert_eq!(md5_le32(key.as_bytes()), hash1, "{key}");
            let want = if flavor == Flavor::Libmemcached {
                server
            } else {
                spy
            };
            let got = keyed.locate(key).expect("an owner");
            assert_eq!(got, format!("{want}:11211"), "{flavor} {key:?}");
            if flavor == Flavor::Libmemcached {
                // The point the key lands on: the first >= its hash, wrapping.
                let first = ring.points().next().map(|(p, _)| p);
                let point = ring
                    .points()
                    .map(|(p, _)| p)
                    .find(|&p| p >= cell_key(hash1));
                let point = point.or(first).map(cell_value);
                assert_eq!(point, Some(hash2), "{key:?}");
            }
        }
    }
}

#[test]
fn libmemcached_points_per_server() {
    let keyed = build(Algorithm::Ketama, fixture_servers(), &Params::DEFAULT);
    let stats = keyed.placement().as_ring().expect("a ring").stats();
    let points: Vec<u64> = stats.nodes.iter().map(|n| n.points).collect();
    assert_eq!(points, [176, 88, 56, 104, 296, 236, 280, 28]);
}

#[test]
fn nginx_log_of_a_real_upstream() {
    let nodes = (1..=9).map(|i| Node::new(format!("10.0.0.{i}:443")).weight(100.0));
    let keyed = build(Algorithm::Nginx, nodes.collect(), &Params::DEFAULT);
    let mut rows = 0;
    for line in NGINX.lines() {
        let (uri, server) = line.split_once(',').expect("uri,server");
        assert_eq!(keyed.locate(uri), Some(server), "{uri}");
        rows += 1;
    }
    assert_eq!(rows, 1001);
    let ring = keyed.placement().as_ring().expect("a ring");
    assert_eq!(ring.point_count(), 144_000);
}

/// `"172.31.1.125-35"` point 2 equals `"172.31.1.202-38"` point 0
/// (1009926488): a key just below goes to one of the two by the tie rule.
#[test]
fn the_real_ketama_collision_follows_each_tie_rule() {
    let point = 1_009_926_488u32;
    let nodes = || vec![Node::new("172.31.1.125"), Node::new("172.31.1.202")];
    let owner = |flavor: Flavor, listed: Vec<Node>, hash: u64| {
        let params = Params {
            flavor,
            ..Params::DEFAULT
        };
        let keyed = build(Algorithm::Ketama, listed, &params);
        let id = keyed.placement().owner(hash).expect("an owner");
        keyed
            .placement()
            .nodes()
            .name(id)
            .expect("a name")
            .to_owned()
    };
    let mut reversed = nodes();
    reversed.reverse();
    // libmemcached: the earlier listed server wins the shared point.
    let at = cell_key(point);
    assert_eq!(owner(Flavor::Libmemcached, nodes(), at), "172.31.1.125");
    assert_eq!(
        owner(Flavor::Libmemcached, reversed.clone(), at),
        "172.31.1.202"
    );
    // uhashring: the key just below the point; the later added one wins.
    let below = cell_key(point - 1);
    assert_eq!(owner(Flavor::Uhashring, nodes(), below), "172.31.1.202");
    assert_eq!(owner(Flavor::Uhashring, reversed, below), "172.31.1.125");
    // The ring holds both points, at the same place.
    let keyed = build(Algorithm::Ketama, nodes(), &Params::DEFAULT);
    let ring = keyed.placement().as_ring().expect("a ring");
    let shared = ring.points().filter(|&(p, _)| p == cell_point(point, true));
    assert_eq!(shared.count(), 2);
}

#[test]
fn ketama_flavours_from_a_cluster_file() {
    let spec = ClusterSpec::from_toml(
        "algorithm = \"ketama\"\nflavor = \"twemproxy\"\n\
         [[nodes]]\nname = \"server1\"\nweight = 2\n\
         [[nodes]]\nname = \"10.0.0.2:11212\"\n",
    )
    .expect("valid");
    assert_eq!(spec.params.flavor, Flavor::Twemproxy);
    assert_eq!(spec.params.hash.name(), "fnv1a64-twemproxy");
    let err =
        ClusterSpec::from_toml("algorithm = \"ketama\"\n[[nodes]]\nname = \"a\"\nweight = 1.5\n")
            .expect_err("fractional weight");
    let text = err.to_string();
    assert!(
        text.contains("line 4") && text.contains("whole numbers"),
        "{text}"
    );
}

/// Envoy's `ring_hash_lb_test.cc` with `use_hostname_for_hashing`: hosts
/// `"90".."95"`, min ring 12, the points in ring order.
#[test]
fn envoy_ring_with_hostnames() {
    let params = Params {
        min_ring_size: 12,
        ..Params::DEFAULT
    };
    let nodes = (90..=95).map(|p| Node::new(p.to_string())).collect();
    let keyed = build(Algorithm::EnvoyRing, nodes, &params);
    let ring = keyed.placement().as_ring().expect("a ring");
    let table = keyed.placement().nodes();
    let got: Vec<(u64, &str)> = ring
        .points()
        .map(|(p, id)| (p, table.name(id).expect("a name")))
        .collect();
    let want = [
        (1_975_508_444_536_362_413, "95"),
        (2_376_063_919_839_173_711, "95"),
        (2_386_806_903_309_390_596, "93"),
        (6_749_904_478_991_551_885, "94"),
        (6_803_900_775_736_438_537, "93"),
        (7_225_015_537_174_310_577, "92"),
        (8_787_465_352_164_086_522, "90"),
        (11_282_020_843_382_717_940, "92"),
        (13_723_418_369_486_627_818, "91"),
        (13_776_502_110_861_797_421, "90"),
        (14_338_313_586_354_474_791, "91"),
        (15_364_271_037_087_512_980, "94"),
    ];
    assert_eq!(got, want);
}

#[test]
fn explicit_slot_tables_are_checked() {
    let file = |slots_b: &str| {
        format!(
            "algorithm = \"slots\"\n[[nodes]]\nname = \"a\"\nslots = [\"0-8191\"]\n\
             [[nodes]]\nname = \"b\"\nslots = {slots_b}\n"
        )
    };
    let spec = ClusterSpec::from_toml(&file("[\"8192-16383\"]")).expect("covers all");
    let keyed = spec.build().expect("builds");
    assert_eq!(keyed.locate("somekey"), Some("b")); // slot 11058
    assert_eq!(keyed.locate("foo{hash_tag}"), Some("a")); // slot 2515
    let gap = ClusterSpec::from_toml(&file("[\"8192-16000\", 16002]")).expect_err("gaps");
    let text = gap.to_string();
    assert!(
        text.contains("16001") && text.contains("16003-16383"),
        "{text}"
    );
    let twice = ClusterSpec::from_toml(&file("[\"8000-16383\"]")).expect_err("overlap");
    let text = twice.to_string();
    assert!(
        text.contains("line 7") && text.contains("slot 8000"),
        "{text}"
    );
    let bad = ClusterSpec::from_toml(&file("[\"9-x\"]")).expect_err("not a range");
    assert!(bad.to_string().contains("\"9-x\""), "{bad}");
}

#[test]
fn cassandra_tokens_in_a_cluster_file() {
    let file = "algorithm = \"cassandra\"\n\
                [[nodes]]\nname = \"c1\"\ntokens = [-100, 100]\n\
                [[nodes]]\nname = \"c2\"\ntokens = [0]\n";
    let keyed = ClusterSpec::from_toml(file)
        .expect("valid")
        .build()
        .expect("builds");
    let token = ringwise::cassandra_token(b"123");
    assert!(token < -100);
    assert_eq!(keyed.locate("123"), Some("c1"));
    assert_eq!(keyed.replicas("123", 2), ["c1", "c2"]);
    let twice = "algorithm = \"cassandra\"\n\
                 [[nodes]]\nname = \"c1\"\ntokens = [5]\n\
                 [[nodes]]\nname = \"c2\"\ntokens = [5]\n";
    let err = ClusterSpec::from_toml(twice).expect_err("shared token");
    let text = err.to_string();
    assert!(text.contains("token 5") && text.contains("line "), "{text}");
    let wrong = "algorithm = \"jump\"\n[[nodes]]\nname = \"c1\"\ntokens = [5]\n";
    let err = ClusterSpec::from_toml(wrong).expect_err("jump reads no tokens");
    assert!(err.to_string().contains("line 4"), "{err}");
}
