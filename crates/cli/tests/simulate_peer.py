#!/usr/bin/env python3
"""Independent peer of `ringwise simulate`, for the integration tests only.

This is the measurement program of the consistent-hashing article (seed
000_b504d0d17185bd5a), re-typed from its listings and parameterised:

* "Почему hash(key) % N ломается"  -> "modulo"
* "Замер" (one ring, then 30 seeds) -> "single", "seeds"
* "Что происходит при отказе"       -> "failure"
* "Вес тоже работает"               -> "weights"
* "Чем кольцо заменяют" (rendezvous) -> "rendezvous"

The article's hard-coded 10 nodes become --nodes N everywhere. Nothing is
rounded: the document holds the raw figures the article formats.

The only liberty taken is speed: every key is hashed once, and lookups of many
keys go through `ConsistentHashRing.lookup_many`, which bisects a plain list of
ring points with the same index rule as `get_node` (`bisect_left(ring, (h,))`
is the first point whose hash is >= h, which is `bisect_left(points, h)`).
`lookup_many` checks itself against `get_node` on a prefix of every batch.

Standard library only. Prints one JSON document to stdout.
"""

import argparse
import bisect
import hashlib
import json
import sys
from collections import Counter
from statistics import mean, pstdev


# --- The article's listings ------------------------------------------------


def ring_hash(value: str) -> int:
    """Стабильный 64-битный хеш: одинаковый во всех процессах и на всех машинах."""
    digest = hashlib.md5(value.encode()).digest()
    return int.from_bytes(digest[:8], "big")


class ConsistentHashRing:
    def __init__(self, vnodes: int = 100):
        self.vnodes = vnodes
        self._ring: list[tuple[int, str]] = []  # (точка на кольце, узел), по возрастанию

    def add_node(self, node: str, weight: int = 1) -> None:
        points = [
            (ring_hash(f"{node}#{i}"), node) for i in range(self.vnodes * weight)
        ]
        self._ring.extend(points)
        self._ring.sort()

    def remove_node(self, node: str) -> None:
        self._ring = [point for point in self._ring if point[1] != node]

    def get_node(self, key: str) -> str:
        if not self._ring:
            raise LookupError("на кольце нет узлов")
        # (h,) меньше любого (h, node), поэтому находим первую точку >= h
        index = bisect.bisect_left(self._ring, (ring_hash(key),))
        # Дошли до конца массива: кольцо замыкается на нулевой элемент
        return self._ring[index % len(self._ring)][1]

    # --- peer-only fast path (not in the article) ---

    SELF_CHECK = 256

    def lookup_many(self, keys: list[str], hashes: list[int]) -> list[str]:
        """[self.get_node(key) for key in keys], given hashes[i] == ring_hash(keys[i])."""
        if not self._ring:
            raise LookupError("на кольце нет узлов")
        points = [point for point, _ in self._ring]
        owners = [node for _, node in self._ring]
        size = len(points)
        find = bisect.bisect_left
        result = [owners[find(points, h) % size] for h in hashes]
        for key, owner in zip(keys[: self.SELF_CHECK], result):
            assert self.get_node(key) == owner, (key, owner)
        return result


def rendezvous(key: str, nodes: list[str]) -> str:
    return max(nodes, key=lambda node: ring_hash(f"{node}:{key}"))


# --- "Замер", generalised from 10 nodes to N -------------------------------


