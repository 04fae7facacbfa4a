//! `plan`'s output: text for a terminal, one JSON document, or CSV.
//!
//! Every format carries the same figures: the change, the moved fraction
//! with how it was computed (exact, or sampled with its 95 % interval) next
//! to the optimum and to `hash % N`, the donor → receiver flows (with bytes
//! given `--data`), each node's expected share before and after, the costs
//! (`ringwise_sim::cost`), the ranges with `--ranges` (slot moves for
//! `slots`, token ranges for `cassandra`, in the peer's width), and the
//! moved keys with `--keys`.

use std::collections::BTreeSet;
use std::io::Write;

use ringwise::{Algorithm, AnyPlacement, Keyed, Method, Placement};
use ringwise_sim::cost::{cache_cost, modulo_moved, transfer_seconds};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::{Value, json};

use super::Plan;
use super::keys::KeyTally;
use super::ranges::{SETSLOT_STEPS, range_value};
use crate::Failure;
use crate::format::{Format, JSON_VERSION, Json, write_json};

/// The cost options.
pub struct Costs {
    pub data: Option<f64>,
    pub rps: Option<f64>,
    pub hit_rate: Option<f64>,
    pub bandwidth: Option<f64>,
}

/// Each node's real share of the keys in `keyed` (one side of the plan),
/// by [`Movement::nodes`] index (0 where absent), as `inspect` computes
/// it: exact from a ring's arcs or a table, else sampled on the keys
/// whose number is returned (0 when exact). Not the weights' shares: with
/// those, one of 4 nginx upstreams read "before 25.00 %" yet "gives
/// 28.12 %". O(P) or O(samples · lookup).
fn real_shares(plan: &Plan, keyed: &Keyed<AnyPlacement>) -> (Vec<f64>, u64) {
    let m = &plan.movement;
    let (stats, samples) = crate::inspect::shares(keyed);
    let mut shares = vec![0.0; m.nodes.len()];
    for node in &stats.nodes {
        if let Ok(i) = m.nodes.binary_search(&node.name) {
            shares[i] = node.share;
        }
    }
    (shares, samples)
}

