//! `lookup` and `inspect` end to end: output formats and every error path.

use ringwise::{Algorithm, Placement, StableHash};

use crate::support::{TempDir, assert_success, ringwise, stderr, stdout};

const ARTICLE: [&str; 6] = ["lookup", "--hash", "md5", "--vnodes", "100", "--nodes"];

#[test]
fn article_example() {
    let out = ringwise(
        &[&ARTICLE[..], &["cache-a,cache-b,cache-c", "user:42"]].concat(),
        b"",
    );
    assert!(out.status.success());
    assert_eq!(stdout(&out), "user:42\tcache-a\n");
    let out = ringwise(
        &[
            &ARTICLE[..],
            &["cache-a,cache-b,cache-c", "--replicas", "2", "user:42"],
        ]
        .concat(),
        b"",
    );
    assert_eq!(stdout(&out), "user:42\tcache-a,cache-b\n");
    let out = ringwise(
        &[&ARTICLE[..], &["cache-b,cache-c", "user:42"]].concat(),
        b"",
    );
    assert_eq!(stdout(&out), "user:42\tcache-b\n");
}

#[test]
fn stdin_keys_are_bytes_without_their_line_end() {
    let args = [&ARTICLE[..], &["cache-a,cache-b,cache-c"]].concat();
    let out = ringwise(&args, b"user:42\r\nuser:42\nuser:42");
    assert!(out.status.success());
    assert_eq!(stdout(&out), "user:42\tcache-a\n".repeat(3));
    // Non-UTF-8 keys pass through as bytes.
    let out = ringwise(&args, b"\xff\xfe\n");
    assert!(out.stdout.starts_with(b"\xff\xfe\t"), "{:?}", out.stdout);
}

#[test]
fn json_lines() {
    let args = [
        &ARTICLE[..],
        &["cache-a,cache-b,cache-c", "--format", "json"],
    ]
    .concat();
    let out = ringwise(&args, b"user:42\n\xff\n");
    let lines: Vec<serde_json::Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    assert_eq!(
        lines[0],
        serde_json::json!({"version": 2, "key": "user:42", "node": "cache-a"})
    );
    assert_eq!(lines[1]["key_hex"], "ff");
    let args = [&args[..], &["--replicas", "5", "user:42"]].concat();
    let doc: serde_json::Value =
        serde_json::from_str(stdout(&ringwise(&args, b"")).trim()).expect("json");
    assert_eq!(
        doc["replicas"],
        serde_json::json!(["cache-a", "cache-b", "cache-c"])
    );
}

#[test]
fn cluster_file_and_inspect() {
    let dir = TempDir::create("cli");
    let toml = "hash = \"md5\"\nvnodes = 100\n[[nodes]]\nname = \"cache-c\"\n\
                [[nodes]]\nname = \"cache-a\"\n[[nodes]]\nname = \"cache-b\"\n";
    let path = &dir.write("cluster.toml", toml);
    let out = ringwise(&["lookup", "--cluster", path, "user:42"], b"");
    assert_eq!(stdout(&out), "user:42\tcache-a\n");
    let out = ringwise(&["inspect", "--cluster", path, "--format", "json"], b"");
    let doc: serde_json::Value = serde_json::from_str(stdout(&out).trim()).expect("json");
    assert_eq!(doc["points"], 300);
    let total: f64 = doc["nodes"]
        .as_array()
        .expect("nodes")
        .iter()
        .map(|n| n["share"].as_f64().expect("share"))
        .sum();
    assert!((total - 1.0).abs() < 1e-9);
    let text = stdout(&ringwise(&["inspect", "--cluster", path], b""));
    assert!(
        text.contains("cache-b") && text.contains("spread"),
        "{text}"
    );
    dir.remove();
}

