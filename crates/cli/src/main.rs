//! `ringwise`: look keys up on a cluster, inspect its balance, and run the
//! seed article's experiments.
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
//! - 69 (EX_UNAVAILABLE): etcd cannot be reached or refused the request
//!   (`join`, `watch`, `config`, `--etcd`); a name another live process
//!   holds (`join --name`) is 2, a bad value stored in etcd 65;
//! - 74 (EX_IOERR): reading keys, writing results or writing charts failed.

/// `eprintln!` that cannot panic: when stderr is a closed pipe (its reader
/// went away) the message is lost, never the command's own exit code.
/// Every message of the CLI goes through it.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

mod algo;
mod cluster;
mod format;
mod inspect;
mod keys;
mod live;
mod lookup;
mod nodes;
mod params;
mod plan;
mod simulate;
mod svg;
mod token;

use std::io::ErrorKind;
use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

/// The exit codes, as `--help` shows them (the README has the same table).
pub const EXIT_CODES: &str = "\
Exit codes (every command):
  0   success
  2   bad command line: unknown option or name, an option's value out of range
      (--vnodes 0, --epsilon 0, ...), options that do not go together
  65  bad cluster data: a node or weight in --nodes, anything in the cluster
      file (including a file that is not UTF-8), a ring over its point budget,
      a key line over 1 MiB
  66  the cluster file cannot be read
  69  etcd cannot be reached (within --etcd-timeout) or refused the request
  74  I/O error reading keys or writing results or charts";

/// Consistent hashing: which node owns a key.
#[derive(Debug, Parser)]
#[command(name = "ringwise", version, about, after_help = EXIT_CODES)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Print the node (or replica list) of each key.
    ///
    /// Cost: one build of the placement (O(P) for rings, O(M) for maglev's table, O(N)
    /// otherwise), then per key one hash and one lookup: O(1) for rings,
    /// maglev and slots, O(log N) for jump and its kin, O(N) for
    /// rendezvous (weighted: 6 to 10 times unweighted, a logarithm per
    /// node); O(R) more for R replicas; --epsilon O(K · (1 + spills)),
    /// holding every key.
    #[command(after_help = EXIT_CODES)]
    Lookup(lookup::Args),
    /// Print points and exact ownership per node.
    ///
    /// Cost: one build, then exact shares from a ring's arcs (O(P)) or a table (O(M)); other
    /// algorithms are sampled on 1,000,000 keys (rendezvous: 3e8/N keys,
    /// at least 10,000, at O(N) each).
    #[command(after_help = EXIT_CODES)]
    Inspect(inspect::Args),
    /// What a membership change moves, from whom to whom, how many bytes,
    /// what it costs: exact for rings and slot tables, sampled otherwise.
    ///
    /// Cost: two builds and one diff, O(P_old + P_new) for rings, O(M)
    /// for tables, 2^20 sampled lookups in each placement otherwise;
    /// --keys adds two lookups per key.
    #[command(after_help = EXIT_CODES)]
    Plan(plan::Args),
    /// Run the seed article's experiments: keys moved, spread, failure, cost.
    ///
    /// Cost: each experiment builds its placements and looks up
    /// every one of --keys K keys in each (O(K) lookups per placement);
    /// the run's size is checked before anything is built.
    #[command(after_help = EXIT_CODES)]
    Simulate(simulate::Args),
    /// Print the Cassandra (Murmur3Partitioner) token of each key: one
    /// Murmur3 per key, O(key length).
    #[command(after_help = EXIT_CODES)]
    Token(token::Args),
    /// Register this node in etcd under a lease and stay until SIGINT or
    /// SIGTERM, then revoke it (the node leaves at once). One etcd round
    /// trip per TTL/3.
    #[command(after_help = EXIT_CODES)]
    Join(live::JoinArgs),
    /// Follow the ring in etcd: print it, then every new revision
    /// (members, shares, fraction moved), until SIGINT or SIGTERM. Per
    /// change: one build of the placement, exact shares and moved fraction
    /// for rings (O(P)), 65,536 samples otherwise.
    #[command(after_help = EXIT_CODES)]
    Watch(live::WatchArgs),
    /// Show or change the cluster's settings in etcd (PREFIX/config),
    /// checked against the members before they are written: two round
    /// trips and one build of the placement.
    #[command(after_help = EXIT_CODES)]
    Config(live::ConfigArgs),
    /// Print a shell completion script, e.g.
    /// `ringwise completions bash > /etc/bash_completion.d/ringwise`.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff), e.g. `ringwise man > ringwise.1`.
    Man,
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

    /// Reading keys or writing results failed.
    pub fn io(error: std::io::Error) -> Self {
        Failure {
            code: 74,
            error: error.into(),
        }
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

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Lookup(args) => lookup::run(args),
        Command::Inspect(args) => inspect::run(args),
        Command::Plan(args) => plan::run(args),
        Command::Simulate(args) => simulate::run(args),
        Command::Token(args) => token::run(args),
        Command::Join(args) => live::join(args),
        Command::Watch(args) => live::watch(args),
        Command::Config(args) => live::config(args),
        Command::Completions { shell } => completions(shell),
        Command::Man => man(),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // `ringwise lookup ... | head` closes our stdout early: not an error.
        Err(f) if broken_pipe(&f.error) => ExitCode::SUCCESS,
        Err(f) => {
            say!("ringwise: error: {:#}", f.error);
            ExitCode::from(f.code)
        }
    }
}

/// The completion script of `shell`, from the same clap definitions.
fn completions(shell: clap_complete::Shell) -> Result<(), Failure> {
    // Into a buffer first: `generate` panics when its writer fails.
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "ringwise", &mut script);
    std::io::Write::write_all(&mut std::io::stdout().lock(), &script).map_err(Failure::io)
}

/// The man page, from the same clap definitions.
fn man() -> Result<(), Failure> {
    let mut out = std::io::stdout().lock();
    clap_mangen::Man::new(Cli::command())
        .render(&mut out)
        .map_err(Failure::io)
}

fn broken_pipe(error: &anyhow::Error) -> bool {
    error
        .downcast_ref::<std::io::Error>()
        .is_some_and(|e| e.kind() == ErrorKind::BrokenPipe)
}
