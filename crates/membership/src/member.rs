//! What lives under a prefix, and how it becomes a ring.
//!
//! ```text
//! PREFIX/config        {"algorithm": "ring", "vnodes": 160, ...}   (optional)
//! PREFIX/nodes/cache-a {"weight": 2, "zone": "eu-1a", "address": "10.0.0.7:11211",
//!                       "metadata": {...}}                          (one per member)
//! ```
//!
//! `config` holds the top-level keys of a cluster file (`algorithm`, `hash`,
//! `vnodes`, `table_size`, `flavor`, `secret`, `epsilon`, ...) as a JSON
//! object; a member holds the keys of a `[[nodes]]` table (`weight`, `zone`,
//! `points`, `tokens`, `slots`) plus `address` and `metadata`, which
//! placement ignores. Both become the parts of `ClusterSpec::from_parts`,
//! the one entrance the cluster file's reader uses too, so a live cluster
//! accepts exactly what a file does, with the same checks and defaults; a
//! refused part names the member (or the config key) at fault, so the
//! member is left out without any text being written and parsed again.
//!
//! Members are listed in join order: by the version (etcd revision, ZooKeeper zxid) that created
//! their key, then by name. Every client reading the same revision lists
//! them alike, which is what jump, memento and the list-order flavours
//! need; a member that leaves and comes back joins at the end.
//!
//! Both values are JSON objects, read field by field: an array, a number,
//! text or null is refused with what it is (serde's derived reader would
//! read an array by position), a field of the wrong type with its name.
//!
//! A bad value never empties the ring: a member whose JSON or fields are
//! invalid is left out (and reported under its key, with the field at fault,
//! never a line of a file), and so is a member valid in itself whose points
//! the settings cannot build with the others (past the point budget alone,
//! or the heaviest of members past it together: the rule of `fit.rs`, the
//! same on every client); a bad `config` keeps the ring the watcher
//! already holds, and a read refuses it. A config is bad too when it
//! cannot build a member written before it that is valid in itself: it
//! would drop members already in the ring (see [`Contents::spec`]).

use std::collections::BTreeMap;

use ringwise::{Param, ParamValue, Params, Part, Settings};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::Error;
use crate::fit::{self, message};

/// The key of the cluster's configuration under `prefix`.
pub fn config_key(prefix: &str) -> String {
    format!("{}/config", prefix.trim_end_matches('/'))
}

/// The prefix of the members' keys under `prefix`.
pub fn nodes_prefix(prefix: &str) -> String {
    format!("{}/nodes/", prefix.trim_end_matches('/'))
}

/// The key of member `name` under `prefix`.
pub fn node_key(prefix: &str, name: &str) -> String {
    format!("{}{name}", nodes_prefix(prefix))
}

/// A member's value: a `[[nodes]]` table of a cluster file, without the
/// name (the key holds it), plus where to reach it.
///
/// Read only from a JSON object of these fields ([`Member::from_json`],
/// and `Deserialize`, which goes through it): serde's derived reader would
/// also take an array and read it by position (`[7.5, "zone-q",
/// "10.0.0.9:1"]` as weight, zone and address), a value that is not what
/// it seems.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Member {
    /// Relative capacity (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight: Option<f64>,
    /// Failure domain, for zone-aware replicas.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zone: Option<String>,
    /// Where clients reach the node (`host:port`); placement ignores it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    /// Free-form data for the application; placement ignores it.
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub metadata: serde_json::Map<String, serde_json::Value>,
    /// Ring points, tokens or slots fixed by hand, as in a cluster file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub points: Option<Vec<u64>>,
    /// Cassandra tokens, as in a cluster file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<Vec<i64>>,
    /// Redis Cluster slots, as in a cluster file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slots: Option<Vec<serde_json::Value>>,
}

impl Member {
    /// Reads a member's stored value; `key` names it in errors. Only a
    /// JSON object of the known fields, each of its type, is a member: an
    /// array, a number, text or null is refused, with what it is.
    pub fn from_json(key: &str, value: &[u8]) -> Result<Self, Error> {
        let bad = |message: String| Error::InvalidValue {
            key: key.to_owned(),
            message,
        };
        let json: Value = serde_json::from_slice(value)
            .map_err(|e| bad(format!("not JSON ({e} of the value); {MEMBER}")))?;
        Member::from_value(&json).map_err(bad)
    }

