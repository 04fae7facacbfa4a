"""The uhashring peer of the ketama compatibility tests.

Usage: python uhashring_ketama.py NODES < KEYS

NODES has one `name weight` line per node, in the order they are given to
uhashring: HashRing(nodes={name: {"weight": weight}, ...}, hash_fn="ketama"),
a dict in file order (a node's name is hashed exactly as written; the later
node wins a shared point). KEYS has one UTF-8 key a line.

Prints `points N distinct D` (the ring's point count, and how many distinct
values they take: D < N means two names share a point), then get_node(key)
for each key, one a line, in order.
"""

import sys

from uhashring import HashRing


def main():
    nodes = {}
    with open(sys.argv[1], encoding="utf-8") as lines:
        for line in lines:
            name, weight = line.split()
            nodes[name] = {"weight": int(weight)}
    ring = HashRing(nodes=nodes, hash_fn="ketama")
    points = ring.runtime._keys
    out = [f"points {len(points)} distinct {len(set(points))}"]
    keys = sys.stdin.buffer.read().decode("utf-8").split("\n")
    if keys and keys[-1] == "":
        keys.pop()
    out.extend(ring.get_node(key) for key in keys)
    sys.stdout.write("\n".join(out) + "\n")


main()
