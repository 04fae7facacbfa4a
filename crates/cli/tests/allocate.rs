//! Allocated points end to end: a cluster grown one reviewed file at a
//! time from nothing (`plan --allocate 16 --write`), Cassandra tokens,
//! `--rebalance` after a leave, `inspect --replicas`, and the errors.

use serde_json::Value;

use crate::support::{TempDir, assert_success, ringwise, stderr, stdout};

fn json(args: &[&str]) -> Value {
    let out = ringwise(args, b"");
    assert_success(&out);
    serde_json::from_str(&stdout(&out)).expect("one JSON document")
}

/// A file's path in `dir`, not created.
fn file(dir: &TempDir, name: &str) -> String {
    dir.path()
        .join(name)
        .to_str()
        .expect("utf-8 path")
        .to_owned()
}

/// `plan --add NODE --allocate 16 --write path` for each node in turn,
/// with `extra` options.
fn grow(path: &str, nodes: impl Iterator<Item = String>, extra: &[&str]) {
    for node in nodes {
        let args = [
            "plan",
            "--from",
            path,
            "--add",
            &node,
            "--allocate",
            "16",
            "--write",
            path,
        ];
        let out = ringwise(&[&args[..], extra].concat(), b"");
        assert_success(&out);
    }
}

fn f(v: &Value) -> f64 {
    v.as_f64().expect("a number")
}

fn peak(path: &str, extra: &[&str]) -> f64 {
    f(&json(&[&["inspect", "--cluster", path, "--format", "json"], extra].concat())["max"])
}

/// Each join moves keys only to the new node, about its share; from 10
/// nodes on no node holds more than 5 % over its share; the file lists
/// every node's 16 points and is what `lookup` reads.
#[test]
fn a_cluster_grows_from_nothing_one_reviewed_file_at_a_time() {
    let dir = TempDir::create("allocate-grow");
    let path = file(&dir, "cluster.toml");
    for i in 0..14 {
        let name = format!("node-{i}");
        let doc = json(&[
            "plan",
            "--from",
            &path,
            "--add",
            &name,
            "--allocate",
            "16",
            "--write",
            &path,
            "--format",
            "json",
        ]);
        if i > 0 {
            let flows = doc["flows"].as_array().expect("flows");
            assert!(
                flows.iter().all(|fl| fl["to"] == name.as_str()),
                "{flows:?}"
            );
            let ratio = f(&doc["moved"]) / f(&doc["optimum"]);
            assert!((0.9..1.1).contains(&ratio), "join {i}: {ratio}");
        }
        if i >= 9 {
            let max = peak(&path, &[]);
            assert!(max <= 1.05, "{} nodes: {max}", i + 1);
        }
    }
    let text = std::fs::read_to_string(&path).expect("written");
    assert_eq!(text.matches("points = [").count(), 14, "{text}");
    let inspect = json(&["inspect", "--cluster", &path, "--format", "json"]);
    let nodes = inspect["nodes"].as_array().expect("nodes");
    assert!(nodes.iter().all(|n| n["points"] == 16));
    let out = ringwise(&["lookup", "--cluster", &path, "user:1", "user:2"], b"");
    assert_success(&out);
    assert_eq!(stdout(&out).lines().count(), 2);
}

#[test]
fn cassandra_tokens_are_allocated_and_written_as_tokens() {
    let dir = TempDir::create("allocate-cassandra");
    let mut text = "algorithm = \"cassandra\"\n".to_owned();
    for i in 0..3 {
        text += &format!("[[nodes]]\nname = \"dc1-{i}\"\n");
    }
    let from = dir.write("three.toml", &text);
    let to = file(&dir, "four.toml");
    let doc = json(&[
        "plan",
        "--from",
        &from,
        "--add",
        "dc1-3",
        "--allocate",
        "16",
        "--replicas",
        "3",
        "--write",
        &to,
        "--format",
        "json",
    ]);
    assert!(
        doc["flows"]
            .as_array()
            .expect("flows")
            .iter()
            .all(|fl| fl["to"] == "dc1-3")
    );
    let written = std::fs::read_to_string(&to).expect("written");
    assert_eq!(written.matches("tokens = [").count(), 4, "{written}");
    let points = json(&["inspect", "--cluster", &to, "--points", "--format", "json"]);
    let ring = points["ring"].as_array().expect("ring");
    assert_eq!(ring.iter().filter(|p| p[1] == "dc1-3").count(), 16);
    assert!(
        ring.iter()
            .all(|p| p[0].as_str().is_some_and(|t| t.parse::<i64>().is_ok())),
        "signed tokens, as decimal strings"
    );
}

