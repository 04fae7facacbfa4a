#!/usr/bin/env python3
"""Independent peer of ringwise's `Ring`: the seed article's ConsistentHashRing.

Usage: python3 seed_recipe.py SEED CASES

Prints one JSON document (ASCII only, non-ASCII escaped) to stdout: a list of
1 + CASES cases. The first is the article's fixed example; the others are
generated with random.Random(SEED). Each case holds the ring's settings, the
keys and the answers of the class below, which is the seed recipe unchanged
(standard library only). `seed_peer.rs` rebuilds every case with ringwise and
asserts the answers are equal.

Case fields:
  vnodes                 virtual nodes per unit of weight
  nodes                  [{"name", "weight"}] in the (shuffled) order added
  keys                   the keys looked up
  owners                 get_node(key) per key
  replicas               get_nodes(key, 3) per key
  removed                a node of `nodes`
  owners_after_remove    get_node(key) per key after remove_node(removed);
                         null per key when the ring became empty (the recipe
                         itself raises ZeroDivisionError there)
  added                  {"name", "weight"}: a node not in `nodes`
  owners_after_add       get_node(key) per key on a copy of the original ring
                         after add_node(added)
"""

import bisect
import copy
import hashlib
import json
import random
import sys
import unicodedata

REPLICAS = 3
KEYS_PER_CASE = 200


# --- the seed recipe, as in the article ------------------------------------


def ring_hash(value: str) -> int:
    digest = hashlib.md5(value.encode()).digest()
    return int.from_bytes(digest[:8], "big")


class ConsistentHashRing:
    def __init__(self, vnodes=100):
        self.vnodes = vnodes
        self._ring = []

    def add_node(self, node, weight=1):
        self._ring.extend(
            (ring_hash(f"{node}#{i}"), node) for i in range(self.vnodes * weight)
        )
        self._ring.sort()

    def remove_node(self, node):
        self._ring = [p for p in self._ring if p[1] != node]

    def get_node(self, key):
        index = bisect.bisect_left(self._ring, (ring_hash(key),))
        return self._ring[index % len(self._ring)][1]

    def get_nodes(self, key, count):
        start = bisect.bisect_left(self._ring, (ring_hash(key),))
        result = []
        for offset in range(len(self._ring)):
            node = self._ring[(start + offset) % len(self._ring)][1]
            if node not in result:
                result.append(node)
                if len(result) == count:
                    break
        return result


# --- random inputs ----------------------------------------------------------

# Code point ranges for non-ASCII text: Latin-1/Latin Extended, Greek,
# Cyrillic, Hebrew, CJK, Hangul, the private-use area and specials just below
# U+FFFF, and astral planes (emoji, math letters, CJK Extension B). The range
# around U+FFFF / U+10000 is where UTF-16 order differs from code point order.
UNICODE_RANGES = [
    (0x00A1, 0x024F),
    (0x0391, 0x03C9),
    (0x0400, 0x04FF),
    (0x05D0, 0x05EA),
    (0x3041, 0x30FF),
    (0x4E00, 0x9FFF),
    (0xAC00, 0xD7A3),
    (0xE000, 0xE0FF),
    (0xFF01, 0xFFFD),
    (0x1F300, 0x1F64F),
    (0x1F900, 0x1F9FF),
    (0x1D400, 0x1D7FF),
    (0x20000, 0x2A6DF),
]

# Printable ASCII (no control characters; includes space and '#').
ASCII = "".join(chr(c) for c in range(0x20, 0x7F))


def unicode_char(rng):
    """A random non-ASCII character that is neither control nor surrogate."""
    while True:
        lo, hi = rng.choice(UNICODE_RANGES)
        ch = chr(rng.randint(lo, hi))
        if unicodedata.category(ch) not in ("Cc", "Cs"):
            return ch


def random_text(rng, min_len, max_len, unicode_share):
    length = rng.randint(min_len, max_len)
    return "".join(
        unicode_char(rng) if rng.random() < unicode_share else rng.choice(ASCII)
        for _ in range(length)
    )


