//! `Tokens`: a Cassandra ring of Murmur3Partitioner tokens.
//!
//! Sources: Cassandra `dht/Murmur3Partitioner.java`, `utils/MurmurHash.java`,
//! `locator/SimpleStrategy.java`; DataStax python-driver
//! `cassandra/metadata.py` (token map, composite keys); the compatibility
//! notes §6.
//!
//! How it works: a ring ([`crate::Ring`] with this point scheme) whose
//! points are the nodes' signed 64-bit tokens, mapped onto the circle in
//! token order ([`crate::token_point`]). A partition key's token is
//! [`crate::cassandra_token`] (the `murmur3-cassandra` key hash); it belongs
//! to the node with the first token `>=` it, wrapping, which is Cassandra's
//! primary replica, and the replica list walks on clockwise to distinct
//! nodes, as `SimpleStrategy` does.
//!
//! Tokens come from the cluster as `nodetool ring` shows them (`tokens =
//! [...]` per node in a cluster file, [`crate::RingBuilder::node_points`]
//! with [`crate::token_point`] in the library). A node without listed
//! tokens gets `round(num_tokens · weight)` generated ones, the tokens of
//! the texts `"<name>#0"`, `"<name>#1"`, ...: deterministic, so every client
//! computes the same ring, but ringwise's own choice (a real Cassandra node
//! picks random tokens, or allocated ones since 4.0; read them back with
//! `nodetool ring`).
//!
//! Worked example: nodes `a` at token 0 and `b` at token 2^62. The key
//! `"123"` has token -7468325962851647638, below 0, so `a` owns it; a key of
//! token 2^62 + 1 wraps past `b` to `a` as well.
//!
//! Cost: the ring's (12 bytes per token plus its index); a node's tokens
//! depend on it alone, so joins and leaves merge in O(P).
//!
//! Partition keys of other CQL types than text are serialised first
//! ([`cql`]: `int` 42 is four bytes, not the text "42"); replicas by
//! datacenter and rack, `NetworkTopologyStrategy`, are [`nts`] (a node's
//! rack is its zone).
//!
//! Quirks: Cassandra refuses two nodes on one token; so does ringwise
//! (for listed tokens).

pub mod cql;
pub mod nts;

use std::collections::HashMap;

use crate::Error;
use crate::algo::params::{Given, Layout, Param, Params, Pinned, Registered};
use crate::algo::ring::{Members, PointScheme, Ring, RingView, Width, numbered_texts, point_count};
use crate::budget::MAX_VNODES;
use crate::hash::{StableHash, cassandra_token, point_token, token_point};
use crate::node::Node;
use crate::placement::Placement;

/// Cassandra's tokens, generated for nodes that list none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tokens {
    num_tokens: u32,
}

impl Tokens {
    /// `num_tokens` generated tokens per unit of weight, from 1 to
    /// [`MAX_VNODES`].
    pub fn new(num_tokens: u32) -> Result<Self, Error> {
        if num_tokens == 0 || num_tokens > MAX_VNODES {
            return Err(Error::InvalidParameter {
                algorithm: "cassandra",
                parameter: "num_tokens",
                value: num_tokens.to_string(),
                expected: "from 1 to 1000000 tokens per node (Cassandra's default is 16)",
            });
        }
        Ok(Tokens { num_tokens })
    }

    /// Generated tokens per unit of weight.
    pub fn num_tokens(&self) -> u32 {
        self.num_tokens
    }
}

impl PointScheme for Tokens {
    fn validate(&self) -> Result<(), Error> {
        Tokens::new(self.num_tokens).map(|_| ())
    }

    fn counts(&self, members: &Members<'_>) -> Result<Vec<u64>, Error> {
        let count = |n: &Node| point_count(self.num_tokens, n.weight);
        Ok(members.nodes.iter().map(count).collect())
    }

    fn points(&self, node: &Node, count: u64, out: &mut Vec<u64>) -> Result<(), Error> {
        numbered_texts(node.name.as_bytes(), b"#", count, |text| {
            out.push(token_point(cassandra_token(text)));
        });
        Ok(())
    }

