//! The proxy's page (docs/proxy.md, and any page with the directive
//! `<!-- docs: proxy -->`) run as a checked transcript with this build's
//! `ringwise-proxy` first on PATH: its examples start real memcacheds and
//! talk to them and to the proxy with `nc`. The runner is the CLI's docs
//! runner (crates/cli/tests/docs/transcript.rs, its conventions in its
//! module docs), shared by path as the cache benchmark's tests share it:
//! `CARGO_BIN_EXE_ringwise-proxy` is visible only to this crate's tests,
//! so the CLI's docs test leaves these pages to this one.

use std::path::Path;

use crate::transcript::{Setup, has_directive, pages, run_page, workspace};

/// A fresh single-member etcd, for a page that also says `<!-- docs: etcd -->`.
fn etcd() -> (String, Box<dyn std::any::Any>) {
    let etcd = crate::etcd::Etcd::single();
    let address = etcd.endpoint(0).trim_start_matches("http://").to_owned();
    (address, Box::new(etcd))
}

#[test]
fn the_proxy_page_prints_what_it_shows() {
    let root = workspace(env!("CARGO_MANIFEST_DIR"));
    let setup = Setup::beside(env!("CARGO_BIN_EXE_ringwise-proxy"), etcd);
    let pages: Vec<_> = pages(&root)
        .into_iter()
        .filter(|page| {
            let text = std::fs::read_to_string(root.join(page)).expect("a readable page");
            has_directive(&text, "proxy")
        })
        .collect();
    assert!(
        pages.iter().any(|p| p == Path::new("docs/proxy.md")),
        "docs/proxy.md lost its <!-- docs: proxy --> directive: its examples would run nowhere"
    );
    let failures: Vec<String> = pages
        .iter()
        .filter_map(|page| run_page(&root, page, &setup).err())
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
