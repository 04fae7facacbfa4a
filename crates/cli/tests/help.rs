//! What a user finds before reading any docs: `--help` (every subcommand on
//! one line), `--version` (the version and the commit), and a man page per
//! subcommand (`ringwise man`, `ringwise man --dir DIR`).

use std::collections::BTreeSet;
use std::process::Command;

use crate::support::{TempDir, assert_success, ringwise, stdout};

/// The `Commands:` section of `ringwise --help`: (name, one-line summary).
fn subcommands() -> Vec<(String, String)> {
    let help = stdout(&ringwise(&["--help"], b""));
    let section = help
        .split("Commands:\n")
        .nth(1)
        .expect("--help has a Commands section");
    section
        .lines()
        .take_while(|line| line.starts_with("  "))
        .map(|line| {
            let (name, summary) = line.trim().split_once(' ').expect("name and summary");
            (name.to_owned(), summary.trim().to_owned())
        })
        .filter(|(name, _)| name != "help")
        .collect()
}

#[test]
fn help_lists_every_subcommand_on_one_line() {
    let listed = subcommands();
    let names: BTreeSet<&str> = listed.iter().map(|(n, _)| n.as_str()).collect();
    for expected in [
        "lookup",
        "inspect",
        "plan",
        "simulate",
        "token",
        "join",
        "watch",
        "config",
        "completions",
        "man",
    ] {
        assert!(
            names.contains(expected),
            "--help lacks {expected}: {names:?}"
        );
    }
    for (name, summary) in &listed {
        // 13 columns of name, then the summary: one terminal line.
        assert!(
            summary.len() <= 80 - 15,
            "`{name}`'s summary is {} columns: {summary:?}",
            summary.len()
        );
        // The same sentence opens the subcommand's own --help.
        let own = stdout(&ringwise(&[name, "--help"], b""));
        let first = own.lines().next().unwrap_or_default();
        assert_eq!(first.trim_end_matches('.'), summary, "{name} --help");
    }
}

#[test]
fn version_names_the_version_and_the_commit() {
    let out = ringwise(&["--version"], b"");
    assert_success(&out);
    let head = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned());
    // Built from a git checkout, the commit is its HEAD; without git the
    // build says so.
    let commit = head.unwrap_or_else(|| "unknown".to_owned());
    let want = format!("ringwise {} (commit {commit})\n", env!("CARGO_PKG_VERSION"));
    assert_eq!(stdout(&out), want);
}

#[test]
fn a_man_page_for_every_subcommand() {
    let dir = TempDir::create("man");
    let pages = dir.path().join("man1");
    // `--dir` makes the directory when it is missing.
    assert_success(&ringwise(
        &["man", "--dir", pages.to_str().expect("a UTF-8 path")],
        b"",
    ));
    let written: BTreeSet<String> = std::fs::read_dir(&pages)
        .expect("the pages' directory")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    let mut expected: BTreeSet<String> = subcommands()
        .iter()
        .map(|(name, _)| format!("ringwise-{name}.1"))
        .collect();
    expected.insert("ringwise.1".to_owned());
    // No temporary file is left beside the pages.
    assert_eq!(written, expected);

    let top = std::fs::read_to_string(pages.join("ringwise.1")).expect("ringwise.1");
    for (name, summary) in subcommands() {
        let file = format!("ringwise-{name}.1");
        let page = std::fs::read_to_string(pages.join(&file)).expect("page");
        assert!(page.contains(&format!(".TH ringwise-{name} 1 ")), "{file}");
        // NAME: the page's name and the summary --help shows (roff
        // escapes `-` and `'`).
        let name_line = format!("ringwise\\-{name} \\- {}", roff(&summary));
        assert!(page.contains(&name_line), "{file} lacks {name_line:?}");
        // The usage is the command a user types.
        assert!(page.contains(&format!("\\fBringwise {name}\\fR")), "{file}");
        // The top page refers to it, and `ringwise man NAME` prints it.
        assert!(top.contains(&format!("ringwise\\-{name}(1)")), "ringwise.1");
        let printed = ringwise(&["man", &name], b"");
        assert_success(&printed);
        assert_eq!(stdout(&printed), page, "ringwise man {name}");
    }
    // Every page the top page names exists.
    for reference in top.split("ringwise\\-").skip(1) {
        let Some((name, _)) = reference.split_once("(1)") else {
            continue;
        };
        if name.chars().all(|c| c.is_ascii_lowercase()) {
            let file = format!("ringwise-{name}.1");
            assert!(written.contains(&file), "ringwise.1 names {file}");
        }
    }
    let top_printed = ringwise(&["man"], b"");
    assert_eq!(stdout(&top_printed), top);

    let unknown = ringwise(&["man", "nope"], b"");
    assert_eq!(unknown.status.code(), Some(2));
    dir.remove();
}

/// `text` as clap_mangen writes it in roff.
fn roff(text: &str) -> String {
    text.replace('-', "\\-").replace('\'', "\\*(Aq")
}
