//! `ringwise plan` end to end: the article's storage example, every
//! format and flag, moved keys against real `lookup`s of both clusters,
//! `--write` round trips (a grown slots table moves only what the next
//! rebalance moves), and every error path with its exit code.

use serde_json::Value;

use crate::support::{TempDir, assert_success, ringwise, stderr, stdout};

#[path = "../../ringwise/tests/support/ownership.rs"]
mod ownership;
use ownership::{Ownership, canonical, stream};

fn cluster(algorithm: &str, names: &[String]) -> String {
    let mut text = format!("algorithm = \"{algorithm}\"\n");
    for n in names {
        text += &format!("\n[[nodes]]\nname = \"{n}\"\n");
    }
    text
}

fn names(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("node-{i}")).collect()
}

fn json(args: &[&str]) -> Value {
    let out = ringwise(&[&["plan", "--format", "json"], args].concat(), b"");
    assert_success(&out);
    serde_json::from_str(&stdout(&out)).expect("one JSON document")
}

fn f(v: &Value) -> f64 {
    v.as_f64().expect("a number")
}

#[test]
fn the_articles_storage_example() {
    // 3 TB on 10 nodes; an 11th moves about 273 GB with a ring (about 27
    // GB from each old node on average), about 2.7 TB with % N.
    let dir = TempDir::create("plan-article");
    let from = dir.write("ten.toml", &cluster("ring", &names(10)));
    let doc = json(&["--from", &from, "--add", "node-10", "--data", "3TB"]);
    assert_eq!(doc["method"], "arcs");
    assert_eq!(doc["exact"], true);
    let moved = f(&doc["moved_bytes"]);
    assert!((250e9..300e9).contains(&moved), "{moved}");
    assert_eq!(format!("{:.0}", f(&doc["optimum"]) * 3e12 / 1e9), "273");
    assert_eq!(
        format!("{:.1}", f(&doc["modulo_moved"]) * 3e12 / 1e12),
        "2.7"
    );
    let flows = doc["flows"].as_array().expect("flows");
    assert_eq!(flows.len(), 10, "every old node gives to node-10");
    assert!(
        flows
            .iter()
            .all(|fl| fl["to"] == "node-10" && f(&fl["bytes"]) > 0.0)
    );
    let sum: f64 = flows.iter().map(|fl| f(&fl["bytes"])).sum();
    assert!((sum - moved).abs() < 1.0, "{sum} vs {moved}");
    // The same as text, with the costs.
    let out = ringwise(
        &[
            "plan", "--from", &from, "--add", "node-10", "--data", "3TB", "--rps", "100000",
        ],
        b"",
    );
    assert_success(&out);
    let text = stdout(&out);
    assert!(text.contains("10 -> 11 nodes (+node-10)"), "{text}");
    assert!(text.contains("optimum 9.09%"), "{text}");
    assert!(text.contains("2.7 TB with hash % N"), "{text}");
    assert!(text.contains("hash % N: 91364 rps, 18.27x"), "{text}");
}

