//! `Dalli`: the ring of Dalli, the memcached client of Ruby on Rails.
//!
//! Source: dalli 3.0.6 as Debian ships it (`ruby-dalli`),
//! `lib/dalli/ring.rb` (`build_continuum`, `entry_count_for`,
//! `server_for_hash_key`, `hash_for`) and
//! `lib/dalli/protocol/server_config_parser.rb` (the server name and
//! weight). Dalli 2.x computes the same: 2.7.11 hashes `"#{server.name}:#{idx}"`
//! with the same `name`, 2.0.0 `"#{hostname}:#{port}:#{idx}"`, the same text
//! for a TCP server (2.0 splits `host:port:weight` on every colon, so it has
//! no IPv6 or unix-socket servers); both look up the greatest point `<=`
//! the key's CRC-32 with their own binary search.
//!
//! How it works: a server is named `host:port` (`10.0.0.1:11211`; a
//! server string without a port gets 11211, `[::1]:11211` is named
//! `::1:11211`, a unix socket by its path) and weighted by the whole
//! number after a second colon (`10.0.0.1:11211:3`, default 1). Of `N`
//! servers with total weight `W`, a server of weight `w` gets
//! `floor(N·160·w / W)` points (Ruby divides the integer by a `Float`),
//! the `i`-th at the first 8 hex digits of `SHA1("name:i")` read as a
//! 32-bit number. A key goes to the **greatest point `<=` its
//! `Zlib.crc32`**, wrapping to the last point when it is below them all:
//! the one deployed ring that looks backwards, so it is stored in
//! successor form ([`PointScheme::predecessor`]).
//!
//! Worked example: `SHA1("127.0.0.1:11211:0")` starts `60449ed6`, so
//! server `127.0.0.1:11211`'s first point is `0x60449ed6` = 1615109846. Two servers of weights 1 and 2 get
//! `floor(2·160·1/3) = 106` and `floor(2·160·2/3) = 213` points.
//!
//! Cost: `N·160` points in all; lookup and memory as the ring's. Each
//! server's count depends on the total weight, so every membership change
//! regenerates the ring (as Dalli does).
//!
//! Quirks: Dalli sorts the continuum with Ruby's unstable `sort_by`, so
//! which of two servers on one point owns it is unspecified; ringwise gives
//! it to the smaller name. A single server takes every key without a ring.
//! Dalli hashes the key it sends: with `namespace:` set that is
//! `namespace:key`, and a key longer than 250 bytes is first cut to a
//! prefix plus its MD5 (`Dalli::KeyManager`); give ringwise that key.
//! `failover` (on by default) re-hashes `"#{try}#{key}"` only for a server
//! that is down, which a placement does not model.

use sha1::{Digest, Sha1};

use crate::Error;
use crate::algo::flavour::Flavour;
use crate::algo::ketama::whole_weight;
use crate::algo::params::{Param, Params};
use crate::algo::ring::{Members, PointScheme, Width, numbered_texts};
use crate::hash::{StableHash, cell_point};
use crate::node::Node;

/// Points per server of average weight (`Dalli::Ring::POINTS_PER_SERVER`).
const POINTS_PER_SERVER: u128 = 160;

/// Dalli's point scheme.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Dalli;

/// The point of `SHA1(text)`: its first four bytes, big-endian (the first
/// eight hex digits).
fn sha1_point(text: &[u8]) -> u32 {
    let digest = Sha1::digest(text);
    u32::from_be_bytes([digest[0], digest[1], digest[2], digest[3]])
}

impl PointScheme for Dalli {
    fn counts(&self, members: &Members<'_>) -> Result<Vec<u64>, Error> {
        let weights: Vec<u64> = (members.nodes.iter())
            .map(|n| whole_weight("dalli", n))
            .collect::<Result<_, _>>()?;
        let servers = weights.len() as u128;
        let total: u128 = weights.iter().map(|&w| u128::from(w)).sum();
        // Ruby: `((total_servers * 160 * weight) / Float(total_weight)).floor`,
        // the integer product converted to a double, then divided.
        let count = |w: u64| (servers * POINTS_PER_SERVER * u128::from(w)) as f64 / total as f64;
        Ok(weights.iter().map(|&w| count(w).floor() as u64).collect())
    }

    fn points(&self, node: &Node, count: u64, out: &mut Vec<u64>) -> Result<(), Error> {
        let point = |text: &[u8]| out.push(cell_point(sha1_point(text), true));
        numbered_texts(node.name.as_bytes(), b":", count, point);
        Ok(())
    }

    fn independent(&self) -> bool {
        false
    }

    fn width(&self) -> Width {
        Width::U32
    }

    fn predecessor(&self) -> bool {
        true
    }
}

impl Flavour for Dalli {
    fn from_params(_: &Params) -> Result<Self, Error> {
        Ok(Dalli)
    }

    const DEFAULT_HASH: StableHash = StableHash::Crc32;

    const READS: &'static [Param] = &[Param::MaxPoints];
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::node::NodeTable;

    #[test]
    fn first_point_of_the_worked_example() {
        let mut out = Vec::new();
        Dalli
            .points(&Node::new("127.0.0.1:11211"), 1, &mut out)
            .expect("points");
        assert_eq!(crate::hash::cell_value(out[0]), 1_615_109_846);
    }

    /// `ё` and `lbuc` both make point 1529177671 (found by the join
    /// property of the conformance suite): a join keeps the tie as a
    /// fresh build does, instead of calling it a given point.
    #[test]
    fn a_join_keeps_a_shared_point_as_a_build_does() {
        use crate::algo::ring::Ring;
        use crate::placement::Placement;
        let shared = |name: &str| {
            let (mut out, mut cells) = (Vec::new(), Vec::new());
            Dalli
                .points(&Node::new(name), 160, &mut out)
                .expect("points");
            cells.extend(out.iter().map(|&p| crate::hash::cell_value(p)));
            cells
        };
        assert!(shared("lbuc").contains(&1_529_177_671));
        assert!(shared("ё").contains(&1_529_177_671));
        let table = |names: &[&str]| NodeTable::new(names.iter().map(|&n| Node::new(n)));
        let alone = Ring::from_table(table(&["ё"]).expect("table"), Dalli).expect("ring");
        let joined = alone.with_node(Node::new("lbuc")).expect("a join");
        let fresh = Ring::from_table(table(&["ё", "lbuc"]).expect("table"), Dalli).expect("ring");
        assert!(joined.iter().eq(fresh.iter()));
        let back = fresh.without_node("lbuc").expect("a leave");
        assert!(back.iter().eq(alone.iter()));
    }

    #[test]
    fn counts_follow_the_total_weight() {
        let table = NodeTable::new([Node::new("a:11211"), Node::new("b:11211").weight(2.0)])
            .expect("table");
        let listed = [0, 1];
        let members = Members {
            nodes: &table,
            listed: &listed,
        };
        assert_eq!(Dalli.counts(&members).expect("counts"), [106, 213]);
    }
}
