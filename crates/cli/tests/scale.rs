//! Scale tests: every command's cost is the one its `--help` and
//! RELIABILITY.md state, checked by counting work, never by timing it.
//!
//! Work is the number of machine instructions the real binary executes,
//! counted by valgrind's cachegrind (`--cache-sim=no`: an exact count,
//! the same on a busy machine as on an idle one). Each test runs a command
//! at a small size n0, at n and at 4n, and takes the work of a size as its
//! count minus n0's (process start, argument parsing, the fixed part of a
//! build). Growing the size 4× must grow that work about 4× for a linear
//! cost: the bound is 4 × [`SLACK`], and an O(n²) cost gives about 16×.
//! Worked example (`plan --add` on jump, before `pinned` was linear): the
//! `Vec::contains` per node gave 0.96 G instructions above the base at
//! 2,000 nodes and 4.5 G at 8,000, and took 168 s at 200,000 nodes.
//!
//! Sizes are the smallest at which the measured term dominates the fixed
//! one, so that each run takes seconds under valgrind (about 30 times
//! slower than native); the caps themselves (2^20 nodes, 2^24 points,
//! `--max-keys`) are exercised natively by the tests RELIABILITY.md names
//! for them. valgrind is installed by `scripts/install-test-deps`.

use std::io::Write;
use std::process::{Command, Stdio};

use crate::support::TempDir;

/// The allowance above linear growth: 4× the size may cost up to 4 × 1.6
/// = 6.4× the work (a log factor, allocator and cache effects); quadratic
/// growth costs 16×.
const SLACK: f64 = 1.6;

/// The instructions `ringwise ARGS` executes with `stdin` as its input,
/// counted by cachegrind; panics unless it exits 0.
fn work(args: &[&str], stdin: &[u8]) -> u64 {
    counted(args, stdin, 0)
}