#[test]
fn moved_keys_agree_with_lookups_of_both_clusters() {
    let dir = TempDir::create("plan-keys");
    let from = dir.write("from.toml", &cluster("ring", &names(4)));
    let keys: String = (0..3000)
        .map(|i| format!("user:{i}\t{}\n", 100 + i % 7))
        .collect();
    let key_file = dir.write("keys.tsv", &keys);
    let to = dir.path().join("to.toml");
    let to = to.to_str().expect("utf-8");
    let args = ["--from", &from, "--remove", "node-1", "--add", "node-9=2"];
    let doc = json(&[&args[..], &["--keys", &key_file, "--write", to]].concat());
    // Real lookups of every key in both clusters.
    let plain: String = (0..3000).map(|i| format!("user:{i}\n")).collect();
    let owners = |file: &str| {
        let out = ringwise(&["lookup", "--cluster", file], plain.as_bytes());
        assert_success(&out);
        stdout(&out)
            .lines()
            .map(|l| l.split('\t').nth(1).expect("node").to_owned())
            .collect::<Vec<_>>()
    };
    let (before, after) = (owners(&from), owners(to));
    let mut expected = Vec::new();
    let mut bytes = 0.0;
    for (i, (a, b)) in before.iter().zip(&after).enumerate() {
        if a != b {
            expected.push(serde_json::json!([format!("user:{i}"), a, b]));
            bytes += (100 + i % 7) as f64;
        }
    }
    let k = &doc["keys"];
    assert_eq!(k["keys"], 3000);
    assert_eq!(k["moved_keys"].as_array().expect("list"), &expected);
    assert_eq!(f(&k["moved_bytes"]), bytes);
    // The key sample agrees with the exact fraction within sampling noise.
    let share = expected.len() as f64 / 3000.0;
    assert!(
        (share - f(&doc["moved"])).abs() < 0.05,
        "{share} vs {}",
        doc["moved"]
    );
    // Text lists them as KEY<TAB>OLD<TAB>NEW after the summary.
    let out = ringwise(
        &[&["plan"], &args[..], &["--keys", &key_file]].concat(),
        b"",
    );
    let text = stdout(&out);
    let first = &expected[0];
    let line = format!(
        "{}\t{}\t{}\n",
        first[0].as_str().unwrap_or(""),
        first[1].as_str().unwrap_or(""),
        first[2].as_str().unwrap_or("")
    );
    assert!(text.contains(&line), "{text}");
    assert!(
        text.contains(&format!("keys: {} of 3000 move", expected.len())),
        "{text}"
    );
}

#[test]
fn a_written_slots_cluster_moves_only_what_the_next_rebalance_moves() {
    let dir = TempDir::create("plan-slots");
    let three = dir.write("s3.toml", &cluster("slots", &names(3)));
    let four = dir.path().join("s4.toml");
    let four = four.to_str().expect("utf-8");
    let grow = json(&[
        "--from", &three, "--add", "node-3", "--write", four, "--ranges",
    ]);
    assert_eq!(grow["method"], "table");
    assert_eq!(f(&grow["moved"]), 4096.0 / 16384.0);
    // --to the written file: the same movement as --add.
    let same = json(&["--from", &three, "--to", four, "--ranges"]);
    assert_eq!(same["ranges"], grow["ranges"]);
    assert_eq!(same["flows"], grow["flows"]);
    // The next join starts from the written table: 16384/5 slots move, not
    // a re-laid table.
    let next = json(&["--from", four, "--add", "node-4"]);
    assert_eq!(f(&next["moved"]), 3276.0 / 16384.0);
    // The text form lists the slot moves for SETSLOT.
    let out = ringwise(&["plan", "--from", &three, "--add", "node-3"], b"");
    let text = stdout(&out);
    assert!(text.contains("CLUSTER SETSLOT S IMPORTING"), "{text}");
    assert!(text.contains("node-2\tnode-3\t15018-16383\n"), "{text}");
}

/// A Cassandra cluster file's token ownership: each listed token owns the
/// tokens after the previous one, on the 64-bit circle (`token_point`).
fn token_ownership(path: &str) -> Ownership {
    let text = std::fs::read_to_string(path).expect("a cluster file");
    let spec = ringwise::ClusterSpec::from_toml(&text).expect("it parses");
    assert_eq!(
        spec.layout.len(),
        spec.nodes.len(),
        "every node lists its tokens"
    );
    let mut arcs = Ownership::new();
    for (name, given) in &spec.layout {
        let ringwise::Given::Tokens(tokens) = given else {
            panic!("{name}: tokens expected, got {given:?}")
        };
        for &t in tokens {
            assert!(
                arcs.insert(ringwise::token_point(t), name.clone())
                    .is_none()
            );
        }
    }
    arcs
}

