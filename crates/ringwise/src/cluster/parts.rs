//! The one entrance to a cluster description: [`ClusterSpec::from_parts`].
//!
//! Every source of a cluster reaches a [`ClusterSpec`] through it: the
//! cluster file's reader (`cluster/file.rs`), the etcd watcher (a `config`
//! key and one key per member), the Python package and the CLI. Each gives
//! [`Settings`] (the top-level keys of a cluster file, parameters by
//! [`Param`]) and [`Member`]s (its `[[nodes]]` tables) as values, never as
//! text to be parsed again, and gets back either the spec or a
//! [`Rejected`]: the [`Error`] with the [`Part`] it blames (a parameter, a
//! member by index and field, the `removed` entry...). A file turns the
//! part into its line; the watcher into the member to leave out; Python and
//! the CLI show the error itself.
//!
//! What only a build can check (the point budget, a prime table size, a
//! hash the algorithm cannot use, a slot nobody holds) is
//! [`ClusterSpec::build`]'s; [`ClusterSpec::part_of`] says which part
//! such an error blames, from the error's own fields (the parameter, the
//! node), never from its text.
//!
//! Cost: O(N + given points), one pass; nothing is built.

use std::collections::HashMap;
use std::ops::RangeInclusive;

use super::ClusterSpec;
use crate::Error;
use crate::algo::removals::{self, READ_BY};
use crate::algo::{Algorithm, Given, Layout};
use crate::hash::StableHash;
use crate::layers::HashTag;
use crate::node::{Node, NodeTable};
use crate::param::{Param, ParamValue, Params};

/// The settings of a cluster: a cluster file's top-level keys. `None` (or
/// an empty `params`) means the default.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct Settings {
    /// The algorithm's name (default `ring`).
    pub algorithm: Option<String>,
    /// The key hash's name (default: the algorithm's own for its
    /// parameters).
    pub hash: Option<String>,
    /// The `siphash` secret, 32 hex digits.
    pub secret: Option<String>,
    /// Hash only the part of keys between these two characters (`"^{}"`:
    /// only at a line start); `""` for no tag where the algorithm's peer
    /// has one; unset: the algorithm's own ([`Algorithm::default_hash_tag`]).
    pub hash_tag: Option<String>,
    /// Bounded loads' epsilon, above 0.
    pub epsilon: Option<f64>,
    /// The parameters given, in the order given (a later one wins).
    pub params: Vec<(Param, ParamValue)>,
    /// Memento, anchor, dx: the buckets whose node left, in the order
    /// they left.
    pub removed: Option<Vec<u32>>,
}

/// One member: a cluster file's `[[nodes]]` table.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct Member {
    /// The node's name.
    pub name: String,
    /// Relative capacity (default 1).
    pub weight: Option<f64>,
    /// Failure domain (Cassandra's rack).
    pub zone: Option<String>,
    /// Datacenter (Cassandra's `NetworkTopologyStrategy`).
    pub datacenter: Option<String>,
    /// Numeric id (HAProxy's `server ... id N`), 1 to [`crate::MAX_NODE_ID`].
    pub id: Option<u64>,
    /// Ring points fixed by hand (`ring`).
    pub points: Option<Vec<u64>>,
    /// Cassandra tokens (`cassandra`).
    pub tokens: Option<Vec<i64>>,
    /// Redis Cluster slots (`slots`).
    pub slots: Option<Vec<SlotRange>>,
}

impl Member {
    /// A member called `name` with every default.
    pub fn new(name: impl Into<String>) -> Self {
        Member {
            name: name.into(),
            ..Member::default()
        }
    }

    /// The member of `node` (its name, weight, zone, datacenter and id).
    pub fn of(node: &Node) -> Self {
        Member {
            name: node.name.clone(),
            weight: Some(node.weight),
            zone: node.zone.clone(),
            datacenter: node.datacenter.clone(),
            id: node.id.map(u64::from),
            ..Member::default()
        }
    }
}

