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
    let cases: [(&[&str], &str); 12] = [
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
        (
            &["--rps", "1e308"],
            "--rps: 1e308 is not a request rate from 0 to 1e12",
        ),
        (
            &["--compare", "--nodes", "2000"],
            "--nodes: 2000 nodes: compare runs N and 10 N nodes",
        ),
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
        assert!(f(&row["min_load"]) <= 1.0);
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

/// A text label of an SVG chart and its estimated box `[left, top, right,
/// bottom]`, from what plotters writes: `<text x= y= dy= text-anchor=
/// font-size= [transform="rotate(A, x, y)"]>TEXT</text>`. A glyph is taken
/// as 0.6 em wide and the text as 0.95 em tall (sans-serif averages).
#[derive(Debug)]
struct Label {
    text: String,
    rect: [f64; 4],
}

fn attribute<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let start = tag.find(&format!(" {name}=\""))? + name.len() + 3;
    let len = tag[start..].find('"')?;
    Some(&tag[start..start + len])
}

fn labels(svg: &str) -> Vec<Label> {
    let mut labels = Vec::new();
    for piece in svg.split("<text").skip(1) {
        let (tag, rest) = piece.split_once('>').expect("a closed <text> tag");
        let text = rest.split("</text>").next().unwrap_or("").trim();
        if text.is_empty() {
            continue;
        }
        let number = |name: &str| -> f64 {
            attribute(tag, name)
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("<text{tag}> has no numeric {name}"))
        };
        let (x, y, size) = (number("x"), number("y"), number("font-size"));
        let baseline = match attribute(tag, "dy") {
            Some("0.76em") => y + 0.76 * size,
            Some("0.5ex") => y + 0.25 * size,
            Some("-0.5ex") => y - 0.25 * size,
            None => y,
            Some(other) => panic!("unexpected dy {other:?} in <text{tag}>"),
        };
        let width = text.chars().count() as f64 * size * 0.6;
        let (left, right) = match attribute(tag, "text-anchor") {
            Some("middle") => (x - width / 2.0, x + width / 2.0),
            Some("end") => (x - width, x),
            _ => (x, x + width),
        };
        let (top, bottom) = (baseline - 0.75 * size, baseline + 0.2 * size);
        let rect = match attribute(tag, "transform") {
            None => [left, top, right, bottom],
            // rotate(270, x, y): (dx, dy) about (x, y) becomes (dy, -dx).
            Some(t) if t.starts_with("rotate(270") => [
                x + (top - y),
                y - (right - x),
                x + (bottom - y),
                y - (left - x),
            ],
            // rotate(90, x, y): (dx, dy) becomes (-dy, dx).
            Some(t) if t.starts_with("rotate(90") => [
                x - (bottom - y),
                y + (left - x),
                x - (top - y),
                y + (right - x),
            ],
            Some(t) => panic!("unexpected transform {t:?}"),
        };
        labels.push(Label {
            text: text.to_owned(),
            rect,
        });
    }
    labels
}

fn overlap(a: &[f64; 4], b: &[f64; 4]) -> bool {
    // Half a pixel of touching is not an overlap.
    a[0] + 0.5 < b[2] && b[0] + 0.5 < a[2] && a[1] + 0.5 < b[3] && b[1] + 0.5 < a[3]
}

/// Every pair of overlapping labels in `svg`.
fn overlapping(svg: &str) -> Vec<(String, String)> {
    let labels = labels(svg);
    let mut pairs = Vec::new();
    for (i, a) in labels.iter().enumerate() {
        for b in &labels[i + 1..] {
            if overlap(&a.rect, &b.rect) {
                pairs.push((a.text.clone(), b.text.clone()));
            }
        }
    }
    pairs
}

#[test]
fn the_label_check_sees_overlaps() {
    let svg = r#"<svg><text x="100" y="50" dy="0.5ex" text-anchor="end" font-size="12">100%</text>
<text x="100" y="54" dy="0.5ex" text-anchor="end" font-size="12">100%</text>
<text x="100" y="90" dy="0.5ex" text-anchor="end" font-size="12">50%</text>
<text x="15" y="240" dy="0.76em" text-anchor="middle" font-size="12" transform="rotate(270, 15, 240)">share</text>
<text x="30" y="240" dy="0.76em" text-anchor="middle" font-size="12">x</text></svg>"#;
    assert_eq!(
        overlapping(svg),
        [("100%".to_owned(), "100%".to_owned())],
        "{:?}",
        labels(svg)
    );
    // Rotated text is tall and narrow: 5 glyphs of 7.2 px around y = 240.
    let share = &labels(svg)[3];
    assert!(share.rect[3] - share.rect[1] > 30.0 && share.rect[2] - share.rect[0] < 15.0);
}

