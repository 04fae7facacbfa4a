//! Checked transcripts: the ```console blocks of a Markdown page, run
//! through `sh` and compared with the output the page shows. Shared by the
//! CLI's docs test (`crates/cli/tests/docs.rs`) and the cache benchmark's
//! (`crates/cachebench/tests`, by `#[path]`), which each put their own
//! binaries on PATH.
//!
//! The conventions are trycmd's (the clap ecosystem's), with a shell:
//!
//! - `$ ` starts a command, run as `sh -c 'COMMAND' 2>&1` (pipes,
//!   redirects, `&`, heredocs work); a line ending in `\` continues it on
//!   the next line, and the body of a heredoc (`<<WORD`, `<<'WORD'`,
//!   `<<-WORD`) up to the line `WORD` belongs to the command too;
//! - `? N` on the line right after the command is the exit status it must
//!   give (default 0); any other status fails;
//! - the lines after that, up to the next `$ ` or the end of the block,
//!   are its stdout and stderr as they interleave;
//! - `...` alone on a line matches any number of lines, `[..]` inside a
//!   line matches any text within that line; nothing else is a wildcard.
//!   Trailing whitespace is ignored on both sides (editors strip it).
//!
//! Each page runs in a scratch directory of its own, a fresh copy of
//! `docs/examples/`, every command of the page in order in that
//! directory, stdin empty. Every command runs in a process group of its
//! own; when the page ends, however it ends, every group it started is
//! killed (SIGTERM, then SIGKILL), which stops `cmd &` jobs (a background
//! job's output after its command returned is not shown anywhere: send it
//! to a file). A command still running after [`HANG`] (`Setup::hang`) is killed and fails
//! the page, named. That is a guard against a hang, not a timing check.
//!
//! Directives, HTML comments anywhere in the page (invisible when rendered):
//!
//! - `<!-- docs: etcd -->`: the page gets a fresh real etcd on loopback,
//!   and `127.0.0.1:2379` in its commands is replaced by that etcd's
//!   address (and the address by `127.0.0.1:2379` in the output);
//! - `<!-- docs: zookeeper -->`: the same with a fresh real ZooKeeper and
//!   `127.0.0.1:2181`;
//! - `<!-- docs: gossip -->`: `127.0.0.1:7946` is replaced by a loopback
//!   address whose UDP port was free a moment ago (a gossip seed the page
//!   starts itself; pages run side by side and must not share one);
//! - `<!-- docs: cachebench -->`: the page needs `ringwise-cachebench`,
//!   so the cache benchmark's tests run it and the CLI's leave it out.

use std::fmt::Write as _;
use std::fs;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// How long one command may run before it counts as hung.
pub const HANG: Duration = Duration::from_secs(120);

/// The address a page writes for its etcd (the one the etcd guide's
/// commands show), replaced by the real one.
pub const ETCD_ADDRESS: &str = "127.0.0.1:2379";

/// Starts what a directive gives a page: its `HOST:PORT` and a guard that
/// stops it when dropped.
pub type Start = fn() -> (String, Box<dyn std::any::Any>);

/// What a directive gives a page: a server (or a free port) whose real
/// address replaces the one the page writes.
#[derive(Clone, Copy)]
pub struct Service {
    /// The directive's name (`etcd` for `<!-- docs: etcd -->`).
    pub directive: &'static str,
    /// The address the page writes for it.
    pub address: &'static str,
    /// Starts it for one page.
    pub start: Start,
}

/// What a crate's docs test provides to the pages it runs.
pub struct Setup {
    /// Directories put first on PATH, in order (where the binaries are).
    pub path: Vec<PathBuf>,
    /// The directives' services; a page gets a fresh one of each it names.
    pub services: Vec<Service>,
    /// How long one command may run ([`HANG`]).
    pub hang: Duration,
}

