//! memcached servers this program starts (`memcached -l 127.0.0.1 -p PORT`,
//! each a child process in the foreground) and the `ringwise join`
//! registrars of `--membership etcd://`: every child is killed by its pid
//! when its [`Child`] guard is dropped, however the run ends (an error, a
//! panic unwinding, SIGINT or SIGTERM, which set the stop flag that every
//! loop checks). A SIGKILL of this program runs no guard: for that, each
//! child is started through util-linux's `setpriv --pdeathsig KILL`, so
//! the kernel kills it when the thread that started it ends. Every child
//! is started from the main thread (servers before the run, the change
//! from the run's own loop), which lives as long as the process.

use std::io::ErrorKind;
use std::net::{TcpListener, TcpStream, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

/// How long a started memcached gets to accept connections.
const READY_WITHIN: Duration = Duration::from_secs(10);

/// util-linux's setpriv (Debian's essential packages install it), by
/// its absolute path: `setpriv --pdeathsig KILL -- PROGRAM ARGS` sets the
/// parent-death signal and execs PROGRAM, which keeps its pid. `unsafe`
/// is forbidden here, so there is no `pre_exec` to call prctl ourselves.
const SETPRIV: &str = "/usr/bin/setpriv";

/// A child process killed by its pid on drop, and by the kernel when this
/// program dies (see the module's doc).
#[derive(Debug)]
pub struct Child {
    child: std::process::Child,
}

/// Why `program` cannot be executed, as the kernel's execvp would find it
/// (a bare name on PATH, a path as is); `None` when it can. setpriv would
/// start either way and then exit 127 or 126, so the program is looked
/// up first: the error then says where it was looked for.
fn not_runnable(program: &Path) -> Option<String> {
    use std::os::unix::fs::PermissionsExt as _;
    let runnable = |path: &Path| {
        path.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if program.components().count() > 1 {
        return match (program.exists(), runnable(program)) {
            (_, true) => None,
            (true, false) => Some(format!("{} is not an executable file", program.display())),
            (false, _) => Some(format!("no program {}", program.display())),
        };
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    match std::env::split_paths(&path).any(|dir| runnable(&dir.join(program))) {
        true => None,
        false => Some(format!("no program \"{}\" on PATH", program.display())),
    }
}

impl Child {
    /// Starts `command` through `setpriv --pdeathsig KILL`; `what` names
    /// it in errors, `hint` says what to do when it cannot start. The
    /// error is one line: the program (not the whole command line), where
    /// it was looked for, and the hint. Call it from the main thread: the
    /// parent-death signal fires when the spawning thread ends.
    pub fn spawn(command: &Command, what: &str, hint: &str) -> Result<Child> {
        Child::spawn_logged(command, what, hint, None)
    }

    /// [`Child::spawn`] with the child's stdout and stderr appended to
    /// `log` (for a child whose own messages explain its failures).
    pub fn spawn_logged(
        command: &Command,
        what: &str,
        hint: &str,
        log: Option<&Path>,
    ) -> Result<Child> {
        let program = Path::new(command.get_program());
        if let Some(place) = not_runnable(program) {
            bail!("cannot start {what}: {place}; {hint}");
        }
        if not_runnable(Path::new(SETPRIV)).is_some() {
            bail!(
                "cannot start {what}: no program {SETPRIV} (util-linux's setpriv, which makes \
                 every server started here die with this program, even by SIGKILL); install \
                 util-linux (Debian: apt-get install util-linux)"
            );
        }
        let mut wrapped = Command::new(SETPRIV);
        wrapped.args(["--pdeathsig", "KILL", "--"]);
        wrapped.arg(program).args(command.get_args());
        for (key, value) in command.get_envs() {
            match value {
                Some(value) => wrapped.env(key, value),
                None => wrapped.env_remove(key),
            };
        }
        if let Some(dir) = command.get_current_dir() {
            wrapped.current_dir(dir);
        }
        let (stdout, stderr) = match log {
            None => (Stdio::null(), Stdio::null()),
            Some(path) => {
                let file = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .with_context(|| format!("create {}", path.display()))?;
                let copy = file
                    .try_clone()
                    .with_context(|| format!("open {}", path.display()))?;
                (Stdio::from(copy), Stdio::from(file))
            }
        };
        let spawned = wrapped
            .stdin(Stdio::null())
            .stdout(stdout)
            .stderr(stderr)
            .spawn();
        match spawned {
            Ok(child) => Ok(Child { child }),
            Err(e) => bail!("cannot start {what} ({SETPRIV}): {e}; {hint}"),
        }
    }

    /// The child's pid.
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// Sends `signal` (`HUP`...) by pid with kill(1) and goes on.
    pub fn signal(&self, signal: &str) -> Result<()> {
        let status = Command::new("kill")
            .args([&format!("-{signal}"), &self.id().to_string()])
            .status()
            .with_context(|| format!("run kill -{signal} {}", self.id()))?;
        if !status.success() {
            bail!("kill -{signal} {} failed ({status})", self.id());
        }
        Ok(())
    }

    /// Sends `signal` (`TERM`, `KILL`) by pid with kill(1), then waits
    /// for the child (at most 5 s, then SIGKILL).
    pub fn stop(mut self, signal: &str) {
        let sent = Command::new("kill")
            .args([&format!("-{signal}"), &self.id().to_string()])
            .status()
            .is_ok_and(|s| s.success());
        if sent {
            let deadline = Instant::now() + Duration::from_secs(5);
            while Instant::now() < deadline {
                if let Ok(Some(_)) = self.child.try_wait() {
                    return;
                }
                sleep(Duration::from_millis(10));
            }
        }
        // Drop kills and reaps.
    }

    /// Whether the child has exited.
    pub fn exited(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(Some(_)))
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A memcached started here.
#[derive(Debug)]
pub struct Memcached {
    /// `127.0.0.1:PORT`.
    pub address: String,
    process: Child,
}

impl Memcached {
    /// Starts `program` on a free loopback port with `megabytes` of memory
    /// and waits until it accepts a connection.
    pub fn start(program: &PathBuf, megabytes: u32) -> Result<Memcached> {
        let port = free_port()?;
        let address = format!("127.0.0.1:{port}");
        let mut command = Command::new(program);
        command.args(["-l", "127.0.0.1", "-p", &port.to_string(), "-U", "0"]);
        command.args(["-t", "1", "-c", "1024", "-m", &megabytes.to_string()]);
        // memcached refuses to run as root without -u; ignored otherwise.
        command.args(["-u", "root"]);
        let mut process = Child::spawn(
            &command,
            "memcached",
            "install Debian's `memcached` (scripts/install-test-deps does), or pass \
             --memcached PATH, or use running servers with --servers",
        )?;
        let deadline = Instant::now() + READY_WITHIN;
        while TcpStream::connect(&address).is_err() {
            if process.exited() {
                bail!("memcached on {address} exited at start (is the port taken?)");
            }
            if Instant::now() > deadline {
                bail!("memcached on {address} did not accept connections within 10 s");
            }
            sleep(Duration::from_millis(5));
        }
        Ok(Memcached { address, process })
    }

    /// Its pid.
    pub fn pid(&self) -> u32 {
        self.process.id()
    }

    /// Stops it with `signal` (`KILL` for `--kill`).
    pub fn stop(self, signal: &str) {
        self.process.stop(signal);
    }
}

/// How long a server of `--servers` gets to accept a connection.
const ANSWER_WITHIN: Duration = Duration::from_secs(2);

/// Checks that a memcached of `--servers` accepts connections at `address`
/// (`HOST:PORT`), so that a server that is not running is said at once, by
/// its address, instead of as a pool's timeout in the first request.
pub fn check_running(address: &str) -> Result<()> {
    let start = "start memcached there, or list a running server in --servers";
    let targets: Vec<_> = match address.to_socket_addrs() {
        Ok(targets) => targets.collect(),
        Err(e) => {
            bail!("memcached at {address} (--servers): cannot resolve it ({e}); write HOST:PORT")
        }
    };
    let mut last = None;
    for target in &targets {
        match TcpStream::connect_timeout(target, ANSWER_WITHIN) {
            Ok(_) => return Ok(()),
            Err(e) => last = Some(e),
        }
    }
    let why = match last {
        Some(e) if e.kind() == ErrorKind::ConnectionRefused => {
            "nothing listens there (connection refused)".to_owned()
        }
        Some(e) if matches!(e.kind(), ErrorKind::TimedOut | ErrorKind::WouldBlock) => {
            format!("no answer within {} s", ANSWER_WITHIN.as_secs())
        }
        Some(e) => format!("cannot connect ({e})"),
        None => "the name has no address".to_owned(),
    };
    bail!("memcached at {address} (--servers): {why}; {start}")
}

/// A loopback port that was free a moment ago.
pub fn free_port() -> Result<u16> {
    let listener = TcpListener::bind("127.0.0.1:0").context("bind a loopback port")?;
    Ok(listener.local_addr().context("local address")?.port())
}
