//! The allocator's working copy of a ring: points in ring order, their
//! owners, each range's replicas (and which point of each replica the walk
//! met), every point's and every node's replicated ownership, and the price
//! of an edit (a point inserted into a gap, or removed) without applying
//! it.
//!
//! Ranges and walks. Range `i` is `(points[i-1], points[i]]` (range 0
//! wraps), and every hash in it has the same replicas: the walk that starts
//! at point `i` and collects nodes clockwise by the ring's own rule
//! ([`crate::Ring::zoned_replicas_into`]; without zones every node is its
//! own group, and the rule is the plain distinct-node walk). The point at
//! which the walk meets a replica is credited with the range: a point's
//! credit is the part of the circle its node replicates because of it.
//! An edit at gap `g` (before point `g`) changes the walks that cross that
//! gap: the ranges `j` with `(g − j) mod P < reach[j]`, about `R` ranges
//! before `g`. Those are walked again over the edited sequence.
//!
//! Units: fractions of the circle (`len / 2^64`); replicated ownership sums
//! to `want = min(R, N)` over the nodes.

/// The position of the inserted point in a priced edit's attributions.
const NEW: u32 = u32::MAX;

/// 2^64 as a float: fractions of the circle.
const CIRCLE: f64 = 18_446_744_073_709_551_616.0;

#[derive(Debug, Clone, Copy)]
enum Edit {
    /// `node` gets a point inside gap `gap` (before point `gap`).
    Insert { gap: usize, node: u32 },
    /// Point `index` goes.
    Remove { index: usize },
}

/// Buffers reused by every priced edit, so that pricing allocates nothing.
#[derive(Debug, Default)]
pub(super) struct Scratch {
    moves: Vec<(u32, u32, f64)>,
    walk: Vec<(u32, u32)>,
    nodes: Vec<(u32, f64)>,
    points: Vec<(u32, u32, f64)>,
}

/// A priced insertion: the point, and the measure's change.
#[derive(Debug, Clone, Copy)]
pub(super) struct Offer {
    pub point: u64,
    pub delta: f64,
}

#[derive(Debug, Clone)]
pub(super) struct Model {
    pub points: Vec<u64>,
    pub owners: Vec<u32>,
    /// Per node: the class the walk keeps distinct (zone, or the node).
    group: Vec<u32>,
    want: usize,
    /// How many groups the walk first takes one node from each of.
    distinct: usize,
    /// Per node: the replicated ownership its weight asks for.
    pub target: Vec<f64>,
    /// Per node: replicated ownership, and points held (the joining node
    /// counts the points it will hold).
    pub own: Vec<f64>,
    count: Vec<f64>,
    /// Per point: the replicated ownership credited to it.
    credit: Vec<f64>,
    /// The joining node and its point count: the points not placed yet
    /// count as ideal.
    joining: Option<(u32, usize)>,
    /// The joining node's points placed so far.
    placed: usize,
    /// Range `i`'s replicas with the point that brought each:
    /// `walks[i * want..][..walk_len[i]]`.
    walks: Vec<(u32, u32)>,
    walk_len: Vec<u8>,
    /// Points visited by range `i`'s walk.
    reach: Vec<u32>,
    max_reach: usize,
}

impl Model {
    /// A model of `entries` (ring order) over nodes of `weights` and
    /// `groups`, with `replicas` per hash. O(P · walk).
    pub fn new(
        entries: Vec<(u64, u32)>,
        weights: &[f64],
        groups: Vec<u32>,
        replicas: usize,
    ) -> Self {
        let nodes = weights.len();
        let want = replicas.clamp(1, nodes.max(1));
        let mut distinct_groups = groups.clone();
        distinct_groups.sort_unstable();
        distinct_groups.dedup();
        let total: f64 = weights.iter().sum();
        let (points, owners): (Vec<u64>, Vec<u32>) = entries.into_iter().unzip();
        let mut model = Model {
            points,
            owners,
            group: groups,
            want,
            distinct: want.min(distinct_groups.len()),
            target: weights.iter().map(|w| want as f64 * w / total).collect(),
            own: vec![0.0; nodes],
            count: vec![0.0; nodes],
            credit: Vec::new(),
            joining: None,
            placed: 0,
            walks: Vec::new(),
            walk_len: Vec::new(),
            reach: Vec::new(),
            max_reach: 0,
        };
        model.refresh();
        model
    }

    /// `node` joins with `points` points in all, none placed yet.
    pub fn join(&mut self, node: u32, points: usize) {
        self.joining = Some((node, points));
        self.refresh();
    }

