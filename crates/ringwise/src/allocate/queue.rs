//! The joining node's candidate gaps, priced lazily (Cassandra's
//! heuristic): every gap is priced once; afterwards the cheapest entry is
//! priced again when it reaches the top, and taken if it is still no
//! dearer than the next one's (possibly stale) price. A placement changes
//! the prices of a few gaps near it and, through the nodes it touches, a
//! little everywhere; re-pricing only what reaches the top turns the
//! O(P) scan per point into O(log P) per re-priced entry, a handful per
//! point, at the cost of sometimes missing a gap whose price fell.
//!
//! Entries name a gap by the point that ends it, which stays valid while
//! points come and go (an entry whose point is gone is dropped).

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::model::{Model, Offer, Scratch};

#[derive(Debug, Clone, Copy)]
struct Entry {
    price: f64,
    end: u64,
}

/// The heap pops the lowest price; ties, the lowest point.
impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .price
            .total_cmp(&self.price)
            .then(other.end.cmp(&self.end))
    }
}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Entry {}

pub(super) struct Queue {
    heap: BinaryHeap<Entry>,
    node: u32,
}

impl Queue {
    /// Every gap of `model` priced for `node`. O(P · walk · R).
    pub fn new(model: &Model, node: u32, scratch: &mut Scratch) -> Self {
        let mut queue = Queue {
            heap: BinaryHeap::with_capacity(model.len() * 2),
            node,
        };
        for g in 0..model.len() {
            queue.price(model, g, scratch);
        }
        queue
    }

    fn price(&mut self, model: &Model, g: usize, scratch: &mut Scratch) -> Option<Offer> {
        let offer = model.insert_cost(g, self.node, scratch)?;
        self.heap.push(Entry {
            price: offer.delta,
            end: model.points[g],
        });
        Some(offer)
    }

    /// The cheapest gap of `model` as far as the lazy pricing tells: pops
    /// and re-prices until a freshly priced entry is on top (at most every
    /// entry once, as the model does not change meanwhile).
    pub fn best(&mut self, model: &Model, scratch: &mut Scratch) -> Option<Offer> {
        while let Some(top) = self.heap.pop() {
            let g = model.points.partition_point(|&p| p < top.end);
            if model.points.get(g) != Some(&top.end) {
                continue;
            }
            let Some(offer) = self.price(model, g, scratch) else {
                continue;
            };
            // Fresh and on top: no other entry, stale or not, is cheaper.
            if self
                .heap
                .peek()
                .is_some_and(|e| e.end == top.end && e.price == offer.delta)
            {
                return Some(offer);
            }
        }
        None
    }

    pub fn node(&self) -> u32 {
        self.node
    }

    /// `point` joined `model`: the gap it ends is a new candidate.
    pub fn inserted(&mut self, model: &Model, point: u64, scratch: &mut Scratch) {
        let g = model.points.partition_point(|&p| p < point);
        if g < model.len() {
            self.price(model, g, scratch);
        }
    }
}
