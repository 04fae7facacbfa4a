//! The allocator's working copy of a ring: the points in ring order, their
//! owners, each range's replica set and every node's replicated ownership,
//! and the price of an edit (one point inserted into a gap, or one point
//! removed) computed without applying it.
//!
//! Ranges and walks. Range `i` is `(points[i-1], points[i]]` (range 0
//! wraps), and every hash in it has the same replicas: the walk that starts
//! at point `i` and collects nodes clockwise by the ring's own rule
//! ([`crate::Ring::zoned_replicas_into`]; without zones every node is its
//! own group, and the rule is the plain distinct-node walk). An edit at
//! gap `g` (before point `g`) changes the replicas of the ranges whose walk
//! crosses that gap: the ranges `j` with `(g − j) mod P < reach[j]`, a
//! handful of ranges before `g` (about `R` of them). The edited ranges are
//! walked again over a virtual sequence with the point inserted or skipped.
//!
//! Units: ownership is a fraction of the circle (`len / 2^64`); a node's
//! replicated ownership sums to `want = min(R, N)` over all nodes.

/// An edit of the ring, priced by [`Model::insert_cost`] or
/// [`Model::remove_cost`].
#[derive(Debug, Clone, Copy)]
enum Edit {
    /// `node` gets a point inside gap `gap` (before point `gap`).
    Insert { gap: usize, node: u32 },
    /// Point `index` goes.
    Remove { index: usize },
}

/// A priced insertion: where in the gap, and the objective's change.
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
    /// Replicas per hash: `min(R, N)`.
    want: usize,
    /// How many groups the walk first takes one node from each of.
    distinct: usize,
    /// Per node: replicated ownership it should have (weight share × want).
    pub target: Vec<f64>,
    /// Per node: replicated ownership it has.
    pub own: Vec<f64>,
    /// The joining node: no cost while under its target.
    pub joining: Option<u32>,
    /// Range `i`'s replicas: `sets[i * want..][..len[i]]`.
    sets: Vec<u32>,
    set_len: Vec<u8>,
    /// Points visited by range `i`'s walk.
    reach: Vec<u32>,
    max_reach: usize,
}

