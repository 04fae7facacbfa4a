//! The text and CSV reports, both rendered from the same [`Section`]s
//! ([`sections`]); JSON is the serde serialization of the [`Report`].

use std::fmt::Write;

use crate::report::Report;
use crate::sections::sections;
use crate::table::{Section, thousands};

/// The terminal report: a line with the run's parameters, one block per
/// experiment with the article's columns and precision, the wall time.
pub fn text(report: &Report) -> String {
    let p = &report.params;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "ringwise simulate: algorithm {}, hash {}, {} keys user:0.., nodes node-0..node-{} (+ node-{})",
        p.algo_label(),
        p.hash,
        thousands(p.keys),
        p.nodes - 1,
        p.nodes
    );
    for section in sections(report) {
        out.push('\n');
        section.text(&mut out);
    }
    let _ = writeln!(out, "\nelapsed {:.2} s", report.elapsed_s);
    out
}

/// CSV: one section per experiment, each with its own header line whose
/// first column is `experiment`, sections separated by a blank line.
pub fn csv(report: &Report) -> String {
    let mut out = String::new();
    for (i, section) in sections(report).iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        Section::csv(section, &mut out);
    }
    out
}
