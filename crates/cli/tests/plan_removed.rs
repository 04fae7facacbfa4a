//! `plan --write` of a memento, anchor or dx cluster whose buckets were
//! removed, then `plan --from` the written file, step after step: each
//! plan moves exactly what the same change moves in memory (the JSON's
//! moved fraction and flows against `ringwise::diff` of the live
//! snapshots), a leave only the leaving node's keys, a join only keys to
//! the joining node.

use ringwise::{AnyPlacement, ClusterSpec, DEFAULT_SAMPLES, Method, Node, Placement, diff};
use serde_json::Value;

use crate::support::{TempDir, assert_success, cluster, names, ringwise, stderr, stdout};

/// One step of a history: `--remove NAME` or `--add NAME`.
const STEPS: [(&str, &str); 8] = [
    ("--remove", "node-1"),
    ("--remove", "node-4"),
    ("--add", "x"),
    ("--remove", "node-0"),
    ("--remove", "x"),
    ("--add", "y"),
    ("--remove", "node-5"),
    ("--add", "z"),
];

/// A sampled fraction as the number of the 2^20 sampled hashes it counts:
/// exact, where serde_json's float parsing may miss the last digit.
fn hits(f: f64) -> u64 {
    assert!(f.is_finite(), "a fraction: {f}");
    (f * DEFAULT_SAMPLES as f64).round() as u64
}

fn apply(placement: &AnyPlacement, (flag, name): (&str, &str)) -> AnyPlacement {
    match flag {
        "--remove" => placement.without_node(name),
        _ => placement.with_node(Node::new(name)),
    }
    .expect("the change applies in memory")
}

#[test]
fn plan_from_a_written_cluster_with_removed_buckets_moves_what_memory_moves() {
    let dir = TempDir::create("plan-removed");
    for algorithm in ["memento", "anchor", "dx"] {
        let text = cluster(algorithm, &names(6));
        let mut current = dir.write(&format!("{algorithm}-0.toml"), &text);
        let spec = ClusterSpec::from_toml(&text).expect("valid");
        let mut live = spec.build().expect("builds").placement().clone();
        for (i, (flag, name)) in STEPS.into_iter().enumerate() {
            let context = format!("{algorithm} step {i}: {flag} {name}");
            let written = dir.path().join(format!("{algorithm}-{}.toml", i + 1));
            let written = written.to_str().expect("utf-8").to_owned();
            let args = [
                "plan", "--format", "json", "--from", &current, flag, name, "--write", &written,
            ];
            let out = ringwise(&args, b"");
            assert_success(&out);
            let doc: Value = serde_json::from_str(&stdout(&out)).expect("JSON");
            let next = apply(&live, (flag, name));
            let movement = diff(&live, &next);
            assert!(
                matches!(movement.method, Method::Sampled { .. }),
                "{context}"
            );
            assert_eq!(
                hits(doc["moved"].as_f64().expect("moved")),
                hits(movement.moved()),
                "{context}"
            );
            let flows = doc["flows"].as_array().expect("flows");
            assert_eq!(flows.len(), movement.flows.len(), "{context}");
            for (json, flow) in flows.iter().zip(&movement.flows) {
                assert_eq!(json["from"], movement.name(flow.from), "{context}");
                assert_eq!(json["to"], movement.name(flow.to), "{context}");
                assert_eq!(
                    hits(json["fraction"].as_f64().expect("a fraction")),
                    hits(flow.fraction),
                    "{context}"
                );
                let moved_through = if flag == "--remove" {
                    &json["from"]
                } else {
                    &json["to"]
                };
                assert_eq!(moved_through, name, "{context}: only {name}'s keys move");
            }
            assert!(movement.moved() > 0.0, "{context}");
            live = next;
            current = written;
        }
        // The last file holds the removals still pending: node-1's bucket
        // 1, then node-0's bucket 0; x, y and z each took back the last
        // removed bucket (4, 4, then node-5's 5, removed while holes were
        // open).
        let last = std::fs::read_to_string(&current).expect("written");
        assert!(last.contains("removed = [1, 0]"), "{algorithm}:\n{last}");
        let spec = ClusterSpec::from_toml(&last).expect("reads back");
        let rebuilt = spec.build().expect("builds");
        for h in (0..10_000u64).map(|i| ringwise::replica_key(i, 17)) {
            let name = |p: &AnyPlacement| {
                p.owner(h)
                    .and_then(|id| p.nodes().name(id))
                    .map(str::to_owned)
            };
            assert_eq!(
                name(rebuilt.placement()),
                name(&live),
                "{algorithm} hash {h}"
            );
        }
    }
    // A removed list on a ring file is refused on its line (exit 65).
    let ring = dir.write(
        "ring.toml",
        &format!("removed = [0]\n{}", cluster("ring", &names(2))),
    );
    let out = ringwise(&["plan", "--from", &ring, "--add", "x"], b"");
    assert_eq!(out.status.code(), Some(65), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("line 1, field `removed`"),
        "{}",
        stderr(&out)
    );
    // A memento file's list under `--algo ring`: the option is at fault
    // (exit 2, naming it), not the file.
    let memento = dir.write(
        "memento.toml",
        &format!("removed = [0]\n{}", cluster("memento", &names(2))),
    );
    let out = ringwise(
        &["lookup", "--cluster", &memento, "--algo", "ring", "k"],
        b"",
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--algo"), "{}", stderr(&out));
}
