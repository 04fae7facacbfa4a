//! `ringwise`: look keys up on a cluster, inspect its balance, and run the
//! seed article's experiments.
//!
//! Exit codes, the same for every command:
//!
//! - 0: success (also when a reader such as `head` closes stdout early);
//! - 2: bad command line or option value (EX_USAGE-like, clap's own code):
//!   unknown option, missing `--cluster`/`--nodes`, a `--format` the command
//!   cannot write, an unknown `--algo` or `--hash` name (checked against the
//!   core's registries before anything runs), `--zones` on an algorithm
//!   without zones, a bad `--epsilon`, every bad `simulate` option;
//! - 65 (EX_DATAERR): invalid cluster definition: a bad node, weight or
//!   parameter in `--nodes` or the cluster file (including its `algorithm`
//!   and `hash` names), a `--secret` that does not fit the hash;
//! - 66 (EX_NOINPUT): the cluster file cannot be read;
//! - 74 (EX_IOERR): reading keys, writing results or writing charts failed.

mod algo;
mod cluster;
mod format;
mod inspect;
mod lookup;
mod simulate;

use std::io::ErrorKind;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Consistent hashing: which node owns a key.
#[derive(Debug, Parser)]
#[command(name = "ringwise", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Print the node (or replica list) of each key.
    Lookup(lookup::Args),
    /// Print points and exact ownership per node.
    Inspect(inspect::Args),
    /// Run the seed article's experiments: keys moved, spread, failure, cost.
    Simulate(simulate::Args),
}

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

    /// Writing an output file failed.
    pub fn io_other(error: impl Into<anyhow::Error>) -> Self {
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
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Lookup(args) => lookup::run(args),
        Command::Inspect(args) => inspect::run(args),
        Command::Simulate(args) => simulate::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // `ringwise lookup ... | head` closes our stdout early: not an error.
        Err(f) if broken_pipe(&f.error) => ExitCode::SUCCESS,
        Err(f) => {
            eprintln!("ringwise: error: {:#}", f.error);
            ExitCode::from(f.code)
        }
    }
}

fn broken_pipe(error: &anyhow::Error) -> bool {
    error
        .downcast_ref::<std::io::Error>()
        .is_some_and(|e| e.kind() == ErrorKind::BrokenPipe)
}
