//! `ringwise join`, `watch`, `config` and `lookup --membership` as
//! processes against each live source (`etcd.rs` has etcd's own,
//! through `--etcd`): the helpers every such test uses (a process killed
//! by its pid on drop, its output as timed lines, waiting for a ring), and
//! the fault tests that ZooKeeper and gossip share with etcd.

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

/// A `ringwise` process killed by its pid on drop.
pub struct Process(Child);

/// Lines of a child's output as they come, with when each was read.
pub type Lines = Receiver<(Instant, String)>;

impl Process {
    pub fn start(args: &[&str]) -> (Process, Lines) {
        let (process, out, _) = Process::spawn(args, Stdio::null());
        (process, out)
    }

    /// [`Process::start`], with stderr (the logs) as lines too.
    pub fn start_logged(args: &[&str]) -> (Process, Lines, Lines) {
        let (process, out, err) = Process::spawn(args, Stdio::piped());
        (process, out, err.expect("piped stderr"))
    }

    fn spawn(args: &[&str], stderr: Stdio) -> (Process, Lines, Option<Lines>) {
        let mut child = Command::new(env!("CARGO_BIN_EXE_ringwise"))
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("ringwise runs");
        let out = lines(child.stdout.take().expect("piped stdout"));
        let err = child.stderr.take().map(lines);
        (Process(child), out, err)
    }

    /// Runs `ringwise ARGS` to its end, killed (and the test failed) if it
    /// is still running after `limit`; its exit status and stderr.
    pub fn run(args: &[&str], limit: Duration) -> (std::process::ExitStatus, String) {
        // `_out` is held to the end: its reader drains stdout, which must
        // stay open while ringwise may write.
        let (mut process, _out, err) = Process::start_logged(args);
        let status = process.wait(limit);
        drop(process);
        // Ends once the killed or exited process's stderr is closed.
        let text: Vec<String> = err.iter().map(|(_, line)| line).collect();
        let text = text.join("\n");
        let status =
            status.unwrap_or_else(|| panic!("ringwise {args:?} still ran after {limit:?}; {text}"));
        (status, text)
    }