/// A slot range as `CLUSTER SLOTS` and `redis-cli` write it: `"0-5460"`,
/// `"12000"` or `12000`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SlotRange {
    /// One slot, as a number.
    One(u16),
    /// A slot or a range, as text.
    Text(String),
}

impl SlotRange {
    /// The inclusive range, or what is wrong with the text.
    pub fn range(&self) -> Result<RangeInclusive<u16>, String> {
        let text = match self {
            SlotRange::One(slot) => return Ok(*slot..=*slot),
            SlotRange::Text(text) => text.trim(),
        };
        let number = |t: &str| {
            t.trim().parse::<u16>().map_err(|_| {
                format!(
                    "{text:?} is not a slot or a range of slots such as \"0-5460\" or \"12000\""
                )
            })
        };
        match text.split_once('-') {
            Some((start, end)) => Ok(number(start)?..=number(end)?),
            None => number(text).map(|slot| slot..=slot),
        }
    }
}

/// The part of a description an error blames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Part {
    /// `algorithm`.
    Algorithm,
    /// `hash`.
    Hash,
    /// `secret`.
    Secret,
    /// `hash_tag`.
    HashTag,
    /// `epsilon`.
    Epsilon,
    /// One parameter.
    Param(Param),
    /// `removed`: the entry at this index, or the list as a whole.
    Removed(Option<usize>),
    /// The member at `index` (in the order given), and which of its fields.
    Member {
        /// Its index among the members given.
        index: usize,
        /// The field at fault.
        field: MemberField,
    },
    /// The members as a whole (a slot nobody holds, too many nodes...).
    Members,
}

/// A field of a [`Member`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum MemberField {
    /// `name`.
    Name,
    /// `weight`.
    Weight,
    /// `zone` (or `rack`).
    Zone,
    /// `datacenter`.
    Datacenter,
    /// `id`.
    Id,
    /// `points`, `tokens` or `slots`, whichever it gives.
    Given,
}

impl Part {
    /// The key it is written under, in a cluster file or an etcd config:
    /// `algorithm`, `hash`, `secret`, `hash_tag`, `epsilon`, a parameter's
    /// name, `removed`, a member's field, or `nodes` for the members.
    pub fn key(self) -> &'static str {
        match self {
            Part::Algorithm => "algorithm",
            Part::Hash => "hash",
            Part::Secret => "secret",
            Part::HashTag => "hash_tag",
            Part::Epsilon => "epsilon",
            Part::Param(param) => param.name(),
            Part::Removed(_) => "removed",
            Part::Member { field, .. } => field.key(),
            Part::Members => "nodes",
        }
    }
}

impl MemberField {
    /// The field's key in a `[[nodes]]` table; for [`MemberField::Given`],
    /// the three it may be.
    pub fn key(self) -> &'static str {
        match self {
            MemberField::Name => "name",
            MemberField::Weight => "weight",
            MemberField::Zone => "zone",
            MemberField::Datacenter => "datacenter",
            MemberField::Id => "id",
            MemberField::Given => "points, tokens or slots",
        }
    }
}

/// A refused description: the error and the part it blames.
#[derive(Debug, Clone, PartialEq)]
pub struct Rejected {
    /// Where the fault is.
    pub part: Part,
    /// What it is.
    pub error: Error,
}

impl From<Rejected> for Error {
    fn from(rejected: Rejected) -> Error {
        rejected.error
    }
}

impl ClusterSpec {
    /// A spec of `algorithm` with its default parameters (and default key
    /// hash) over `nodes`, listed in the order given: the parts
    /// [`ClusterSpec::from_parts`] checks, whose error it returns.
    pub fn new(algorithm: Algorithm, nodes: Vec<Node>) -> Result<Self, Error> {
        let settings = Settings {
            algorithm: Some(algorithm.name().to_owned()),
            ..Settings::default()
        };
        let members: Vec<Member> = nodes.iter().map(Member::of).collect();
        Ok(ClusterSpec::from_parts(&settings, &members)?)
    }

