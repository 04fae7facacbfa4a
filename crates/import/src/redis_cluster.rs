//! `redis-cluster`: a Redis Cluster's slot table as `CLUSTER NODES` (or
//! `CLUSTER SHARDS`) prints it, e.g. `redis-cli -h HOST cluster nodes >
//! nodes.txt`; `ringwise lookup --redis HOST:PORT` reads the same text from
//! a live node.
//!
//! Source: the `CLUSTER NODES` and `CLUSTER SHARDS` pages of the Redis
//! documentation, and `clusterGenNodeDescription` / `addShardReplyForClusterShards`
//! in `redis/redis src/cluster_legacy.c` (Redis 7).
//!
//! How Redis routes: each of the 16384 slots is served by the master that
//! lists it; replicas (`slave` / `replica` role) serve no slots of their own.
//! So a member is a master, named by its `host:port` (what clients reach
//! and what `-MOVED` names; a `,hostname` after the address is kept as a
//! note), with the slots it lists (`0-5460`, `10923`). Its node id (the
//! first column) is kept in [`RedisNode`] for the steps of a reshard
//! ([`redis_nodes`]). What does not change placement is noted: replicas
//! (with their master), a master with no slots, `fail`/`pfail` flags, and
//! slots mid-migration (`[5461->-ID]` migrating, `[5461-<-ID]` importing),
//! which stay with the master that lists them as owned until the migration
//! ends (during it Redis answers `-ASK` for keys already moved).
//!
//! `CLUSTER SHARDS` is read as `redis-cli` prints it, at a terminal (`1) 1)
//! "slots"`, `(integer) 0`) or not (one value a line): each shard's `slots`
//! pairs and its nodes' `id`, `ip` or `endpoint`, `port` and `role`.
//!
//! Worked example: the line `3c5e... 10.0.2.1:6379@16379 myself,master - 0
//! 0 1 connected 0-5460 10923` is the member `10.0.2.1:6379` with slots
//! `0-5460` and `10923`.
//!
//! Cost: one pass over the text, O(length).

use ringwise::{Member, Settings, SlotRange};

use crate::{ImportError, Imported};

/// A node of the cluster as the text lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RedisNode {
    /// The 40-hex-digit node id.
    pub id: String,
    /// `host:port`, the member's name.
    pub address: String,
    /// A master (serves slots), not a replica.
    pub master: bool,
    /// Its slot ranges, inclusive, as listed (masters only).
    pub slots: Vec<(u16, u16)>,
    /// The line it came from (1-based).
    pub line: usize,
}

/// Every node of a `CLUSTER NODES` or `CLUSTER SHARDS` text, in text order,
/// and the notes on what does not change placement. O(length).
pub fn redis_nodes(text: &str) -> Result<(Vec<RedisNode>, Vec<String>), ImportError> {
    let first = text.lines().map(str::trim).find(|l| !l.is_empty());
    match first {
        Some(line) if is_shards(line) => shards(text),
        _ => nodes(text),
    }
}

/// Whether the first line opens `CLUSTER SHARDS` output.
fn is_shards(line: &str) -> bool {
    leaf(line).as_deref() == Some("slots")
}

pub(crate) fn read(text: &str, _: Option<&str>) -> Result<Imported, ImportError> {
    let (nodes, mut notes) = redis_nodes(text)?;
    let mut settings = Settings::default();
    settings.algorithm = Some("slots".into());
    let mut imported = Imported::new(settings);
    for node in nodes.iter().filter(|n| n.master) {
        if node.slots.is_empty() {
            notes.push(format!(
                "line {}: master {} ({}) serves no slots: left out (`plan --add {}` \
                 gives it some)",
                node.line, node.address, node.id, node.address
            ));
            continue;
        }
        let mut member = Member::new(node.address.clone());
        member.slots = Some(
            node.slots
                .iter()
                .map(|&(a, b)| match a == b {
                    true => SlotRange::One(a),
                    false => SlotRange::Text(format!("{a}-{b}")),
                })
                .collect(),
        );
        imported.push(member, node.line);
    }
    if imported.members.is_empty() {
        return Err(ImportError::Missing {
            message: "no master with slots: give the output of `redis-cli -h HOST -p PORT \
                      cluster nodes` (or `cluster shards`) of a cluster whose slots are \
                      assigned"
                .into(),
        });
    }
    imported.notes = notes;
    Ok(imported)
}

