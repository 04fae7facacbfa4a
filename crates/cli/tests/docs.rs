//! Every page of the docs as it runs: each ```console block of README.md,
//! the crates' README.md files and every docs/*.md (found by listing, so a
//! new page is covered without a line here) is executed as a checked
//! transcript with this build's `ringwise` first on PATH, and must print
//! what the page shows. The conventions (`$ `, `? N`, `...`, `[..]`), the
//! scratch directory (a copy of docs/examples/), the process groups killed
//! when a page ends, and the directives a page can carry
//! (`<!-- docs: etcd -->` for a real etcd, `<!-- docs: proxy -->` for
//! ringwise-proxy's page, run by that crate's tests, `<!-- docs: cachebench -->` for
//! the pages the cache benchmark's tests run instead) are described in
//! [`transcript`], the runner, which the cache benchmark's tests share.
//!
//! Also here: every page is included in a crate's Rust doctests (so its
//! ```rust blocks are compiled and run), and the exit-code reference
//! agrees with the `EXIT_CODES` that `--help` prints.
//!
//! `RINGWISE_DOCS_PAGE=etcd cargo test -p ringwise-cli --test tests docs`
//! runs only the pages whose path contains `etcd`.

pub mod transcript;

use std::fs;
use std::path::{Path, PathBuf};

use transcript::{Setup, ZOOKEEPER_ADDRESS, has_directive, pages, run_page, workspace};

fn root() -> PathBuf {
    workspace(env!("CARGO_MANIFEST_DIR"))
}

/// A fresh single-member etcd on loopback, as `HOST:PORT` and its guard.
fn etcd() -> (String, Box<dyn std::any::Any>) {
    let etcd = crate::etcd::server::Etcd::single();
    let endpoint = etcd.endpoint(0);
    let address = endpoint
        .strip_prefix("http://")
        .expect("a plain-HTTP etcd")
        .to_owned();
    (address, Box::new(etcd))
}

/// A fresh standalone ZooKeeper on loopback, as `HOST:PORT` and its guard.
fn zookeeper() -> (String, Box<dyn std::any::Any>) {
    let zk = crate::zookeeper::server::Zk::single();
    (zk.host(0), Box::new(zk))
}

/// The pages this test runs: all but the cache benchmark's, only those
/// whose path contains `RINGWISE_DOCS_PAGE` if it is set.
fn cli_pages(root: &Path) -> Vec<PathBuf> {
    let all = pages(root);
    assert!(all.len() > 1, "no pages found under {}", root.display());
    let only = std::env::var("RINGWISE_DOCS_PAGE").ok();
    let chosen: Vec<PathBuf> = all
        .into_iter()
        .filter(|page| {
            let text = fs::read_to_string(root.join(page)).expect("a readable page");
            !has_directive(&text, "cachebench") && !has_directive(&text, "proxy")
        })
        .filter(|page| {
            only.as_deref()
                .is_none_or(|only| page.display().to_string().contains(only))
        })
        .collect();
    assert!(
        !chosen.is_empty(),
        "no page matches RINGWISE_DOCS_PAGE={only:?}"
    );
    chosen
}

#[test]
fn every_console_block_prints_what_the_page_shows() {
    let root = root();
    let setup = Setup::beside(env!("CARGO_BIN_EXE_ringwise"), etcd).with(
        "zookeeper",
        ZOOKEEPER_ADDRESS,
        zookeeper,
    );
    let pages = cli_pages(&root);
    // The pages are independent (each its own directory, its own etcd):
    // run at once, every failure reported.
    let failures: Vec<String> = std::thread::scope(|scope| {
        let runs: Vec<_> = pages
            .iter()
            .map(|page| scope.spawn(|| run_page(&root, page, &setup)))
            .collect();
        runs.into_iter()
            .filter_map(|run| run.join().expect("a page's thread").err())
            .collect()
    });
    assert!(
        failures.is_empty(),
        "{} of {} pages differ from what they show:\n\n{}",
        failures.len(),
        pages.len(),
        failures.join("\n")
    );
}

