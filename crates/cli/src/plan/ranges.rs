//! A moved range as each output writes it: its ends as the peer numbers
//! them (slots as they are, ring positions in the ring's width: tokens for
//! cassandra, 32-bit for ketama and nginx), as a JSON value (JSON, CSV) and
//! as text, and the Redis steps that apply slot moves (text, CSV).

use ringwise::{Method, MovedRange, Width};
use serde_json::{Value, json};

use super::Plan;

/// How an operator applies slot moves to a Redis Cluster (text and CSV).
pub const SETSLOT_STEPS: &str = "For each slot S: on the target CLUSTER SETSLOT S IMPORTING \
     <source-id>; on the source CLUSTER SETSLOT S MIGRATING <target-id>; MIGRATE its keys \
     (CLUSTER GETKEYSINSLOT); then CLUSTER SETSLOT S NODE <target-id> on every master. \
     redis-cli --cluster reshard --cluster-from <source-id> --cluster-to <target-id> \
     --cluster-slots N moves as many slots but picks them itself.";

/// A range end as the peer writes it: slots as numbers, ring positions in
/// the ring's width (tokens for cassandra, 32-bit for ketama and nginx) as
/// decimal strings, exact through any JSON tool ([`crate::format::exact`]).
fn native(plan: &Plan, position: u64) -> Value {
    let width = plan
        .old
        .placement()
        .as_ring()
        .map_or(Width::U64, |r| r.width());
    match plan.movement.method {
        Method::Arcs => crate::format::exact(width.native(position)),
        _ => position.into(),
    }
}

/// One moved range as the JSON document and CSV show it.
pub fn range_value(plan: &Plan, r: &MovedRange) -> Value {
    let m = &plan.movement;
    json!({
        "start": native(plan, r.start), "end": native(plan, r.end),
        "from": m.name(r.from), "to": m.name(r.to),
    })
}

/// A range as text: slots `a-b`, arcs `(start, end]`.
pub fn range_text(plan: &Plan, r: &MovedRange) -> String {
    match plan.movement.method {
        Method::Arcs => {
            let width = plan
                .old
                .placement()
                .as_ring()
                .map_or(Width::U64, |r| r.width());
            format!("({}, {}]", width.native(r.start), width.native(r.end))
        }
        _ if r.start == r.end => r.start.to_string(),
        _ => format!("{}-{}", r.start, r.end),
    }
}
