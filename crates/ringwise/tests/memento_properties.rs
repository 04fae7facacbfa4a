//! Property tests of `Memento`: equal to jump (of the reference's first
//! hash, `crc32c(hash, 0)`) without removals, equal to an
//! explicit-array model under any history, minimal disruption, LIFO restore,
//! totality, balance and errors.

use std::collections::HashSet;

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::Index;
use ringwise::{Error, Jump, Memento, Node, Placement, jump_consistent_hash};

use crate::support::{self, crc32c_u64, owner_name};

/// The semantics MementoHash encodes, kept explicitly: the working buckets
/// sit in a compact array of positions; removing a bucket moves the last
/// position's bucket into its place. A key on a removed bucket `b` is rehashed
/// to position `H(hash, b) mod w` of the array right after `b`'s removal
/// (`w` positions), and followed from there if that bucket left later. `H`
/// is the reference's `crc32c(hash, b)`, and the first bucket
/// `jump(crc32c(hash, 0), n)`.
#[derive(Debug, Clone, Default)]
struct Model {
    names: Vec<Option<String>>,
    positions: Vec<u32>,
    /// Active removals in time order: (bucket, positions before, after).
    events: Vec<(u32, Vec<u32>, Vec<u32>)>,
}

impl Model {
    fn new(names: &[String]) -> Self {
        Model {
            names: names.iter().cloned().map(Some).collect(),
            positions: (0..names.len() as u32).collect(),
            events: Vec::new(),
        }
    }

    fn add(&mut self, name: &str) {
        match self.events.pop() {
            Some((bucket, before, _)) => {
                self.names[bucket as usize] = Some(name.into());
                self.positions = before;
            }
            None => {
                self.positions.push(self.names.len() as u32);
                self.names.push(Some(name.into()));
            }
        }
    }

    fn remove(&mut self, name: &str) {
        let bucket = self
            .names
            .iter()
            .position(|n| n.as_deref() == Some(name))
            .expect("member");
        if self.events.is_empty() && bucket + 1 == self.names.len() {
            self.names.pop();
            self.positions.pop();
            return;
        }
        let before = self.positions.clone();
        let at = before
            .iter()
            .position(|&b| b as usize == bucket)
            .expect("working");
        self.positions.swap_remove(at);
        self.names[bucket] = None;
        self.events
            .push((bucket as u32, before, self.positions.clone()));
    }

    fn owner(&self, hash: u64) -> Option<&str> {
        if self.positions.is_empty() {
            return None;
        }
        let first = u64::from(crc32c_u64(hash, 0));
        let mut b = jump_consistent_hash(first, self.names.len() as u32);
        while let Some((_, _, after)) = self.events.iter().find(|e| e.0 == b) {
            let h = u64::from(crc32c_u64(hash, u64::from(b)));
            b = after[(h % after.len() as u64) as usize];
        }
        self.names[b as usize].as_deref()
    }
}

fn names(max: usize) -> impl Strategy<Value = Vec<String>> {
    let name = (0u32..300).prop_map(|i| format!("n{i}"));
    support::distinct(vec(name, 0..=max), String::as_str)
}

fn memento<S: AsRef<str>>(names: &[S]) -> Memento {
    Memento::new(support::nodes(names)).expect("valid nodes")
}

