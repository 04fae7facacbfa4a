//! Starting memcached, the proxy and nutcracker, and talking to them.

use std::fs::{self, File};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::Stdio;
use std::thread::sleep;
use std::time::{Duration, Instant};

use crate::process::{self, Guard, free_port, scratch_dir};

pub const HINT: &str = "run scripts/install-test-deps (it installs the Debian packages \
                        memcached and nutcracker); these tests are never skipped";

const READY_WITHIN: Duration = Duration::from_secs(20);

/// A running server: its process (killed on drop) and its port.
pub struct Server {
    pub process: Guard,
    pub port: u16,
}

impl Server {
    /// `127.0.0.1:PORT`.
    pub fn address(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    pub fn log(&self) -> String {
        fs::read_to_string(self.process.dir().join("log")).unwrap_or_default()
    }

    /// Waits until `ready` holds, failing with the log if the process
    /// exits or the time runs out.
    fn wait(mut self, what: &str, ready: impl Fn(&Server) -> bool) -> Server {
        let deadline = Instant::now() + READY_WITHIN;
        while !ready(&self) {
            if let Some(status) = self.process.exited() {
                panic!("{what} exited ({status}): {}", self.log());
            }
            assert!(
                Instant::now() < deadline,
                "{what} not ready within {READY_WITHIN:?}: {}",
                self.log()
            );
            sleep(Duration::from_millis(10));
        }
        self
    }
}

fn logged(command: &mut std::process::Command, dir: &Path) {
    let log = File::create(dir.join("log")).expect("create the log file");
    command
        .stdin(Stdio::null())
        .stdout(log.try_clone().expect("clone the log handle"))
        .stderr(log);
}

/// A fresh memcached (one thread, 64 MB), ready when its `stats` show its
/// own pid (not another program's on a reused port).
pub fn memcached() -> Server {
    memcached_on(free_port())
}

/// [`memcached`] on `port` (a server started again where one died).
pub fn memcached_on(port: u16) -> Server {
    let dir = scratch_dir("ringwise-proxy-memcached");
    let mut command = process::server("memcached");
    command
        .args(["-l", "127.0.0.1", "-p", &port.to_string(), "-U", "0"])
        .args(["-u", "root", "-t", "1", "-m", "64"]);
    logged(&mut command, &dir);
    let server = Server {
        process: Guard::spawn(&mut command, dir, HINT),
        port,
    };
    let pid = server.process.id();
    server.wait("memcached", |s| {
        let stats = exchange_until(s.port, b"stats\r\n", b"END\r\n");
        String::from_utf8_lossy(&stats).contains(&format!("STAT pid {pid}\r\n"))
    })
}

/// The proxy with `args` (`--cluster FILE` or `--nutcracker FILE`),
/// listening on a free port, ready once it accepts connections.
pub fn proxy(args: &[&str]) -> Server {
    let port = free_port();
    let dir = scratch_dir("ringwise-proxy");
    // RINGWISE_PROXY_BIN runs another build of the proxy under the same
    // tests (an older one, to see that a test fails without a fix).
    let binary = std::env::var("RINGWISE_PROXY_BIN")
        .unwrap_or_else(|_| env!("CARGO_BIN_EXE_ringwise-proxy").to_owned());
    let mut command = process::server(binary);
    command
        .args(["--listen", &format!("127.0.0.1:{port}")])
        .args(args);
    logged(&mut command, &dir);
    let server = Server {
        process: Guard::spawn(
            &mut command,
            dir,
            "cargo builds ringwise-proxy with its tests",
        ),
        port,
    };
    server.wait("ringwise-proxy", |s| s.log().contains("listening on"))
}

/// nutcracker on `yaml` (its pool's `listen:` must be `port`), checked
/// first with `-t`.
pub fn nutcracker(yaml: &str, port: u16) -> Server {
    let binary = match Path::new("/usr/sbin/nutcracker").exists() {
        true => "/usr/sbin/nutcracker",
        false => "nutcracker",
    };
    let dir = scratch_dir("ringwise-proxy-nutcracker");
    let conf = dir.join("nutcracker.yml");
    fs::write(&conf, yaml).expect("write nutcracker.yml");
    process::output(
        std::process::Command::new(binary)
            .arg("-t")
            .arg("-c")
            .arg(&conf),
        HINT,
    );
    let mut command = process::server(binary);
    command
        .arg("-c")
        .arg(&conf)
        .arg("-o")
        .arg(dir.join("nutcracker.log"))
        .arg("-p")
        .arg(dir.join("nutcracker.pid"))
        .args(["-s", &free_port().to_string(), "-a", "127.0.0.1"]);
    logged(&mut command, &dir);
    let server = Server {
        process: Guard::spawn(&mut command, dir, HINT),
        port,
    };
    server.wait("nutcracker", |s| {
        TcpStream::connect(("127.0.0.1", s.port)).is_ok()
    })
}

/// Sends `request` on a new connection and reads until the answer ends
/// with `end` (or the server closes, or 20 s pass).
pub fn exchange_until(port: u16, request: &[u8], end: &[u8]) -> Vec<u8> {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else {
        return Vec::new();
    };
    stream
        .set_read_timeout(Some(Duration::from_millis(200)))
        .expect("set a read timeout");
    // Write from another thread: a long pipeline must not wait for its
    // answers to be read.
    let mut writer = stream.try_clone().expect("clone the stream");
    let request = request.to_vec();
    let sending = std::thread::spawn(move || writer.write_all(&request));
    let mut answer = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut chunk = vec![0u8; 64 * 1024];
    while !answer.ends_with(end) && Instant::now() < deadline {
        match stream.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => answer.extend_from_slice(&chunk[..n]),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(_) => break,
        }
    }
    let _ = sending.join();
    answer
}

