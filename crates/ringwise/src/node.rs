//! The node table: names, weights, zones and datacenters, behind dense
//! indices.
//!
//! Algorithms never see names: they work on `u64` hashes and [`NodeId`]s,
//! which index this table. The table is kept **sorted by name (bytes)**, so
//! the index of a node, and with it every tie-break that uses indices, depends
//! only on the set of nodes and never on the order they were given in.

use crate::Error;

pub(crate) mod limits;

pub use limits::{MAX_NAME_LEN, MAX_NODE_ID, MAX_NODES, MAX_WEIGHT, MIN_WEIGHT};

/// Dense index of a node in a [`NodeTable`]: `0..len`, in name order.
pub type NodeId = u32;

/// One member of a cluster as the user describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// Stable identity (not an address that changes on restart): non-empty
    /// UTF-8 without control characters, at most [`MAX_NAME_LEN`] bytes.
    pub name: String,
    /// Relative capacity: from [`MIN_WEIGHT`] to [`MAX_WEIGHT`]. Default 1.
    pub weight: f64,
    /// Failure domain (rack, availability zone) used by zone-aware replicas:
    /// like a name, 1 to [`MAX_NAME_LEN`] bytes without control characters.
    pub zone: Option<String>,
    /// Datacenter, for Cassandra's `NetworkTopologyStrategy` (whose rack
    /// is the node's `zone`): like a zone, 1 to [`MAX_NAME_LEN`] bytes
    /// without control characters. Other placements ignore it.
    pub datacenter: Option<String>,
    /// A numeric id fixed by the operator, for HAProxy's `server ... id N`
    /// (its points follow the id): from 1 to [`MAX_NODE_ID`]. `None` lets
    /// the placement number the node (HAProxy: the smallest free id after
    /// the previous server's). Other placements ignore it.
    pub id: Option<u32>,
}

impl Node {
    /// A node of weight 1 without a zone.
    pub fn new(name: impl Into<String>) -> Self {
        Node {
            name: name.into(),
            weight: 1.0,
            zone: None,
            datacenter: None,
            id: None,
        }
    }

    /// The same node with another weight.
    pub fn weight(mut self, weight: f64) -> Self {
        self.weight = weight;
        self
    }

    /// The same node in a zone.
    pub fn zone(mut self, zone: impl Into<String>) -> Self {
        self.zone = Some(zone.into());
        self
    }

    /// The same node in a datacenter.
    pub fn datacenter(mut self, datacenter: impl Into<String>) -> Self {
        self.datacenter = Some(datacenter.into());
        self
    }

    /// The same node with a fixed numeric id.
    pub fn id(mut self, id: u32) -> Self {
        self.id = Some(id);
        self
    }

    /// Checks the name, weight, zone, datacenter and id of this one node.
    pub fn validate(&self) -> Result<(), Error> {
        let bad_name = |reason| Error::InvalidName {
            name: self.name.clone(),
            reason,
        };
        if self.name.is_empty() {
            return Err(bad_name("a node name must not be empty"));
        }
        if self.name.len() > MAX_NAME_LEN {
            return Err(bad_name("a node name must be at most 1024 bytes"));
        }
        if self.name.chars().any(char::is_control) {
            return Err(bad_name(
                "a node name must not contain control characters (tabs, newlines, ...)",
            ));
        }
        if !(self.weight.is_finite() && self.weight >= MIN_WEIGHT && self.weight <= MAX_WEIGHT) {
            return Err(Error::InvalidWeight {
                node: self.name.clone(),
                weight: self.weight,
            });
        }
        if let Some(zone) = &self.zone {
            let reason = if zone.is_empty() {
                Some("a zone must not be empty")
            } else if zone.len() > MAX_NAME_LEN {
                Some("a zone must be at most 1024 bytes")
            } else if zone.chars().any(char::is_control) {
                Some("a zone must not contain control characters (tabs, newlines, ...)")
            } else {
                None
            };
            if let Some(reason) = reason {
                return Err(Error::InvalidZone {
                    node: self.name.clone(),
                    zone: zone.clone(),
                    reason,
                });
            }
        }
        if let Some(datacenter) = &self.datacenter {
            let reason = if datacenter.is_empty() {
                Some("a datacenter must not be empty")
            } else if datacenter.len() > MAX_NAME_LEN {
                Some("a datacenter must be at most 1024 bytes")
            } else if datacenter.chars().any(char::is_control) {
                Some("a datacenter must not contain control characters (tabs, newlines, ...)")
            } else {
                None
            };
            if let Some(reason) = reason {
                return Err(Error::InvalidDatacenter {
                    node: self.name.clone(),
                    datacenter: datacenter.clone(),
                    reason,
                });
            }
        }
        if let Some(id) = self.id
            && !(1..=MAX_NODE_ID).contains(&id)
        {
            return Err(Error::InvalidNodeId {
                node: self.name.clone(),
                id: id.into(),
                reason: "an id is a whole number from 1 to 2147483647, as HAProxy's \
                         `server ... id N` takes",
            });
        }
        Ok(())
    }
}