#[test]
fn chart_labels_do_not_overlap() {
    // Every chart; and 40 nodes, whose names would not fit side by side.
    let runs: [&[&str]; 2] = [
        &[&SMALL[..], &["--compare"]].concat(),
        &[
            "--nodes",
            "40",
            "--keys",
            "20000",
            "--experiments",
            "failure",
            "--failure-vnodes",
            "10",
        ],
    ];
    for (i, args) in runs.iter().enumerate() {
        let dir = TempDir::reserve(&format!("labels-{i}"));
        let path = dir.path().to_str().expect("utf-8 path");
        let out = simulate(&[args, &["--plot", path][..]].concat());
        assert_success(&out);
        let mut charts = 0;
        for entry in std::fs::read_dir(dir.path()).expect("charts written") {
            let file = entry.expect("entry").path();
            let svg = std::fs::read_to_string(&file).expect("svg");
            assert!(
                labels(&svg).len() >= 8,
                "{}: too few labels",
                file.display()
            );
            let pairs = overlapping(&svg);
            assert!(
                pairs.is_empty(),
                "{}: overlapping labels {pairs:?}",
                file.display()
            );
            charts += 1;
        }
        assert_eq!(charts, [4, 1][i], "{args:?}");
    }
}

#[test]
fn charts_say_what_they_show() {
    let dir = TempDir::reserve("captions");
    let path = dir.path().to_str().expect("utf-8 path");
    assert_success(&simulate(
        &[&SMALL[..], &["--compare", "--plot", path]].concat(),
    ));
    let text = |name: &str| -> Vec<String> {
        let svg = std::fs::read_to_string(dir.path().join(name)).expect("chart");
        labels(&svg).into_iter().map(|l| l.text).collect()
    };
    let spread = text("spread.svg");
    for label in ["1", "10", "100", "5%", "10%", "20%", "50%", "100%"] {
        assert!(
            spread.iter().any(|t| t == label),
            "{label} missing: {spread:?}"
        );
    }
    assert!(
        spread
            .iter()
            .any(|t| t == "Load spread vs virtual nodes, 6 nodes")
    );
    let compare = text("compare.svg");
    for label in [
        "Keys moved at 6 nodes, over the optimum (1.0 = minimal)",
        "multiprobe",
        "slots",
    ] {
        assert!(
            compare.iter().any(|t| t == label),
            "{label} missing: {compare:?}"
        );
    }
    assert!(
        text("moved.svg")
            .iter()
            .any(|t| t == "share of all keys moved")
    );
    assert!(text("failure.svg").iter().any(|t| t == "share of all keys"));
}

#[test]
fn chart_errors_are_plain_words() {
    let dir = TempDir::create("chart-error");
    std::fs::create_dir(dir.path().join("spread.svg")).expect("a directory in the way");
    let path = dir.path().to_str().expect("utf-8 path");
    let out = simulate(&["--keys", "2000", "--experiments", "single", "--plot", path]);
    let stderr = stderr(&out);
    assert_eq!(out.status.code(), Some(74), "{stderr}");
    assert!(
        stderr.contains("cannot write ")
            && stderr.contains("spread.svg: is a directory; ")
            && stderr.trim_end().ends_with("spread.svg is unchanged"),
        "{stderr}"
    );
    assert!(!stderr.contains("backend"), "{stderr}");
}

#[test]
fn plot_without_a_chartable_experiment_warns() {
    let dir = TempDir::reserve("no-charts");
    let path = dir.path().to_str().expect("utf-8 path");
    let out = simulate(&[
        "--keys",
        "2000",
        "--experiments",
        "modulo,weights",
        "--plot",
        path,
    ]);
    assert_success(&out);
    assert!(stderr(&out).contains("warning: --plot"), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("nothing to chart"),
        "{}",
        stderr(&out)
    );
    let out = simulate(&["--keys", "2000", "--experiments", "single", "--plot", path]);
    assert_success(&out);
    assert!(stderr(&out).is_empty(), "{}", stderr(&out));
}

#[test]
fn json_figures_are_rounded_not_noisy() {
    // 100000 × (1 − 0.95) is 5000.000000000005 in floating point.
    let out = simulate(&[
        "--experiments",
        "cost",
        "--keys",
        "2000",
        "--format",
        "json",
    ]);
    assert_success(&out);
    let text = String::from_utf8(out.stdout).expect("utf-8");
    assert!(text.contains("\"normal_db_rps\": 5000.0,"), "{text}");
    let doc: Value = serde_json::from_str(&text).expect("json");
    let mut floats = Vec::new();
    collect_floats(&doc, &mut floats);
    assert!(floats.len() > 10, "{text}");
    for x in floats {
        // Significant digits as printed: no more than 13.
        let printed = format!("{x:e}");
        let mantissa = printed.split('e').next().unwrap_or("");
        let digits = mantissa.chars().filter(char::is_ascii_digit).count();
        assert!(digits <= 13, "{x} has {digits} significant digits");
    }
}

