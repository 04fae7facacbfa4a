//! A history checker for data-path promises (after Jepsen's Elle and
//! Porcupine): concurrent clients record every operation they invoke
//! with its invocation and completion times, writing only values never
//! written before, and [`check`] judges the whole history afterwards
//! against a register per key that may miss, the promise of a cache in
//! front of which a proxy stands (docs/proxy.md):
//!
//! > A read returns nothing, or a value whose write began before the read
//! > ended and was not followed, before the read began, by another write
//! > of the key acknowledged after the first one was.
//!
//! That is, for a read `R` that returned `v`, written by `W`: `W` was
//! invoked before `R` completed (no value from the future), and no
//! acknowledged write or delete `X` of the key has `W.completed <
//! X.invoked` and `X.completed < R.invoked` (`v` was not already
//! overwritten when `R` began). Operations that got no answer (a timeout,
//! a broken connection) are *indeterminate*: they may have taken effect
//! at any time after their invocation, so they never count as `X`, and a
//! value they wrote may be read at any time after.
//!
//! Counters (`incr`): a counter key is set only to a *base*, a multiple
//! of [`COUNTER_BASE`] never written before, and incremented by 1 at a
//! time, so every value it holds names its base: a read of `v` is judged
//! against the write of its base, and an acknowledged increment of the
//! same base that returned more than `v` overwrote it.
//!
//! Cost: O(n log n) for n operations (grouped by key, writes and
//! increments sorted by completion), then per read O(log n) plus, for a
//! counter, a scan of its base's later increments (a base is written
//! once, so they are few).

use std::collections::{BTreeMap, HashMap};
use std::fmt;

/// A counter key's values: `base + increments`, bases multiples of this.
pub const COUNTER_BASE: u64 = 1 << 32;

/// Nanoseconds since the run's start.
pub type Nanos = u64;

/// What an operation did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// Stored this value (`set`, an `add` that stored, ...).
    Write(Vec<u8>),
    /// Deleted the key (answered `DELETED` or `NOT_FOUND`: absent after).
    Delete,
    /// Incremented a counter by one; the value it returned, when known.
    Incr(Option<u64>),
    /// Read the key: its value, or `None` for a miss.
    Read(Option<Vec<u8>>),
}

/// One operation of a history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Op {
    /// The client that made it.
    pub process: u32,
    /// The key.
    pub key: Vec<u8>,
    /// What it did.
    pub kind: Kind,
    /// When it was invoked.
    pub invoked: Nanos,
    /// When its answer came; `None` when none did (indeterminate).
    pub completed: Option<Nanos>,
}

/// A read that broke the promise.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The read.
    pub read: Op,
    /// What is wrong with it.
    pub why: Why,
}

/// Why a read broke the promise.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Why {
    /// No operation wrote the value it returned.
    NeverWritten,
    /// The value's write began after the read ended.
    FromTheFuture(Op),
    /// The value (written by the first) had been overwritten or deleted
    /// by the second, acknowledged, before the read began.
    Stale(Op, Op),
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let r = &self.read;
        let value = match &r.kind {
            Kind::Read(Some(v)) => String::from_utf8_lossy(v).into_owned(),
            _ => "?".into(),
        };
        write!(
            f,
            "process {} read {:?} = {value} at {}..{:?} ns: ",
            r.process,
            String::from_utf8_lossy(&r.key),
            r.invoked,
            r.completed
        )?;
        match &self.why {
            Why::NeverWritten => write!(f, "no operation wrote it"),
            Why::FromTheFuture(w) => write!(f, "its write began later, at {} ns", w.invoked),
            Why::Stale(w, x) => write!(
                f,
                "written at {}..{:?} by process {}, then overwritten by {:?} of process {} at \
                 {}..{:?}, before the read began",
                w.invoked, w.completed, w.process, x.kind, x.process, x.invoked, x.completed
            ),
        }
    }
}

/// What a history held, for a summary.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Summary {
    /// Operations in all.
    pub ops: usize,
    /// Reads with an answer.
    pub reads: usize,
    /// Of those, reads that found a value.
    pub hits: usize,
    /// Operations without an answer.
    pub indeterminate: usize,
}