    /// A member from a JSON value; the error names the field at fault.
    pub fn from_value(json: &Value) -> Result<Self, String> {
        let Value::Object(object) = json else {
            return Err(format!(
                "{} where a JSON object is expected: {MEMBER}",
                shown(json)
            ));
        };
        let mut member = Member::default();
        for (field, value) in object {
            let wrong = |expected: &str| {
                format!("field `{field}`: expected {expected}, not {}", shown(value))
            };
            let text = || {
                value
                    .as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| wrong("text"))
            };
            let list = |expected: &str| value.as_array().ok_or_else(|| wrong(expected));
            match field.as_str() {
                "weight" => member.weight = Some(value.as_f64().ok_or_else(|| wrong("a number"))?),
                "zone" => member.zone = Some(text()?),
                "address" => member.address = Some(text()?),
                "metadata" => {
                    let object = value.as_object().ok_or_else(|| wrong("a JSON object"))?;
                    member.metadata = object.clone();
                }
                "points" => {
                    let expected = "a list of ring points (whole numbers from 0 to 2^64 - 1)";
                    let points = list(expected)?
                        .iter()
                        .map(|p| p.as_u64().ok_or_else(|| wrong(expected)));
                    member.points = Some(points.collect::<Result<_, _>>()?);
                }
                "tokens" => {
                    let expected = "a list of tokens (whole numbers from -2^63 to 2^63 - 1)";
                    let tokens = list(expected)?
                        .iter()
                        .map(|t| t.as_i64().ok_or_else(|| wrong(expected)));
                    member.tokens = Some(tokens.collect::<Result<_, _>>()?);
                }
                "slots" => {
                    let expected = "a list of slots and ranges such as [\"0-5460\", 12000]";
                    member.slots = Some(list(expected)?.clone());
                }
                other => {
                    return Err(format!("unknown field `{other}`: {MEMBER}"));
                }
            }
        }
        Ok(member)
    }

    /// The value to store.
    pub fn to_json(&self) -> String {
        // A struct of strings, numbers and JSON values always serializes.
        serde_json::to_string(self).unwrap_or_default()
    }

    /// This member as a part of a description, named `name`.
    fn part(&self, name: &str) -> Result<ringwise::Member, String> {
        let slot = |value: &serde_json::Value| match value {
            serde_json::Value::String(text) => Ok(ringwise::SlotRange::Text(text.clone())),
            value => value
                .as_u64()
                .and_then(|n| u16::try_from(n).ok())
                .map(ringwise::SlotRange::One)
                .ok_or_else(|| {
                    format!(
                        "field `slots`: {value} is not a slot or a range of slots such as \
                         \"0-5460\" or 12000"
                    )
                }),
        };
        let mut member = ringwise::Member::new(name);
        member.weight = self.weight;
        member.zone = self.zone.clone();
        member.points = self.points.clone();
        member.tokens = self.tokens.clone();
        member.slots = match &self.slots {
            Some(slots) => Some(slots.iter().map(slot).collect::<Result<_, _>>()?),
            None => None,
        };
        Ok(member)
    }
}

impl<'de> Deserialize<'de> for Member {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let json = Value::deserialize(deserializer)?;
        Member::from_value(&json).map_err(serde::de::Error::custom)
    }
}

/// What a member's value is, for the errors.
const MEMBER: &str = "a member is a JSON object of weight, zone, address, metadata, points, \
                      tokens and slots, e.g. {\"weight\": 2, \"zone\": \"eu-1a\"}";

/// A JSON value as an error shows it: what it is, and itself when short.
pub fn shown(value: &Value) -> String {
    let kind = match value {
        Value::Null => return "null".into(),
        Value::Bool(_) => "true/false",
        Value::Number(_) => "a number",
        Value::String(_) => "text",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    };
    let text = value.to_string();
    if text.chars().count() <= 60 {
        format!("{kind} ({text})")
    } else {
        let head: String = text.chars().take(57).collect();
        format!("{kind} ({head}...)")
    }
}

