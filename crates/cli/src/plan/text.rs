//! `plan --format text`: the plan laid out for a terminal, from the same
//! JSON document the other formats write (so every figure shown is also
//! in `--format json`), with the words and units it is written in (bytes,
//! percentages, how the movement was computed).

use std::io::{self, Write};

use ringwise::{Algorithm, Method, Movement, Placement};
use serde_json::Value;

use super::Plan;
use super::ranges::{SETSLOT_STEPS, range_text};
use crate::format::readable;

/// Writes the plan as text: the summary, then the ranges and moved keys
/// a line at a time (a list of millions is never held as one string).
pub fn write(out: &mut impl Write, plan: &Plan, doc: &Value) -> io::Result<()> {
    let m = &plan.movement;
    out.write_all(summary(plan, doc).as_bytes())?;
    if plan.from.algorithm == Algorithm::Slots {
        out.write_all(slot_moves(plan).as_bytes())?;
    } else if doc.get("ranges").is_some() && m.method == Method::MixedArcs {
        out.write_all(
            b"\nranges: none listed: with avalanche HAProxy compares full_hash of the key \
              hash, so the moved arcs are of that mixed value, not ranges of the hash; \
              --keys FILE lists the keys that move\n",
        )?;
    } else if doc.get("ranges").is_some() && !m.method.is_exact() {
        out.write_all(
            b"\nranges: none listed: this plan is sampled (the algorithm computes owners \
              per key, with no ranges or table to compare), so no moved range is known \
              exactly; --keys FILE lists the keys that move\n",
        )?;
    } else if doc.get("ranges").is_some() {
        out.write_all(b"\nranges (start, end] (a key moves when its hash lies in one):\n")?;
        for r in &m.ranges {
            writeln!(
                out,
                "{}\t{}\t{}",
                range_text(plan, r),
                m.name(r.from),
                m.name(r.to)
            )?;
        }
    }
    if let Some(k) = doc.get("keys") {
        out.write_all(keys(k).as_bytes())?;
    }
    // Last, so that the script runs from its line to the end.
    if let Some(ids) = plan
        .redis
        .as_ref()
        .filter(|_| plan.from.algorithm == Algorithm::Slots)
    {
        out.write_all(super::redis::script(plan, ids).as_bytes())?;
    }
    Ok(())
}

/// Everything before the ranges: the change, the moved fraction, data,
/// flows, nodes and costs.
fn summary(plan: &Plan, doc: &Value) -> String {
    let m = &plan.movement;
    let f = |v: &Value| v.as_f64().unwrap_or(0.0);
    let algorithm = if plan.to_algorithm() == plan.from.algorithm {
        plan.from.algorithm.to_string()
    } else {
        plan.algorithm_change()
    };
    let hash = match plan.rehash() {
        true => super::hash_change(plan.from.params.hash, plan.hash_after()),
        false => plan.from.params.hash.to_string(),
    };
    let mut out = format!(
        "plan: {algorithm}, hash {hash}: {} -> {} nodes{}\n",
        doc["nodes_before"],
        doc["nodes_after"],
        changes(plan)
    );
    if plan.rehash() {
        out += &format!(
            "moved: every key is rehashed: {} of the key space is expected to change owner \
             (1 - sum over nodes of p_old * p_new, the flows p_old(a) * p_new(b); {}); the key \
             hash changes, so the optimum and hash % N comparisons do not apply\n",
            percent(m.moved()),
            rehash_words(m)
        );
    } else if doc["nodes_before"].as_u64() == Some(0) {
        out += "moved: nothing (a new cluster: every key lands for the first time)\n";
    } else {
        out += &format!(
            "moved: {} of the key space ({}); {}\n",
            percent(m.moved()),
            method_words(m),
            comparisons(plan, doc)
        );
    }
    if let Some(dual) = doc.get("dual_read") {
        let counted = match (dual["keys"].as_u64(), doc["keys"]["keys"].as_u64()) {
            (Some(moved), Some(all)) => format!(" ({moved} of the {all} keys given)"),
            _ => String::new(),
        };
        out += &format!(
            "dual read: while clients switch, read each key from its new owner and on a miss \
             from its old one: the window must cover the {} of the keys that change \
             owner{counted}\n",
            percent(f(&dual["fraction"]))
        );
    }
    if let Some(total) = doc["data_bytes"].as_f64() {
        // A sampled estimate's bytes carry its interval too.
        let interval = match doc["interval"].as_array().map(Vec::as_slice) {
            Some([low, high]) => format!(
                ", 95% interval {} to {}",
                bytes(total * f(low)),
                bytes(total * f(high))
            ),
            _ => String::new(),
        };
        let modulo = doc["modulo_moved"].as_f64().map_or(String::new(), |m| {
            format!(" ({} with hash % N)", bytes(total * m))
        });
        out += &format!(
            "data: {} spread like the keys: {} move{interval}{modulo}\n",
            bytes(total),
            bytes(f(&doc["moved_bytes"])),
        );
    }
    out += &flows(doc);
    out += &nodes(doc);
    out += &costs(doc);
    out
}

