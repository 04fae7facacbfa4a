//! Reading a [`ClusterSpec`] from TOML, with the line and field of every
//! error (feature `cluster-file`).

use std::collections::HashMap;

use serde::Deserialize;
use toml::Spanned;

use std::ops::RangeInclusive;

use super::ClusterSpec;
use crate::AnyPlacement;
use crate::Error;
use crate::algo::removals::{self, READ_BY};
use crate::algo::{Algorithm, Flavor, Given, Layout, Params};
use crate::hash::StableHash;
use crate::layers::{HashTag, Keyed};
use crate::node::{Node, NodeTable};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCluster {
    algorithm: Option<Spanned<String>>,
    hash: Option<Spanned<String>>,
    vnodes: Option<Spanned<u32>>,
    table_size: Option<Spanned<u64>>,
    probes: Option<Spanned<u32>>,
    max_points: Option<Spanned<u64>>,
    flavor: Option<Spanned<String>>,
    min_ring_size: Option<Spanned<u64>>,
    max_ring_size: Option<Spanned<u64>>,
    num_tokens: Option<Spanned<u32>>,
    capacity: Option<Spanned<u32>>,
    epsilon: Option<Spanned<f64>>,
    secret: Option<Spanned<String>>,
    hash_tag: Option<Spanned<String>>,
    removed: Option<Spanned<Vec<Spanned<u32>>>>,
    nodes: Spanned<Vec<RawNode>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawNode {
    name: Spanned<String>,
    weight: Option<Spanned<f64>>,
    zone: Option<Spanned<String>>,
    points: Option<Spanned<Vec<u64>>>,
    tokens: Option<Spanned<Vec<i64>>>,
    slots: Option<Spanned<Vec<RawSlots>>>,
}

/// A slot range as `CLUSTER SLOTS` and `redis-cli` write it: `"0-5460"`,
/// `"12000"` or `12000`.
#[derive(Deserialize)]
#[serde(untagged)]
enum RawSlots {
    One(u16),
    Text(String),
}

impl RawSlots {
    fn range(&self) -> Result<RangeInclusive<u16>, String> {
        let text = match self {
            RawSlots::One(slot) => return Ok(*slot..=*slot),
            RawSlots::Text(text) => text.trim(),
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

impl RawNode {
    /// What this node fixes by hand, and the span to blame for it.
    fn given(&self) -> Result<Option<(Given, std::ops::Range<usize>)>, Located> {
        let mut found = Vec::new();
        if let Some(points) = &self.points {
            found.push((Given::Points(points.get_ref().clone()), points.span()));
        }
        if let Some(tokens) = &self.tokens {
            found.push((Given::Tokens(tokens.get_ref().clone()), tokens.span()));
        }
        if let Some(slots) = &self.slots {
            let ranges = slots.get_ref().iter().map(RawSlots::range);
            let ranges = ranges
                .collect::<Result<Vec<_>, String>>()
                .map_err(|message| {
                    let e = Error::InvalidLayout {
                        node: Some(self.name.get_ref().clone()),
                        message,
                    };
                    (slots.span(), "slots", e)
                })?;
            found.push((Given::Slots(ranges), slots.span()));
        }
        if found.len() > 1 {
            let e = Error::InvalidLayout {
                node: Some(self.name.get_ref().clone()),
                message: "give one of points, tokens or slots, not several".into(),
            };
            return Err((self.name.span(), "name", e));
        }
        Ok(found.pop())
    }
}

/// Refuses a file of more than [`crate::MAX_NODES`] `[[nodes]]` tables
/// before parsing it: the TOML parser holds about 1.6 KB per node table
/// (2^20 + 1 tables: 1.6 GB and 10 s before the node count was checked),
/// while counting header lines costs one pass and no memory. Nodes written
/// as an inline array are counted after parsing, as before. O(file).
fn refuse_runaway_node_list(text: &str) -> Result<(), Error> {
    let is_header = |line: &str| {
        let code = line.split('#').next().unwrap_or_default();
        let mut chars = code.chars().filter(|c| !c.is_whitespace());
        "[[nodes]]".chars().all(|c| chars.next() == Some(c)) && chars.next().is_none()
    };
    let tables = text.lines().filter(|line| is_header(line)).count() as u64;
    if tables > crate::MAX_NODES as u64 {
        return Err(Error::TooManyNodes {
            nodes: tables,
            limit: crate::MAX_NODES as u64,
        });
    }
    Ok(())
}

impl ClusterSpec {
    /// Parses and validates a cluster file. Nothing is built on error.
    /// Validation builds the placement once (limits such as the point
    /// budget are caught here, with the field's line): O(file + build).
    pub fn from_toml(text: &str) -> Result<Self, Error> {
        Self::from_toml_built(text).map(|(spec, _)| spec)
    }

    /// [`ClusterSpec::from_toml`] that also returns the placement it built
    /// to validate the file, so that a caller who uses the spec as is does
    /// not build it a second time (issue 13 item 7: a big maglev table was
    /// built twice by `--cluster`). O(file + build).
    pub fn from_toml_built(text: &str) -> Result<(Self, Keyed<AnyPlacement>), Error> {
        let (spec, locate) = Self::read_toml(text)?;
        // Catch limits such as too many points now, not at first use.
        let built = spec.build().map_err(locate)?;
        Ok((spec, built))
    }

    /// [`ClusterSpec::from_toml`] without the build: every field is parsed
    /// and checked (names, weights, zones, layouts, parameter syntax), but
    /// what only a build checks (the point budget, the memory a table
    /// needs, a hash the algorithm cannot use) is left to
    /// [`ClusterSpec::build`]. For a caller who changes the spec before
    /// building it (the CLI's `--max-points`, `--algo`, `--vnodes`...), so
    /// that a file too big as written can still be built as changed. O(file).
    pub fn from_toml_unbuilt(text: &str) -> Result<Self, Error> {
        Self::read_toml(text).map(|(spec, _)| spec)
    }

    /// The parsed spec, and what names the line of an error its build
    /// reports.
    fn read_toml(text: &str) -> Result<(Self, impl Fn(Error) -> Error + '_), Error> {
        let at = move |span: std::ops::Range<usize>, field: &str, error: Error| {
            let message = match error {
                Error::ClusterFile { message, .. } => message,
                other => other.to_string(),
            };
            Error::ClusterFile {
                line: Some(line_of(text, span.start)),
                field: Some(field.to_owned()),
                message,
            }
        };
        refuse_runaway_node_list(text)?;
        let raw: RawCluster = toml::from_str(text).map_err(|e| Error::ClusterFile {
            line: e.span().map(|s| line_of(text, s.start)),
            field: None,
            message: plain_words(e.message().trim()),
        })?;
        let algorithm = match &raw.algorithm {
            Some(a) => a
                .get_ref()
                .parse()
                .map_err(|e| at(a.span(), "algorithm", e))?,
            None => Algorithm::default(),
        };
        let flavor = match &raw.flavor {
            Some(f) => f
                .get_ref()
                .parse::<Flavor>()
                .map_err(|e| at(f.span(), "flavor", e))?,
            None => Flavor::default(),
        };
        let hash_default = algorithm.default_hash_with(&Params {
            flavor,
            ..Params::DEFAULT
        });
        let hash = parse_hash(&raw, hash_default).map_err(|(span, field, e)| at(span, field, e))?;
        let hash_tag = match &raw.hash_tag {
            Some(t) => Some(HashTag::new(t.get_ref()).map_err(|e| at(t.span(), "hash_tag", e))?),
            None => None,
        };
        let vnodes = match &raw.vnodes {
            Some(v) if *v.get_ref() == 0 || *v.get_ref() > crate::MAX_VNODES => {
                let e = Error::InvalidVnodes {
                    vnodes: (*v.get_ref()).into(),
                };
                return Err(at(v.span(), "vnodes", e));
            }
            Some(v) => *v.get_ref(),
            None => Params::DEFAULT.vnodes,
        };
        if raw.nodes.get_ref().is_empty()
            && let Some(removed) = raw.removed.as_ref().filter(|r| !r.get_ref().is_empty())
        {
            let e = Error::ClusterFile {
                line: None,
                field: None,
                message: format!(
                    "every bucket is removed: `removed` lists {} buckets and no [[nodes]] \
                     table is left; list the working nodes as [[nodes]] tables",
                    removed.get_ref().len()
                ),
            };
            return Err(at(removed.span(), "removed", e));
        }
        if raw.nodes.get_ref().is_empty() {
            let e = Error::ClusterFile {
                line: None,
                field: None,
                message: "the cluster has no nodes: add at least one [[nodes]] table".into(),
            };
            return Err(at(raw.nodes.span(), "nodes", e));
        }
        if let Some(e) = &raw.epsilon
            && !(e.get_ref().is_finite() && *e.get_ref() > 0.0)
        {
            let e = Error::ClusterFile {
                line: None,
                field: None,
                message: format!(
                    "epsilon = {} must be a number above 0 (0.25 = at most 1.25x the fair share)",
                    e.get_ref()
                ),
            };
            return Err(at(
                raw.epsilon.as_ref().map_or(0..0, Spanned::span),
                "epsilon",
                e,
            ));
        }
        let mut nodes = Vec::with_capacity(raw.nodes.get_ref().len());
        let mut layout = Layout::new();
        let mut seen: HashMap<&str, usize> = HashMap::new();
        for raw_node in raw.nodes.get_ref() {
            if let Some((given, _)) = raw_node.given().map_err(|(s, f, e)| at(s, f, e))? {
                layout.insert(raw_node.name.get_ref().clone(), given);
            }
            let name = &raw_node.name;
            let node = Node {
                name: name.get_ref().clone(),
                weight: raw_node.weight.as_ref().map_or(1.0, |w| *w.get_ref()),
                zone: raw_node.zone.as_ref().map(|z| z.get_ref().clone()),
            };
            if let Err(e) = node.validate() {
                let (span, field) = match e {
                    Error::InvalidWeight { .. } => {
                        (raw_node.weight.as_ref().map(Spanned::span), "weight")
                    }
                    Error::InvalidZone { .. } => {
                        (raw_node.zone.as_ref().map(Spanned::span), "zone")
                    }
                    _ => (None, "name"),
                };
                return Err(at(span.unwrap_or_else(|| name.span()), field, e));
            }
            // Where each name starts, as a byte offset: its line is counted
            // only for an error (counting it for every node made parsing
            // quadratic in the number of nodes).
            if let Some(first) = seen.insert(name.get_ref(), name.span().start) {
                let first = line_of(text, first);
                let e = Error::ClusterFile {
                    line: None,
                    field: None,
                    message: format!(
                        "duplicate node {:?} (first defined on line {first}): \
                         every node needs a unique name",
                        name.get_ref()
                    ),
                };
                return Err(at(name.span(), "name", e));
            }
            nodes.push(node);
        }
        let removed = removed_of(&raw, algorithm, nodes.len()).map_err(|(s, f, e)| at(s, f, e))?;
        let params = Params {
            hash,
            vnodes,
            table_size: raw
                .table_size
                .as_ref()
                .map_or(Params::DEFAULT.table_size, |t| *t.get_ref()),
            probes: raw
                .probes
                .as_ref()
                .map_or(Params::DEFAULT.probes, |p| *p.get_ref()),
            max_points: raw
                .max_points
                .as_ref()
                .map_or(Params::DEFAULT.max_points, |m| *m.get_ref()),
            flavor,
            min_ring_size: raw
                .min_ring_size
                .as_ref()
                .map_or(Params::DEFAULT.min_ring_size, |m| *m.get_ref()),
            max_ring_size: raw
                .max_ring_size
                .as_ref()
                .map_or(Params::DEFAULT.max_ring_size, |m| *m.get_ref()),
            num_tokens: raw
                .num_tokens
                .as_ref()
                .map_or(Params::DEFAULT.num_tokens, |n| *n.get_ref()),
            capacity: raw
                .capacity
                .as_ref()
                .map_or(Params::DEFAULT.capacity, |c| *c.get_ref()),
        };
        let spec = ClusterSpec {
            algorithm,
            params,
            epsilon: raw.epsilon.as_ref().map(|e| *e.get_ref()),
            listed: nodes.iter().map(|n: &Node| n.name.clone()).collect(),
            nodes: NodeTable::new(nodes)?,
            layout,
            removed,
            hash_tag,
            hash_named: raw.hash.is_some(),
        };
        // A bad parameter names its own line: the hash's (or the
        // algorithm's, for a hash the algorithm cannot use), the table
        // size's, the probe count's, the point budget's.
        let param_at = move |e: Error| {
            let span = match &e {
                Error::InvalidParameter { parameter, .. } => match *parameter {
                    "hash" => raw
                        .hash
                        .as_ref()
                        .or(raw.algorithm.as_ref())
                        .map(Spanned::span),
                    "table_size" => raw.table_size.as_ref().map(Spanned::span),
                    "probes" => raw.probes.as_ref().map(Spanned::span),
                    "max_points" => raw.max_points.as_ref().map(Spanned::span),
                    "min_ring_size" => raw.min_ring_size.as_ref().map(Spanned::span),
                    "max_ring_size" => raw.max_ring_size.as_ref().map(Spanned::span),
                    "num_tokens" => raw.num_tokens.as_ref().map(Spanned::span),
                    "capacity" => raw.capacity.as_ref().map(Spanned::span),
                    _ => None,
                }
                .map(|span| (span, *parameter)),
                Error::InvalidLayout {
                    node: Some(name), ..
                } => given_span(&raw, name),
                Error::Unsupported { operation, .. } if operation.starts_with("weigh node") => {
                    weight_span(&raw, operation)
                }
                _ => None,
            };
            match span {
                Some((span, field)) => at(span, field, e),
                None => at(raw.nodes.span(), "nodes", e),
            }
        };
        Ok((spec, param_at))
    }
}

impl ClusterSpec {
    /// The canonical cluster file of this spec, which
    /// [`ClusterSpec::from_toml`] reads back to an equal spec: the
    /// algorithm; the hash (and secret) when named or not the algorithm's
    /// default; the hash tag, epsilon and every parameter that differs from
    /// its default; `removed` (with a comment saying what it means); the
    /// nodes in listed order, each with its weight (when not 1), zone and
    /// given points, tokens or slots, and when buckets were removed its
    /// bucket number as a comment. Numbers are written
    /// so they parse back to the same `f64` (`1e-6`, `0.5`). A spec with an
    /// empty `listed` is written in name order and reads back listing it;
    /// an unnamed hash that differs from the default reads back named.
    /// O(N + given points).
    pub fn to_toml(&self) -> String {
        use std::fmt::Write as _;
        let mut out = format!("algorithm = {}\n", quoted(self.algorithm.name()));
        let p = &self.params;
        if self.hash_named || p.hash != self.algorithm.default_hash_with(p) {
            let _ = writeln!(out, "hash = {}", quoted(p.hash.name()));
            if let StableHash::SipHash { key } = p.hash {
                let hex: String = key.iter().map(|b| format!("{b:02x}")).collect();
                let _ = writeln!(out, "secret = {}", quoted(&hex));
            }
        }
        if let Some(tag) = self.hash_tag {
            let _ = writeln!(out, "hash_tag = {}", quoted(&tag.delimiters()));
        }
        if let Some(epsilon) = self.epsilon {
            let _ = writeln!(out, "epsilon = {epsilon:?}");
        }
        for name in p.differing(&Params::DEFAULT) {
            let value = match name {
                "vnodes" => p.vnodes.to_string(),
                "table_size" => p.table_size.to_string(),
                "probes" => p.probes.to_string(),
                "max_points" => p.max_points.to_string(),
                "flavor" => quoted(p.flavor.name()),
                "min_ring_size" => p.min_ring_size.to_string(),
                "max_ring_size" => p.max_ring_size.to_string(),
                "capacity" => p.capacity.to_string(),
                _ => p.num_tokens.to_string(),
            };
            let _ = writeln!(out, "{name} = {value}");
        }
        if !self.removed.is_empty() {
            let list: Vec<String> = self.removed.iter().map(u32::to_string).collect();
            out.push_str(
                "# Buckets whose node left, in the order they left (a join takes the last\n\
                 # back first); the [[nodes]] below fill the other buckets, in order.\n",
            );
            let _ = writeln!(out, "removed = [{}]", list.join(", "));
        }
        // Each node's bucket, as a comment, when holes make it unobvious.
        let total = self.nodes.len() + self.removed.len();
        let mask = removals::working_mask(&self.removed, total);
        let mut buckets = (0..total).filter(|&b| mask[b]);
        for node in self.join_order() {
            let _ = write!(out, "\n[[nodes]]\nname = {}", quoted(&node.name));
            match buckets.next() {
                Some(bucket) if !self.removed.is_empty() => {
                    let _ = writeln!(out, "  # bucket {bucket}");
                }
                _ => out.push('\n'),
            }
            if node.weight != 1.0 {
                let _ = writeln!(out, "weight = {:?}", node.weight);
            }
            if let Some(zone) = &node.zone {
                let _ = writeln!(out, "zone = {}", quoted(zone));
            }
            if let Some(given) = self.layout.get(&node.name) {
                let _ = writeln!(out, "{} = [{}]", given.field(), given_list(given));
            }
        }
        out
    }
}

/// A TOML basic string.
fn quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The values of a `points`, `tokens` or `slots` list.
fn given_list(given: &Given) -> String {
    let items: Vec<String> = match given {
        Given::Points(points) => points.iter().map(u64::to_string).collect(),
        Given::Tokens(tokens) => tokens.iter().map(i64::to_string).collect(),
        Given::Slots(ranges) => ranges
            .iter()
            .map(|r| match (r.start(), r.end()) {
                (a, b) if a == b => quoted(&a.to_string()),
                (a, b) => quoted(&format!("{a}-{b}")),
            })
            .collect(),
    };
    items.join(", ")
}

type Located = (std::ops::Range<usize>, &'static str, Error);

/// The file's `removed` list, checked against the algorithm and the
/// `working` nodes listed; each error names the entry at fault.
fn removed_of(raw: &RawCluster, algorithm: Algorithm, working: usize) -> Result<Vec<u32>, Located> {
    let Some(list) = &raw.removed else {
        return Ok(Vec::new());
    };
    let removed: Vec<u32> = list.get_ref().iter().map(|b| *b.get_ref()).collect();
    let problem = |span, message: String| {
        let e = Error::ClusterFile {
            line: None,
            field: None,
            message,
        };
        (span, "removed", e)
    };
    if !removed.is_empty() && !algorithm.reads_removed() {
        let message = format!("algorithm {algorithm} has no removed buckets: {READ_BY}");
        return Err(problem(list.span(), message));
    }
    removals::check(&removed, working).map_err(|p| {
        let entry = p.index.and_then(|i| list.get_ref().get(i));
        problem(entry.map_or(list.span(), Spanned::span), p.message)
    })?;
    Ok(removed)
}

/// The span and field of what node `name` gives by hand (or its name).
fn given_span(raw: &RawCluster, name: &str) -> Option<(std::ops::Range<usize>, &'static str)> {
    let node = raw
        .nodes
        .get_ref()
        .iter()
        .find(|n| n.name.get_ref() == name)?;
    let given = [
        node.points.as_ref().map(|p| (p.span(), "points")),
        node.tokens.as_ref().map(|t| (t.span(), "tokens")),
        node.slots.as_ref().map(|s| (s.span(), "slots")),
    ];
    given
        .into_iter()
        .flatten()
        .next()
        .or(Some((node.name.span(), "name")))
}

/// The span of the weight an `Unsupported { operation: "weigh node \"N\" W" }`
/// names.
fn weight_span(
    raw: &RawCluster,
    operation: &str,
) -> Option<(std::ops::Range<usize>, &'static str)> {
    raw.nodes.get_ref().iter().find_map(|n| {
        let named = operation.contains(&format!("{:?}", n.name.get_ref()));
        named.then(|| n.weight.as_ref().map(|w| (w.span(), "weight")))?
    })
}

fn parse_hash(raw: &RawCluster, default: StableHash) -> Result<StableHash, Located> {
    let secret = raw.secret.as_ref();
    let Some(hash) = &raw.hash else {
        return match secret {
            None => Ok(default),
            Some(s) => Err((
                s.span(),
                "secret",
                Error::InvalidSecret {
                    reason: "a secret needs `hash = \"siphash\"`; the default xxh3 is unkeyed"
                        .into(),
                },
            )),
        };
    };
    StableHash::from_name(hash.get_ref(), secret.map(|s| s.get_ref().as_str())).map_err(|e| match (
        &e, secret,
    ) {
        (Error::InvalidSecret { .. }, Some(s)) => (s.span(), "secret", e),
        _ => (hash.span(), "hash", e),
    })
}

/// TOML's messages in the words of the file: serde names the Rust types it
/// expected (`expected f64`, `expected struct RawNode`), which mean nothing
/// to someone writing a cluster file. Each is replaced by what to write.
fn plain_words(message: &str) -> String {
    const WORDS: [(&str, &str); 10] = [
        (
            "struct RawNode",
            "a [[nodes]] table (name = \"...\", weight = ...)",
        ),
        ("struct RawCluster", "a cluster table of keys and [[nodes]]"),
        ("a sequence", "a list of [[nodes]] tables"),
        ("f64", "a number"),
        ("u64", "a whole number (0 or more)"),
        ("u32", "a whole number from 0 to 4294967295"),
        ("a string", "text in quotes"),
        ("a borrowed string", "text in quotes"),
        ("string \"", "text \""),
        ("invalid type:", "wrong kind of value:"),
    ];
    let mut message = message.to_owned();
    for (rust, plain) in WORDS {
        message = message.replace(rust, plain);
    }
    message
}

/// 1-based line of a byte offset.
fn line_of(text: &str, offset: usize) -> usize {
    let end = offset.min(text.len());
    text.as_bytes()[..end]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}
