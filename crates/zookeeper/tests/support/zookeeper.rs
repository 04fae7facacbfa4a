//! Real ZooKeeper servers on loopback for the tests: one standalone server
//! or an ensemble of three, each in a fresh data directory with its own
//! `zoo.cfg`, on free ports. A server can be killed (SIGKILL), stopped
//! cleanly (SIGTERM), paused (SIGSTOP/SIGCONT) and started again on the
//! same directory and ports. Dropping the `Zk` kills every server still
//! running by its pid and removes the directories, however the test ends.
//!
//! The servers run straight from Debian's jars (`java -cp
//! /usr/share/java/zookeeper.jar org.apache.zookeeper.server.quorum.
//! QuorumPeerMain zoo.cfg`: without `server.N` lines it runs standalone),
//! never through the package's init script, each through `setpriv
//! --pdeathsig KILL` so it dies with the test thread that started it even
//! when the test process is killed. A tick of 250 ms makes the smallest
//! session timeout 500 ms (2 ticks), so registrars can ask for 1–2 s.
//!
//! `zookeeper` comes from Debian's `zookeeper` package, installed by
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

pub use process::free_port;

const JAR: &str = "/usr/share/java/zookeeper.jar";
const HINT: &str = "run scripts/install-test-deps (Debian packages zookeeper, a Java runtime, and util-linux for setpriv)";

/// One server.
#[derive(Debug)]
struct Server {
    client: u16,
    dir: PathBuf,
    child: Option<Child>,
}

/// A ZooKeeper ensemble of one or three servers on loopback.
#[derive(Debug)]
pub struct Zk {
    servers: Vec<Server>,
}

impl Zk {
    /// One standalone server, started and serving.
    pub fn single() -> Zk {
        Zk::start(1)
    }

    /// Three servers forming one ensemble, started and serving (a leader
    /// elected).
    pub fn ensemble() -> Zk {
        Zk::start(3)
    }

    fn start(n: usize) -> Zk {
        let ports: Vec<(u16, u16, u16)> = (0..n)
            .map(|_| (free_port(), free_port(), free_port()))
            .collect();
        let mut servers = Vec::new();
        for (i, (client, peer, election)) in ports.iter().enumerate() {
            let _ = (peer, election);
            let dir = process::scratch_dir(&format!("ringwise-zk{i}"));
            let mut cfg = format!(
                "tickTime=250\ninitLimit=20\nsyncLimit=10\ndataDir={}\nclientPort={client}\n\
                 clientPortAddress=127.0.0.1\nadmin.enableServer=false\n\
                 4lw.commands.whitelist=*\nmaxSessionTimeout=60000\nmaxClientCnxns=0\n\
                 autopurge.purgeInterval=0\n",
                dir.display()
            );
            if n > 1 {
                for (j, (_, peer, election)) in ports.iter().enumerate() {
                    cfg.push_str(&format!("server.{}=127.0.0.1:{peer}:{election}\n", j + 1));
                }
                std::fs::write(dir.join("myid"), format!("{}\n", i + 1)).expect("write myid");
            }
            std::fs::write(dir.join("zoo.cfg"), cfg).expect("write zoo.cfg");
            servers.push(Server {
                client: *client,
                dir,
                child: None,
            });
        }
        let mut zk = Zk { servers };
        for i in 0..n {
            zk.spawn(i);
        }
        for i in 0..n {
            zk.wait_serving(i);
        }
        zk
    }

    /// Every server, `HOST:PORT` each.
    pub fn hosts(&self) -> Vec<String> {
        (0..self.servers.len()).map(|i| self.host(i)).collect()
    }

    /// Server `i`'s client address.
    pub fn host(&self, i: usize) -> String {
        format!("127.0.0.1:{}", self.servers[i].client)
    }

    /// Server `i`'s pid while it runs.
    pub fn pid(&self, i: usize) -> Option<u32> {
        self.servers[i].child.as_ref().map(Child::id)
    }

