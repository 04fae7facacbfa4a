//! Exit codes: the `ringwise` CLI's table (crates/cli/src/failure.rs), one
//! for every binary of the workspace, and [`Failure`], an error carrying
//! its code through `anyhow`.
//!
//! The rule, as the CLI's: an option that is rejected is a usage error
//! (2), whatever rejects it (clap, a value parser, a check of options that
//! do not go together). What the run needs from outside and cannot get is
//! unavailable (69): the memcached program (or setpriv, or the proxy
//! placements' `ringwise-proxy`), a server that exits at start or does
//! not accept connections, a `--servers` address
//! where nothing listens, etcd, `ringwise join`. The scratch database and
//! the results and chart written are I/O (74). cachebench reads no
//! cluster file, so the CLI's 65 and 66 do not occur. SIGINT and SIGTERM
//! stop the run with 130, after every server started here is stopped.

use std::fmt;

/// The exit codes, as `--help` shows them.
pub const EXIT_CODES: &str = "\
Exit codes (the table of every ringwise binary):
  0   success
  2   bad command line: unknown option, an option's value out of its range
      (the message names the option, the value and the range), options that
      do not go together
  69  unavailable: the memcached program (or /usr/bin/setpriv, or the
      ringwise-proxy of a proxy placement) is missing, a server or the proxy
      exits at start or does not accept connections, a --servers address
      where nothing listens, etcd cannot be reached, ringwise join cannot
      start
  74  I/O error: the scratch database, writing results or the chart
  130 stopped by SIGINT or SIGTERM (every server started here is stopped)
  (65 and 66, bad or unreadable cluster data, do not occur: no cluster file)";

/// An error with the exit code it maps to.
#[derive(Debug)]
pub struct Failure {
    code: u8,
    error: anyhow::Error,
}

impl Failure {
    /// A rejected option (clap's own errors exit 2 too).
    pub fn usage(error: impl Into<anyhow::Error>) -> anyhow::Error {
        Failure::coded(2, error.into())
    }

    /// Something the run needs from outside is not there or not answering.
    pub fn unavailable(error: impl Into<anyhow::Error>) -> anyhow::Error {
        Failure::coded(69, error.into())
    }

    /// Reading or writing a file (the database, results, the chart) failed.
    pub fn io(error: impl Into<anyhow::Error>) -> anyhow::Error {
        Failure::coded(74, error.into())
    }

    /// `error` with `code`, unless a code was already given deeper in it
    /// (the most specific one wins).
    fn coded(code: u8, error: anyhow::Error) -> anyhow::Error {
        match code_of(&error) {
            Some(_) => error,
            None => anyhow::Error::new(Failure { code, error }),
        }
    }
}

/// The one line, as the wrapped error says it (its whole chain).
impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#}", self.error)
    }
}

/// No `source`: the message above already holds the chain, which `{:#}`
/// would otherwise print twice.
impl std::error::Error for Failure {}

/// The code given anywhere in `error`'s chain.
pub fn code_of(error: &anyhow::Error) -> Option<u8> {
    error
        .chain()
        .find_map(|e| e.downcast_ref::<Failure>())
        .map(|f| f.code)
}
