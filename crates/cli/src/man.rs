//! `ringwise man`: the man pages, generated from the same clap definitions
//! as `--help`, one page per subcommand.
//!
//! The top page, ringwise(1), lists the subcommands as `ringwise-lookup(1)`,
//! `ringwise-plan(1)`, ... (clap_mangen's convention), so each of those is a
//! page of its own: the subcommand's `Command` renamed `ringwise-lookup`.
//! `--dir DIR` writes them all; each file goes to a temporary name in DIR
//! first and is renamed over the page, so a reader (or `man` itself) never
//! sees half a page and a failed write leaves the old page as it was.
//!
//! Cost: one render per page, O(size of the help text); `--dir` writes
//! 11 files.

use std::io::Write;
use std::path::Path;

use anyhow::Context as _;
use clap::Command;

use ringwise_sim::files::Mode;

use crate::Failure;

/// Prints the page of `subcommand` (the top page when `None`), or writes
/// every page into `dir`.
pub fn run(cli: Command, subcommand: Option<&str>, dir: Option<&Path>) -> Result<(), Failure> {
    let pages = pages(cli);
    if let Some(dir) = dir {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create the directory {}", dir.display()))
            .map_err(Failure::io_other)?;
        return pages.iter().try_for_each(|page| write_page(dir, page));
    }
    let wanted = subcommand.map_or_else(|| "ringwise".to_owned(), |s| format!("ringwise-{s}"));
    let Some(page) = pages.iter().find(|page| page.get_name() == wanted) else {
        let names: Vec<&str> = pages[1..]
            .iter()
            .map(|p| &p.get_name()["ringwise-".len()..])
            .collect();
        return Err(Failure::usage(anyhow::anyhow!(
            "no subcommand `{}`; the pages are ringwise(1) and those of {}",
            subcommand.unwrap_or_default(),
            names.join(", ")
        )));
    };
    let roff = render(page).map_err(Failure::io)?;
    std::io::stdout()
        .lock()
        .write_all(&roff)
        .map_err(Failure::io)
}

/// The top command and every visible subcommand as `ringwise-<name>`,
/// built (so each has its `--help` flag and its usage) before rendering.
fn pages(cli: Command) -> Vec<Command> {
    // No `help` subcommand on the pages: ringwise-help(1) would be a page
    // of clap's own, and `ringwise help X` is `ringwise X --help`.
    let mut cli = cli.disable_help_subcommand(true);
    cli.build();
    let version = cli.get_version().unwrap_or_default().to_owned();
    let subcommands = cli
        .get_subcommands()
        .filter(|sub| !sub.is_hide_set())
        .map(|sub| {
            let name = format!("ringwise-{}", sub.get_name());
            // The page's usage line must read `ringwise lookup ...`, not
            // `ringwise-lookup ...`: the binary is `ringwise`.
            let usage = format!("ringwise {}", sub.get_name());
            sub.clone()
                .name(name)
                .bin_name(usage)
                .version(version.clone())
        })
        .collect::<Vec<_>>();
    std::iter::once(cli).chain(subcommands).collect()
}

fn render(page: &Command) -> std::io::Result<Vec<u8>> {
    let mut roff = Vec::new();
    clap_mangen::Man::new(page.clone()).render(&mut roff)?;
    Ok(roff)
}

/// Writes `DIR/<name>.1` atomically (the shared writer: a temporary file
/// in DIR, flushed and synced, then renamed over the page).
fn write_page(dir: &Path, page: &Command) -> Result<(), Failure> {
    let roff = render(page).map_err(Failure::io)?;
    let target = dir.join(format!("{}.1", page.get_name()));
    crate::output::file(&target, Mode::Plain, &roff)
}
