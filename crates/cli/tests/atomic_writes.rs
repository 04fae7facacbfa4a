//! Files, secrets and write errors, end to end on the binary:
//!
//! - every file ringwise writes (`plan --write` and `--svg`, `inspect
//!   --svg`, `man --dir`, `simulate --plot`) is replaced atomically: on a
//!   real full filesystem (a 64 KiB tmpfs, mounted in a private mount
//!   namespace with `unshare -m` when the tests run as root; skipped with a
//!   message otherwise) the command exits 74 with one line naming the file,
//!   the target is byte for byte what it was and no temporary is left;
//! - a file holding a siphash secret is created 0600 (or with the source's
//!   stricter mode), any other file keeps its mode or gets `0666 & !umask`;
//! - `config` masks the secret unless `--show-secret`;
//! - help, `--version`, completions and man pages are output like any
//!   other: written to a full device they fail with 74;
//! - an error that wraps a message names its place once.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::support::{TempDir, cluster, names, ringwise, stderr, stdout};

const SECRET: &str = "00112233445566778899aabbccddeeff";

/// Whether this process runs as root (uid 0), from /proc/self/status.
fn root() -> bool {
    fs::read_to_string("/proc/self/status").is_ok_and(|status| {
        status
            .lines()
            .find(|l| l.starts_with("Uid:"))
            .and_then(|l| l.split_whitespace().nth(1))
            == Some("0")
    })
}

/// What a command left on a full tmpfs.
struct Full {
    code: Option<i32>,
    stderr: String,
    /// The tmpfs' files after the run (the filler removed), copied out.
    after: PathBuf,
    _dir: TempDir,
}

/// Runs `ringwise ARGS` in a directory that is a fresh 64 KiB tmpfs holding
/// the files of `seed` (relative paths; directories made as needed),
/// filled up so that at most `free_pages` 4 KiB pages are left. The mount
/// lives in a private mount namespace (`unshare -m`): it vanishes with the
/// shell, even when a test fails, and nobody else sees it. `None` (with a
/// message) when not root or the namespace or mount is refused.
fn on_full_tmpfs(
    tag: &str,
    free_pages: u32,
    seed: &[(&str, &[u8])],
    args: &[&str],
) -> Option<Full> {
    if !root() {
        println!("skipped: mounting a small tmpfs needs root (run the tests as root to run it)");
        return None;
    }
    let dir = TempDir::create(&format!("full-device-{tag}"));
    let (mount, seeds, after) = (
        dir.path().join("mnt"),
        dir.path().join("seed"),
        dir.path().join("after"),
    );
    for path in [&mount, &seeds, &after] {
        fs::create_dir_all(path).expect("dirs");
    }
    for (name, bytes) in seed {
        let path = seeds.join(name);
        fs::create_dir_all(path.parent().expect("parent")).expect("seed dir");
        fs::write(&path, bytes).expect("seed file");
    }
    let script = r#"
        m=$1; out=$2; free=$3; shift 3
        mount -t tmpfs -o size=64k tmpfs "$m" || exit 90
        : > "$out/mounted"
        cp -a "$out/seed/." "$m/" || exit 91
        dd if=/dev/zero of="$m/.filler" bs=4096 2>/dev/null
        truncate -s "-$((free * 4096))" "$m/.filler" || exit 92
        cd "$m" || exit 93
        "$@" > /dev/null 2> "$out/stderr"
        echo $? > "$out/code"
        rm -f "$m/.filler"
        cp -a "$m/." "$out/after/"
    "#;
    let run = Command::new("unshare")
        .args(["-m", "sh", "-c", script, "sh"])
        .arg(&mount)
        .arg(dir.path())
        .arg(free_pages.to_string())
        .arg(env!("CARGO_BIN_EXE_ringwise"))
        .args(args)
        .stdin(Stdio::null())
        .output();
    let mounted = dir.path().join("mounted").exists();
    match run {
        Ok(run) if mounted && run.status.success() => {}
        Ok(run) if !mounted => {
            println!(
                "skipped: unshare -m / mount -t tmpfs refused here ({}): {}",
                run.status,
                String::from_utf8_lossy(&run.stderr).trim()
            );
            return None;
        }
        Ok(run) => panic!(
            "the tmpfs script failed ({}): {}",
            run.status,
            String::from_utf8_lossy(&run.stderr)
        ),
        Err(e) => {
            println!("skipped: cannot run unshare: {e}");
            return None;
        }
    }
    let code = fs::read_to_string(dir.path().join("code")).expect("code");
    Some(Full {
        code: code.trim().parse().ok(),
        stderr: fs::read_to_string(dir.path().join("stderr")).expect("stderr"),
        after: after.clone(),
        _dir: dir,
    })
}

