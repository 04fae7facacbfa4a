//! Member and watcher processes (the crate's `ringwise-zookeeper-member`
//! binary), started through `setpriv --pdeathsig KILL` so they die with
//! the test, signalled by pid (SIGKILL, SIGTERM, SIGSTOP, SIGCONT) and
//! killed on drop. Their stdout is read line by line on a thread of its
//! own, so a test can wait for a line or read the last one.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_ringwise-zookeeper-member");

/// A running member or watcher process.
#[derive(Debug)]
pub struct Process {
    child: Option<Child>,
    lines: Arc<Mutex<Vec<String>>>,
}

impl Process {
    /// Registers `name` under `prefix` with a session of `ttl` seconds;
    /// returns once it printed `registered`.
    pub fn member(hosts: &[String], prefix: &str, name: &str, ttl: u64) -> Process {
        let process = Process::start(&[
            "--hosts",
            &hosts.join(","),
            "--prefix",
            prefix,
            "--name",
            name,
            "--ttl",
            &ttl.to_string(),
        ]);
        process.wait_line(Duration::from_secs(30), |l| l.starts_with("registered"));
        process
    }

    /// Follows `prefix`, printing `ring ZXID FINGERPRINT NAMES relists=N` lines.
    pub fn watcher(hosts: &[String], prefix: &str) -> Process {
        let process = Process::start(&["--hosts", &hosts.join(","), "--prefix", prefix, "--watch"]);
        process.wait_line(Duration::from_secs(30), |l| l.starts_with("ring"));
        process
    }

    fn start(args: &[&str]) -> Process {
        let mut child = Command::new("setpriv")
            .args(["--pdeathsig", "KILL", "--", BIN])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start the member binary (setpriv from util-linux)");
        let lines = Arc::new(Mutex::new(Vec::new()));
        let stdout = child.stdout.take().expect("piped");
        let sink = Arc::clone(&lines);
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                sink.lock().expect("lines").push(line);
            }
        });
        Process {
            child: Some(child),
            lines,
        }
    }

    /// The last line printed.
    pub fn last(&self) -> Option<String> {
        self.lines.lock().expect("lines").last().cloned()
    }

    /// Waits until a line satisfies `wanted`; panics after `within`.
    pub fn wait_line(&self, within: Duration, wanted: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + within;
        loop {
            if let Some(line) = self
                .lines
                .lock()
                .expect("lines")
                .iter()
                .rev()
                .find(|l| wanted(l))
            {
                return line.clone();
            }
            assert!(
                Instant::now() < deadline,
                "no such line within {within:?}; printed {:?}",
                self.lines.lock().expect("lines")
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Sends `SIG{name}` to the process by its pid.
    pub fn signal(&self, name: &str) {
        let Some(child) = &self.child else { return };
        let status = Command::new("kill")
            .args([&format!("-{name}"), &child.id().to_string()])
            .status()
            .expect("kill(1) runs");
        assert!(status.success(), "kill -{name}");
    }

    /// SIGKILL, and reaps it.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// SIGTERM, and waits for its exit; returns whether it exited 0.
    pub fn terminate(&mut self) -> bool {
        self.signal("TERM");
        let Some(mut child) = self.child.take() else {
            return false;
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if let Ok(Some(status)) = child.try_wait() {
                return status.success();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        let _ = child.wait();
        false
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        self.kill();
    }
}
