//! The slot moves of a plan as a script of `redis-cli` commands with the
//! cluster's real node ids, when the cluster was read from Redis itself
//! (`--redis HOST:PORT`, or `--from FILE --cluster-format redis-cluster`,
//! a saved `CLUSTER NODES`).
//!
//! `redis-cli --cluster reshard --cluster-slots N` chooses which N slots
//! move itself (the lowest-numbered of each source), so it cannot carry
//! out this plan's slots; the script does, with the steps of the Redis
//! Cluster specification for each run of slots: `CLUSTER SETSLOT ...
//! IMPORTING` on the target, `MIGRATING` on the source, `MIGRATE` of the
//! keys of every slot that has any (`CLUSTER COUNTKEYSINSLOT`,
//! `GETKEYSINSLOT`), then `SETSLOT ... NODE` on the target, the source and
//! every other master. Commands go to each node through one `redis-cli`
//! reading them from stdin, so a run of 4096 slots costs a handful of
//! processes, not thousands; every answer is checked and the script stops
//! at the first that is not `OK`. An `--add`ed master that the cluster does
//! not know yet joins first (`redis-cli --cluster add-node`, then a wait
//! until it and every master have met), its id asked from itself
//! (`CLUSTER MYID`), and moves start once it sees every slot served; a `--remove`d one leaves last (`--cluster del-node`).
//!
//! Keys travel quoted in `MIGRATE ... KEYS "k1" "k2"` lines, one per slot,
//! grouped by `COUNTKEYSINSLOT`; `redis-cli` prints a key with a newline
//! in it over two lines, so such keys are beyond this script (the MIGRATE
//! then fails, and the script stops). The script is O(ranges + nodes)
//! lines; running it costs O(ranges × masters) redis-cli processes and one
//! command per slot and step.

use std::collections::BTreeMap;

use ringwise::Placement;

use super::Plan;

/// What a plan knows of a cluster read from Redis.
#[derive(Debug, Clone)]
pub struct RedisIds {
    /// The node the cluster was read from (`--redis`), or a master.
    pub seed: String,
    /// Node id by `host:port`, every node listed.
    pub ids: BTreeMap<String, String>,
}

impl RedisIds {
    /// The ids of the nodes of a `CLUSTER NODES` read; the seed is the
    /// node asked, or the first master.
    pub fn new(seed: Option<&str>, nodes: &[ringwise_import::RedisNode]) -> Self {
        let seed = seed
            .map(str::to_owned)
            .or_else(|| nodes.iter().find(|n| n.master).map(|n| n.address.clone()))
            .unwrap_or_default();
        RedisIds {
            seed,
            ids: nodes
                .iter()
                .map(|n| (n.address.clone(), n.id.clone()))
                .collect(),
        }
    }
}

/// Whether `name` is `host:port` that redis-cli reads as an address: a
/// host of name or IP characters not starting with `-` (redis-cli would
/// read it as an option), and a port from 1.
fn is_address(name: &str) -> bool {
    let plain = |s: &str| {
        !s.is_empty()
            && !s.starts_with('-')
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-._[]:".contains(&b))
    };
    name.rsplit_once(':')
        .is_some_and(|(host, port)| plain(host) && port.parse::<u16>().is_ok_and(|p| p > 0))
}

/// `text` as one POSIX shell word: as is when every byte is one the shell
/// gives no meaning to, else in single quotes (a `'` inside written `'\''`).
/// Every word the script takes from the cluster goes through here, so a
/// crafted address or id is data, never a command: `a$(touch x)` is
/// written `'a$(touch x)'`.
fn word(text: &str) -> String {
    let safe = !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._:@%+,/=[]".contains(&b));
    match safe {
        true => text.to_owned(),
        false => format!("'{}'", text.replace('\'', "'\\''")),
    }
}