/// How a rehash's shares were measured.
fn rehash_words(m: &ringwise::Movement) -> String {
    match m.method {
        ringwise::Method::Sampled { samples, low, high } => format!(
            "shares sampled on {samples} keys, 95% interval {} to {}",
            percent(low),
            percent(high)
        ),
        _ => "exact shares of the ring arcs".into(),
    }
}

/// The moved fraction's yardsticks: the optimum with the ratio to it, and
/// `hash % N`; neither applies when `--to` changes the algorithm or its
/// parameters (every placement differs, not one membership change).
fn comparisons(plan: &Plan, doc: &Value) -> String {
    if plan.setup_changes {
        return format!(
            "the algorithm or its parameters change ({}): a migration, so the \
             optimum and hash % N comparisons do not apply",
            plan.algorithm_change()
        );
    }
    let f = |v: &Value| v.as_f64().unwrap_or(0.0);
    let optimum = f(&doc["optimum"]);
    let ratio = if optimum > 0.0 {
        format!("{}x", readable(plan.movement.moved() / optimum, 3))
    } else {
        "nothing needs to move".into()
    };
    format!(
        "optimum {} ({ratio}); hash % N would move {}",
        percent(optimum),
        percent(f(&doc["modulo_moved"]))
    )
}

/// `(added x, removed y, reweighted z)`.
fn changes(plan: &Plan) -> String {
    let (old, new) = (plan.old.placement().nodes(), plan.new.placement().nodes());
    let mut parts = Vec::new();
    for n in new.iter() {
        match old.id(&n.name).and_then(|id| old.get(id)) {
            None => parts.push(format!("+{}", n.name)),
            Some(o) if o.weight != n.weight => {
                parts.push(format!("{} weight {} -> {}", n.name, o.weight, n.weight))
            }
            _ => {}
        }
    }
    parts.extend(
        old.iter()
            .filter(|n| !new.contains(&n.name))
            .map(|n| format!("-{}", n.name)),
    );
    if parts.is_empty() {
        return String::new();
    }
    format!(" ({})", parts.join(", "))
}

fn rows(v: &Value) -> &[Value] {
    v.as_array().map_or(&[], Vec::as_slice)
}

fn name_width(doc: &Value) -> usize {
    let names = rows(&doc["nodes"])
        .iter()
        .filter_map(|n| n["name"].as_str());
    names.map(|n| n.chars().count()).max().unwrap_or(4).max(8)
}

/// The flows; with `--keys`, also the keys that took each and, when the
/// file gave sizes, their real bytes.
fn flows(doc: &Value) -> String {
    let w = name_width(doc);
    let keyed = doc.get("keys").is_some();
    let sized = doc["keys"]["bytes"].is_number();
    let mut out = format!(
        "\n{:<w$}  {:<w$}  {:>9}  {:>10}",
        "donor", "receiver", "share", "bytes"
    );
    if keyed {
        out += &format!("  {:>8}", "keys");
    }
    if sized {
        out += &format!("  {:>10}", "key bytes");
    }
    out += "\n";
    for f in rows(&doc["flows"]) {
        out += &format!(
            "{:<w$}  {:<w$}  {:>9}  {:>10}",
            f["from"].as_str().unwrap_or("?"),
            f["to"].as_str().unwrap_or("?"),
            f["fraction"].as_f64().map_or("-".into(), percent),
            f["bytes"].as_f64().map_or("-".into(), bytes)
        );
        if keyed {
            out += &format!("  {:>8}", f["keys"].as_u64().unwrap_or(0));
        }
        if sized {
            out += &format!(
                "  {:>10}",
                f["key_bytes"].as_f64().map_or("-".into(), bytes)
            );
        }
        out += "\n";
    }
    if sized {
        out +=
            "(bytes: the total spread like the hashes; key bytes: the sizes the key file gives)\n";
    }
    out
}

