//! `Ketama`: the memcached clients' ring, as each client computes it.
//!
//! Sources: last.fm's libketama (`libketama/ketama.c`, 2007), libmemcached
//! `update_continuum` (`src/libmemcached/hosts.cc`), spymemcached's
//! `KetamaNodeLocator`, twemproxy `src/hashkit/nc_ketama.c`, uhashring
//! `ring_ketama.py`; the compatibility notes §1 give every difference.
//!
//! How it works: a ring of 32-bit points ([`crate::Ring`] with this point
//! scheme). Server `s` of weight `w` among `n` servers of total weight `W`
//! gets `g` *groups*; group `i` is the MD5 digest of the text `"<name>-<i>"`,
//! and each digest gives 4 points, its little-endian `u32`s. A key goes to
//! the first point `>=` the first four MD5 bytes of the key (little-endian),
//! wrapping. The flavours differ in exactly four things:
//!
//! | flavor         | `<name>` of `10.0.1.1:11211` / `:11212` | groups `g`            | search | equal points        |
//! |----------------|----------------------------------------|-----------------------|--------|---------------------|
//! | `libmemcached` | `10.0.1.1` / `10.0.1.1:11212`           | f32 `floor(w/W·40·n)` | `>=`   | earlier listed wins |
//! | `spymemcached` | `/10.0.1.1:11211` / `/10.0.1.1:11212`   | as libmemcached       | `>=`   | earlier listed wins |
//! | `libketama`    | the name as written                    | `floorf` of a double  | `>=`   | unspecified (qsort) |
//! | `twemproxy`    | as libmemcached; a server name as is   | as libmemcached       | `>=`   | unspecified (qsort) |
//! | `uhashring`    | the name as written                    | exact `40·n·w div W`  | `>`    | later listed wins   |
//!
//! The group count is where a port must copy the peer's arithmetic, not its
//! intent. Worked example (notes §1.7): weights 94, 315, 500, 627, 64, so
//! `W = 1600`; for the last server `64/1600·40·5 = 8` exactly. libmemcached
//! computes `pct = 64f32/1600f32 = 0.039999999` (f32 cannot hold 0.04),
//! then `pct·160/4·5 = 7.9999995` in f32, floor 7: 28 points. libketama
//! forms `pct·40.0·5` in double (`7.99999982...`), narrows it to f32,
//! which rounds to 8.0: 32 points; uhashring's integers give 8 too.
//!
//! Ties: ringwise's rule for the unspecified ones is libmemcached's (the
//! earlier listed server wins); peers that leave ties to `qsort` agree with
//! it only when no two servers share a point.
//!
//! Cost: `4·g` points per server, about `160·n` in all; lookup and memory
//! as the ring's. A batch (`Keyed::owners_into`) hashes its keys eight at
//! a time through the eight-lane MD5 (`hash/md5_lanes.rs`): 0.40× the time
//! of MD5 alone one key at a time (BENCHMARKS.md, compatibility flavours). Group counts depend on every weight, so a membership
//! change rebuilds the ring (O(P)), as the peers do, and moves keys between
//! old servers too when the rounding of their counts changes.
//!
//! Quirks: weights are whole numbers (the peers count them as integers).
//! twemproxy hashes an explicitly named server (`host:port:weight name`) by
//! its name exactly as written, and an unnamed one by `host` or
//! `host:port`; a node name here cannot say which it is, so a name ending
//! in `:11211` is read as an address and loses the suffix. Name such a
//! server without a port-like suffix (its `:11211` is then exactly
//! twemproxy's).
//! The ring follows the listed order (ties), unlike ringwise's own
//! order-independent algorithms. libmemcached's non-weighted `ketama` mode
//! (100 Jenkins-hashed points, `MEMCACHED_BEHAVIOR_KETAMA` with all weights
//! at one) is a different ring and is not reproduced: configure the client with
//! `MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED` (pylibmc: `ketama_weighted`).

use crate::Error;
use crate::algo::flavour::Flavour;
use crate::algo::params::{Param, Params};
use crate::algo::ring::{Members, PointScheme, Tie, Width, numbered_texts};
use crate::hash::{StableHash, cell_point, md5_le32x4};
use crate::node::Node;
use crate::param::Flavor;

/// What each flavour computes (its enum is the `flavor` parameter's
/// value, in `param/flavor.rs`).
impl Flavor {
    fn tie(self) -> Tie {
        match self {
            Flavor::Uhashring => Tie::LastListed,
            _ => Tie::FirstListed,
        }
    }

    /// Groups of 4 points of a server of `weight` among `servers` servers
    /// of total weight `total`, in the client's own arithmetic.
    fn groups(self, weight: u64, total: u64, servers: u64) -> u64 {
        match self {
            Flavor::Uhashring => 40 * servers * weight / total,
            Flavor::Libketama => {
                let pct = weight as f32 / total as f32;
                ((f64::from(pct) * 40.0 * servers as f64) as f32).floor() as u64
            }
            _ => {
                let pct = weight as f32 / total as f32;
                let groups = pct * 160.0 / 4.0 * servers as f32;
                // The C adds a double 1e-10 and narrows back to float: below
                // half an ulp of any count that matters, kept to be faithful.
                ((f64::from(groups) + 1e-10) as f32).floor() as u64
            }
        }
    }

