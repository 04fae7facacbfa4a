//! `ringwise simulate` end to end: invariants of the figures, the three
//! output formats, the charts, and every bad option.

use serde_json::Value;

use crate::support::{TempDir, assert_success, simulate, stderr};

/// A small run of every experiment (a few thousand keys).
const SMALL: [&str; 12] = [
    "--keys",
    "20000",
    "--seed-keys",
    "4000",
    "--seeds",
    "4",
    "--rendezvous-keys",
    "3000",
    "--vnodes",
    "1,10,100",
    "--nodes",
    "6",
];

fn json(args: &[&str]) -> Value {
    let out = simulate(&[&SMALL[..], args, &["--format", "json"]].concat());
    assert_success(&out);
    serde_json::from_slice(&out.stdout).expect("one JSON document")
}

fn f(v: &Value) -> f64 {
    v.as_f64().expect("a number")
}

#[test]
fn ring_invariants_hold_for_every_hash() {
    for hash in ["md5", "xxh3", "fnv1a64"] {
        let doc = json(&["--hash", hash]);
        let nodes = doc["params"]["nodes"].as_u64().expect("nodes");
        for row in doc["single"].as_array().expect("single") {
            // A ring moves keys only to the joining node.
            assert_eq!(f(&row["to_new"]), 1.0, "{hash}: {row}");
            assert!(row["donors"].as_u64().expect("donors") <= nodes);
            assert!(f(&row["min"]) <= 1.0 && f(&row["max"]) >= 1.0);
        }
        for row in doc["seeds"].as_array().expect("seeds") {
            assert!(f(&row["moved_min"]) <= f(&row["moved_avg"]));
            assert!(f(&row["moved_avg"]) <= f(&row["moved_max"]));
            assert_eq!(row["moved_runs"].as_array().expect("runs").len(), 4);
        }
        for row in doc["failure"].as_array().expect("failure") {
            assert_eq!(row["only_victim_moved"], true, "{hash}: {row}");
            assert!(f(&row["neighbor_after"]) > f(&row["neighbor_before"]));
            let after: f64 = row["shares_after"]
                .as_object()
                .expect("shares")
                .values()
                .map(f)
                .sum();
            assert!((after - 1.0).abs() < 1e-9);
        }
        let r = &doc["rendezvous"];
        assert_eq!(f(&r["to_new"]), 1.0);
        // `% N` from 6 to 7 nodes moves about 6/7 of the keys.
        let grow = &doc["modulo"][0];
        assert_eq!(
            (grow["from"].as_u64(), grow["to"].as_u64()),
            (Some(6), Some(7))
        );
        assert!((f(&grow["moved"]) - 6.0 / 7.0).abs() < 0.02);
        assert!(doc["elapsed_s"].is_number());
    }
}

#[test]
fn cost_model_uses_expected_and_measured_fractions() {
    let doc = json(&[
        "--experiments",
        "cost",
        "--rps",
        "1000",
        "--hit-rate",
        "0.9",
        "--data",
        "70GB",
    ]);
    assert!(doc.get("single").is_none() && doc.get("modulo").is_none());
    let cost = &doc["cost"];
    let expected = &cost["expected"];
    assert!((f(&expected["modulo_moved"]) - 6.0 / 7.0).abs() < 1e-12);
    assert!((f(&expected["ring_bytes"]) - 10e9).abs() < 1.0);
    assert!((f(&cost["normal_db_rps"]) - 100.0).abs() < 1e-9);
    assert!(cost["measured"]["ring_moved"].is_number());
    assert_eq!(cost["measured_vnodes"], 100);
}

#[test]
fn text_and_csv_outputs() {
    let out = simulate(&SMALL);
    let text = String::from_utf8(out.stdout).expect("utf-8");
    for needle in [
        "6 -> 7",
        "vnodes  moved   to_new",
        "receivers",
        "Rendezvous",
        "Cost of moved keys",
    ] {
        assert!(text.contains(needle), "{needle:?} missing from:\n{text}");
    }
    let out = simulate(
        &[
            &SMALL[..],
            &["--format", "csv", "--experiments", "modulo,weights"],
        ]
        .concat(),
    );
    let csv = String::from_utf8(out.stdout).expect("utf-8");
    let sections: Vec<&str> = csv.trim().split("\n\n").collect();
    assert_eq!(sections.len(), 2, "{csv}");
    assert!(sections[0].starts_with("experiment,from,to,moved\nmodulo,6,7,"));
    assert_eq!(sections[1].lines().count(), 1 + 2 * 3, "{csv}");
}

