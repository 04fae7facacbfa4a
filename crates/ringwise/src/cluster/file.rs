//! Reading a [`ClusterSpec`] from TOML, with the line and field of every
//! error (feature `cluster-file`).
//!
//! How: before the TOML parser runs, `file/scan.rs` budgets the text's
//! structure. The parser then reads the top-level table, `RawCluster`,
//! whose fields are declared by expanding the one parameter list
//! (`for_each_param!`, one spanned field per entry), so a new parameter
//! is a file key with its line in errors and no edit here. The raw tables
//! become [`Settings`] and [`Member`]s for [`ClusterSpec::from_parts`],
//! the entrance every source takes; a refusal's [`Part`], or the part a
//! build error blames ([`ClusterSpec::part_of`]), is turned back into its
//! line and field. [`ClusterSpec::to_toml`] is the canonical writer that
//! [`ClusterSpec::from_toml`] reads back equal.

use std::collections::HashMap;
use std::ops::Range;

use serde::Deserialize;
use toml::Spanned;

use super::ClusterSpec;
use super::parts::{Member, MemberField, Part, Rejected, Settings, SlotRange};
use crate::AnyPlacement;
use crate::Error;
use crate::algo::Given;
use crate::algo::removals;
use crate::hash::StableHash;
use crate::layers::Keyed;
use crate::param::{Flavor, Param, ParamValue, Params, SlotLayout};

mod scan;

/// How a parameter's value is written in TOML, and read back.
trait FromToml: Sized {
    /// What the file holds.
    type Raw: for<'de> Deserialize<'de>;
    /// The value of `param`, or its error.
    fn value(param: Param, raw: &Self::Raw) -> Result<ParamValue, Error>;
}

impl FromToml for u32 {
    type Raw = u32;
    fn value(_: Param, raw: &u32) -> Result<ParamValue, Error> {
        Ok(ParamValue::Count((*raw).into()))
    }
}

impl FromToml for u64 {
    type Raw = u64;
    fn value(_: Param, raw: &u64) -> Result<ParamValue, Error> {
        Ok(ParamValue::Count(*raw))
    }
}

impl FromToml for bool {
    type Raw = bool;
    fn value(_: Param, raw: &bool) -> Result<ParamValue, Error> {
        Ok(ParamValue::Bool(*raw))
    }
}

impl FromToml for Flavor {
    type Raw = String;
    fn value(param: Param, raw: &String) -> Result<ParamValue, Error> {
        param.parse(raw)
    }
}

impl FromToml for SlotLayout {
    type Raw = String;
    fn value(param: Param, raw: &String) -> Result<ParamValue, Error> {
        param.parse(raw)
    }
}