/// `CLUSTER NODES`: one node a line, `id addr flags master ping pong epoch
/// link slot...`.
fn nodes(text: &str) -> Result<(Vec<RedisNode>, Vec<String>), ImportError> {
    let mut nodes = Vec::new();
    let mut notes = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let fields: Vec<&str> = raw.split_whitespace().collect();
        if fields.is_empty() {
            continue;
        }
        let syntax = |message: String| ImportError::Syntax { line, message };
        if fields.len() < 8 {
            return Err(syntax(format!(
                "{} fields where CLUSTER NODES writes at least 8 (id ip:port@cport flags \
                 master ping-sent pong-recv config-epoch link-state [slot ...]): give the \
                 output of `redis-cli cluster nodes` unchanged",
                fields.len()
            )));
        }
        let id = check_id(fields[0]).map_err(|m| syntax(m))?;
        let (address, hostname) = address(fields[1]).map_err(|m| syntax(m))?;
        if let Some(hostname) = hostname {
            notes.push(format!(
                "line {line}: {address} announces hostname {hostname}: the member is named \
                 by its ip:port, as -MOVED names it"
            ));
        }
        let flags: Vec<&str> = fields[2].split(',').collect();
        let master = flags.contains(&"master");
        for flag in flags.iter().filter(|f| ["fail", "fail?", "noaddr", "handshake"].contains(f)) {
            notes.push(format!(
                "line {line}: {address} is flagged {flag}: placement is the table as listed"
            ));
        }
        let mut slots = Vec::new();
        let (mut migrating, mut importing) = (Vec::new(), Vec::new());
        for token in &fields[8..] {
            // `[slot->-id]` migrating to id, `[slot-<-id]` importing from it.
            if let Some(inner) = token.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
                match inner.split_once("->-") {
                    Some((slot, _)) => migrating.push(slot.to_owned()),
                    None => importing.push(inner.split("-<-").next().unwrap_or("").to_owned()),
                }
                continue;
            }
            slots.push(slot_range(token).map_err(|m| syntax(m))?);
        }
        // One note per node and direction: a reshard has thousands.
        for (list, how) in [(&migrating, "migrating away from"), (&importing, "importing into")] {
            if !list.is_empty() {
                let shown: Vec<&str> = list.iter().take(5).map(String::as_str).collect();
                let more = if list.len() > 5 { ", ..." } else { "" };
                notes.push(format!(
                    "line {line}: {} slots mid-migration, {how} {address} ({}{more}): each stays \
                     with the master that lists it as owned until the migration ends (Redis \
                     answers -ASK for keys already moved)",
                    list.len(),
                    shown.join(", ")
                ));
            }
        }
        if !master {
            notes.push(format!(
                "line {line}: {address} is a replica of {}: replicas serve no slots",
                fields[3]
            ));
            if !slots.is_empty() {
                return Err(syntax(format!(
                    "{address} is a replica but lists slots: only masters serve slots"
                )));
            }
        }
        nodes.push(RedisNode {
            id,
            address,
            master,
            slots,
            line,
        });
    }
    Ok((nodes, notes))
}

/// A node id: 40 hex digits.
fn check_id(id: &str) -> Result<String, String> {
    match id.len() == 40 && id.bytes().all(|b| b.is_ascii_hexdigit()) {
        true => Ok(id.to_owned()),
        false => Err(format!("{id:?} is not a node id (40 hex digits)")),
    }
}

/// `ip:port@cport[,hostname]` as `host:port`, and the hostname if any.
fn address(field: &str) -> Result<(String, Option<String>), String> {
    let (addr, hostname) = match field.split_once(',') {
        Some((addr, host)) if !host.is_empty() => (addr, Some(host.to_owned())),
        Some((addr, _)) => (addr, None),
        None => (field, None),
    };
    let addr = addr.split_once('@').map_or(addr, |(a, _)| a);
    match addr.rsplit_once(':') {
        Some((host, port)) if !host.is_empty() && port.parse::<u16>().is_ok_and(|p| p > 0) => {
            Ok((addr.to_owned(), hostname))
        }
        _ => Err(format!(
            "{field:?} has no address ip:port (a node without one, `:0@0`, has not joined: \
             ask again once it has)"
        )),
    }
}

