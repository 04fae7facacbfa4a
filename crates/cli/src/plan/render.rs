//! `plan`'s output: text for a terminal, one JSON document, or CSV.
//!
//! Every format carries the same figures: the change, the moved fraction
//! with how it was computed (exact, or sampled with its 95 % interval) next
//! to the optimum and to `hash % N`, the donor → receiver flows (with bytes
//! given `--data`), each node's expected share before and after, the costs
//! (`ringwise_sim::cost`), the ranges with `--ranges` (slot moves for
//! `slots`, token ranges for `cassandra`, in the peer's width), and the
//! moved keys with `--keys`.

use std::io::Write;

use ringwise::{Method, MovedRange, Movement, Placement, Width};
use ringwise_sim::cost::{cache_cost, modulo_moved, transfer_seconds};
use serde_json::{Value, json};

use super::Plan;
use super::keys::KeyTally;
use crate::Failure;
use crate::format::{Format, JSON_VERSION, Json, readable, write_json};

/// The cost options.
pub struct Costs {
    pub data: Option<f64>,
    pub rps: Option<f64>,
    pub hit_rate: Option<f64>,
    pub bandwidth: Option<f64>,
}

/// The whole plan as one JSON value; text and CSV are drawn from it.
fn document(plan: &Plan, keys: Option<&KeyTally>, costs: &Costs, ranges: bool) -> Value {
    let m = &plan.movement;
    let (n_old, n_new) = (plan.old.placement().len(), plan.new.placement().len());
    let total = costs.data.or(keys.filter(|k| k.sized).map(|k| k.bytes));
    let bytes = |f: f64| total.map(|t| t * f);
    let flows: Vec<Value> = m
        .flows
        .iter()
        .map(|f| {
            json!({
                "from": m.name(f.from), "to": m.name(f.to), "fraction": f.fraction,
                "bytes": bytes(f.fraction),
            })
        })
        .collect();
    let (given, received) = (m.given(), m.received());
    let nodes: Vec<Value> = (0..m.nodes.len())
        .map(|i| {
            json!({
                "name": m.nodes[i], "before": m.expected_before[i], "after": m.expected_after[i],
                "gives": given[i], "receives": received[i],
                "bytes_out": bytes(given[i]), "bytes_in": bytes(received[i]),
            })
        })
        .collect();
    let mut doc = json!({
        "version": JSON_VERSION,
        "algorithm": plan.from.algorithm.name(), "hash": plan.from.params.hash.name(),
        "nodes_before": n_old, "nodes_after": n_new,
        "method": method(&m.method), "exact": m.method.is_exact(),
        "moved": m.moved(), "optimum": m.optimum(),
        "modulo_moved": modulo_moved(n_old as u64, n_new as u64),
        "data_bytes": total, "moved_bytes": bytes(m.moved()),
        "flows": flows, "nodes": nodes,
    });
    if let Method::Sampled { samples, low, high } = m.method {
        doc["samples"] = samples.into();
        doc["interval"] = json!([low, high]);
    }
    if let Some(rps) = costs.rps {
        let hit = costs.hit_rate.unwrap_or(0.95);
        let cost = cache_cost(rps, hit, m.moved());
        let modulo = cache_cost(rps, hit, modulo_moved(n_old as u64, n_new as u64));
        doc["cache"] = json!({
            "rps": rps, "hit_rate": hit, "normal_db_rps": cost.normal_db_rps,
            "db_rps": cost.db_rps, "factor": cost.factor,
            "modulo_db_rps": modulo.db_rps, "modulo_factor": modulo.factor,
        });
    }
    if let (Some(bw), Some(total)) = (costs.bandwidth, total) {
        let busiest = (0..m.nodes.len())
            .map(|i| (given[i].max(received[i]) * total, i))
            .fold((0.0, 0), |a, b| if b.0 > a.0 { b } else { a });
        doc["stream"] = json!({
            "bandwidth": bw, "busiest_node": m.nodes.get(busiest.1),
            "busiest_bytes": busiest.0, "seconds": transfer_seconds(busiest.0, bw),
        });
    }
    if ranges {
        let list: Vec<Value> = m
            .ranges
            .iter()
            .map(|r| {
                json!({
                    "start": native(plan, r.start), "end": native(plan, r.end),
                    "from": m.name(r.from), "to": m.name(r.to),
                })
            })
            .collect();
        doc["ranges"] = list.into();
    }
    if let Some(k) = keys {
        doc["keys"] = json!({
            "keys": k.keys, "moved": k.moved, "bytes": k.sized.then_some(k.bytes),
            "moved_bytes": k.sized.then_some(k.moved_bytes),
            "flows": k.flows.iter().map(|((a, b), (n, bytes))| json!({
                "from": a, "to": b, "keys": n, "bytes": k.sized.then_some(*bytes),
            })).collect::<Vec<_>>(),
            "moved_keys": k.moved_keys.iter().map(|(k, a, b)| json!([k, a, b])).collect::<Vec<_>>(),
        });
    }
    doc
}

