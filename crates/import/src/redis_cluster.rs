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
//! first column) is kept in [`crate::RedisNode`] for the steps of a reshard
//! ([`crate::redis_nodes`], `redis_nodes.rs`). What does not change placement is noted: replicas
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

use crate::redis_nodes::redis_nodes;
use crate::{ImportError, Imported};

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::redis_nodes::leaf;

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
