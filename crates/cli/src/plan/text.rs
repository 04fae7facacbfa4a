//! `plan --format text`: the plan laid out for a terminal, from the same
//! JSON document the other formats write (so every figure shown is also
//! in `--format json`).

use ringwise::{Algorithm, Placement};
use serde_json::Value;

use super::Plan;
use super::render::{bytes, method_words, percent, range_text};
use crate::format::readable;

pub fn text(plan: &Plan, doc: &Value) -> String {
    let m = &plan.movement;
    let f = |v: &Value| v.as_f64().unwrap_or(0.0);
    let mut out = format!(
        "plan: {}, hash {}: {} -> {} nodes{}\n",
        plan.from.algorithm,
        plan.from.params.hash,
        doc["nodes_before"],
        doc["nodes_after"],
        changes(plan)
    );
    let optimum = f(&doc["optimum"]);
    if doc["nodes_before"].as_u64() == Some(0) {
        out += "moved: nothing (a new cluster: every key lands for the first time)\n";
    } else {
        out += &format!(
            "moved: {} of the key space ({}); optimum {} ({}x); hash % N would move {}\n",
            percent(m.moved()),
            method_words(m),
            percent(optimum),
            if optimum > 0.0 {
                readable(m.moved() / optimum, 3)
            } else {
                "n/a".into()
            },
            percent(f(&doc["modulo_moved"]))
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
        out += &format!(
            "data: {} spread like the keys: {} move{interval} ({} with hash % N)\n",
            bytes(total),
            bytes(f(&doc["moved_bytes"])),
            bytes(total * f(&doc["modulo_moved"]))
        );
    }
    out += &flows(doc);
    out += &nodes(doc);
    out += &costs(doc);
    if plan.from.algorithm == Algorithm::Slots {
        out += &slot_moves(plan);
    } else if doc.get("ranges").is_some() {
        out += "\nranges (start, end] (a key moves when its hash lies in one):\n";
        for r in &m.ranges {
            out += &format!(
                "{}\t{}\t{}\n",
                range_text(plan, r),
                m.name(r.from),
                m.name(r.to)
            );
        }
    }
    if let Some(k) = doc.get("keys") {
        out += &keys(k);
    }
    out
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

fn flows(doc: &Value) -> String {
    let w = name_width(doc);
    let mut out = format!(
        "\n{:<w$}  {:<w$}  {:>9}  {:>10}\n",
        "donor", "receiver", "share", "bytes"
    );
    for f in rows(&doc["flows"]) {
        out += &format!(
            "{:<w$}  {:<w$}  {:>9}  {:>10}\n",
            f["from"].as_str().unwrap_or("?"),
            f["to"].as_str().unwrap_or("?"),
            percent(f["fraction"].as_f64().unwrap_or(0.0)),
            f["bytes"].as_f64().map_or("-".into(), bytes)
        );
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
    out += "(before, after: expected shares from the weights; gives, receives: of the key space";
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
        out += &format!(
            "\ncost (cache): at {} rps and a {} hit rate the database gets {} rps right after \
             the change, {}x its normal {} (hash % N: {} rps, {}x)\n",
            readable(f(&c["rps"]), 0),
            percent(f(&c["hit_rate"])),
            readable(f(&c["db_rps"]), 0),
            readable(f(&c["factor"]), 2),
            readable(f(&c["normal_db_rps"]), 0),
            readable(f(&c["modulo_db_rps"]), 0),
            readable(f(&c["modulo_factor"]), 2)
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
    let mut out = String::from(
        "\nslot moves (source, target, slots). For each slot S: on the target \
         CLUSTER SETSLOT S IMPORTING <source-id>; on the source CLUSTER SETSLOT S MIGRATING \
         <target-id>; MIGRATE its keys (CLUSTER GETKEYSINSLOT); then CLUSTER SETSLOT S NODE \
         <target-id> on every master. redis-cli --cluster reshard --cluster-from <source-id> \
         --cluster-to <target-id> --cluster-slots N moves as many slots but picks them itself.\n",
    );
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