/// 2^64 as a float: fractions of the circle.
const CIRCLE: f64 = 18_446_744_073_709_551_616.0;

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
        let (points, owners) = entries.into_iter().unzip();
        let mut model = Model {
            points,
            owners,
            group: groups,
            want,
            distinct: want.min(distinct_groups.len()),
            target: weights.iter().map(|w| want as f64 * w / total).collect(),
            own: vec![0.0; nodes],
            joining: None,
            sets: Vec::new(),
            set_len: Vec::new(),
            reach: Vec::new(),
            max_reach: 0,
        };
        model.refresh();
        model
    }

    pub fn len(&self) -> usize {
        self.points.len()
    }

    /// Range `i`'s length as a fraction of the circle; a lone point owns
    /// it all.
    pub fn length(&self, i: usize) -> f64 {
        self.span(i) as f64 / CIRCLE
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

    /// Recomputes every walk and the ownership. O(P · walk).
    pub fn refresh(&mut self) {
        let p = self.len();
        let want = self.want;
        self.sets = vec![0; p * want];
        self.set_len = vec![0; p];
        self.reach = vec![0; p];
        self.own.iter_mut().for_each(|o| *o = 0.0);
        let mut set = Vec::with_capacity(want);
        for i in 0..p {
            let reach = self.walk(None, i, &mut set);
            self.sets[i * want..][..set.len()].copy_from_slice(&set);
            self.set_len[i] = set.len() as u8;
            self.reach[i] = reach as u32;
            let length = self.length(i);
            for &n in &set {
                self.own[n as usize] += length;
            }
        }
        self.max_reach = self.reach.iter().copied().max().unwrap_or(0) as usize;
    }

    fn set(&self, i: usize) -> &[u32] {
        &self.sets[i * self.want..][..usize::from(self.set_len[i])]
    }

    /// The owner at position `v` of the sequence as `edit` leaves it, and
    /// that sequence's length.
    fn owner_at(&self, edit: Option<Edit>, v: usize) -> u32 {
        match edit {
            None => self.owners[v],
            Some(Edit::Insert { gap, node }) => match v.cmp(&gap) {
                std::cmp::Ordering::Less => self.owners[v],
                std::cmp::Ordering::Equal => node,
                std::cmp::Ordering::Greater => self.owners[v - 1],
            },
            Some(Edit::Remove { index }) => self.owners[v + usize::from(v >= index)],
        }
    }

    fn len_after(&self, edit: Option<Edit>) -> usize {
        match edit {
            None => self.len(),
            Some(Edit::Insert { .. }) => self.len() + 1,
            Some(Edit::Remove { .. }) => self.len() - 1,
        }
    }

    /// The replicas of the walk from position `start` of the edited
    /// sequence, by the ring's rule: first one node per unused group up to
    /// `distinct`, then any unused node, both clockwise from `start`.
    /// Returns the number of points visited.
    fn walk(&self, edit: Option<Edit>, start: usize, out: &mut Vec<u32>) -> usize {
        out.clear();
        let len = self.len_after(edit);
        let mut visited = 0;
        for step in 0..len {
            if out.len() == self.distinct {
                break;
            }
            visited = step + 1;
            let node = self.owner_at(edit, (start + step) % len);
            if !out
                .iter()
                .any(|&o| self.group[o as usize] == self.group[node as usize])
            {
                out.push(node);
            }
        }
        for step in 0..len {
            if out.len() == self.want {
                break;
            }
            visited = visited.max(step + 1);
            let node = self.owner_at(edit, (start + step) % len);
            if !out.contains(&node) {
                out.push(node);
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

    /// Folds constant changes `c` and split changes `d` (`+1` gains the
    /// split, `−1` loses it) into one `(node, c, d)` per touched node.
    fn touched(constant: &[(u32, f64)], split: &[(u32, f64)]) -> Vec<(u32, f64, f64)> {
        let mut touched: Vec<(u32, f64, f64)> = Vec::new();
        for &(n, c) in constant {
            match touched.iter_mut().find(|t| t.0 == n) {
                Some(t) => t.1 += c,
                None => touched.push((n, c, 0.0)),
            }
        }
        for &(n, d) in split {
            match touched.iter_mut().find(|t| t.0 == n) {
                Some(t) => t.2 += d,
                None => touched.push((n, 0.0, d)),
            }
        }
        touched
    }

    /// The split `s` that minimizes `Σ (own + c + d·s − t)² / t`, the
    /// quadratic `A·s² + B·s + C` with `A = Σ d²/t`, `B = Σ 2d(e + c)/t`
    /// (`e = own − t`); `None` when no node's share depends on `s`.
    fn best_split(&self, touched: &[(u32, f64, f64)]) -> Option<f64> {
        let (mut a, mut b) = (0.0, 0.0);
        for &(n, c, d) in touched {
            let t = self.target[n as usize];
            a += d * d / t;
            b += 2.0 * d * (self.own[n as usize] - t + c) / t;
        }
        (a > 0.0).then(|| -b / (2.0 * a))
    }

    /// The measure's change for a split `s`.
    fn delta(&self, touched: &[(u32, f64, f64)], s: f64) -> f64 {
        touched
            .iter()
            .map(|&(n, c, d)| {
                let t = self.target[n as usize];
                let own = self.own[n as usize];
                t * (self.cost(n, (own + c + d * s) / t) - self.cost(n, own / t))
            })
            .sum()
    }

    /// Replica changes of the ranges `edit` re-walks: `(node, ±length)`.
    fn rewalked(&self, edit: Edit, at: usize, out: &mut Vec<(u32, f64)>) {
        let mut set = Vec::with_capacity(self.want);
        for j in self.crossing(at) {
            let shifted = match edit {
                Edit::Insert { gap, .. } => j + usize::from(j >= gap),
                Edit::Remove { index } => j - usize::from(j > index),
            };
            self.walk(Some(edit), shifted, &mut set);
            let length = self.length(j);
            out.extend(self.set(j).iter().map(|&n| (n, -length)));
            out.extend(set.iter().map(|&n| (n, length)));
        }
    }

    /// The best point for `node` inside gap `g`, or `None` when the gap has
    /// no free hash (length below 2). O(walk · R).
    pub fn insert_cost(&self, g: usize, node: u32) -> Option<Offer> {
        let span = self.span(g);
        if span < 2 {
            return None;
        }
        let edit = Edit::Insert { gap: g, node };
        let mut constant = Vec::new();
        self.rewalked(edit, g, &mut constant);
        // The new point's range (a, x] takes `s` of range g from its
        // replicas to the walk that starts at the new point.
        let mut fresh = Vec::with_capacity(self.want);
        self.walk(Some(edit), g, &mut fresh);
        let mut split: Vec<(u32, f64)> = self.set(g).iter().map(|&n| (n, -1.0)).collect();
        split.extend(fresh.iter().map(|&n| (n, 1.0)));
        let touched = Self::touched(&constant, &split);
        // Worked example, R = 1, equal targets t: the gap's owner o is
        // e_o over its target, the new node e_m (negative). The quadratic
        // is smallest at s = (e_o − e_m)/2, where both end equally far
        // from their targets; clamped to the gap.
        let lo = 1.0 / CIRCLE;
        let hi = match std::env::var("RW_HALF").ok().and_then(|v| v.parse::<f64>().ok()) { Some(f) => ((span as f64 * f).max(1.0)) / CIRCLE, None => (span - 1) as f64 / CIRCLE };
        let mut candidates = vec![hi];
        if let Some(s) = self.best_split(&touched) {
            candidates.push(s.clamp(lo, hi));
        }
        if let Some(m) = self.joining {
            let deficit = self.target[m as usize] - self.own[m as usize];
            candidates.push(deficit.clamp(lo, hi));
        }
        let (offset, delta) = candidates
            .into_iter()
            .map(|s| {
                let offset = ((s * CIRCLE) as u128).clamp(1, span - 1) as u64;
                (offset, self.delta(&touched, offset as f64 / CIRCLE))
            })
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .expect("one candidate");
        let before = self.points[(g + self.len() - 1) % self.len()];
        Some(Offer {
            point: before.wrapping_add(offset),
            delta,
        })
    }

    /// The objective's change if point `index` went (its range joins the
    /// next one). O(walk · R).
    pub fn remove_cost(&self, index: usize) -> f64 {
        let p = self.len();
        if p < 2 {
            return f64::INFINITY;
        }
        let edit = Edit::Remove { index };
        let mut constant = Vec::new();
        self.rewalked(edit, index, &mut constant);
        let length = self.length(index);
        let next = (index + 1) % p;
        constant.extend(self.set(index).iter().map(|&n| (n, -length)));
        constant.extend(self.set(next).iter().map(|&n| (n, length)));
        self.delta(&Self::touched(&constant, &[]), 0.0)
    }

    /// The best offer for `node` over every gap; ties go to the first gap.
    /// O(P · walk · R).
    pub fn best_insert(&self, node: u32) -> Option<Offer> {
        let mut best: Option<Offer> = None;
        for g in 0..self.len() {
            if let Some(offer) = self.insert_cost(g, node) {
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

    /// `Σ target · measure(own / target)`.
    pub fn objective(&self) -> f64 {
        self.own
            .iter()
            .zip(&self.target)
            .enumerate()
            .map(|(n, (o, t))| t * self.cost(n as u32, o / t))
            .sum()
    }

    fn cost(&self, node: u32, ratio: f64) -> f64 {
        if self.joining == Some(node) && std::env::var("RW_CAP").is_ok() {
            return measure(ratio.max(1.0));
        }
        measure(ratio)
    }
}

/// The cost of a node at `ratio` = ownership / target.
fn measure(ratio: f64) -> f64 {
    static K: std::sync::OnceLock<i32> = std::sync::OnceLock::new();
    let k: i32 = *K.get_or_init(|| std::env::var("RW_K").ok().and_then(|v| v.parse().ok()).unwrap_or(8));
    if k == 2 { return (ratio - 1.0) * (ratio - 1.0); }
    ratio.powi(k)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every priced edit changes the measure by its price when applied.
    #[test]
    fn prices_match_the_applied_edits() {
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        for &(nodes, replicas, zones) in &[(5u32, 1usize, 0u32), (6, 3, 0), (9, 3, 3), (7, 2, 2), (12, 4, 0)] {
            let mut entries: Vec<(u64, u32)> = (0..nodes * 5).map(|i| (next(), i % nodes)).collect();
            entries.sort_unstable();
            let weights: Vec<f64> = (0..=nodes).map(|i| 1.0 + f64::from(i % 3)).collect();
            let groups: Vec<u32> = (0..=nodes).map(|i| if zones > 0 { i % zones } else { i }).collect();
            let model = Model::new(entries, &weights, groups, replicas);
            for (g, who) in (0..model.len()).flat_map(|g| [(g, nodes), (g, g as u32 % nodes)]) {
                let Some(offer) = model.insert_cost(g, who) else { continue };
                let mut applied = model.clone();
                applied.insert(offer.point, who);
                let real = applied.objective() - model.objective();
                assert!((real - offer.delta).abs() < 1e-9, "insert {nodes}/{replicas}/{zones} gap {g}: priced {} real {real}", offer.delta);
            }
            for q in 0..model.len() {
                let price = model.remove_cost(q);
                let mut applied = model.clone();
                applied.remove(q);
                let real = applied.objective() - model.objective();
                assert!((real - price).abs() < 1e-9, "remove {nodes}/{replicas}/{zones} at {q}: priced {price} real {real}");
            }
        }
    }
}