/// Validated nodes in name order, with dense zone numbers.
///
/// A node without a zone counts as a zone of its own, so zone-aware replica
/// choice on a cluster without zones is the plain one.
///
/// Costs (N nodes, names of length L): `new` O(N log N · L) (a sort by
/// name, then the zones numbered once); `len`, `get`, `name`, `zone_id`,
/// `zone_count` O(1); `total_weight` O(N); `id` and `contains` O(L log N);
/// `iter` O(1) to start; `with` and `without` O(N · L) (a copy with one
/// node inserted or removed in name order, zones numbered again).
#[derive(Debug, Clone, PartialEq)]
pub struct NodeTable {
    nodes: Vec<Node>,
    zones: Vec<u32>,
    zone_count: usize,
}

impl NodeTable {
    /// Validates `nodes` and sorts them by name. Errors name the first bad
    /// node in name order, so they too are independent of input order.
    /// At most [`MAX_NODES`]: past it, the rest is counted (for the
    /// message), not kept.
    pub fn new(nodes: impl IntoIterator<Item = Node>) -> Result<Self, Error> {
        let mut input = nodes.into_iter();
        let mut nodes: Vec<Node> = input.by_ref().take(MAX_NODES).collect();
        let beyond = input.count();
        if beyond > 0 {
            return Err(Error::TooManyNodes {
                nodes: (MAX_NODES + beyond) as u64,
                limit: MAX_NODES as u64,
            });
        }
        nodes.sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
        for node in &nodes {
            node.validate()?;
        }
        if let Some(pair) = nodes.windows(2).find(|w| w[0].name == w[1].name) {
            return Err(Error::DuplicateNode {
                name: pair[0].name.clone(),
            });
        }
        Ok(Self::from_sorted(nodes))
    }

    fn from_sorted(nodes: Vec<Node>) -> Self {
        let mut named: Vec<&str> = nodes.iter().filter_map(|n| n.zone.as_deref()).collect();
        named.sort_unstable();
        named.dedup();
        let mut next_anonymous = named.len() as u32;
        let zones = nodes
            .iter()
            .map(|node| match &node.zone {
                // `named` holds every zone, so the search always succeeds.
                Some(zone) => named.binary_search(&zone.as_str()).unwrap_or(0) as u32,
                None => {
                    next_anonymous += 1;
                    next_anonymous - 1
                }
            })
            .collect();
        NodeTable {
            zone_count: next_anonymous as usize,
            nodes,
            zones,
        }
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// True when the table has no node.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The node at `id`, if any.
    pub fn get(&self, id: NodeId) -> Option<&Node> {
        self.nodes.get(id as usize)
    }

    /// The name of node `id` (`None` for an id this table never issued). O(1).
    pub fn name(&self, id: NodeId) -> Option<&str> {
        self.get(id).map(|n| n.name.as_str())
    }

    /// The name of an id this crate issued for this table.
    pub(crate) fn name_of(&self, id: NodeId) -> &str {
        &self.nodes[id as usize].name
    }

    /// The index of the node called `name`. O(log N): a binary search.
    pub fn id(&self, name: &str) -> Option<NodeId> {
        self.position(name).ok().map(|i| i as NodeId)
    }

    /// True when a node called `name` is in the table. O(log N).
    pub fn contains(&self, name: &str) -> bool {
        self.position(name).is_ok()
    }

    /// Nodes in id (name) order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &Node> + '_ {
        self.nodes.iter()
    }

    /// Dense zone number of node `id`; nodes without a zone get unique ones.
    pub fn zone_id(&self, id: NodeId) -> Option<u32> {
        self.zones.get(id as usize).copied()
    }

    /// The zone number of an id this crate issued for this table.
    pub(crate) fn zone_of(&self, id: NodeId) -> u32 {
        self.zones[id as usize]
    }

    /// Number of distinct zones, counting each zoneless node as one.
    pub fn zone_count(&self) -> usize {
        self.zone_count
    }

    /// Sum of all weights.
    pub fn total_weight(&self) -> f64 {
        self.nodes.iter().map(|n| n.weight).sum()
    }

    /// A table with `node` added, and the id it got. Ids at or above it
    /// shift up by one.
    pub fn with(&self, node: Node) -> Result<(Self, NodeId), Error> {
        node.validate()?;
        if self.nodes.len() >= MAX_NODES {
            return Err(Error::TooManyNodes {
                nodes: self.nodes.len() as u64 + 1,
                limit: MAX_NODES as u64,
            });
        }
        let at = match self.position(&node.name) {
            Ok(_) => return Err(Error::DuplicateNode { name: node.name }),
            Err(at) => at,
        };
        let mut nodes = self.nodes.clone();
        nodes.insert(at, node);
        Ok((Self::from_sorted(nodes), at as NodeId))
    }

    /// A table without the node called `name`, and the id it had. Ids above
    /// it shift down by one.
    pub fn without(&self, name: &str) -> Result<(Self, NodeId), Error> {
        let at = self.position(name).map_err(|_| Error::UnknownNode {
            name: name.to_owned(),
        })?;
        let mut nodes = self.nodes.clone();
        nodes.remove(at);
        Ok((Self::from_sorted(nodes), at as NodeId))
    }

    fn position(&self, name: &str) -> Result<usize, usize> {
        self.nodes
            .binary_search_by(|n| n.name.as_bytes().cmp(name.as_bytes()))
    }
}
