//! Regressions of issue 13's reproductions, each named after its item.

use std::process::{Command, Stdio};

use crate::support::{TempDir, assert_success, ringwise, stderr, stdout};

/// Item 4: `--replicas 4294967295` reserved 16 GiB up front and aborted
/// under a memory limit. Under a 1 GiB address-space limit it must answer
/// with every node.
#[test]
fn issue13_4_replicas_reserve_at_most_the_nodes() {
    let bin = env!("CARGO_BIN_EXE_ringwise");
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -v 1048576 && exec '{bin}' lookup --nodes a,b,c --replicas 4294967295 k"
        ))
        .output()
        .expect("sh runs");
    assert_success(&out);
    let line = stdout(&out);
    let (_, nodes) = line.trim_end().split_once('\t').expect("KEY<TAB>NODES");
    let mut nodes: Vec<&str> = nodes.split(',').collect();
    nodes.sort_unstable();
    assert_eq!(nodes, ["a", "b", "c"]);
}

/// Item 5: a file's `hash = "siphash"` (with its secret) silently became
/// the new algorithm's unkeyed default under `--algo rendezvous`. The named
/// hash stays; a pair the algorithm cannot use is refused.
#[test]
fn issue13_5_explicit_hash_survives_an_algo_override() {
    let dir = TempDir::create("siphash");
    let text = "hash = \"siphash\"\nsecret = \"00112233445566778899aabbccddeeff\"\n\
                [[nodes]]\nname = \"a\"\n[[nodes]]\nname = \"b\"\n[[nodes]]\nname = \"c\"\n";
    let path = dir.write("cluster.toml", text);
    let path = path.as_str();
    let keys: String = (0..300).map(|i| format!("key-{i}\n")).collect();
    let out = ringwise(
        &["lookup", "--cluster", path, "--algo", "rendezvous"],
        keys.as_bytes(),
    );
    assert_success(&out);
    let mut spec = ringwise::ClusterSpec::from_toml(text).expect("valid");
    spec.algorithm = ringwise::Algorithm::Rendezvous;
    let keyed = spec.build().expect("builds");
    for line in stdout(&out).lines() {
        let (key, node) = line.split_once('\t').expect("KEY<TAB>NODE");
        assert_eq!(keyed.locate(key), Some(node), "{key}");
    }
    let inspect = ringwise(&["inspect", "--cluster", path, "--algo", "jump"], b"");
    assert_success(&inspect);
    assert!(
        stdout(&inspect).contains("hash siphash"),
        "{}",
        stdout(&inspect)
    );
    // redis-crc16 named for slots cannot follow the cluster to a ring.
    let text = "algorithm = \"slots\"\nhash = \"redis-crc16\"\n[[nodes]]\nname = \"a\"\n";
    let path = dir.write("slots.toml", text);
    let path = path.as_str();
    let refused = ringwise(&["lookup", "--cluster", path, "--algo", "ring", "k"], b"");
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(stderr(&refused).contains("--algo/--hash"));
}

