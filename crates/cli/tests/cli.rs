//! The `ringwise` binary end to end: output formats and every error path.

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn ringwise(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ringwise"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ringwise runs");
    child
        .stdin
        .take()
        .expect("piped stdin")
        .write_all(stdin)
        .expect("stdin written");
    child.wait_with_output().expect("ringwise exits")
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).expect("utf-8 output")
}

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
        serde_json::json!({"key": "user:42", "node": "cache-a"})
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
    let dir = std::env::temp_dir().join(format!("ringwise-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("cluster.toml");
    let toml = "hash = \"md5\"\nvnodes = 100\n[[nodes]]\nname = \"cache-c\"\n\
                [[nodes]]\nname = \"cache-a\"\n[[nodes]]\nname = \"cache-b\"\n";
    std::fs::write(&file, toml).expect("written");
    let path = file.to_str().expect("utf-8 path");
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
    std::fs::remove_dir_all(&dir).expect("cleaned");
}

/// Each bad input: its exit code, a message naming the problem, no stdout.
#[test]
fn bad_inputs_fail_cleanly() {
    let dir = std::env::temp_dir().join(format!("ringwise-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let malformed = dir.join("bad.toml");
    std::fs::write(&malformed, "[[nodes]\nname = \"a\"\n").expect("written");
    let malformed = malformed.to_str().expect("utf-8 path").to_owned();
    let cases: [(&[&str], i32, &str); 10] = [
        (&["lookup", "--nodes", "", "k"], 65, "empty"),
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
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {stderr}");
        assert!(
            stderr.contains(needle),
            "{args:?}: {stderr:?} lacks {needle:?}"
        );
        assert!(out.stdout.is_empty(), "{args:?} printed {:?}", out.stdout);
    }
    std::fs::remove_dir_all(&dir).expect("cleaned");
}

#[test]
fn slots_follow_redis_key_slots() {
    // a, b, c own [0, 5461), [5461, 10922), [10922, 16384): `foo` is slot
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
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
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
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
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
    let dir = std::env::temp_dir().join(format!("ringwise-eps-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("cluster.toml");
    let toml = "epsilon = 0.25\n[[nodes]]\nname = \"a\"\n[[nodes]]\nname = \"b\"\n\
                [[nodes]]\nname = \"c\"\n[[nodes]]\nname = \"d\"\n";
    std::fs::write(&file, toml).expect("written");
    let path = file.to_str().expect("utf-8 path");
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
    std::fs::remove_dir_all(&dir).expect("cleaned");
}
