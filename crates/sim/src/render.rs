//! Rendering a [`Report`]: terminal tables with the article's columns and
//! precision, and CSV.
//!
//! Percentages use the article's format specifiers (`.2%`, `.0%`, `.1%`):
//! Python multiplies by 100 in floating point and rounds the result to the
//! shown digits, which is exactly what `format!("{:.2}", x * 100.0)` does, so
//! the printed digits are the article's.

use std::fmt::Write;

use crate::cost::{Cost, CostFigures};
use crate::report::Report;

fn pct(x: f64, digits: usize) -> String {
    format!("{:.*}%", digits, x * 100.0)
}

/// `1234567` → `1,234,567`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Bytes with a decimal unit and three significant digits: `273 GB`.
pub fn bytes(b: f64) -> String {
    let units = ["B", "KB", "MB", "GB", "TB", "PB", "EB"];
    let mut value = b;
    let mut unit = 0;
    while value >= 999.5 && unit + 1 < units.len() {
        value /= 1000.0;
        unit += 1;
    }
    let decimals = if value >= 99.95 {
        0
    } else if value >= 9.995 {
        1
    } else {
        2
    };
    format!("{value:.decimals$} {}", units[unit])
}

fn nanos(ns: f64) -> String {
    if ns >= 1000.0 {
        format!("{:.1} µs", ns / 1000.0)
    } else {
        format!("{ns:.0} ns")
    }
}

/// The terminal tables, one per experiment.
pub fn text(report: &Report) -> String {
    let p = &report.params;
    let n = p.nodes;
    let mut out = String::new();
    let w = &mut out;
    let _ = writeln!(
        w,
        "ringwise simulate: algorithm {}, hash {}, {} keys user:0.., nodes node-0..node-{} (+ node-{n})",
        p.algo,
        p.hash,
        thousands(p.keys),
        n - 1
    );
    if let Some(rows) = &report.modulo {
        let _ = writeln!(w, "\nhash % N: keys moved when the server count changes");
        for r in rows {
            let _ = writeln!(w, "{:>3} -> {:<3} moved {}", r.from, r.to, pct(r.moved, 2));
        }
    }
    if let Some(rows) = &report.single {
        let _ = writeln!(w, "\nOne ring, {} keys, node-{n} joins", thousands(p.keys));
        let _ = writeln!(w, "vnodes  moved   to_new  donors  max   min   spread");
        for r in rows {
            let _ = writeln!(
                w,
                "{:>6}  {}  {}  {:>6}  {:.2}  {:.2}  {}",
                r.vnodes,
                pct(r.moved, 2),
                pct(r.to_new, 0),
                r.donors,
                r.max,
                r.min,
                pct(r.spread, 1)
            );
        }
    }
    if let Some(rows) = &report.seeds {
        let sample = thousands(p.seed_keys.min(p.keys));
        let _ = writeln!(
            w,
            "\nThe same on {} node-name sets ({sample} keys each)",
            p.seeds
        );
        let _ = writeln!(w, "vnodes  moved: min    avg     max   | max/avg  spread");
        for r in rows {
            let _ = writeln!(
                w,
                "{:>6}  {:>10}  {}  {} | {:.2}  {}",
                r.vnodes,
                pct(r.moved_min, 2),
                pct(r.moved_avg, 2),
                pct(r.moved_max, 2),
                r.max_avg,
                pct(r.spread_avg, 1)
            );
        }
    }
    if let Some(rows) = &report.failure {
        let _ = writeln!(
            w,
            "\nFailure: the most loaded node is removed ({} keys)",
            thousands(p.keys)
        );
        for r in rows {
            let neighbor = match &r.neighbor {
                Some(name) => format!(
                    "{name}: {} -> {}",
                    pct(r.neighbor_before, 1),
                    pct(r.neighbor_after, 1)
                ),
                None => "nothing moved".into(),
            };
            let _ = writeln!(
                w,
                "vnodes={}: {} held {} of keys, receivers: {}; {neighbor}; only its keys moved: {}",
                r.vnodes,
                r.victim,
                pct(r.victim_share, 1),
                r.receivers,
                if r.only_victim_moved { "yes" } else { "NO" }
            );
        }
    }
    if let Some(rows) = &report.weights {
        let _ = writeln!(w, "\nWeights: small-1 and small-2 weight 1, big weight 2");
        for r in rows {
            let shares: Vec<String> = r
                .shares
                .0
                .iter()
                .map(|(name, s)| format!("{name} {}", pct(*s, 1)))
                .collect();
            let _ = writeln!(w, "vnodes={}: {}", r.vnodes, shares.join(", "));
        }
    }
    if let Some(r) = &report.rendezvous {
        let _ = writeln!(
            w,
            "\nRendezvous: max over nodes of hash(\"{{node}}:{{key}}\"), {} keys, {} -> {}",
            thousands(r.keys),
            r.nodes,
            r.nodes + 1
        );
        let _ = writeln!(
            w,
            "moved {}, to the new node {}; lookup at {} nodes {} (ring, {} vnodes: {})",
            pct(r.moved, 2),
            pct(r.to_new, 0),
            r.nodes,
            nanos(r.lookup_ns),
            crate::rendezvous::RING_VNODES,
            nanos(r.ring_lookup_ns)
        );
    }
    if let Some(cost) = &report.cost {
        cost_text(w, cost);
    }
    if let Some(rows) = &report.compare {
        compare_text(w, rows);
    }
    if let Some(b) = &report.bounded {
        let _ = writeln!(
            w,
            "\nBounded loads: {} Zipf({}) requests over {} keys, {} nodes, ring at {} vnodes",
            thousands(b.requests as u64),
            crate::bounded::EXPONENT,
            thousands(crate::bounded::DISTINCT),
            b.nodes,
            crate::bounded::VNODES
        );
        let _ = writeln!(
            w,
            "hottest node / mean: plain ring {:.2}, bounded (eps = {}) {:.2} (bound {:.2}); {} of requests diverted",
            b.plain_max,
            b.epsilon,
            b.bounded_max,
            1.0 + b.epsilon,
            pct(b.diverted, 1)
        );
    }
    for skip in &report.skipped {
        let _ = writeln!(w, "\n{}: skipped: {}", skip.experiment, skip.reason);
    }
    let _ = writeln!(w, "\nelapsed {:.2} s", report.elapsed_s);
    out
}

