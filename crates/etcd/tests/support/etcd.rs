//! Real etcd servers on loopback for the tests: one member or a cluster of
//! three, each in a fresh data directory, on free ports. A member can be
//! killed (SIGKILL) and started again on the same directory and ports.
//! Dropping the `Etcd` kills every member still running by its pid and
//! removes the directories, however the test ends.
//!
//! Every member is started through `setpriv --pdeathsig KILL`, so it dies
//! with the thread that started it even when the test process is killed
//! (SIGKILL runs no drop).
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

/// A loopback port free a moment ago; nothing listens on it, so
/// connecting is refused (a dead endpoint for the failover tests).
#[allow(
    unused_imports,
    reason = "the bench and cachebench's tests include this file without it"
)]
pub use process::free_port;

const HINT: &str =
    "run scripts/install-test-deps (Debian packages etcd-server, and util-linux for setpriv)";

/// One etcd member.
#[derive(Debug)]
struct Member {
    name: String,
    client: u16,
    peer: u16,
    /// Where `GET /health` answers over plain HTTP: the client port, or
    /// for a TLS member a port of its own (`--listen-metrics-urls`).
    health: u16,
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
    /// started and healthy.
    pub fn single_tls(cert: PathBuf, key: PathBuf) -> Etcd {
        Etcd::start(1, Some((cert, key)))
    }