/// `0-5460` or `10923`, each slot from 0 to 16383.
fn slot_range(token: &str) -> Result<(u16, u16), String> {
    let bad = || {
        format!("{token:?} is not a slot or a range of slots such as 0-5460 (slots 0 to 16383)")
    };
    let slot = |t: &str| t.parse::<u16>().ok().filter(|&s| s < 16384).ok_or_else(bad);
    let (a, b) = match token.split_once('-') {
        Some((a, b)) => (slot(a)?, slot(b)?),
        None => (slot(token)?, slot(token)?),
    };
    match a <= b {
        true => Ok((a, b)),
        false => Err(bad()),
    }
}

/// The value a `redis-cli` output line holds: without the `1) ` prefixes,
/// `(integer) ` and the quotes; `None` for an empty array or a blank line.
fn leaf(line: &str) -> Option<String> {
    let mut rest = line.trim();
    loop {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        match rest[digits..].strip_prefix(')') {
            Some(after) if digits > 0 => rest = after.trim_start(),
            _ => break,
        }
    }
    let rest = rest.strip_prefix("(integer) ").unwrap_or(rest);
    if rest.is_empty() || rest.starts_with("(empty") || rest == "(nil)" {
        return None;
    }
    Some(match rest.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
        Some(quoted) => quoted.replace("\\\"", "\"").replace("\\\\", "\\"),
        None => rest.to_owned(),
    })
}

/// `CLUSTER SHARDS` as `redis-cli` prints it (module doc).
fn shards(text: &str) -> Result<(Vec<RedisNode>, Vec<String>), ImportError> {
    let leaves: Vec<(usize, String)> = text
        .lines()
        .enumerate()
        .filter_map(|(i, l)| leaf(l).map(|v| (i + 1, v)))
        .collect();
    let mut nodes = Vec::new();
    let mut notes = Vec::new();
    let mut at = 0;
    while at < leaves.len() {
        let (line, word) = &leaves[at];
        let syntax = |line: usize, message: String| ImportError::Syntax { line, message };
        if word != "slots" {
            return Err(syntax(
                *line,
                format!("{word:?} where a shard's \"slots\" was expected (CLUSTER SHARDS)"),
            ));
        }
        at += 1;
        let mut slots = Vec::new();
        while at + 1 < leaves.len() && leaves[at].1 != "nodes" {
            let range = format!("{}-{}", leaves[at].1, leaves[at + 1].1);
            slots.push(slot_range(&range).map_err(|m| syntax(leaves[at].0, m))?);
            at += 2;
        }
        if leaves.get(at).map(|l| l.1.as_str()) != Some("nodes") {
            return Err(syntax(*line, "a shard without its \"nodes\"".into()));
        }
        at += 1;
        // The shard's nodes: key, value pairs; each node starts at `id`.
        let mut shard: Vec<(usize, Vec<(String, String)>)> = Vec::new();
        while at + 1 < leaves.len() && leaves[at].1 != "slots" {
            let (key, value) = (&leaves[at].1, &leaves[at + 1].1);
            if key == "id" {
                shard.push((leaves[at].0, Vec::new()));
            }
            match shard.last_mut() {
                Some((_, fields)) => fields.push((key.clone(), value.clone())),
                None => {
                    return Err(syntax(
                        leaves[at].0,
                        format!("{key:?} before a node's \"id\" (CLUSTER SHARDS)"),
                    ));
                }
            }
            at += 2;
        }
        for (line, fields) in shard {
            let get = |k: &str| fields.iter().find(|(key, _)| key == k).map(|(_, v)| v.as_str());
            let id = check_id(get("id").unwrap_or_default()).map_err(|m| syntax(line, m))?;
            let host = get("ip").or(get("endpoint")).unwrap_or_default();
            let port = get("port").or(get("tls-port")).unwrap_or_default();
            let (address, _) = address(&format!("{host}:{port}")).map_err(|m| syntax(line, m))?;
            let master = get("role") == Some("master");
            if get("health").is_some_and(|h| h != "online") {
                notes.push(format!(
                    "line {line}: {address} health {}: placement is the table as listed",
                    get("health").unwrap_or_default()
                ));
            }
            if !master {
                notes.push(format!(
                    "line {line}: {address} is a replica: replicas serve no slots"
                ));
            }
            nodes.push(RedisNode {
                id,
                address,
                master,
                slots: if master { slots.clone() } else { Vec::new() },
                line,
            });
        }
    }
    Ok((nodes, notes))
}