/// The whole plan as one JSON value; text and CSV are drawn from it.
fn document(plan: &Plan, keys: Option<&KeyTally>, costs: &Costs, ranges: bool) -> Value {
    let m = &plan.movement;
    let (n_old, n_new) = (plan.old.placement().len(), plan.new.placement().len());
    let total = costs.data.or(keys.filter(|k| k.sized).map(|k| k.bytes));
    let bytes = |f: f64| total.map(|t| t * f);
    let mut flows: Vec<Value> = m
        .flows
        .iter()
        .map(|f| {
            json!({
                "from": m.name(f.from), "to": m.name(f.to), "fraction": f.fraction,
                "bytes": bytes(f.fraction),
            })
        })
        .collect();
    if let Some(k) = keys {
        key_flows(&mut flows, k);
    }
    let (given, received) = (m.given(), m.received());
    let (before, samples_before) = real_shares(plan, &plan.old);
    let (after, samples_after) = real_shares(plan, &plan.new);
    let nodes: Vec<Value> = (0..m.nodes.len())
        .map(|i| {
            json!({
                "name": m.nodes[i], "before": before[i], "after": after[i],
                "expected_before": m.expected_before[i], "expected_after": m.expected_after[i],
                "gives": given[i], "receives": received[i],
                "bytes_out": bytes(given[i]), "bytes_in": bytes(received[i]),
            })
        })
        .collect();
    // A change of algorithm or parameters is a migration: the optimum and
    // `% N`, which compare membership changes of one algorithm, are null.
    let comparable = !plan.setup_changes;
    let modulo = comparable.then(|| modulo_moved(n_old as u64, n_new as u64));
    let mut doc = json!({
        "version": JSON_VERSION,
        "shares_samples": [samples_before, samples_after],
        "algorithm": plan.from.algorithm.name(), "hash": plan.from.params.hash.name(),
        "algorithm_after": plan.to_algorithm().name(), "setup_changes": plan.setup_changes,
        "hash_after": plan.hash_after().name(), "rehash": plan.rehash(),
        "nodes_before": n_old, "nodes_after": n_new,
        "method": method(&m.method), "exact": m.method.is_exact(),
        "moved": m.moved(), "optimum": comparable.then(|| m.optimum()),
        "modulo_moved": modulo,
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
        let modulo = modulo.map(|f| cache_cost(rps, hit, f));
        doc["cache"] = json!({
            "rps": rps, "hit_rate": hit, "normal_db_rps": cost.normal_db_rps,
            "db_rps": cost.db_rps, "factor": cost.factor,
            "modulo_db_rps": modulo.map(|c| c.db_rps),
            "modulo_factor": modulo.map(|c| c.factor),
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
    // Slot moves are the plan of a Redis Cluster: always listed. The list
    // itself is written as a stream ([`Streamed`], [`write_ranges_csv`],
    // `text`), one range at a time: a 16,777,213-slot maglev table's
    // millions of ranges held as JSON values took 3.45 GB for 50 MB of
    // output. The document holds an empty placeholder in its place.
    if ranges || plan.from.algorithm == Algorithm::Slots {
        doc["ranges"] = json!([]);
    }
    // A migration (another algorithm, parameters or key hash) changes
    // every client at once: the keys that change owner are the ones a
    // dual-read window (new owner first, the old one on a miss) must cover.
    if plan.setup_changes || plan.rehash() {
        doc["dual_read"] = json!({
            "fraction": m.moved(), "keys": keys.map(|k| k.moved),
        });
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

/// `--keys`: each flow gains the keys that took it and, when the file gave
/// sizes, their real bytes (`key_bytes`, next to `bytes`, the total spread
/// like the hashes); a pair only the keys took (a sampled diff can miss a
/// rare one) is added with no fraction. The pairs found are remembered, so
/// this is O((F + K) log K) for F flows and K key pairs, not O(F · K): a
/// rehash lists up to 10^6 flows.
fn key_flows(flows: &mut Vec<Value>, k: &KeyTally) {
    let mut found: BTreeSet<&(String, String)> = BTreeSet::new();
    for f in flows.iter_mut() {
        let (from, to) = (f["from"].as_str(), f["to"].as_str());
        let pair = (
            from.unwrap_or_default().to_owned(),
            to.unwrap_or_default().to_owned(),
        );
        let (n, b) = match k.flows.get_key_value(&pair) {
            Some((key, &counts)) => {
                // Only a flow with both names matches a key pair (a name
                // missing from the JSON is not the name "").
                if from.is_some() && to.is_some() {
                    found.insert(key);
                }
                counts
            }
            None => (0, 0.0),
        };
        f["keys"] = n.into();
        f["key_bytes"] = json!(k.sized.then_some(b));
    }
    for (pair @ (from, to), (n, b)) in &k.flows {
        if !found.contains(pair) {
            flows.push(json!({
                "from": from, "to": to, "fraction": null, "bytes": null,
                "keys": n, "key_bytes": k.sized.then_some(*b),
            }));
        }
    }
}

fn method(method: &Method) -> &'static str {
    match method {
        Method::Arcs => "arcs",
        Method::MixedArcs => "mixed-arcs",
        Method::Table { .. } => "table",
        _ => "sampled",
    }
}

/// The document with its `ranges` placeholder serialized as the list of
/// moved ranges, one at a time, straight into the writer: the output is
/// the same bytes as a document holding the list, without holding it.
struct Streamed<'a> {
    doc: &'a Value,
    plan: &'a Plan,
}

impl Serialize for Streamed<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let Some(fields) = self.doc.as_object() else {
            return self.doc.serialize(s);
        };
        let mut map = s.serialize_map(Some(fields.len()))?;
        for (key, value) in fields {
            match key.as_str() {
                "ranges" => map.serialize_entry(key, &Ranges(self.plan))?,
                _ => map.serialize_entry(key, value)?,
            }
        }
        map.end()
    }
}

/// The moved ranges as a JSON list, each built as it is written.
struct Ranges<'a>(&'a Plan);

impl Serialize for Ranges<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let ranges = &self.0.movement.ranges;
        let mut seq = s.serialize_seq(Some(ranges.len()))?;
        for r in ranges {
            seq.serialize_element(&range_value(self.0, r))?;
        }
        seq.end()
    }
}

/// Writes the plan. Memory beyond the diff is the document without its
/// ranges and the output buffer: ranges and moved keys are written as
/// they are formatted. O(ranges + moved keys) time.
pub fn write(
    plan: &Plan,
    keys: Option<&KeyTally>,
    costs: &Costs,
    format: Format,
    ranges: bool,
) -> Result<(), Failure> {
    let doc = document(plan, keys, costs, ranges);
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let result = match format {
        Format::Json => write_json(&mut out, &Streamed { doc: &doc, plan }, Json::Line),
        Format::Csv => {
            let slots = plan.from.algorithm == Algorithm::Slots;
            csv(&mut out, plan, &doc, slots)
        }
        Format::Text => super::text::write(&mut out, plan, &doc),
    };
    result.and_then(|()| out.flush()).map_err(Failure::io)
}

