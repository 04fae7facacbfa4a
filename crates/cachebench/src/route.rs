//! Which server holds a key: the placement under test over the current
//! members. `modulo` is the article's baseline, `hash % N` over the members
//! in listed order, with the seed recipe's hash (the first 8 bytes of MD5,
//! big-endian: [`StableHash::Md5`]); it exists only here. `proxy` and
//! `proxy-cold` are a ring behind `ringwise-proxy` (with and without its
//! warm-up window): the client sends every key to the proxy, its one
//! server, and the proxy places it (see `proxy.rs`). Every other name
//! is a ringwise [`Algorithm`] with its default parameters and key hash,
//! built by [`ClusterSpec::build`] over the members in join order.
//!
//! A [`Route`] is immutable: a membership change builds a new one (O(N)
//! for modulo, the algorithm's build otherwise) and the workers pick it up
//! through an `ArcSwap`. A lookup never allocates: the placement names the
//! node, a sorted table maps the name to the server's index.

use std::fmt;
use std::str::FromStr;

use anyhow::{Context, Result};
use ringwise::{Algorithm, AnyPlacement, ClusterSpec, KeyHasher, Keyed, Node, StableHash};

/// A placement under test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Algo {
    /// `md5(key) % N`.
    Modulo,
    /// A ringwise algorithm.
    Ringwise(Algorithm),
    /// [`PROXY_ALGORITHM`] placed by `ringwise-proxy`, with its warm-up
    /// window (`proxy`) or without it (`proxy-cold`, `--warm-up 0`).
    Proxy { warm: bool },
}

/// The algorithm of the cluster file a proxy placement's proxy reads.
pub const PROXY_ALGORITHM: Algorithm = Algorithm::Ring;

impl FromStr for Algo {
    type Err = String;

    fn from_str(name: &str) -> Result<Self, String> {
        match name {
            "modulo" => return Ok(Algo::Modulo),
            "proxy" => return Ok(Algo::Proxy { warm: true }),
            "proxy-cold" => return Ok(Algo::Proxy { warm: false }),
            _ => {}
        }
        name.parse::<Algorithm>().map(Algo::Ringwise).map_err(|_| {
            format!(
                "unknown placement `{name}`; one of: {}",
                Algo::names().join(", ")
            )
        })
    }
}

impl fmt::Display for Algo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Algo::Modulo => f.write_str("modulo"),
            Algo::Ringwise(algorithm) => f.write_str(algorithm.name()),
            Algo::Proxy { warm: true } => f.write_str("proxy"),
            Algo::Proxy { warm: false } => f.write_str("proxy-cold"),
        }
    }
}

impl Algo {
    /// `modulo`, every ringwise algorithm name, `proxy` and `proxy-cold`.
    pub fn names() -> Vec<&'static str> {
        let mut names = vec!["modulo"];
        names.extend(Algorithm::NAMES.iter().copied());
        names.extend(["proxy", "proxy-cold"]);
        names
    }

    /// Whether the placement is made by `ringwise-proxy`.
    pub fn is_proxy(self) -> bool {
        matches!(self, Algo::Proxy { .. })
    }
}

/// A member of the cluster: its node name and the index of its server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    pub name: String,
    pub server: usize,
}

/// The placement over one membership.
#[derive(Debug)]
pub struct Route {
    kind: Kind,
    /// Members sorted by name (name → server index by binary search).
    by_name: Vec<Member>,
    /// Members in listed (join) order.
    listed: Vec<Member>,
}

#[derive(Debug)]
enum Kind {
    Modulo,
    Placement(Box<Keyed<AnyPlacement>>),
    /// Every key to server 0, the proxy.
    Proxy,
}

impl Route {
    /// The route of `algo` over `members` (listed in join order).
    pub fn build(algo: Algo, members: &[Member]) -> Result<Route> {
        let kind = match algo {
            Algo::Modulo => Kind::Modulo,
            Algo::Proxy { .. } => Kind::Proxy,
            Algo::Ringwise(algorithm) => {
                let nodes = members.iter().map(|m| Node::new(m.name.clone())).collect();
                let spec = ClusterSpec::new(algorithm, nodes).context("describe the cluster")?;
                Kind::Placement(Box::new(spec.build().context("build the placement")?))
            }
        };
        let mut by_name = members.to_vec();
        by_name.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(Route {
            kind,
            by_name,
            listed: members.to_vec(),
        })
    }

    /// The members in listed order.
    pub fn members(&self) -> &[Member] {
        &self.listed
    }

    /// The index of the server that holds `key` (`None` without members).
    pub fn server(&self, key: &str) -> Option<usize> {
        match &self.kind {
            Kind::Modulo => {
                let n = self.listed.len() as u64;
                let hash = StableHash::Md5.hash(key.as_bytes());
                (n > 0).then(|| self.listed[(hash % n.max(1)) as usize].server)
            }
            Kind::Proxy => (!self.listed.is_empty()).then_some(0),
            Kind::Placement(keyed) => {
                let name = keyed.locate(key)?;
                let at = self
                    .by_name
                    .binary_search_by(|m| m.name.as_str().cmp(name))
                    .ok()?;
                Some(self.by_name[at].server)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn members(n: usize) -> Vec<Member> {
        (0..n)
            .map(|i| Member {
                name: format!("mc{i}"),
                server: i,
            })
            .collect()
    }

    fn moved(algo: Algo, from: usize, to: usize) -> f64 {
        let old = Route::build(algo, &members(from)).expect("old");
        let new = Route::build(algo, &members(to)).expect("new");
        let keys = 20_000;
        let moved = (0..keys)
            .filter(|i| {
                let key = crate::db::key(*i);
                old.server(&key) != new.server(&key)
            })
            .count();
        moved as f64 / keys as f64
    }

    #[test]
    fn modulo_moves_n_of_n_plus_one() {
        // 10 → 11: a key stays only where h mod 10 = h mod 11, 10 of 110.
        let m = moved(Algo::Modulo, 10, 11);
        assert!((m - 10.0 / 11.0).abs() < 0.01, "{m}");
    }

    #[test]
    fn a_ring_moves_about_one_share() {
        let m = moved("ring".parse().expect("ring"), 10, 11);
        assert!((m - 1.0 / 11.0).abs() < 0.03, "{m}");
    }

    #[test]
    fn names_are_the_registry_plus_modulo_and_the_proxy() {
        assert_eq!("modulo".parse::<Algo>(), Ok(Algo::Modulo));
        for name in ["proxy", "proxy-cold"] {
            let algo = name.parse::<Algo>().expect("known");
            assert!(algo.is_proxy());
            assert_eq!(algo.to_string(), name);
            assert!(Algo::names().contains(&name));
        }
        for name in Algorithm::NAMES {
            assert_eq!(name.parse::<Algo>().expect("known").to_string(), *name);
        }
        let err = "mod".parse::<Algo>().expect_err("unknown");
        assert!(err.contains("modulo") && err.contains("ring"), "{err}");
    }

    #[test]
    fn no_members_no_server() {
        for algo in [Algo::Modulo, "ring".parse().expect("ring")] {
            let route = Route::build(algo, &[]);
            if let Ok(route) = route {
                assert_eq!(route.server("user:1"), None);
            }
        }
    }
}
