//! The nodes of a Redis Cluster as `CLUSTER NODES` or `CLUSTER SHARDS`
//! text lists them ([`RedisNode`]: id, `host:port`, role, slots), for the
//! `redis-cluster` kind (`redis_cluster.rs`) and for callers that need the
//! node ids (the CLI's reshard steps). Kept apart from the kind so that the
//! crate root can re-export it without the kind's file and the root
//! importing each other. The formats are described in `redis_cluster.rs`.
//!
//! Cost: one pass over the text, O(length).

use crate::error::ImportError;

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
    let (nodes, notes) = match first {
        Some(line) if is_shards(line) => shards(text)?,
        _ => nodes(text)?,
    };
    check_unique_ids(&nodes)?;
    Ok((nodes, notes))
}

/// Redis lists each node once (its node table is keyed by id): an id
/// listed twice is an edited or spliced text, and a reshard step naming
/// it would reach either node.
fn check_unique_ids(nodes: &[RedisNode]) -> Result<(), ImportError> {
    let mut seen: std::collections::HashMap<&str, usize> = Default::default();
    for node in nodes {
        if let Some(first) = seen.insert(&node.id, node.line) {
            return Err(ImportError::Syntax {
                line: node.line,
                message: format!(
                    "node id {} is listed twice (first on line {first}): Redis lists each \
                     node once; give the output of one CLUSTER NODES unchanged",
                    node.id
                ),
            });
        }
    }
    Ok(())
}

/// Whether the first line opens `CLUSTER SHARDS` output.
fn is_shards(line: &str) -> bool {
    leaf(line).as_deref() == Some("slots")
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
        let id = check_id(fields[0]).map_err(&syntax)?;
        let (address, hostname) = address(fields[1], line)?;
        if let Some(hostname) = hostname {
            notes.push(format!(
                "line {line}: {address} announces hostname {hostname}: the member is named \
                 by its ip:port, as -MOVED names it"
            ));
        }
        let flags: Vec<&str> = fields[2].split(',').collect();
        let master = flags.contains(&"master");
        for flag in flags
            .iter()
            .filter(|f| ["fail", "fail?", "noaddr", "handshake"].contains(f))
        {
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
            slots.push(slot_range(token).map_err(&syntax)?);
        }
        // One note per node and direction: a reshard has thousands.
        for (list, how) in [
            (&migrating, "migrating away from"),
            (&importing, "importing into"),
        ] {
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

/// `ip:port@cport[,hostname]` as `host:port`, and the hostname if any,
/// both through the crate's one address check (`address.rs`).
fn address(field: &str, line: usize) -> Result<(String, Option<String>), ImportError> {
    let (addr, hostname) = match field.split_once(',') {
        Some((addr, host)) if !host.is_empty() => (addr, Some(host.to_owned())),
        Some((addr, _)) => (addr, None),
        None => (field, None),
    };
    let addr = addr.split_once('@').map_or(addr, |(a, _)| a);
    match addr.rsplit_once(':') {
        Some((host, port)) if !host.is_empty() && port.parse::<u16>().is_ok_and(|p| p > 0) => {}
        _ => {
            return Err(ImportError::Syntax {
                line,
                message: format!(
                    "{field:?} has no address ip:port (a node without one, `:0@0`, has not \
                     joined: ask again once it has)"
                ),
            });
        }
    }
    crate::address::host_port(addr, line, "the node address")?;
    if let Some(hostname) = &hostname {
        crate::address::host(hostname, line, "the announced hostname")?;
    }
    Ok((addr.to_owned(), hostname))
}

/// `0-5460` or `10923`, each slot from 0 to 16383.
fn slot_range(token: &str) -> Result<(u16, u16), String> {
    let bad =
        || format!("{token:?} is not a slot or a range of slots such as 0-5460 (slots 0 to 16383)");
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
pub(crate) fn leaf(line: &str) -> Option<String> {
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
    Some(
        match rest.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
            Some(quoted) => quoted.replace("\\\"", "\"").replace("\\\\", "\\"),
            None => rest.to_owned(),
        },
    )
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
            let get = |k: &str| {
                fields
                    .iter()
                    .find(|(key, _)| key == k)
                    .map(|(_, v)| v.as_str())
            };
            let id = check_id(get("id").unwrap_or_default()).map_err(|m| syntax(line, m))?;
            let host = get("ip").or(get("endpoint")).unwrap_or_default();
            let port = get("port").or(get("tls-port")).unwrap_or_default();
            let (address, _) = address(&format!("{host}:{port}"), line)?;
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
