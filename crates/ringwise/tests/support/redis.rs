//! A real `redis-server` in cluster mode on a free loopback port, and a
//! plain RESP connection to it: shared by the key-slot test of this crate
//! and the CLI's Redis Cluster test (which includes this file by path).
//!
//! Config, data and log live in a fresh scratch directory, persistence is
//! off, and the [`Guard`] kills the server by its pid and removes the
//! directory when dropped, so it stops even when an assertion fails.

#![allow(dead_code)] // each test binary uses its own part of it

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::Stdio;
use std::thread::sleep;
use std::time::{Duration, Instant};

use super::process::{self, Guard, free_port, scratch_dir};

const INSTALL_HINT: &str = "run scripts/install-test-deps (it installs the Debian package \
                            `redis-server`); this test is never skipped";

/// A running `redis-server`, in cluster mode unless made by
/// [`Server::spawn_plain`].
pub struct Server {
    process: Guard,
    pub port: u16,
}

impl Server {
    /// Starts a server (its scratch directory named after `tag`) without
    /// waiting for it.
    pub fn spawn(tag: &str) -> Server {
        Server::spawn_with(tag, true)
    }

    /// A plain server, without cluster mode (a client-sharded pool's).
    pub fn spawn_plain(tag: &str) -> Server {
        Server::spawn_with(tag, false)
    }

    fn spawn_with(tag: &str, cluster: bool) -> Server {
        let dir = scratch_dir(tag);
        let log = File::create(dir.join("redis.log")).expect("create the log file");
        let port = free_port();
        let mut command = process::server("redis-server");
        command.args(["--port", &port.to_string(), "--bind", "127.0.0.1"]);
        if cluster {
            command
                .args(["--cluster-enabled", "yes", "--cluster-config-file"])
                .arg(dir.join("nodes.conf"));
        }
        command
            .arg("--dir")
            .arg(&dir)
            .args(["--save", "", "--appendonly", "no"])
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("clone the log handle"))
            .stderr(log);
        Server {
            process: Guard::spawn(&mut command, dir, INSTALL_HINT),
            port,
        }
    }

    /// Starts a server and waits until it answers PING; retries with a new
    /// port if the chosen one was taken in between.
    pub fn start(tag: &str, within: Duration) -> (Server, Connection) {
        let mut last_failure = String::new();
        for _ in 0..3 {
            let mut server = Server::spawn(tag);
            match server.ready(Instant::now() + within) {
                Ok(conn) => return (server, conn),
                Err(why) => last_failure = why,
            }
        }
        panic!("redis-server did not start: {last_failure}");
    }

    /// `127.0.0.1:PORT`, as `-MOVED` redirects name it.
    pub fn name(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    pub fn connect(&self) -> std::io::Result<Connection> {
        let stream = TcpStream::connect(("127.0.0.1", self.port))?;
        stream.set_read_timeout(Some(Duration::from_secs(10)))?;
        Ok(Connection {
            reader: BufReader::new(stream.try_clone()?),
            stream,
        })
    }

    /// A connection once the server answers PING, or why not by `deadline`.
    pub fn ready(&mut self, deadline: Instant) -> Result<Connection, String> {
        loop {
            if let Some(status) = self.process.exited() {
                return Err(format!(
                    "redis-server exited ({status}); log:\n{}",
                    self.log()
                ));
            }
            if let Ok(mut conn) = self.connect()
                && conn.command(&[b"PING"]).is_ok_and(|r| r == "PONG")
            {
                return Ok(conn);
            }
            if Instant::now() > deadline {
                return Err(format!("no PONG; log:\n{}", self.log()));
            }
            sleep(Duration::from_millis(20));
        }
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.process.dir().join("redis.log")).unwrap_or_default()
    }
}

pub struct Connection {
    pub stream: TcpStream,
    reader: BufReader<TcpStream>,
}

impl Connection {
    /// Sends one command and returns its reply (see [`Connection::reply`]).
    pub fn command(&mut self, args: &[&[u8]]) -> std::io::Result<String> {
        self.stream.write_all(&encode(args))?;
        self.reply()
    }

    /// Sends a command that must answer `+OK`.
    pub fn ok(&mut self, args: &[&[u8]]) {
        let reply = self.command(args).expect("a reply");
        assert_eq!(reply, "OK", "{:?}", String::from_utf8_lossy(&args.concat()));
    }

    /// A simple reply or error without its `+`/`-`, an integer with its
    /// `:`, a bulk string's text, or `nil`.
    pub fn reply(&mut self) -> std::io::Result<String> {
        let mut line = String::new();
        self.reader.read_line(&mut line)?;
        let line = line.trim_end_matches("\r\n");
        Ok(match line.split_at(1.min(line.len())) {
            ("+" | "-", text) => text.to_owned(),
            ("$", "-1") => "nil".to_owned(),
            ("$", length) => {
                let length: usize = length.parse().expect("a bulk length");
                let mut bulk = vec![0; length + 2];
                self.reader.read_exact(&mut bulk)?;
                String::from_utf8_lossy(&bulk[..length]).into_owned()
            }
            _ => line.to_owned(),
        })
    }
}

/// A whole reply, arrays included (`CLUSTER SLOTS`, `CLUSTER
/// GETKEYSINSLOT`): each element as [`Connection::reply`] gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resp {
    Text(String),
    Array(Vec<Resp>),
}

impl Resp {
    /// The text of a non-array reply.
    pub fn text(&self) -> &str {
        match self {
            Resp::Text(text) => text,
            Resp::Array(_) => panic!("an array where a single reply was expected: {self:?}"),
        }
    }

    /// The elements of an array reply (none for a nil array).
    pub fn items(&self) -> &[Resp] {
        match self {
            Resp::Array(items) => items,
            Resp::Text(text) => panic!("{text:?} where an array was expected"),
        }
    }
}

impl Connection {
    /// Sends one command and reads its whole reply, arrays included.
    pub fn query(&mut self, args: &[&[u8]]) -> std::io::Result<Resp> {
        self.stream.write_all(&encode(args))?;
        self.value()
    }

    /// Reads one whole reply: an array's elements recursively.
    pub fn value(&mut self) -> std::io::Result<Resp> {
        // Only the type byte tells an array from a bulk string that
        // starts with `*`: peek at it before `reply` reads the line.
        let array = self.reader.fill_buf()?.first() == Some(&b'*');
        let head = self.reply()?;
        if !array {
            return Ok(Resp::Text(head));
        }
        // `*-1` is a nil array.
        let count = head[1..].parse::<i64>().expect("an array length");
        let count = usize::try_from(count).unwrap_or(0);
        let items = (0..count).map(|_| self.value()).collect::<Result<_, _>>()?;
        Ok(Resp::Array(items))
    }
}

/// A RESP array of bulk strings: binary-safe.
pub fn encode(args: &[&[u8]]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", args.len()).into_bytes();
    for arg in args {
        out.extend_from_slice(format!("${}\r\n", arg.len()).as_bytes());
        out.extend_from_slice(arg);
        out.extend_from_slice(b"\r\n");
    }
    out
}