def random_name(rng):
    kind = rng.randrange(4)
    if kind == 0:
        return f"node-{rng.randrange(100)}"
    if kind == 1:
        return f"{rng.choice(['cache', 'db', 'shard', 'kv'])}-{rng.choice('abcdefgh')}{rng.randrange(10)}"
    if kind == 2:
        return random_text(rng, 1, 8, 0.0)
    return random_text(rng, 1, 6, 0.8)


def random_key(rng):
    kind = rng.randrange(50)
    if kind == 0:
        return ""
    if kind <= 15:
        return f"{rng.choice(['user', 'session', 'order', 'img'])}:{rng.randrange(10**6)}"
    if kind <= 32:
        return random_text(rng, 1, 16, 0.0)
    return random_text(rng, 1, 12, 0.7)


def distinct_names(rng, count, taken=()):
    taken = set(taken)
    names = []
    while len(names) < count:
        name = random_name(rng)
        assert name and not any(unicodedata.category(c) == "Cc" for c in name)
        if name not in taken:
            taken.add(name)
            names.append(name)
    return names


# --- cases ------------------------------------------------------------------


def lookups(ring, keys):
    """get_node per key; None when the ring is empty (the recipe would raise)."""
    if not ring._ring:
        return [None for _ in keys]
    return [ring.get_node(key) for key in keys]


def solve(vnodes, nodes, keys, removed, added):
    ring = ConsistentHashRing(vnodes)
    for node in nodes:
        ring.add_node(node["name"], node["weight"])
    owners = [ring.get_node(key) for key in keys]
    replicas = [ring.get_nodes(key, REPLICAS) for key in keys]

    bigger = copy.deepcopy(ring)
    bigger.add_node(added["name"], added["weight"])
    owners_after_add = lookups(bigger, keys)

    smaller = copy.deepcopy(ring)
    smaller.remove_node(removed)
    owners_after_remove = lookups(smaller, keys)

    # The original ring must not have been changed by the copies.
    assert [ring.get_node(key) for key in keys] == owners

    return {
        "vnodes": vnodes,
        "nodes": nodes,
        "keys": keys,
        "owners": owners,
        "replicas": replicas,
        "removed": removed,
        "owners_after_remove": owners_after_remove,
        "added": added,
        "owners_after_add": owners_after_add,
    }


def fixed_case():
    """The article's example: user:42 -> cache-a, then cache-b once a is gone."""
    nodes = [{"name": name, "weight": 1} for name in ("cache-a", "cache-b", "cache-c")]
    return solve(100, nodes, ["user:42"], "cache-a", {"name": "cache-d", "weight": 1})


def random_case(rng):
    vnodes = rng.randint(1, 200)
    # Small clusters get extra weight so that one-node rings (empty after the
    # removal) and two-node rings (fewer nodes than replicas) always occur.
    size = rng.randint(1, 3) if rng.random() < 0.2 else rng.randint(1, 30)
    names = distinct_names(rng, size)
    rng.shuffle(names)
    nodes = [{"name": name, "weight": rng.randint(1, 4)} for name in names]
    keys = [random_key(rng) for _ in range(KEYS_PER_CASE)]
    removed = rng.choice(names)
    (new_name,) = distinct_names(rng, 1, taken=names)
    added = {"name": new_name, "weight": rng.randint(1, 4)}
    return solve(vnodes, nodes, keys, removed, added)


def main(argv):
    if len(argv) != 3:
        sys.stderr.write("usage: python3 seed_recipe.py SEED CASES\n")
        return 2
    seed, count = int(argv[1]), int(argv[2])
    rng = random.Random(seed)
    cases = [fixed_case()] + [random_case(rng) for _ in range(count)]
    # ensure_ascii: the output is pure ASCII whatever the locale of stdout.
    sys.stdout.write(json.dumps(cases, ensure_ascii=True))
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
