//! `Nginx`: the ring of nginx's `hash $key consistent` upstreams.
//!
//! Source: nginx `src/http/modules/ngx_http_upstream_hash_module.c`
//! (`ngx_http_upstream_update_chash`, `ngx_http_upstream_find_chash_point`),
//! which says it follows Perl's Cache::Memcached::Fast; the compatibility
//! notes §2.
//!
//! How it works: a ring of 32-bit points ([`crate::Ring`] with this point
//! scheme). A `server` string as written in the upstream block is split
//! into host and port: `unix:/path` is host `/path` without a port;
//! otherwise, scanning back from the end over digits, a `:` splits it
//! (`10.0.0.1:443` → `10.0.0.1`, `443`; `[::1]:80` → `[::1]`, `80`), and a
//! string without one (`backend.local`) is all host. Its `160·weight`
//! points are a CRC-32 chain: `h_0 = crc32(host ‖ 0x00 ‖ port ‖ LE32(0))`,
//! `h_j = crc32(host ‖ 0x00 ‖ port ‖ LE32(h_{j-1}))`; the CRC state after
//! `host ‖ 0x00 ‖ port` is computed once and cloned per point. A key goes
//! to the first point `>=` its CRC-32, wrapping.
//!
//! Worked example: `10.0.0.1:443` starts 3927464997, 3667281858, 43317179
//! (notes §2), the second being `crc32("10.0.0.1\0" "443" ‖ LE32(3927464997))`.
//!
//! Cost: `160·weight` points per server; lookup and memory as the ring's. A
//! server's points depend only on its own string and weight, so adding one
//! moves keys only to it (O(P) merge, no rehash).
//!
//! Quirks: nginx sorts with an unstable qsort and keeps one point per
//! value, so which server keeps a point two servers share is unspecified;
//! ringwise gives it to the smaller name (the ring's default tie). nginx
//! sends an empty key, and every key of a single-server upstream, through
//! round robin instead of the ring: with one server that is the same
//! server; for the empty key ringwise answers the ring's owner. Weights are
//! whole numbers, as in `server ... weight=N`. Servers marked `backup` take
//! no points and are not members here.

use crate::Error;
use crate::algo::flavour::Flavour;
use crate::algo::ketama::whole_weight;
use crate::algo::params::{Param, Params};
use crate::algo::ring::{Members, PointScheme, Width};
use crate::hash::{StableHash, cell_point};
use crate::node::Node;

/// Points per unit of weight.
const POINTS_PER_WEIGHT: u64 = 160;

/// nginx's point scheme.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Nginx;

/// The host and port bytes nginx hashes for a `server` string.
fn host_port(server: &str) -> (&str, &str) {
    let prefix = server.get(..5);
    if prefix.is_some_and(|p| p.eq_ignore_ascii_case("unix:")) {
        return (&server[5..], "");
    }
    let digits = server.bytes().rev().take_while(u8::is_ascii_digit).count();
    let colon = server.len() - digits;
    if colon > 0 && server.as_bytes()[colon - 1] == b':' {
        return (&server[..colon - 1], &server[colon..]);
    }
    (server, "")
}

impl PointScheme for Nginx {
    fn counts(&self, members: &Members<'_>) -> Result<Vec<u64>, Error> {
        let count = |n: &Node| Ok(whole_weight("nginx", n)?.saturating_mul(POINTS_PER_WEIGHT));
        members.nodes.iter().map(count).collect()
    }

    fn points(&self, node: &Node, count: u64, out: &mut Vec<u64>) -> Result<(), Error> {
        let (host, port) = host_port(&node.name);
        let mut base = crc32fast::Hasher::new();
        base.update(host.as_bytes());
        base.update(&[0]);
        base.update(port.as_bytes());
        let mut previous = 0u32;
        for _ in 0..count {
            let mut hasher = base.clone();
            hasher.update(&previous.to_le_bytes());
            previous = hasher.finalize();
            out.push(cell_point(previous, true));
        }
        Ok(())
    }

    fn width(&self) -> Width {
        Width::U32
    }
}

impl Flavour for Nginx {
    fn from_params(_: &Params) -> Result<Self, Error> {
        Ok(Nginx)
    }

    const DEFAULT_HASH: StableHash = StableHash::Crc32;

    const READS: &'static [Param] = &[Param::MaxPoints];
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::cell_value;

    #[test]
    fn servers_split_like_nginx() {
        assert_eq!(host_port("10.0.0.1:443"), ("10.0.0.1", "443"));
        assert_eq!(host_port("[::1]:80"), ("[::1]", "80"));
        assert_eq!(host_port("[::1]"), ("[::1]", ""));
        assert_eq!(host_port("backend.local"), ("backend.local", ""));
        assert_eq!(host_port("UNIX:/tmp/s.sock"), ("/tmp/s.sock", ""));
        assert_eq!(host_port("8080"), ("8080", ""));
        assert_eq!(host_port(":80"), ("", "80"));
    }

    #[test]
    fn first_points_of_the_notes() {
        let mut out = Vec::new();
        Nginx
            .points(&Node::new("10.0.0.1:443"), 3, &mut out)
            .expect("points");
        let values: Vec<u32> = out.into_iter().map(cell_value).collect();
        assert_eq!(values, [3_927_464_997, 3_667_281_858, 43_317_179]);
    }
}