/// The script section of the text plan (module doc).
pub fn script(plan: &Plan, redis: &RedisIds) -> String {
    let m = &plan.movement;
    let before: Vec<&str> = plan
        .old
        .placement()
        .nodes()
        .iter()
        .map(|n| n.name.as_str())
        .collect();
    let after: Vec<&str> = plan
        .new
        .placement()
        .nodes()
        .iter()
        .map(|n| n.name.as_str())
        .collect();
    let mut masters: Vec<&str> = before.iter().chain(&after).copied().collect();
    masters.sort_unstable();
    masters.dedup();
    if let Some(bad) = masters.iter().find(|n| !is_address(n)) {
        return format!(
            "\nredis-cli steps: none: {bad:?} is not a HOST:PORT redis-cli can reach; name \
             every master by its address\n"
        );
    }
    let added: Vec<&str> = after
        .iter()
        .copied()
        .filter(|n| !redis.ids.contains_key(*n))
        .collect();
    let removed: Vec<&str> = before
        .iter()
        .copied()
        .filter(|n| !after.contains(n))
        .collect();
    // A node to join by, and to remove by, that stays: the one asked when
    // it is a master of the plan, else the first that stays (the first
    // master of a saved CLUSTER NODES may serve no slots, and so be in no
    // placement and never checked above).
    let stays = masters.contains(&redis.seed.as_str()) && !removed.contains(&redis.seed.as_str());
    let seed = match !stays {
        true => after
            .iter()
            .find(|n| !added.contains(n))
            .copied()
            .unwrap_or_default(),
        false => redis.seed.as_str(),
    };
    if seed.is_empty() {
        return "\nredis-cli steps: none: no master stays in the cluster to run them through\n"
            .to_owned();
    }
    // The id of a node as a shell word: literal, or the variable an added
    // node's id is read into.
    let id = |name: &str| match added.iter().position(|&a| a == name) {
        Some(i) => format!("\"$new{}\"", i + 1),
        None => word(redis.ids.get(name).map_or("", String::as_str)),
    };
    let mut out = String::from(
        "\nredis-cli steps (a POSIX sh script from the next line to the end: save it and run \
         `sh FILE`; it stops at the first answer that is not OK):\n",
    );
    out += HEAD;
    out += &format!(
        "seed={}\nmasters={}\n",
        word(seed),
        word(&masters.join(" "))
    );
    for (i, &raw) in added.iter().enumerate() {
        let name = word(raw);
        out += &format!(
            "# {name} joins the cluster as a master without slots, and meets every master.\n\
             redis-cli --cluster add-node {name} \"$seed\" >/dev/null\n\
             new{n}=$(id_of {name})\n",
            n = i + 1
        );
        for other in masters.iter().filter(|o| **o != raw && !added.contains(o)) {
            out += &format!(
                "knows {} \"$new{n}\"\nknows {name} {}\n",
                word(other),
                id(other),
                n = i + 1
            );
        }
        out += &format!("ready {name}\n");
    }
    for name in &removed {
        // Redis 7 makes a master that loses its last slot a replica of the
        // node that took it, and a replica refuses the SETSLOT steps still
        // to come; older servers lack the setting (and the behaviour).
        out += &format!(
            "cli {} CONFIG SET cluster-allow-replica-migration no >/dev/null 2>&1 || true\n",
            word(name)
        );
    }
    for r in &m.ranges {
        let (from, to) = (m.name(r.from), m.name(r.to));
        out += &format!(
            "move {} {} {} {} {} {}\n",
            word(from),
            id(from),
            word(to),
            id(to),
            r.start,
            r.end
        );
    }
    for name in &removed {
        out += &format!(
            "# {} holds no slots now: it leaves the cluster.\n\
             redis-cli --cluster del-node \"$seed\" {} >/dev/null\n",
            word(name),
            id(name)
        );
    }
    out
}