/// The `include_str!` paths of a source file's doctest includes, relative
/// to the workspace.
fn doctest_includes(root: &Path, source: &str) -> Vec<PathBuf> {
    let file = root.join(source);
    let text = fs::read_to_string(&file).expect("a readable source");
    text.lines()
        .filter_map(|line| line.trim().strip_prefix("#[doc = include_str!(\""))
        .filter_map(|rest| rest.split('"').next())
        .map(|relative| {
            let path = file.parent().expect("a directory").join(relative);
            let path = fs::canonicalize(&path)
                .unwrap_or_else(|e| panic!("{source}: {}: {e}", path.display()));
            path.strip_prefix(fs::canonicalize(root).expect("the root"))
                .expect("inside the workspace")
                .to_path_buf()
        })
        .collect()
}

/// A page whose Rust examples use a membership source's crate is that
/// crate's doctest (the core crate cannot depend on it): `ringwise_etcd`
/// the etcd crate's, `ringwise_zookeeper` the ZooKeeper crate's; every
/// other page is the core's.
#[test]
fn every_page_is_a_doctest() {
    let root = root();
    let core = doctest_includes(&root, "crates/ringwise/src/lib.rs");
    let etcd = doctest_includes(&root, "crates/etcd/src/lib.rs");
    let zookeeper = doctest_includes(&root, "crates/zookeeper/src/lib.rs");
    let mut missing = Vec::new();
    for page in pages(&root) {
        let text = fs::read_to_string(root.join(&page)).expect("a readable page");
        let (list, source) = if text.contains("ringwise_etcd::") {
            (&etcd, "crates/etcd/src/lib.rs")
        } else if text.contains("ringwise_zookeeper::") {
            (&zookeeper, "crates/zookeeper/src/lib.rs")
        } else {
            (&core, "crates/ringwise/src/lib.rs")
        };
        if !list.contains(&page) {
            missing.push(format!("{} (add it to {source})", page.display()));
        }
        for (n, line) in text.lines().enumerate() {
            let info = line.trim_start().trim_start_matches('`');
            if line.trim_start().starts_with("```rust") && info.contains("ignore") {
                missing.push(format!(
                    "{}:{}: a ```{info} block is never compiled (no_run, if it must not run)",
                    page.display(),
                    n + 1
                ));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "pages whose Rust examples would go unchecked:\n{}",
        missing.join("\n")
    );
}

/// A ```toml block on a page is a cluster file (the one format ringwise
/// reads): each must be one ringwise accepts and builds, so the reference's
/// examples cannot drift from the reader (a Cargo manifest's
/// `[dependencies]` lines are skipped). (A page's `cat` of a file in
/// docs/examples/ is checked by its console block instead.)
#[test]
fn every_toml_block_is_a_cluster_file_ringwise_builds() {
    let root = root();
    let mut checked = 0;
    let mut refused = Vec::new();
    for page in pages(&root) {
        let text = fs::read_to_string(root.join(&page)).expect("a readable page");
        let mut block: Option<(usize, String)> = None;
        for (n, line) in text.lines().enumerate() {
            match &mut block {
                None if line.trim_start().starts_with("```toml") => {
                    block = Some((n + 1, String::new()))
                }
                Some((start, toml)) if line.trim_start().starts_with("```") => {
                    // A Cargo manifest's lines (how to depend on the crate)
                    // are the one other TOML the pages show.
                    if toml.lines().any(|l| l.trim() == "[dependencies]") {
                        block = None;
                        continue;
                    }
                    checked += 1;
                    let built =
                        ringwise::ClusterSpec::from_toml(toml).and_then(|spec| spec.build());
                    if let Err(e) = built {
                        refused.push(format!("{}:{start}: {e}", page.display()));
                    }
                    block = None;
                }
                Some((_, toml)) => {
                    toml.push_str(line);
                    toml.push('\n');
                }
                None => {}
            }
        }
    }
    assert!(checked > 0, "no ```toml block found: is the scan right?");
    assert!(
        refused.is_empty(),
        "cluster files on the pages that ringwise refuses:\n{}",
        refused.join("\n")
    );
}

/// `(code, meaning)` pairs of `EXIT_CODES` in crates/cli/src/failure.rs
/// (what `--help` prints), continuation lines joined.
fn exit_codes_constant(root: &Path) -> Vec<(u8, String)> {
    let source = fs::read_to_string(root.join("crates/cli/src/failure.rs")).expect("failure.rs");
    let body = source
        .split("pub const EXIT_CODES: &str = \"\\\n")
        .nth(1)
        .and_then(|rest| rest.split("\";").next())
        .expect("EXIT_CODES in failure.rs");
    let mut codes: Vec<(u8, String)> = Vec::new();
    for line in body.lines().skip(1) {
        let line = line.trim();
        let (first, rest) = line.split_once(' ').unwrap_or((line, ""));
        match first.parse() {
            Ok(code) => codes.push((code, rest.trim().to_owned())),
            Err(_) => {
                let (_, meaning) = codes.last_mut().expect("a code before its continuation");
                meaning.push(' ');
                meaning.push_str(line);
            }
        }
    }
    codes
}

/// `(code, meaning)` pairs of the table in docs/exit-codes.md.
fn exit_codes_page(root: &Path) -> Vec<(u8, String)> {
    let page = fs::read_to_string(root.join("docs/exit-codes.md")).expect("docs/exit-codes.md");
    page.lines()
        .filter_map(|line| {
            let cells: Vec<&str> = line.strip_prefix('|')?.split('|').map(str::trim).collect();
            let code = cells.first()?.parse().ok()?;
            Some((code, cells.get(1)?.replace('`', "")))
        })
        .collect()
}

#[test]
fn the_exit_code_reference_agrees_with_the_program() {
    let root = root();
    let constant = exit_codes_constant(&root);
    assert!(constant.len() >= 5, "{constant:?}");
    assert_eq!(
        exit_codes_page(&root),
        constant,
        "docs/exit-codes.md's table (code | meaning | ...) must list the codes and meanings of \
         EXIT_CODES in crates/cli/src/failure.rs, in order"
    );
}

/// The runner itself, on pages written here: it must catch what drifts.
mod runner {
    use super::transcript::{HANG, Setup, line_matches, lines_match, parse, run_page};
    use std::fs;
    use std::path::{Path, PathBuf};
    use std::time::Duration;

    fn lines(text: &[&str]) -> Vec<String> {
        text.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn wildcards_match_only_what_they_say() {
        assert!(line_matches("took [..] s", "took 0.25 s"));
        assert!(line_matches("[..]", ""));
        assert!(line_matches("a[..]b[..]c", "a-b-b-c"));
        assert!(!line_matches("took [..] s", "took 0.25 ms!"));
        assert!(!line_matches("ab[..]ba", "aba"));
        assert!(!line_matches("x.y", "xzy"));
        assert!(lines_match(
            &lines(&["a", "...", "d"]),
            &lines(&["a", "b", "c", "d"])
        ));
        assert!(lines_match(&lines(&["a", "...", "b"]), &lines(&["a", "b"])));
        assert!(lines_match(&lines(&["..."]), &lines(&[])));
        assert!(!lines_match(
            &lines(&["a", "...", "d"]),
            &lines(&["a", "b"])
        ));
        assert!(!lines_match(&lines(&["a"]), &lines(&["a", "b"])));
        assert!(!lines_match(&lines(&["a", "b"]), &lines(&["a"])));
    }

    #[test]
    fn commands_continue_and_carry_their_heredocs_and_status() {
        let page = "text\n\n```console\n$ printf 'a\\n' \\\n  'b'\na\n$ cat <<'EOF' > f\n$ not a command\nEOF\n$ false\n? 1\n```\n\n```text\n$ not run\n```\n";
        let steps = parse(page).expect("a valid page");
        assert_eq!(steps.len(), 3, "{steps:?}");
        assert_eq!(steps[0].line, 4);
        assert_eq!(steps[0].command, "printf 'a\\n' \\\n  'b'");
        assert_eq!(steps[0].expected, ["a"]);
        assert_eq!(steps[1].command, "cat <<'EOF' > f\n$ not a command\nEOF");
        assert!(steps[1].expected.is_empty());
        assert_eq!((steps[2].command.as_str(), steps[2].status), ("false", 1));
        let error = parse("```console\noutput first\n```\n").expect_err("no command");
        assert!(error.contains("line 2"), "{error}");
        let error = parse("```console\n$ true\n? x\n```\n").expect_err("a bad status");
        assert!(error.contains("line 3"), "{error}");
    }

    /// A workspace of one page (and an empty docs/examples), removed on drop.
    struct Site(PathBuf);

    impl Site {
        fn new(tag: &str, page: &str) -> Site {
            let root = std::env::temp_dir()
                .join(format!("ringwise-docs-runner-{tag}-{}", std::process::id()));
            fs::create_dir_all(root.join("docs/examples")).expect("a site");
            fs::write(root.join("docs/examples/given.txt"), "given\n").expect("an example");
            fs::write(root.join("docs/page.md"), page).expect("a page");
            Site(root)
        }

        fn run(&self) -> Result<(), String> {
            self.run_within(HANG)
        }

        fn run_within(&self, hang: Duration) -> Result<(), String> {
            let setup = Setup {
                path: vec![],
                services: vec![],
                hang,
            };
            run_page(&self.0, Path::new("docs/page.md"), &setup)
        }
    }

    impl Drop for Site {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn a_page_that_matches_passes() {
        let page = "```console\n$ cat given.txt\ngiven\n$ echo out; echo err >&2; exit 3\n? 3\nout\nerr\n$ cat <<EOF | wc -l\none\ntwo\nEOF\n2\n$ seq 5\n1\n...\n5\n$ echo took 0.5 s\ntook [..] s\n```\n";
        Site::new("pass", page).run().expect("the page matches");
    }

    #[test]
    fn drift_fails_naming_page_line_command_and_both_outputs() {
        let page = "intro\n\n```console\n$ echo one\none\n$ echo two\nthree\n```\n";
        let error = Site::new("drift", page).run().expect_err("drifted output");
        for part in ["docs/page.md:6:", "`echo two`", "-three", "+two"] {
            assert!(error.contains(part), "{part:?} missing in:\n{error}");
        }
        let page = "```console\n$ exit 4\n```\n";
        let error = Site::new("status", page).run().expect_err("a wrong status");
        assert!(error.contains("exit status: 4 (expected 0)"), "{error}");
        let page = "```console\n$ echo x > new.txt\n$ cat given.txt new.txt\ngiven\n```\n";
        let error = Site::new("extra", page).run().expect_err("a missing line");
        assert!(error.contains("+x"), "{error}");
    }

    #[test]
    fn background_jobs_are_stopped_when_the_page_ends() {
        let marker = std::env::temp_dir().join(format!("ringwise-docs-job-{}", std::process::id()));
        let page = format!(
            "```console\n$ sleep 1000 & echo $! > {0}\n$ echo done\nwrong\n```\n",
            marker.display()
        );
        let error = Site::new("job", &page).run().expect_err("the page fails");
        assert!(error.contains("+done"), "{error}");
        let pid = fs::read_to_string(&marker).expect("the job's pid");
        let _ = fs::remove_file(&marker);
        let pid = pid.trim();
        // Killed and reaped (by init): no such process, or a zombie.
        let state = fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = state.rsplit(')').next().unwrap_or("").trim_start();
        assert!(
            state.is_empty() || state.starts_with('Z'),
            "sleep {pid} still runs after its page failed: {state}"
        );
    }

    #[test]
    fn a_command_that_hangs_is_killed_and_named() {
        let page = "```console\n$ echo fine\nfine\n$ sleep 1000\n```\n";
        let error = Site::new("hang", page)
            .run_within(Duration::from_secs(1))
            .expect_err("a hung command");
        assert!(
            error.contains("docs/page.md:4: `sleep 1000`: still running after 1s: killed"),
            "{error}"
        );
    }
}