#[test]
fn plots_are_written() {
    // Not created beforehand: `--plot` makes the directory.
    let dir = TempDir::reserve("plots");
    let path = dir.path().to_str().expect("utf-8 path");
    let out = simulate(&[&SMALL[..], &["--plot", path]].concat());
    assert_success(&out);
    for name in ["spread.svg", "moved.svg", "failure.svg"] {
        let svg = std::fs::read_to_string(dir.path().join(name)).expect("chart written");
        assert!(svg.starts_with("<svg") && svg.contains("</svg>"), "{name}");
    }
    dir.remove();
}

#[test]
fn bad_options_are_specific_errors() {
    let cases: [(&[&str], &str); 10] = [
        (&["--vnodes", "0"], "--vnodes: 0 virtual nodes"),
        (
            &["--vnodes", "1,x"],
            "--vnodes: \"x\" is not a whole number",
        ),
        (&["--keys", "0"], "--keys: must be at least 1"),
        (&["--nodes", "1"], "--nodes: 1 nodes"),
        (&["--algo", "chord"], "unknown algorithm \"chord\""),
        (
            &["--experiments", "modulo,magic"],
            "unknown experiment \"magic\"",
        ),
        (&["--hit-rate", "1.5"], "--hit-rate: 1.5 is not a fraction"),
        (&["--hash", "sha1"], "unknown hash \"sha1\""),
        (&["--data", "3 parsecs"], "--data: unknown size unit"),
        (&["--seeds", "0"], "--seeds: must be at least 1"),
    ];
    for (args, needle) in cases {
        let out = simulate(args);
        let stderr = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains(needle),
            "{args:?}: {stderr:?} lacks {needle:?}"
        );
        assert!(out.stdout.is_empty(), "{args:?} printed output");
    }
}

#[test]
fn compare_lists_every_algorithm_at_both_sizes() {
    let out = simulate(&[
        "--keys",
        "20000",
        "--experiments",
        "compare",
        "--format",
        "json",
    ]);
    assert_success(&out);
    let doc: Value = serde_json::from_slice(&out.stdout).expect("json");
    let rows = doc["compare"].as_array().expect("compare rows");
    assert!(rows.len() >= 2 && rows.len() % 2 == 0);
    for row in rows {
        let n = row["nodes"].as_u64().expect("nodes") as f64;
        assert!((f(&row["add_optimal"]) - 1.0 / (n + 1.0)).abs() < 1e-12);
        assert!((f(&row["remove_optimal"]) - 1.0 / n).abs() < 1e-12);
        assert!(f(&row["max_load"]) >= 1.0);
        assert!(row["memory_bytes"].as_u64().expect("bytes") > 0);
        if row["algorithm"] == "ring" {
            assert_eq!(row["add_only_new"], true);
            assert_eq!(row["remove_only_removed"], true);
        }
    }
    let csv = simulate(&[
        "--keys",
        "5000",
        "--compare",
        "--experiments",
        "modulo",
        "--format",
        "csv",
    ]);
    let csv = String::from_utf8(csv.stdout).expect("utf-8");
    assert!(
        csv.contains("\nexperiment,algorithm,nodes,add_moved"),
        "{csv}"
    );
}

#[test]
fn bounded_loads_cap_the_hottest_node_under_zipf() {
    let out = simulate(&[
        "--experiments",
        "bounded",
        "--hash",
        "xxh3",
        "--format",
        "json",
    ]);
    assert_success(&out);
    let doc: Value = serde_json::from_slice(&out.stdout).expect("json");
    let b = &doc["bounded"];
    let bound = 1.0 + f(&b["epsilon"]);
    // ⌈(1+ε)·m/N⌉ over the mean m/N: at most one request above the bound.
    assert!(f(&b["bounded_max"]) <= bound + 1e-4, "{b}");
    assert!(
        f(&b["plain_max"]) > bound,
        "Zipf(1.1) should overload a plain ring: {b}"
    );
    let out = simulate(&["--experiments", "bounded", "--epsilon", "0"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn other_algorithms_run_the_experiments_they_can() {
    let doc = json(&["--algo", "jump"]);
    let skipped: Vec<&str> = doc["skipped"]
        .as_array()
        .expect("skipped experiments")
        .iter()
        .map(|s| s["experiment"].as_str().expect("name"))
        .collect();
    assert_eq!(skipped, ["failure", "weights"]);
    // Jump is minimal too: every moved key went to the new bucket.
    for row in doc["single"].as_array().expect("single") {
        assert_eq!(f(&row["to_new"]), 1.0, "{row}");
    }
    let doc = json(&["--algo", "memento", "--experiments", "failure"]);
    for row in doc["failure"].as_array().expect("failure") {
        assert_eq!(row["only_victim_moved"], true, "{row}");
    }
}