    pub fn signal(&self, name: &str) {
        let status = Command::new("kill")
            .args([&format!("-{name}"), &self.0.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success(), "kill -{name}");
    }

    pub fn wait(&mut self, limit: Duration) -> Option<std::process::ExitStatus> {
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.0.try_wait() {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        None
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Each line of `from`, sent with the instant it was read.
pub fn lines(from: impl Read + Send + 'static) -> Lines {
    let (send, lines) = channel();
    std::thread::spawn(move || {
        for line in BufReader::new(from).lines().map_while(Result::ok) {
            if send.send((Instant::now(), line)).is_err() {
                break;
            }
        }
    });
    lines
}

/// The members of each JSON ring `watch` prints, until one satisfies
/// `want` (returns when it was printed) or `limit` passes (panics).
pub fn until(
    lines: &Receiver<(Instant, String)>,
    limit: Duration,
    want: impl Fn(&[String]) -> bool,
) -> Instant {
    until_ring(lines, limit, want).0
}

/// [`until`], with the ring that satisfied `want`.
pub fn until_ring(
    lines: &Receiver<(Instant, String)>,
    limit: Duration,
    want: impl Fn(&[String]) -> bool,
) -> (Instant, serde_json::Value) {
    let deadline = Instant::now() + limit;
    let mut last = Vec::new();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match lines.recv_timeout(left) {
            Ok((at, line)) => {
                let ring: serde_json::Value =
                    serde_json::from_str(&line).expect("a JSON ring per line");
                last = ring["members"]
                    .as_array()
                    .expect("members")
                    .iter()
                    .map(|m| m["name"].as_str().expect("name").to_owned())
                    .collect();
                if want(&last) {
                    return (at, ring);
                }
            }
            Err(RecvTimeoutError::Timeout) => panic!("not within {limit:?}; last ring {last:?}"),
            Err(RecvTimeoutError::Disconnected) => panic!("watch ended; last ring {last:?}"),
        }
    }
}

/// A `ringwise join --membership URL --name NAME --ttl TTL` process.
pub fn join_at(url: &str, name: &str, ttl: &str) -> Process {
    join_with(&membership(url), name, ttl)
}

/// `ringwise join SOURCE --name NAME --ttl TTL`, SOURCE the options that
/// name the source (`--membership URL`, or `--etcd URLS --prefix P`).
pub fn join_with(source: &[String], name: &str, ttl: &str) -> Process {
    let source: Vec<&str> = source.iter().map(String::as_str).collect();
    let args = [&["join"], &source[..], &["--name", name, "--ttl", ttl]].concat();
    Process::start(&args).0
}

/// `ringwise watch SOURCE --format json --ttl TTL`, and its lines.
pub fn watch_with(source: &[String], ttl: &str) -> (Process, Lines) {
    let source: Vec<&str> = source.iter().map(String::as_str).collect();
    let args = [&["watch"], &source[..], &["--format", "json", "--ttl", ttl]].concat();
    Process::start(&args)
}

/// `--membership URL`, as the source options of [`join_with`].
pub fn membership(url: &str) -> Vec<String> {
    vec!["--membership".into(), url.into()]
}

/// The URL each new participant of one cluster uses: the same for etcd
/// and ZooKeeper, an address of its own for gossip.
pub type Urls<'a> = &'a dyn Fn() -> String;

/// The source options of each new participant ([`Urls`] as options, or
/// etcd's `--etcd URLS --prefix P`).
pub type Sources<'a> = &'a dyn Fn() -> Vec<String>;

/// Two watchers, two members: a SIGKILLed member leaves every ring within
/// `ttl` + 2 s, a SIGTERMed one within `term`, and a second process
/// asking for a live member's name is refused (exit 2, "is taken").
pub fn registrars_leave_every_ring(sources: Sources<'_>, ttl: u64, term: Duration) {
    let ttl_text = ttl.to_string();
    let (_w1, first) = watch_with(&sources(), &ttl_text);
    let (_w2, second) = watch_with(&sources(), &ttl_text);
    for lines in [&first, &second] {
        until(lines, Duration::from_secs(20), <[String]>::is_empty);
    }
    let mut killed = join_with(&sources(), "killed", &ttl_text);
    let mut stopped = join_with(&sources(), "stopped", &ttl_text);
    for lines in [&first, &second] {
        until(lines, Duration::from_secs(20), |m| m.len() == 2);
    }
    let taken = sources();
    let taken: Vec<&str> = taken.iter().map(String::as_str).collect();
    let (status, text) = Process::run(
        &[
            &["join"],
            &taken[..],
            &["--name", "killed", "--ttl", &ttl_text],
        ]
        .concat(),
        Duration::from_secs(20),
    );
    assert_eq!(status.code(), Some(2), "{text}");
    assert!(text.contains("is taken"), "{text}");

    killed.signal("KILL");
    let at = Instant::now();
    let limit = Duration::from_secs(ttl + 2);
    for lines in [&first, &second] {
        let seen = until(lines, limit + Duration::from_secs(10), |m| m == ["stopped"]);
        let took = seen.duration_since(at);
        println!("SIGKILL: gone after {took:?} (ttl {ttl} s)");
        assert!(
            took <= limit,
            "SIGKILL: gone after {took:?}, limit {limit:?}"
        );
    }
    let _ = killed.wait(Duration::from_secs(1));

    stopped.signal("TERM");
    let at = Instant::now();
    for lines in [&first, &second] {
        let seen = until(lines, term + Duration::from_secs(10), <[String]>::is_empty);
        let took = seen.duration_since(at);
        println!("SIGTERM: gone after {took:?}");
        assert!(took <= term, "SIGTERM: gone after {took:?}, limit {term:?}");
    }
    let status = stopped
        .wait(Duration::from_secs(5))
        .expect("join exits on SIGTERM");
    assert!(status.success(), "{status}");
}

/// `lookup --membership` answers as the cluster file of the same members
/// does, `config --set` changes the ring every client reads, and a
/// setting the members cannot take is refused with nothing written.
pub fn lookup_and_config(urls: Urls<'_>) {
    use crate::support::{ringwise, stderr, stdout};
    let run = |args: &[&str]| ringwise(&[args, &["--membership", &urls()]].concat(), b"");
    let _a = join_at(&urls(), "a", "10");
    let _b = join_at(&urls(), "b", "10");
    let (_watcher, lines) = watch_with(&membership(&urls()), "10");
    until(&lines, Duration::from_secs(20), |m| m.len() == 2);
    let keys: Vec<String> = (0..50).map(|i| format!("user:{i}")).collect();
    let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
    let live = run(&[&["lookup"], keys.as_slice()].concat());
    assert!(live.status.success(), "{}", stderr(&live));
    let file = ringwise(
        &[&["lookup", "--nodes", "a,b"], keys.as_slice()].concat(),
        b"",
    );
    assert_eq!(
        stdout(&live),
        stdout(&file),
        "the source's ring is the file's"
    );

    let set = run(&[
        "config",
        "--set",
        "algorithm=maglev",
        "--set",
        "table_size=251",
    ]);
    assert!(set.status.success(), "{}", stderr(&set));
    let flags = [
        "lookup",
        "--nodes",
        "a,b",
        "--algo",
        "maglev",
        "--table-size",
        "251",
    ];
    let file = ringwise(&[&flags[..], keys.as_slice()].concat(), b"");
    // A source without a shared store (gossip) spreads the settings: wait
    // until a client reads them.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let live = run(&[&["lookup"], keys.as_slice()].concat());
        if stdout(&live) == stdout(&file) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the new settings not read: {}",
            stderr(&live)
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let bad = run(&["config", "--set", "table_size=250"]);
    assert_eq!(bad.status.code(), Some(2), "{}", stderr(&bad));
    assert!(stderr(&bad).contains("table_size"), "{}", stderr(&bad));
    let shown = run(&["config"]);
    let shown: serde_json::Value = serde_json::from_str(&stdout(&shown)).expect("JSON");
    assert_eq!(shown["table_size"], 251);
}

#[test]
fn etcd_through_membership_urls() {
    let etcd = crate::etcd::server::Etcd::single();
    let endpoints = etcd.endpoints();
    let url = format!("etcd://{}/t", endpoints.trim_start_matches("http://"));
    lookup_and_config(&|| url.clone());
    // The URL and --etcd --prefix name the same cluster.
    let by_flags = crate::support::ringwise(
        &["lookup", "--etcd", &endpoints, "--prefix", "/t", "user:1"],
        b"",
    );
    let by_url = crate::support::ringwise(&["lookup", "--membership", &url, "user:1"], b"");
    assert_eq!(
        crate::support::stdout(&by_flags),
        crate::support::stdout(&by_url)
    );
}