    /// Kills server `i` with SIGKILL (its data stays).
    pub fn kill(&mut self, i: usize) {
        if let Some(mut child) = self.servers[i].child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Stops server `i` with SIGTERM and waits for it to exit.
    pub fn terminate(&mut self, i: usize) {
        self.signal(i, "TERM");
        if let Some(mut child) = self.servers[i].child.take() {
            let deadline = Instant::now() + Duration::from_secs(20);
            while Instant::now() < deadline {
                if child.try_wait().ok().flatten().is_some() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Stops server `i` with SIGSTOP (nothing answers; Drop kills it all
    /// the same).
    #[allow(dead_code, reason = "not every test binary pauses a server")]
    pub fn pause(&mut self, i: usize) {
        self.signal(i, "STOP");
    }

    /// Lets server `i` run again after [`Zk::pause`].
    #[allow(dead_code, reason = "not every test binary pauses a server")]
    pub fn resume(&mut self, i: usize) {
        self.signal(i, "CONT");
    }

    fn signal(&self, i: usize, name: &str) {
        let Some(pid) = self.pid(i) else { return };
        let status = Command::new("kill")
            .args([&format!("-{name}"), &pid.to_string()])
            .status()
            .expect("kill(1) runs");
        assert!(status.success(), "kill -{name} {pid}");
    }

    /// Starts server `i` again on its data directory and ports, and waits
    /// until it serves.
    pub fn restart(&mut self, i: usize) {
        self.spawn(i);
        self.wait_serving(i);
    }

    /// The server that leads the ensemble (`srvr` says `Mode: leader`).
    pub fn leader(&self) -> Option<usize> {
        (0..self.servers.len()).find(|&i| {
            self.servers[i].child.is_some()
                && four_letters(self.servers[i].client, "srvr")
                    .is_ok_and(|a| a.contains("Mode: leader"))
        })
    }

    fn spawn(&mut self, i: usize) {
        let server = &self.servers[i];
        let log = std::fs::File::create(server.dir.join("server.log")).expect("create the log");
        // Small heap, serial GC and the client compiler only: a JVM that
        // starts in about a second on a busy 2-core machine. setpriv execs
        // java: the pid is the server's, for the kill by pid.
        let mut command = process::server("java");
        command
            .args(["-Xmx192m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"])
            .arg("-Dzookeeper.jmx.log4j.disable=true")
            .args([
                "-cp",
                JAR,
                "org.apache.zookeeper.server.quorum.QuorumPeerMain",
            ])
            .arg(server.dir.join("zoo.cfg"))
            .current_dir(&server.dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log);
        if !std::path::Path::new(JAR).is_file() {
            panic!("{JAR} is missing; {HINT}");
        }
        let child = command
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start ZooKeeper: {e}; {HINT}"));
        self.servers[i].child = Some(child);
    }

    fn wait_serving(&mut self, i: usize) {
        let deadline = Instant::now() + Duration::from_secs(60);
        let port = self.servers[i].client;
        while Instant::now() < deadline {
            if let Some(status) = self.servers[i]
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten())
            {
                let log = std::fs::read_to_string(self.servers[i].dir.join("server.log"));
                panic!("ZooKeeper server {i} exited at start: {status}; {HINT}\n{log:?}");
            }
            if four_letters(port, "srvr").is_ok_and(|a| a.contains("Mode: ")) {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("ZooKeeper server {i} not serving within 60 s");
    }
}

/// A four-letter command's answer (`srvr`, `mntr`, `ruok`).
pub fn four_letters(port: u16, command: &str) -> std::io::Result<String> {
    let mut stream = TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(Duration::from_secs(2)))?;
    stream.write_all(command.as_bytes())?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer)?;
    Ok(answer)
}

impl Drop for Zk {
    fn drop(&mut self) {
        for i in 0..self.servers.len() {
            self.kill(i);
            let _ = std::fs::remove_dir_all(&self.servers[i].dir);
        }
    }
}
