//! `--redis HOST:PORT`: the slot table of a live Redis Cluster, read from
//! its masters over plain RESP (no client crate: three commands, each a
//! bulk string reply).
//!
//! The node given is asked `CLUSTER NODES`; then every master it lists is
//! asked too, and every answer must give the same masters (ids and
//! addresses) with the same slots, or the read fails naming the first
//! difference: masters that disagree are mid-change (a reshard, a
//! failover, a node still meeting the others), and a table that is not
//! the cluster's would name wrong owners. The text is read by the
//! `redis-cluster` importer (`ringwise_import`), so a live read and a saved
//! `redis-cli cluster nodes` give the same cluster; its notes go to stderr.
//!
//! Every connection, read and write has a 5-second timeout; an unreachable
//! node is exit 69 (EX_UNAVAILABLE), a node not in cluster mode or an
//! unreadable answer 65.
//!
//! Cost: 1 + M round trips for M masters, each reply O(N) lines.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

use anyhow::anyhow;
use ringwise::ClusterSpec;
use ringwise_import::{Kind, RedisNode, redis_nodes};

use crate::Failure;

/// How long a connection, a read or a write may take.
const TIMEOUT: Duration = Duration::from_secs(5);

/// The largest reply read (`CLUSTER NODES` of 1000 nodes is about 200 KB).
const MAX_REPLY: usize = 64 << 20;

/// `--redis HOST:PORT`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct RedisArgs {
    /// A node of a live Redis Cluster (HOST:PORT): its masters are asked
    /// CLUSTER NODES over plain RESP (5 s timeouts) and must agree.
    #[arg(long, value_name = "HOST:PORT")]
    pub redis: Option<String>,
}

/// A live cluster as read: its spec and every node (ids for plan steps).
#[derive(Debug, Clone)]
pub struct Live {
    /// The cluster: its masters with slots.
    pub spec: ClusterSpec,
    /// Every node the seed listed, replicas included.
    pub nodes: Vec<RedisNode>,
}

/// A master as compared between answers: id, address, slot ranges.
type Master = (String, String, Vec<(u16, u16)>);

/// Reads the cluster `seed` belongs to (module doc). 1 + M round trips.
pub fn read(seed: &str) -> Result<Live, Failure> {
    let text = cluster_nodes(seed)?;
    let (nodes, _) = redis_nodes(&text).map_err(|e| {
        Failure::data(anyhow::Error::new(e).context(format!("--redis {seed}: CLUSTER NODES")))
    })?;
    let table = |nodes: &[RedisNode]| -> Vec<Master> {
        let mut t: Vec<_> = nodes
            .iter()
            .filter(|n| n.master)
            .map(|n| (n.id.clone(), n.address.clone(), n.slots.clone()))
            .collect();
        t.sort();
        t
    };
    let ours = table(&nodes);
    for (_, master, _) in &ours {
        let theirs_text = cluster_nodes(master)?;
        let (theirs, _) = redis_nodes(&theirs_text).map_err(|e| {
            Failure::data(
                anyhow::Error::new(e).context(format!("--redis: {master}: CLUSTER NODES")),
            )
        })?;
        let theirs = table(&theirs);
        if theirs != ours {
            let differ = ours.iter().zip(&theirs).find(|(a, b)| a != b).map_or_else(
                || format!("{} masters against {}", ours.len(), theirs.len()),
                |(a, b)| {
                    format!(
                        "{} holds {:?} by {seed}, {} holds {:?} by {master}",
                        a.1, a.2, b.1, b.2
                    )
                },
            );
            return Err(Failure::data(anyhow!(
                "--redis {seed}: the masters disagree on the slot table ({differ}): the \
                 cluster is mid-change (a reshard, a failover or a node joining); ask again \
                 once `redis-cli --cluster check {seed}` is clean"
            )));
        }
    }
    let imported = ringwise_import::import(Kind::RedisCluster, &text, None)
        .map_err(|e| Failure::data(anyhow::Error::new(e).context(format!("--redis {seed}"))))?;
    for note in &imported.notes {
        say!("ringwise: note: --redis {seed}: {note}");
    }
    let spec = imported
        .spec()
        .map_err(|e| Failure::data(anyhow::Error::new(e).context(format!("--redis {seed}"))))?;
    Ok(Live { spec, nodes })
}

/// `CLUSTER NODES` of the node at `address`.
fn cluster_nodes(address: &str) -> Result<String, Failure> {
    let unavailable = |e: std::io::Error| Failure::unavailable(anyhow!("--redis: {address}: {e}"));
    let target = address
        .to_socket_addrs()
        .map_err(|e| {
            Failure::usage(anyhow!(
                "--redis {address}: not a HOST:PORT that resolves ({e}), e.g. 10.0.0.1:6379"
            ))
        })?
        .next()
        .ok_or_else(|| Failure::usage(anyhow!("--redis {address}: resolves to no address")))?;
    let stream = TcpStream::connect_timeout(&target, TIMEOUT).map_err(unavailable)?;
    stream
        .set_read_timeout(Some(TIMEOUT))
        .map_err(unavailable)?;
    stream
        .set_write_timeout(Some(TIMEOUT))
        .map_err(unavailable)?;
    let mut writer = stream.try_clone().map_err(unavailable)?;
    writer
        .write_all(b"*2\r\n$7\r\nCLUSTER\r\n$5\r\nNODES\r\n")
        .map_err(unavailable)?;
    let reply = bulk(&mut BufReader::new(stream)).map_err(unavailable)?;
    reply.map_err(|message| {
        Failure::data(anyhow!(
            "--redis {address}: CLUSTER NODES answered {message:?}: give a node of a Redis \
             Cluster (cluster-enabled yes)"
        ))
    })
}

/// One RESP reply that should be a bulk string: its text, or the reply
/// (an error, a simple string) as the message.
fn bulk(reader: &mut impl BufRead) -> std::io::Result<Result<String, String>> {
    let mut head = String::new();
    reader.by_ref().take(1024).read_line(&mut head)?;
    let head = head.trim_end();
    let Some(length) = head.strip_prefix('$') else {
        return Ok(Err(head.trim_start_matches(['-', '+']).to_owned()));
    };
    let length = match length.parse::<usize>() {
        Ok(n) if n <= MAX_REPLY => n,
        _ => return Ok(Err(format!("a reply of length {length}"))),
    };
    let mut body = vec![0; length + 2];
    reader.read_exact(&mut body)?;
    body.truncate(length);
    Ok(String::from_utf8(body).map_err(|_| "a reply that is not UTF-8".to_owned()))
}