/// Each bad input: its exit code, a message naming the problem, no stdout.
#[test]
fn bad_inputs_fail_cleanly() {
    let dir = TempDir::create("bad");
    let malformed = dir.write("bad.toml", "[[nodes]\nname = \"a\"\n");
    let cases: [(&[&str], i32, &str); 12] = [
        (&["lookup", "--nodes", "", "k"], 65, "empty"),
        // `a@z=2` was once zone "z=2" with weight 1,
        // `a==1` a node named "a=".
        (&["lookup", "--nodes", "a@z=2", "k"], 65, "a=2@z"),
        (&["lookup", "--nodes", "a==1", "k"], 65, "more than one `=`"),
        (&["lookup", "--nodes", "a,,b", "k"], 65, "empty name"),
        (
            &["lookup", "--nodes", "a,a", "k"],
            65,
            "duplicate node \"a\"",
        ),
        (&["lookup", "--nodes", "a=0", "k"], 65, "weight 0"),
        (&["lookup", "--nodes", "a=-2", "k"], 65, "weight -2"),
        (&["lookup", "--nodes", "a=NaN", "k"], 65, "weight NaN"),
        // A hash name outside the registry is a usage error, before anything runs.
        (
            &["lookup", "--nodes", "a", "--hash", "sha1", "k"],
            2,
            "unknown hash \"sha1\"",
        ),
        (
            &["lookup", "--cluster", "/nonexistent/ringwise.toml", "k"],
            66,
            "cannot read",
        ),
        (&["lookup", "--cluster", &malformed, "k"], 65, "line 1"),
        (&["lookup", "k"], 2, "--cluster"),
    ];
    for (args, code, needle) in cases {
        let out = ringwise(args, b"");
        let stderr = stderr(&out);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {stderr}");
        assert!(
            stderr.contains(needle),
            "{args:?}: {stderr:?} lacks {needle:?}"
        );
        assert!(out.stdout.is_empty(), "{args:?} printed {:?}", out.stdout);
    }
    dir.remove();
}