#[test]
fn a_written_cassandra_cluster_keeps_its_tokens_and_the_streamed_ranges_rebuild_it() {
    // Listed tokens (as nodetool ring shows them) for four nodes; a fifth
    // joins with generated tokens, then the second leaves. Each --write
    // lists every node's tokens (the old ones unchanged), and the plan's
    // token ranges, streamed over the previous file's ownership, give
    // exactly the written file's.
    let dir = TempDir::create("plan-cassandra");
    let mut text = String::from("algorithm = \"cassandra\"\n");
    let mut state = 0x7E57_u64;
    for name in names(4) {
        let tokens: Vec<String> = (0..8)
            .map(|_| {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (state as i64).to_string()
            })
            .collect();
        text += &format!(
            "\n[[nodes]]\nname = \"{name}\"\ntokens = [{}]\n",
            tokens.join(", ")
        );
    }
    let mut from = dir.write("c4.toml", &text);
    for (step, change, node) in [("join", "--add", "node-4"), ("leave", "--remove", "node-1")] {
        let written = dir.path().join(format!("{step}.toml"));
        let written = written.to_str().expect("utf-8").to_owned();
        let doc = json(&[
            "--from", &from, change, node, "--ranges", "--write", &written,
        ]);
        assert_eq!(doc["method"], "arcs", "{step}");
        let mut arcs = token_ownership(&from);
        let target = token_ownership(&written);
        let kept = |a: &Ownership| -> Vec<(u64, String)> {
            a.iter()
                .filter(|(_, n)| *n != node)
                .map(|(p, n)| (*p, n.clone()))
                .collect()
        };
        assert_eq!(
            kept(&arcs),
            kept(&target),
            "{step}: the other nodes keep their tokens"
        );
        let ranges = doc["ranges"].as_array().expect("ranges");
        assert!(!ranges.is_empty(), "{step}");
        for r in ranges {
            let token = |v: &Value| ringwise::token_point(v.as_i64().expect("a signed token"));
            let name = |v: &Value| v.as_str().expect("a name").to_owned();
            stream(
                &mut arcs,
                token(&r["start"]),
                token(&r["end"]),
                &name(&r["from"]),
                &name(&r["to"]),
            );
        }
        assert_eq!(
            canonical(&arcs),
            canonical(&target),
            "{step}: streamed = written"
        );
        // The written file is the next plan's start: nothing moves to itself.
        let same = json(&["--from", &written, "--to", &written]);
        assert_eq!(f(&same["moved"]), 0.0, "{step}");
        from = written;
    }
}

#[test]
fn a_sampled_plan_states_its_interval_wherever_it_shows_the_estimate() {
    // Jump's moved fraction is an estimate (see ringwise::movement): the
    // text's moved line and bytes, and the SVG's title, give the interval.
    let dir = TempDir::create("plan-sampled");
    let from = dir.write("jump.toml", &cluster("jump", &names(10)));
    let doc = json(&["--from", &from, "--add", "node-10", "--data", "1TB"]);
    assert_eq!(doc["method"], "sampled");
    let interval = doc["interval"].as_array().expect("an interval");
    let (low, high) = (f(&interval[0]), f(&interval[1]));
    assert!(low < f(&doc["moved"]) && f(&doc["moved"]) < high);
    assert!(low < 1.0 / 11.0 && 1.0 / 11.0 < high, "{low} {high}");
    let svg = dir.path().join("jump.svg");
    let svg = svg.to_str().expect("utf-8");
    let args = [
        "plan", "--from", &from, "--add", "node-10", "--data", "1TB", "--svg", svg,
    ];
    let out = ringwise(&args, b"");
    assert_success(&out);
    let text = stdout(&out);
    let gb = |v: f64| format!("{:.1} GB", v * 1e12 / 1e9);
    assert!(
        text.contains(&format!("95% interval {} to {}", gb(low), gb(high))),
        "{text}"
    );
    assert!(text.contains("estimated from the samples above"), "{text}");
    let picture = std::fs::read_to_string(svg).expect("svg written");
    let title = format!(
        "(sampled, 95% interval {:.2}–{:.2}%)",
        low * 100.0,
        high * 100.0
    );
    assert!(picture.contains(&title), "{title} in the SVG");
}