pub use crate::fit::Described;

/// One member as read at a revision.
#[derive(Debug, Clone, PartialEq)]
pub struct Listed {
    /// The node's name (the key's last part).
    pub name: String,
    /// Its key.
    pub key: String,
    /// Its value.
    pub member: Member,
    /// The version (etcd revision, zxid) that created its key: its place in join order.
    pub created: i64,
}

/// The cluster as read from the prefix: the configuration and the members
/// in join order, with what had to be left out.
#[derive(Debug, Clone, Default)]
pub struct Contents {
    /// The cluster's prefix, without a trailing slash.
    prefix: String,
    /// The configuration's JSON text (`None`: defaults).
    pub config: Option<Vec<u8>>,
    /// The version that last wrote the configuration (`None`: no
    /// configuration).
    pub config_written: Option<i64>,
    /// Valid members by key.
    members: BTreeMap<String, Listed>,
    /// The version that last wrote each member's value (valid or
    /// not), by key.
    written: BTreeMap<String, i64>,
    /// Keys left out, with why.
    pub skipped: BTreeMap<String, String>,
}

impl Contents {
    /// Nothing yet, under `prefix`.
    pub fn new(prefix: &str) -> Self {
        Contents {
            prefix: prefix.trim_end_matches('/').to_owned(),
            ..Contents::default()
        }
    }

    /// The prefix of the members' keys, with its trailing `/`.
    pub fn nodes_prefix(&self) -> String {
        nodes_prefix(&self.prefix)
    }

    /// Applies a put of `key` (created at revision `created`, written at
    /// revision `written`). Keys outside the layout are ignored.
    pub fn put(&mut self, key: &str, value: &[u8], created: i64, written: i64) {
        let prefix = self.prefix.as_str();
        if key == config_key(prefix) {
            self.config = Some(value.to_vec());
            self.config_written = Some(written);
            return;
        }
        let Some(name) = key.strip_prefix(&nodes_prefix(prefix)) else {
            return;
        };
        self.skipped.remove(key);
        self.members.remove(key);
        self.written.insert(key.to_owned(), written);
        match Member::from_json(key, value) {
            Ok(member) => {
                let listed = Listed {
                    name: name.to_owned(),
                    key: key.to_owned(),
                    member,
                    created,
                };
                self.members.insert(key.to_owned(), listed);
            }
            Err(e) => {
                let why = match e {
                    Error::InvalidValue { message, .. } => message,
                    e => e.to_string(),
                };
                tracing::error!("member {key}: {why}; left out of the ring");
                self.skipped.insert(key.to_owned(), why);
            }
        }
    }

    /// Applies a delete of `key`.
    pub fn delete(&mut self, key: &str) {
        if key == config_key(&self.prefix) {
            self.config = None;
            self.config_written = None;
        }
        self.members.remove(key);
        self.skipped.remove(key);
        self.written.remove(key);
    }

    /// The valid members in join order.
    pub fn members(&self) -> Vec<&Listed> {
        let mut members: Vec<&Listed> = self.members.values().collect();
        members.sort_by(|a, b| (a.created, &a.name).cmp(&(b.created, &b.name)));
        members
    }

