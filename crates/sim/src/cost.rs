//! Experiment 7: what moved keys cost (the article's "Сколько это стоит").
//!
//! A cache serving `rps` requests per second with hit rate `h` sends
//! `rps·(1−h)` to the database. Right after a resize a fraction `m` of keys
//! is cold, so the database sees `rps·(m + (1−m)(1−h))`. Example, 10 → 11
//! servers at 100,000 rps and 95 %: with `% N`, `m = 10/11` and the database
//! gets ≈ 91,364 rps, 18.3× the normal 5,000; with a ring, `m = 1/11` and it
//! gets ≈ 13,636 rps, 2.7×. A store of `D` bytes moves `m·D`: 3 TB gives
//! ≈ 2.73 TB with `% N` and ≈ 273 GB with a ring, about 27 GB from each of
//! the 10 old nodes.
//!
//! The "expected" figures use the theoretical fractions `N/(N+1)` and
//! `1/(N+1)`, as the article does; the "measured" ones use this run's
//! `N → N+1` modulo fraction and the ring's moved fraction at 100 vnodes
//! (or the closest vnodes value run).

use serde::Serialize;

use crate::config::Config;
use crate::modulo::ModuloRow;
use crate::single::SingleRow;

/// The cost model's figures for one pair of moved fractions.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CostFigures {
    /// Fraction of keys moved by `% N`, then by the ring.
    pub modulo_moved: f64,
    pub ring_moved: f64,
    /// Database requests per second right after the change.
    pub modulo_db_rps: f64,
    pub ring_db_rps: f64,
    /// The same divided by the normal database load.
    pub modulo_factor: f64,
    pub ring_factor: f64,
    /// Bytes the store moves.
    pub modulo_bytes: f64,
    pub ring_bytes: f64,
    /// Bytes each old node gives away with the ring.
    pub ring_bytes_per_donor: f64,
}

/// The cost model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cost {
    /// Servers before; after is one more.
    pub nodes: u32,
    pub rps: f64,
    pub hit_rate: f64,
    pub data_bytes: f64,
    /// Database requests per second before the change: `rps·(1−h)`.
    pub normal_db_rps: f64,
    /// From the fractions `N/(N+1)` and `1/(N+1)` (the article's numbers).
    pub expected: CostFigures,
    /// From this run's measured fractions, when it measured them.
    pub measured: Option<CostFigures>,
    /// The ring's vnodes whose measured fraction was used.
    pub measured_vnodes: Option<u32>,
}

impl Cost {
    /// The model for `config`, with measured fractions when available.
    pub fn new(
        config: &Config,
        modulo: Option<&[ModuloRow]>,
        single: Option<&[SingleRow]>,
    ) -> Self {
        let n = f64::from(config.nodes);
        let figures = |modulo_moved, ring_moved| figures(config, modulo_moved, ring_moved);
        let grow = u64::from(config.nodes);
        let measured_modulo = modulo
            .and_then(|rows| rows.iter().find(|r| r.from == grow && r.to == grow + 1))
            .map(|r| r.moved);
        let measured_ring = single.and_then(|rows| {
            rows.iter()
                .min_by_key(|r| (i64::from(r.vnodes) - 100).unsigned_abs())
                .map(|r| (r.vnodes, r.moved))
        });
        let measured = match (measured_modulo, measured_ring) {
            (Some(m), Some((_, r))) => Some(figures(m, r)),
            _ => None,
        };
        Cost {
            nodes: config.nodes,
            rps: config.rps,
            hit_rate: config.hit_rate,
            data_bytes: config.data_bytes,
            normal_db_rps: cache_cost(config.rps, config.hit_rate, 0.0).normal_db_rps,
            expected: figures(n / (n + 1.0), 1.0 / (n + 1.0)),
            measured,
            measured_vnodes: measured_ring.map(|(v, _)| v),
        }
    }
}

/// The article's first cost: a cache whose keys moved.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CacheCost {
    /// Database requests per second before the change: `rps·(1−h)`.
    pub normal_db_rps: f64,
    /// Right after it: `rps·(m + (1−m)(1−h))`.
    pub db_rps: f64,
    /// `db_rps / normal_db_rps` (infinite at a 100 % hit rate).
    pub factor: f64,
}

/// The database load right after a change that moved the fraction `moved`
/// of a cache's keys (cold), at `rps` requests per second and hit rate
/// `hit_rate`: the one formula of `simulate`'s cost section and of `plan`.
pub fn cache_cost(rps: f64, hit_rate: f64, moved: f64) -> CacheCost {
    let miss = 1.0 - hit_rate;
    let normal_db_rps = rps * miss;
    let db_rps = rps * (moved + (1.0 - moved) * miss);
    let factor = if normal_db_rps > 0.0 {
        db_rps / normal_db_rps
    } else {
        f64::INFINITY
    };
    CacheCost {
        normal_db_rps,
        db_rps,
        factor,
    }
}