/// Counts what `ops` hold.
pub fn summary(ops: &[Op]) -> Summary {
    let mut s = Summary {
        ops: ops.len(),
        ..Summary::default()
    };
    for op in ops {
        match (&op.kind, op.completed) {
            (_, None) => s.indeterminate += 1,
            (Kind::Read(found), Some(_)) => {
                s.reads += 1;
                s.hits += usize::from(found.is_some());
            }
            _ => {}
        }
    }
    s
}

/// Every read of `ops` that breaks the promise (module doc).
pub fn check(ops: &[Op]) -> Vec<Violation> {
    let mut by_key: HashMap<&[u8], Vec<&Op>> = HashMap::new();
    for op in ops {
        by_key.entry(&op.key).or_default().push(op);
    }
    let mut out = Vec::new();
    for key_ops in by_key.values() {
        let key = Key::new(key_ops);
        for read in key_ops.iter() {
            let (Kind::Read(Some(value)), Some(completed)) = (&read.kind, read.completed) else {
                continue;
            };
            if let Some(why) = key.judge(read, value, completed) {
                out.push(Violation {
                    read: (*read).clone(),
                    why,
                });
            }
        }
    }
    out.sort_by_key(|v| v.read.invoked);
    out
}

/// One key's operations, indexed for judging its reads.
struct Key<'a> {
    /// Writes by value.
    writes: HashMap<&'a [u8], &'a Op>,
    /// Acknowledged increments by the value they returned.
    incrs: BTreeMap<u64, &'a Op>,
    /// Acknowledged writes and deletes by completion time, each with the
    /// latest-invoked one among it and those before it.
    replaced: Vec<(Nanos, &'a Op)>,
    /// Acknowledged increments as `replaced` holds writes (for a value
    /// that is not a counter's: any increment replaced it).
    incremented: Vec<(Nanos, &'a Op)>,
}

impl<'a> Key<'a> {
    fn new(ops: &[&'a Op]) -> Self {
        let mut key = Key {
            writes: HashMap::new(),
            incrs: BTreeMap::new(),
            replaced: Vec::new(),
            incremented: Vec::new(),
        };
        let mut incremented: Vec<(Nanos, &'a Op)> = Vec::new();
        let mut done: Vec<(Nanos, &'a Op)> = Vec::new();
        for &op in ops {
            match (&op.kind, op.completed) {
                (Kind::Write(v), completed) => {
                    key.writes.insert(v, op);
                    if let Some(c) = completed {
                        done.push((c, op));
                    }
                }
                (Kind::Delete, Some(c)) => done.push((c, op)),
                (Kind::Incr(Some(r)), Some(c)) => {
                    key.incrs.insert(*r, op);
                    incremented.push((c, op));
                }
                _ => {}
            }
        }
        key.replaced = latest_invoked(done);
        key.incremented = latest_invoked(incremented);
        key
    }

    /// The verdict on one read of `value` (`None`: it keeps the promise).
    fn judge(&self, read: &Op, value: &[u8], completed: Nanos) -> Option<Why> {
        let counter = counter_value(value);
        // The write of the value itself, or for a counter the increment
        // that returned it, else the write of its base.
        let exact = (self.writes.get(value).copied())
            .or_else(|| counter.and_then(|c| self.incrs.get(&c).copied()));
        let base = || {
            let base = counter? / COUNTER_BASE * COUNTER_BASE;
            self.writes.get(base.to_string().as_bytes()).copied()
        };
        let Some(origin) = exact.or_else(base) else {
            return Some(Why::NeverWritten);
        };
        if origin.invoked > completed {
            return Some(Why::FromTheFuture(origin.clone()));
        }
        let written = origin.completed?;
        // The latest-invoked write or delete acknowledged before the read
        // began: it replaced the value if it began after it was written.
        if let Some(x) = replaced_before(&self.replaced, read.invoked, written) {
            return Some(Why::Stale(origin.clone(), x.clone()));
        }
        // A counter's later value: an increment of its base that returned
        // more (its base's increments are few: a base is written once).
        let Some(c) = counter else {
            return replaced_before(&self.incremented, read.invoked, written)
                .map(|x| Why::Stale(origin.clone(), x.clone()));
        };
        let end = (c / COUNTER_BASE + 1).saturating_mul(COUNTER_BASE);
        (self.incrs.range(c + 1..end))
            .map(|(_, op)| *op)
            .find(|op| op.invoked > written && op.completed.is_some_and(|d| d < read.invoked))
            .map(|x| Why::Stale(origin.clone(), x.clone()))
    }
}

/// `ops` by completion time, each with the latest-invoked one among it
/// and those before it.
fn latest_invoked(mut ops: Vec<(Nanos, &Op)>) -> Vec<(Nanos, &Op)> {
    ops.sort_by_key(|(c, _)| *c);
    let mut latest: Option<&Op> = None;
    ops.into_iter()
        .map(|(c, op)| {
            if latest.is_none_or(|l| op.invoked > l.invoked) {
                latest = Some(op);
            }
            (c, latest.unwrap_or(op))
        })
        .collect()
}

/// The latest-invoked of `ops` (from [`latest_invoked`]) completed
/// before `before`, if it began after `written`.
fn replaced_before<'a>(ops: &[(Nanos, &'a Op)], before: Nanos, written: Nanos) -> Option<&'a Op> {
    let n = ops.partition_point(|(c, _)| *c < before);
    let (_, x) = *ops.get(n.checked_sub(1)?)?;
    (x.invoked > written).then_some(x)
}

