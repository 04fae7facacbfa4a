//! `ringwise simulate` against an independent peer: `simulate_peer.py`, the
//! article's Python measurement program re-typed and parameterised, run on
//! reduced key counts. Every value the peer prints must appear, equal, in
//! ringwise's JSON document (ringwise may carry extra keys: timings, params).
//!
//! The peer needs `python3` (standard library only). Without it these tests
//! fail; they never skip.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::support::ringwise;

/// Relative tolerance for floats. Python's `statistics.mean`/`pstdev` use
/// exact rational arithmetic, so the last ulp may differ from Rust's; and
/// ringwise's JSON rounds every float to 13 significant digits (at most
/// 5e-13 of the figure), which this tolerance covers and nothing more.
const REL_TOL: f64 = 1e-12;

/// The sections of the article's program, in the peer's document.
const SECTIONS: [&str; 6] = [
    "modulo",
    "single",
    "seeds",
    "failure",
    "weights",
    "rendezvous",
];

const TEN_NODES: [&str; 14] = [
    "--keys",
    "20000",
    "--seed-keys",
    "5000",
    "--seeds",
    "5",
    "--rendezvous-keys",
    "5000",
    "--vnodes",
    "1,10,100",
    "--failure-vnodes",
    "1,100",
    "--weight-vnodes",
    "100,10",
];

const SEVEN_NODES: [&str; 16] = [
    "--nodes",
    "7",
    "--keys",
    "10000",
    "--seed-keys",
    "3000",
    "--seeds",
    "3",
    "--rendezvous-keys",
    "3000",
    "--vnodes",
    "1,50",
    "--failure-vnodes",
    "1,50",
    "--weight-vnodes",
    "50",
];

fn parse(what: &str, stdout: &[u8]) -> Value {
    serde_json::from_slice(stdout).unwrap_or_else(|err| {
        panic!(
            "{what} did not print one JSON document: {err}\n--- stdout ---\n{}",
            String::from_utf8_lossy(stdout)
        )
    })
}

fn run_peer(args: &[&str]) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("simulate_peer.py");
    let output = Command::new("python3")
        .arg(&script)
        .args(args)
        .output()
        .unwrap_or_else(|err| {
            panic!(
                "cannot run `python3 {}`: {err}\n\
                 python3 (standard library only) is required by this test; it is never skipped",
                script.display()
            )
        });
    assert!(
        output.status.success(),
        "python3 {} {} failed ({})\n--- stderr ---\n{}",
        script.display(),
        args.join(" "),
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    parse("simulate_peer.py", &output.stdout)
}

