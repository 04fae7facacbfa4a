//! ringwise's `Ring` (md5) against an independent peer: the seed article's
//! Python `ConsistentHashRing`, run as a child process (`seed_recipe.py`).
//!
//! The script builds random rings (vnodes, node names in ASCII and other
//! scripts, integer weights, shuffled insertion order), looks up random keys
//! and prints its answers as JSON. Every answer must be equal here: the owner,
//! three replicas, the owner after removing a node and after adding one. The
//! "after" rings are made with `without_node` / `with_node`, so the
//! incremental paths are what gets compared.
//!
//! A missing `python3` or a failing script fails the test: it is never
//! skipped.

use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;

use ringwise::{Keyed, Node, Placement, Ring, StableHash};
use serde_json::Value;

use crate::support::process;

const SEED: u64 = 20_261_129;
const CASES: usize = 40;
const KEYS_PER_CASE: usize = 200;
const REPLICAS: usize = 3;
/// Mismatches quoted in a failure message (all are counted).
const SHOWN: usize = 20;

/// The peer's JSON, run once and shared by the tests.
fn peer() -> &'static [Value] {
    static PEER: OnceLock<Vec<Value>> = OnceLock::new();
    PEER.get_or_init(run_peer)
}

fn run_peer() -> Vec<Value> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/seed_recipe.py");
    let stdout = process::output(
        Command::new("python3")
            .arg(&script)
            .arg(SEED.to_string())
            .arg(CASES.to_string()),
        "This test needs python3 (standard library only) on PATH, which \
         scripts/install-test-deps installs; it is never skipped.",
    );
    let doc: Value = serde_json::from_slice(&stdout).unwrap_or_else(|err| {
        panic!(
            "the peer's output is not JSON ({err}); it starts with {:?}",
            String::from_utf8_lossy(&stdout[..stdout.len().min(200)])
        )
    });
    let Value::Array(cases) = doc else {
        panic!("the peer must print a JSON list of cases");
    };
    // The fixed case plus CASES random ones: a peer printing too little must
    // not pass by comparing nothing.
    assert_eq!(cases.len(), CASES + 1, "number of cases from the peer");
    cases
}

fn field<'a>(case: &'a Value, name: &str) -> &'a Value {
    case.get(name)
        .unwrap_or_else(|| panic!("case without field `{name}`: {case}"))
}

fn text<'a>(value: &'a Value, what: &str) -> &'a str {
    value
        .as_str()
        .unwrap_or_else(|| panic!("{what} must be a string, got {value}"))
}

fn list<'a>(value: &'a Value, what: &str) -> &'a [Value] {
    value
        .as_array()
        .unwrap_or_else(|| panic!("{what} must be a list, got {value}"))
}

/// `{"name", "weight"}` with an integer weight, as a ringwise node.
fn node(value: &Value) -> Node {
    let name = text(field(value, "name"), "a node name");
    let weight = field(value, "weight")
        .as_u64()
        .unwrap_or_else(|| panic!("weight must be a positive integer: {value}"));
    Node::new(name).weight(weight as f64)
}

/// A list of names, `null` standing for "no owner" (an empty ring).
fn owners(value: &Value, what: &str) -> Vec<Option<String>> {
    list(value, what)
        .iter()
        .map(|v| match v {
            Value::Null => None,
            other => Some(text(other, what).to_owned()),
        })
        .collect()
}

/// The ring of one case, nodes given in the peer's (shuffled) order.
struct Case {
    index: usize,
    vnodes: u32,
    nodes: Vec<Node>,
    keys: Vec<String>,
    ring: Keyed<Ring>,
}

impl Case {
    fn new(index: usize, json: &Value) -> Self {
        let vnodes = field(json, "vnodes")
            .as_u64()
            .and_then(|v| u32::try_from(v).ok())
            .unwrap_or_else(|| panic!("case {index}: bad vnodes"));
        let nodes: Vec<Node> = list(field(json, "nodes"), "nodes")
            .iter()
            .map(node)
            .collect();
        let keys: Vec<String> = list(field(json, "keys"), "keys")
            .iter()
            .map(|k| text(k, "a key").to_owned())
            .collect();
        let ring = Ring::builder()
            .hasher(StableHash::Md5)
            .vnodes(vnodes)
            .nodes(nodes.clone())
            .build()
            .unwrap_or_else(|err| panic!("case {index}: ringwise rejected the ring: {err}"));
        let ring = Keyed::new(ring, StableHash::Md5);
        Case {
            index,
            vnodes,
            nodes,
            keys,
            ring,
        }
    }

    /// What to paste into a bug report: the whole ring setup.
    fn describe(&self) -> String {
        let nodes: Vec<String> = self
            .nodes
            .iter()
            .map(|n| format!("{:?}x{}", n.name, n.weight))
            .collect();
        format!(
            "case {} (md5, vnodes {}, nodes in insertion order [{}])",
            self.index,
            self.vnodes,
            nodes.join(", ")
        )
    }
}

/// Compares one list of owners and records every difference.
fn compare_owners(
    case: &Case,
    what: &str,
    ring: &Keyed<Ring>,
    expected: &[Option<String>],
    mismatches: &mut Vec<String>,
) {
    assert_eq!(
        expected.len(),
        case.keys.len(),
        "{}: `{what}` has a wrong length",
        case.describe()
    );
    for (key, want) in case.keys.iter().zip(expected) {
        let got = ring.locate(key);
        if got != want.as_deref() {
            mismatches.push(format!(
                "{}: {what}, key {key:?}: python {want:?}, ringwise {got:?}",
                case.describe()
            ));
        }
    }
}