/// A counter's value: decimal digits at least [`COUNTER_BASE`].
fn counter_value(value: &[u8]) -> Option<u64> {
    let n: u64 = std::str::from_utf8(value).ok()?.parse().ok()?;
    (n >= COUNTER_BASE).then_some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(process: u32, kind: Kind, invoked: Nanos, completed: Option<Nanos>) -> Op {
        Op {
            process,
            key: b"k".to_vec(),
            kind,
            invoked,
            completed,
        }
    }

    fn write(v: &str, at: Nanos, done: Option<Nanos>) -> Op {
        op(1, Kind::Write(v.into()), at, done)
    }

    fn read(v: Option<&str>, at: Nanos, done: Nanos) -> Op {
        op(2, Kind::Read(v.map(Into::into)), at, Some(done))
    }

    #[test]
    fn the_last_acknowledged_write_or_a_miss_keeps_the_promise() {
        let ops = [
            write("a", 0, Some(10)),
            write("b", 20, Some(30)),
            read(Some("b"), 40, 50),
            read(None, 40, 50),
        ];
        assert_eq!(check(&ops), []);
    }

    #[test]
    fn a_value_overwritten_before_the_read_began_is_stale() {
        let ops = [
            write("a", 0, Some(10)),
            write("b", 20, Some(30)),
            read(Some("a"), 40, 50),
        ];
        let found = check(&ops);
        assert!(
            matches!(
                &found[..],
                [Violation {
                    why: Why::Stale(..),
                    ..
                }]
            ),
            "{found:?}"
        );
    }

    #[test]
    fn a_deleted_value_read_back_is_stale() {
        let ops = [
            write("a", 0, Some(10)),
            op(3, Kind::Delete, 20, Some(30)),
            read(Some("a"), 40, 50),
        ];
        assert_eq!(check(&ops).len(), 1);
    }

    #[test]
    fn concurrent_and_unanswered_writes_may_be_seen_either_way() {
        let ops = [
            write("a", 0, Some(10)),
            // Concurrent with the read: either value.
            write("b", 20, Some(60)),
            read(Some("a"), 40, 50),
            // No answer: may land any time after it began, or never.
            write("c", 70, None),
            read(Some("c"), 200, 210),
            read(Some("b"), 220, 230),
        ];
        assert_eq!(check(&ops), []);
    }

    #[test]
    fn values_never_written_or_from_the_future_break_it() {
        let ops = [
            read(Some("x"), 0, 5),
            write("y", 10, Some(20)),
            read(Some("y"), 0, 5),
        ];
        let whys: Vec<Why> = check(&ops).into_iter().map(|v| v.why).collect();
        assert!(
            matches!(&whys[..], [Why::NeverWritten, Why::FromTheFuture(_)]),
            "{whys:?}"
        );
    }

    #[test]
    fn counters_are_judged_by_their_base_and_increments() {
        let base = 3 * COUNTER_BASE;
        let ops = [
            write(&base.to_string(), 0, Some(10)),
            op(1, Kind::Incr(Some(base + 1)), 20, Some(30)),
            op(1, Kind::Incr(None), 40, None),
            read(Some(&(base + 2).to_string()), 50, 60),
            op(1, Kind::Incr(Some(base + 3)), 70, Some(80)),
            read(Some(&(base + 1).to_string()), 90, 100),
        ];
        let found = check(&ops);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].read.invoked, 90);
    }
}