/// Every file under `dir`, relative, sorted.
fn listing(dir: &Path) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        for entry in fs::read_dir(dir).expect("read dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                let relative = path.strip_prefix(root).expect("under root");
                out.push(relative.to_string_lossy().into_owned());
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

/// The run failed with 74 and one line naming `file`, the disk's reason
/// and that the file is as it was; every seeded file is byte for byte
/// what it was and nothing else is left (no temporary).
#[track_caller]
fn assert_untouched(full: &Full, seed: &[(&str, &[u8])], file: &str) {
    assert_eq!(full.code, Some(74), "{}", full.stderr);
    let message = full.stderr.trim_end();
    assert_eq!(message.lines().count(), 1, "one line: {message}");
    assert!(
        message.contains(&format!("cannot write {file}"))
            && message.contains("no space left on device")
            && message.ends_with(&format!("{file} is unchanged")),
        "{message}"
    );
    let mut expected: Vec<String> = seed.iter().map(|(n, _)| (*n).to_owned()).collect();
    expected.sort();
    assert_eq!(listing(&full.after), expected, "no temporary is left");
    for (name, bytes) in seed {
        let now = fs::read(full.after.join(name)).expect("seeded file");
        assert!(now == *bytes, "{name} changed on a full disk");
    }
}

/// The reproduction that once failed: `--write` naming the `--from` file
/// itself, on a full filesystem, with a target larger than the file (150
/// nodes added): the in-place write truncated it and left a shorter valid
/// file. With no page free and with one free (part of the new file fits).
#[test]
fn plan_write_on_a_full_filesystem_leaves_the_cluster_file_untouched() {
    let from = cluster("ring", &names(156));
    let added: Vec<String> = (0..150).map(|i| format!("--add=extra-{i}")).collect();
    let mut args = vec!["plan", "--from", "c.toml", "--write", "c.toml"];
    args.extend(added.iter().map(String::as_str));
    let seed: [(&str, &[u8]); 1] = [("c.toml", from.as_bytes())];
    for free in [0, 1] {
        let Some(full) = on_full_tmpfs(&format!("plan-write-{free}"), free, &seed, &args) else {
            return;
        };
        assert_untouched(&full, &seed, "c.toml");
    }
    // The same command with room writes the whole target, which lookups
    // then read (the test above is not passing for want of a target).
    let dir = TempDir::create("plan-write-room");
    let path = dir.write("c.toml", &from);
    let mut args = vec!["plan", "--from", &path, "--write", &path];
    args.extend(added.iter().map(String::as_str));
    let written = ringwise(&args, b"");
    assert!(written.status.success(), "{}", stderr(&written));
    let inspect = ringwise(&["inspect", "--cluster", &path, "--format", "json"], b"");
    let inspect: serde_json::Value = serde_json::from_str(&stdout(&inspect)).expect("JSON");
    assert_eq!(inspect["nodes"].as_array().map(Vec::len), Some(306));
}

/// The siblings of `--write`: every other file ringwise writes, over an
/// existing file on a full filesystem.
#[test]
fn every_written_file_on_a_full_filesystem_is_left_as_it_was() {
    let from = cluster("ring", &names(40));
    let old = b"<svg>the old picture</svg>".as_slice();
    let cases: [(&str, &str, Vec<&str>); 4] = [
        (
            "plan-svg",
            "moved.svg",
            vec![
                "plan",
                "--from",
                "c.toml",
                "--add",
                "x",
                "--svg",
                "moved.svg",
            ],
        ),
        (
            "inspect-svg",
            "shares.svg",
            vec!["inspect", "--cluster", "c.toml", "--svg", "shares.svg"],
        ),
        ("man-dir", "man/ringwise.1", vec!["man", "--dir", "man"]),
        (
            "simulate-plot",
            "plots/spread.svg",
            vec![
                "simulate", "--keys", "1000", "--vnodes", "10", "--plot", "plots",
            ],
        ),
    ];
    for (tag, file, args) in &cases {
        let seed: [(&str, &[u8]); 2] = [("c.toml", from.as_bytes()), (file, old)];
        let Some(full) = on_full_tmpfs(tag, 0, &seed, args) else {
            return;
        };
        assert_untouched(&full, &seed, file);
    }
}

fn mode(path: &Path) -> u32 {
    fs::metadata(path).expect("metadata").permissions().mode() & 0o777
}

/// `ringwise ARGS` under `umask`.
fn with_umask(umask: &str, args: &[&str]) -> Output {
    let output = Command::new("sh")
        .args(["-c", &format!("umask {umask} && exec \"$0\" \"$@\"")])
        .arg(env!("CARGO_BIN_EXE_ringwise"))
        .args(args)
        .output()
        .expect("sh runs");
    assert!(output.status.success(), "{}", stderr(&output));
    output
}

/// A file holding a secret is 0600, or the source's mode when stricter,
/// whatever the umask and whatever the file it replaces had; a file
/// without one keeps the mode of the file it replaces, or gets 0666 &
/// !umask when new.
#[test]
fn a_file_holding_a_secret_is_created_0600() {
    let dir = TempDir::create("file-modes");
    let secret = format!(
        "algorithm = \"ring\"\nhash = \"siphash\"\nsecret = \"{SECRET}\"\n{}",
        cluster("ring", &names(3)).trim_start_matches("algorithm = \"ring\"\n")
    );
    let from = dir.write("from.toml", &secret);
    let to = dir.path().join("new.toml");
    let to = to.to_str().expect("utf-8");
    let write = |umask: &str| {
        with_umask(
            umask,
            &["plan", "--from", &from, "--add", "x", "--write", to],
        )
    };
    for (source, umask, expected) in [
        (0o600, "022", 0o600),
        (0o644, "000", 0o600),
        (0o400, "022", 0o400),
        (0o640, "022", 0o600),
    ] {
        let _ = fs::remove_file(to);
        fs::set_permissions(&from, fs::Permissions::from_mode(source)).expect("chmod");
        write(umask);
        assert_eq!(
            mode(Path::new(to)),
            expected,
            "source {source:o}, umask {umask}"
        );
        assert!(fs::read_to_string(to).expect("written").contains(SECRET));
        // Replacing a readable file does not keep its mode: the secret is
        // what decides.
        fs::set_permissions(to, fs::Permissions::from_mode(0o644)).expect("chmod");
        write(umask);
        assert_eq!(mode(Path::new(to)), expected, "over a 0644 file");
    }
    // No secret: a new file is 0666 & !umask, a replaced one keeps its mode.
    let plain = dir.write("plain.toml", &cluster("ring", &names(3)));
    let out = dir.path().join("plain-new.toml");
    let out = out.to_str().expect("utf-8");
    for (umask, expected) in [("022", 0o644), ("077", 0o600), ("002", 0o664)] {
        let _ = fs::remove_file(out);
        with_umask(
            umask,
            &["plan", "--from", &plain, "--add", "x", "--write", out],
        );
        assert_eq!(mode(Path::new(out)), expected, "umask {umask}");
    }
    fs::set_permissions(out, fs::Permissions::from_mode(0o640)).expect("chmod");
    with_umask(
        "022",
        &["plan", "--from", &plain, "--add", "y", "--write", out],
    );
    assert_eq!(
        mode(Path::new(out)),
        0o640,
        "a replaced file keeps its mode"
    );
    // The same for a chart (no secret in a picture).
    let svg = dir.path().join("c.svg");
    let svg = svg.to_str().expect("utf-8");
    with_umask("027", &["inspect", "--cluster", &plain, "--svg", svg]);
    assert_eq!(mode(Path::new(svg)), 0o640);
    let leftovers: Vec<String> = listing(dir.path())
        .into_iter()
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "temporaries left: {leftovers:?}");
}

