//! What holds keys holds a bounded number of bytes,
//! and large outputs stream. Each test is named after what it pins; the
//! memory tests run the real binary under an address-space limit
//! (`ulimit -v`), where an unbounded hold aborts instead of exhausting the
//! machine, so the test fails on its exit status.

use std::io::Write;
use std::process::{Command, Stdio};

use crate::support::{assert_success, ringwise, stderr, stdout};

/// Runs `ringwise ARGS` under an address-space limit of `kib` KiB, fed
/// `lines` keys of `len` bytes each (written by a thread, so ringwise may
/// answer as it reads), stdout discarded. Returns the exit status and
/// stderr.
fn fed_under_limit(kib: u32, args: &[&str], lines: usize, len: usize) -> (Option<i32>, String) {
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {kib} && exec \"$0\" \"$@\""))
        .arg(env!("CARGO_BIN_EXE_ringwise"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("sh runs");
    let mut input = child.stdin.take().expect("piped stdin");
    let writer = std::thread::spawn(move || {
        let mut line = vec![b'k'; len];
        line.push(b'\n');
        for i in 0..lines {
            // Distinct keys: the number in the first bytes.
            let tag = format!("{i:08}");
            line[..8].copy_from_slice(tag.as_bytes());
            if input.write_all(&line).is_err() {
                return; // ringwise stopped reading: its status says why
            }
        }
    });
    let output = child.wait_with_output().expect("ringwise exits");
    writer.join().expect("the writer");
    (output.status.code(), stderr(&output))
}

/// `--epsilon` capped keys by count only, so 3,000 keys of 1 MiB
/// aborted under a 2 GB address-space limit. It now holds at most
/// `--max-key-bytes` (1 GiB by default) and refuses more with exit 65 and
/// the way out; every growth is reserved, so a tighter limit is exit 65
/// too, never an abort.
#[test]
fn epsilon_holds_at_most_max_key_bytes_of_keys() {
    let args = [
        "lookup",
        "--nodes",
        "a,b,c",
        "--hash",
        "xxh3",
        "--epsilon",
        "0.25",
    ];
    let (code, err) = fed_under_limit(2_000_000, &args, 3000, 1 << 20);
    assert_eq!(code, Some(65), "{err}");
    assert!(err.contains("--max-key-bytes"), "{err}");
    // A limit below the default hold: the reservation fails cleanly.
    let (code, err) = fed_under_limit(600_000, &args, 3000, 1 << 20);
    assert_eq!(code, Some(65), "{err}");
    assert!(
        err.contains("out of memory") || err.contains("--max-key-bytes"),
        "{err}"
    );
    // The byte cap counts bytes exactly: 3 keys of 3 bytes fit in 9.
    let keys = b"k01\nk02\nk03\n";
    let base = ["lookup", "--nodes", "a,b", "--epsilon", "0.5"];
    let out = ringwise(&[&base[..], &["--max-key-bytes", "9"]].concat(), keys);
    assert_success(&out);
    assert_eq!(stdout(&out).lines().count(), 3);
    let out = ringwise(&[&base[..], &["--max-key-bytes", "8"]].concat(), keys);
    assert_eq!(out.status.code(), Some(65), "{}", stderr(&out));
    assert!(stderr(&out).contains("passed at key 3"), "{}", stderr(&out));
    assert!(stdout(&out).is_empty(), "nothing placed");
}

/// The same in the streamed path: a block held up to 1,024 keys, and
/// each line buffer kept the size of the longest key it ever read, so 1,024
/// keys of 1 MiB held 1–2 GiB. A block now also ends at 1 MiB of keys and a
/// grown buffer is given back: 600 keys of 1 MiB pass under a 300 MB limit.
#[test]
fn lookup_streams_long_keys_in_bounded_memory() {
    let args = ["lookup", "--nodes", "a,b,c", "--hash", "xxh3"];
    let (code, err) = fed_under_limit(300_000, &args, 600, 1 << 20);
    assert_eq!(code, Some(0), "{err}");
    let args = ["token"];
    let (code, err) = fed_under_limit(300_000, &args, 600, 1 << 20);
    assert_eq!(code, Some(0), "{err}");
}

/// `inspect --points --format json` built the whole document in
/// memory (about 190 bytes a point: 2.7 GB for 16M points, an abort under a
/// 2.5 GB limit) while the text form streamed. The points are now
/// serialized as they are read: 1,000,000 points (10,000 nodes × 100
/// vnodes) pass under a 130 MB address-space limit, where the document
/// alone took 189 MB, and the output is the same document.
#[test]
fn inspect_points_json_streams_the_ring() {
    let dir = crate::support::TempDir::create("inspect-points");
    let mut file = String::from("hash = \"xxh3\"\nvnodes = 100\n");
    for i in 0..10_000 {
        file += &format!("[[nodes]]\nname = \"n{i}\"\n");
    }
    let cluster = dir.write("c.toml", &file);
    let json = dir.path().join("points.json");
    let status = Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 130000 && exec \"$0\" \"$@\" > \"$OUT\"")
        .arg(env!("CARGO_BIN_EXE_ringwise"))
        .args([
            "inspect",
            "--cluster",
            &cluster,
            "--points",
            "--format",
            "json",
        ])
        .env("OUT", &json)
        .status()
        .expect("sh runs");
    assert_eq!(status.code(), Some(0));
    let text = std::fs::read_to_string(&json).expect("the output");
    let doc: serde_json::Value = serde_json::from_str(&text).expect("one JSON document");
    let ring = doc["ring"].as_array().expect("ring");
    assert_eq!(ring.len(), 1_000_000);
    assert_eq!(doc["points"], 1_000_000);
    assert_eq!(doc["nodes"].as_array().map(Vec::len), Some(10_000));
    // Ring order: points ascend, each names a node.
    let point = |v: &serde_json::Value| v.as_str().and_then(|t| t.parse::<u64>().ok());
    let first = point(&ring[0][0]).expect("a point");
    let last = point(&ring[ring.len() - 1][0]).expect("a point");
    assert!(first <= last);
    assert!(ring[0][1].as_str().is_some_and(|n| n.starts_with('n')));
    dir.remove();
}

