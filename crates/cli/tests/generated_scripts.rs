//! Scripts that `ringwise plan` prints run nothing they were not meant
//! to: every word taken from a cluster description is a validated value
//! or quoted, so a crafted address or node id is data when the operator
//! runs the script.

use std::process::Command;

use crate::support::{TempDir, ringwise, stdout};

/// The script part of a text plan (from its `#!/bin/sh` line).
fn script(plan: &str) -> Option<&str> {
    plan.find("#!/bin/sh").map(|at| &plan[at..])
}

/// The text of `ringwise plan` from a saved `CLUSTER NODES` with `added`.
fn plan_adding(from: &str, added: &str) -> String {
    let out = ringwise(
        &[
            "plan",
            "--from",
            from,
            "--cluster-format",
            "redis-cluster",
            "--add",
            added,
        ],
        b"",
    );
    stdout(&out)
}

/// Runs `script` with `sh` in `dir`, with a PATH where `redis-cli` is a
/// stub that fails: any command the script runs before it would have
/// reached Redis still runs.
fn run(dir: &TempDir, script: &str) {
    let bin = dir.path().join("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    let stub = bin.join("redis-cli");
    std::fs::write(&stub, "#!/bin/sh\nexit 1\n").expect("stub");
    Command::new("chmod")
        .arg("+x")
        .arg(&stub)
        .status()
        .expect("chmod");
    let path = format!("{}:/usr/bin:/bin", bin.display());
    let file = dir.write("plan.sh", script);
    // The script fails at its first redis-cli: only what runs before
    // that matters here.
    let _ = Command::new("sh")
        .arg(&file)
        .current_dir(dir.path())
        .env("PATH", path)
        .output()
        .expect("sh");
}

/// The first master of a saved `CLUSTER NODES` serves no slots, so it is
/// in no placement; it used to become the script's `seed=` word unquoted.
#[test]
fn a_crafted_address_in_cluster_nodes_never_runs_as_a_command() {
    let dir = TempDir::create("script-address");
    let nodes = "\
0000000000000000000000000000000000000001 127.0.0.1$(touch${IFS}pwned-seed):7000@17000 master - 0 0 1 connected
0000000000000000000000000000000000000002 127.0.0.1:7001@17001 master - 0 0 2 connected 0-8191
0000000000000000000000000000000000000003 127.0.0.1:7002@17002 master - 0 0 3 connected 8192-16383
";
    let from = dir.write("nodes.txt", nodes);
    let text = plan_adding(&from, "127.0.0.1:7003");
    if let Some(script) = script(&text) {
        run(&dir, script);
    }
    assert!(
        !dir.path().join("pwned-seed").exists(),
        "the address ran as a command:\n{text}"
    );
}

/// A name the script cannot carry safely gets no script, and names that
/// it can are written as plain words.
#[test]
fn plan_scripts_quote_or_refuse_every_name() {
    let dir = TempDir::create("script-names");
    let nodes = "\
0000000000000000000000000000000000000002 127.0.0.1:7001@17001 master - 0 0 2 connected 0-8191
0000000000000000000000000000000000000003 127.0.0.1:7002@17002 master - 0 0 3 connected 8192-16383
";
    let from = dir.write("nodes.txt", nodes);
    for added in [
        "127.0.0.1:7003;touch${IFS}pwned-add",
        "-x:7003",
        "`touch pwned-tick`:7003",
    ] {
        let text = plan_adding(&from, added);
        if let Some(script) = script(&text) {
            run(&dir, script);
        }
        for file in ["pwned-add", "pwned-tick"] {
            assert!(!dir.path().join(file).exists(), "{added}:\n{text}");
        }
    }
    let text = plan_adding(&from, "127.0.0.1:7003");
    let script = script(&text).expect("a script for plain addresses");
    assert!(script.contains("seed=127.0.0.1:7001\n"), "{script}");
    assert!(
        script.contains("masters='127.0.0.1:7001 127.0.0.1:7002 127.0.0.1:7003'\n"),
        "{script}"
    );
}