/// Item 6: `eprintln!` panicked (exit 101) when stderr was a closed pipe.
/// The error's own exit code (65: a weight of 0) must come back.
#[test]
fn issue13_6_a_closed_stderr_keeps_the_exit_code() {
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader); // every write to `writer` now fails with EPIPE
    let status = Command::new(env!("CARGO_BIN_EXE_ringwise"))
        .args(["lookup", "--nodes", "a=0", "k"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(writer)
        .status()
        .expect("ringwise runs");
    assert_eq!(status.code(), Some(65));
}

/// Item 8: `--epsilon -0.5` got clap's tip to write `-- -0.5`, which would
/// have made it a key. It is a value, refused with the reason (exit 2).
#[test]
fn issue13_8_a_negative_epsilon_is_refused_as_a_value() {
    for args in [
        &["lookup", "--nodes", "a,b", "--epsilon", "-0.5", "k"][..],
        &["simulate", "--compare", "--epsilon", "-0.5"][..],
    ] {
        let out = ringwise(args, b"");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let message = stderr(&out);
        assert!(
            message.contains("-0.5") && message.contains("above 0"),
            "{message}"
        );
        assert!(!message.contains("tip"), "{message}");
    }
}

/// Item 4 (simulate): `--nodes 4294967295` tried to allocate 103 GB and
/// `--nodes 1000000` ran 78 s before aborting; the run's size is checked
/// before anything is built, exit 2.
#[test]
fn issue13_4_simulate_checks_the_run_size_up_front() {
    for nodes in ["4294967295", "1000000"] {
        let out = ringwise(&["simulate", "--nodes", nodes, "--keys", "100"], b"");
        assert_eq!(out.status.code(), Some(2), "{nodes}: {}", stderr(&out));
        assert!(stderr(&out).contains("point budget"), "{}", stderr(&out));
    }
}

/// Item 7: `--cluster /dev/urandom` read gigabytes before checking
/// anything; a cluster file is capped at 64 MiB, bad data (exit 65).
#[test]
fn issue13_7_cluster_files_have_a_size_cap() {
    let out = ringwise(&["lookup", "--cluster", "/dev/zero", "k"], b"");
    assert_eq!(out.status.code(), Some(65), "{}", stderr(&out));
    assert!(stderr(&out).contains("at most 64 MiB"), "{}", stderr(&out));
}

/// Item 3: `--nodes a=1000000,b` (160,000,160 points, 6 GiB at the build's
/// peak) needed 4.8 GB and aborted under a 4 GB limit. It is refused at
/// once, before anything large is allocated, with the budget, how to
/// raise it and what the build would need.
#[test]
fn issue13_3_a_million_weight_node_is_refused_promptly() {
    let out = ringwise(&["lookup", "--nodes", "a=1000000,b", "k"], b"");
    assert_eq!(out.status.code(), Some(65), "{}", stderr(&out));
    let text = stderr(&out);
    for needle in [
        "160000160 points",
        "16777216",
        "--max-points",
        "6104 MiB",
        "40 bytes per point",
    ] {
        assert!(text.contains(needle), "{text:?} lacks {needle:?}");
    }
}

/// Item 3: a budget raised past what the process may allocate fails with
/// a clean error before the build allocates (it aborted with "memory
/// allocation of 1920000000 bytes failed"). 51,000,000 points peak at
/// 1.9 GiB; the address space is limited to 1 GiB.
#[test]
fn issue13_3_a_build_over_the_memory_limit_fails_cleanly() {
    let bin = env!("CARGO_BIN_EXE_ringwise");
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -v 1048576 && exec '{bin}' lookup --nodes a=50,b --vnodes 1000000 \
             --max-points 268435456 k"
        ))
        .output()
        .expect("sh runs");
    assert_eq!(out.status.code(), Some(65), "{}", stderr(&out));
    let text = stderr(&out);
    assert!(
        text.contains("a ring build needs about 1946 MiB") && text.contains("memory limit"),
        "{text}"
    );
}

/// Item 8: a node named `a,b` made `--replicas` text output ambiguous.
/// Names are escaped (`\,` and `\\`) in text output, so the bare commas
/// are exactly the separators; JSON needs no escaping.
#[test]
fn issue13_8_commas_in_node_names_are_escaped_in_replicas() {
    let dir = TempDir::create("commas");
    let text = "[[nodes]]\nname = \"a,b\"\n[[nodes]]\nname = \"c\"\n\
                [[nodes]]\nname = 'd\\,e'\n";
    let path = dir.write("cluster.toml", text);
    let out = ringwise(&["lookup", "--cluster", &path, "--replicas", "3", "k"], b"");
    assert_success(&out);
    let line = stdout(&out);
    let (key, names) = line.trim_end().split_once('\t').expect("KEY<TAB>NODES");
    assert_eq!(key, "k");
    // Split on commas not escaped, then unescape.
    let mut fields = vec![String::new()];
    let mut chars = names.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => fields
                .last_mut()
                .expect("one")
                .push(chars.next().expect("escaped")),
            ',' => fields.push(String::new()),
            c => fields.last_mut().expect("one").push(c),
        }
    }
    fields.sort_unstable();
    assert_eq!(fields, ["a,b", "c", "d\\,e"], "{names}");
    let json = ringwise(
        &[
            "lookup",
            "--cluster",
            &path,
            "--replicas",
            "3",
            "--format",
            "json",
            "k",
        ],
        b"",
    );
    assert_success(&json);
    let value: serde_json::Value = serde_json::from_str(stdout(&json).trim()).expect("json");
    let mut listed: Vec<&str> = value["replicas"]
        .as_array()
        .expect("replicas")
        .iter()
        .filter_map(|v| v.as_str())
        .collect();
    listed.sort_unstable();
    assert_eq!(listed, ["a,b", "c", "d\\,e"]);
}