class Peer:
    def __init__(self, keys: list[str], nodes: int):
        self.keys = keys
        self.hashes = [ring_hash(key) for key in keys]
        self.n = nodes

    def build_ring(self, vnodes: int, prefix: str = "node") -> ConsistentHashRing:
        ring = ConsistentHashRing(vnodes)
        for i in range(self.n):
            ring.add_node(f"{prefix}-{i}")
        return ring

    def measure(self, vnodes: int, count: int, prefix: str = "node") -> dict:
        """The article's measure(vnodes, keys[:count], prefix)."""
        keys, hashes = self.keys[:count], self.hashes[:count]
        n = self.n
        ring = self.build_ring(vnodes, prefix)
        before = ring.lookup_many(keys, hashes)

        new_node = f"{prefix}-{n}"
        ring.add_node(new_node)
        after = ring.lookup_many(keys, hashes)

        changed = [(b, a) for b, a in zip(before, after) if b != a]
        load = Counter(before)
        average = len(keys) / n
        return {
            "moved": len(changed) / len(keys),
            "to_new": sum(a == new_node for _, a in changed) / max(len(changed), 1),
            "donors": len({b for b, _ in changed}),
            "max": max(load.values()) / average,
            "min": min(load.get(f"{prefix}-{i}", 0) for i in range(n)) / average,
            "spread": pstdev(load.get(f"{prefix}-{i}", 0) for i in range(n)) / average,
        }

    def modulo(self) -> list[dict]:
        n = self.n
        out = []
        for old, new in [(n, n + 1), (n, n - 1), (10 * n, 10 * n + 1), (n, 2 * n)]:
            moved = sum(h % old != h % new for h in self.hashes)
            out.append({"from": old, "to": new, "moved": moved / len(self.keys)})
        return out

    def single(self, vnodes_list: list[int]) -> list[dict]:
        return [
            {"vnodes": vnodes, **self.measure(vnodes, len(self.keys))}
            for vnodes in vnodes_list
        ]

    def seeds(self, vnodes_list: list[int], seeds: int, seed_keys: int) -> list[dict]:
        count = min(seed_keys, len(self.keys))
        out = []
        for vnodes in vnodes_list:
            runs = [self.measure(vnodes, count, f"s{seed}") for seed in range(seeds)]
            moved = [run["moved"] for run in runs]
            out.append(
                {
                    "vnodes": vnodes,
                    "moved_min": min(moved),
                    "moved_avg": mean(moved),
                    "moved_max": max(moved),
                    "max_avg": mean(run["max"] for run in runs),
                    "spread_avg": mean(run["spread"] for run in runs),
                }
            )
        return out

    def failure(self, vnodes_list: list[int]) -> list[dict]:
        keys, hashes = self.keys, self.hashes
        out = []
        for vnodes in vnodes_list:
            ring = self.build_ring(vnodes)
            before = ring.lookup_many(keys, hashes)
            load = Counter(before)

            victim = load.most_common(1)[0][0]  # убираем самый загруженный узел
            ring.remove_node(victim)
            after = ring.lookup_many(keys, hashes)

            # Ключи уходят только с убранного узла (the article asserts this)
            only_victim = all(b == victim for b, a in zip(before, after) if b != a)

            received = Counter(a for b, a in zip(before, after) if b != a)
            neighbor, extra = received.most_common(1)[0]
            out.append(
                {
                    "vnodes": vnodes,
                    "victim": victim,
                    "victim_share": load[victim] / len(keys),
                    "receivers": len(received),
                    "neighbor": neighbor,
                    "neighbor_before": load[neighbor] / len(keys),
                    "neighbor_after": (load[neighbor] + extra) / len(keys),
                    "only_victim_moved": only_victim,
                }
            )
        return out

    def weights(self, vnodes_list: list[int]) -> list[dict]:
        out = []
        for vnodes in vnodes_list:
            ring = ConsistentHashRing(vnodes)
            ring.add_node("small-1")
            ring.add_node("small-2")
            ring.add_node("big", weight=2)
            load = Counter(ring.lookup_many(self.keys, self.hashes))
            names = ("small-1", "small-2", "big")
            shares = {name: load.get(name, 0) / len(self.keys) for name in names}
            out.append({"vnodes": vnodes, "shares": shares})
        return out

    def rendezvous(self, rendezvous_keys: int) -> dict:
        keys = self.keys[: min(rendezvous_keys, len(self.keys))]
        nodes = [f"node-{i}" for i in range(self.n)]
        new_node = f"node-{self.n}"
        grown = nodes + [new_node]
        before = [rendezvous(key, nodes) for key in keys]
        after = [rendezvous(key, grown) for key in keys]
        changed = [(b, a) for b, a in zip(before, after) if b != a]
        return {
            "keys": len(keys),
            "moved": len(changed) / len(keys),
            "to_new": sum(a == new_node for _, a in changed) / max(len(changed), 1),
        }


def int_list(text: str) -> list[int]:
    try:
        values = [int(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a comma-separated list of integers: {text!r}")
    if any(value < 1 for value in values):
        raise argparse.ArgumentTypeError(f"values must be >= 1: {text!r}")
    return values


def positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1: {text!r}")
    return value


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", type=positive, default=1_000_000)
    parser.add_argument("--nodes", type=positive, default=10)
    parser.add_argument("--vnodes", type=int_list, default=[1, 10, 100, 1000])
    parser.add_argument("--seeds", type=positive, default=30)
    parser.add_argument("--seed-keys", type=positive, default=100_000)
    parser.add_argument("--failure-vnodes", type=int_list, default=[1, 100])
    parser.add_argument("--weight-vnodes", type=int_list, default=[1000, 100])
    parser.add_argument("--rendezvous-keys", type=positive, default=200_000)
    args = parser.parse_args(argv)
    if args.nodes < 2:
        parser.error("--nodes must be >= 2 (the modulo table divides by N - 1)")

    peer = Peer([f"user:{i}" for i in range(args.keys)], args.nodes)
    doc = {
        "modulo": peer.modulo(),
        "single": peer.single(args.vnodes),
        "seeds": peer.seeds(args.vnodes, args.seeds, args.seed_keys),
        "failure": peer.failure(args.failure_vnodes),
        "weights": peer.weights(args.weight_vnodes),
        "rendezvous": peer.rendezvous(args.rendezvous_keys),
    }
    json.dump(doc, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
