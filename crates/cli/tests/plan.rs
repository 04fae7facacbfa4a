//! `ringwise plan` end to end: the article's storage example, every
//! format and flag, moved keys against real `lookup`s of both clusters,
//! `--write` round trips (a grown slots table moves only what the next
//! rebalance moves), and every error path with its exit code.

use serde_json::Value;

use crate::support::{TempDir, assert_success, cluster, names, ringwise, stderr, stdout};

#[path = "../../ringwise/tests/support/ownership.rs"]
mod ownership;
use ownership::{Ownership, canonical, stream};

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
    // The diff itself, as the README shows it.
    assert!(
        text.contains("moved: 9.38% of the key space (exact: ring arcs merged, 152 ranges)"),
        "{text}"
    );
    assert!(text.contains("281.4 GB move"), "{text}");
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
    // redis-cli's layout gives node-1 5462 slots (5461-10922) and node-2
    // 5461 (10923-16383): node-1 gives first, then they take turns, so
    // node-2 gives its top 1365.
    assert!(text.contains("node-2\tnode-3\t15019-16383\n"), "{text}");
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
            let token = |v: &Value| {
                let text = v.as_str().expect("a signed token, as a decimal string");
                ringwise::token_point(text.parse().expect("a token"))
            };
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
        let csv = stdout(&out);
        assert!(csv.starts_with("section,key,value\n"), "{algorithm}");
        assert!(
            csv.contains("\nsection,from,to,fraction,bytes,keys,key_bytes\nflow,"),
            "{algorithm}"
        );
        assert!(
            csv.contains(&format!(
                "plan,method,{}\n",
                doc["method"].as_str().unwrap_or("?")
            )),
            "{algorithm}"
        );
        // Its real share after the join (not the weights' 0.25),
        // and what it receives, as the JSON has them.
        let joined = doc["nodes"]
            .as_array()
            .and_then(|n| n.iter().find(|n| n["name"] == "node-3"))
            .expect("node-3");
        let row: Vec<&str> = csv
            .lines()
            .find(|l| l.starts_with("node,node-3,"))
            .unwrap_or_else(|| panic!("{algorithm}: node-3's row in {csv}"))
            .split(',')
            .collect();
        // Compared as numbers: serde_json's parser may round the last bit.
        let cell = |i: usize| row[i].parse::<f64>().expect("a number");
        assert_eq!((cell(2), cell(4)), (0.0, 0.0), "{algorithm}: {row:?}");
        for (i, field) in [(3, "after"), (5, "receives")] {
            let want = f(&joined[field]);
            assert!(
                (cell(i) - want).abs() <= 1e-12,
                "{algorithm}: {field} {row:?}"
            );
        }
        assert_eq!(joined["expected_after"], 0.25, "{algorithm}");
        // A leave (of the last node: jump and its kin allow no other) and a
        // reweight, where the algorithm has weights.
        let doc = json(&["--from", &from, "--remove", "node-2"]);
        let held = f(&doc["nodes"][2]["gives"]);
        // Every key of node-2 moves; envoy-ring and grpc-ring re-size their ring and move more.
        assert!(f(&doc["moved"]) >= held && held > 0.2, "{algorithm}");
        assert!(f(&doc["optimum"]) == held, "{algorithm}");
        assert!(
            doc["flows"]
                .as_array()
                .expect("flows")
                .iter()
                .any(|fl| fl["from"] == "node-2"),
            "{algorithm}"
        );
        let out = ringwise(&["plan", "--from", &from, "--reweight", "node-1=2"], b"");
        let weightless = [
            "jump",
            "jumpback",
            "binomial",
            "fliphash",
            "memento",
            "anchor",
            "dx",
            "slots",
            "multiprobe",
            "redis-rb",
            "groupcache",
            "go-redis",
        ];
        if weightless.contains(&algorithm) {
            assert_eq!(out.status.code(), Some(2), "{algorithm}");
            assert!(
                stderr(&out).contains("weights"),
                "{algorithm}: {}",
                stderr(&out)
            );
        } else {
            assert_success(&out);
            let doc = json(&["--from", &from, "--reweight", "node-1=2"]);
            let flows = doc["flows"].as_array().expect("flows");
            assert!(!flows.is_empty(), "{algorithm}");
            let receives = f(&doc["nodes"][1]["receives"]);
            assert!(receives > 0.1, "{algorithm}: node-1 gains about 1/6");
        }
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
    // A new hash tag rehashes only the keys that carry one: still refused
    // (a new key hash or secret is priced: plan_prices_a_secret_rotation).
    let tagged = dir.write(
        "tagged.toml",
        &format!("hash_tag = \"{{}}\"\n{}", cluster("ring", &names(3))),
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
    let jump = dir.write("jump.toml", &cluster("jump", &names(3)));
    let cases: [(&[&str], i32, &str); 19] = [
        (
            &[
                "--from", &from, "--remove", "node-0", "--remove", "node-1", "--remove", "node-2",
            ],
            2,
            "the change leaves no node",
        ),
        (
            &["--from", &jump, "--reweight", "node-0=2"],
            2,
            "jump does not support reweighting: every bucket gets the same share",
        ),
        (
            &["--from", &jump, "--reweight", "node-2=2"],
            2,
            "jump does not support reweighting",
        ),
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
            &["--from", &from, "--to", &tagged],
            65,
            "hash keys differently",
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

#[test]
fn a_no_op_plan_says_zero_not_minus_zero() {
    // An empty f64 sum is -0.0: "-0.00%", "-0 B", JSON -0.0, and "(n/ax)".
    let dir = TempDir::create("plan-noop");
    let ring = dir.write("r.toml", &cluster("ring", &names(3)));
    let jump = dir.write("j.toml", &cluster("jump", &names(3)));
    let cases: [&[&str]; 2] = [
        &["--from", &ring, "--to", &ring, "--data", "1TB"],
        &["--from", &jump, "--reweight", "node-2=1", "--data", "1TB"],
    ];
    for args in cases {
        let doc = json(args);
        for field in ["moved", "optimum", "moved_bytes", "modulo_moved"] {
            let v = f(&doc[field]);
            assert!(v == 0.0 && v.is_sign_positive(), "{args:?} {field}: {v}");
        }
        let out = ringwise(&[&["plan"], args].concat(), b"");
        assert_success(&out);
        let text = stdout(&out);
        // Node names hold "-0" ("node-0"); a figure would follow a space.
        assert!(!text.contains(" -0"), "{text}");
        assert!(!text.contains("n/a"), "{text}");
        assert!(text.contains("moved: 0.00% of the key space"), "{text}");
        assert!(text.contains("nothing needs to move"), "{text}");
        let out = ringwise(&[&["plan", "--format", "csv"], args].concat(), b"");
        assert!(!stdout(&out).contains(",-0"), "{}", stdout(&out));
    }
}

#[test]
fn a_change_of_algorithm_is_named_and_not_compared_with_the_optimum() {
    let dir = TempDir::create("plan-algo");
    let ring = dir.write("ring.toml", &cluster("ring", &names(3)));
    let rendezvous = dir.write("rv.toml", &cluster("rendezvous", &names(3)));
    let args = ["--from", &ring, "--to", &rendezvous, "--rps", "1000"];
    let doc = json(&args);
    assert_eq!(doc["algorithm"], "ring");
    assert_eq!(doc["algorithm_after"], "rendezvous");
    assert_eq!(doc["setup_changes"], true);
    assert!(f(&doc["moved"]) > 0.5, "two thirds move");
    assert!(doc["optimum"].is_null() && doc["modulo_moved"].is_null());
    assert!(doc["cache"]["modulo_db_rps"].is_null());
    let out = ringwise(&[&["plan"], &args[..]].concat(), b"");
    assert_success(&out);
    let text = stdout(&out);
    assert!(text.starts_with("plan: ring -> rendezvous, "), "{text}");
    assert!(text.contains("comparisons do not apply"), "{text}");
    assert!(!text.contains("optimum 0.00%"), "{text}");
    assert!(!text.contains("hash % N would move"), "{text}");
    let svg = dir.path().join("migration.svg");
    let svg = svg.to_str().expect("utf-8");
    let out = ringwise(&[&["plan", "--svg", svg], &args[..]].concat(), b"");
    assert_success(&out);
    let picture = std::fs::read_to_string(svg).expect("written");
    assert!(picture.contains("ring -&gt; rendezvous: "), "the SVG title");
    assert!(picture.contains("a migration, no optimum"));
    // Same algorithm, other parameters: a rebuild, not a membership change.
    let fewer = dir.write(
        "v10.toml",
        &format!("vnodes = 10\n{}", cluster("ring", &names(3))),
    );
    let doc = json(&["--from", &ring, "--to", &fewer]);
    assert_eq!(doc["setup_changes"], true);
    assert!(doc["optimum"].is_null());
    // The same algorithm and parameters: compared as before.
    let doc = json(&["--from", &ring, "--to", &ring]);
    assert_eq!(doc["setup_changes"], false);
    assert_eq!(f(&doc["optimum"]), 0.0);
}

#[test]
fn a_leave_is_measured_against_what_the_node_held() {
    // Cassandra's tokens give node-2 27.48 % of 3 nodes, not 33.33 %: the
    // least a leave moves is what it held, so the ratio is 1x, not 0.824x.
    let dir = TempDir::create("plan-leave");
    for algorithm in ["cassandra", "ring", "maglev", "rendezvous", "memento"] {
        let from = dir.write(&format!("{algorithm}.toml"), &cluster(algorithm, &names(3)));
        let doc = json(&["--from", &from, "--remove", "node-2"]);
        let held = doc["nodes"]
            .as_array()
            .expect("nodes")
            .iter()
            .find(|n| n["name"] == "node-2")
            .map(|n| f(&n["gives"]))
            .expect("node-2");
        assert!((f(&doc["optimum"]) - held).abs() < 1e-12, "{algorithm}");
        let ratio = f(&doc["moved"]) / f(&doc["optimum"]);
        assert!(ratio >= 1.0 - 1e-9, "{algorithm}: {ratio}");
    }
    let from = dir.path().join("cassandra.toml");
    let out = ringwise(
        &[
            "plan",
            "--from",
            from.to_str().expect("utf-8"),
            "--remove",
            "node-2",
        ],
        b"",
    );
    assert!(stdout(&out).contains("(1.000x)"), "{}", stdout(&out));
}

/// Every number anywhere in `doc`.
fn numbers(doc: &Value, out: &mut Vec<f64>) {
    match doc {
        Value::Number(n) => out.push(n.as_f64().expect("finite")),
        Value::Array(items) => items.iter().for_each(|v| numbers(v, out)),
        Value::Object(fields) => fields.values().for_each(|v| numbers(v, out)),
        _ => {}
    }
}

#[test]
fn csv_carries_every_figure_of_the_json() {
    // Sampled (jump) and exact (ring, slots) plans with every option that
    // adds figures: each number of the JSON is a cell of the CSV.
    let dir = TempDir::create("plan-csv");
    let keys: String = (0..500)
        .map(|i| format!("user:{i}\t{}\n", 100 + i % 9))
        .collect();
    let key_file = dir.write("keys.tsv", &keys);
    for algorithm in ["jump", "ring", "slots"] {
        let from = dir.write(&format!("{algorithm}.toml"), &cluster(algorithm, &names(3)));
        let args = [
            "--from",
            &from,
            "--add",
            "node-3",
            "--data",
            "1TB",
            "--keys",
            &key_file,
            "--rps",
            "1000",
            "--bandwidth",
            "100MB",
            "--ranges",
        ];
        let doc = json(&args);
        let out = ringwise(&[&["plan", "--format", "csv"], &args[..]].concat(), b"");
        assert_success(&out);
        let csv = stdout(&out);
        // Compared as numbers: serde_json's parser may round the last bit.
        let cells: Vec<f64> = csv
            .lines()
            .flat_map(|l| l.split(','))
            .filter_map(|c| c.parse().ok())
            .collect();
        let mut all = Vec::new();
        numbers(&doc, &mut all);
        for n in all {
            let close = |c: &f64| (c - n).abs() <= 1e-12 * n.abs().max(1.0);
            assert!(cells.iter().any(close), "{algorithm}: {n} not in\n{csv}");
        }
        assert!(csv.contains(&format!(
            "plan,method,{}\n",
            doc["method"].as_str().expect("a method")
        )));
        assert!(csv.contains("plan,optimum,"), "{csv}");
        assert!(csv.contains("plan,modulo_moved,"), "{csv}");
        assert!(csv.contains(
            "\nsection,name,before,after,gives,receives,bytes_out,bytes_in,expected_before,expected_after\n"
        ));
        if algorithm == "jump" {
            assert!(csv.contains("plan,samples,1048576\n"), "{csv}");
            assert!(csv.contains("plan,interval_low,"), "{csv}");
        }
        if algorithm == "slots" {
            assert!(csv.contains("slot_moves,how,For each slot S"), "{csv}");
            assert!(csv.contains("\nslot_move,"), "{csv}");
        }
    }
}

#[test]
fn real_key_bytes_show_in_the_flows_and_slot_moves_are_always_listed() {
    let dir = TempDir::create("plan-keyflows");
    let from = dir.write("ring.toml", &cluster("ring", &names(3)));
    let keys: String = (0..2000)
        .map(|i| format!("user:{i}\t{}\n", 10 + i % 50))
        .collect();
    let key_file = dir.write("keys.tsv", &keys);
    let args = ["--from", &from, "--add", "node-3", "--keys", &key_file];
    let doc = json(&args);
    let key_flows = doc["keys"]["flows"].as_array().expect("key flows");
    let out = ringwise(&[&["plan"], &args[..]].concat(), b"");
    let text = stdout(&out);
    assert!(text.contains("key bytes"), "{text}");
    for kf in key_flows {
        // The real bytes of each flow, as the JSON's keys.flows has them,
        // in the flows table and the flow rows.
        let flow = doc["flows"]
            .as_array()
            .expect("flows")
            .iter()
            .find(|fl| fl["from"] == kf["from"] && fl["to"] == kf["to"])
            .expect("the pair");
        assert_eq!(flow["key_bytes"], kf["bytes"]);
        assert_eq!(flow["keys"], kf["keys"]);
        let real = format!("{} B", f(&kf["bytes"]));
        let real = if f(&kf["bytes"]) >= 1000.0 {
            format!("{:.1} KB", f(&kf["bytes"]) / 1000.0)
        } else {
            real
        };
        let line = text
            .lines()
            .find(|l| {
                l.starts_with(kf["from"].as_str().expect("a donor"))
                    && l.contains(kf["to"].as_str().expect("a receiver"))
                    && l.contains('%')
            })
            .expect("a flow line");
        assert!(line.ends_with(&real), "{line} vs {real}");
    }
    // Slots: the slot moves are in the JSON without --ranges.
    let slots = dir.write("slots.toml", &cluster("slots", &names(3)));
    let doc = json(&["--from", &slots, "--add", "node-3"]);
    assert_eq!(doc["ranges"].as_array().expect("slot moves").len(), 3);
    // A sampled plan says why it lists no ranges.
    let jump = dir.write("jump.toml", &cluster("jump", &names(3)));
    let out = ringwise(
        &["plan", "--from", &jump, "--add", "node-3", "--ranges"],
        b"",
    );
    assert!(
        stdout(&out).contains("ranges: none listed: this plan is sampled"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn inspect_draws_every_algorithm_as_an_svg_rsvg_renders() {
    // rsvg-convert (scripts/install-test-deps) parses and renders each.
    let dir = TempDir::create("inspect-every");
    for &algorithm in ringwise::Algorithm::NAMES {
        let svg = dir.path().join(format!("{algorithm}.svg"));
        let png = dir.path().join(format!("{algorithm}.png"));
        let out = ringwise(
            &[
                "inspect",
                "--nodes",
                "a@z1,b@z2,c@z1",
                "--algo",
                algorithm,
                "--svg",
                svg.to_str().expect("utf-8"),
            ],
            b"",
        );
        assert_success(&out);
        let picture = std::fs::read_to_string(&svg).expect("written");
        assert!(
            picture.starts_with("<svg") && picture.ends_with("</svg>\n"),
            "{algorithm}"
        );
        for name in ["a ", "b ", "c "] {
            assert!(picture.contains(&format!(">{name}")), "{algorithm}: {name}");
        }
        let render = std::process::Command::new("rsvg-convert")
            .arg(&svg)
            .arg("-o")
            .arg(&png)
            .output()
            .expect("rsvg-convert runs (scripts/install-test-deps installs it)");
        assert!(
            render.status.success(),
            "{algorithm}: {}",
            String::from_utf8_lossy(&render.stderr)
        );
        assert!(
            std::fs::metadata(&png).expect("png").len() > 1000,
            "{algorithm}"
        );
        // Rings show the zone band with its legend, in a palette of its own.
        let ring = matches!(
            algorithm,
            "ring"
                | "ketama"
                | "nginx"
                | "envoy-ring"
                | "grpc-ring"
                | "cassandra"
                | "varnish-shard"
                | "dalli"
                | "redis-rb"
                | "groupcache"
        );
        assert_eq!(picture.contains("inner band: zones"), ring, "{algorithm}");
        if ring {
            assert!(picture.contains(">z1</text>") && picture.contains(">z2</text>"));
        }
        if algorithm == "maglev" {
            // 65,537 slots in 600 stacked columns: a few thousand
            // rectangles, not one per run of slots (29,000, 2 MB).
            let rects = picture.matches("<rect").count();
            assert!(rects < 2500, "{rects} rectangles");
            assert!(picture.contains("one column per 109 slots, stacked"));
        }
    }
}

/// A new cluster starts from a file that names only its algorithm and
/// settings: `plan --from` it with `--add` writes the cluster,
/// which places keys as the same nodes and settings given as flags do;
/// with `--allocate` too. `inspect` of such a file still says it has no
/// nodes (exit 65), and nothing is written by a refused plan.
#[test]
fn a_new_cluster_starts_from_a_file_of_settings_alone() {
    let dir = TempDir::create("plan-new-cluster");
    let settings = dir.write(
        "settings.toml",
        "algorithm = \"maglev\"\ntable_size = 251\n",
    );
    let target = dir.path().join("cluster.toml");
    let target = target.to_str().expect("utf-8 path");
    let plan = ringwise(
        &[
            "plan", "--from", &settings, "--add", "a", "--add", "b", "--write", target,
        ],
        b"",
    );
    assert!(plan.status.success(), "{}", stderr(&plan));
    assert!(stdout(&plan).contains("a new cluster"), "{}", stdout(&plan));
    let keys: Vec<String> = (0..200).map(|i| format!("user:{i}")).collect();
    let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
    let from_file = ringwise(&[&["lookup", "--cluster", target], &keys[..]].concat(), b"");
    let flags = [
        "lookup",
        "--nodes",
        "a,b",
        "--algo",
        "maglev",
        "--table-size",
        "251",
    ];
    let from_flags = ringwise(&[&flags[..], &keys[..]].concat(), b"");
    assert!(from_file.status.success(), "{}", stderr(&from_file));
    assert_eq!(stdout(&from_file), stdout(&from_flags));

    let ring = dir.write("ring.toml", "algorithm = \"ring\"\nvnodes = 16\n");
    let allocated = ringwise(
        &[
            "plan",
            "--from",
            &ring,
            "--add",
            "a",
            "--allocate",
            "16",
            "--format",
            "json",
        ],
        b"",
    );
    assert!(allocated.status.success(), "{}", stderr(&allocated));

    let inspect = ringwise(&["inspect", "--cluster", &settings], b"");
    assert_eq!(inspect.status.code(), Some(65), "{}", stderr(&inspect));
    assert!(
        stderr(&inspect).contains("the cluster has no nodes"),
        "{}",
        stderr(&inspect)
    );
    let bad = dir.write("bad.toml", "algorithm = \"rign\"\n");
    let refused = ringwise(
        &["plan", "--from", &bad, "--add", "a", "--write", &bad],
        b"",
    );
    assert_eq!(refused.status.code(), Some(65), "{}", stderr(&refused));
    assert_eq!(
        std::fs::read_to_string(&bad).expect("still there"),
        "algorithm = \"rign\"\n"
    );
}