    /// The cluster description (`None` when there is no member left) and
    /// the members it holds, in join order. A member the description
    /// refuses (a bad weight, a token another member holds) is left out
    /// and recorded in `skipped`, as is a member whose points the
    /// settings cannot build with the others (`fit`: past the point budget
    /// alone, or the heaviest first when together they pass it); a bad
    /// config is an error (the caller
    /// keeps its ring). The placement built to validate the description
    /// comes with it, so nobody builds it twice. Cost: one parse and build
    /// per member left out, so one for a valid cluster.
    ///
    /// A config is bad, too, when it refuses a member that was there
    /// before it (written at a lower revision) and is valid in itself (it
    /// builds alone, with the defaults of its kind: see `valid_alone`):
    /// such a config does not describe the members, it drops them (jump
    /// written over weighted members left out 647 of 1,180). The rule
    /// looks only at what the source holds at the version, so every client at
    /// one revision judges alike, whatever it held before. A member
    /// written after the config, or invalid in itself, is the member's
    /// fault: left out.
    pub fn spec(&mut self) -> Result<(Option<Described>, Vec<Listed>), Error> {
        let settings = self.settings()?;
        // A member refused last time (a token another member held) is
        // judged again: it may fit now.
        for key in self.members.keys() {
            self.skipped.remove(key);
        }
        let mut members: Vec<Listed> = self.members().into_iter().cloned().collect();
        loop {
            if members.is_empty() {
                return Ok((None, members));
            }
            let mut left_out = match refused(&settings, &members)? {
                Ok(described) => return Ok((Some(described), members)),
                Err(left_out) => left_out,
            };
            // A member the config refuses that was there before it: the
            // config's fault, named by the first such in the rule's order.
            for (index, message) in &left_out {
                let listed = &members[*index];
                if self.dropped_by_config(listed) {
                    return Err(Error::InvalidValue {
                        key: "config".into(),
                        message: format!(
                            "it cannot build member {} ({message}), which was there before \
                             the config was written and is valid in itself: a config must \
                             build the members already in the ring; change the config back, \
                             or change or remove the members first",
                            listed.key
                        ),
                    });
                }
            }
            // Leave them out and try again: each member at most once.
            left_out.sort_by_key(|(index, _)| std::cmp::Reverse(*index));
            for (index, message) in left_out {
                let listed = members.remove(index);
                tracing::error!("member {}: {message}; left out of the ring", listed.key);
                self.skipped.insert(listed.key, message);
            }
        }
    }

    /// Why `member`, named `name`, would be left out under this config
    /// alone (`None`: it would not), without logging or recording it; the
    /// config's error when the config is bad. One build of the member.
    pub(crate) fn refusal(&self, name: &str, member: &Member) -> Result<Option<String>, Error> {
        let settings = self.settings()?;
        let listed = Listed {
            name: name.to_owned(),
            key: node_key(&self.prefix, name),
            member: member.clone(),
            created: 0,
        };
        Ok(match refused(&settings, std::slice::from_ref(&listed))? {
            Ok(_) => None,
            Err(mut left_out) => left_out.pop().map(|(_, why)| why),
        })
    }

    /// Whether the config is to blame for refusing `listed`: the member
    /// was written before the config, and is valid in itself.
    fn dropped_by_config(&self, listed: &Listed) -> bool {
        let Some(config) = self.config_written else {
            return false;
        };
        let written = self.written.get(&listed.key).copied().unwrap_or(i64::MAX);
        written < config && valid_alone(listed)
    }