#[test]
fn slots_follow_redis_key_slots() {
    // a, b, c own 0-5460, 5461-10922, 10923-16383 (redis-cli's layout): `foo` is slot
    // 12182 and `{user1000}.following` slot 3443 (Redis's own examples).
    let out = ringwise(
        &[
            "lookup",
            "--algo",
            "slots",
            "--nodes",
            "a,b,c",
            "foo",
            "{user1000}.following",
        ],
        b"",
    );
    assert_success(&out);
    assert_eq!(stdout(&out), "foo\tc\n{user1000}.following\ta\n");
    let out = ringwise(&["lookup", "--algo", "slots", "--nodes", "a,b=2", "k"], b"");
    assert_eq!(out.status.code(), Some(65));
    let out = ringwise(
        &[
            "lookup",
            "--algo",
            "rendezvous",
            "--nodes",
            "a",
            "--zones",
            "k",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn bounded_lookup_spreads_a_hot_key() {
    // 12 requests for one key on 4 nodes at ε = 0.25: at most ⌈1.25·12/4⌉ = 4 each.
    let out = ringwise(
        &["lookup", "--nodes", "a,b,c,d", "--epsilon", "0.25"],
        &b"hot\n".repeat(12),
    );
    assert_success(&out);
    let text = stdout(&out);
    assert_eq!(text.lines().count(), 12);
    for node in ["a", "b", "c", "d"] {
        let n = text
            .lines()
            .filter(|l| *l == format!("hot\t{node}"))
            .count();
        assert!(n <= 4, "{node} got {n}:\n{text}");
    }
    let out = ringwise(&["lookup", "--nodes", "a,b", "--epsilon", "0", "k"], b"");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn epsilon_from_the_cluster_file() {
    let dir = TempDir::create("eps");
    let toml = "epsilon = 0.25\n[[nodes]]\nname = \"a\"\n[[nodes]]\nname = \"b\"\n\
                [[nodes]]\nname = \"c\"\n[[nodes]]\nname = \"d\"\n";
    let path = &dir.write("cluster.toml", toml);
    let out = ringwise(&["lookup", "--cluster", path], &b"hot\n".repeat(12));
    let text = stdout(&out);
    for node in ["a", "b", "c", "d"] {
        assert!(
            text.lines()
                .filter(|l| *l == format!("hot\t{node}"))
                .count()
                <= 4,
            "{text}"
        );
    }
    let out = ringwise(&["lookup", "--cluster", path, "--replicas", "2", "k"], b"");
    assert_eq!(out.status.code(), Some(2));
    dir.remove();
}

/// The same unknown `--algo` or `--hash` is a usage error (exit 2) in every
/// command, with the core's message naming the accepted values; every
/// command's help lists the registries' names.
#[test]
fn algorithm_and_hash_names_come_from_the_registries() {
    let commands: [&[&str]; 3] = [
        &["lookup", "--nodes", "a", "k"],
        &["inspect", "--nodes", "a"],
        &["simulate", "--keys", "100"],
    ];
    let algorithms = format!("expected one of {}", Algorithm::NAMES.join(", "));
    let hashes = format!("expected one of {}", StableHash::NAMES.join(", "));
    for command in commands {
        for (option, value, needle) in [
            (
                "--algo",
                "chord",
                format!("unknown algorithm \"chord\": {algorithms}"),
            ),
            ("--hash", "sha1", format!("unknown hash \"sha1\": {hashes}")),
        ] {
            let args = [command, &[option, value]].concat();
            let out = ringwise(&args, b"");
            let stderr = stderr(&out);
            assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
            assert!(
                stderr.contains(&needle),
                "{args:?}: {stderr:?} lacks {needle:?}"
            );
            assert!(out.stdout.is_empty(), "{args:?} printed {:?}", out.stdout);
        }
        let help = stdout(&ringwise(&[command[0], "--help"], b""));
        for names in [Algorithm::NAMES, StableHash::NAMES] {
            let listed = format!("[possible values: {}]", names.join(", "));
            assert!(
                help.contains(&listed),
                "{command:?} help lacks {listed:?}:\n{help}"
            );
        }
    }
}

/// Each command accepts the formats it can write; others are usage errors.
#[test]
fn formats_a_command_cannot_write_are_usage_errors() {
    for command in [
        &["lookup", "--nodes", "a", "k"][..],
        &["inspect", "--nodes", "a"],
    ] {
        let out = ringwise(&[command, &["--format", "csv"]].concat(), b"");
        assert_eq!(out.status.code(), Some(2), "{command:?}");
        assert!(
            stderr(&out).contains("[possible values: text, json]"),
            "{}",
            stderr(&out)
        );
        assert!(out.stdout.is_empty());
    }
    let out = ringwise(&["simulate", "--format", "xml"], b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("[possible values: text, json, csv]"));
}

/// Stdin is resolved a block of keys at a time (one batch call each); the
/// answers equal the first of each key's replicas, found one key at a time,
/// across block boundaries and for every algorithm.
#[test]
fn keys_in_blocks_answer_like_one_key_at_a_time() {
    let mut input: Vec<u8> = (0..2500)
        .flat_map(|i| format!("user:{i}\n").into_bytes())
        .collect();
    input.extend_from_slice(b"crlf\r\nlast");
    for &algo in Algorithm::NAMES {
        let base = ["lookup", "--algo", algo, "--nodes", "a,b,c,d,e"];
        let batch = ringwise(&base, &input);
        assert_success(&batch);
        let one_by_one = ringwise(&[&base[..], &["--replicas", "2"]].concat(), &input);
        assert_success(&one_by_one);
        let (batch, one_by_one) = (stdout(&batch), stdout(&one_by_one));
        assert_eq!(batch.lines().count(), 2502, "{algo}");
        for (b, r) in batch.lines().zip(one_by_one.lines()) {
            let first = r.split_once(',').map_or(r, |(first, _)| first);
            assert_eq!(b, first, "{algo}");
        }
        // Input order, keys without their line ends.
        let keys: Vec<&str> = batch.lines().filter_map(|l| l.split('\t').next()).collect();
        for (i, key) in keys[..2500].iter().enumerate() {
            assert_eq!(*key, format!("user:{i}"), "{algo}");
        }
        assert_eq!(keys[2500..], ["crlf", "last"], "{algo}");
    }
}

/// `--capacity` sets anchor's and dx's bucket count: the answers are the
/// library's for that capacity, and a capacity below the node count is a
/// usage error naming the option.
#[test]
fn capacity_option_sets_the_bucket_count() {
    use ringwise::{AnyPlacement, KeyHasher, Node, Params, Placement};
    let keys: Vec<String> = (0..50).map(|i| format!("user:{i}")).collect();
    let input = keys.join("\n") + "\n";
    for algorithm in [Algorithm::Anchor, Algorithm::Dx] {
        let name = algorithm.name();
        let args = [
            "lookup",
            "--algo",
            name,
            "--nodes",
            "a,b,c",
            "--capacity",
            "7",
        ];
        let out = ringwise(&args, input.as_bytes());
        assert_success(&out);
        let params = Params {
            capacity: 7,
            ..Params::DEFAULT
        };
        let nodes = ["a", "b", "c"].map(Node::new).into();
        let p = AnyPlacement::build(algorithm, nodes, &params).expect("valid");
        let want: String = keys
            .iter()
            .map(|k| {
                let id = p.owner(StableHash::Xxh3.hash(k.as_bytes())).expect("nodes");
                format!("{k}\t{}\n", p.nodes().name(id).expect("named"))
            })
            .collect();
        assert_eq!(stdout(&out), want, "{name}");
        let bad = ringwise(
            &[
                "lookup",
                "--algo",
                name,
                "--nodes",
                "a,b,c",
                "--capacity",
                "2",
                "k",
            ],
            b"",
        );
        assert_eq!(bad.status.code(), Some(2), "{}", stderr(&bad));
        assert!(stderr(&bad).contains("capacity"), "{}", stderr(&bad));
    }
}

/// `lookup --balance-factor`: HAProxy's `hash-balance-factor` on a
/// computed example. Servers a (weight 1), b (2), c (1): W = 64 effective
/// weight; factor 125 with 3, 1, 0 requests in flight: S = 4, slots =
/// (5·125 + 99) / 100 = 7, spread by weight in listed order: a gets
/// 16·7/64 = 1 (full: 3 in flight), b 48·7/64 - 1 = 4, c 7 - 5 = 2. A key
/// whose nearest point is a's goes to the next point clockwise that is
/// not a's; every other key stays.
#[test]
fn balance_factor_walks_past_full_servers() {
    let dir = TempDir::create("balance-factor");
    let file = dir.write(
        "haproxy.toml",
        "algorithm = \"haproxy\"\n\n[[nodes]]\nname = \"a\"\n\n[[nodes]]\nname = \"b\"\n\
         weight = 2\n\n[[nodes]]\nname = \"c\"\n",
    );
    let keys: Vec<String> = (0..2000).map(|i| format!("user:{i}")).collect();
    let input: String = keys.iter().map(|k| format!("{k}\n")).collect();
    let plain = ringwise(&["lookup", "--cluster", &file], input.as_bytes());
    assert_success(&plain);
    let bounded = ringwise(
        &[
            "lookup",
            "--cluster",
            &file,
            "--balance-factor",
            "125",
            "--in-flight",
            "a=3,b=1",
        ],
        input.as_bytes(),
    );
    assert_success(&bounded);
    // The tree's points, to walk as HAProxy does.
    let spec = ringwise::ClusterSpec::from_toml(&std::fs::read_to_string(&file).expect("file"))
        .expect("valid");
    let keyed = spec.build().expect("builds");
    let ringwise::AnyPlacement::Haproxy(tree) = keyed.placement() else {
        panic!("a haproxy tree");
    };
    let name = |id| tree.nodes().name(id).expect("a member").to_owned();
    let points: Vec<(u32, String)> = tree.points().map(|(p, id)| (p, name(id))).collect();
    let (mut moved, mut on_a) = (0, 0);
    for ((key, before), after) in keys
        .iter()
        .zip(stdout(&plain).lines())
        .zip(stdout(&bounded).lines())
    {
        let before = before.rsplit('\t').next().expect("owner");
        let after = after.rsplit('\t').next().expect("owner");
        if before != "a" {
            assert_eq!(after, before, "{key}: its server has room");
            continue;
        }
        on_a += 1;
        // The nearest point (ties to the previous), then clockwise.
        let k = ringwise::sdbm(key.as_bytes());
        let n = points.len();
        let at = points.partition_point(|(p, _)| *p < k);
        let (prev, next) = ((at + n - 1) % n, at % n);
        let mut i = match k.wrapping_sub(points[prev].0) <= points[next].0.wrapping_sub(k) {
            true => prev,
            false => next,
        };
        assert_eq!(points[i].1, "a", "{key}: plain lookup is the nearest point");
        while points[i].1 == "a" {
            i = (i + 1) % n;
        }
        assert_eq!(after, points[i].1, "{key}: the next server with room");
        moved += usize::from(after != before);
    }
    assert!(on_a > 200, "a owns a fair part of the keys ({on_a})");
    assert_eq!(moved, on_a, "every key of the full server moves");
    // Not a haproxy cluster, or a factor HAProxy refuses.
    let out = ringwise(
        &["lookup", "--nodes", "a,b", "--balance-factor", "150", "k"],
        b"",
    );
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("hash-balance-factor"),
        "{}",
        stderr(&out)
    );
    let out = ringwise(
        &["lookup", "--cluster", &file, "--balance-factor", "100", "k"],
        b"",
    );
    assert!(!out.status.success());
    let out = ringwise(
        &[
            "lookup",
            "--cluster",
            &file,
            "--balance-factor",
            "150",
            "--in-flight",
            "z=1",
            "k",
        ],
        b"",
    );
    assert!(stderr(&out).contains("no server \"z\""), "{}", stderr(&out));
}
