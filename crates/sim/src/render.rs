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

/// Significant digits of every float in the JSON document: what double
/// precision carries beyond its last three, noisy, digits (`100000 × (1 −
/// 0.95)` is `5000.000000000005` in binary floating point and `5000.0`
/// here). The rounding moves a figure by at most 5e-13 of itself.
const JSON_DIGITS: usize = 13;

/// `value` with every float rounded to `JSON_DIGITS` (13) significant digits.
pub fn rounded(value: serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::Number(n) if n.is_f64() => {
            let x = n.as_f64().unwrap_or_default();
            // `{:.12e}` keeps 13 significant digits; parsing it back gives
            // the nearest double, printed by serde_json in its shortest form.
            let x: f64 = format!("{x:.*e}", JSON_DIGITS - 1).parse().unwrap_or(x);
            serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number)
        }
        Value::Array(items) => Value::Array(items.into_iter().map(rounded).collect()),
        Value::Object(map) => {
            Value::Object(map.into_iter().map(|(k, v)| (k, rounded(v))).collect())
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use ringwise::Algorithm;

    use super::*;
    use crate::config::{Config, Experiment};
    use crate::progress::Quiet;
    use crate::run::run;

    fn small(algo: Algorithm, experiments: &[Experiment]) -> Report {
        let config = Config {
            algo,
            keys: 3000,
            seed_keys: 500,
            seeds: 2,
            rendezvous_keys: 500,
            vnodes: vec![1, 10],
            experiments: experiments.to_vec(),
            ..Config::default()
        };
        run(&config, &Quiet).expect("a small run")
    }

    #[test]
    fn every_row_fills_every_column_and_both_renderers_show_every_section() {
        let ring = small(Algorithm::Ring, &Experiment::ALL);
        let jump = small(Algorithm::Jump, &[Experiment::Failure, Experiment::Weights]);
        for (report, expected) in [(&ring, Experiment::ALL.len()), (&jump, 1)] {
            let sections = sections(report);
            let names: Vec<&str> = sections.iter().map(|s| s.name).collect();
            assert_eq!(sections.len(), expected, "{names:?}");
            for section in &sections {
                for row in &section.rows {
                    assert_eq!(row.len(), section.columns.len(), "{}", section.name);
                }
            }
            let csv = csv(report);
            let headers: Vec<&str> = csv
                .lines()
                .filter(|l| l.starts_with("experiment,"))
                .collect();
            assert_eq!(headers.len(), sections.len(), "{csv}");
            assert_eq!(csv.split("\n\n").count(), sections.len(), "{csv}");
            let text = text(report);
            for section in &sections {
                let first = section.title.first().map_or(section.name, String::as_str);
                assert!(text.contains(first), "{first:?} missing from:\n{text}");
            }
        }
        assert!(text(&jump).contains("\nfailure: skipped: jump cannot"));
        assert!(csv(&jump).starts_with("experiment,skipped,reason\nskipped,failure,"));
    }
}
