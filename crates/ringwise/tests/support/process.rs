//! Real peers as child processes: python3 scripts run to completion, and
//! servers (redis-server) that are killed by their pid when the test ends,
//! however it ends.
//!
//! A missing program fails the test with the way to install it: these tests
//! are never skipped.

use std::fs;
use std::io::ErrorKind;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus};
use std::time::{SystemTime, UNIX_EPOCH};

/// Runs `command` to completion and returns its standard output. Panics
/// with `hint` if the program cannot be started, and with its standard
/// error if it fails.
pub fn output(command: &mut Command, hint: &str) -> Vec<u8> {
    let shown = format!("{command:?}");
    let output = command
        .output()
        .unwrap_or_else(|err| panic!("could not run `{shown}`: {err}. {hint}"));
    assert!(
        output.status.success(),
        "`{shown}` failed ({}):\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    output.stdout
}

/// A fresh directory under the system's temporary directory, unique to
/// this process and moment.
pub fn scratch_dir(prefix: &str) -> PathBuf {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let dir = std::env::temp_dir().join(format!("{prefix}-{}-{nanos}", std::process::id()));
    fs::create_dir_all(&dir).expect("create a temporary directory");
    dir
}

/// A loopback port that was free a moment ago, and that no other call in
/// this process has handed out. The kernel may give a port it just freed
/// to the next `bind(0)`: two tests running at once could then start two
/// servers on one port, the second fail to bind, and its health check be
/// answered by the first (seen once under load: a paused etcd that still
/// answered, because the answer came from another test's etcd).
pub fn free_port() -> u16 {
    static GIVEN: std::sync::Mutex<Vec<u16>> = std::sync::Mutex::new(Vec::new());
    let mut given = GIVEN
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    loop {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
        let port = listener.local_addr().expect("local address").port();
        if !given.contains(&port) {
            given.push(port);
            return port;
        }
    }
}

/// A running child process and its scratch directory. Dropping it kills
/// the child by its pid (`Child::kill`, then `wait`) and removes the
/// directory, so a failing assertion cannot leave a server behind.
#[derive(Debug)]
pub struct Guard {
    child: Child,
    dir: PathBuf,
}

impl Guard {
    /// Starts `command`, which keeps its files in `dir`. Panics with `hint`
    /// (after removing `dir`) if the program cannot be started.
    pub fn spawn(command: &mut Command, dir: PathBuf, hint: &str) -> Guard {
        match command.spawn() {
            Ok(child) => Guard { child, dir },
            Err(err) => {
                let _ = fs::remove_dir_all(&dir);
                let program = command.get_program().to_string_lossy().into_owned();
                if err.kind() == ErrorKind::NotFound {
                    panic!("`{program}` is not installed: {hint}");
                }
                panic!("could not start `{program}`: {err}; {hint}");
            }
        }
    }

    /// The child's pid.
    #[allow(dead_code, reason = "the CLI's twemproxy test asks memcached for it")]
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// The child's exit status if it has exited.
    pub fn exited(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// The scratch directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = fs::remove_dir_all(&self.dir);
    }
}