/// Like [`work`], for a run that must exit with `code`.
fn counted(args: &[&str], stdin: &[u8], code: i32) -> u64 {
    let mut child = Command::new("valgrind")
        .args([
            "--tool=cachegrind",
            "--cache-sim=no",
            "--cachegrind-out-file=/dev/null",
        ])
        .arg(env!("CARGO_BIN_EXE_ringwise"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("valgrind runs (scripts/install-test-deps installs it; never skipped)");
    let mut input = child.stdin.take().expect("piped stdin");
    let stdin = stdin.to_vec();
    // Written by a thread: ringwise answers as it reads.
    let writer = std::thread::spawn(move || input.write_all(&stdin));
    let output = child.wait_with_output().expect("valgrind exits");
    let _ = writer.join().expect("the writer");
    let err = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(code), "ringwise {args:?}: {err}");
    let refs = err
        .lines()
        .find_map(|line| {
            line.split_once("I   refs:")
                .map(|(_, n)| n.trim().replace(',', ""))
        })
        .unwrap_or_else(|| panic!("no instruction count in: {err}"));
    refs.parse().expect("a count")
}

/// Runs `run(size)` at `n0`, `n` and `4n` and asserts that the work above
/// `n0` grows at most [`SLACK`] times more than linear work would from n
/// to 4n, after checking that
/// the measured term dominates (it is at least the fixed part at 4n). Says
/// the figures, which RELIABILITY.md quotes.
#[track_caller]
fn assert_linear(what: &str, n0: usize, n: usize, run: impl Fn(usize) -> u64) {
    let base = run(n0);
    let (small, large) = (run(n) - base, run(4 * n) - base);
    let ratio = large as f64 / small as f64;
    // Linear work above n0 grows (4n − n0) / (n − n0) times: 4 when n0 is
    // small, more when it is not (the rehash test starts above 1,000 nodes).
    let linear = (4 * n - n0) as f64 / (n - n0) as f64;
    let square = |x: usize| (x as f64).powi(2);
    let quadratic = (square(4 * n) - square(n0)) / (square(n) - square(n0));
    println!(
        "scale: {what}: {small} instructions above n={n0} at n={n}, {large} at n={}: ×{ratio:.2}",
        4 * n
    );
    assert!(
        large > base,
        "{what}: the sizes are too small to measure: {large} above a base of {base}"
    );
    assert!(
        ratio <= linear * SLACK,
        "{what}: 4× the size cost {ratio:.2}× the work (linear is {linear:.2}×, quadratic about \
         {quadratic:.1}×)"
    );
}

/// A cluster file of `n` nodes `n0..` under `header`.
fn nodes_file(dir: &TempDir, name: &str, header: &str, n: usize) -> String {
    let mut text = String::from(header);
    for i in 0..n {
        text += &format!("[[nodes]]\nname = \"n{i}\"\n");
    }
    dir.write(name, &text)
}

/// `n` keys, one per line.
fn keys(n: usize) -> Vec<u8> {
    (0..n)
        .flat_map(|i| format!("user:{i}\n").into_bytes())
        .collect()
}

const RING: &str = "hash = \"xxh3\"\nvnodes = 4\n";
const JUMP: &str = "algorithm = \"jump\"\nhash = \"xxh3\"\n";

/// `lookup`: O(file + P) to read and build, then O(1) per key on a ring.
#[test]
fn lookup_is_linear_in_nodes_and_in_keys() {
    let dir = TempDir::create("scale-lookup");
    assert_linear("lookup, ring nodes", 10, 2_000, |n| {
        let file = nodes_file(&dir, &format!("r{n}.toml"), RING, n);
        work(&["lookup", "--cluster", &file, "k"], b"")
    });
    let file = nodes_file(&dir, "r100.toml", RING, 100);
    assert_linear("lookup, keys", 10, 10_000, |n| {
        work(&["lookup", "--cluster", &file], &keys(n))
    });
}

/// `token`: one Murmur3 per key.
#[test]
fn token_is_linear_in_keys() {
    assert_linear("token, keys", 10, 10_000, |n| work(&["token"], &keys(n)));
}

/// `inspect`: one build and exact shares from the arcs, O(P + N).
#[test]
fn inspect_is_linear_in_nodes() {
    let dir = TempDir::create("scale-inspect");
    assert_linear("inspect, ring nodes", 10, 2_000, |n| {
        let file = nodes_file(&dir, &format!("r{n}.toml"), RING, n);
        work(&["inspect", "--cluster", &file], b"")
    });
}

/// `plan --add/--remove/--reweight`: two builds and a diff, O(P) on a
/// ring; the new file is the old one pinned (a `Vec::contains` per node
/// made it O(N²) for every algorithm; jump's 2^20
/// sampled lookups would only hide the per-node term, so a ring measures it).
#[test]
fn plan_changes_are_linear_in_nodes() {
    let dir = TempDir::create("scale-plan");
    for (change, value) in [
        ("--add", "extra"),
        ("--remove", "n1"),
        ("--reweight", "n1=2"),
    ] {
        assert_linear(&format!("plan {change}, ring nodes"), 10, 4_000, |n| {
            let file = nodes_file(&dir, &format!("r{n}.toml"), RING, n);
            let to = dir.path().join(format!("r{n}-new.toml"));
            let to = to.to_str().expect("utf-8");
            work(
                &["plan", "--from", &file, change, value, "--write", to],
                b"",
            )
        });
    }
}

/// A rehash plan (another hash on `--to`) prices every pair of nodes, so
/// it is refused above `MAX_PAIRS` pairs: before its refusal it spends
/// O(N log N), not O(N²) (50,000 nodes once took 40 s to be refused).
#[test]
fn a_rehash_plan_is_refused_after_linear_work() {
    let dir = TempDir::create("scale-rehash");
    assert_linear("plan rehash refusal, ring nodes", 1_100, 2_500, |n| {
        let from = nodes_file(&dir, &format!("a{n}.toml"), RING, n);
        let to = nodes_file(
            &dir,
            &format!("b{n}.toml"),
            "hash = \"md5\"\nvnodes = 4\n",
            n,
        );
        // Over the pair limit: refused with exit 2 (the test is of the
        // work before the refusal).
        counted(&["plan", "--from", &from, "--to", &to], b"", 2)
    });
}

/// `plan --keys FILE`: two lookups per key.
#[test]
fn plan_keys_is_linear_in_keys() {
    let dir = TempDir::create("scale-plan-keys");
    let from = nodes_file(&dir, "from.toml", RING, 50);
    assert_linear("plan --keys, keys", 10, 10_000, |n| {
        let path = dir.path().join(format!("k{n}.txt"));
        std::fs::write(&path, keys(n)).expect("written");
        let path = path.to_str().expect("utf-8");
        work(
            &["plan", "--from", &from, "--add", "extra", "--keys", path],
            b"",
        )
    });
}

/// `lookup --epsilon` with one hot key: O(K · (1 + spills) + N), each
/// copy of the key going on from where the previous one stopped (100,000
/// copies over 10,000 nodes took 29 s on ring, 120 s on
/// jump: every copy restarted its walk, O(K · N)). Keys and nodes grow
/// together (K = 10 N), so O(K · N) would cost 16× for 4×.
#[test]
fn bounded_loads_with_a_hot_key_are_linear() {
    let dir = TempDir::create("scale-epsilon");
    for (algorithm, header) in [("ring", RING), ("jump", JUMP)] {
        let what = format!("lookup --epsilon, one hot key, {algorithm}, K = 10 N");
        assert_linear(&what, 10, 200, |n| {
            let file = nodes_file(&dir, &format!("{algorithm}{n}.toml"), header, n);
            let hot: Vec<u8> = b"hot\n".repeat(10 * n);
            work(&["lookup", "--cluster", &file, "--epsilon", "0.25"], &hot)
        });
    }
}

/// `simulate`: O(K) lookups per placement.
#[test]
fn simulate_is_linear_in_keys() {
    assert_linear("simulate, keys", 1_000, 10_000, |n| {
        let keys = n.to_string();
        work(
            &[
                "simulate",
                "--keys",
                &keys,
                "--experiments",
                "single",
                "--vnodes",
                "100",
            ],
            b"",
        )
    });
}
