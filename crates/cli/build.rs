//! Sets `RINGWISE_GIT_COMMIT` for `ringwise --version`: the commit the
//! binary was built from (`git rev-parse --short=12 HEAD`), or, outside a
//! git checkout or without git, `RINGWISE_GIT_COMMIT` from the environment
//! (a packager's) or "unknown".
//!
//! The script runs again when HEAD moves (a commit, a checkout, a reset):
//! it watches the worktree's HEAD, the branch it names and packed-refs. A
//! work tree with uncommitted changes still shows the commit it starts from.

use std::path::PathBuf;
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    (out.status.success() && !text.trim().is_empty()).then(|| text.trim().to_owned())
}

fn main() {
    println!("cargo:rerun-if-env-changed=RINGWISE_GIT_COMMIT");
    let commit = git(&["rev-parse", "--short=12", "HEAD"]);
    if commit.is_some() {
        watch_head();
    }
    let commit = commit
        .or_else(|| std::env::var("RINGWISE_GIT_COMMIT").ok())
        .unwrap_or_else(|| "unknown".to_owned());
    println!("cargo:rustc-env=RINGWISE_GIT_COMMIT={commit}");
}

/// Reruns this script when HEAD or the ref it points at changes. Only
/// files that exist are named: cargo reruns a script on every build while
/// a path it watches is missing (a branch kept only in packed-refs has no
/// file of its own).
fn watch_head() {
    let path = |args: &[&str]| git(args).map(PathBuf::from);
    let mut watched = Vec::new();
    watched.extend(path(&[
        "rev-parse",
        "--path-format=absolute",
        "--git-path",
        "HEAD",
    ]));
    if let Some(common) = path(&["rev-parse", "--path-format=absolute", "--git-common-dir"]) {
        watched.push(common.join("packed-refs"));
        if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
            watched.push(common.join(branch));
        }
    }
    for file in watched.iter().filter(|file| file.exists()) {
        println!("cargo:rerun-if-changed={}", file.display());
    }
}