fn compare_text(w: &mut String, rows: &[crate::compare::CompareRow]) {
    let _ = writeln!(
        w,
        "\nAlgorithms compared ({} keys; ring at {} vnodes)",
        thousands(crate::compare::KEYS),
        crate::compare::RING_VNODES
    );
    let _ = writeln!(
        w,
        "algorithm     N  add: moved (opt)     only new  remove: moved (opt)  only it  max/mean  lookup   memory     build"
    );
    for r in rows {
        let _ = writeln!(
            w,
            "{:<10} {:>4}  {:>7} ({:>6})  {:<8}  {:>7} ({:>6})      {:<7}  {:>8.3}  {:>6}  {:>9}  {:>6.2} ms",
            r.algorithm,
            r.nodes,
            pct(r.add_moved, 2),
            pct(r.add_optimal, 2),
            yes(r.add_only_new),
            pct(r.remove_moved, 2),
            pct(r.remove_optimal, 2),
            yes(r.remove_only_removed),
            r.max_load,
            nanos(r.lookup_ns),
            bytes(r.memory_bytes as f64),
            r.build_ms
        );
    }
}

fn yes(flag: bool) -> &'static str {
    if flag { "yes" } else { "no" }
}

fn db_rps(rps: f64, factor: f64) -> String {
    format!("{} rps ({factor:.1}x)", thousands(rps.round() as u64))
}

fn cost_text(w: &mut String, c: &Cost) {
    let _ = writeln!(
        w,
        "\nCost of moved keys, {} -> {} servers",
        c.nodes,
        c.nodes + 1
    );
    let _ = writeln!(
        w,
        "cache: {} rps at {} hits, database normally {} rps; store: {} on {} nodes",
        thousands(c.rps.round() as u64),
        pct(c.hit_rate, 0),
        thousands(c.normal_db_rps.round() as u64),
        bytes(c.data_bytes),
        c.nodes
    );
    let measured_title = match c.measured_vnodes {
        Some(v) => format!("measured (ring at {v} vnodes)"),
        None => "measured (run modulo and single)".into(),
    };
    let _ = writeln!(
        w,
        "                       {:<24}{measured_title}",
        "expected"
    );
    let column = |f: &dyn Fn(&CostFigures) -> String| {
        let expected = f(&c.expected);
        let measured = c.measured.as_ref().map_or_else(|| "-".into(), f);
        format!("{expected:<24}{measured}")
    };
    type Cell = fn(&CostFigures) -> String;
    let lines: [(&str, Cell); 7] = [
        ("% N   keys cold    ", |f| pct(f.modulo_moved, 2)),
        ("      database     ", |f| {
            db_rps(f.modulo_db_rps, f.modulo_factor)
        }),
        ("      data moved   ", |f| bytes(f.modulo_bytes)),
        ("ring  keys cold    ", |f| pct(f.ring_moved, 2)),
        ("      database     ", |f| {
            db_rps(f.ring_db_rps, f.ring_factor)
        }),
        ("      data moved   ", |f| bytes(f.ring_bytes)),
        ("      per old node ", |f| bytes(f.ring_bytes_per_donor)),
    ];
    for (label, f) in lines {
        let _ = writeln!(w, "{label}    {}", column(&f));
    }
}

