//! Regressions: each test pins a reproduction that once failed (its doc
//! says how), named after what it pins.

use std::process::{Command, Stdio};

use crate::support::{TempDir, assert_success, ringwise, stderr, stdout};

/// `--replicas 4294967295` reserved 16 GiB up front and aborted
/// under a memory limit. Under a 1 GiB address-space limit it must answer
/// with every node.
#[test]
fn replicas_reserve_at_most_the_nodes() {
    let out = under_1_gib(&[
        "lookup",
        "--nodes",
        "a,b,c",
        "--replicas",
        "4294967295",
        "k",
    ]);
    assert_success(&out);
    let line = stdout(&out);
    let (_, nodes) = line.trim_end().split_once('\t').expect("KEY<TAB>NODES");
    let mut nodes: Vec<&str> = nodes.split(',').collect();
    nodes.sort_unstable();
    assert_eq!(nodes, ["a", "b", "c"]);
}

/// A file's `hash = "siphash"` (with its secret) silently became
/// the new algorithm's unkeyed default under `--algo rendezvous`. The named
/// hash stays; a pair the algorithm cannot use is refused.
#[test]
fn explicit_hash_survives_an_algo_override() {
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

/// `eprintln!` panicked (exit 101) when stderr was a closed pipe.
/// The error's own exit code (65: a weight of 0) must come back.
#[test]
fn a_closed_stderr_keeps_the_exit_code() {
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

/// `--epsilon -0.5` got clap's tip to write `-- -0.5`, which would
/// have made it a key. It is a value, refused with the reason (exit 2).
#[test]
fn a_negative_epsilon_is_refused_as_a_value() {
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
    // The same for a count: `--replicas -1` got clap's tip too.
    let out = ringwise(&["lookup", "--nodes", "a,b", "--replicas", "-1", "k"], b"");
    assert_eq!(out.status.code(), Some(2));
    let message = stderr(&out);
    assert!(message.contains("-1 is not in 1.."), "{message}");
    assert!(!message.contains("tip"), "{message}");
}

/// `simulate`: `--nodes 4294967295` tried to allocate 103 GB and
/// `--nodes 1000000` ran 78 s before aborting; the run's size is checked
/// before anything is built, exit 2.
#[test]
fn simulate_checks_the_run_size_up_front() {
    for nodes in ["4294967295", "1000000"] {
        let out = ringwise(&["simulate", "--nodes", nodes, "--keys", "100"], b"");
        assert_eq!(out.status.code(), Some(2), "{nodes}: {}", stderr(&out));
        assert!(stderr(&out).contains("point budget"), "{}", stderr(&out));
    }
}

/// `--cluster /dev/urandom` read gigabytes before checking
/// anything; a cluster file is capped at 64 MiB, bad data (exit 65).
#[test]
fn cluster_files_have_a_size_cap() {
    let out = ringwise(&["lookup", "--cluster", "/dev/zero", "k"], b"");
    assert_eq!(out.status.code(), Some(65), "{}", stderr(&out));
    assert!(stderr(&out).contains("at most 64 MiB"), "{}", stderr(&out));
}

/// `--nodes a=1000000,b` (160,000,160 points, 6 GiB at the build's
/// peak) needed 4.8 GB and aborted under a 4 GB limit. It is refused at
/// once, before anything large is allocated, with the budget, how to
/// raise it and what the build would need.
#[test]
fn a_million_weight_node_is_refused_promptly() {
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

/// `--cluster` built the file as written before applying the
/// options, so a file over the point budget was refused even with
/// `--vnodes 1`, `--algo rendezvous` or `--max-points` given to rescue it (and
/// the error told the user to pass the option that was already there).
/// Options change the spec first; the file alone still names its line.
#[test]
fn options_rescue_a_cluster_file_too_big_as_written() {
    let dir = TempDir::create("rescue");
    let file = dir.write(
        "big.toml",
        "[[nodes]]\nname = \"a\"\nweight = 200000\n[[nodes]]\nname = \"b\"\n",
    );
    let file = file.as_str();
    let out = ringwise(&["lookup", "--cluster", file, "k"], b"");
    assert_eq!(out.status.code(), Some(65), "{}", stderr(&out));
    assert!(stderr(&out).contains("line"), "{}", stderr(&out));
    for options in [&["--vnodes", "1"][..], &["--algo", "rendezvous"]] {
        let out = ringwise(
            &[&["lookup", "--cluster", file], options, &["k"]].concat(),
            b"",
        );
        assert_success(&out);
        assert!(stdout(&out).starts_with("k\t"), "{}", stdout(&out));
    }
}

/// Caps: `--epsilon` holds every key, so an endless input (`yes k |`)
/// aborted under a memory limit. It stops at `--max-keys` (default 2^24)
/// with exit 65 and the way out, before holding more.
#[test]
fn epsilon_reads_at_most_max_keys() {
    let keys: String = (0..1001).map(|i| format!("k{i}\n")).collect();
    let base = ["lookup", "--nodes", "a,b", "--epsilon", "0.25"];
    let out = ringwise(
        &[&base[..], &["--max-keys", "1000"]].concat(),
        keys.as_bytes(),
    );
    assert_eq!(out.status.code(), Some(65), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("at most 1000 keys"),
        "{}",
        stderr(&out)
    );
    assert!(stdout(&out).is_empty(), "nothing placed");
    let out = ringwise(
        &[&base[..], &["--max-keys", "1001"]].concat(),
        keys.as_bytes(),
    );
    assert_success(&out);
    assert_eq!(stdout(&out).lines().count(), 1001);
}

/// A budget raised past what the process may allocate fails with
/// a clean error before the build allocates (it aborted with "memory
/// allocation of 1920000000 bytes failed"). 51,000,000 points peak at
/// 1.9 GiB; the address space is limited to 1 GiB.
#[test]
fn a_build_over_the_memory_limit_fails_cleanly() {
    let out = under_1_gib(&[
        "lookup",
        "--nodes",
        "a=50,b",
        "--vnodes",
        "1000000",
        "--max-points",
        "268435456",
        "k",
    ]);
    assert_eq!(out.status.code(), Some(65), "{}", stderr(&out));
    let text = stderr(&out);
    assert!(
        text.contains("a ring build needs about 1946 MiB") && text.contains("memory limit"),
        "{text}"
    );
}

/// A node named `a,b` made `--replicas` text output ambiguous.
/// Names are escaped (`\,` and `\\`) in text output, so the bare commas
/// are exactly the separators; JSON needs no escaping.
#[test]
fn commas_in_node_names_are_escaped_in_replicas() {
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

/// `inspect --algo rendezvous` sampled 1,000,000 keys at O(N) each
/// (10,000 nodes: 58 s). Over many nodes it samples 3·10^8 / N keys and
/// says so with the standard error; the shares still add up and every
/// node is listed.
#[test]
fn rendezvous_inspect_scales_its_sample_to_the_nodes() {
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

/// A key line over 1 MiB is refused with its line number
/// (exit 65) after the keys before it were answered, instead of growing
/// one buffer with whatever the input holds.
#[test]
fn a_key_line_over_1_mib_is_refused() {
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

/// Costs: `--epsilon` over 10,000 nodes places 100,000 keys
/// (bounded assignment O(K·(1 + spills))), every load within
/// `ceil(1.25 · K / N)` = 13.
#[test]
fn epsilon_places_100000_keys_over_10000_nodes() {
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

/// Runs `ringwise ARGS` under a 1 GiB address-space limit: see
/// [`under_limit`].
fn under_1_gib(args: &[&str]) -> std::process::Output {
    under_limit(1 << 20, args)
}

/// Runs `ringwise ARGS` under an address-space limit of `kib` KiB
/// (`ulimit -v`), so a command that would allocate without bound aborts
/// at once instead of exhausting the machine: the test then fails on its
/// exit code.
fn under_limit(kib: u32, args: &[&str]) -> std::process::Output {
    let bin = env!("CARGO_BIN_EXE_ringwise");
    Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {kib} && exec \"$0\" \"$@\""))
        .arg(bin)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("sh runs")
}

/// `simulate --seeds 4294967295 --keys 10 --experiments
/// seeds` aborted ("memory allocation of 34359738360 bytes failed") and
/// `--keys 18446744073709551615` had no size check. Every count simulate
/// multiplies into an allocation or a pass is capped up front (exit 2,
/// naming the limit and why), and the whole run's work is checked before
/// anything is hashed or built.
#[test]
fn simulate_caps_seeds_keys_and_the_whole_run_up_front() {
    let many: Vec<String> = (1..=65).map(|v| v.to_string()).collect();
    let many = many.join(",");
    let cases: [(&[&str], &str); 5] = [
        (
            &[
                "--seeds",
                "4294967295",
                "--keys",
                "10",
                "--experiments",
                "seeds",
            ],
            "--seeds: 4294967295 name sets: at most 10000",
        ),
        (
            &["--keys", "18446744073709551615"],
            "--keys: 18446744073709551615 keys: at most 1000000000",
        ),
        (
            &["--seed-keys", "100000000", "--experiments", "seeds"],
            "--seed-keys: 100000000 keys: at most 8000000",
        ),
        (&["--vnodes", &many], "--vnodes: 65 values: at most 64"),
        (
            &[
                "--seeds",
                "10000",
                "--seed-keys",
                "8000000",
                "--keys",
                "8000000",
            ],
            "--seeds: this run would make",
        ),
    ];
    for (args, message) in cases {
        let started = std::time::Instant::now();
        let out = under_1_gib(&[&["simulate"], args].concat());
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(message), "{args:?}: {}", stderr(&out));
        assert!(out.stdout.is_empty(), "{args:?}: refused before running");
        // Refused before any work, not after it (a generous bound for a
        // loaded machine: the runs refused here take hours).
        assert!(started.elapsed().as_secs() < 30, "{args:?}");
    }
}

/// `plan --keys /dev/zero` grew one line buffer until the
/// allocator aborted ("allocation of 2147483648 bytes failed"), and a
/// 3 MiB key line was accepted. A key line over 1 MiB is refused with its
/// line number (exit 65), as `lookup` does, through the same reader.
#[test]
fn plan_refuses_a_key_line_over_1_mib() {
    let dir = TempDir::create("plan-long-key");
    let from = dir.write(
        "ab.toml",
        "[[nodes]]\nname = \"a\"\n[[nodes]]\nname = \"b\"\n",
    );
    let out = under_1_gib(&["plan", "--from", &from, "--add", "c", "--keys", "/dev/zero"]);
    assert_eq!(out.status.code(), Some(65), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("/dev/zero line 1: a key line is at most 1048576 bytes (1 MiB)"),
        "{}",
        stderr(&out)
    );
    let mut long = b"first\n".to_vec();
    long.extend(std::iter::repeat_n(b'x', 3 << 20));
    long.push(b'\n');
    let path = dir.path().join("long.keys");
    std::fs::write(&path, &long).expect("written");
    let path = path.to_str().expect("utf-8");
    let out = under_1_gib(&["plan", "--from", &from, "--add", "c", "--keys", path]);
    assert_eq!(out.status.code(), Some(65), "{}", stderr(&out));
    assert!(stderr(&out).contains("line 2"), "{}", stderr(&out));
    // A key of exactly 1 MiB, with its size, is a key.
    let mut exact = vec![b'y'; 1 << 20];
    exact.extend(b"\t12KB\n");
    std::fs::write(dir.path().join("exact.keys"), &exact).expect("written");
    let exact = dir.path().join("exact.keys");
    let out = ringwise(
        &[
            "plan",
            "--from",
            &from,
            "--add",
            "c",
            "--keys",
            exact.to_str().expect("utf-8"),
        ],
        b"",
    );
    assert_success(&out);
}

/// `plan --from /dev/urandom --add x --allocate 16` read 2.1 GB
/// in 21 s (the fresh-start check read the whole file) before the 64 MiB
/// cap said no. Every cluster file plan reads goes through the cap: fed an
/// endless stream through a FIFO, plan reads at most the cap (plus what
/// the pipe buffers) before it refuses; it read until memory ran out.
#[test]
fn plan_allocate_reads_from_through_the_cluster_file_cap() {
    let out = under_1_gib(&[
        "plan",
        "--from",
        "/dev/urandom",
        "--add",
        "x",
        "--allocate",
        "16",
    ]);
    assert_eq!(out.status.code(), Some(65), "{}", stderr(&out));
    assert!(stderr(&out).contains("at most 64 MiB"), "{}", stderr(&out));
    let dir = TempDir::create("plan-fifo");
    let fifo = dir.path().join("endless.toml");
    let made = Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
    let writer = {
        let fifo = fifo.clone();
        // Writes until plan closes its end (EPIPE), counting the bytes.
        std::thread::spawn(move || {
            use std::io::Write as _;
            let mut pipe = std::fs::OpenOptions::new()
                .write(true)
                .open(&fifo)
                .expect("fifo");
            let chunk = vec![b'x'; 1 << 20];
            let mut written = 0u64;
            while pipe.write_all(&chunk).is_ok() {
                written += chunk.len() as u64;
            }
            written
        })
    };
    let fifo = fifo.to_str().expect("utf-8");
    let out = under_1_gib(&["plan", "--from", fifo, "--add", "x", "--allocate", "16"]);
    // A plan that never opened the FIFO leaves the writer blocked in its
    // open: a reader of our own wakes it, and closing that reader at once
    // ends its writes (EPIPE). Read and write, so that this open itself
    // never waits for a writer (Linux); harmless once plan has read.
    drop(
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(fifo),
    );
    let written = writer.join().expect("the writer");
    assert_eq!(out.status.code(), Some(65), "{}", stderr(&out));
    assert!(stderr(&out).contains("at most 64 MiB"), "{}", stderr(&out));
    assert!(written <= 66 << 20, "plan read {written} bytes");
    // A blank --from still starts a new cluster.
    let dir = TempDir::create("plan-blank");
    let blank = dir.write("blank.toml", " \n\n");
    let out = ringwise(
        &["plan", "--from", &blank, "--add", "x", "--allocate", "16"],
        b"",
    );
    assert_success(&out);
}

/// The comparison's "ring, allocated 16" row costs O(N^2 T)
/// (100 nodes plus the 1,000-node row: 48 s; 1,638 nodes: over 400 s).
/// Above `MAX_ALLOCATED_NODES` (300) the row is skipped with the reason
/// and its cost, in text, CSV and JSON alike; below it stays.
#[test]
fn compare_skips_the_allocated_ring_above_its_bound() {
    let args = [
        "--experiments",
        "compare",
        "--nodes",
        "40",
        "--keys",
        "1000",
    ];
    let json = crate::support::simulate(&[&args[..], &["--format", "json"]].concat());
    assert_success(&json);
    let doc: serde_json::Value = serde_json::from_str(&stdout(&json)).expect("json");
    let allocated: Vec<u64> = doc["compare"]
        .as_array()
        .expect("rows")
        .iter()
        .filter(|r| r["algorithm"] == "ring, allocated 16")
        .filter_map(|r| r["nodes"].as_u64())
        .collect();
    assert_eq!(allocated, [40]);
    let skipped = &doc["skipped"][0];
    assert_eq!(skipped["experiment"], "compare");
    let reason = skipped["reason"].as_str().expect("reason");
    for needle in [
        "ring, allocated 16 at 400 nodes",
        "O(N^2 * T)",
        "up to 300 nodes",
    ] {
        assert!(reason.contains(needle), "{reason}");
    }
    let text = crate::support::simulate(&args);
    assert!(
        stdout(&text).contains("compare: skipped: ring, allocated 16 at 400 nodes"),
        "{}",
        stdout(&text)
    );
    let csv = crate::support::simulate(&[&args[..], &["--format", "csv"]].concat());
    assert!(
        stdout(&csv).contains("skipped,compare,ring, allocated 16 at 400 nodes")
            || stdout(&csv).contains("skipped,compare,\"ring, allocated 16 at 400 nodes"),
        "{}",
        stdout(&csv)
    );
}

/// `plan --ranges` held every moved range as a JSON value (a
/// 3-node maglev with a 16,777,213-slot table: 3.45 GB at the peak for
/// 50 MB of output, exit 134 under 2 GB). The ranges are written as a
/// stream: a 1,999,993-slot table (about 400 MB at the peak before, 45 MB
/// now) plans within a 256 MiB address space in JSON and CSV, every range
/// listed.
#[test]
fn plan_ranges_are_written_as_a_stream() {
    let dir = TempDir::create("plan-stream");
    let from = dir.write(
        "mag.toml",
        "algorithm = \"maglev\"\ntable_size = 1999993\n[[nodes]]\nname = \"a\"\n\
         [[nodes]]\nname = \"b\"\n[[nodes]]\nname = \"c\"\n",
    );
    let run = |format: &str| {
        let args = ["plan", "--from", &from, "--add", "d", "--ranges"];
        under_limit(256 << 10, &[&args[..], &["--format", format]].concat())
    };
    let json = run("json");
    assert_success(&json);
    let doc: serde_json::Value = serde_json::from_slice(&json.stdout).expect("one document");
    let ranges = doc["ranges"].as_array().expect("ranges");
    // About a quarter of the slots move to d, in runs.
    assert!(ranges.len() > 100_000, "{} ranges", ranges.len());
    let slots: u64 = ranges
        .iter()
        .map(|r| r["end"].as_u64().expect("end") - r["start"].as_u64().expect("start") + 1)
        .sum();
    let moved = doc["moved"].as_f64().expect("moved");
    assert!(
        (slots as f64 / 1_999_993.0 - moved).abs() < 1e-9,
        "{slots} slots listed, {moved} moved"
    );
    let csv = run("csv");
    assert_success(&csv);
    let text = String::from_utf8(csv.stdout).expect("utf-8");
    let rows = text.lines().filter(|l| l.starts_with("range,")).count();
    assert_eq!(rows, ranges.len());
}

/// `inspect --nodes a,b --vnodes 1000000 --svg` drew every one
/// of a million arcs (112 MB of SVG). Above 20,000 arcs the ring is drawn
/// as 720 sectors stacked by their owners' shares, and the SVG says so.
#[test]
fn inspect_svg_draws_a_bounded_ring() {
    let dir = TempDir::create("inspect-bounded-svg");
    let svg = dir.path().join("ring.svg");
    let svg = svg.to_str().expect("utf-8");
    let out = ringwise(
        &[
            "inspect", "--nodes", "a,b", "--vnodes", "1000000", "--svg", svg,
        ],
        b"",
    );
    assert_success(&out);
    let picture = std::fs::read_to_string(svg).expect("written");
    assert!(picture.len() < 1 << 20, "{} bytes", picture.len());
    assert!(picture.contains("drawn as 720 sectors"));
    let paths = picture.matches("<path").count();
    assert!(paths <= 720 * 13, "{paths} paths");
    // Both nodes are drawn, in about equal parts.
    for colour in ["#1f77b4", "#ff7f0e"] {
        assert!(picture.matches(colour).count() > 500, "{colour}");
    }
    // A small ring keeps its arcs and ticks.
    let out = ringwise(
        &["inspect", "--nodes", "a,b", "--vnodes", "10", "--svg", svg],
        b"",
    );
    assert_success(&out);
    let picture = std::fs::read_to_string(svg).expect("written");
    assert!(picture.contains("ticks: points") && !picture.contains("sectors"));
}

/// The same for `plan --svg`: a join to a ring of 2 × 1,000,000 points
/// moved 666,000 ranges, each drawn (75 MB). Beyond 20,000 ranges they
/// are stacked per half degree by receiver; the receiver still shows.
#[test]
fn plan_svg_draws_bounded_moves() {
    let dir = TempDir::create("plan-bounded-svg");
    let from = dir.write(
        "big.toml",
        "vnodes = 30000\n[[nodes]]\nname = \"a\"\n[[nodes]]\nname = \"b\"\n",
    );
    let svg = dir.path().join("plan.svg");
    let svg = svg.to_str().expect("utf-8");
    let out = ringwise(
        &[
            "plan", "--from", &from, "--add", "c", "--svg", svg, "--format", "json",
        ],
        b"",
    );
    assert_success(&out);
    let picture = std::fs::read_to_string(svg).expect("written");
    assert!(picture.len() < 2 << 20, "{} bytes", picture.len());
    assert!(picture.contains("stacked by receiver"));
    // c's colour (the third hue) marks the moves in most half degrees.
    assert!(picture.matches("#2ca02c").count() > 600);
}

/// Secret rotation: `plan --from sip.toml --to sip2.toml` (siphash, new
/// secret) exited 65 "the two clusters hash keys differently (from:
/// siphash None, to: siphash None)". A new key hash rehashes every key
/// independently of where it was: plan prices it as the expectation
/// 1 − Σ p_old·p_new (exact shares for rings), with `--keys` exactly, and
/// never prints a secret. A change of hash (md5 → xxh3) is priced alike.
#[test]
fn plan_prices_a_secret_rotation() {
    let dir = TempDir::create("plan-rotation");
    let secrets = [
        "00112233445566778899aabbccddeeff",
        "f0e1d2c3b4a5968778695a4b3c2d1e0f",
    ];
    let nodes = "[[nodes]]\nname = \"a\"\n[[nodes]]\nname = \"b\"\n[[nodes]]\nname = \"c\"\n";
    let [old, new] = secrets.map(|secret| {
        let text = format!("hash = \"siphash\"\nsecret = \"{secret}\"\n{nodes}");
        dir.write(&format!("{secret}.toml"), &text)
    });
    let keys: String = (0..30_000).map(|i| format!("user:{i}\n")).collect();
    let key_file = dir.write("keys.txt", &keys);
    let out = ringwise(
        &[
            "plan", "--from", &old, "--to", &new, "--keys", &key_file, "--format", "json",
        ],
        b"",
    );
    assert_success(&out);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(doc["rehash"], true);
    assert_eq!(doc["exact"], true, "ring shares are exact");
    assert_eq!(doc["optimum"], serde_json::Value::Null);
    // 1 − Σ p_old·p_new from the two rings' own shares (inspect's).
    let share = |path: &str| -> std::collections::HashMap<String, f64> {
        let out = ringwise(&["inspect", "--cluster", path, "--format", "json"], b"");
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
        doc["nodes"]
            .as_array()
            .expect("nodes")
            .iter()
            .map(|n| {
                (
                    n["name"].as_str().expect("name").to_owned(),
                    n["share"].as_f64().expect("share"),
                )
            })
            .collect()
    };
    let (p_old, p_new) = (share(&old), share(&new));
    let stay: f64 = p_old.iter().map(|(n, p)| p * p_new[n]).sum();
    let moved = doc["moved"].as_f64().expect("moved");
    assert!(
        (moved - (1.0 - stay)).abs() < 1e-9,
        "{moved} vs {}",
        1.0 - stay
    );
    let flow = doc["flows"]
        .as_array()
        .expect("flows")
        .iter()
        .find(|f| f["from"] == "a" && f["to"] == "b")
        .expect("a -> b");
    assert!((flow["fraction"].as_f64().expect("fraction") - p_old["a"] * p_new["b"]).abs() < 1e-12);
    // The keys, each looked up under both secrets, move about as expected
    // (30,000 keys: a standard error of 0.3 %).
    let counted = doc["keys"]["moved"].as_f64().expect("moved") / 30_000.0;
    assert!((counted - moved).abs() < 0.015, "{counted} vs {moved}");
    let text = ringwise(&["plan", "--from", &old, "--to", &new], b"");
    assert_success(&text);
    let words = stdout(&text);
    assert!(words.contains("hash siphash, secret changed"), "{words}");
    assert!(words.contains("every key is rehashed"), "{words}");
    for out in [&out, &text] {
        for secret in secrets {
            assert!(!stdout(out).contains(secret) && !stderr(out).contains(secret));
        }
    }
    // Another hash altogether is priced the same way.
    let md5 = dir.write("md5.toml", &format!("hash = \"md5\"\n{nodes}"));
    let out = ringwise(&["plan", "--from", &md5, "--to", &old], b"");
    assert_success(&out);
    assert!(
        stdout(&out).contains("hash md5 -> siphash"),
        "{}",
        stdout(&out)
    );
}
