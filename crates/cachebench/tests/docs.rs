//! The cache benchmark's page (docs/cachebench.md, and any page with the
//! directive `<!-- docs: cachebench -->`) run as a checked transcript with
//! this build's `ringwise-cachebench` first on PATH: its examples start
//! real memcached servers, as the page shows. The runner is the CLI's docs
//! runner (crates/cli/tests/docs/transcript.rs, its conventions in its
//! module docs), shared by path: `CARGO_BIN_EXE_ringwise-cachebench` is
//! visible only to this crate's tests, so the CLI's docs test leaves these
//! pages to this one. Its proxy placements need `ringwise-proxy` beside
//! `ringwise-cachebench`: built first ([`crate::proxy_built`]).

#[path = "../../cli/tests/docs/transcript.rs"]
#[allow(
    dead_code,
    reason = "the CLI's docs runner; the page listing and the run are what this crate uses"
)]
mod transcript;

use std::path::Path;

use transcript::{Setup, has_directive, pages, run_page, workspace};

/// A fresh single-member etcd, for a page that also says `<!-- docs: etcd -->`.
fn etcd() -> (String, Box<dyn std::any::Any>) {
    let etcd = crate::server::Etcd::single();
    let address = etcd.endpoint(0).trim_start_matches("http://").to_owned();
    (address, Box::new(etcd))
}

#[test]
fn the_cache_benchmark_page_prints_what_it_shows() {
    crate::proxy_built();
    let root = workspace(env!("CARGO_MANIFEST_DIR"));
    let setup = Setup::beside(env!("CARGO_BIN_EXE_ringwise-cachebench"), etcd);
    let pages: Vec<_> = pages(&root)
        .into_iter()
        .filter(|page| {
            let text = std::fs::read_to_string(root.join(page)).expect("a readable page");
            has_directive(&text, "cachebench")
        })
        .collect();
    assert!(
        pages.iter().any(|p| p == Path::new("docs/cachebench.md")),
        "docs/cachebench.md lost its <!-- docs: cachebench --> directive: its examples would run nowhere"
    );
    let failures: Vec<String> = pages
        .iter()
        .filter_map(|page| run_page(&root, page, &setup).err())
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