/// CSV: one section per experiment, each with its own header line whose
/// first column is `experiment`, sections separated by a blank line.
pub fn csv(report: &Report) -> String {
    let mut out = String::new();
    let w = &mut out;
    if let Some(rows) = &report.modulo {
        let _ = writeln!(w, "experiment,from,to,moved");
        for r in rows {
            let _ = writeln!(w, "modulo,{},{},{}", r.from, r.to, r.moved);
        }
        w.push('\n');
    }
    if let Some(rows) = &report.single {
        let _ = writeln!(w, "experiment,vnodes,moved,to_new,donors,max,min,spread");
        for r in rows {
            let _ = writeln!(
                w,
                "single,{},{},{},{},{},{},{}",
                r.vnodes, r.moved, r.to_new, r.donors, r.max, r.min, r.spread
            );
        }
        w.push('\n');
    }
    if let Some(rows) = &report.seeds {
        let _ = writeln!(
            w,
            "experiment,vnodes,moved_min,moved_avg,moved_max,max_avg,spread_avg"
        );
        for r in rows {
            let _ = writeln!(
                w,
                "seeds,{},{},{},{},{},{}",
                r.vnodes, r.moved_min, r.moved_avg, r.moved_max, r.max_avg, r.spread_avg
            );
        }
        w.push('\n');
    }
    if let Some(rows) = &report.failure {
        let _ = writeln!(
            w,
            "experiment,vnodes,victim,victim_share,receivers,neighbor,neighbor_before,neighbor_after,only_victim_moved"
        );
        for r in rows {
            let _ = writeln!(
                w,
                "failure,{},{},{},{},{},{},{},{}",
                r.vnodes,
                r.victim,
                r.victim_share,
                r.receivers,
                r.neighbor.as_deref().unwrap_or(""),
                r.neighbor_before,
                r.neighbor_after,
                r.only_victim_moved
            );
        }
        w.push('\n');
    }
    if let Some(rows) = &report.weights {
        let _ = writeln!(w, "experiment,vnodes,node,share");
        for r in rows {
            for (name, share) in &r.shares.0 {
                let _ = writeln!(w, "weights,{},{name},{share}", r.vnodes);
            }
        }
        w.push('\n');
    }
    if let Some(r) = &report.rendezvous {
        let _ = writeln!(
            w,
            "experiment,keys,nodes,moved,to_new,lookup_ns,ring_lookup_ns"
        );
        let _ = writeln!(
            w,
            "rendezvous,{},{},{},{},{},{}",
            r.keys, r.nodes, r.moved, r.to_new, r.lookup_ns, r.ring_lookup_ns
        );
        w.push('\n');
    }
    if let Some(rows) = &report.compare {
        let _ = writeln!(
            w,
            "experiment,algorithm,nodes,add_moved,add_optimal,add_only_new,remove_moved,remove_optimal,remove_only_removed,max_load,lookup_ns,memory_bytes,build_ms"
        );
        for r in rows {
            let _ = writeln!(
                w,
                "compare,{},{},{},{},{},{},{},{},{},{},{},{}",
                r.algorithm,
                r.nodes,
                r.add_moved,
                r.add_optimal,
                r.add_only_new,
                r.remove_moved,
                r.remove_optimal,
                r.remove_only_removed,
                r.max_load,
                r.lookup_ns,
                r.memory_bytes,
                r.build_ms
            );
        }
        w.push('\n');
    }
    if let Some(c) = &report.cost {
        let _ = writeln!(
            w,
            "experiment,basis,modulo_moved,ring_moved,modulo_db_rps,ring_db_rps,modulo_factor,ring_factor,modulo_bytes,ring_bytes,ring_bytes_per_donor"
        );
        let rows = [
            ("expected", Some(&c.expected)),
            ("measured", c.measured.as_ref()),
        ];
        for (basis, f) in rows {
            if let Some(f) = f {
                let _ = writeln!(
                    w,
                    "cost,{basis},{},{},{},{},{},{},{},{},{}",
                    f.modulo_moved,
                    f.ring_moved,
                    f.modulo_db_rps,
                    f.ring_db_rps,
                    f.modulo_factor,
                    f.ring_factor,
                    f.modulo_bytes,
                    f.ring_bytes,
                    f.ring_bytes_per_donor
                );
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn number_formats() {
        assert_eq!(thousands(1_000_000), "1,000,000");
        assert_eq!(thousands(999), "999");
        assert_eq!(bytes(3e12), "3.00 TB");
        assert_eq!(bytes(3e12 / 11.0), "273 GB");
        assert_eq!(bytes(3e12 / 110.0), "27.3 GB");
        assert_eq!(pct(0.0771, 2), "7.71%");
    }
}