    /// The text before `-<i>` for a node called `name`.
    fn server_text(self, name: &str) -> Result<String, Error> {
        let (host, port) = split_port(name)?;
        Ok(match (self, port) {
            (Flavor::Libketama | Flavor::Uhashring, _) => name.to_owned(),
            (Flavor::Spymemcached, port) => format!("/{host}:{}", port.unwrap_or(11211)),
            (_, None | Some(11211)) => host.to_owned(),
            (_, Some(port)) => format!("{host}:{port}"),
        })
    }
}

/// `host:port` split at the last colon followed by digits only (`None`
/// without one); a port past 65535 is an error, as in the clients.
fn split_port(name: &str) -> Result<(&str, Option<u16>), Error> {
    let Some((host, port)) = name.rsplit_once(':') else {
        return Ok((name, None));
    };
    if port.is_empty() || !port.bytes().all(|b| b.is_ascii_digit()) {
        return Ok((name, None));
    }
    match port.parse() {
        Ok(port) => Ok((host, Some(port))),
        Err(_) => Err(Error::InvalidName {
            name: name.to_owned(),
            reason: "the port after the last `:` must be a number from 0 to 65535",
        }),
    }
}

/// Whole-number weights, as the peers count them.
pub(crate) fn whole_weight(algorithm: &'static str, node: &Node) -> Result<u64, Error> {
    if node.weight.fract() == 0.0 && node.weight >= 1.0 {
        return Ok(node.weight as u64);
    }
    Err(Error::Unsupported {
        algorithm,
        operation: format!("weigh node {:?} {}", node.name, node.weight),
        reason: "its peers count weights in whole numbers: use 1, 2, 3, ...",
        node: Some(node.name.clone()),
    })
}

/// `count` points for a node of weight 1; refuses any other weight in the
/// name of `algorithm`, whose peer has no weights (`reason` says so).
pub(crate) fn unweighted_count(
    algorithm: &'static str,
    node: &Node,
    count: u64,
    reason: &'static str,
) -> Result<u64, Error> {
    if node.weight == 1.0 {
        return Ok(count);
    }
    Err(Error::Unsupported {
        algorithm,
        operation: format!("weigh node {:?} {}", node.name, node.weight),
        reason,
        node: Some(node.name.clone()),
    })
}

/// Ketama's points, in one client's flavour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Ketama {
    flavor: Flavor,
}

impl Ketama {
    /// The points of `flavor`.
    pub fn new(flavor: Flavor) -> Self {
        Ketama { flavor }
    }

    /// Which client's ketama.
    pub fn flavor(&self) -> Flavor {
        self.flavor
    }
}

impl PointScheme for Ketama {
    fn counts(&self, members: &Members<'_>) -> Result<Vec<u64>, Error> {
        let weights: Vec<u64> = members
            .nodes
            .iter()
            .map(|n| whole_weight("ketama", n))
            .collect::<Result<_, _>>()?;
        let total: u64 = weights.iter().sum();
        let servers = weights.len() as u64;
        let groups = |&w: &u64| 4 * self.flavor.groups(w, total, servers);
        Ok(weights.iter().map(groups).collect())
    }

    fn points(&self, node: &Node, count: u64, out: &mut Vec<u64>) -> Result<(), Error> {
        let text = self.flavor.server_text(&node.name)?;
        let after_equal_keys = self.flavor != Flavor::Uhashring;
        numbered_texts(text.as_bytes(), b"-", count / 4, |name| {
            let points = md5_le32x4(name).map(|p| cell_point(p, after_equal_keys));
            out.extend_from_slice(&points);
        });
        Ok(())
    }

    fn independent(&self) -> bool {
        false
    }

    fn width(&self) -> Width {
        Width::U32
    }
}

impl Flavour for Ketama {
    fn from_params(params: &Params) -> Result<Self, Error> {
        Ok(Ketama::new(params.flavor))
    }

    fn tie(params: &Params) -> Tie {
        params.flavor.tie()
    }

    const DEFAULT_HASH: StableHash = StableHash::Md5Le32;

    fn default_hash_with(params: &Params) -> StableHash {
        params.flavor.default_hash()
    }

    const READS: &'static [Param] = &[Param::Flavor, Param::MaxPoints];
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_counts_follow_each_client() {
        // The notes' rounding hazard: 64 of 1600 over 5 servers.
        assert_eq!(Flavor::Libmemcached.groups(64, 1600, 5), 7);
        assert_eq!(Flavor::Twemproxy.groups(64, 1600, 5), 7);
        assert_eq!(Flavor::Libketama.groups(64, 1600, 5), 8);
        assert_eq!(Flavor::Uhashring.groups(64, 1600, 5), 8);
        // libmemcached's fixture: 600 of 4300 over 8 servers, 176 points.
        assert_eq!(Flavor::Libmemcached.groups(600, 4300, 8) * 4, 176);
    }

    #[test]
    fn server_texts() {
        let text = |f: Flavor, n| f.server_text(n).expect("valid");
        assert_eq!(text(Flavor::Libmemcached, "10.0.1.1:11211"), "10.0.1.1");
        assert_eq!(
            text(Flavor::Libmemcached, "10.0.1.1:11212"),
            "10.0.1.1:11212"
        );
        assert_eq!(text(Flavor::Libmemcached, "cache-a"), "cache-a");
        assert_eq!(text(Flavor::Spymemcached, "10.0.1.1"), "/10.0.1.1:11211");
        assert_eq!(text(Flavor::Libketama, "10.0.1.1:11211"), "10.0.1.1:11211");
        assert_eq!(text(Flavor::Twemproxy, "server1"), "server1");
        assert!(Flavor::Libmemcached.server_text("h:99999").is_err());
    }
}
