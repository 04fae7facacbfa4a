//! Real peers as child processes: python3 scripts run to completion, and
//! servers (redis-server, memcached, nutcracker, nginx) that are killed by
//! their pid when the test ends, however it ends: by their [`Guard`] when
//! the test returns or panics, and by the kernel when the test binary is
//! killed (SIGKILL, a CI timeout), since every server is started through
//! util-linux's `setpriv --pdeathsig KILL` ([`server`]). `unsafe` is
//! forbidden, so there is no `pre_exec` to set the signal ourselves.
//!
//! A missing program fails the test with the way to install it: these tests
//! are never skipped.

use std::ffi::OsStr;
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

/// util-linux's setpriv, by its absolute path (Debian's essential
/// packages install it).
pub const SETPRIV: &str = "/usr/bin/setpriv";

/// The command that starts `program` as a server: `setpriv --pdeathsig
/// KILL -- program`, which execs `program` (same pid) with the parent-death
/// signal set. The signal fires when the *thread* that spawned it ends:
/// spawn from the test's own thread (each test runs on one, which outlives
/// the server's [`Guard`]), never from a short-lived helper thread.
pub fn server(program: impl AsRef<OsStr>) -> Command {
    let mut command = Command::new(SETPRIV);
    command.args(["--pdeathsig", "KILL", "--"]).arg(program);
    command
}

/// Whether `program` is found as execvp would find it: a path as is, a
/// bare name on PATH.
fn installed(program: &OsStr) -> bool {
    let program = Path::new(program);
    if program.components().count() > 1 {
        return program.is_file();
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path).any(|dir| dir.join(program).is_file())
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
    /// Starts `command`, made by [`server`], which keeps its files in
    /// `dir`. Panics with `hint` (after removing `dir`) if the program
    /// cannot be started, and when `command` was not made by [`server`]:
    /// a server started otherwise would outlive a killed test binary.
    pub fn spawn(command: &mut Command, dir: PathBuf, hint: &str) -> Guard {
        let args: Vec<&OsStr> = command.get_args().collect();
        let wrapped = command.get_program() == SETPRIV
            && args.len() > 3
            && args[..3] == ["--pdeathsig", "KILL", "--"];
        if !wrapped {
            let _ = fs::remove_dir_all(&dir);
            panic!(
                "start a server with process::server(PROGRAM), not {command:?}: it must die with the test binary"
            );
        }
        // setpriv itself would start and then exit 127 for a missing
        // program: look it up first, to panic with the hint.
        let program = args[3].to_string_lossy().into_owned();
        if !installed(args[3]) {
            let _ = fs::remove_dir_all(&dir);
            panic!("`{program}` is not installed: {hint}");
        }
        if !Path::new(SETPRIV).is_file() {
            let _ = fs::remove_dir_all(&dir);
            panic!(
                "{SETPRIV} is not installed (util-linux's setpriv, which makes every test server die with the test binary): apt-get install util-linux"
            );
        }
        match command.spawn() {
            Ok(child) => Guard { child, dir },
            Err(err) => {
                let _ = fs::remove_dir_all(&dir);
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
