//! `--nodes LIST`: `a,b=2,c=0.5@zone-1`, parsed into nodes in listed order.
//!
//! Its own file, using only `anyhow` and `ringwise::Node`, so that the fuzz
//! target `nodes` (`fuzz/fuzz_targets/nodes.rs`) compiles this very file.
//! Cost: O(length of the list).

use anyhow::anyhow;
use ringwise::Node;

/// Parses `a,b=2,c=0.5@zone-1`.
pub fn parse(list: &str) -> anyhow::Result<Vec<Node>> {
    if list.trim().is_empty() {
        return Err(anyhow!(
            "--nodes: the node list is empty; give at least one NAME, e.g. --nodes a,b,c"
        ));
    }
    list.split(',')
        .enumerate()
        .map(|(i, item)| parse_node(i + 1, item.trim()))
        .collect()
}

fn parse_node(position: usize, item: &str) -> anyhow::Result<Node> {
    let (rest, zone) = match item.rsplit_once('@') {
        Some((rest, zone)) => (rest, Some(zone)),
        None => (item, None),
    };
    if let Some(zone) = zone
        && let Some((zone, weight)) = zone.split_once('=')
    {
        // `a@z=2` read as zone "z=2" and weight 1: say where the weight goes.
        let name = rest;
        return Err(anyhow!(
            "--nodes: node {position} ({name:?}) has `={weight}` after its zone; the weight \
             goes before the zone: {name}={weight}@{zone}"
        ));
    }
    let (name, weight) = match rest.rsplit_once('=') {
        Some((name, weight)) => {
            let weight = weight.trim().parse::<f64>().map_err(|_| {
                anyhow!(
                    "--nodes: node {position} ({name:?}) has weight {weight:?}, which is not \
                     a number; write NAME=WEIGHT, e.g. {name}=2"
                )
            })?;
            (name, weight)
        }
        None => (rest, 1.0),
    };
    if name.is_empty() {
        return Err(anyhow!(
            "--nodes: node {position} has an empty name; remove the extra comma or name it"
        ));
    }
    if name.contains('=') {
        // `a==1` would name a node "a=": in a list `=` only separates.
        return Err(anyhow!(
            "--nodes: node {position} ({item:?}) has more than one `=`; write NAME=WEIGHT \
             (a name with `=` in it needs a cluster file)"
        ));
    }
    let mut node = Node::new(name).weight(weight);
    node.zone = zone.map(str::to_owned);
    Ok(node)
}