impl Setup {
    /// The setup for a test binary's pages: the directory of `binary` (a
    /// `CARGO_BIN_EXE_*` path) first on PATH, etcd from `etcd`, a free
    /// port for `gossip`, [`HANG`].
    pub fn beside(binary: &str, etcd: Start) -> Setup {
        let dir = Path::new(binary)
            .parent()
            .expect("the binary's directory")
            .to_path_buf();
        Setup {
            path: vec![dir],
            services: vec![
                Service {
                    directive: "etcd",
                    address: ETCD_ADDRESS,
                    start: etcd,
                },
                Service {
                    directive: "gossip",
                    address: GOSSIP_ADDRESS,
                    start: free_udp_port,
                },
            ],
            hang: HANG,
        }
    }

    /// Adds the service of `directive`.
    pub fn with(mut self, directive: &'static str, address: &'static str, start: Start) -> Self {
        self.services.push(Service {
            directive,
            address,
            start,
        });
        self
    }
}

/// The address a page writes for its ZooKeeper.
pub const ZOOKEEPER_ADDRESS: &str = "127.0.0.1:2181";

/// The address a page writes for its first gossip participant.
pub const GOSSIP_ADDRESS: &str = "127.0.0.1:7946";

/// A loopback UDP port free when asked (bound and released: another
/// process could take it before the page does, which no port chosen in
/// advance escapes; the pages' gossip processes bind it within a second).
fn free_udp_port() -> (String, Box<dyn std::any::Any>) {
    let socket = std::net::UdpSocket::bind("127.0.0.1:0").expect("a free UDP port");
    let address = socket.local_addr().expect("its address").to_string();
    (address, Box::new(()))
}

/// The workspace's root (two levels above a crate's manifest).
pub fn workspace(manifest_dir: &str) -> PathBuf {
    Path::new(manifest_dir)
        .ancestors()
        .nth(2)
        .expect("a crate two levels below the workspace")
        .to_path_buf()
}

/// Every page of the docs, relative to the workspace: README.md, each
/// crate's README.md and every docs/*.md, found by listing the
/// directories, so a new page is covered without a line here.
pub fn pages(root: &Path) -> Vec<PathBuf> {
    let mut pages = vec![PathBuf::from("README.md")];
    for (dir, name) in [("crates", Some("README.md")), ("docs", None)] {
        let mut found: Vec<PathBuf> = fs::read_dir(root.join(dir))
            .unwrap_or_else(|e| panic!("cannot list {dir}/: {e}"))
            .map(|entry| entry.expect("a directory entry").path())
            .filter_map(|path| match name {
                Some(name) => Some(path.join(name)).filter(|p| p.is_file()),
                None => Some(path).filter(|p| p.extension().is_some_and(|e| e == "md")),
            })
            .map(|path| {
                path.strip_prefix(root)
                    .expect("under the root")
                    .to_path_buf()
            })
            .collect();
        found.sort();
        pages.extend(found);
    }
    pages
}

/// Whether the page's text holds the directive `<!-- docs: NAME -->`.
pub fn has_directive(text: &str, name: &str) -> bool {
    text.contains(&format!("<!-- docs: {name} -->"))
}

/// One `$ ` command of a console block and what it must print.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// The page's line of the `$ `, 1-based.
    pub line: usize,
    /// The command as `sh -c` gets it (continuations and heredocs kept).
    pub command: String,
    pub status: i32,
    pub expected: Vec<String>,
}

/// The console blocks' commands of a page, in order; a block that breaks
/// the conventions is an error naming its line.
pub fn parse(text: &str) -> Result<Vec<Step>, String> {
    let mut steps = Vec::new();
    let lines: Vec<&str> = text.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let Some((indent, fence, info)) = fence_open(lines[i]) else {
            i += 1;
            continue;
        };
        let start = i + 1;
        let mut end = start;
        while end < lines.len() && !fence_close(lines[end], &fence) {
            end += 1;
        }
        if end == lines.len() {
            return Err(format!("line {}: a ``` block that never closes", i + 1));
        }
        if info.split([' ', ',']).next() == Some("console") {
            let body: Vec<(usize, &str)> = (start..end)
                .map(|n| (n + 1, strip_indent(lines[n], indent)))
                .collect();
            steps.extend(parse_block(&body)?);
        }
        i = end + 1;
    }
    Ok(steps)
}