#[test]
fn every_algorithm_plans_and_says_how_exactly() {
    let dir = TempDir::create("plan-all");
    for &algorithm in ringwise::Algorithm::NAMES {
        let from = dir.write(&format!("{algorithm}.toml"), &cluster(algorithm, &names(3)));
        let doc = json(&["--from", &from, "--add", "node-3", "--data", "1TB"]);
        let moved = f(&doc["moved"]);
        assert!(moved > 0.05 && moved < 0.6, "{algorithm}: {moved}");
        let exact = matches!(doc["method"].as_str(), Some("arcs" | "table"));
        assert_eq!(doc["exact"], exact, "{algorithm}");
        if !exact {
            let interval = doc["interval"].as_array().expect("an interval");
            assert!(
                f(&interval[0]) <= moved && moved <= f(&interval[1]),
                "{algorithm}"
            );
        }
        let svg = dir.path().join(format!("{algorithm}.svg"));
        let svg = svg.to_str().expect("utf-8");
        let out = ringwise(
            &[
                "plan", "--from", &from, "--add", "node-3", "--svg", svg, "--format", "csv",
                "--ranges",
            ],
            b"",
        );
        assert_success(&out);
        assert!(
            stdout(&out).starts_with("from,to,fraction,bytes\n"),
            "{algorithm}"
        );
        let picture = std::fs::read_to_string(svg).expect("svg written");
        assert!(
            picture.starts_with("<svg") && picture.contains("node-3"),
            "{algorithm}"
        );
        // Maglev's 65,537 slots are wider than the strip: columns of 109.
        assert_eq!(
            picture.contains("one column per 109 slots"),
            algorithm == "maglev",
            "{algorithm}"
        );
    }
}

#[test]
fn bad_options_and_files_exit_with_their_codes() {
    let dir = TempDir::create("plan-errors");
    let from = dir.write("from.toml", &cluster("ring", &names(3)));
    let memento = dir.write("memento.toml", &cluster("memento", &names(3)));
    let md5 = dir.write(
        "md5.toml",
        &format!("hash = \"md5\"\n{}", cluster("ring", &names(3))),
    );
    let bad = dir.write("bad.toml", "algorithm = \"ring\"\nvnode = 3\n");
    let bad_keys = dir.write("bad.keys", "a\t10\nb\tlots\n");
    let missing = dir
        .path()
        .join("missing")
        .to_str()
        .expect("utf-8")
        .to_owned();
    let nowhere = dir
        .path()
        .join("no/such/dir/out")
        .to_str()
        .expect("utf-8")
        .to_owned();
    let cases: [(&[&str], i32, &str); 17] = [
        (&["--from", &from], 2, "say what changes"),
        (
            &["--from", &from, "--to", &from, "--add", "x"],
            2,
            "cannot be used with",
        ),
        (
            &["--from", &from, "--add", "node-0"],
            2,
            "--add node-0: duplicate node",
        ),
        (&["--from", &from, "--add", "x=heavy"], 2, "is not a number"),
        (&["--from", &from, "--add", "x=0"], 2, "--add x=0"),
        (&["--from", &from, "--remove", "zz"], 2, "--remove zz"),
        (
            &["--from", &from, "--reweight", "node-0"],
            2,
            "write NAME=WEIGHT",
        ),
        (
            &["--from", &from, "--reweight", "zz=2"],
            2,
            "no node \"zz\"",
        ),
        (
            &["--from", &from, "--add", "x", "--hit-rate", "0.9"],
            2,
            "--rps",
        ),
        (
            &[
                "--from",
                &from,
                "--add",
                "x",
                "--rps",
                "10",
                "--hit-rate",
                "2",
            ],
            2,
            "hit rate",
        ),
        (
            &["--from", &from, "--add", "x", "--bandwidth", "0"],
            2,
            "bandwidth above 0",
        ),
        (
            &["--from", &from, "--add", "x", "--data", "3 parsecs"],
            2,
            "unknown size unit",
        ),
        (
            &["--from", &from, "--add", "x", "--format", "xml"],
            2,
            "invalid value",
        ),
        (
            &["--from", &missing, "--add", "x"],
            66,
            "cannot read cluster file",
        ),
        (&["--from", &bad, "--add", "x"], 65, "line 2"),
        (
            &["--from", &from, "--to", &md5],
            65,
            "hash keys differently",
        ),
        (
            &[
                "--from", &memento, "--remove", "node-0", "--write", &nowhere,
            ],
            2,
            "removed buckets",
        ),
    ];
    for (args, code, message) in cases {
        let out = ringwise(&[&["plan"], args].concat(), b"");
        assert_eq!(out.status.code(), Some(code), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(message), "{args:?}: {}", stderr(&out));
        assert!(!stderr(&out).contains("panicked"), "{args:?}");
    }
    let out = ringwise(
        &["plan", "--from", &from, "--add", "x", "--keys", &bad_keys],
        b"",
    );
    assert_eq!(out.status.code(), Some(65), "{}", stderr(&out));
    assert!(stderr(&out).contains("line 2"), "{}", stderr(&out));
    let out = ringwise(
        &["plan", "--from", &from, "--add", "x", "--keys", &missing],
        b"",
    );
    assert_eq!(out.status.code(), Some(66), "{}", stderr(&out));
    for flag in ["--write", "--svg"] {
        let out = ringwise(
            &["plan", "--from", &from, "--add", "x", flag, &nowhere],
            b"",
        );
        assert_eq!(out.status.code(), Some(74), "{flag}: {}", stderr(&out));
    }
}