/// A leave hands each range to the next point's owner; `--rebalance 8`
/// moves at most 8 points of the others and leaves a better balance.
#[test]
fn rebalance_after_a_leave_evens_out_what_the_neighbours_got() {
    let dir = TempDir::create("allocate-rebalance");
    let path = file(&dir, "twelve.toml");
    grow(&path, (0..12).map(|i| format!("node-{i}")), &[]);
    let plain = file(&dir, "plain.toml");
    let balanced = file(&dir, "balanced.toml");
    let out = ringwise(
        &[
            "plan", "--from", &path, "--remove", "node-4", "--write", &plain,
        ],
        b"",
    );
    assert_success(&out);
    let out = ringwise(
        &[
            "plan",
            "--from",
            &path,
            "--remove",
            "node-4",
            "--rebalance",
            "8",
            "--write",
            &balanced,
        ],
        b"",
    );
    assert_success(&out);
    let moves = stderr(&out)
        .lines()
        .filter(|l| l.starts_with("rebalance: node-"))
        .count();
    assert!((1..=8).contains(&moves), "{}", stderr(&out));
    let (before, after) = (peak(&plain, &[]), peak(&balanced, &[]));
    assert!(after < before, "peak {before} -> {after}");
    assert!(
        !std::fs::read_to_string(&balanced)
            .expect("written")
            .contains("node-4")
    );
}

#[test]
fn inspect_shows_replicated_shares() {
    let dir = TempDir::create("allocate-replicas");
    let path = file(&dir, "zones.toml");
    let nodes = ["a", "b", "c", "a", "b", "c"].iter().enumerate();
    let nodes = nodes.map(|(i, zone)| format!("node-{i}@{zone}"));
    grow(&path, nodes, &["--replicas", "3", "--zones"]);
    let doc = json(&[
        "inspect",
        "--cluster",
        &path,
        "--replicas",
        "3",
        "--zones",
        "--format",
        "json",
    ]);
    assert_eq!(doc["replicas"], 3);
    let shares: f64 = doc["nodes"]
        .as_array()
        .expect("nodes")
        .iter()
        .map(|n| f(&n["share"]))
        .sum();
    assert!((shares - 1.0).abs() < 1e-9, "{shares}");
    // Two nodes per zone, every zone holds one copy of each key: 1/6 each.
    assert!(f(&doc["max"]) <= 1.05 && f(&doc["min"]) >= 0.95, "{doc}");
    let text = stdout(&ringwise(
        &["inspect", "--cluster", &path, "--replicas", "3"],
        b"",
    ));
    assert!(text.contains("shares of 3 replicas per key"), "{text}");
}

#[test]
fn allocation_errors_name_the_option_and_exit_2() {
    let dir = TempDir::create("allocate-errors");
    let ketama = dir.write(
        "ketama.toml",
        "algorithm = \"ketama\"\n[[nodes]]\nname = \"a\"\n",
    );
    let ring = dir.write("ring.toml", "[[nodes]]\nname = \"a\"\n");
    let jump = dir.write(
        "jump.toml",
        "algorithm = \"jump\"\n[[nodes]]\nname = \"a\"\n",
    );
    let cases: [(&[&str], &str); 7] = [
        (
            &["plan", "--from", &ketama, "--add", "b", "--allocate", "16"],
            "ring that keeps them",
        ),
        (
            &["plan", "--from", &ring, "--allocate", "16", "--remove", "a"],
            "--allocate chooses",
        ),
        (
            &["plan", "--from", &ring, "--add", "b", "--replicas", "3"],
            "--replicas and --zones",
        ),
        (
            &["plan", "--from", &ring, "--to", &ring, "--allocate", "16"],
            "drop --to",
        ),
        (
            &["plan", "--from", &jump, "--rebalance", "2"],
            "ring that keeps them",
        ),
        (
            &["plan", "--from", &ring, "--add", "b", "--allocate", "0"],
            "0",
        ),
        (
            &["inspect", "--cluster", &jump, "--replicas", "2"],
            "--replicas",
        ),
    ];
    for (args, message) in cases {
        let out = ringwise(args, b"");
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(message), "{args:?}: {}", stderr(&out));
    }
    // A missing --from without --allocate is still an unreadable file.
    let missing = file(&dir, "missing.toml");
    let out = ringwise(&["plan", "--from", &missing, "--add", "b"], b"");
    assert_eq!(out.status.code(), Some(66), "{}", stderr(&out));
}
