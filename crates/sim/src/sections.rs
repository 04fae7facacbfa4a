//! Each experiment of a [`Report`] as a [`Section`]: its figures as cells,
//! and how the text report lays them out next to the article's.

use ringwise::Algorithm;

use crate::config::Config;
use crate::cost::Cost;
use crate::report::Report;
use crate::table::{Cell, Layout, Section, bytes, pct, thousands};
use crate::{bounded, compare, rendezvous, weights};

/// The report's sections in report order; experiments not run are absent.
pub fn sections(report: &Report) -> Vec<Section> {
    [
        modulo(report),
        single(report),
        seeds(report),
        failure(report),
        weights(report),
        rendezvous(report),
        cost(report),
        compare(report),
        bounded(report),
        skipped(report),
    ]
    .into_iter()
    .flatten()
    .collect()
}

fn modulo(report: &Report) -> Option<Section> {
    let rows = report.modulo.as_ref()?;
    Some(Section {
        name: "modulo",
        title: vec!["hash % N: keys moved when the server count changes".into()],
        columns: &["from", "to", "moved"],
        rows: rows
            .iter()
            .map(|r| vec![Cell::Int(r.from), Cell::Int(r.to), Cell::Pct(r.moved, 2)])
            .collect(),
        layout: Layout::EachRow(|c| format!("{:>3} -> {:<3} moved {}", c[0], c[1], c[2])),
    })
}

fn single(report: &Report) -> Option<Section> {
    let rows = report.single.as_ref()?;
    let p = &report.params;
    Some(Section {
        name: "single",
        title: vec![
            format!(
                "{}, {} keys, node-{} joins",
                placement_name(p),
                thousands(p.keys),
                p.nodes
            ),
            "vnodes  moved   to_new  donors  max   min   spread".into(),
        ],
        columns: &[
            "vnodes", "moved", "to_new", "donors", "max", "min", "spread",
        ],
        rows: rows
            .iter()
            .map(|r| {
                vec![
                    Cell::Int(r.vnodes.into()),
                    Cell::Pct(r.moved, 2),
                    Cell::Pct(r.to_new, 0),
                    Cell::Int(r.donors),
                    Cell::Fixed(r.max, 2),
                    Cell::Fixed(r.min, 2),
                    Cell::Pct(r.spread, 1),
                ]
            })
            .collect(),
        layout: Layout::EachRow(|c| {
            format!(
                "{:>6}  {}  {}  {:>6}  {}  {}  {}",
                c[0], c[1], c[2], c[3], c[4], c[5], c[6]
            )
        }),
    })
}

/// "One ring" (the article's words), or the algorithm, saying that the
/// vnodes lists do not apply to it.
fn placement_name(p: &Config) -> String {
    match p.uses_vnodes() {
        true => "One ring".into(),
        false => format!(
            "{} (no virtual nodes: one row, vnodes ignored)",
            p.algo_label()
        ),
    }
}

fn seeds(report: &Report) -> Option<Section> {
    let rows = report.seeds.as_ref()?;
    let p = &report.params;
    let sample = thousands(p.seed_keys.min(p.keys));
    Some(Section {
        name: "seeds",
        title: vec![
            format!(
                "The same on {} node-name sets ({sample} keys each)",
                p.seeds
            ),
            "vnodes  moved: min    avg     max   | max/avg  spread".into(),
        ],
        columns: &[
            "vnodes",
            "moved_min",
            "moved_avg",
            "moved_max",
            "max_avg",
            "spread_avg",
        ],
        rows: rows
            .iter()
            .map(|r| {
                vec![
                    Cell::Int(r.vnodes.into()),
                    Cell::Pct(r.moved_min, 2),
                    Cell::Pct(r.moved_avg, 2),
                    Cell::Pct(r.moved_max, 2),
                    Cell::Fixed(r.max_avg, 2),
                    Cell::Pct(r.spread_avg, 1),
                ]
            })
            .collect(),
        layout: Layout::EachRow(|c| {
            format!(
                "{:>6}  {:>10}  {}  {} | {}  {}",
                c[0], c[1], c[2], c[3], c[4], c[5]
            )
        }),
    })
}

