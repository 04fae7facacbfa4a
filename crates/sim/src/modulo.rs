//! Experiment 1: why `hash(key) % N` breaks.
//!
//! A key keeps its node from `N` to `M` servers only if `h mod N = h mod M`.
//! For `M = N + 1` that holds for `N` of every `N(N+1)` consecutive hashes,
//! so `N/(N+1)` of the keys move: 90.9 % at 10 → 11. Doubling (`10 → 20`)
//! keeps `h mod 20 ∈ {h mod 10, h mod 10 + 10}` half the time: 50 % move.

use rayon::prelude::*;
use serde::Serialize;

use crate::keys::Keys;

/// One resize of a `% N` cluster.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModuloRow {
    /// Servers before.
    pub from: u64,
    /// Servers after.
    pub to: u64,
    /// Fraction of keys whose server changed.
    pub moved: f64,
}

/// The article's four resizes, generalised from its `N = 10`:
/// `N → N+1`, `N → N−1`, `10N → 10N+1`, `N → 2N`.
pub fn pairs(nodes: u32) -> [(u64, u64); 4] {
    let n = u64::from(nodes);
    [(n, n + 1), (n, n - 1), (10 * n, 10 * n + 1), (n, 2 * n)]
}

/// Measures every pair over every key.
pub fn run(nodes: u32, keys: &Keys) -> Vec<ModuloRow> {
    let pairs = pairs(nodes);
    let mut moved = [0u64; 4];
    keys.for_each_chunk(|_, hashes| {
        let counts = hashes
            .par_chunks(1 << 14)
            .map(|chunk| {
                let mut c = [0u64; 4];
                for &h in chunk {
                    for (count, &(a, b)) in c.iter_mut().zip(&pairs) {
                        *count += u64::from(h % a != h % b);
                    }
                }
                c
            })
            .reduce(|| [0; 4], |x, y| std::array::from_fn(|i| x[i] + y[i]));
        for (m, c) in moved.iter_mut().zip(counts) {
            *m += c;
        }
    });
    pairs
        .iter()
        .zip(moved)
        .map(|(&(from, to), moved)| ModuloRow {
            from,
            to,
            moved: moved as f64 / keys.len() as f64,
        })
        .collect()
}