/// `config` shows the secret only with `--show-secret`: after `--set`,
/// when read back, in its JSON; a secret of 32 decimal digits is stored as
/// text (it read as a JSON number, refused with its value in the message).
#[test]
fn config_masks_the_secret_unless_show_secret() {
    let etcd = crate::etcd::server::Etcd::single();
    let endpoints = etcd.endpoints();
    let base = ["--etcd", endpoints.as_str(), "--prefix", "/secret"];
    let run = |args: &[&str]| ringwise(&[args, &base].concat(), b"");
    let digits = "12345678901234567890123456789012";
    for secret in [SECRET, digits] {
        let set = run(&[
            "config",
            "--set",
            "hash=siphash",
            "--set",
            &format!("secret={secret}"),
        ]);
        assert!(set.status.success(), "{}", stderr(&set));
        let shown = run(&["config"]);
        let revealed = run(&["config", "--show-secret"]);
        for output in [&set, &shown] {
            let text = format!("{}{}", stdout(output), stderr(output));
            assert!(!text.contains(secret), "the secret is shown: {text}");
            let json: serde_json::Value = serde_json::from_str(&stdout(output)).expect("JSON");
            assert_eq!(
                json["secret"], "<hidden: 32 hex digits; --show-secret shows it>",
                "{json}"
            );
            assert_eq!(json["hash"], "siphash");
        }
        let json: serde_json::Value = serde_json::from_str(&stdout(&revealed)).expect("JSON");
        assert_eq!(json["secret"], secret, "--show-secret shows it as stored");
    }
    let help = ringwise(&["config", "--help"], b"");
    assert!(stdout(&help).contains("--show-secret"));
}