/// Memento's lookups slow down with removed buckets (by how many,
/// depends on their order), and `plan` over RELIABILITY's own file of 2^20
/// removals ran for over 10 minutes. It now estimates the work of its
/// sampled lookups first (`Memento::expected_steps`) and refuses above
/// 2^32 steps with the estimate (exit 65); `lookup` still answers; a few
/// removals plan as before.
#[test]
fn plan_refuses_up_front_what_it_cannot_do_quickly() {
    let dir = crate::support::TempDir::create("plan-memento");
    // 4,096 removals in descending order behind one working node: about
    // m steps of a binary search each per lookup.
    let removed: Vec<String> = (2..=4097).rev().map(|b| b.to_string()).collect();
    let file = format!(
        "algorithm = \"memento\"\nhash = \"xxh3\"\nremoved = [1, {}]\n[[nodes]]\nname = \"a\"\n",
        removed.join(", ")
    );
    let slow = dir.write("slow.toml", &file);
    let out = ringwise(&["plan", "--from", &slow, "--add", "b"], b"");
    assert_eq!(out.status.code(), Some(65), "{}", stderr(&out));
    for part in ["4097 removed buckets", "steps per lookup", "over the limit"] {
        assert!(stderr(&out).contains(part), "{part}: {}", stderr(&out));
    }
    assert!(stdout(&out).is_empty());
    let out = ringwise(&["lookup", "--cluster", &slow, "k"], b"");
    assert_success(&out);
    assert_eq!(stdout(&out), "k\ta\n");
    let fast = dir.write(
        "fast.toml",
        "algorithm = \"memento\"\nhash = \"xxh3\"\nremoved = [1, 3]\n[[nodes]]\nname = \"a\"\n\
         [[nodes]]\nname = \"b\"\n[[nodes]]\nname = \"c\"\n",
    );
    let out = ringwise(&["plan", "--from", &fast, "--add", "d"], b"");
    assert_success(&out);
    assert!(stdout(&out).contains("moved:"), "{}", stdout(&out));
}