fn method(method: &Method) -> &'static str {
    match method {
        Method::Arcs => "arcs",
        Method::Table { .. } => "table",
        _ => "sampled",
    }
}

/// A range end as the peer writes it: slots as they are, ring positions in
/// the ring's width (tokens for cassandra, 32-bit for ketama and nginx).
fn native(plan: &Plan, position: u64) -> Value {
    let width = plan
        .old
        .placement()
        .as_ring()
        .map_or(Width::U64, |r| r.width());
    match plan.movement.method {
        Method::Arcs => {
            let v = width.native(position);
            i64::try_from(v).map_or_else(|_| json!(position), Value::from)
        }
        _ => position.into(),
    }
}

pub fn write(
    plan: &Plan,
    keys: Option<&KeyTally>,
    costs: &Costs,
    format: Format,
    ranges: bool,
) -> Result<(), Failure> {
    let doc = document(plan, keys, costs, ranges);
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let result = match format {
        Format::Json => write_json(&mut out, &doc, Json::Line),
        Format::Csv => out.write_all(csv(&doc).as_bytes()),
        Format::Text => out.write_all(super::text::text(plan, &doc).as_bytes()),
    };
    result.and_then(|()| out.flush()).map_err(Failure::io)
}

/// CSV: the flows, then with `--ranges` the ranges, then with `--keys` the
/// moved keys, each section after a blank line and its header.
fn csv(doc: &Value) -> String {
    let cell = |v: &Value| match v {
        Value::String(s) if s.contains([',', '"', '\n', '\r']) => {
            format!("\"{}\"", s.replace('"', "\"\""))
        }
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        v => v.to_string(),
    };
    let section = |header: &str, rows: &[Value], fields: &[&str]| {
        let mut out = format!("{header}\n");
        for row in rows {
            let cells: Vec<String> = fields.iter().map(|f| cell(&row[*f])).collect();
            out += &(cells.join(",") + "\n");
        }
        out
    };
    let empty = Vec::new();
    let rows = |v: &Value| v.as_array().unwrap_or(&empty).clone();
    let mut out = section(
        "from,to,fraction,bytes",
        &rows(&doc["flows"]),
        &["from", "to", "fraction", "bytes"],
    );
    if doc.get("ranges").is_some() {
        out += "\n";
        out += &section(
            "start,end,from,to",
            &rows(&doc["ranges"]),
            &["start", "end", "from", "to"],
        );
    }
    if let Some(moved) = doc.get("keys").map(|k| rows(&k["moved_keys"])) {
        out += "\nkey,old,new\n";
        for row in moved {
            let cells: Vec<String> = rows(&row).iter().map(cell).collect();
            out += &(cells.join(",") + "\n");
        }
    }
    out
}

/// Bytes in decimal units: `272.7 GB`.
pub fn bytes(b: f64) -> String {
    const UNITS: [&str; 6] = ["B", "KB", "MB", "GB", "TB", "PB"];
    let mut value = b;
    let mut unit = 0;
    while value.abs() >= 1000.0 && unit < UNITS.len() - 1 {
        value /= 1000.0;
        unit += 1;
    }
    match unit {
        0 => format!("{value:.0} B"),
        _ => format!("{} {}", readable(value, 1), UNITS[unit]),
    }
}

/// A fraction as a percentage.
pub fn percent(f: f64) -> String {
    format!("{}%", readable(f * 100.0, 2))
}

/// A range as text: slots `a-b`, arcs `(start, end]`.
pub fn range_text(plan: &Plan, r: &MovedRange) -> String {
    match plan.movement.method {
        Method::Arcs => format!("({}, {}]", native(plan, r.start), native(plan, r.end)),
        _ if r.start == r.end => r.start.to_string(),
        _ => format!("{}-{}", r.start, r.end),
    }
}

/// The movement's method in words.
pub fn method_words(m: &Movement) -> String {
    match m.method {
        Method::Arcs => format!("exact: ring arcs merged, {} ranges", m.ranges.len()),
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