/// The fraction of keys `hash % N` moves when `from` nodes become `to`: a
/// key stays when `h mod from == h mod to`, which holds for `min(from, to)`
/// residues in each period `lcm(from, to)`. 10 → 11: 1 − 10/110 = 10/11.
pub fn modulo_moved(from: u64, to: u64) -> f64 {
    if from == 0 || to == 0 {
        return 1.0;
    }
    let gcd = |mut a: u64, mut b: u64| {
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a
    };
    let lcm = from as f64 / gcd(from, to) as f64 * to as f64;
    1.0 - from.min(to) as f64 / lcm
}

/// The article's second cost: seconds to stream `bytes` at `bandwidth`
/// bytes per second (infinite without bandwidth).
pub fn transfer_seconds(bytes: f64, bandwidth: f64) -> f64 {
    if bandwidth > 0.0 {
        bytes / bandwidth
    } else {
        f64::INFINITY
    }
}

fn figures(config: &Config, modulo_moved: f64, ring_moved: f64) -> CostFigures {
    let modulo = cache_cost(config.rps, config.hit_rate, modulo_moved);
    let ring = cache_cost(config.rps, config.hit_rate, ring_moved);
    CostFigures {
        modulo_moved,
        ring_moved,
        modulo_db_rps: modulo.db_rps,
        ring_db_rps: ring.db_rps,
        modulo_factor: modulo.factor,
        ring_factor: ring.factor,
        modulo_bytes: config.data_bytes * modulo_moved,
        ring_bytes: config.data_bytes * ring_moved,
        ring_bytes_per_donor: config.data_bytes * ring_moved / f64::from(config.nodes),
    }
}

/// Parses a size such as `3TB`, `512GiB`, `1.5e12` (bytes). Decimal units
/// (KB, MB, GB, TB, PB) are powers of 1000, binary ones (KiB ... PiB) of 1024.
pub fn parse_size(text: &str) -> Result<f64, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| c.is_ascii_alphabetic() && c != 'e' && c != 'E')
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: f64 = number
        .trim()
        .parse()
        .map_err(|_| format!("{text:?} is not a size; write e.g. 3TB, 500GB or 2TiB"))?;
    let scale = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "kb" => 1e3,
        "mb" => 1e6,
        "gb" => 1e9,
        "tb" => 1e12,
        "pb" => 1e15,
        "kib" => 1024f64,
        "mib" => 1024f64.powi(2),
        "gib" => 1024f64.powi(3),
        "tib" => 1024f64.powi(4),
        "pib" => 1024f64.powi(5),
        other => {
            return Err(format!(
                "unknown size unit {other:?}; use B, KB, MB, GB, TB, PB or KiB..PiB"
            ));
        }
    };
    let bytes = number * scale;
    if !(bytes.is_finite() && bytes >= 0.0) {
        return Err(format!("{text:?} is not a size >= 0"));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_articles_cost_figures() {
        let cost = Cost::new(&Config::default(), None, None);
        let e = &cost.expected;
        assert_eq!(cost.normal_db_rps.round(), 5000.0);
        assert_eq!(e.modulo_db_rps.round(), 91364.0);
        assert_eq!(format!("{:.0}", e.modulo_factor), "18");
        assert_eq!(e.ring_db_rps.round(), 13636.0);
        assert_eq!(format!("{:.1}", e.ring_factor), "2.7");
        assert_eq!(format!("{:.1}", e.modulo_bytes / 1e12), "2.7");
        assert_eq!(format!("{:.0}", e.ring_bytes / 1e9), "273");
        assert_eq!(format!("{:.0}", e.ring_bytes_per_donor / 1e9), "27");
        assert!(cost.measured.is_none());
    }

    #[test]
    fn modulo_fractions() {
        assert_eq!(modulo_moved(10, 11), 1.0 - 10.0 / 110.0);
        assert_eq!(modulo_moved(10, 10), 0.0);
        assert_eq!(modulo_moved(4, 2), 0.5);
        assert_eq!(modulo_moved(0, 3), 1.0);
        assert_eq!(transfer_seconds(1e9, 1e8), 10.0);
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("3TB"), Ok(3e12));
        assert_eq!(parse_size("2 TiB"), Ok(2.0 * 1024f64.powi(4)));
        assert_eq!(parse_size("1.5e3"), Ok(1500.0));
        assert!(parse_size("3 parsecs").is_err());
        assert!(parse_size("-1TB").is_err());
    }
}