    pub fn len(&self) -> usize {
        self.points.len()
    }

    /// Range `i`'s length in hashes (2^64 for a lone point).
    fn span(&self, i: usize) -> u128 {
        let p = self.len();
        if p == 1 {
            return 1 << 64;
        }
        let before = self.points[(i + p - 1) % p];
        u128::from(self.points[i].wrapping_sub(before))
    }

    fn length(&self, i: usize) -> f64 {
        self.span(i) as f64 / CIRCLE
    }

    /// Recomputes every walk, credit and ownership. O(P · walk).
    pub fn refresh(&mut self) {
        let p = self.len();
        let want = self.want;
        self.walks = vec![(0, 0); p * want];
        self.walk_len = vec![0; p];
        self.reach = vec![0; p];
        self.credit = vec![0.0; p];
        self.own.iter_mut().for_each(|o| *o = 0.0);
        self.count.iter_mut().for_each(|c| *c = 0.0);
        for &o in &self.owners {
            self.count[o as usize] += 1.0;
        }
        if let Some((node, points)) = self.joining {
            self.placed = self.count[node as usize] as usize;
            self.count[node as usize] = points as f64;
        }
        let mut walk = Vec::with_capacity(want);
        for i in 0..p {
            self.reach[i] = self.walk(None, i, &mut walk) as u32;
            self.walks[i * want..][..walk.len()].copy_from_slice(&walk);
            self.walk_len[i] = walk.len() as u8;
            let length = self.length(i);
            for &(n, at) in &walk {
                self.own[n as usize] += length;
                self.credit[at as usize] += length;
            }
        }
        self.max_reach = self.reach.iter().copied().max().unwrap_or(0) as usize;
    }

    fn walk_of(&self, i: usize) -> &[(u32, u32)] {
        &self.walks[i * self.want..][..usize::from(self.walk_len[i])]
    }

    /// The owner at position `v` of the edited sequence, and the point
    /// there (an index of the unedited one, or [`NEW`]).
    fn at(&self, edit: Option<Edit>, v: usize) -> (u32, u32) {
        let real = match edit {
            None => v,
            Some(Edit::Insert { gap, node }) => match v.cmp(&gap) {
                std::cmp::Ordering::Less => v,
                std::cmp::Ordering::Equal => return (node, NEW),
                std::cmp::Ordering::Greater => v - 1,
            },
            Some(Edit::Remove { index }) => v + usize::from(v >= index),
        };
        (self.owners[real], real as u32)
    }

    fn len_after(&self, edit: Option<Edit>) -> usize {
        match edit {
            None => self.len(),
            Some(Edit::Insert { .. }) => self.len() + 1,
            Some(Edit::Remove { .. }) => self.len() - 1,
        }
    }

    /// The replicas (with the point that brought each) of the walk from
    /// position `start` of the edited sequence, by the ring's rule: first
    /// one node per unused group up to `distinct`, then any unused node,
    /// both clockwise from `start`. Returns the points visited.
    fn walk(&self, edit: Option<Edit>, start: usize, out: &mut Vec<(u32, u32)>) -> usize {
        out.clear();
        let len = self.len_after(edit);
        let mut visited = 0;
        for step in 0..len {
            if out.len() == self.distinct {
                break;
            }
            visited = step + 1;
            let (node, at) = self.at(edit, (start + step) % len);
            let group = self.group[node as usize];
            if !out.iter().any(|&(o, _)| self.group[o as usize] == group) {
                out.push((node, at));
            }
        }
        for step in 0..len {
            if out.len() == self.want {
                break;
            }
            visited = visited.max(step + 1);
            let (node, at) = self.at(edit, (start + step) % len);
            if !out.iter().any(|&(o, _)| o == node) {
                out.push((node, at));
            }
        }
        visited
    }

