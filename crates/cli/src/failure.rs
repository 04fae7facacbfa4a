//! [`Failure`]: an error with the exit code it maps to, its constructors
//! (one per exit code), and how the process reports it and exits.
//!
//! Exit codes, the same for every command ([`EXIT_CODES`], also shown by
//! `--help`). The rule: an option that is rejected is a usage error (2),
//! whatever rejects it (clap, a value parser, the core when the option's
//! value reaches it, a combination of options); the cluster itself — the
//! node list of `--nodes`, anything in a cluster file — is data (65):
//!
//! - 0: success (also when a reader such as `head` closes stdout early);
//! - 2: bad command line: unknown option, missing `--cluster`/`--nodes`, a
//!   `--format` the command cannot write, an unknown `--algo` or `--hash`
//!   name, `--vnodes 0`, `--epsilon 0`, a `--table-size` that is not prime,
//!   `--hash redis-crc16` with an algorithm other than slots, a `--secret`
//!   that does not fit the hash, `--zones` on an algorithm without zones,
//!   every bad `simulate` option;
//! - 65 (EX_DATAERR): invalid cluster: a bad node or weight in `--nodes`,
//!   anything wrong in the cluster file (`epsilon = 0`, a bad name, a file
//!   that is not UTF-8...), a ring over its point budget; for `token
//!   --composite`, a key whose column is over 65535 bytes; a key line over
//!   1 MiB (`keys::MAX_KEY_BYTES`);
//! - 66 (EX_NOINPUT): the cluster file cannot be read;
//! - 69 (EX_UNAVAILABLE): the membership source (etcd, ZooKeeper, gossip
//!   peers) cannot be reached or refused the request (`join`, `watch`,
//!   `config`, `--membership`, `--etcd`); a name another live process
//!   holds (`join --name`) is 2, a bad value stored in the source 65;
//! - 74 (EX_IOERR): reading keys, writing results, charts, cluster files or
//!   man pages failed (help and `--version` included).

use std::io::ErrorKind;
use std::process::ExitCode;

/// The exit codes, as `--help` shows them (docs/exit-codes.md has the same
/// table, checked by the docs tests).
pub const EXIT_CODES: &str = "\
Exit codes (every command):
  0   success
  2   bad command line: unknown option or name, an option's value out of range
      (--vnodes 0, --epsilon 0, ...), options that do not go together
  65  bad cluster data: a node or weight in --nodes, anything in the cluster
      file (including a file that is not UTF-8), a ring over its point budget,
      a key line over 1 MiB
  66  the cluster file cannot be read
  69  the membership source (etcd, ZooKeeper, gossip peers) cannot be reached
      or refused the request
  74  I/O error reading keys or writing results, charts, cluster files or man
      pages (help and --version included)";

/// An error with the exit code it maps to.
#[derive(Debug)]
pub struct Failure {
    code: u8,
    error: anyhow::Error,
}

impl Failure {
    /// An option's value is invalid (same exit code as clap's own errors).
    pub fn usage(error: impl Into<anyhow::Error>) -> Self {
        Failure {
            code: 2,
            error: error.into(),
        }
    }

    /// The cluster definition is invalid (bad node, weight, hash...).
    pub fn data(error: impl Into<anyhow::Error>) -> Self {
        Failure {
            code: 65,
            error: error.into(),
        }
    }

    /// An input file could not be read.
    pub fn no_input(error: impl Into<anyhow::Error>) -> Self {
        Failure {
            code: 66,
            error: error.into(),
        }
    }

    /// etcd cannot be reached or refused the request (EX_UNAVAILABLE).
    pub fn unavailable(error: impl Into<anyhow::Error>) -> Self {
        Failure {
            code: 69,
            error: error.into(),
        }
    }

    /// Writing an output file failed.
    pub fn io_other(error: impl Into<anyhow::Error>) -> Self {
        Failure {
            code: 74,
            error: error.into(),
        }
    }

    /// An output file could not be written (74); the message names the
    /// file, what failed and that the file is as it was.
    pub fn write(error: ringwise_sim::files::WriteError) -> Self {
        Failure {
            code: 74,
            error: error.into(),
        }
    }

    /// Reading keys or writing results failed.
    pub fn io(error: std::io::Error) -> Self {
        Failure {
            code: 74,
            error: error.into(),
        }
    }

    /// Says the error on stderr and gives its exit code; a closed stdout
    /// (`ringwise lookup ... | head`) is not an error: silent success.
    pub fn report(self) -> ExitCode {
        if broken_pipe(&self.error) {
            return ExitCode::SUCCESS;
        }
        say!("ringwise: error: {:#}", self.error);
        ExitCode::from(self.code)
    }
}

/// Reading keys or writing results failed (for code generic over its error).
/// `InvalidData` is input the commands refuse (a key line over the cap):
/// bad data (65), not a failing device (74).
impl From<std::io::Error> for Failure {
    fn from(error: std::io::Error) -> Self {
        match error.kind() {
            std::io::ErrorKind::InvalidData => Failure::data(error),
            _ => Failure::io(error),
        }
    }
}

fn broken_pipe(error: &anyhow::Error) -> bool {
    error
        .downcast_ref::<std::io::Error>()
        .is_some_and(|e| e.kind() == ErrorKind::BrokenPipe)
}
