//! `ringwise`: look keys up on a cluster, inspect its balance, and run the
//! seed article's experiments.
//!
//! `main` dispatches to the command's module (`lookup.rs`, `inspect.rs`,
//! `plan.rs`, ...), and maps a [`Failure`] to its exit code: the codes and
//! their one rule are in `failure.rs` ([`EXIT_CODES`], also shown by
//! `--help`).
//!
//! The clap command tree below is the one source of `--help`, the man
//! pages (`man.rs`) and the shell completions: a subcommand's first doc
//! line is its one-line summary in `--help` and its man page's NAME, and
//! what it costs goes in the lines below it. Every message to stderr goes
//! through `say!`.

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
mod answers;
mod cluster;
mod failure;
mod format;
mod import;
mod input;
mod inspect;
mod keys;
mod lines;
mod live;
mod lookup;
mod man;
mod nodes;
mod output;
mod params;
mod plan;
mod redis;
mod simulate;
mod slot;
mod svg;
mod token;

use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

use failure::EXIT_CODES;
pub use failure::Failure;

/// `--version`: the package version and the git commit it was built from
/// (build.rs; "unknown commit" outside a git checkout).
const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("RINGWISE_GIT_COMMIT"),
    ")"
);

/// Consistent hashing: who owns a key, what a change moves, how balanced a
/// cluster is.
#[derive(Debug, Parser)]
#[command(name = "ringwise", version = VERSION, after_help = EXIT_CODES)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Print the node (or replicas) that owns each key.
    ///
    /// Cost: one build of the placement (O(P) for rings, O(M) for maglev's table, O(N)
    /// otherwise), then per key one hash and one lookup: O(1) for rings,
    /// maglev and slots, O(log N) for jump and its kin, O(N) for
    /// rendezvous (weighted: 6 to 10 times unweighted, a logarithm per
    /// node); O(R) more for R replicas; --epsilon O(K · (1 + spills)),
    /// holding every key.
    #[command(after_help = EXIT_CODES)]
    Lookup(lookup::Args),
    /// Print each node's points and share of the keys.
    ///
    /// Cost: one build, then exact shares from a ring's arcs (O(P)) or a table (O(M)); other
    /// algorithms are sampled on 1,000,000 keys (rendezvous: 3e8/N keys,
    /// at least 10,000, at O(N) each).
    #[command(after_help = EXIT_CODES)]
    Inspect(inspect::Args),
    /// Show what a membership change moves, from whom to whom.
    ///
    /// How many keys and bytes, what it costs: exact for rings, HAProxy
    /// trees and slot tables, sampled otherwise.
    ///
    /// Cost: two builds and one diff, O(P_old + P_new) for rings and
    /// HAProxy trees, O(M)
    /// for tables, 2^20 sampled lookups in each placement otherwise;
    /// --keys adds two lookups per key. A memento, anchor or dx cluster
    /// whose removed buckets would make those lookups cost more than 2^32
    /// steps is refused up front with the estimate (exit 65).
    #[command(after_help = EXIT_CODES)]
    Plan(plan::Args),
    /// Run the seed article's experiments: moved keys, spread, failure.
    ///
    /// Cost: each experiment builds its placements and looks up
    /// every one of --keys K keys in each (O(K) lookups per placement);
    /// the run's size is checked before anything is built.
    #[command(after_help = EXIT_CODES)]
    Simulate(simulate::Args),
    /// Print the Cassandra (Murmur3Partitioner) token of each key.
    ///
    /// Keys are text unless --type gives their CQL type: `token 42` is the
    /// token of the text '42', `token --type int 42` Cassandra's token(42)
    /// of an int column.
    ///
    /// Cost: one Murmur3 per key, O(key length) (a varint or decimal
    /// literal O(digits^2/72) to serialise).
    #[command(after_help = EXIT_CODES)]
    Token(token::Args),
    /// Print the Redis Cluster hash slot of each key (CLUSTER KEYSLOT).
    ///
    /// CRC16 of the key's {hash tag} (the bytes between the first `{` and
    /// the first `}` after it, if not empty; else the whole key), & 16383.
    /// No cluster needed; `lookup` on a slots cluster names the owner.
    ///
    /// Cost: one CRC16 per key, O(key length).
    #[command(after_help = EXIT_CODES)]
    Slot(slot::Args),
    /// Print the cluster file of a program's own configuration.
    ///
    /// Reads a `nutcracker.yml` pool, an nginx upstream, an Envoy cluster,
    /// a libmemcached string, `nodetool ring` or `CLUSTER NODES` output, or
    /// a VCL's shard director as that program reads it, and prints the equivalent cluster file; what
    /// does not change placement becomes a `# note:` line, what ringwise
    /// does not reproduce is refused with its line. `--cluster FILE
    /// --cluster-format KIND` reads the file directly.
    ///
    /// Cost: one pass over the file and one build of the placement.
    #[command(after_help = import::kinds_help() + "\n" + EXIT_CODES)]
    Import(import::Args),
    /// Register this node in a membership source until SIGINT or SIGTERM.
    ///
    /// The source is --membership URL (etcd://, zk://, gossip://) or
    /// --etcd. The node is a key under a lease (etcd), an ephemeral znode
    /// of a session (ZooKeeper) or an announced entry (gossip); on SIGINT
    /// or SIGTERM it leaves at once, killed without a word within --ttl.
    ///
    /// Cost: one etcd round trip per TTL/3; ZooKeeper's session pings;
    /// gossip's rounds (a few UDP packets per node per interval).
    #[command(after_help = EXIT_CODES)]
    Join(live::JoinArgs),
    /// Follow the ring of a membership source and print every change.
    ///
    /// Prints the ring, then every new version (etcd revision, ZooKeeper
    /// zxid, or the count of gossip views: members, shares, fraction
    /// moved), until SIGINT or SIGTERM.
    ///
    /// Cost per change: one build of the placement, exact shares and moved
    /// fraction for rings (O(P)), 65,536 samples otherwise.
    #[command(after_help = EXIT_CODES)]
    Watch(live::WatchArgs),
    /// Show or change the cluster's settings in a membership source.
    ///
    /// The settings live under PREFIX/config (etcd, ZooKeeper) or are
    /// gossiped by the members; a change is checked against the members
    /// before it is written.
    ///
    /// Cost: two round trips and one build of the placement.
    #[command(after_help = EXIT_CODES)]
    Config(live::ConfigArgs),
    /// Print a shell completion script (bash, zsh, fish, ...).
    ///
    /// For example `ringwise completions bash > /etc/bash_completion.d/ringwise`.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print or install the man pages (roff), one per subcommand.
    ///
    /// `ringwise man` prints ringwise(1), `ringwise man lookup` prints
    /// ringwise-lookup(1), and `ringwise man --dir DIR` writes every page
    /// into DIR, made if missing (ringwise.1, ringwise-lookup.1, ...), each
    /// file replaced atomically; for example
    /// `ringwise man --dir ~/.local/share/man/man1`, then `man ringwise-plan`.
    Man(ManArgs),
}