/// CSV, shaped like `simulate`'s: sections separated by a blank line, each
/// with its own header whose first column is `section`. First the summary
/// as `section,key,value` rows (`plan` for the top-level figures, interval
/// as `interval_low` / `interval_high`, the shares' samples as
/// `shares_samples_before` / `_after`; `cache`, `stream` and `keys` for
/// theirs; `slot_moves,how` for the Redis steps), then `flow`, `node`,
/// `range` (or `slot_move` for slots) and `moved_key` rows. Every figure of
/// the JSON document is in it, written the same way; null is an empty
/// cell.
fn csv(writer: &mut impl Write, plan: &Plan, doc: &Value, slots: bool) -> std::io::Result<()> {
    let mut out = String::from("section,key,value\n");
    let mut pair = |section: &str, key: &str, v: &Value| {
        out += &format!("{section},{key},{}\n", cell(v));
    };
    let fields = || doc.as_object().into_iter().flatten();
    // The top-level figures first, then each object's (cache, keys, stream).
    for (key, v) in fields() {
        match v {
            Value::Array(items) if key == "interval" => {
                pair("plan", "interval_low", &items[0]);
                pair("plan", "interval_high", &items[1]);
            }
            Value::Array(items) if key == "shares_samples" => {
                pair("plan", "shares_samples_before", &items[0]);
                pair("plan", "shares_samples_after", &items[1]);
            }
            Value::Array(_) | Value::Object(_) => {}
            v => pair("plan", key, v),
        }
    }
    for (key, v) in fields() {
        for (k, v) in v.as_object().into_iter().flatten() {
            if !v.is_array() {
                pair(key, k, v);
            }
        }
    }
    if slots {
        pair("slot_moves", "how", &Value::from(SETSLOT_STEPS));
    }
    let empty = Vec::new();
    let rows = |v: &Value| v.as_array().unwrap_or(&empty).clone();
    out += &section("flow", &rows(&doc["flows"]), FLOW_FIELDS);
    out += &section("node", &rows(&doc["nodes"]), NODE_FIELDS);
    writer.write_all(out.as_bytes())?;
    if doc.get("ranges").is_some() {
        let name = if slots { "slot_move" } else { "range" };
        let fields = ["start", "end", "from", "to"];
        writer.write_all(section(name, &[], &fields).as_bytes())?;
        for r in &plan.movement.ranges {
            let row = range_value(plan, r);
            let cells: Vec<String> = fields.iter().map(|f| cell(&row[*f])).collect();
            writeln!(writer, "{name},{}", cells.join(","))?;
        }
    }
    if let Some(k) = doc.get("keys") {
        writer.write_all(b"\nsection,key,old,new\n")?;
        for row in k["moved_keys"].as_array().into_iter().flatten() {
            let cells: Vec<String> = row.as_array().into_iter().flatten().map(cell).collect();
            writeln!(writer, "moved_key,{}", cells.join(","))?;
        }
    }
    Ok(())
}

const FLOW_FIELDS: &[&str] = &["from", "to", "fraction", "bytes", "keys", "key_bytes"];
const NODE_FIELDS: &[&str] = &[
    "name",
    "before",
    "after",
    "gives",
    "receives",
    "bytes_out",
    "bytes_in",
    "expected_before",
    "expected_after",
];

/// One CSV value: strings quoted when they must be, null empty, numbers as
/// JSON writes them.
fn cell(v: &Value) -> String {
    match v {
        Value::String(s) if s.contains([',', '"', '\n', '\r']) => {
            format!("\"{}\"", s.replace('"', "\"\""))
        }
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        v => v.to_string(),
    }
}

/// A blank line, the header `section,FIELDS`, then a `name,...` row each.
fn section(name: &str, rows: &[Value], fields: &[&str]) -> String {
    let mut out = format!("\nsection,{}\n", fields.join(","));
    for row in rows {
        let cells: Vec<String> = fields.iter().map(|f| cell(&row[*f])).collect();
        out += &format!("{name},{}\n", cells.join(","));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pair some flow has is annotated in place; a pair only the keys
    /// took is appended after the flows, in key-pair order, with no
    /// fraction.
    #[test]
    fn key_flows_annotates_then_appends_the_pairs_no_flow_has() {
        let mut flows = vec![
            json!({"from": "a", "to": "b", "fraction": 0.25}),
            json!({"from": "b", "to": "c", "fraction": 0.5}),
        ];
        let mut k = KeyTally {
            sized: true,
            ..KeyTally::default()
        };
        for (from, to, n) in [("c", "a", 1), ("a", "b", 2), ("a", "c", 3)] {
            let pair = (from.to_owned(), to.to_owned());
            k.flows.insert(pair, (n, f64::from(n as u32) * 10.0));
        }
        key_flows(&mut flows, &k);
        let keys: Vec<_> = flows.iter().map(|f| f["keys"].clone()).collect();
        assert_eq!(keys, [json!(2), json!(0), json!(3), json!(1)]);
        assert_eq!(
            flows[2],
            json!({"from": "a", "to": "c", "fraction": null,
            "bytes": null, "keys": 3, "key_bytes": 30.0})
        );
        assert_eq!(flows[3]["from"], "c");
        assert_eq!(flows[1]["key_bytes"], 0.0);
    }
}