/// Applies one random change: a removal (kind 0 or 1, when possible) or an
/// addition of a fresh name or of a name removed before. Returns the name.
fn step(
    m: &Memento,
    model: &mut Model,
    kind: u8,
    pick: Index,
    fresh: usize,
    gone: &mut Vec<String>,
) -> (Memento, bool, String) {
    if kind < 2 && !m.is_empty() {
        let name = m
            .nodes()
            .iter()
            .nth(pick.index(m.len()))
            .expect("member")
            .name
            .clone();
        model.remove(&name);
        gone.push(name.clone());
        (m.without_node(&name).expect("member"), false, name)
    } else {
        let name = match (kind, gone.is_empty()) {
            (2, false) => gone.remove(pick.index(gone.len())),
            _ => format!("fresh{fresh}"),
        };
        model.add(&name);
        (
            m.with_node(Node::new(name.clone())).expect("new name"),
            true,
            name,
        )
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn without_removals_it_is_jump(names in names(60), hashes in vec(any::<u64>(), 100)) {
        let m = memento(&names);
        let j = Jump::new(support::nodes(&names)).expect("valid nodes");
        for h in hashes {
            // The reference jumps with its first CRC of the hash.
            let first = u64::from(crc32c_u64(h, 0));
            prop_assert_eq!(owner_name(&m, h), owner_name(&j, first));
        }
    }

    #[test]
    fn any_history_matches_the_model_and_moves_minimally(
        names in names(40),
        ops in vec((0u8..4, any::<Index>()), 0..60),
        hashes in vec(any::<u64>(), 150),
    ) {
        let (mut m, mut model, mut gone) = (memento(&names), Model::new(&names), Vec::new());
        for (i, (kind, pick)) in ops.into_iter().enumerate() {
            let (next, added, name) = step(&m, &mut model, kind, pick, i, &mut gone);
            prop_assert_eq!(next.len(), model.positions.len());
            for &h in &hashes {
                let (old, new) = (owner_name(&m, h), owner_name(&next, h));
                prop_assert_eq!(new, model.owner(h), "hash {}", h);
                if added {
                    prop_assert!(old == new || new == Some(name.as_str()), "{old:?} -> {new:?}");
                } else {
                    prop_assert!(old == new || old == Some(name.as_str()), "{old:?} -> {new:?}");
                    prop_assert_ne!(new, Some(name.as_str()));
                }
            }
            m = next;
        }
        prop_assert!(m.removed_count() <= m.buckets().len());
        prop_assert_eq!(m.buckets().iter().flatten().count(), m.len());
    }

    #[test]
    fn removing_then_re_adding_restores_the_mapping(
        names in names(40),
        ops in vec((0u8..4, any::<Index>()), 0..30),
        pick in any::<Index>(),
        hashes in vec(any::<u64>(), 150),
    ) {
        let (mut m, mut model, mut gone) = (memento(&names), Model::new(&names), Vec::new());
        for (i, (kind, p)) in ops.into_iter().enumerate() {
            m = step(&m, &mut model, kind, p, i, &mut gone).0;
        }
        prop_assume!(!m.is_empty());
        let name = m.nodes().iter().nth(pick.index(m.len())).expect("member").name.clone();
        let back = m.without_node(&name).expect("member").with_node(Node::new(name)).expect("gone");
        prop_assert_eq!(&back, &m);
        for h in hashes {
            prop_assert_eq!(owner_name(&back, h), owner_name(&m, h));
        }
    }

    #[test]
    fn replicas_are_distinct_working_nodes(
        names in names(30),
        removals in vec(any::<Index>(), 0..20),
        n in 0usize..40,
        hashes in vec(any::<u64>(), 30),
    ) {
        let mut m = memento(&names);
        for pick in removals {
            if m.is_empty() { break; }
            let name = m.nodes().iter().nth(pick.index(m.len())).expect("member").name.clone();
            m = m.without_node(&name).expect("member");
        }
        let mut out = Vec::new();
        for h in hashes {
            m.replicas_into(h, n, &mut out);
            prop_assert_eq!(out.len(), n.min(m.len()));
            prop_assert_eq!(out.iter().collect::<HashSet<_>>().len(), out.len());
            prop_assert!(out.iter().all(|&id| (id as usize) < m.len()));
            if n > 0 {
                prop_assert_eq!(out.first().copied(), m.owner(h));
            }
        }
    }
}

#[test]
fn totality_on_zero_one_and_two_nodes() {
    let two = memento(&["a", "b"]);
    let one = two.without_node("a").expect("member");
    let zero = one.without_node("b").expect("member");
    assert_eq!((one.len(), one.removed_count()), (1, 1));
    assert_eq!((zero.len(), zero.removed_count()), (0, 2));
    // The single node left is "b"; both "a" and "b" own some hash.
    assert_eq!(one.nodes().name(0), Some("b"));
    let spread = (0..1000u64).map(|i| ringwise::replica_key(i, 7));
    let hashes: Vec<u64> = spread
        .chain((0..100).map(|i| ringwise::replica_key(i, 3)))
        .collect();
    support::assert_total(&zero, &one, &two, &hashes);
    support::assert_empty(&memento::<&str>(&[]), &hashes);
    assert_eq!(Placement::without_node(&two, "a"), Ok(one.clone()));
    // LIFO: "b" comes back on bucket 1 and "a" on bucket 0, the old mapping.
    let back = zero.with_node(Node::new("b")).expect("new");
    assert_eq!(back, one);
    assert_eq!(back.with_node(Node::new("a")).expect("new"), two);
    assert_eq!(
        zero.without_node("a"),
        Err(Error::UnknownNode { name: "a".into() })
    );
}

/// Removing the last bucket with nothing else removed is a plain jump pop:
/// no memory is kept. Removing from the middle keeps one entry per bucket.
#[test]
fn memory_grows_only_with_removals() {
    let names: Vec<String> = (0..8).map(|i| format!("n{i}")).collect();
    let m = memento(&names);
    let popped = m.without_node("n7").expect("member");
    assert_eq!((popped.removed_count(), popped.buckets().len()), (0, 7));
    let holed = popped
        .without_node("n2")
        .expect("member")
        .without_node("n6")
        .expect("member");
    assert_eq!((holed.removed_count(), holed.buckets().len()), (2, 7));
}

/// After removing 10 of 20 nodes the other 10 each get 10% ± 0.7% of
/// 200,000 spread hashes (about 7 standard deviations).
#[test]
fn balance_after_removals() {
    let names: Vec<String> = (0..20).map(|i| format!("node-{i}")).collect();
    let mut m = memento(&names);
    for i in [3, 17, 0, 9, 12, 5, 19, 8, 1, 14] {
        m = m.without_node(&format!("node-{i}")).expect("member");
    }
    let mut counts = [0u64; 10];
    for i in 0..200_000u64 {
        counts[m.owner(ringwise::replica_key(i, 1)).expect("nodes") as usize] += 1;
    }
    for c in counts {
        assert!((c as f64 / 200_000.0 - 0.1).abs() < 0.007, "{counts:?}");
    }
}

/// A deep history: 900 of 1,000 nodes leave in a scrambled order, then 450
/// come back (LIFO) as new names. Every lookup terminates on the model's
/// answer and the 100 (then 550) working nodes share the keys evenly.
#[test]
fn deep_history_matches_the_model() {
    let names: Vec<String> = (0..1000).map(|i| format!("n{i}")).collect();
    let (mut m, mut model) = (memento(&names), Model::new(&names));
    for i in 0..900u64 {
        let pick = (ringwise::replica_key(i, 5) % m.len() as u64) as usize;
        let name = m.nodes().iter().nth(pick).expect("member").name.clone();
        model.remove(&name);
        m = m.without_node(&name).expect("member");
    }
    let check = |m: &Memento, model: &Model| {
        let mut counts = vec![0u32; m.len()];
        for i in 0..20_000u64 {
            let h = ringwise::replica_key(i, 9);
            assert_eq!(owner_name(m, h), model.owner(h), "hash {h}");
            counts[m.owner(h).expect("nodes") as usize] += 1;
        }
        let mean = 20_000.0 / m.len() as f64;
        // Binomial: 7 standard deviations around the mean share.
        let limit = 7.0 * mean.sqrt();
        assert!(
            counts.iter().all(|&c| (f64::from(c) - mean).abs() < limit),
            "{counts:?}"
        );
    };
    check(&m, &model);
    for i in 0..450 {
        let name = format!("back{i}");
        model.add(&name);
        m = m.with_node(Node::new(name)).expect("new name");
    }
    assert_eq!(m.removed_count(), 450);
    check(&m, &model);
}

#[test]
fn bad_inputs_give_the_specific_error() {
    let weighted = Memento::new(vec![Node::new("a").weight(3.0)]);
    assert!(matches!(
        weighted,
        Err(Error::Unsupported {
            algorithm: "memento",
            ..
        })
    ));
    let bad = Memento::new(vec![Node::new("a").weight(-1.0)]);
    assert!(matches!(bad, Err(Error::InvalidWeight { .. })));
    let m = memento(&["a"]);
    assert!(matches!(
        m.with_node(Node::new("b").weight(2.0)),
        Err(Error::Unsupported {
            algorithm: "memento",
            ..
        })
    ));
    assert_eq!(
        m.with_node(Node::new("a")),
        Err(Error::DuplicateNode { name: "a".into() })
    );
    assert_eq!(
        m.without_node("b"),
        Err(Error::UnknownNode { name: "b".into() })
    );
}