#[cfg(test)]
mod tests {
    use super::*;

    const NODES: &str = "\
3c5e1f0b9a8d7c6e5f4a3b2c1d0e9f8a7b6c5d4e 10.0.2.1:6379@16379 myself,master - 0 0 1 connected 0-5460 10923 [5461->-8f1e2d3c4b5a69788796a5b4c3d2e1f0a9b8c7d6]
8f1e2d3c4b5a69788796a5b4c3d2e1f0a9b8c7d6 10.0.2.2:6379@16379,redis-b master - 0 1733050000000 2 connected 5461-10922
b7a6c5d4e3f2019283746556473829101a2b3c4d 10.0.2.3:6379@16379 master - 0 1733050000500 3 connected 10924-16383
0a1b2c3d4e5f60718293a4b5c6d7e8f901234567 10.0.2.11:6379@16379 slave 3c5e1f0b9a8d7c6e5f4a3b2c1d0e9f8a7b6c5d4e 0 1733050000100 1 connected
";

    #[test]
    fn masters_with_their_slots_replicas_noted() {
        let imported = read(NODES, None).expect("valid");
        let names: Vec<&str> = imported.members.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["10.0.2.1:6379", "10.0.2.2:6379", "10.0.2.3:6379"]);
        assert_eq!(imported.member_lines, [1, 2, 3]);
        let notes = imported.notes.join("\n");
        assert!(notes.contains("mid-migration"), "{notes}");
        assert!(notes.contains("replica of 3c5e"), "{notes}");
        assert!(notes.contains("hostname redis-b"), "{notes}");
        let (nodes, _) = redis_nodes(NODES).expect("valid");
        assert_eq!(nodes[0].slots, [(0, 5460), (10923, 10923)]);
        assert_eq!(nodes[0].id, "3c5e1f0b9a8d7c6e5f4a3b2c1d0e9f8a7b6c5d4e");
    }

    #[test]
    fn bad_lines_name_the_line() {
        let bad = NODES.replace("10924-16383", "10924-16384");
        let e = read(&bad, None).expect_err("slot 16384");
        assert!(matches!(e, ImportError::Syntax { line: 3, .. }), "{e:?}");
        let e = read("abc 1.2.3.4:1@2 master - 0 0 1 connected 0-16383", None).expect_err("id");
        assert!(e.to_string().contains("node id"), "{e}");
    }

    #[test]
    fn shards_as_redis_cli_prints_them() {
        let tty = "\
1) 1) \"slots\"
   2) 1) (integer) 0
      2) (integer) 16383
   3) \"nodes\"
   4) 1)  1) \"id\"
          2) \"3c5e1f0b9a8d7c6e5f4a3b2c1d0e9f8a7b6c5d4e\"
          3) \"port\"
          4) (integer) 7000
          5) \"ip\"
          6) \"127.0.0.1\"
          7) \"endpoint\"
          8) \"127.0.0.1\"
          9) \"role\"
         10) \"master\"
         11) \"replication-offset\"
         12) (integer) 0
         13) \"health\"
         14) \"online\"
";
        let imported = read(tty, None).expect("valid");
        assert_eq!(imported.members.len(), 1);
        assert_eq!(imported.members[0].name, "127.0.0.1:7000");
        let flat: String = tty.lines().filter_map(leaf).map(|l| l + "\n").collect();
        assert_eq!(read(&flat, None).expect("valid").members, imported.members);
    }
}