    /// The validated spec of `settings` over `members` (in listed order):
    /// names, weights, zones, layouts, parameter types, vnodes, the hash
    /// and its secret, the hash tag, epsilon and `removed` are checked
    /// here, and the first fault is returned with the part it blames.
    /// Nothing is built: [`ClusterSpec::build`] checks the rest. O(N +
    /// given points).
    pub fn from_parts(settings: &Settings, members: &[Member]) -> Result<Self, Rejected> {
        let reject = |part, error| Rejected { part, error };
        let algorithm = match &settings.algorithm {
            Some(name) => name.parse().map_err(|e| reject(Part::Algorithm, e))?,
            None => Algorithm::default(),
        };
        let mut params = Params::DEFAULT;
        for &(param, value) in &settings.params {
            // A given `capacity = 0` would silently mean the default: every
            // description (file, etcd, Python) is refused here, once.
            param
                .check_given(value)
                .and_then(|()| params.set(param, value))
                .map_err(|e| reject(Part::Param(param), e))?;
        }
        params.hash = hash_of(settings, algorithm, &params)?;
        let hash_tag = match &settings.hash_tag {
            // `""`: no tag, also where the algorithm's peer has one.
            Some(tag) if tag.is_empty() => None,
            Some(tag) => Some(HashTag::new(tag).map_err(|e| reject(Part::HashTag, e))?),
            None => algorithm.default_hash_tag(),
        };
        if params.vnodes == 0 || params.vnodes > crate::MAX_VNODES {
            let e = Error::InvalidVnodes {
                vnodes: params.vnodes.into(),
            };
            return Err(reject(Part::Param(Param::Vnodes), e));
        }
        if let Some(epsilon) = settings.epsilon
            && !(epsilon.is_finite() && epsilon > 0.0)
        {
            let e = Error::ClusterFile {
                line: None,
                field: None,
                message: format!(
                    "epsilon = {epsilon} must be a number above 0 (0.25 = at most 1.25x the \
                     fair share)"
                ),
            };
            return Err(reject(Part::Epsilon, e));
        }
        let mut nodes = Vec::with_capacity(members.len());
        let mut layout = Layout::new();
        let mut seen: HashMap<&str, usize> = HashMap::with_capacity(members.len());
        for (index, member) in members.iter().enumerate() {
            let at = |field| Part::Member { index, field };
            if let Some(given) = given_of(member).map_err(|(field, e)| reject(at(field), e))? {
                layout.insert(member.name.clone(), given);
            }
            let id = match member.id.map(u32::try_from) {
                None => None,
                Some(Ok(id)) => Some(id),
                Some(Err(_)) => {
                    let e = Error::InvalidNodeId {
                        node: member.name.clone(),
                        id: member.id.unwrap_or_default(),
                        reason: "an id is a whole number from 1 to 2147483647, as HAProxy's \
                                 `server ... id N` takes",
                    };
                    return Err(reject(at(MemberField::Id), e));
                }
            };
            let node = Node {
                name: member.name.clone(),
                weight: member.weight.unwrap_or(1.0),
                zone: member.zone.clone(),
                datacenter: member.datacenter.clone(),
                id,
            };
            if let Err(e) = node.validate() {
                let field = match e {
                    Error::InvalidWeight { .. } => MemberField::Weight,
                    Error::InvalidZone { .. } => MemberField::Zone,
                    Error::InvalidDatacenter { .. } => MemberField::Datacenter,
                    Error::InvalidNodeId { .. } => MemberField::Id,
                    _ => MemberField::Name,
                };
                return Err(reject(at(field), e));
            }
            if seen.insert(&member.name, index).is_some() {
                let e = Error::DuplicateNode {
                    name: member.name.clone(),
                };
                return Err(reject(at(MemberField::Name), e));
            }
            nodes.push(node);
        }
        let removed = removed_of(settings, algorithm, nodes.len())?;
        Ok(ClusterSpec {
            algorithm,
            params,
            epsilon: settings.epsilon,
            listed: nodes.iter().map(|n| n.name.clone()).collect(),
            nodes: NodeTable::new(nodes).map_err(|e| reject(Part::Members, e))?,
            layout,
            removed,
            hash_tag,
            hash_named: settings.hash.is_some(),
        })
    }