/// Item 7: `inspect --algo rendezvous` sampled 1,000,000 keys at O(N) each
/// (10,000 nodes: 58 s). Over many nodes it samples 3·10^8 / N keys and
/// says so with the standard error; the shares still add up and every
/// node is listed.
#[test]
fn issue13_7_rendezvous_inspect_scales_its_sample_to_the_nodes() {
    let nodes: Vec<String> = (0..20_000).map(|i| format!("n{i}")).collect();
    let list = nodes.join(",");
    let out = ringwise(
        &[
            "inspect",
            "--algo",
            "rendezvous",
            "--nodes",
            &list,
            "--format",
            "json",
        ],
        b"",
    );
    assert_success(&out);
    assert!(
        stderr(&out).contains("sampled on 15000 keys") && stderr(&out).contains("115%"),
        "{}",
        stderr(&out)
    );
    let value: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("json");
    let listed = value["nodes"].as_array().expect("nodes");
    assert_eq!(listed.len(), 20_000);
    let total: f64 = listed.iter().filter_map(|n| n["share"].as_f64()).sum();
    assert!((total - 1.0).abs() < 1e-9, "shares add up to {total}");
    assert_eq!(value["exact"], false);
}

/// Item 7 (caps): a key line over 1 MiB is refused with its line number
/// (exit 65) after the keys before it were answered, instead of growing
/// one buffer with whatever the input holds.
#[test]
fn issue13_7_a_key_line_over_1_mib_is_refused() {
    let mut input = b"first\n".to_vec();
    input.extend(std::iter::repeat_n(b'x', (1 << 20) + 1));
    input.extend(b"\nlast\n");
    let out = ringwise(&["lookup", "--nodes", "a,b"], &input);
    assert_eq!(out.status.code(), Some(65), "{}", stderr(&out));
    assert!(stdout(&out).starts_with("first\t"), "{}", stdout(&out));
    assert!(!stdout(&out).contains("last"));
    assert!(stderr(&out).contains("stdin line 2"), "{}", stderr(&out));
    // Exactly 1 MiB is a key.
    let mut input = vec![b'y'; 1 << 20];
    input.push(b'\n');
    let out = ringwise(&["lookup", "--nodes", "a,b"], &input);
    assert_success(&out);
}

/// Issue 13, costs: `--epsilon` over 10,000 nodes places 100,000 keys
/// (bounded assignment O(K·(1 + spills))), every load within
/// `ceil(1.25 · K / N)` = 13.
#[test]
fn issue13_4_scale_epsilon_places_100000_keys_over_10000_nodes() {
    let nodes: Vec<String> = (0..10_000).map(|i| format!("n{i}")).collect();
    let list = nodes.join(",");
    let keys: String = (0..100_000).map(|i| format!("user:{i}\n")).collect();
    let out = ringwise(
        &[
            "lookup",
            "--algo",
            "jump",
            "--nodes",
            &list,
            "--epsilon",
            "0.25",
        ],
        keys.as_bytes(),
    );
    assert_success(&out);
    let mut loads = std::collections::HashMap::new();
    let mut lines = 0;
    for line in stdout(&out).lines() {
        let (_, node) = line.split_once('\t').expect("KEY<TAB>NODE");
        *loads.entry(node.to_owned()).or_insert(0u32) += 1;
        lines += 1;
    }
    assert_eq!(lines, 100_000);
    let max = loads.values().max().copied().unwrap_or(0);
    assert!(max <= 13, "a node holds {max} keys");
}