fn failure(report: &Report) -> Option<Section> {
    let rows = report.failure.as_ref()?;
    Some(Section {
        name: "failure",
        title: vec![format!(
            "Failure: the most loaded node is removed ({} keys)",
            thousands(report.params.keys)
        )],
        columns: &[
            "vnodes",
            "victim",
            "victim_share",
            "receivers",
            "neighbor",
            "neighbor_before",
            "neighbor_after",
            "only_victim_moved",
        ],
        rows: rows
            .iter()
            .map(|r| {
                vec![
                    Cell::Int(r.vnodes.into()),
                    Cell::Text(r.victim.clone()),
                    Cell::Pct(r.victim_share, 1),
                    Cell::Int(r.receivers),
                    r.neighbor.clone().map_or(Cell::Empty, Cell::Text),
                    Cell::Pct(r.neighbor_before, 1),
                    Cell::Pct(r.neighbor_after, 1),
                    Cell::Check(r.only_victim_moved),
                ]
            })
            .collect(),
        layout: Layout::EachRow(|c| {
            let neighbor = match &c[4] {
                Cell::Empty => "nothing moved".to_owned(),
                name => format!("{name}: {} -> {}", c[5], c[6]),
            };
            format!(
                "vnodes={}: {} held {} of keys, receivers: {}; {neighbor}; only its keys moved: {}",
                c[0], c[1], c[2], c[3], c[7]
            )
        }),
    })
}

/// One CSV row per (vnodes, node); one text line per vnodes value.
fn weights(report: &Report) -> Option<Section> {
    let rows = report.weights.as_ref()?;
    Some(Section {
        name: "weights",
        title: vec!["Weights: small-1 and small-2 weight 1, big weight 2".into()],
        columns: &["vnodes", "node", "share"],
        rows: rows
            .iter()
            .flat_map(|r| {
                r.shares.0.iter().map(|(name, share)| {
                    vec![
                        Cell::Int(r.vnodes.into()),
                        Cell::Text(name.clone()),
                        Cell::Pct(*share, 1),
                    ]
                })
            })
            .collect(),
        layout: Layout::AllRows(|rows| {
            rows.chunks(weights::NODES.len())
                .map(|run| {
                    let shares: Vec<String> =
                        run.iter().map(|c| format!("{} {}", c[1], c[2])).collect();
                    format!("vnodes={}: {}", run[0][0], shares.join(", "))
                })
                .collect()
        }),
    })
}

fn rendezvous(report: &Report) -> Option<Section> {
    let r = report.rendezvous.as_ref()?;
    Some(Section {
        name: "rendezvous",
        title: vec![format!(
            "Rendezvous: max over nodes of hash(\"{{node}}:{{key}}\"), {} keys, {} -> {}",
            thousands(r.keys),
            r.nodes,
            r.nodes + 1
        )],
        columns: &[
            "keys",
            "nodes",
            "moved",
            "to_new",
            "lookup_ns",
            "ring_lookup_ns",
        ],
        rows: vec![vec![
            Cell::Int(r.keys),
            Cell::Int(r.nodes.into()),
            Cell::Pct(r.moved, 2),
            Cell::Pct(r.to_new, 0),
            Cell::Nanos(r.lookup_ns),
            Cell::Nanos(r.ring_lookup_ns),
        ]],
        layout: Layout::EachRow(|c| {
            format!(
                "moved {}, to the new node {}; lookup at {} nodes {} (ring, {} vnodes: {})",
                c[2],
                c[3],
                c[1],
                c[4],
                rendezvous::RING_VNODES,
                c[5]
            )
        }),
    })
}