    /// The part of this spec that `error`, returned by its
    /// [`ClusterSpec::build`], blames: a parameter by its name, a member
    /// by the node the error names (its given points, tokens or slots, or
    /// its weight), the hash for a hash the algorithm cannot use (named or
    /// its default), else the members as a whole. From the error's
    /// fields, never its text. O(N) to find a member.
    pub fn part_of(&self, error: &Error) -> Part {
        let member = |name: &str, field| {
            let index = self.listed.iter().position(|n| n == name);
            index.map_or(Part::Members, |index| Part::Member { index, field })
        };
        match error {
            Error::InvalidParameter { parameter, .. } if *parameter == "hash" => Part::Hash,
            Error::InvalidParameter { parameter, .. } => {
                parameter.parse().map_or(Part::Members, Part::Param)
            }
            Error::InvalidLayout {
                node: Some(name), ..
            } => member(name, MemberField::Given),
            Error::Unsupported {
                node: Some(name), ..
            } => member(name, MemberField::Weight),
            _ => Part::Members,
        }
    }
}

/// The key hash of `settings`: the named one with its secret, else the
/// algorithm's default for `params`.
fn hash_of(
    settings: &Settings,
    algorithm: Algorithm,
    params: &Params,
) -> Result<StableHash, Rejected> {
    let secret = settings.secret.as_deref();
    let Some(name) = &settings.hash else {
        return match secret {
            None => Ok(algorithm.default_hash_with(params)),
            Some(_) => Err(Rejected {
                part: Part::Secret,
                error: Error::InvalidSecret {
                    reason: "a secret needs `hash = \"siphash\"`; the default xxh3 is unkeyed"
                        .into(),
                },
            }),
        };
    };
    StableHash::from_name(name, secret).map_err(|error| {
        let part = match (&error, secret) {
            (Error::InvalidSecret { .. }, Some(_)) => Part::Secret,
            _ => Part::Hash,
        };
        Rejected { part, error }
    })
}

/// What `member` fixes by hand: at most one of points, tokens and slots.
fn given_of(member: &Member) -> Result<Option<Given>, (MemberField, Error)> {
    let layout_error = |message| Error::InvalidLayout {
        node: Some(member.name.clone()),
        message,
    };
    let mut found = Vec::new();
    if let Some(points) = &member.points {
        found.push(Given::Points(points.clone()));
    }
    if let Some(tokens) = &member.tokens {
        found.push(Given::Tokens(tokens.clone()));
    }
    if let Some(slots) = &member.slots {
        let ranges = slots.iter().map(SlotRange::range).collect::<Result<_, _>>();
        let ranges = ranges.map_err(|m| (MemberField::Given, layout_error(m)))?;
        found.push(Given::Slots(ranges));
    }
    if found.len() > 1 {
        let message = "give one of points, tokens or slots, not several".into();
        return Err((MemberField::Name, layout_error(message)));
    }
    Ok(found.pop())
}

/// The `removed` list of `settings`, checked against the algorithm and the
/// `working` members; each error names the entry at fault.
fn removed_of(
    settings: &Settings,
    algorithm: Algorithm,
    working: usize,
) -> Result<Vec<u32>, Rejected> {
    let Some(removed) = &settings.removed else {
        return Ok(Vec::new());
    };
    let problem = |index, message: String| Rejected {
        part: Part::Removed(index),
        error: Error::ClusterFile {
            line: None,
            field: None,
            message,
        },
    };
    if !removed.is_empty() && !algorithm.reads_removed() {
        let message = format!("algorithm {algorithm} has no removed buckets: {READ_BY}");
        return Err(problem(None, message));
    }
    removals::check(removed, working).map_err(|p| problem(p.index, p.message))?;
    Ok(removed.clone())
}