/// The script's helpers (module doc).
const HEAD: &str = r#"#!/bin/sh
set -euf
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# cli HOST:PORT [ARGS]: redis-cli on that node (commands from stdin without ARGS).
cli() { a=$1; shift; redis-cli -h "${a%:*}" -p "${a##*:}" "$@"; }
# ok HOST:PORT: sends the commands on stdin; each must answer OK (NOKEY: a
# key deleted meanwhile).
ok() {
  out=$(cli "$1") || { echo "$1: $out" >&2; exit 1; }
  if printf '%s\n' "$out" | grep -Eqv '^(OK|NOKEY)$'; then
    printf '%s: %s\n' "$1" "$(printf '%s\n' "$out" | grep -Ev '^(OK|NOKEY)$' | head -3)" >&2
    exit 1
  fi
}
# id_of HOST:PORT: the node's id.
id_of() { cli "$1" CLUSTER MYID; }
# knows HOST:PORT ID: waits until HOST:PORT has met node ID.
knows() {
  until cli "$1" CLUSTER NODES | grep "^$2 " | grep -qv handshake; do sleep 0.1; done
}
# ready HOST:PORT: waits until HOST:PORT sees every slot served (a node
# that just met the others answers CLUSTERDOWN until it has their slots).
ready() {
  until cli "$1" CLUSTER INFO | grep -q '^cluster_state:ok'; do sleep 0.1; done
}
# move SOURCE SOURCE_ID TARGET TARGET_ID FIRST LAST: slots FIRST..LAST, one
# redis-cli per step and node, not per slot.
move() {
  seq "$5" "$6" | awk -v id="$2" '{ print "CLUSTER SETSLOT", $1, "IMPORTING", id }' | ok "$3"
  seq "$5" "$6" | awk -v id="$4" '{ print "CLUSTER SETSLOT", $1, "MIGRATING", id }' | ok "$1"
  # Until no slot of the run has keys left on the source: each slot's keys
  # in one MIGRATE (its keys quoted for redis-cli), grouped by the counts.
  while :; do
    seq "$5" "$6" | awk '{ print "CLUSTER COUNTKEYSINSLOT", $1 }' | cli "$1" |
      awk -v a="$5" '$1 > 0 { print a + NR - 1, $1 }' > "$work/counts"
    [ -s "$work/counts" ] || break
    awk '{ print "CLUSTER GETKEYSINSLOT", $1, $2 }' "$work/counts" | cli "$1" > "$work/keys"
    awk -v h="${3%:*}" -v p="${3##*:}" '
      NR == FNR { want[++n] = $2; next }
      { gsub(/\\/, "\\\\"); gsub(/"/, "\\\""); keys = keys " \"" $0 "\"" }
      ++got == want[i + 1] { i++; print "MIGRATE", h, p, "\"\"", 0, 60000, "KEYS" keys; keys = ""; got = 0 }
    ' "$work/counts" "$work/keys" | ok "$1"
  done
  for m in "$3" "$1" $masters; do
    seq "$5" "$6" | awk -v id="$4" '{ print "CLUSTER SETSLOT", $1, "NODE", id }' | ok "$m"
  done
}
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_plain_or_single_quoted() {
        assert_eq!(word("127.0.0.1:7000"), "127.0.0.1:7000");
        assert_eq!(word("[::1]:7000"), "[::1]:7000");
        assert_eq!(word("a b"), "'a b'");
        assert_eq!(word("a$(touch x)"), "'a$(touch x)'");
        assert_eq!(word("it's"), "'it'\\''s'");
        assert_eq!(word(""), "''");
        assert_eq!(word("`x`;y\nz"), "'`x`;y\nz'");
    }

    #[test]
    fn addresses_are_host_and_port() {
        assert!(is_address("127.0.0.1:7000"));
        assert!(is_address("cache-a.example:1"));
        assert!(!is_address("-x:7000"));
        assert!(!is_address("a:0"));
        assert!(!is_address("a$(b):1"));
        assert!(!is_address("a b:1"));
        assert!(!is_address("a:70000"));
    }
}
