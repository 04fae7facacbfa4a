"""The faster Python paths answer exactly as the simple ones.

* ``locate_many`` (keys read 4,096 at a time, each ``str``'s UTF-8 read in
  place, the lookups batched) equals a loop of ``locate`` on random keys:
  ASCII and not, ``bytes`` and ``str`` mixed, lists, tuples and
  generators, every count around the chunk size, several algorithms, and
  ``indices=True`` indexes ``nodes_by_index()`` the same way.
* its errors: a bad key anywhere (also past the first chunk) is a
  ``TypeError``, a placement without nodes an ``EmptyError``.
* ``with_node`` / ``without_node`` (and so ``compat.ConsistentHashRing``'s
  ``add_node`` / ``remove_node``) change only that node's points: a key
  moves only to the node added or off the node removed, and the snapshot
  equals a fresh build of the same members.
* the bench's private probes answer (a positive time) and refuse what the
  public calls refuse.
"""

from __future__ import annotations

import random

import pytest

import ringwise
from ringwise import Placement, compat
from ringwise import _ringwise as native

CHUNK = 4096  # crates/py/src/keys.rs
ALPHABET = "abcxyz019:-_/ éßñ日本語🙂"


def random_keys(rng: random.Random, n: int) -> list:
    keys: list = []
    for _ in range(n):
        text = "".join(rng.choice(ALPHABET) for _ in range(rng.randrange(0, 24)))
        keys.append(text.encode() if rng.random() < 0.25 else text)
    return keys


NODES = [f"node-{i}" for i in range(13)]
PLACEMENTS = [
    lambda: Placement(NODES, algorithm="ring", hash="md5", vnodes=50),
    lambda: Placement(NODES, algorithm="ring", hash="xxh3"),
    lambda: Placement(NODES, algorithm="jump"),
    lambda: Placement(NODES, algorithm="maglev"),
    lambda: Placement(NODES, algorithm="rendezvous", hash="murmur3"),
]


@pytest.mark.parametrize("make", PLACEMENTS)
@pytest.mark.parametrize("n", [0, 1, 2, CHUNK - 1, CHUNK, CHUNK + 1, 3 * CHUNK + 7])
def test_locate_many_is_a_loop_of_locate(make, n):
    p = make()
    keys = random_keys(random.Random(n * 31 + 7), n)
    expected = [p.locate(k) for k in keys]
    assert p.locate_many(keys) == expected
    assert p.locate_many(tuple(keys)) == expected
    assert p.locate_many(k for k in keys) == expected
    by_index = p.nodes_by_index()
    assert [by_index[i] for i in p.locate_many(keys, indices=True)] == expected


def test_locate_many_of_ascii_str_keys_matches_their_bytes():
    p = Placement(NODES, hash="md5")
    keys = [f"user:{i}" for i in range(2 * CHUNK + 3)]
    assert p.locate_many(keys) == p.locate_many([k.encode() for k in keys])
    assert p.locate_many(keys) == [p.locate(k) for k in keys]


def test_locate_many_keys_stay_valid_across_chunks():
    # Each key is made on the fly and dropped by the generator after it is
    # yielded: only the chunk's own references keep its UTF-8 alive.
    p = Placement(NODES, hash="xxh3")
    gen = (f"ключ-{i}-" + "x" * (i % 50) for i in range(3 * CHUNK))
    expected = [p.locate(f"ключ-{i}-" + "x" * (i % 50)) for i in range(3 * CHUNK)]
    assert p.locate_many(gen) == expected


@pytest.mark.parametrize("at", [0, CHUNK - 1, CHUNK, 2 * CHUNK + 5])
def test_locate_many_refuses_a_bad_key_anywhere(at):
    keys: list = [f"k{i}" for i in range(2 * CHUNK + 10)]
    keys[at] = 42
    with pytest.raises(TypeError, match="str or bytes"):
        Placement(NODES).locate_many(keys)


def test_locate_many_without_nodes():
    p = Placement([])
    assert p.locate_many([]) == []
    with pytest.raises(ringwise.EmptyError):
        p.locate_many(["a"])


def owners(p: Placement, keys: list) -> list:
    return p.locate_many(keys)


@pytest.mark.parametrize("algorithm,hash", [("ring", "md5"), ("ring", "xxh3"), ("maglev", None)])
def test_with_and_without_node_move_only_that_nodes_keys(algorithm, hash):
    keys = [f"user:{i}" for i in range(20_000)]
    base = Placement(NODES, algorithm=algorithm, hash=hash)
    grown = base.with_node("joiner", 2)
    assert owners(grown, keys) == owners(
        Placement([*NODES, ("joiner", 2)], algorithm=algorithm, hash=hash), keys
    )
    before, after = owners(base, keys), owners(grown, keys)
    moved = [(b, a) for b, a in zip(before, after) if b != a]
    if algorithm == "ring":  # a ring moves keys only onto the new node's points
        assert moved and all(a == "joiner" for _, a in moved)
    shrunk = grown.without_node("joiner")
    assert owners(shrunk, keys) == before
    if algorithm == "ring":
        gone = base.without_node("node-3")
        assert owners(gone, keys) == owners(
            Placement([n for n in NODES if n != "node-3"], algorithm=algorithm, hash=hash), keys
        )
        for b, a in zip(before, owners(gone, keys)):
            assert b == a or b == "node-3"


def test_compat_add_and_remove_node_one_by_one_match_a_fresh_ring():
    keys = [f"user:{i}" for i in range(5_000)]
    ring = compat.ConsistentHashRing(vnodes=200)
    names = [f"cache-{i}" for i in range(12)]
    for i, name in enumerate(names):
        previous = [ring.get_node(k) for k in keys] if i else None
        ring.add_node(name)
        now = [ring.get_node(k) for k in keys]
        fresh = Placement(names[: i + 1], algorithm="ring", hash="md5", vnodes=200)
        assert now == fresh.locate_many(keys)
        if previous is not None:
            assert all(p == n or n == name for p, n in zip(previous, now))
    previous = [ring.get_node(k) for k in keys]
    ring.remove_node("cache-5")
    now = [ring.get_node(k) for k in keys]
    assert all(p == n or p == "cache-5" for p, n in zip(previous, now))
    assert "cache-5" not in now


def test_probes_answer_and_refuse():
    p = Placement(NODES, hash="xxh3")
    keys = [f"k{i}" for i in range(1000)]
    assert native._probe_locate_ns(p, keys, 2) > 0
    assert native._probe_owners_ns(p, keys, 2) > 0
    assert native._probe_locate_ns(p, [], 2) == 0
    with pytest.raises(TypeError):
        native._probe_locate_ns(p, "abc", 1)
    with pytest.raises(TypeError):
        native._probe_owners_ns(p, [1], 1)
    with pytest.raises(ringwise.EmptyError):
        native._probe_locate_ns(Placement([]), ["a"], 1)