    /// The configuration as the settings of a description: the top-level
    /// keys of a cluster file, parameters by the names of the list.
    fn settings(&self) -> Result<Settings, Error> {
        let Some(config) = &self.config else {
            return Ok(Settings::default());
        };
        let bad = |message: String| Error::InvalidValue {
            key: "config".into(),
            message,
        };
        let json: serde_json::Value =
            serde_json::from_slice(config).map_err(|e| bad(format!("not JSON: {e}")))?;
        let Some(object) = json.as_object() else {
            return Err(bad(format!(
                "{} where a JSON object of cluster-file settings is expected (algorithm, hash, \
                 vnodes, ...), e.g. {{\"algorithm\": \"jump\"}}",
                shown(&json)
            )));
        };
        if object.contains_key("nodes") {
            return Err(bad(
                "`nodes` is not a setting: members register under nodes/ (ringwise join)".into(),
            ));
        }
        let mut settings = Settings::default();
        for (key, value) in object {
            let wrong = |expected: &str| {
                // Never quote a secret's value, even a malformed one: it
                // reaches `watch`'s warnings and the logs.
                let given = match key.as_str() {
                    "secret" => "something else (the value is not shown)".to_owned(),
                    _ => shown(value),
                };
                bad(format!("`{key}`: expected {expected}, not {given}"))
            };
            let text = || {
                value
                    .as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| wrong("text"))
            };
            match key.as_str() {
                "algorithm" => settings.algorithm = Some(text()?),
                "hash" => settings.hash = Some(text()?),
                "secret" => settings.secret = Some(text()?),
                "hash_tag" => settings.hash_tag = Some(text()?),
                "epsilon" => {
                    settings.epsilon = Some(value.as_f64().ok_or_else(|| wrong("a number"))?)
                }
                "removed" => {
                    let removed = serde_json::from_value(value.clone());
                    settings.removed =
                        Some(removed.map_err(|_| wrong("a list of bucket numbers"))?);
                }
                name => {
                    let param = name.parse::<Param>().map_err(|_| {
                        bad(format!(
                            "unknown key `{name}`: expected one of algorithm, hash, secret, \
                             hash_tag, epsilon, removed, {}",
                            Params::NAMES.join(", ")
                        ))
                    })?;
                    let value = match value {
                        serde_json::Value::String(text) => param.parse(text),
                        serde_json::Value::Bool(on) => Ok(ParamValue::Bool(*on)),
                        value => match value.as_u64() {
                            Some(n) => Ok(ParamValue::Count(n)),
                            None => return Err(wrong(param.expected())),
                        },
                    };
                    let value = value.map_err(|e| bad(format!("`{name}`: {e}")))?;
                    settings.params.push((param, value));
                }
            }
        }
        Ok(settings)
    }
}

/// The description of `members` under `settings`, built; or the members
/// it leaves out (indices, each with why: a field refused, or points the
/// settings cannot build with the others, [`crate::fit`]); or the config's
/// error when the fault is not a member's. One from_parts and one build
/// when the members fit.
fn refused(
    settings: &Settings,
    members: &[Listed],
) -> Result<Result<Described, Vec<(usize, String)>>, Error> {
    let mut parts = Vec::with_capacity(members.len());
    for (i, listed) in members.iter().enumerate() {
        match listed.member.part(&listed.name) {
            Ok(part) => parts.push(part),
            Err(message) => return Ok(Err(vec![(i, message)])),
        }
    }
    let (part, error) = match fit::build(settings, &parts) {
        Ok(described) => return Ok(Ok(described)),
        Err(refused) => refused,
    };
    match part {
        Part::Member { index, field } => {
            let member = &members[index].member;
            // "points, tokens or slots" names the one the member gives.
            let key = match field {
                ringwise::MemberField::Given if member.tokens.is_some() => "tokens",
                ringwise::MemberField::Given if member.slots.is_some() => "slots",
                ringwise::MemberField::Given if member.points.is_some() => "points",
                field => field.key(),
            };
            let why = format!("field `{key}`: {}", message(&error));
            Ok(Err(vec![(index, why)]))
        }
        part => match fit::left_out(settings, &parts, part, &error) {
            left_out if !left_out.is_empty() => Ok(Err(left_out)),
            _ => Err(Error::InvalidValue {
                key: "config".into(),
                message: format!("`{}`: {}", part.key(), message(&error)),
            }),
        },
    }
}

/// Whether `listed` is a valid member in itself: it builds alone under
/// the default settings of its kind (cassandra for tokens, slots for
/// slots, ring otherwise, which takes weights, zones and points). A bad
/// weight or zone, or points and tokens together, fail here under any
/// config. One build of one member.
fn valid_alone(listed: &Listed) -> bool {
    let Ok(part) = listed.member.part(&listed.name) else {
        return false;
    };
    let mut settings = Settings::default();
    settings.algorithm = if part.tokens.is_some() {
        Some("cassandra".into())
    } else if part.slots.is_some() {
        Some("slots".into())
    } else {
        None
    };
    fit::build(&settings, &[part]).is_ok()
}

/// A name that works as a node and as the last part of a key or path.
pub fn check_name(name: &str) -> Result<(), Error> {
    ringwise::Node::new(name).validate()?;
    if name.contains('/') {
        return Err(Error::InvalidOption {
            option: "name",
            message: format!("\"{name}\": a node name must not contain '/' (it ends a key)"),
        });
    }
    Ok(())
}