fn collect_floats(value: &Value, out: &mut Vec<f64>) {
    match value {
        Value::Number(n) if n.is_f64() => out.push(n.as_f64().expect("float")),
        Value::Array(items) => items.iter().for_each(|v| collect_floats(v, out)),
        Value::Object(map) => map.values().for_each(|v| collect_floats(v, out)),
        _ => {}
    }
}

#[test]
fn headers_state_what_ran() {
    // Compare honours --keys (up to 200,000) and --nodes (N and 10 N).
    let out = simulate(&["--experiments", "compare", "--keys", "1000", "--nodes", "4"]);
    assert_success(&out);
    let text = crate::support::stdout(&out);
    assert!(
        text.contains("Algorithms compared at 4 and 40 nodes on the first 1,000 keys"),
        "{text}"
    );
    assert!(!text.contains("200,000 keys"), "{text}");
    let out = simulate(&[
        "--experiments",
        "compare",
        "--nodes",
        "3",
        "--keys",
        "500",
        "--format",
        "json",
    ]);
    let doc: Value = serde_json::from_slice(&out.stdout).expect("json");
    let sizes: Vec<u64> = doc["compare"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|r| r["nodes"].as_u64().expect("nodes"))
        .collect();
    assert!(sizes.chunks(2).all(|pair| pair == [3, 30]), "{sizes:?}");
    // An algorithm without virtual nodes runs each experiment once, and says so.
    let out = simulate(
        &[
            &SMALL[..],
            &["--algo", "jump", "--experiments", "single,seeds"],
        ]
        .concat(),
    );
    let text = crate::support::stdout(&out);
    assert!(
        text.contains(
            "jump (no virtual nodes: one row, vnodes ignored), 20,000 keys, node-6 joins"
        ),
        "{text}"
    );
    assert!(!text.contains("One ring"), "{text}");
    let out = simulate(&["--algo", "jump", "--keys", "2000", "--experiments", "cost"]);
    let text = crate::support::stdout(&out);
    assert!(text.contains("measured (jump)"), "{text}");
    assert!(!text.contains("ring at"), "{text}");
    let doc = json(&[
        "--algo",
        "rendezvous",
        "--experiments",
        "single,seeds,weights",
    ]);
    for section in ["single", "seeds", "weights"] {
        assert_eq!(
            doc[section].as_array().expect(section).len(),
            1,
            "{section}: {doc}"
        );
    }
    assert_eq!(doc["params"]["vnodes"], serde_json::json!([1]));
    // The ring keeps the article's header and one row per vnodes value.
    let doc = json(&["--experiments", "single"]);
    assert_eq!(doc["single"].as_array().expect("single").len(), 3);
    let text = crate::support::stdout(&simulate(&SMALL));
    assert!(
        text.contains("\nOne ring, 20,000 keys, node-6 joins\n"),
        "{text}"
    );
}

/// The multiprobe row of the algorithms guide (`docs/algorithms.md`) states peak/mean and min/mean at N = 10, 11
/// and 100, as `simulate --compare` measures them (md5, 200,000 keys).
#[test]
fn readme_multiprobe_figures_are_measured() {
    let stated = [(10, 1.12, 0.35), (11, 1.11, 0.38), (100, 1.09, 0.31)];
    let readme = include_str!("../../../docs/algorithms.md");
    let fmt = |i: usize| -> String {
        stated
            .iter()
            .map(|s| {
                [
                    s.0.to_string(),
                    format!("{:.2}", s.1),
                    format!("{:.2}", s.2),
                ][i]
                    .clone()
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let phrase = format!(
        "(peak/mean) {} and least-loaded node {} of its fair share at N = {}",
        fmt(1),
        fmt(2),
        fmt(0)
    );
    assert!(
        readme.contains(&phrase),
        "docs/algorithms.md lacks {phrase:?}"
    );
    let mut measured = Vec::new();
    for nodes in ["10", "11"] {
        let out = simulate(&[
            "--experiments",
            "compare",
            "--nodes",
            nodes,
            "--format",
            "json",
        ]);
        assert_success(&out);
        let doc: Value = serde_json::from_slice(&out.stdout).expect("json");
        for row in doc["compare"].as_array().expect("rows") {
            if row["algorithm"] == "multiprobe" {
                let n = row["nodes"].as_u64().expect("nodes");
                measured.push((n, f(&row["max_load"]), f(&row["min_load"])));
            }
        }
    }
    for (n, peak, min) in stated {
        let &(_, got_peak, got_min) = measured
            .iter()
            .find(|m| m.0 == n)
            .unwrap_or_else(|| panic!("no multiprobe row at N = {n}: {measured:?}"));
        assert!(
            (got_peak - peak).abs() <= 0.006,
            "N = {n}: peak/mean {got_peak}, README {peak}"
        );
        assert!(
            (got_min - min).abs() <= 0.006,
            "N = {n}: min/mean {got_min}, README {min}"
        );
    }
}