/// Declares the file's top-level table, one field per parameter of the
/// list, each with its span.
macro_rules! raw_cluster {
    ([] $($(#[doc = $doc:literal])* $variant:ident($field:ident: $ty:ty) { $($rest:tt)* })+) => {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct RawCluster {
            algorithm: Option<Spanned<String>>,
            hash: Option<Spanned<String>>,
            $($field: Option<Spanned<<$ty as FromToml>::Raw>>,)+
            epsilon: Option<Spanned<f64>>,
            secret: Option<Spanned<String>>,
            hash_tag: Option<Spanned<String>>,
            removed: Option<Spanned<Vec<Spanned<u32>>>>,
            /// Absent in a file that names only settings: an error but
            /// for a cluster about to start ([`ClusterSpec::from_toml_new`]).
            nodes: Option<Spanned<Vec<RawNode>>>,
        }

        impl RawCluster {
            /// The parameters the file gives, in list order, or the first
            /// one whose value is wrong.
            fn params(&self) -> Result<Vec<(Param, ParamValue)>, Located> {
                let mut given = Vec::new();
                $(if let Some(raw) = &self.$field {
                    let value = <$ty as FromToml>::value(Param::$variant, raw.get_ref())
                        .map_err(|e| (raw.span(), stringify!($field), e))?;
                    given.push((Param::$variant, value));
                })+
                Ok(given)
            }

            /// Where `param` is written, if it is.
            fn param_span(&self, param: Param) -> Option<Range<usize>> {
                match param {
                    $(Param::$variant => self.$field.as_ref().map(Spanned::span),)+
                }
            }
        }
    };
}

crate::for_each_param!(raw_cluster);

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawNode {
    name: Spanned<String>,
    weight: Option<Spanned<f64>>,
    /// `rack` is the same field, as Cassandra operators call it.
    #[serde(alias = "rack")]
    zone: Option<Spanned<String>>,
    datacenter: Option<Spanned<String>>,
    id: Option<Spanned<u64>>,
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

impl RawNode {
    /// The member this table describes.
    fn member(&self) -> Member {
        let slot = |s: &RawSlots| match s {
            RawSlots::One(slot) => SlotRange::One(*slot),
            RawSlots::Text(text) => SlotRange::Text(text.clone()),
        };
        Member {
            name: self.name.get_ref().clone(),
            weight: self.weight.as_ref().map(|w| *w.get_ref()),
            zone: self.zone.as_ref().map(|z| z.get_ref().clone()),
            datacenter: self.datacenter.as_ref().map(|d| d.get_ref().clone()),
            id: self.id.as_ref().map(|i| *i.get_ref()),
            points: self.points.as_ref().map(|p| p.get_ref().clone()),
            tokens: self.tokens.as_ref().map(|t| t.get_ref().clone()),
            slots: self
                .slots
                .as_ref()
                .map(|s| s.get_ref().iter().map(slot).collect()),
        }
    }

    /// The span and name of `field`, or of the name when it is not written.
    fn span_of(&self, field: MemberField) -> (Range<usize>, &'static str) {
        let name = (self.name.span(), "name");
        match field {
            MemberField::Weight => self.weight.as_ref().map(|w| (w.span(), "weight")),
            MemberField::Zone => self.zone.as_ref().map(|z| (z.span(), "zone")),
            MemberField::Datacenter => self.datacenter.as_ref().map(|d| (d.span(), "datacenter")),
            MemberField::Given => [
                self.points.as_ref().map(|p| (p.span(), "points")),
                self.tokens.as_ref().map(|t| (t.span(), "tokens")),
                self.slots.as_ref().map(|s| (s.span(), "slots")),
            ]
            .into_iter()
            .flatten()
            .next(),
            _ => None,
        }
        .unwrap_or(name)
    }
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
    /// not build it a second time (a big maglev table was once built twice
    /// by `--cluster`). O(file + build).
    pub fn from_toml_built(text: &str) -> Result<(Self, Keyed<AnyPlacement>), Error> {
        Self::read_built(text, false)
    }

    /// [`ClusterSpec::from_toml_built`] for a cluster about to start: a
    /// file that names only its algorithm and settings, without
    /// `[[nodes]]`, is that cluster with no node yet (`plan --from` grows
    /// it with `--add`). Everything else is checked as in a file with
    /// nodes. O(file + build).
    pub fn from_toml_new(text: &str) -> Result<(Self, Keyed<AnyPlacement>), Error> {
        Self::read_built(text, true)
    }

    /// The spec read (a file without nodes allowed when `new`) and built.
    fn read_built(text: &str, new: bool) -> Result<(Self, Keyed<AnyPlacement>), Error> {
        let (spec, locate) = Self::read_toml(text, new)?;
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
        Self::read_toml(text, false).map(|(spec, _)| spec)
    }

    /// The parsed spec, and what names the line of an error its build
    /// reports.
    fn read_toml(text: &str, new: bool) -> Result<(Self, impl Fn(Error) -> Error + '_), Error> {
        let at = move |span: Range<usize>, field: &str, error: Error| {
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
        // Before parsing: the parser holds everything it reads, so the
        // file's structure is budgeted on its text first.
        scan::check(text)?;
        let raw: RawCluster = toml::from_str(text).map_err(|e| {
            let line = e.span().map(|s| line_of(text, s.start));
            // TOML's message quotes the value: never a secret's.
            match e.span().filter(|s| is_secret_line(text, s.start)) {
                Some(_) => Error::ClusterFile {
                    line,
                    field: Some("secret".into()),
                    message: "`secret` is 32 hex digits in quotes, e.g. secret = \"00ff...\" \
                              (the value given is not shown)"
                        .into(),
                },
                None => Error::ClusterFile {
                    line,
                    field: None,
                    message: plain_words(e.message().trim()),
                },
            }
        })?;
        let settings = Settings {
            algorithm: raw.algorithm.as_ref().map(|a| a.get_ref().clone()),
            hash: raw.hash.as_ref().map(|h| h.get_ref().clone()),
            secret: raw.secret.as_ref().map(|s| s.get_ref().clone()),
            hash_tag: raw.hash_tag.as_ref().map(|t| t.get_ref().clone()),
            epsilon: raw.epsilon.as_ref().map(|e| *e.get_ref()),
            params: raw.params().map_err(|(s, f, e)| at(s, f, e))?,
            removed: raw
                .removed
                .as_ref()
                .map(|r| r.get_ref().iter().map(|b| *b.get_ref()).collect()),
        };
        refuse_empty(&raw, new).map_err(|(s, f, e)| at(s, f, e))?;
        refuse_duplicates(&raw, text).map_err(|(s, f, e)| at(s, f, e))?;
        let members: Vec<Member> = raw.nodes().iter().map(RawNode::member).collect();
        let spec =
            ClusterSpec::from_parts(&settings, &members).map_err(|Rejected { part, error }| {
                let (span, field) = raw.span_of(part);
                at(span, field, error)
            })?;
        // A build error names the line of the part it blames (the table
        // size's, a node's weight or points...), from its fields.
        let blamed = spec.clone();
        let locate = move |e: Error| {
            let (span, field) = raw.span_of(blamed.part_of(&e));
            at(span, field, e)
        };
        Ok((spec, locate))
    }
}

impl RawCluster {
    /// The `[[nodes]]` tables (none when the file has none).
    fn nodes(&self) -> &[RawNode] {
        self.nodes.as_ref().map_or(&[], |n| n.get_ref().as_slice())
    }

    /// Where the node list is written; the file's start when it is not.
    fn nodes_span(&self) -> Range<usize> {
        self.nodes.as_ref().map_or(0..0, Spanned::span)
    }

    /// Where `part` is written, and its field's name; the node list when
    /// the part is not written (a default that fails the build).
    fn span_of(&self, part: Part) -> (Range<usize>, &'static str) {
        let nodes = (self.nodes_span(), "nodes");
        let top = |value: Option<Range<usize>>, field| value.map_or(nodes.clone(), |v| (v, field));
        match part {
            Part::Algorithm => top(self.algorithm.as_ref().map(Spanned::span), part.key()),
            // A hash the algorithm cannot use: the hash's line, else the
            // algorithm's.
            Part::Hash => match &self.hash {
                Some(hash) => (hash.span(), "hash"),
                None => top(self.algorithm.as_ref().map(Spanned::span), "hash"),
            },
            Part::Secret => top(self.secret.as_ref().map(Spanned::span), part.key()),
            Part::HashTag => top(self.hash_tag.as_ref().map(Spanned::span), part.key()),
            Part::Epsilon => top(self.epsilon.as_ref().map(Spanned::span), part.key()),
            Part::Param(param) => top(self.param_span(param), part.key()),
            Part::Removed(index) => {
                let list = self.removed.as_ref();
                let entry = index
                    .and_then(|i| list?.get_ref().get(i))
                    .map(Spanned::span);
                top(entry.or(list.map(Spanned::span)), part.key())
            }
            Part::Member { index, field } => match self.nodes().get(index) {
                Some(node) => node.span_of(field),
                None => nodes,
            },
            _ => nodes,
        }
    }
}

/// A file without `[[nodes]]` (with the words of a file: add a table),
/// unless `new` (a cluster about to start); `removed` with no node left is
/// refused either way.
fn refuse_empty(raw: &RawCluster, new: bool) -> Result<(), Located> {
    if !raw.nodes().is_empty() {
        return Ok(());
    }
    let problem = |message| Error::ClusterFile {
        line: None,
        field: None,
        message,
    };
    if let Some(removed) = raw.removed.as_ref().filter(|r| !r.get_ref().is_empty()) {
        let message = format!(
            "every bucket is removed: `removed` lists {} buckets and no [[nodes]] \
             table is left; list the working nodes as [[nodes]] tables",
            removed.get_ref().len()
        );
        return Err((removed.span(), "removed", problem(message)));
    }
    if new {
        return Ok(());
    }
    let message = "the cluster has no nodes: add at least one [[nodes]] table".into();
    Err((raw.nodes_span(), "nodes", problem(message)))
}

/// A name given twice, with the line of its first table. Where each name
/// starts is kept as a byte offset: its line is counted only for an error
/// (counting it for every node made parsing quadratic in the nodes).
fn refuse_duplicates(raw: &RawCluster, text: &str) -> Result<(), Located> {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for node in raw.nodes() {
        let name = &node.name;
        if let Some(first) = seen.insert(name.get_ref(), name.span().start) {
            let e = Error::ClusterFile {
                line: None,
                field: None,
                message: format!(
                    "duplicate node {:?} (first defined on line {}): every node needs a \
                     unique name",
                    name.get_ref(),
                    line_of(text, first)
                ),
            };
            return Err((name.span(), "name", e));
        }
    }
    Ok(())
}

impl ClusterSpec {
    /// The canonical cluster file of this spec, which
    /// [`ClusterSpec::from_toml`] reads back to an equal spec: the
    /// algorithm; the hash (and secret) when named or not the algorithm's
    /// default; the hash tag, epsilon and every parameter that differs from
    /// its default; `removed` (with a comment saying what it means); the
    /// nodes in listed order, each with its weight (when not 1), id, datacenter, zone and
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
        // The algorithm's own tag (redis-rb's, go-redis's) goes without
        // saying; no tag where it has one is written `""`.
        if self.hash_tag != self.algorithm.default_hash_tag() {
            let tag = self.hash_tag.map(|t| t.delimiters()).unwrap_or_default();
            let _ = writeln!(out, "hash_tag = {}", quoted(&tag));
        }
        if let Some(epsilon) = self.epsilon {
            let _ = writeln!(out, "epsilon = {epsilon:?}");
        }
        for param in p.differing(&Params::DEFAULT) {
            let value = match p.get(param) {
                ParamValue::Flavor(flavor) => quoted(flavor.name()),
                ParamValue::SlotLayout(layout) => quoted(layout.name()),
                value => value.to_string(),
            };
            let _ = writeln!(out, "{param} = {value}");
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
            if let Some(id) = node.id {
                let _ = writeln!(out, "id = {id}");
            }
            if let Some(datacenter) = &node.datacenter {
                let _ = writeln!(out, "datacenter = {}", quoted(datacenter));
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

/// An error with the span and field to blame.
type Located = (Range<usize>, &'static str, Error);

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

/// Whether the line holding byte `offset` gives the key `secret`: its
/// errors must not quote the value.
fn is_secret_line(text: &str, offset: usize) -> bool {
    let end = offset.min(text.len());
    let start = text[..end].rfind('\n').map_or(0, |i| i + 1);
    let line = text[start..].trim_start();
    let key = line
        .strip_prefix("secret")
        .or_else(|| line.strip_prefix("\"secret\""));
    key.is_some_and(|rest| rest.trim_start().starts_with('='))
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