/// A CSV row per basis (expected, measured); the text transposes them into
/// an `expected` and a `measured` column.
fn cost(report: &Report) -> Option<Section> {
    let c = report.cost.as_ref()?;
    let measured_title = match c.measured_vnodes {
        Some(_) if !report.params.uses_vnodes() => {
            format!("measured ({})", report.params.algo_label())
        }
        Some(v) => format!("measured (ring at {v} vnodes)"),
        None => "measured (run modulo and single)".into(),
    };
    let rows = [
        ("expected", Some(&c.expected)),
        ("measured", c.measured.as_ref()),
    ];
    Some(Section {
        name: "cost",
        title: cost_title(c, &measured_title),
        columns: &[
            "basis",
            "modulo_moved",
            "ring_moved",
            "modulo_db_rps",
            "ring_db_rps",
            "modulo_factor",
            "ring_factor",
            "modulo_bytes",
            "ring_bytes",
            "ring_bytes_per_donor",
        ],
        rows: rows
            .into_iter()
            .filter_map(|(basis, f)| {
                let f = f?;
                Some(vec![
                    Cell::Text(basis.into()),
                    Cell::Pct(f.modulo_moved, 2),
                    Cell::Pct(f.ring_moved, 2),
                    Cell::Rps(f.modulo_db_rps),
                    Cell::Rps(f.ring_db_rps),
                    Cell::Factor(f.modulo_factor),
                    Cell::Factor(f.ring_factor),
                    Cell::Bytes(f.modulo_bytes),
                    Cell::Bytes(f.ring_bytes),
                    Cell::Bytes(f.ring_bytes_per_donor),
                ])
            })
            .collect(),
        layout: Layout::AllRows(cost_lines),
    })
}

fn cost_title(c: &Cost, measured_title: &str) -> Vec<String> {
    vec![
        format!("Cost of moved keys, {} -> {} servers", c.nodes, c.nodes + 1),
        format!(
            "cache: {} rps at {} hits, database normally {} rps; store: {} on {} nodes",
            thousands(c.rps.round() as u64),
            pct(c.hit_rate, 0),
            thousands(c.normal_db_rps.round() as u64),
            bytes(c.data_bytes),
            c.nodes
        ),
        format!("                       {:<24}{measured_title}", "expected"),
    ]
}

/// One line per figure: the expected value, then the measured one or `-`.
fn cost_lines(rows: &[Vec<Cell>]) -> Vec<String> {
    type Figure = fn(&[Cell]) -> String;
    let figures: [(&str, Figure); 7] = [
        ("% N   keys cold    ", |c| c[1].to_string()),
        ("      database     ", |c| format!("{} ({})", c[3], c[5])),
        ("      data moved   ", |c| c[7].to_string()),
        ("ring  keys cold    ", |c| c[2].to_string()),
        ("      database     ", |c| format!("{} ({})", c[4], c[6])),
        ("      data moved   ", |c| c[8].to_string()),
        ("      per old node ", |c| c[9].to_string()),
    ];
    let Some(expected) = rows.first() else {
        return Vec::new();
    };
    figures
        .into_iter()
        .map(|(label, figure)| {
            let measured = rows.get(1).map_or_else(|| "-".into(), |row| figure(row));
            format!("{label}    {:<24}{measured}", figure(expected))
        })
        .collect()
}