/// A fence's indentation, its backticks and its info string.
fn fence_open(line: &str) -> Option<(usize, String, String)> {
    let rest = line.trim_start();
    let indent = line.len() - rest.len();
    let ticks = rest.len() - rest.trim_start_matches('`').len();
    (ticks >= 3).then(|| (indent, "`".repeat(ticks), rest[ticks..].trim().to_owned()))
}

fn fence_close(line: &str, fence: &str) -> bool {
    let rest = line.trim();
    rest.starts_with(fence) && rest.trim_start_matches('`').is_empty()
}

/// Removes up to `indent` leading spaces (a block inside a list item).
fn strip_indent(line: &str, indent: usize) -> &str {
    let spaces = line.len() - line.trim_start_matches(' ').len();
    &line[spaces.min(indent)..]
}

fn parse_block(body: &[(usize, &str)]) -> Result<Vec<Step>, String> {
    let mut steps: Vec<Step> = Vec::new();
    let mut i = 0;
    while i < body.len() {
        let (line, text) = body[i];
        let Some(first) = text.strip_prefix("$ ") else {
            match steps.last_mut() {
                Some(step) => step.expected.push(text.trim_end().to_owned()),
                None => {
                    return Err(format!(
                        "line {line}: a console block must start with a `$ ` command, not {text:?}"
                    ));
                }
            }
            i += 1;
            continue;
        };
        let mut command = first.to_owned();
        i += 1;
        while command.ends_with('\\') {
            let Some((_, next)) = body.get(i) else {
                return Err(format!("line {line}: the command's last line ends in `\\`"));
            };
            command.push('\n');
            command.push_str(next);
            i += 1;
        }
        for word in heredocs(&command) {
            loop {
                let Some((_, next)) = body.get(i) else {
                    return Err(format!(
                        "line {line}: the heredoc never reaches its line {word:?}"
                    ));
                };
                command.push('\n');
                command.push_str(next);
                i += 1;
                if next.trim_start_matches('\t') == word {
                    break;
                }
            }
        }
        let mut status = 0;
        if let Some(code) = body.get(i).and_then(|(_, t)| t.strip_prefix("? ")) {
            status = code.trim().parse().map_err(|_| {
                format!(
                    "line {}: `? N` wants an exit status, not {code:?}",
                    body[i].0
                )
            })?;
            i += 1;
        }
        steps.push(Step {
            line,
            command,
            status,
            expected: Vec::new(),
        });
    }
    Ok(steps)
}

/// The end words of the heredocs a command opens (`<<EOF`, `<<'EOF'`,
/// `<<-"EOF"`), in order; `<<<` (a here-string) is none.
fn heredocs(command: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut rest = command;
    while let Some(at) = rest.find("<<") {
        rest = &rest[at + 2..];
        if let Some(after) = rest.strip_prefix('<') {
            rest = after;
            continue;
        }
        let word = rest.strip_prefix('-').unwrap_or(rest).trim_start();
        let word: String = word
            .chars()
            .take_while(|c| !c.is_whitespace() && !";|&<>()".contains(*c))
            .filter(|c| *c != '\'' && *c != '"')
            .collect();
        if !word.is_empty() {
            words.push(word);
        }
    }
    words
}

/// Whether `actual` is what `expected` describes, wildcards included.
pub fn lines_match(expected: &[String], actual: &[String]) -> bool {
    match expected.split_first() {
        None => actual.is_empty(),
        Some((first, rest)) if first == "..." => {
            (0..=actual.len()).any(|skip| lines_match(rest, &actual[skip..]))
        }
        Some((first, rest)) => actual
            .split_first()
            .is_some_and(|(line, more)| line_matches(first, line) && lines_match(rest, more)),
    }
}

/// One line against its pattern, where `[..]` is any text.
pub fn line_matches(pattern: &str, line: &str) -> bool {
    let parts: Vec<&str> = pattern.split("[..]").collect();
    let [first, middle @ .., last] = parts.as_slice() else {
        return pattern == line;
    };
    if line.len() < first.len() + last.len() || !line.starts_with(first) || !line.ends_with(last) {
        return false;
    }
    let mut rest = &line[first.len()..line.len() - last.len()];
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    true
}

