//! Real etcd servers on loopback for the tests: one member or a cluster of
//! three, each in a fresh data directory, on free ports. A member can be
//! killed (SIGKILL) and started again on the same directory and ports.
//! Dropping the `Etcd` kills every member still running by its pid and
//! removes the directories, however the test ends.
//!
//! `etcd` comes from Debian's `etcd-server`, installed by
//! scripts/install-test-deps; these tests are never skipped.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

#[path = "../../../ringwise/tests/support/process.rs"]
#[allow(
    dead_code,
    reason = "shared with the core's tests; not every helper is used here"
)]
mod process;

const HINT: &str = "run scripts/install-test-deps (Debian package etcd-server)";

/// One etcd member.
#[derive(Debug)]
struct Member {
    name: String,
    client: u16,
    peer: u16,
    dir: PathBuf,
    child: Option<Child>,
}

/// An etcd cluster of one or more members on loopback.
#[derive(Debug)]
pub struct Etcd {
    members: Vec<Member>,
    initial: String,
    /// Server certificate and key: clients speak TLS (`https://`).
    tls: Option<(PathBuf, PathBuf)>,
}

impl Etcd {
    /// One member, started and healthy.
    pub fn single() -> Etcd {
        Etcd::cluster(1)
    }

    /// `n` members forming one cluster, started and healthy.
    pub fn cluster(n: usize) -> Etcd {
        Etcd::start(n, None)
    }

    /// One member serving clients over TLS with `cert` and `key` (PEM),
    /// started and listening.
    pub fn single_tls(cert: PathBuf, key: PathBuf) -> Etcd {
        Etcd::start(1, Some((cert, key)))
    }

    fn start(n: usize, tls: Option<(PathBuf, PathBuf)>) -> Etcd {
        let members: Vec<Member> = (0..n)
            .map(|i| Member {
                name: format!("m{i}"),
                client: process::free_port(),
                peer: process::free_port(),
                dir: process::scratch_dir(&format!("ringwise-etcd-m{i}")),
                child: None,
            })
            .collect();
        let initial = members
            .iter()
            .map(|m| format!("{}=http://127.0.0.1:{}", m.name, m.peer))
            .collect::<Vec<_>>()
            .join(",");
        let mut etcd = Etcd {
            members,
            initial,
            tls,
        };
        for i in 0..n {
            etcd.spawn(i);
        }
        for i in 0..n {
            etcd.wait_healthy(i);
        }
        etcd
    }

    /// Every member's client URL, comma-separated.
    pub fn endpoints(&self) -> String {
        let urls: Vec<String> = (0..self.members.len()).map(|i| self.endpoint(i)).collect();
        urls.join(",")
    }

    /// Member `i`'s client URL.
    pub fn endpoint(&self, i: usize) -> String {
        format!("{}://127.0.0.1:{}", self.scheme(), self.members[i].client)
    }

    fn scheme(&self) -> &'static str {
        if self.tls.is_some() { "https" } else { "http" }
    }

    /// Member `i`'s pid, while it runs.
    pub fn pid(&self, i: usize) -> Option<u32> {
        self.members[i].child.as_ref().map(Child::id)
    }

    /// Kills member `i` with SIGKILL (its data stays).
    pub fn kill(&mut self, i: usize) {
        if let Some(mut child) = self.members[i].child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts member `i` again on its data directory and ports, and waits
    /// until it is healthy.
    pub fn restart(&mut self, i: usize) {
        self.spawn(i);
        self.wait_healthy(i);
    }

    fn spawn(&mut self, i: usize) {
        let state = if self.members[i].dir.join("member").exists() {
            "existing"
        } else {
            "new"
        };
        let m = &self.members[i];
        let client = format!("{}://127.0.0.1:{}", self.scheme(), m.client);
        let peer = format!("http://127.0.0.1:{}", m.peer);
        let mut command = Command::new("etcd");
        command
            .args(["--name", &m.name])
            .arg("--data-dir")
            .arg(&m.dir)
            .args(["--listen-client-urls", &client])
            .args(["--advertise-client-urls", &client])
            .args(["--listen-peer-urls", &peer])
            .args(["--initial-advertise-peer-urls", &peer])
            .args(["--initial-cluster", &self.initial])
            .args(["--initial-cluster-state", state])
            .args(["--initial-cluster-token", "ringwise-test"])
            // Fast elections, so a killed leader is replaced in about a
            // second on a loaded machine.
            .args(["--heartbeat-interval", "50", "--election-timeout", "500"])
            .args(["--logger", "zap", "--log-level", "error"])
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        if let Some((cert, key)) = &self.tls {
            command
                .arg("--cert-file")
                .arg(cert)
                .arg("--key-file")
                .arg(key);
        }
        let child = command
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start etcd: {e}; {HINT}"));
        self.members[i].child = Some(child);
    }

    fn wait_healthy(&mut self, i: usize) {
        let deadline = Instant::now() + Duration::from_secs(30);
        let port = self.members[i].client;
        while Instant::now() < deadline {
            if let Some(status) = self.members[i]
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten())
            {
                panic!("etcd member {i} exited at start: {status}; {HINT}");
            }
            // Over TLS a listening port is enough: the tests' first call
            // retries until etcd answers.
            let ready = match self.tls {
                Some(_) => TcpStream::connect(("127.0.0.1", port)).is_ok(),
                None => health(port),
            };
            if ready {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("etcd member {i} not healthy within 30 s");
    }
}

/// `GET /health` says `"health":"true"`.
fn health(port: u16) -> bool {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    let request = format!("GET /health HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\n\r\n");
    if stream.write_all(request.as_bytes()).is_err() {
        return false;
    }
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer.contains("\"health\":\"true\"")
}

impl Drop for Etcd {
    fn drop(&mut self) {
        for i in 0..self.members.len() {
            self.kill(i);
            let _ = std::fs::remove_dir_all(&self.members[i].dir);
        }
    }
}

/// A fresh scratch directory (removed by the caller).
pub fn scratch(prefix: &str) -> PathBuf {
    process::scratch_dir(prefix)
}