fn compare(report: &Report) -> Option<Section> {
    let rows = report.compare.as_ref()?;
    Some(Section {
        name: "compare",
        title: vec![
            format!(
                "Algorithms compared at {} and {} nodes on the first {} keys (at most {}); \
                 ring at {} vnodes, and with 16 or 1,000 random or 16 allocated points",
                compare::sizes(&report.params)[0],
                compare::sizes(&report.params)[1],
                thousands(compare::key_count(&report.params)),
                thousands(compare::KEYS),
                compare::RING_VNODES
            ),
            "algorithm             N  add: moved (opt)     only new  remove: moved (opt)  \
             only it  max/mean  min/mean  lookup   memory     build"
                .into(),
        ],
        columns: &[
            "algorithm",
            "nodes",
            "add_moved",
            "add_optimal",
            "add_only_new",
            "remove_moved",
            "remove_optimal",
            "remove_only_removed",
            "max_load",
            "min_load",
            "lookup_ns",
            "memory_bytes",
            "build_ms",
        ],
        rows: rows
            .iter()
            .map(|r| {
                vec![
                    Cell::Text(r.algorithm.clone()),
                    Cell::Int(r.nodes.into()),
                    Cell::Pct(r.add_moved, 2),
                    Cell::Pct(r.add_optimal, 2),
                    Cell::YesNo(r.add_only_new),
                    Cell::Pct(r.remove_moved, 2),
                    Cell::Pct(r.remove_optimal, 2),
                    Cell::YesNo(r.remove_only_removed),
                    Cell::Fixed(r.max_load, 3),
                    Cell::Fixed(r.min_load, 3),
                    Cell::Nanos(r.lookup_ns),
                    Cell::Bytes(r.memory_bytes as f64),
                    Cell::Fixed(r.build_ms, 2),
                ]
            })
            .collect(),
        layout: Layout::EachRow(|c| {
            format!(
                "{:<18} {:>4}  {:>7} ({:>6})  {:<8}  {:>7} ({:>6})      {:<7}  {:>8}  {:>8}  {:>6}  {:>9}  {:>6} ms",
                c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8], c[9], c[10], c[11], c[12]
            )
        }),
    })
}

fn bounded(report: &Report) -> Option<Section> {
    let b = report.bounded.as_ref()?;
    let algorithm = report.params.algo;
    let placement = match algorithm {
        Algorithm::Ring => format!("ring at {} vnodes", bounded::VNODES),
        other => other.to_string(),
    };
    Some(Section {
        name: "bounded",
        title: vec![format!(
            "Bounded loads: {} Zipf({}) requests over {} keys, {} nodes, {placement}",
            thousands(b.requests as u64),
            bounded::EXPONENT,
            thousands(bounded::DISTINCT),
            b.nodes,
        )],
        columns: &[
            "algorithm",
            "nodes",
            "requests",
            "epsilon",
            "plain_max",
            "bounded_max",
            "bound",
            "diverted",
        ],
        rows: vec![vec![
            Cell::Text(algorithm.to_string()),
            Cell::Int(b.nodes.into()),
            Cell::Int(b.requests as u64),
            Cell::Num(b.epsilon),
            Cell::Fixed(b.plain_max, 2),
            Cell::Fixed(b.bounded_max, 2),
            Cell::Fixed(1.0 + b.epsilon, 2),
            Cell::Pct(b.diverted, 1),
        ]],
        layout: Layout::EachRow(|c| {
            format!(
                "hottest node / mean: plain {} {}, bounded (eps = {}) {} (bound {}); {} of requests diverted",
                c[0], c[4], c[3], c[5], c[6], c[7]
            )
        }),
    })
}

/// Each skipped experiment with the reason, a paragraph each in the text.
fn skipped(report: &Report) -> Option<Section> {
    if report.skipped.is_empty() {
        return None;
    }
    Some(Section {
        name: "skipped",
        title: Vec::new(),
        columns: &["skipped", "reason"],
        rows: report
            .skipped
            .iter()
            .map(|s| {
                vec![
                    Cell::Text(s.experiment.to_string()),
                    Cell::Text(s.reason.clone()),
                ]
            })
            .collect(),
        layout: Layout::AllRows(|rows| {
            let mut lines = Vec::new();
            for c in rows {
                if !lines.is_empty() {
                    lines.push(String::new());
                }
                lines.push(format!("{}: skipped: {}", c[0], c[1]));
            }
            lines
        }),
    })
}