#[test]
fn reweighting_moves_toward_the_heavier_node_and_bandwidth_prices_it() {
    let dir = TempDir::create("plan-reweight");
    let from = dir.write("from.toml", &cluster("ring", &names(4)));
    let doc = json(&[
        "--from",
        &from,
        "--reweight",
        "node-2=2",
        "--data",
        "1TB",
        "--bandwidth",
        "100MB/s",
        "--rps",
        "1000",
        "--hit-rate",
        "0.9",
    ]);
    let flows = doc["flows"].as_array().expect("flows");
    assert!(flows.iter().all(|fl| fl["to"] == "node-2"), "{flows:?}");
    assert!((f(&doc["optimum"]) - (0.4 - 0.25)).abs() < 1e-12);
    let stream = &doc["stream"];
    assert_eq!(stream["busiest_node"], "node-2");
    assert!((f(&stream["seconds"]) - f(&stream["busiest_bytes"]) / 1e8).abs() < 1e-6);
    let cache = &doc["cache"];
    assert!((f(&cache["normal_db_rps"]) - 100.0).abs() < 1e-9);
    let m = f(&doc["moved"]);
    assert!((f(&cache["db_rps"]) - 1000.0 * (m + (1.0 - m) * 0.1)).abs() < 1e-6);
}

#[test]
fn inspect_draws_the_ring_and_its_shares() {
    let dir = TempDir::create("inspect-svg");
    let svg = dir.path().join("ring.svg");
    let svg = svg.to_str().expect("utf-8");
    let out = ringwise(&["inspect", "--nodes", "a,b=2,c@z1", "--svg", svg], b"");
    assert_success(&out);
    let picture = std::fs::read_to_string(svg).expect("written");
    assert!(picture.starts_with("<svg") && picture.ends_with("</svg>\n"));
    // 640 points: one tick each; the shares as labels, the expected marked.
    assert_eq!(
        picture.matches("<line").count(),
        640 + 3,
        "ticks and 3 expected marks"
    );
    for name in ["a ", "b ", "c "] {
        assert!(picture.contains(&format!(">{name}")), "{name}");
    }
    let out = ringwise(
        &["inspect", "--nodes", "a,b", "--algo", "slots", "--svg", svg],
        b"",
    );
    assert_success(&out);
    assert!(
        std::fs::read_to_string(svg)
            .expect("written")
            .contains("slot 16383")
    );
    let nowhere = dir.path().join("no/such/dir.svg");
    let out = ringwise(
        &[
            "inspect",
            "--nodes",
            "a,b",
            "--svg",
            nowhere.to_str().expect("utf-8"),
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(74), "{}", stderr(&out));
}