    /// The ranges before gap `g` whose walk crosses it.
    fn crossing(&self, g: usize) -> impl Iterator<Item = usize> + '_ {
        let p = self.len();
        (1..=self.max_reach.min(p.saturating_sub(1)))
            .map(move |back| ((g + p - back) % p, back))
            .filter(move |&(j, back)| back < self.reach[j] as usize)
            .map(|(j, _)| j)
    }

    /// Credits moved by re-walking the ranges that cross the edit at `at`,
    /// appended to `scratch.moves` as `(node, point, ±length)`.
    fn rewalked(&self, edit: Edit, at: usize, scratch: &mut Scratch) {
        for j in self.crossing(at) {
            let shifted = match edit {
                Edit::Insert { gap, .. } => j + usize::from(j >= gap),
                Edit::Remove { index } => j - usize::from(j > index),
            };
            self.walk(Some(edit), shifted, &mut scratch.walk);
            let length = self.length(j);
            let old = self.walk_of(j).iter().map(|&(n, p)| (n, p, -length));
            scratch.moves.extend(old);
            let new = scratch.walk.iter().map(|&(n, p)| (n, p, length));
            scratch.moves.extend(new);
        }
    }

    /// The measure: for every node, `((own − target) / count)²`, and for
    /// every point, `((credit − target/count) / count)²` (Cassandra's token
    /// allocation measure, with weights in the targets). The joining node
    /// counts the points it has not placed as ideal, and its node term
    /// grows with the points placed.
    fn node_cost(&self, n: u32, own: f64) -> f64 {
        let (count, target) = (self.count[n as usize], self.target[n as usize]);
        match self.joining {
            Some((m, points)) if m == n => {
                // Cassandra starts the new node at its ideal ownership and
                // lets each placed point change it by (credit − ideal
                // share); the weight (placed + 1)/T frees the first points.
                let placed = self.placed.min(points);
                let ideal = (points - placed) as f64 * target / count;
                let e = (own + ideal - target) / count;
                e * e * (placed + 1).min(points) as f64 / points as f64
            }
            _ => {
                let e = (own - target) / count.max(1.0);
                e * e
            }
        }
    }

    fn point_cost(&self, n: u32, credit: f64) -> f64 {
        let count = self.count[n as usize].max(1.0);
        let e = (credit - self.target[n as usize] / count) / count;
        e * e
    }

    /// The measure's change for the credits in `scratch.moves`, plus
    /// `shift` of one node's ownership; a point `gone` drops its term.
    fn delta(&self, scratch: &mut Scratch, shift: Option<(u32, f64)>, gone: Option<u32>) -> f64 {
        let Scratch {
            moves,
            nodes,
            points,
            ..
        } = scratch;
        nodes.clear();
        nodes.extend(shift);
        points.clear();
        for &(n, p, amount) in moves.iter() {
            match nodes.iter_mut().find(|t| t.0 == n) {
                Some(t) => t.1 += amount,
                None => nodes.push((n, amount)),
            }
            match points.iter_mut().find(|t| t.1 == p) {
                Some(t) => t.2 += amount,
                None => points.push((n, p, amount)),
            }
        }
        let mut delta = 0.0;
        for &(n, d) in nodes.iter() {
            let own = self.own[n as usize];
            delta += self.node_cost(n, own + d) - self.node_cost(n, own);
        }
        for &(n, p, d) in points.iter() {
            delta += match p {
                NEW => self.point_cost(n, d),
                p if Some(p) == gone => -self.point_cost(n, self.credit[p as usize]),
                p => {
                    let credit = self.credit[p as usize];
                    self.point_cost(n, credit + d) - self.point_cost(n, credit)
                }
            };
        }
        delta
    }

    /// `node`'s point two thirds into gap `g` and its price, or `None`
    /// when the gap has no free hash. O(walk · R), no allocation.
    pub fn insert_cost(&self, g: usize, node: u32, scratch: &mut Scratch) -> Option<Offer> {
        let span = self.span(g);
        if span < 2 {
            return None;
        }
        let edit = Edit::Insert { gap: g, node };
        scratch.moves.clear();
        self.rewalked(edit, g, scratch);
        // The new point takes the first two thirds of the gap, (a, x] with
        // x = a + ⌊2·len/3⌋, from range g's replicas to the walk from x
        // (why two thirds: the module docs of `allocate`).
        let offset = ((span * 2 / 3) as u64).max(1);
        let s = offset as f64 / CIRCLE;
        let old = self.walk_of(g).iter().map(|&(n, p)| (n, p, -s));
        scratch.moves.extend(old);
        self.walk(Some(edit), g, &mut scratch.walk);
        for i in 0..scratch.walk.len() {
            let (n, p) = scratch.walk[i];
            scratch.moves.push((n, p, s));
        }
        // A placed point of the joining node no longer counts as ideal.
        let shift = match self.joining {
            Some((m, _)) if m == node => {
                Some((m, -self.target[m as usize] / self.count[m as usize]))
            }
            _ => None,
        };
        let before = self.points[(g + self.len() - 1) % self.len()];
        Some(Offer {
            point: before.wrapping_add(offset),
            delta: self.delta(scratch, shift, None),
        })
    }

    /// The measure's change if point `index` went (its range joins the
    /// next one's). O(walk · R), no allocation.
    pub fn remove_cost(&self, index: usize, scratch: &mut Scratch) -> f64 {
        let p = self.len();
        if p < 2 {
            return f64::INFINITY;
        }
        let edit = Edit::Remove { index };
        scratch.moves.clear();
        self.rewalked(edit, index, scratch);
        let length = self.length(index);
        let old = self.walk_of(index).iter().map(|&(n, q)| (n, q, -length));
        scratch.moves.extend(old);
        self.walk(Some(edit), index % (p - 1), &mut scratch.walk);
        for i in 0..scratch.walk.len() {
            let (n, q) = scratch.walk[i];
            scratch.moves.push((n, q, length));
        }
        self.delta(scratch, None, Some(index as u32))
    }

    /// The best offer for `node` over every gap; ties go to the first gap.
    /// O(P · walk · R).
    pub fn best_insert(&self, node: u32, scratch: &mut Scratch) -> Option<Offer> {
        let mut best: Option<Offer> = None;
        for g in 0..self.len() {
            if let Some(offer) = self.insert_cost(g, node, scratch) {
                if best.is_none_or(|b| offer.delta < b.delta) {
                    best = Some(offer);
                }
            }
        }
        best
    }

    /// Adds `node`'s point (strictly inside a gap, so never on another
    /// point) and recomputes. O(P · walk).
    pub fn insert(&mut self, point: u64, node: u32) {
        let at = self.points.partition_point(|&p| p < point);
        self.points.insert(at, point);
        self.owners.insert(at, node);
        self.refresh();
    }

    pub fn remove(&mut self, index: usize) {
        self.points.remove(index);
        self.owners.remove(index);
        self.refresh();
    }

    /// The measure, summed over nodes and points.
    pub fn objective(&self) -> f64 {
        let nodes: f64 = (0..self.own.len() as u32)
            .map(|n| self.node_cost(n, self.own[n as usize]))
            .sum();
        let points: f64 = self
            .owners
            .iter()
            .zip(&self.credit)
            .map(|(&n, &c)| self.point_cost(n, c))
            .sum();
        nodes + points
    }

    /// Per node: replicated ownership.
    pub fn owned(&self) -> &[f64] {
        &self.own
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn splitmix(state: &mut u64) -> u64 {
        *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = *state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Every priced edit changes the measure by its price when applied
    /// (counts held as before: a price is for the ring as it stands),
    /// with and without zones, for a new node and for one already on the
    /// ring.
    #[test]
    fn prices_match_the_applied_edits() {
        let mut state = 7;
        let cases = [
            (5u32, 1usize, 0u32),
            (6, 3, 0),
            (9, 3, 3),
            (7, 2, 2),
            (12, 4, 0),
        ];
        for &(nodes, replicas, zones) in &cases {
            let mut entries: Vec<(u64, u32)> = (0..nodes * 5)
                .map(|i| (splitmix(&mut state), i % nodes))
                .collect();
            entries.sort_unstable();
            let weights: Vec<f64> = (0..=nodes).map(|i| 1.0 + f64::from(i % 3)).collect();
            let groups: Vec<u32> = (0..=nodes)
                .map(|i| if zones > 0 { i % zones } else { i })
                .collect();
            let model = Model::new(entries, &weights, groups, replicas);
            let scratch = &mut Scratch::default();
            let who = |g: usize| [nodes, g as u32 % nodes];
            for (g, node) in (0..model.len()).flat_map(|g| who(g).map(|n| (g, n))) {
                let Some(offer) = model.insert_cost(g, node, scratch) else {
                    continue;
                };
                let mut applied = model.clone();
                applied.insert(offer.point, node);
                applied.count.clone_from(&model.count);
                let real = applied.objective() - model.objective();
                assert!(
                    (real - offer.delta).abs() < 1e-12,
                    "insert {nodes}/{replicas}/{zones} gap {g}: priced {} real {real}",
                    offer.delta
                );
            }
            for q in 0..model.len() {
                let price = model.remove_cost(q, scratch);
                let mut applied = model.clone();
                applied.remove(q);
                applied.count.clone_from(&model.count);
                let real = applied.objective() - model.objective();
                assert!(
                    (real - price).abs() < 1e-12,
                    "remove {nodes}/{replicas}/{zones} at {q}: priced {price} real {real}"
                );
            }
        }
    }
}
