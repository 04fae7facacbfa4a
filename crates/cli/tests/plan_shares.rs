//! `plan`'s before and after columns are the real shares,
//! the numbers `inspect` prints for either side, not the weights' (one of
//! 4 nginx upstreams read "before 25.00 %" yet "gives 28.12 %"). For each
//! kind of placement (ring arcs, a slot table, maglev's table, sampled
//! memento) the plan's `before` must equal `inspect --format json`'s share of
//! `--from`, its `after` `inspect`'s share of the written target, and a
//! leaving node of a ring must give exactly what it held.

use serde_json::Value;

use crate::support::{TempDir, assert_success, ringwise, stdout};

fn json(args: &[&str]) -> Value {
    let out = ringwise(args, b"");
    assert_success(&out);
    serde_json::from_str(stdout(&out).trim()).expect("one JSON document")
}

/// `inspect`'s share of each node of the cluster file at `path`.
fn inspected(path: &str) -> Vec<(String, f64)> {
    let doc = json(&["inspect", "--cluster", path, "--format", "json"]);
    let nodes = doc["nodes"].as_array().expect("nodes");
    nodes
        .iter()
        .map(|n| {
            (
                n["name"].as_str().expect("name").to_owned(),
                n["share"].as_f64().expect("share"),
            )
        })
        .collect()
}

/// The plan's `field` of `name`.
fn column(plan: &Value, name: &str, field: &str) -> f64 {
    let nodes = plan["nodes"].as_array().expect("nodes");
    let node = nodes.iter().find(|n| n["name"] == name);
    node.unwrap_or_else(|| panic!("{name} in the plan"))[field]
        .as_f64()
        .expect("a share")
}

#[test]
fn before_and_after_are_the_shares_inspect_prints() {
    let dir = TempDir::create("plan-shares");
    for (algorithm, exact) in [
        ("nginx", true),
        ("ring", true),
        ("slots", true),
        ("maglev", true),
        ("memento", false),
    ] {
        let nodes: String = ["10.0.0.1:80", "10.0.0.2:80", "10.0.0.3:80", "10.0.0.4:80"]
            .iter()
            .map(|n| format!("[[nodes]]\nname = \"{n}\"\n"))
            .collect();
        let from = dir.write(
            &format!("{algorithm}.toml"),
            &format!("algorithm = \"{algorithm}\"\n{nodes}"),
        );
        let to = dir.path().join(format!("{algorithm}-after.toml"));
        let to = to.to_str().expect("utf-8");
        let plan = json(&[
            "plan",
            "--from",
            &from,
            "--remove",
            "10.0.0.2:80",
            "--write",
            to,
            "--format",
            "json",
        ]);
        let samples = plan["shares_samples"].as_array().expect("shares_samples");
        assert_eq!(
            samples.iter().all(|s| s == 0),
            exact,
            "{algorithm}: {samples:?}"
        );
        for (name, share) in inspected(&from) {
            assert_eq!(
                column(&plan, &name, "before"),
                share,
                "{algorithm}: {name} before"
            );
        }
        for (name, share) in inspected(to) {
            assert_eq!(
                column(&plan, &name, "after"),
                share,
                "{algorithm}: {name} after"
            );
        }
        assert_eq!(column(&plan, "10.0.0.2:80", "after"), 0.0);
        assert_eq!(column(&plan, "10.0.0.2:80", "expected_before"), 0.25);
        if exact {
            // All it held moves: the real share is what it gives.
            let gives = column(&plan, "10.0.0.2:80", "gives");
            let before = column(&plan, "10.0.0.2:80", "before");
            assert!(
                (gives - before).abs() < 1e-12,
                "{algorithm}: gives {gives}, held {before}"
            );
        }
    }
    dir.remove();
}

#[test]
fn the_text_says_what_the_columns_are() {
    let dir = TempDir::create("plan-shares-text");
    let from = dir.write("c.toml", "algorithm = \"nginx\"\n[[nodes]]\nname = \"a\"\n[[nodes]]\nname = \"b\"\n[[nodes]]\nname = \"c\"\n");
    let text = stdout(&ringwise(&["plan", "--from", &from, "--remove", "b"], b""));
    assert!(
        text.contains("(before, after: shares of the keys, as `inspect` prints them;"),
        "{text}"
    );
    assert!(!text.contains("expected shares from the weights"), "{text}");
    dir.remove();
}