fn nodes(doc: &Value) -> String {
    let w = name_width(doc);
    let mut out = format!(
        "\n{:<w$}  {:>9}  {:>9}  {:>9}  {:>9}  {:>10}  {:>10}\n",
        "node", "before", "after", "gives", "receives", "bytes out", "bytes in"
    );
    let p = |v: &Value| percent(v.as_f64().unwrap_or(0.0));
    let b = |v: &Value| v.as_f64().map_or("-".into(), bytes);
    for n in rows(&doc["nodes"]) {
        out += &format!(
            "{:<w$}  {:>9}  {:>9}  {:>9}  {:>9}  {:>10}  {:>10}\n",
            n["name"].as_str().unwrap_or("?"),
            p(&n["before"]),
            p(&n["after"]),
            p(&n["gives"]),
            p(&n["receives"]),
            b(&n["bytes_out"]),
            b(&n["bytes_in"])
        );
    }
    out += &format!(
        "(before, after: shares of the keys, as `inspect` prints them{}; gives, receives: of \
         the key space",
        match doc["shares_samples"]
            .as_array()
            .map(|s| s.iter().any(|n| n.as_u64() != Some(0)))
        {
            Some(true) => ", sampled",
            _ => "",
        }
    );
    out += match doc["exact"].as_bool() {
        Some(false) => ", estimated from the samples above)\n",
        _ => ")\n",
    };
    out
}

fn costs(doc: &Value) -> String {
    let f = |v: &Value| v.as_f64().unwrap_or(f64::NAN);
    let mut out = String::new();
    if let Some(c) = doc.get("cache") {
        let modulo = match (c["modulo_db_rps"].as_f64(), c["modulo_factor"].as_f64()) {
            (Some(rps), Some(factor)) => format!(
                " (hash % N: {} rps, {}x)",
                readable(rps, 0),
                readable(factor, 2)
            ),
            _ => String::new(),
        };
        out += &format!(
            "\ncost (cache): at {} rps and a {} hit rate the database gets {} rps right after \
             the change, {}x its normal {}{modulo}\n",
            readable(f(&c["rps"]), 0),
            percent(f(&c["hit_rate"])),
            readable(f(&c["db_rps"]), 0),
            readable(f(&c["factor"]), 2),
            readable(f(&c["normal_db_rps"]), 0),
        );
    }
    if let Some(s) = doc.get("stream") {
        let seconds = f(&s["seconds"]);
        out += &format!(
            "cost (store): at {}/s per node the busiest node, {}, streams {}: {} s ({} min), \
             nodes streaming in parallel\n",
            bytes(f(&s["bandwidth"])),
            s["busiest_node"].as_str().unwrap_or("-"),
            bytes(f(&s["busiest_bytes"])),
            readable(seconds, 0),
            readable(seconds / 60.0, 1)
        );
    }
    out
}

/// Redis Cluster: the slot moves, and how an operator applies them.
fn slot_moves(plan: &Plan) -> String {
    let m = &plan.movement;
    let mut out = format!("\nslot moves (source, target, slots). {SETSLOT_STEPS}\n");
    for r in &m.ranges {
        out += &format!(
            "{}\t{}\t{}\n",
            m.name(r.from),
            m.name(r.to),
            range_text(plan, r)
        );
    }
    out
}

fn keys(k: &Value) -> String {
    let n = |v: &Value| v.as_u64().unwrap_or(0);
    let mut out = format!("\nkeys: {} of {} move", n(&k["moved"]), n(&k["keys"]));
    if let (Some(total), Some(moved)) = (k["bytes"].as_f64(), k["moved_bytes"].as_f64()) {
        out += &format!(", {} of {}", bytes(moved), bytes(total));
    }
    out += "\n";
    for row in rows(&k["moved_keys"]) {
        let cells: Vec<&str> = rows(row).iter().filter_map(Value::as_str).collect();
        out += &(cells.join("\t") + "\n");
    }
    out
}

/// Bytes in decimal units: `272.7 GB`.
fn bytes(b: f64) -> String {
    const UNITS: [&str; 6] = ["B", "KB", "MB", "GB", "TB", "PB"];
    let mut value = b;
    let mut unit = 0;
    while value.abs() >= 1000.0 && unit < UNITS.len() - 1 {
        value /= 1000.0;
        unit += 1;
    }
    match unit {
        0 => format!("{} B", readable(value, 0)),
        _ => format!("{} {}", readable(value, 1), UNITS[unit]),
    }
}

/// A fraction as a percentage.
fn percent(f: f64) -> String {
    format!("{}%", readable(f * 100.0, 2))
}

/// The movement's method in words.
fn method_words(m: &Movement) -> String {
    match m.method {
        Method::Arcs => format!("exact: ring arcs merged, {} ranges", m.ranges.len()),
        Method::MixedArcs => {
            "exact: arcs of the avalanche-mixed key hash merged (no hash ranges)".into()
        }
        Method::Table { size } => format!(
            "exact: {size}-slot tables compared, {} runs",
            m.ranges.len()
        ),
        Method::Sampled { samples, low, high } => format!(
            "sampled on {samples} hashes, 95% interval {} to {}",
            percent(low),
            percent(high)
        ),
        _ => "computed".into(),
    }
}
