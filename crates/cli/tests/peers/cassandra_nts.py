"""The cassandra-driver peer of `ringwise lookup --replication`.

Usage: python cassandra_nts.py CLUSTER.toml DC=RF[,DC=RF...] < KEYS

Reads the cluster file's nodes (name, datacenter, rack or zone, tokens),
builds the driver's own NetworkTopologyStrategy replica map
(cassandra.metadata.NetworkTopologyStrategy.make_token_replica_map over
Murmur3Token tokens) and, for each text key, finds its token's replicas
as the driver's TokenMap.get_replicas does (bisect_left, wrapping).
Prints, per key: the driver's replicas, a tab, and the replicas of a
line-by-line transcription of Cassandra's NetworkTopologyStrategy
.calculateNaturalReplicas (for the order, which the driver does not keep:
it lists datacenter by datacenter and skipped-rack nodes last).
"""

import sys
import tomllib
from bisect import bisect_left

from cassandra.metadata import Murmur3Token, NetworkTopologyStrategy


class Host:
    def __init__(self, name, datacenter, rack):
        self.name, self.datacenter, self.rack = name, datacenter, rack

    def __repr__(self):
        return self.name


def cassandra_order(ring, owner, rf_map, start):
    """NetworkTopologyStrategy.calculateNaturalReplicas, transcribed."""
    hosts = set(owner.values())
    dcs = {}
    for dc, rf in rf_map.items():
        members = [h for h in hosts if h.datacenter == dc]
        racks = {h.rack for h in members}
        if rf <= 0 or not members:
            continue
        dcs[dc] = {"rf_left": min(rf, len(members)), "repeats": rf - len(racks)}
    replicas, seen_racks, to_fill = [], set(), len(dcs)
    for step in range(len(ring)):
        if to_fill == 0:
            break
        host = owner[ring[(start + step) % len(ring)]]
        state = dcs.get(host.datacenter)
        if state is None or state["rf_left"] == 0:
            continue
        location = (host.datacenter, host.rack)
        if location not in seen_racks:
            seen_racks.add(location)
            replicas.append(host)
        elif state["repeats"] <= 0 or host in replicas:
            continue
        else:
            state["repeats"] -= 1
            replicas.append(host)
        state["rf_left"] -= 1
        if state["rf_left"] == 0:
            to_fill -= 1
    return replicas


def main():
    with open(sys.argv[1], "rb") as f:
        cluster = tomllib.load(f)
    rf_map = {dc: int(rf) for dc, rf in (p.split("=") for p in sys.argv[2].split(","))}
    owner = {}
    for node in cluster["nodes"]:
        host = Host(node["name"], node["datacenter"], node.get("rack", node.get("zone")))
        for token in node["tokens"]:
            owner[Murmur3Token(token)] = host
    ring = sorted(owner)
    strategy = NetworkTopologyStrategy({dc: str(rf) for dc, rf in rf_map.items()})
    replica_map = strategy.make_token_replica_map(owner, ring)
    out = []
    for key in sys.stdin.buffer.read().split(b"\n"):
        if not key:
            continue
        token = Murmur3Token.from_key(key)
        point = bisect_left(ring, token)
        point = 0 if point == len(ring) else point
        driver = replica_map[ring[point]]
        java = cassandra_order(ring, owner, rf_map, point)
        out.append(",".join(h.name for h in driver) + "\t" + ",".join(h.name for h in java))
    sys.stdout.write("".join(f"{line}\n" for line in out))


main()
