//! go-redis's and go-rendezvous's own test expectations for `go-redis`,
//! read from `tests/fixtures/go_redis/expectations.tsv` (sources and
//! commits in its header; go-redis is not packaged in Debian, so these
//! stand in for running it). Every line is checked: keys go through the
//! registry's `go-redis` cluster (xxh64, go-redis's `{}` hash tag) as
//! `ringwise lookup` sends them.

use std::collections::BTreeMap;

use ringwise::{Algorithm, ClusterSpec, Node, Placement};

const EXPECTATIONS: &str = include_str!("fixtures/go_redis/expectations.tsv");

#[test]
fn go_redis_test_expectations() {
    let mut checked = 0;
    for line in EXPECTATIONS.lines().filter(|l| !l.starts_with('#')) {
        let [test, nodes, keys, expect] = line.split('\t').collect::<Vec<_>>()[..] else {
            panic!("four fields: {line:?}");
        };
        let nodes: Vec<Node> = match nodes {
            "-" => Vec::new(),
            list => list.split(',').map(Node::new).collect(),
        };
        let cluster = ClusterSpec::new(Algorithm::GoRedis, nodes)
            .expect("a go-redis spec")
            .build()
            .expect("builds");
        let (pattern, range) = keys.split_once(':').expect("PATTERN:A..B");
        let (a, b) = range.split_once("..").expect("A..B");
        let (a, b): (u64, u64) = (a.parse().expect("A"), b.parse().expect("B"));
        let mut counts: BTreeMap<String, u64> = BTreeMap::new();
        let mut unowned = 0;
        for i in a..=b {
            let key = pattern.replace("{i}", &i.to_string());
            match cluster.locate(key.as_bytes()) {
                Some(name) => *counts.entry(name.to_owned()).or_default() += 1,
                None => unowned += 1,
            }
        }
        let total = b - a + 1;
        let (kind, value) = expect.split_once(':').unwrap_or((expect, ""));
        match kind {
            "none" => assert_eq!(unowned, total, "{test}"),
            "all" => assert_eq!(
                counts,
                BTreeMap::from([(value.to_owned(), total)]),
                "{test}"
            ),
            "count" => {
                let want: BTreeMap<String, u64> = (value.split(','))
                    .map(|pair| {
                        let (name, n) = pair.split_once('=').expect("NAME=N");
                        (name.to_owned(), n.parse().expect("N"))
                    })
                    .collect();
                assert_eq!(counts, want, "{test}");
            }
            "above" => {
                let floor: u64 = value.parse().expect("N");
                assert!(counts.values().all(|&n| n > floor), "{test}: {counts:?}");
                assert_eq!(
                    counts.len(),
                    cluster.placement().len(),
                    "{test}: every shard"
                );
            }
            "near" => {
                let (n, d) = value.split_once(':').expect("N:D");
                let (n, d): (u64, u64) = (n.parse().expect("N"), d.parse().expect("D"));
                assert!(
                    counts.values().all(|&c| c.abs_diff(n) <= d),
                    "{test}: {counts:?}"
                );
                assert_eq!(
                    counts.len(),
                    cluster.placement().len(),
                    "{test}: every shard"
                );
            }
            other => panic!("{test}: unknown expectation {other:?}"),
        }
        checked += 1;
    }
    assert_eq!(checked, 11, "every line of the fixture");
}