fn run_ringwise(args: &[&str]) -> Value {
    let base = ["simulate", "--format", "json", "--hash", "md5"];
    let output = ringwise(&[&base[..], args].concat(), b"");
    assert!(
        output.status.success(),
        "ringwise {} {} failed ({})\n--- stderr ---\n{}",
        base.join(" "),
        args.join(" "),
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    parse("ringwise simulate", &output.stdout)
}

fn is_integer(value: &Value) -> bool {
    value.is_i64() || value.is_u64()
}

fn floats_agree(expected: f64, actual: f64) -> bool {
    expected == actual || (expected - actual).abs() <= REL_TOL * expected.abs().max(actual.abs())
}

/// Walks `expected` (the peer's document) and records, by JSON path, every
/// value that `actual` (ringwise's document) lacks or disagrees with.
fn compare(path: &str, expected: &Value, actual: &Value, mismatches: &mut Vec<String>) {
    let report = |mismatches: &mut Vec<String>, why: &str| {
        mismatches.push(format!("{path}: {why}: peer {expected}, ringwise {actual}"));
    };
    match (expected, actual) {
        (Value::Object(fields), Value::Object(theirs)) => {
            for (key, value) in fields {
                let child = format!("{path}.{key}");
                match theirs.get(key) {
                    Some(their) => compare(&child, value, their, mismatches),
                    None => mismatches
                        .push(format!("{child}: missing from ringwise (peer has {value})")),
                }
            }
        }
        (Value::Object(_), _) => report(mismatches, "not an object"),
        (Value::Array(items), Value::Array(theirs)) if items.len() == theirs.len() => {
            for (index, (value, their)) in items.iter().zip(theirs).enumerate() {
                compare(&format!("{path}[{index}]"), value, their, mismatches);
            }
        }
        (Value::Array(items), Value::Array(theirs)) => report(
            mismatches,
            &format!("array lengths differ ({} vs {})", items.len(), theirs.len()),
        ),
        (Value::Array(_), _) => report(mismatches, "not an array"),
        (Value::Number(_), _) if is_integer(expected) => {
            if !is_integer(actual) || actual != expected {
                report(mismatches, "integers differ");
            }
        }
        (Value::Number(number), _) => {
            let want = number.as_f64().expect("a JSON number is an f64");
            match actual.as_f64() {
                Some(got) if floats_agree(want, got) => {}
                Some(_) => report(
                    mismatches,
                    &format!("floats differ beyond relative {REL_TOL:e}"),
                ),
                None => report(mismatches, "not a number"),
            }
        }
        (Value::String(_) | Value::Bool(_) | Value::Null, _) => {
            if actual != expected {
                report(mismatches, "values differ");
            }
        }
    }
}

fn assert_matches_peer(args: &[&str]) {
    let peer = run_peer(args);
    for section in SECTIONS {
        assert!(
            peer.get(section).is_some(),
            "the peer's document lacks `{section}`: {peer}"
        );
    }
    let ours = run_ringwise(args);
    let mut mismatches = Vec::new();
    compare("$", &peer, &ours, &mut mismatches);
    assert!(
        mismatches.is_empty(),
        "ringwise simulate {} disagrees with simulate_peer.py in {} place(s):\n{}",
        args.join(" "),
        mismatches.len(),
        mismatches.join("\n")
    );
}

#[test]
fn simulate_matches_the_python_peer_on_ten_nodes() {
    assert_matches_peer(&TEN_NODES);
}

#[test]
fn simulate_matches_the_python_peer_on_seven_nodes() {
    assert_matches_peer(&SEVEN_NODES);
}

/// The comparer itself: extra keys on ringwise's side are fine, anything
/// else is reported with its path and both values.
#[test]
fn comparer_reports_paths_and_values() {
    let peer = serde_json::json!({
        "a": [{"n": 3, "x": 0.1, "s": "node-1", "b": true}],
        "r": {"moved": 0.25}
    });
    let next_ulp = f64::from_bits(0.1_f64.to_bits() + 1);
    let same = serde_json::json!({
        "a": [{"n": 3, "x": next_ulp, "s": "node-1", "b": true, "extra": 1}],
        "r": {"moved": 0.25, "elapsed_s": 0.5},
        "params": {}
    });
    let mut mismatches = Vec::new();
    compare("$", &peer, &same, &mut mismatches);
    assert!(mismatches.is_empty(), "{mismatches:#?}");

    let different = serde_json::json!({
        "a": [{"n": 3.0, "x": 0.1000001, "s": "node-2", "b": false}],
        "r": {}
    });
    compare("$", &peer, &different, &mut mismatches);
    let mut paths: Vec<&str> = mismatches
        .iter()
        .map(|line| line.split(':').next().unwrap_or_default())
        .collect();
    paths.sort_unstable();
    assert_eq!(
        paths,
        ["$.a[0].b", "$.a[0].n", "$.a[0].s", "$.a[0].x", "$.r.moved"],
        "{mismatches:#?}"
    );
    assert!(
        mismatches.iter().any(|line| line.starts_with("$.a[0].s:")
            && line.contains("peer \"node-1\"")
            && line.contains("ringwise \"node-2\"")),
        "{mismatches:#?}"
    );

    mismatches.clear();
    compare(
        "$",
        &peer,
        &serde_json::json!({"a": [], "r": 1}),
        &mut mismatches,
    );
    assert_eq!(mismatches.len(), 2, "{mismatches:#?}");
}
