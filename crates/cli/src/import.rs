//! `ringwise import KIND FILE`, and `--cluster-format KIND` on every
//! command that reads a cluster file: an operator's own configuration
//! (`nutcracker.yml`, an nginx `upstream`, a libmemcached string...) read
//! by `ringwise_import` as its program reads it.
//!
//! `import` prints the equivalent cluster file, headed by a comment naming
//! the source and a `# note:` line for everything read that does not
//! change placement; `--cluster-format` reads the peer's file in place of
//! a cluster file and says the same notes on stderr. A setting ringwise
//! does not reproduce is refused with its line and the reason (exit 65);
//! a wrong kind or `--pool` is a usage error (2).
//!
//! Cost: reading the file (at most 64 MiB, the cluster-file cap), one pass
//! to parse it, and one build of the placement to check it.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use ringwise::ClusterSpec;
use ringwise_import::{ImportError, Kind};

use crate::Failure;
use crate::input::read_text;

/// `--cluster-format KIND` and `--pool NAME`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct FormatArgs {
    /// Read the cluster file as this program's own configuration instead
    /// of a ringwise cluster file (`ringwise import --help` lists the kinds).
    #[arg(long, value_name = "KIND", value_parser = kind)]
    pub cluster_format: Option<Kind>,
    /// With --cluster-format: the pool (twemproxy), upstream (nginx) or
    /// cluster (Envoy) to read when the file holds several.
    #[arg(long, value_name = "NAME", visible_alias = "upstream")]
    pub pool: Option<String>,
}

/// `ringwise import`'s arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// What the file is (see the list below).
    #[arg(value_name = "KIND", value_parser = kind)]
    kind: Kind,
    /// The program's configuration file.
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// The pool (twemproxy), upstream (nginx) or cluster (Envoy) to read
    /// when the file holds several.
    #[arg(long, value_name = "NAME", visible_alias = "upstream")]
    pool: Option<String>,
}

/// The kinds and what each reads, for `import --help`.
pub fn kinds_help() -> String {
    let mut text = String::from("Kinds:\n");
    for kind in Kind::ALL {
        text.push_str(&format!("  {:<14} {}\n", kind.name(), kind.about()));
    }
    text
}

/// `--cluster-format`'s and `import`'s parser of a kind.
pub fn kind(text: &str) -> Result<Kind, String> {
    text.parse().map_err(|e: ImportError| e.to_string())
}

/// Prints the cluster file of `args.file`.
pub fn run(args: Args) -> Result<(), Failure> {
    let (spec, _notes, toml) = import(&args.file, args.kind, args.pool.as_deref())?;
    // Built once, so a file that imports but cannot be built (more points
    // than the budget) fails here rather than where it is used.
    spec.build()
        .with_context(|| format!("in {}", args.file.display()))
        .map_err(Failure::data)?;
    let mut out = std::io::stdout().lock();
    std::io::Write::write_all(&mut out, toml.as_bytes())
        .and_then(|()| std::io::Write::flush(&mut out))
        .map_err(Failure::io)
}

/// The spec in `path`, read as `format` says: a ringwise cluster file, or
/// a peer's configuration (its notes said on stderr). Not built.
pub fn spec_of(path: &Path, format: &FormatArgs) -> Result<Option<ClusterSpec>, Failure> {
    let Some(kind) = format.cluster_format else {
        return match &format.pool {
            Some(name) => Err(Failure::usage(anyhow::anyhow!(
                "--pool {name} chooses in a program's configuration: give --cluster-format KIND"
            ))),
            None => Ok(None),
        };
    };
    let (spec, notes, _) = import(path, kind, format.pool.as_deref())?;
    for note in notes {
        say!("ringwise: note: in {}: {note}", path.display());
    }
    Ok(Some(spec))
}

/// The spec, the notes and the cluster file of `path` read as `kind`.
fn import(
    path: &Path,
    kind: Kind,
    pool: Option<&str>,
) -> Result<(ClusterSpec, Vec<String>, String), Failure> {
    let text = read_text(path)?;
    let failure = |e: ImportError| {
        let usage = e.is_usage();
        let e = anyhow::Error::new(e).context(format!("in {} ({kind})", path.display()));
        match usage {
            true => Failure::usage(e),
            false => Failure::data(e),
        }
    };
    let imported = ringwise_import::import(kind, &text, pool).map_err(failure)?;
    let toml = imported
        .to_toml(kind, &path.display().to_string())
        .map_err(failure)?;
    let spec = imported.spec().map_err(failure)?;
    Ok((spec, imported.notes, toml))
}