/// Checks every answer of one case; returns the number of lookups compared.
fn check_case(index: usize, json: &Value, mismatches: &mut Vec<String>) -> usize {
    let case = Case::new(index, json);
    let keys = case.keys.len();

    compare_owners(
        &case,
        "get_node",
        &case.ring,
        &owners(field(json, "owners"), "owners"),
        mismatches,
    );

    let replicas = list(field(json, "replicas"), "replicas");
    assert_eq!(replicas.len(), keys, "{}: replicas length", case.describe());
    for (key, want) in case.keys.iter().zip(replicas) {
        let want: Vec<&str> = list(want, "a replica list")
            .iter()
            .map(|n| text(n, "a replica"))
            .collect();
        let got = case.ring.replicas(key, REPLICAS);
        if got != want {
            mismatches.push(format!(
                "{}: get_nodes(key, {REPLICAS}), key {key:?}: python {want:?}, ringwise {got:?}",
                case.describe()
            ));
        }
    }

    let removed = text(field(json, "removed"), "removed");
    let smaller = case
        .ring
        .placement()
        .without_node(removed)
        .unwrap_or_else(|err| panic!("{}: without_node({removed:?}): {err}", case.describe()));
    let smaller = Keyed::new(smaller, StableHash::Md5);
    compare_owners(
        &case,
        &format!("get_node after remove_node({removed:?})"),
        &smaller,
        &owners(field(json, "owners_after_remove"), "owners_after_remove"),
        mismatches,
    );

    let added = node(field(json, "added"));
    let label = format!(
        "get_node after add_node({:?}, {})",
        added.name, added.weight
    );
    let bigger = case
        .ring
        .placement()
        .with_node(added)
        .unwrap_or_else(|err| panic!("{}: with_node: {err}", case.describe()));
    let bigger = Keyed::new(bigger, StableHash::Md5);
    compare_owners(
        &case,
        &label,
        &bigger,
        &owners(field(json, "owners_after_add"), "owners_after_add"),
        mismatches,
    );

    4 * keys
}

/// The article's own example, so a broken peer cannot agree with a broken
/// ringwise: `user:42` goes to cache-a, its two replicas are cache-a and
/// cache-b, and without cache-a it goes to cache-b.
#[test]
fn article_example_holds_in_both() {
    let fixed = &peer()[0];
    let nodes: Vec<&str> = list(field(fixed, "nodes"), "nodes")
        .iter()
        .map(|n| text(field(n, "name"), "a node name"))
        .collect();
    assert_eq!(nodes, ["cache-a", "cache-b", "cache-c"], "fixed case nodes");
    assert_eq!(field(fixed, "vnodes").as_u64(), Some(100));
    assert_eq!(
        owners(field(fixed, "keys"), "keys"),
        [Some("user:42".into())]
    );
    assert_eq!(
        owners(field(fixed, "owners"), "owners"),
        [Some("cache-a".into())],
        "python get_node(user:42)"
    );
    let replicas = &list(field(fixed, "replicas"), "replicas")[0];
    let replicas: Vec<&str> = list(replicas, "replicas")
        .iter()
        .map(|n| text(n, "a replica"))
        .collect();
    assert_eq!(
        replicas[..2],
        ["cache-a", "cache-b"],
        "python get_nodes(user:42, 2)"
    );
    assert_eq!(text(field(fixed, "removed"), "removed"), "cache-a");
    assert_eq!(
        owners(field(fixed, "owners_after_remove"), "owners_after_remove"),
        [Some("cache-b".into())],
        "python get_node(user:42) without cache-a"
    );

    let ring = Ring::builder()
        .hasher(StableHash::Md5)
        .vnodes(100)
        .nodes(["cache-a", "cache-b", "cache-c"].map(Node::new))
        .build()
        .expect("the article's ring");
    let ring = Keyed::new(ring, StableHash::Md5);
    assert_eq!(ring.locate("user:42"), Some("cache-a"));
    assert_eq!(ring.replicas("user:42", 2), ["cache-a", "cache-b"]);
    let smaller = ring
        .placement()
        .without_node("cache-a")
        .expect("cache-a is a member");
    assert_eq!(
        Keyed::new(smaller, StableHash::Md5).locate("user:42"),
        Some("cache-b")
    );
}

#[test]
fn ring_agrees_with_python_seed_recipe() {
    let cases = peer();
    let mut mismatches = Vec::new();
    let mut lookups = 0;
    for (index, json) in cases.iter().enumerate() {
        assert_eq!(
            list(field(json, "keys"), "keys").len(),
            if index == 0 { 1 } else { KEYS_PER_CASE },
            "case {index}: number of keys"
        );
        lookups += check_case(index, json, &mut mismatches);
    }
    assert!(
        mismatches.is_empty(),
        "ringwise disagrees with the Python seed recipe on {} of {lookups} lookups \
         (seed {SEED}); the first {}:\n{}",
        mismatches.len(),
        mismatches.len().min(SHOWN),
        mismatches[..mismatches.len().min(SHOWN)].join("\n")
    );
    // 1 fixed key + CASES x KEYS_PER_CASE keys, four answers each.
    assert_eq!(lookups, 4 * (1 + CASES * KEYS_PER_CASE));
}
