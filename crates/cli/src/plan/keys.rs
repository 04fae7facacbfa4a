//! `plan --keys FILE`: real keys looked up in both clusters.
//!
//! One key a line, optionally `KEY<TAB>BYTES` (a whole number or a size
//! such as `12KB`); a line's trailing `\r` is dropped. Keys are resolved a
//! block of 1,024 at a time through [`Keyed::owners_into`] in both
//! clusters; each key whose owner's name changed is kept as `KEY OLD NEW`,
//! and its bytes are added to its donor → receiver flow. O(K) lookups,
//! O(moved keys) memory; a line is at most 1 MiB and 64 bytes (a key of
//! at most 1 MiB, as `lookup` reads them), read through `lines::read_line`.

use std::collections::BTreeMap;
use std::io::BufReader;
use std::path::Path;

use anyhow::{Context, anyhow};
use ringwise::{AnyPlacement, Keyed, Placement};

use super::Plan;
use crate::Failure;
use crate::keys::MAX_KEY_BYTES;
use crate::lines::{Line, read_line, too_long};

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
        let read = read_line(&mut reader, &mut line, MAX_LINE_BYTES).map_err(unreadable)?;
        let done = read == Line::End;
        if read == Line::TooLong {
            let source = path.display().to_string();
            return Err(too_long(&source, number as u64 + 1, "a key line").into());
        }
        if !done {
            number += 1;
            // `parse` says what is wrong, this says where: the place is
            // named once ("pk.txt line 3: ...").
            let entry = parse(&line, &mut tally.sized)
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

/// The longest line: a key of at most [`MAX_KEY_BYTES`] (1 MiB, as
/// `lookup` reads them) and room for `<TAB>BYTES`. A longer line is
/// refused with its number (exit 65) after reading at most this much of
/// it: `--keys /dev/zero` ends at once instead of growing one buffer until
/// the allocator aborts.
const MAX_LINE_BYTES: usize = MAX_KEY_BYTES + 64;

/// `KEY` or `KEY<TAB>BYTES`, its line end already gone.
fn parse(line: &[u8], sized: &mut bool) -> anyhow::Result<(Vec<u8>, f64)> {
    let Some(tab) = line.iter().rposition(|&b| b == b'\t') else {
        if line.len() > MAX_KEY_BYTES {
            return Err(key_too_long());
        }
        return Ok((line.to_vec(), 0.0));
    };
    let text = String::from_utf8_lossy(&line[tab + 1..]);
    let bytes = ringwise_sim::cost::parse_size(&text)
        .map_err(|e| anyhow!("after the tab comes the key's size in bytes: {e}"))?;
    if tab > MAX_KEY_BYTES {
        return Err(key_too_long());
    }
    *sized = true;
    Ok((line[..tab].to_vec(), bytes))
}

/// A key over [`MAX_KEY_BYTES`], with or without a size after it: one
/// message for both (the caller names the file and line).
fn key_too_long() -> anyhow::Error {
    anyhow!("a key is at most {MAX_KEY_BYTES} bytes (1 MiB)")
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
