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
//! placement ignores. The two are joined into one cluster file and read by
//! `ClusterSpec::from_toml`, so a live cluster accepts exactly what a file
//! does, with the same checks and defaults.
//!
//! Members are listed in join order: by the etcd revision that created
//! their key, then by name. Every client reading the same revision lists
//! them alike, which is what jump, memento and the list-order flavours
//! need; a member that leaves and comes back joins at the end.
//!
//! A bad value never empties the ring: a member whose JSON or fields are
//! invalid is left out (and reported); a bad `config` keeps the ring the
//! watcher already holds.

use std::collections::BTreeMap;

use ringwise::ClusterSpec;
use serde::{Deserialize, Serialize};

use crate::Error;

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
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
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
    /// Reads a member's stored value; `key` names it in errors.
    pub fn from_json(key: &str, value: &[u8]) -> Result<Self, Error> {
        serde_json::from_slice(value).map_err(|e| Error::InvalidValue {
            key: key.to_owned(),
            message: format!("not a member (JSON with weight, zone, address, metadata): {e}"),
        })
    }

    /// The value to store.
    pub fn to_json(&self) -> String {
        // A struct of strings, numbers and JSON values always serializes.
        serde_json::to_string(self).unwrap_or_default()
    }

    /// This member as a `[[nodes]]` table named `name`, in TOML text.
    /// Points are written as digits by hand: a TOML value holds an `i64`,
    /// and ring points run to 2^64 − 1 (the file reader takes them as
    /// `u64`, as a hand-written file gives them).
    fn node_toml(&self, name: &str) -> Result<String, String> {
        let mut json = serde_json::to_value(self).map_err(|e| e.to_string())?;
        if let Some(object) = json.as_object_mut() {
            object.remove("address");
            object.remove("metadata");
            object.remove("points");
            object.insert("name".into(), name.into());
        }
        let table = toml::Table::try_from(json).map_err(|e| e.to_string())?;
        let mut text = "[[nodes]]\n".to_owned();
        text += &toml::to_string(&table).map_err(|e| e.to_string())?;
        if let Some(points) = &self.points {
            let digits: Vec<String> = points.iter().map(u64::to_string).collect();
            text += &format!("points = [{}]\n", digits.join(", "));
        }
        Ok(text)
    }
}

/// A validated description and the placement it builds.
pub type Described = (ClusterSpec, ringwise::Keyed<ringwise::AnyPlacement>);

/// One member as read at a revision.
#[derive(Debug, Clone, PartialEq)]
pub struct Listed {
    /// The node's name (the key's last part).
    pub name: String,
    /// Its key.
    pub key: String,
    /// Its value.
    pub member: Member,
    /// The etcd revision that created its key: its place in join order.
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
    /// Valid members by key.
    members: BTreeMap<String, Listed>,
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

    /// Applies a put of `key` (created at revision `created`). Keys
    /// outside the layout are ignored.
    pub fn put(&mut self, key: &str, value: &[u8], created: i64) {
        let prefix = self.prefix.as_str();
        if key == config_key(prefix) {
            self.config = Some(value.to_vec());
            return;
        }
        let Some(name) = key.strip_prefix(&nodes_prefix(prefix)) else {
            return;
        };
        self.skipped.remove(key);
        self.members.remove(key);
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
                tracing::error!(key, error = %e, "member skipped");
                self.skipped.insert(key.to_owned(), e.to_string());
            }
        }
    }

    /// Applies a delete of `key`.
    pub fn delete(&mut self, key: &str) {
        if key == config_key(&self.prefix) {
            self.config = None;
        }
        self.members.remove(key);
        self.skipped.remove(key);
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
    /// and recorded in `skipped`; a bad config is an error (the caller
    /// keeps its ring). The placement built to validate the description
    /// comes with it, so nobody builds it twice. Cost: one parse and build
    /// per member left out, so one for a valid cluster.
    pub fn spec(&mut self) -> Result<(Option<Described>, Vec<Listed>), Error> {
        let config = self.config_table()?;
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
            let mut text = toml::to_string(&config).map_err(|e| Error::InvalidValue {
                key: "config".into(),
                message: e.to_string(),
            })?;
            let mut bad = None;
            for (i, listed) in members.iter().enumerate() {
                match listed.member.node_toml(&listed.name) {
                    Ok(node) => text += &format!("\n{node}"),
                    Err(message) => bad = Some((i, message)),
                }
            }
            if bad.is_none() {
                match ClusterSpec::from_toml_built(&text) {
                    Ok(described) => return Ok((Some(described), members)),
                    Err(e) => bad = Some((self.blame(&members, &text, &e)?, e.to_string())),
                }
            }
            // Leave the member out and try again: at most once per member.
            let (i, message) = bad.unwrap_or_default();
            let listed = members.remove(i);
            tracing::error!(key = %listed.key, error = %message, "member left out of the ring");
            self.skipped.insert(listed.key, message);
        }
    }

    /// The configuration as the top-level table of a cluster file.
    fn config_table(&self) -> Result<toml::Table, Error> {
        let Some(config) = &self.config else {
            return Ok(toml::Table::new());
        };
        let bad = |message: String| Error::InvalidValue {
            key: "config".into(),
            message,
        };
        let json: serde_json::Value =
            serde_json::from_slice(config).map_err(|e| bad(format!("not JSON: {e}")))?;
        if !json.is_object() || json.get("nodes").is_some() {
            return Err(bad(
                "expected a JSON object of cluster-file settings (algorithm, hash, vnodes, ...) \
                 without nodes; members register under nodes/"
                    .into(),
            ));
        }
        toml::Table::try_from(json).map_err(|e| bad(e.to_string()))
    }

    /// Which member a refused description blames (by line of the joined
    /// file), or the config's error when it blames none.
    fn blame(&self, members: &[Listed], text: &str, e: &ringwise::Error) -> Result<usize, Error> {
        // An error of the member list as a whole (`field = "nodes"`, such
        // as slots nobody covers) blames no member.
        let ringwise::Error::ClusterFile {
            line: Some(line),
            field,
            ..
        } = e
        else {
            return Err(config_error(e));
        };
        if field.as_deref() == Some("nodes") {
            return Err(config_error(e));
        }
        // The joined file lists the config's keys, then one [[nodes]] table
        // per member; the table whose header precedes the line is the one.
        let lines: Vec<&str> = text.lines().take(*line).collect();
        let tables = lines.iter().filter(|l| l.trim() == "[[nodes]]").count();
        match tables.checked_sub(1) {
            Some(i) if i < members.len() => Ok(i),
            _ => Err(config_error(e)),
        }
    }
}

fn config_error(e: &ringwise::Error) -> Error {
    let message = match e {
        ringwise::Error::ClusterFile {
            field: Some(field),
            message,
            ..
        } => format!("`{field}`: {message}"),
        ringwise::Error::ClusterFile { message, .. } => message.clone(),
        other => other.to_string(),
    };
    Error::InvalidValue {
        key: "config".into(),
        message,
    }
}