    fn width(&self) -> Width {
        Width::I64
    }
}

impl Registered for Ring<Tokens> {
    const RING_SHAPED: bool = true;

    fn as_ring(&self) -> Option<&dyn RingView> {
        Some(self)
    }

    /// Every token: a grown ring's are not those its names would draw.
    fn pin(&self) -> Result<Pinned, Error> {
        let mut layout = Layout::new();
        for (point, id) in self.iter() {
            let name = self.nodes().name(id).unwrap_or_default().to_owned();
            let tokens = layout
                .entry(name)
                .or_insert_with(|| Given::Tokens(Vec::new()));
            if let Given::Tokens(tokens) = tokens {
                tokens.push(point_token(point));
            }
        }
        Ok(Pinned {
            layout: Some(layout),
            ..Pinned::default()
        })
    }

    fn build(nodes: Vec<Node>, params: &Params) -> Result<Self, Error> {
        Self::build_with(nodes, params, &Layout::new())
    }

    /// Listed tokens where given, generated ones elsewhere; a token listed
    /// for two nodes is refused, as Cassandra refuses it.
    fn build_with(nodes: Vec<Node>, params: &Params, layout: &Layout) -> Result<Self, Error> {
        let mut owner_of: HashMap<i64, String> = HashMap::new();
        let mut builder = Ring::builder()
            .scheme(Tokens::new(params.num_tokens)?)
            .max_points(params.max_points);
        for node in nodes {
            let tokens = match layout.get(&node.name) {
                None => {
                    builder = builder.node(node);
                    continue;
                }
                Some(Given::Tokens(tokens)) => tokens,
                Some(other) => return Err(wrong_field(&node.name, other)),
            };
            for &token in tokens {
                if let Some(first) = owner_of.insert(token, node.name.clone()) {
                    return Err(Error::InvalidLayout {
                        node: Some(node.name.clone()),
                        message: format!(
                            "token {token} is also node {first:?}'s: \
                             every token belongs to one node"
                        ),
                    });
                }
            }
            let points: Vec<u64> = tokens.iter().map(|&t| token_point(t)).collect();
            builder = builder.node_points(node, points);
        }
        builder.build()
    }

    fn default_hash() -> StableHash {
        StableHash::Murmur3Cassandra
    }

    const READS: &'static [Param] = &[Param::NumTokens, Param::MaxPoints];
}

fn wrong_field(node: &str, given: &Given) -> Error {
    Error::InvalidLayout {
        node: Some(node.to_owned()),
        message: format!(
            "`{}` is not read by cassandra: give its tokens as `tokens = [...]`",
            given.field()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listed_tokens_place_keys_like_cassandra() {
        let nodes = vec![Node::new("a"), Node::new("b")];
        let mut layout = Layout::new();
        layout.insert("a".into(), Given::Tokens(vec![0]));
        layout.insert("b".into(), Given::Tokens(vec![1 << 62]));
        let ring = Ring::<Tokens>::build_with(nodes, &Params::DEFAULT, &layout).expect("builds");
        let owner = |key: &[u8]| {
            let id = ring.owner(token_point(cassandra_token(key)));
            id.and_then(|id| ring.nodes().name(id))
        };
        assert_eq!(owner(b"123"), Some("a"));
        assert_eq!(ring.owner(token_point((1 << 62) + 1)), ring.nodes().id("a"));
        assert_eq!(ring.owner(token_point(1)), ring.nodes().id("b"));
    }

    #[test]
    fn a_token_belongs_to_one_node() {
        let nodes = vec![Node::new("a"), Node::new("b")];
        let mut layout = Layout::new();
        layout.insert("a".into(), Given::Tokens(vec![5, 7]));
        layout.insert("b".into(), Given::Tokens(vec![7]));
        let err = Ring::<Tokens>::build_with(nodes, &Params::DEFAULT, &layout);
        assert!(matches!(err, Err(Error::InvalidLayout { .. })), "{err:?}");
    }
}
