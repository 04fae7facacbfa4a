//! The numeric ids of an HAProxy backend's servers, which place their
//! points ([`crate::Haproxy`]).
//!
//! Source: haproxy `src/cfgparse.c` (`get_next_id` and the loop that
//! numbers servers after parsing), tag v2.6.0; checked against the running
//! haproxy 2.6.12 (`show servers state`), because the obvious reading, "the
//! smallest free id", is not what it does: a counter starts at 1 and goes
//! up by one at **every** server in listed order, explicit id or not, and a
//! server without an id takes the first id not taken from the counter on.
//!
//! Worked example: `a id 3, c` gives `c` id 2 (the counter is 2 at `c`);
//! `a id 2, b, c` gives `b` 3 and `c` 4, leaving 1 free. Ids equal modulo
//! 2^20 are refused: `id·4096` wraps at 2^32, so they would give the same
//! points and one server would shadow the other. Cost: O(N log N).

use std::collections::{BTreeSet, HashMap};

use crate::Error;
use crate::node::Node;

/// Ids equal modulo this give the same points.
const ID_PERIOD: u32 = 1 << 20;

/// The nodes with every id filled in, as HAProxy numbers servers at start-up.
pub(crate) fn numbered(mut nodes: Vec<Node>) -> Result<Vec<Node>, Error> {
    let mut used: BTreeSet<u32> = BTreeSet::new();
    let mut by_period: HashMap<u32, usize> = HashMap::with_capacity(nodes.len());
    for (i, node) in nodes.iter().enumerate() {
        if let Some(id) = node.id {
            check_id(&nodes, &mut by_period, i, id)?;
            used.insert(id);
        }
    }
    // cfgparse.c: a counter from 1 that every server advances by one,
    // and an automatic id is the first free one from the counter on.
    let mut next = 1u32;
    for i in 0..nodes.len() {
        if nodes[i].id.is_none() {
            while used.contains(&next) {
                next += 1;
            }
            check_id(&nodes, &mut by_period, i, next)?;
            used.insert(next);
            nodes[i].id = Some(next);
        }
        next = next.saturating_add(1);
    }
    Ok(nodes)
}

/// Refuses `id` for node `i` when another node's id has the same points.
fn check_id(
    nodes: &[Node],
    by_period: &mut HashMap<u32, usize>,
    i: usize,
    id: u32,
) -> Result<(), Error> {
    match by_period.insert(id % ID_PERIOD, i) {
        None => Ok(()),
        Some(other) => Err(Error::InvalidNodeId {
            node: nodes[i].name.clone(),
            id: id.into(),
            reason: if nodes[other].id == Some(id) {
                "another node has this id: give every node its own (HAProxy refuses a \
                 repeated `id`)"
            } else {
                "another node's id is equal to it modulo 2^20 (1048576), which gives \
                 HAProxy the same points (id·4096 wraps at 2^32): choose another id"
            },
        }),
    }
}
