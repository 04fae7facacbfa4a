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