/// Runs the page `page` (relative to `root`) and returns what failed,
/// every message naming the page and the line; `Ok` if all matched.
pub fn run_page(root: &Path, page: &Path, setup: &Setup) -> Result<(), String> {
    let name = page.display();
    let text =
        fs::read_to_string(root.join(page)).map_err(|e| format!("{name}: cannot be read: {e}"))?;
    let steps = parse(&text).map_err(|e| format!("{name}: {e}"))?;
    if steps.is_empty() {
        return Ok(());
    }
    // Declared before the groups, so dropped after them: the servers
    // outlive the processes that talk to them.
    let services: Vec<(&'static str, String, Box<dyn std::any::Any>)> = setup
        .services
        .iter()
        .filter(|s| has_directive(&text, s.directive))
        .map(|s| {
            let (address, guard) = (s.start)();
            (s.address, address, guard)
        })
        .collect();
    let scratch = Scratch::new(&text_tag(page), &root.join("docs/examples"));
    let mut groups = Groups(Vec::new());
    let mut path = std::env::join_paths(&setup.path).expect("PATH directories");
    if let Some(old) = std::env::var_os("PATH") {
        let mut joined = path;
        joined.push(":");
        joined.push(old);
        path = joined;
    }
    for (n, step) in steps.iter().enumerate() {
        let command = services
            .iter()
            .fold(step.command.clone(), |c, (written, real, _)| {
                c.replace(written, real)
            });
        let out = scratch.root.join(format!("out-{n}"));
        let (status, mut output) = run(
            &command,
            &scratch.work,
            &out,
            &path,
            setup.hang,
            &mut groups,
        )
        .map_err(|e| format!("{name}:{}: `{}`: {e}", step.line, step.command))?;
        for (written, real, _) in &services {
            output = output.replace(real.as_str(), written);
        }
        let actual: Vec<String> = output.lines().map(|l| l.trim_end().to_owned()).collect();
        let code = status.code();
        if code != Some(step.status) || !lines_match(&step.expected, &actual) {
            let mut message = format!(
                "{name}:{}: `{}`\nexit status: {} (expected {})\n",
                step.line,
                step.command,
                code.map_or_else(|| format!("{status}"), |c| c.to_string()),
                step.status
            );
            message.push_str(&diff(&step.expected, &actual));
            return Err(message);
        }
    }
    Ok(())
}

/// A scratch directory name's tag: the page's path without separators.
fn text_tag(page: &Path) -> String {
    page.display().to_string().replace(['/', '.'], "-")
}

/// Runs one command to its end in `dir`, stdout and stderr into the file
/// `out` (a file, not a pipe: a `cmd &` job keeps its copy of the output
/// open, and reading a pipe to its end would wait for the job).
fn run(
    command: &str,
    dir: &Path,
    out: &Path,
    path: &std::ffi::OsStr,
    hang: Duration,
    groups: &mut Groups,
) -> Result<(ExitStatus, String), String> {
    let file = fs::File::create(out).map_err(|e| format!("output file {}: {e}", out.display()))?;
    let err = file.try_clone().map_err(|e| format!("output file: {e}"))?;
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(command)
        .current_dir(dir)
        .env("PATH", path)
        .env_remove("RUST_LOG")
        .env_remove("RUST_BACKTRACE")
        .stdin(Stdio::null())
        .stdout(file)
        .stderr(err)
        .process_group(0)
        .spawn()
        .map_err(|e| format!("sh cannot start: {e}"))?;
    groups.0.push(child.id());
    let status = wait(&mut child, hang).ok_or_else(|| {
        // The shell itself first, reaped, so its zombie does not keep the
        // group alive while the rest of the group gets SIGTERM.
        let _ = child.kill();
        let _ = child.wait();
        groups.kill();
        format!("still running after {hang:?}: killed (a command that waits forever?)")
    })?;
    let bytes = fs::read(out).map_err(|e| format!("output file: {e}"))?;
    Ok((status, String::from_utf8_lossy(&bytes).into_owned()))
}

/// The child's status, or `None` if it still runs after `limit`.
fn wait(child: &mut Child, limit: Duration) -> Option<ExitStatus> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().expect("waiting for sh") {
            return Some(status);
        }
        if Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The process groups a page started (each command's `sh` leads one);
/// dropping it kills every one still there: SIGTERM, a moment for the
/// processes to stop as they would on Ctrl-C, then SIGKILL.
struct Groups(Vec<u32>);

impl Groups {
    fn kill(&mut self) {
        let live: Vec<u32> = self.0.drain(..).filter(|&g| alive(g)).collect();
        for &group in &live {
            signal("-TERM", group);
        }
        let deadline = Instant::now() + Duration::from_secs(5);
        while live.iter().any(|&g| alive(g)) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        for &group in &live {
            signal("-KILL", group);
        }
    }
}

impl Drop for Groups {
    fn drop(&mut self) {
        self.kill();
    }
}

/// `kill SIGNAL -- -GROUP`.
fn signal(signal: &str, group: u32) {
    let _ = Command::new("kill")
        .args([signal, "--", &format!("-{group}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

/// Whether a process of the group still runs: a zombie (stopped, waiting
/// for its parent to reap it) does not count, which `kill -0` cannot tell.
fn alive(group: u32) -> bool {
    let Ok(entries) = fs::read_dir("/proc") else {
        return false;
    };
    entries.flatten().any(|entry| {
        let stat = fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        // `PID (COMM) STATE PPID PGRP ...`; COMM may hold spaces and `)`.
        let mut fields = stat
            .rsplit_once(')')
            .map_or("", |(_, rest)| rest)
            .split_whitespace();
        let state = fields.next();
        let pgrp = fields.nth(1);
        state.is_some_and(|s| s != "Z") && pgrp == Some(group.to_string().as_str())
    })
}

/// A page's scratch directory: `work` (a copy of docs/examples, where the
/// commands run) and the commands' output files beside it; removed on drop.
struct Scratch {
    root: PathBuf,
    work: PathBuf,
}

impl Scratch {
    fn new(tag: &str, examples: &Path) -> Scratch {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let root = std::env::temp_dir().join(format!(
            "ringwise-docs-{tag}-{}-{nanos}",
            std::process::id()
        ));
        let work = root.join("work");
        let scratch = Scratch { root, work };
        copy_dir(examples, &scratch.work);
        scratch
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.root);
    }
}

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap_or_else(|e| panic!("{}: {e}", to.display()));
    let entries = fs::read_dir(from).unwrap_or_else(|e| panic!("{}: {e}", from.display()));
    for entry in entries {
        let entry = entry.expect("a directory entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("a file type").is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), &target)
                .unwrap_or_else(|e| panic!("{}: {e}", entry.path().display()));
        }
    }
}

/// The expected and the actual output side by side as a line diff: ` `
/// lines agree, `-` is expected only, `+` printed only (`...` and `[..]`
/// count as agreeing with what they match).
pub fn diff(expected: &[String], actual: &[String]) -> String {
    // Longest common subsequence under `line_matches`; a `...` line is
    // kept out of it and shown as expected, so its span shows as `+`.
    let (n, m) = (expected.len(), actual.len());
    let mut table = vec![vec![0usize; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            table[i][j] = if expected[i] != "..." && line_matches(&expected[i], &actual[j]) {
                table[i + 1][j + 1] + 1
            } else {
                table[i + 1][j].max(table[i][j + 1])
            };
        }
    }
    let mut text = String::from("--- expected (the page)\n+++ actual\n");
    let (mut i, mut j) = (0, 0);
    while i < n || j < m {
        if i < n && j < m && expected[i] != "..." && line_matches(&expected[i], &actual[j]) {
            let _ = writeln!(text, " {}", actual[j]);
            i += 1;
            j += 1;
        } else if i < n && (j == m || table[i + 1][j] >= table[i][j + 1]) {
            let _ = writeln!(text, "-{}", expected[i]);
            i += 1;
        } else {
            let _ = writeln!(text, "+{}", actual[j]);
            j += 1;
        }
    }
    text
}
