//! `plan --keys FILE`: real keys looked up in both clusters.
//!
//! One key a line, optionally `KEY<TAB>BYTES` (a whole number or a size
//! such as `12KB`); a line's trailing `\r` is dropped. Keys are resolved a
//! block of 1,024 at a time through [`Keyed::owners_into`] in both
//! clusters; each key whose owner's name changed is kept as `KEY OLD NEW`,
//! and its bytes are added to its donor → receiver flow. O(K) lookups,
//! O(moved keys) memory.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::Path;

use anyhow::{Context, anyhow};
use ringwise::{AnyPlacement, Keyed, Placement};

use super::Plan;
use crate::Failure;

/// What the key file says.
#[derive(Debug, Default)]
pub struct KeyTally {
    /// Keys read.
    pub keys: u64,
    /// Keys whose owner changed.
    pub moved: u64,
    /// Whether any line gave its bytes.
    pub sized: bool,
    /// Bytes of all keys, then of the moved ones.
    pub bytes: f64,
    pub moved_bytes: f64,
    /// `(donor, receiver)` → (keys, bytes).
    pub flows: BTreeMap<(String, String), (u64, f64)>,
    /// `KEY OLD NEW` of each moved key, in file order.
    pub moved_keys: Vec<(String, String, String)>,
}

const BLOCK: usize = 1024;

pub fn tally(path: &Path, plan: &Plan) -> Result<KeyTally, Failure> {
    let unreadable = |e: std::io::Error| {
        Failure::no_input(anyhow::Error::new(e).context(format!("cannot read {}", path.display())))
    };
    let mut reader = BufReader::new(std::fs::File::open(path).map_err(unreadable)?);
    let mut tally = KeyTally::default();
    let mut block: Vec<(Vec<u8>, f64)> = Vec::with_capacity(BLOCK);
    let (mut line, mut number) = (Vec::new(), 0usize);
    loop {
        line.clear();
        let done = reader.read_until(b'\n', &mut line).map_err(unreadable)? == 0;
        if !done {
            number += 1;
            let entry = parse(&line, number, &mut tally.sized)
                .with_context(|| format!("{} line {number}", path.display()))
                .map_err(Failure::data)?;
            block.push(entry);
        }
        if block.len() == BLOCK || (done && !block.is_empty()) {
            resolve(&block, plan, &mut tally);
            block.clear();
        }
        if done {
            return Ok(tally);
        }
    }
}

/// `KEY` or `KEY<TAB>BYTES` without its line end.
fn parse(line: &[u8], number: usize, sized: &mut bool) -> anyhow::Result<(Vec<u8>, f64)> {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let Some(tab) = line.iter().rposition(|&b| b == b'\t') else {
        return Ok((line.to_vec(), 0.0));
    };
    let text = String::from_utf8_lossy(&line[tab + 1..]);
    let bytes = ringwise_sim::cost::parse_size(&text)
        .map_err(|e| anyhow!("line {number}: after the tab comes the key's size in bytes: {e}"))?;
    *sized = true;
    Ok((line[..tab].to_vec(), bytes))
}

fn resolve(block: &[(Vec<u8>, f64)], plan: &Plan, tally: &mut KeyTally) {
    let keys: Vec<&[u8]> = block.iter().map(|(k, _)| k.as_slice()).collect();
    let (mut a, mut b) = (Vec::new(), Vec::new());
    plan.old.owners_into(&keys, &mut a);
    plan.new.owners_into(&keys, &mut b);
    let name = |keyed: &Keyed<AnyPlacement>, id| {
        keyed
            .placement()
            .nodes()
            .name(id)
            .unwrap_or_default()
            .to_owned()
    };
    for ((key, bytes), (&x, &y)) in block.iter().zip(a.iter().zip(&b)) {
        tally.keys += 1;
        tally.bytes += bytes;
        let (from, to) = (name(&plan.old, x), name(&plan.new, y));
        if from == to {
            continue;
        }
        tally.moved += 1;
        tally.moved_bytes += bytes;
        let flow = tally.flows.entry((from.clone(), to.clone())).or_default();
        flow.0 += 1;
        flow.1 += bytes;
        tally
            .moved_keys
            .push((String::from_utf8_lossy(key).into_owned(), from, to));
    }
    // An empty side resolves nothing: its keys count, none moves.
    tally.keys += (block.len() - a.len().min(b.len())) as u64;
}