/// Help, `--version`, completions and man pages are the command's output:
/// on a full device they fail like every other output (clap's own exit
/// ignored the error and exited 0), with 74 and one line.
#[test]
fn help_on_a_full_device_exits_74() {
    let Ok(_) = fs::metadata("/dev/full") else {
        println!("skipped: no /dev/full here");
        return;
    };
    let dir = TempDir::create("dev-full");
    let file = dir.write("c.toml", &cluster("ring", &names(3)));
    let commands: Vec<Vec<&str>> = vec![
        vec!["--help"],
        vec!["-h"],
        vec!["--version"],
        vec!["-V"],
        vec!["help"],
        vec!["help", "plan"],
        vec!["plan", "--help"],
        vec!["lookup", "-h"],
        vec!["completions", "bash"],
        vec!["completions", "zsh"],
        vec!["man"],
        vec!["man", "lookup"],
        vec!["lookup", "--cluster", &file, "k"],
        vec!["inspect", "--cluster", &file],
        vec!["plan", "--from", &file, "--add", "x"],
        vec!["token", "k"],
        vec!["simulate", "--keys", "1000", "--vnodes", "10"],
    ];
    for args in commands {
        let full = fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .expect("/dev/full");
        let output = Command::new(env!("CARGO_BIN_EXE_ringwise"))
            .args(&args)
            .stdin(Stdio::null())
            .stdout(full)
            .stderr(Stdio::piped())
            .output()
            .expect("ringwise runs");
        let message = stderr(&output);
        assert_eq!(output.status.code(), Some(74), "{args:?}: {message}");
        assert_eq!(message.trim_end().lines().count(), 1, "{args:?}: {message}");
        assert!(
            message.to_lowercase().contains("no space left on device"),
            "{args:?}: {message}"
        );
    }
    // A usage error still goes to stderr with 2, output or not.
    let usage = ringwise(&["--no-such-option"], b"");
    assert_eq!(usage.status.code(), Some(2));
}

/// An error that wraps a message names its place once: `plan --keys`'s
/// "pk.txt line 3: line 3: ..." and its siblings (a bad size, a key over
/// the cap with and without a size, a line over the cap).
#[test]
fn plan_keys_errors_name_the_line_once() {
    let dir = TempDir::create("keys-line");
    let from = dir.write("c.toml", &cluster("ring", &names(3)));
    let long = "k".repeat((1 << 20) + 1);
    let cases = [
        "a\nb\nc\tnot-a-size\n".to_owned(),
        format!("a\nb\n{long}\n"),
        format!("a\nb\n{long}\t12\n"),
        format!("a\nb\n{long}{long}\n"),
    ];
    for keys in &cases {
        let path = dir.write("pk.txt", keys);
        let output = ringwise(
            &["plan", "--from", &from, "--add", "x", "--keys", &path],
            b"",
        );
        let message = stderr(&output);
        assert_eq!(output.status.code(), Some(65), "{message}");
        assert!(message.contains("pk.txt line 3: "), "{message}");
        assert_eq!(message.matches("line 3").count(), 1, "{message}");
    }
}