    fn start(n: usize, tls: Option<(PathBuf, PathBuf)>) -> Etcd {
        let members: Vec<Member> = (0..n)
            .map(|i| {
                let client = process::free_port();
                Member {
                    name: format!("m{i}"),
                    client,
                    peer: process::free_port(),
                    health: match tls {
                        Some(_) => process::free_port(),
                        None => client,
                    },
                    dir: process::scratch_dir(&format!("ringwise-etcd-m{i}")),
                    child: None,
                }
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

    /// Member `i`'s data directory.
    pub fn dir(&self, i: usize) -> &std::path::Path {
        &self.members[i].dir
    }

    /// Kills member `i` with SIGKILL (its data stays).
    pub fn kill(&mut self, i: usize) {
        if let Some(mut child) = self.members[i].child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Stops member `i` with SIGSTOP: its port still accepts connections
    /// (the kernel completes them) but nothing answers, as a host that
    /// hangs or a network that drops the answers. Drop kills it all the
    /// same (SIGKILL ends a stopped process).
    pub fn pause(&mut self, i: usize) {
        self.signal(i, "STOP");
    }

    /// Lets member `i` run again after [`Etcd::pause`].
    pub fn resume(&mut self, i: usize) {
        self.signal(i, "CONT");
    }

    fn signal(&self, i: usize, name: &str) {
        let pid = self.pid(i).expect("the member runs");
        let status = Command::new("kill")
            .args([&format!("-{name}"), &pid.to_string()])
            .status()
            .expect("kill(1) runs");
        assert!(status.success(), "kill -{name} {pid}");
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
        // Through setpriv (util-linux): the kernel sends etcd SIGKILL when
        // the thread that started it ends, so a test process that dies
        // (SIGKILL included, when no drop runs) leaves no etcd behind.
        // setpriv execs etcd: the pid is etcd's, for the kill by pid on
        // drop. The death signal is the spawning *thread*'s: start members
        // from the thread that owns the `Etcd` (a test's own thread), never
        // from one that ends before the test does.
        let mut command = Command::new("setpriv");
        command
            .args(["--pdeathsig", "KILL", "--", "etcd"])
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
                .arg(key)
                .args([
                    "--listen-metrics-urls",
                    &format!("http://127.0.0.1:{}", m.health),
                ]);
        }
        let child = command
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start etcd: {e}; {HINT}"));
        self.members[i].child = Some(child);
    }

    fn wait_healthy(&mut self, i: usize) {
        let deadline = Instant::now() + Duration::from_secs(30);
        let port = self.members[i].health;
        while Instant::now() < deadline {
            if let Some(status) = self.members[i]
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten())
            {
                panic!("etcd member {i} exited at start: {status}; {HINT}");
            }
            if health(port) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("etcd member {i} not healthy within 30 s");
    }
}

/// etcd's v3 JSON gateway on member 0 (plain HTTP), as `etcdctl` would
/// use the gRPC API: for checks that must not go through ringwise.
#[allow(
    dead_code,
    reason = "the CLI's and cachebench's tests use these; the library's tests use etcd-client"
)]
impl Etcd {
    /// Compacts the history up to the current revision.
    pub fn compact(&self) {
        let status = self.post("/v3/kv/range", r#"{"key":"AA=="}"#);
        let revision: u64 = quoted(&status, "revision")
            .and_then(|r| r.parse().ok())
            .unwrap_or_else(|| panic!("no revision in {status}"));
        let answer = self.post(
            "/v3/kv/compaction",
            &format!(r#"{{"revision":"{revision}","physical":true}}"#),
        );
        assert!(answer.contains("header"), "{answer}");
    }

    /// Writes `key` = `value`.
    pub fn put(&self, key: &str, value: &[u8]) {
        let body = format!(
            r#"{{"key":"{}","value":"{}"}}"#,
            base64(key.as_bytes()),
            base64(value)
        );
        let answer = self.post("/v3/kv/put", &body);
        assert!(answer.contains("header"), "{answer}");
    }

    /// Deletes `key`.
    pub fn delete(&self, key: &str) {
        let body = format!(r#"{{"key":"{}"}}"#, base64(key.as_bytes()));
        let answer = self.post("/v3/kv/deleterange", &body);
        assert!(answer.contains("header"), "{answer}");
    }

    /// How many keys etcd holds, all prefixes together.
    pub fn count(&self) -> u64 {
        // key "\0" with range_end "\0": every key. proto3 JSON leaves a
        // zero count out.
        let answer = self.post(
            "/v3/kv/range",
            r#"{"key":"AA==","range_end":"AA==","count_only":true}"#,
        );
        assert!(answer.contains("header"), "{answer}");
        quoted(&answer, "count").map_or(0, |c| c.parse().expect("a count"))
    }

    fn post(&self, path: &str, body: &str) -> String {
        assert!(
            self.tls.is_none(),
            "the JSON gateway is used over plain HTTP"
        );
        let request = format!(
            "POST {path} HTTP/1.0\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        exchange(self.members[0].client, &request)
            .unwrap_or_else(|e| panic!("etcd's JSON gateway, POST {path}: {e}"))
    }
}

/// The root user's password after [`Etcd::enable_auth`].
pub const ROOT_PASSWORD: &str = "rootpw";

impl Etcd {
    /// Turns etcd's authentication on, as `etcdctl user add root`, `user
    /// add NAME` for each of `users` (user, password) and `auth enable`
    /// would, through the JSON gateway: `root` (password [`ROOT_PASSWORD`])
    /// holds the root role, the others no role at all (they may log in and
    /// touch no key). The gateway helpers above need no login only before.
    pub fn enable_auth(&self, users: &[(&str, &str)]) {
        let root = [("root", ROOT_PASSWORD)];
        let call = |path: &str, body: &str| {
            let answer = self.post(path, body);
            assert!(answer.contains("header"), "{path}: {answer}");
        };
        for (name, password) in root.iter().chain(users) {
            let body = format!(r#"{{"name":"{name}","password":"{password}"}}"#);
            call("/v3/auth/user/add", &body);
        }
        call("/v3/auth/role/add", r#"{"name":"root"}"#);
        call("/v3/auth/user/grant", r#"{"user":"root","role":"root"}"#);
        call("/v3/auth/enable", "{}");
    }
}

/// TLS files made with the `openssl` program (installed by
/// scripts/install-test-deps) in a scratch directory removed on drop: a
/// CA, a server certificate for 127.0.0.1 it signs, and a second CA that
/// signs nothing here (a client that trusts only it refuses the server).
#[derive(Debug)]
pub struct Pki {
    dir: Scratch,
}

impl Pki {
    pub fn new() -> Pki {
        let pki = Pki {
            dir: Scratch::new("ringwise-tls"),
        };
        for ca in ["ca", "other-ca"] {
            pki.openssl(&format!(
                "req -x509 -newkey rsa:2048 -nodes -keyout {ca}.key -out {ca}.pem -days 1 \
                 -subj /CN=ringwise-test-{ca}"
            ));
        }
        pki.openssl(
            "req -newkey rsa:2048 -nodes -keyout server.key -out server.csr -subj /CN=127.0.0.1",
        );
        std::fs::write(pki.path("san.ext"), "subjectAltName=IP:127.0.0.1\n").expect("write");
        pki.openssl(
            "x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem \
             -days 1 -extfile san.ext",
        );
        pki
    }

    /// Runs `openssl ARGS` (words without spaces) in the directory.
    fn openssl(&self, args: &str) {
        let status = Command::new("openssl")
            .args(args.split_whitespace())
            .current_dir(self.dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("openssl runs (scripts/install-test-deps installs it)");
        assert!(status.success(), "openssl {args}");
    }

    /// A file of the directory: `ca.pem`, `other-ca.pem`, `server.pem`,
    /// `server.key`.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// One member serving clients over TLS with the server certificate.
    pub fn etcd(&self) -> Etcd {
        Etcd::single_tls(self.path("server.pem"), self.path("server.key"))
    }
}

/// Standard base64 with padding, as the JSON gateway wants bytes.
#[allow(dead_code, reason = "used by the JSON gateway helpers above")]
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut text = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let word = chunk
            .iter()
            .enumerate()
            .fold(0u32, |w, (i, &b)| w | u32::from(b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                text.push(char::from(ALPHABET[(word >> (18 - 6 * i) & 63) as usize]));
            } else {
                text.push('=');
            }
        }
    }
    text
}

/// The string value of `"field":"..."` in a JSON answer.
#[allow(dead_code, reason = "used by the JSON gateway helpers above")]
fn quoted<'a>(answer: &'a str, field: &str) -> Option<&'a str> {
    answer
        .split(&format!("\"{field}\":\""))
        .nth(1)?
        .split('"')
        .next()
}

/// `GET /health` says `"health":"true"`.
fn health(port: u16) -> bool {
    let request = format!("GET /health HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\n\r\n");
    exchange(port, &request).is_ok_and(|answer| answer.contains("\"health\":\"true\""))
}

/// Sends one HTTP/1.0 `request` to the member on `port` and reads the
/// answer to its end; a read waits at most 2 s, so a member that accepts
/// but never answers fails the call instead of hanging the test.
fn exchange(port: u16, request: &str) -> std::io::Result<String> {
    let mut stream = TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(Duration::from_secs(2)))?;
    stream.write_all(request.as_bytes())?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer)?;
    Ok(answer)
}

impl Drop for Etcd {
    fn drop(&mut self) {
        for i in 0..self.members.len() {
            self.kill(i);
            let _ = std::fs::remove_dir_all(&self.members[i].dir);
        }
    }
}

/// A fresh scratch directory, removed on drop however the test ends.
#[derive(Debug)]
pub struct Scratch(PathBuf);

impl Scratch {
    pub fn new(prefix: &str) -> Scratch {
        Scratch(process::scratch_dir(prefix))
    }

    pub fn path(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