/// `ringwise man`'s arguments.
#[derive(Debug, clap::Args)]
struct ManArgs {
    /// The subcommand whose page to print (default: the top page, ringwise(1)).
    #[arg(value_name = "SUBCOMMAND", conflicts_with = "dir")]
    command: Option<String>,
    /// Write every page into this directory instead of printing one.
    #[arg(long, value_name = "DIR")]
    dir: Option<std::path::PathBuf>,
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return clap_exit(e),
    };
    let result = match cli.command {
        Command::Lookup(args) => lookup::run(args),
        Command::Inspect(args) => inspect::run(args),
        Command::Plan(args) => plan::run(args),
        Command::Simulate(args) => simulate::run(args),
        Command::Token(args) => token::run(args),
        Command::Slot(args) => slot::run(args),
        Command::Import(args) => import::run(args),
        Command::Join(args) => live::join(args),
        Command::Watch(args) => live::watch(args),
        Command::Config(args) => live::config(args),
        Command::Completions { shell } => completions(shell),
        Command::Man(args) => {
            man::run(Cli::command(), args.command.as_deref(), args.dir.as_deref())
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => f.report(),
    }
}

/// What clap's own `exit` does, except that help and `--version` are the
/// command's output: written to stdout and checked, so `ringwise --help >
/// /dev/full` fails with 74 like any other output (clap ignores the
/// error). A usage error goes to stderr with clap's code (2), lost, as
/// every message, when stderr is closed.
fn clap_exit(e: clap::Error) -> ExitCode {
    use std::io::{IsTerminal as _, Write as _};
    if e.use_stderr() {
        let _ = e.print();
        return ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2));
    }
    let styled = e.render();
    let text = match std::io::stdout().is_terminal() {
        true => styled.ansi().to_string(),
        false => styled.to_string(),
    };
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            Failure::io_other(anyhow::Error::new(error).context("cannot write to stdout")).report()
        }
    }
}

/// The completion script of `shell`, from the same clap definitions.
fn completions(shell: clap_complete::Shell) -> Result<(), Failure> {
    // Into a buffer first: `generate` panics when its writer fails.
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "ringwise", &mut script);
    let mut out = std::io::stdout().lock();
    std::io::Write::write_all(&mut out, &script)
        .and_then(|()| std::io::Write::flush(&mut out))
        .map_err(Failure::io)
}