/// Sends `request` and reads `len` bytes of answers (or what came
/// within 20 s): for nutcracker, which has no `mn`.
pub fn exchange_len(port: u16, request: &[u8], len: usize) -> Vec<u8> {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else {
        return Vec::new();
    };
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .expect("set a read timeout");
    let mut writer = stream.try_clone().expect("clone the stream");
    let request = request.to_vec();
    let sending = std::thread::spawn(move || writer.write_all(&request));
    let mut answer = vec![0u8; len];
    let mut got = 0;
    while got < len {
        match stream.read(&mut answer[got..]) {
            Ok(0) | Err(_) => break,
            Ok(n) => got += n,
        }
    }
    answer.truncate(got);
    let _ = sending.join();
    answer
}

/// Sends `request` followed by `mn` and returns the answers before
/// memcached's `MN` (which the proxy answers in order too).
pub fn exchange(port: u16, request: &[u8]) -> Vec<u8> {
    let mut with_sentinel = request.to_vec();
    with_sentinel.extend_from_slice(b"mn\r\n");
    let mut answer = exchange_until(port, &with_sentinel, b"MN\r\n");
    assert!(
        answer.ends_with(b"MN\r\n"),
        "no MN after {} bytes",
        answer.len()
    );
    answer.truncate(answer.len() - 4);
    answer
}

/// The value memcached `port` holds for `key`, if any.
pub fn held(port: u16, key: &[u8]) -> Option<Vec<u8>> {
    let mut request = b"get ".to_vec();
    request.extend_from_slice(key);
    request.extend_from_slice(b"\r\n");
    let answer = exchange_until(port, &request, b"END\r\n");
    let header_end = answer.windows(2).position(|w| w == b"\r\n")?;
    let header = &answer[..header_end];
    if !header.starts_with(b"VALUE ") {
        return None;
    }
    let len: usize = std::str::from_utf8(header.rsplit(|&b| b == b' ').next()?)
        .ok()?
        .parse()
        .ok()?;
    Some(answer[header_end + 2..header_end + 2 + len].to_vec())
}

/// A cluster file of `algorithm` over `servers` (node names `host:port`).
pub fn cluster_file(dir: &Path, algorithm: &str, servers: &[Server]) -> String {
    let mut toml = format!("algorithm = \"{algorithm}\"\n");
    for server in servers {
        toml.push_str(&format!("[[nodes]]\nname = \"{}\"\n", server.address()));
    }
    let path = dir.join(format!("{algorithm}.toml"));
    fs::write(&path, toml).expect("write the cluster file");
    path.to_string_lossy().into_owned()
}
