"""ringwise.compat.ConsistentHashRing / rendezvous against the seed article's code.

The article's classes are copied below on purpose (not imported from the Rust
tests' script): this file is its own witness of what the article says.
"""

from __future__ import annotations

import bisect
import contextlib
import hashlib
import io
import random
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ringwise
from ringwise import compat

# --- the article, verbatim (listing 1's ring_hash, the class, rendezvous) ----


def ring_hash(value: str) -> int:
    """Стабильный 64-битный хеш: одинаковый во всех процессах и на всех машинах."""
    digest = hashlib.md5(value.encode()).digest()
    return int.from_bytes(digest[:8], "big")


class ArticleRing:
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

    def get_nodes(self, key: str, count: int) -> list[str]:
        """Первые count разных физических узлов по часовой стрелке: для реплик."""
        if not self._ring:
            raise LookupError("на кольце нет узлов")
        start = bisect.bisect_left(self._ring, (ring_hash(key),))
        result: list[str] = []
        for offset in range(len(self._ring)):
            node = self._ring[(start + offset) % len(self._ring)][1]
            if node not in result:
                result.append(node)
                if len(result) == count:
                    break
        return result


def article_rendezvous(key: str, nodes: list[str]) -> str:
    return max(nodes, key=lambda node: ring_hash(f"{node}:{key}"))


# The article's usage example ("Как этим пользоваться"), unchanged; the class
# it uses is whatever `ConsistentHashRing` is bound to in the namespace.
ARTICLE_EXAMPLE = '''
ring = ConsistentHashRing(vnodes=100)
for name in ("cache-a", "cache-b", "cache-c"):
    ring.add_node(name)

print(ring.get_node("user:42"))  # cache-a
print(ring.get_nodes("user:42", 2))  # ['cache-a', 'cache-b']

ring.remove_node(ring.get_node("user:42"))
print(ring.get_node("user:42"))  # cache-b
'''


def run_example(cls: type) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(ARTICLE_EXAMPLE, {"ConsistentHashRing": cls})
    return out.getvalue()


def test_article_example_runs_unchanged_and_prints_the_same():
    ours = run_example(compat.ConsistentHashRing)
    theirs = run_example(ArticleRing)
    assert ours == theirs
    assert ours == "cache-a\n['cache-a', 'cache-b']\ncache-b\n"


# --- random operation sequences -------------------------------------------

NAMES = [f"node-{i}" for i in range(8)] + ["cache-a", "кэш-б", "節點", "a#1", "a"]
keys = st.one_of(
    st.text(max_size=12),
    st.integers(0, 10**6).map(lambda i: f"user:{i}"),
)
ops = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.sampled_from(NAMES), st.integers(1, 5)),
        st.tuples(st.just("remove"), st.sampled_from(NAMES)),
        st.tuples(st.just("get_node"), st.lists(keys, min_size=1, max_size=20)),
        st.tuples(st.just("get_nodes"), keys, st.integers(0, 7)),
    ),
    max_size=40,
)


@settings(max_examples=150, deadline=None)
@given(vnodes=st.integers(1, 160), ops=ops)
def test_random_sequences_match_the_article_at_every_step(vnodes, ops):
    """Same answers as the article's class after every add/remove; its traps
    (re-adding with another weight, count 0) raise or differ as documented."""
    ours = compat.ConsistentHashRing(vnodes=vnodes)
    theirs = ArticleRing(vnodes=vnodes)
    weights: dict[str, int] = {}
    for op in ops:
        if op[0] == "add":
            _, name, weight = op
            if name in weights and weights[name] != weight:
                with pytest.raises(ringwise.DuplicateNodeError):
                    ours.add_node(name, weight)
                continue
            ours.add_node(name, weight)
            theirs.add_node(name, weight)
            weights[name] = weight
        elif op[0] == "remove":
            _, name = op
            ours.remove_node(name)  # absent: a no-op in both
            theirs.remove_node(name)
            weights.pop(name, None)
        elif op[0] == "get_node":
            for key in op[1]:
                if not weights:
                    with pytest.raises(LookupError):
                        theirs.get_node(key)
                    with pytest.raises(LookupError):
                        ours.get_node(key)
                else:
                    assert ours.get_node(key) == theirs.get_node(key), key
        else:
            _, key, count = op
            if not weights:
                with pytest.raises(LookupError):
                    ours.get_nodes(key, max(count, 1))
            elif count == 0:
                assert ours.get_nodes(key, 0) == []  # the article: every node
            else:
                assert ours.get_nodes(key, count) == theirs.get_nodes(key, count), key
        assert ours.nodes == weights


def test_seeded_long_sequence_with_many_keys():
    """A longer deterministic run (20 nodes, weights 1..5, 2,000 keys per step)."""
    rng = random.Random(10)
    ours, theirs = compat.ConsistentHashRing(100), ArticleRing(100)
    present: set[str] = set()
    probe = [f"key-{rng.randrange(10**9)}" for _ in range(2000)]
    for step in range(30):
        name = f"srv-{rng.randrange(20)}"
        if name in present:
            ours.remove_node(name)
            theirs.remove_node(name)
            present.discard(name)
        else:
            w = rng.randint(1, 5)
            ours.add_node(name, w)
            theirs.add_node(name, w)
            present.add(name)
        if present:
            assert [ours.get_node(k) for k in probe] == [theirs.get_node(k) for k in probe]
            assert ours.get_nodes(probe[step], 3) == theirs.get_nodes(probe[step], 3)


# --- rendezvous -------------------------------------------------------------


def test_rendezvous_is_the_articles_one_liner():
    rng = random.Random(1)
    for size in (1, 2, 3, 10, 11, 50):
        nodes = [f"node-{i}" for i in range(size)]
        rng.shuffle(nodes)
        for i in range(500):
            key = f"user:{rng.randrange(10**6)}" if i % 2 else str(i)
            assert compat.rendezvous(key, nodes) == article_rendezvous(key, nodes)


@given(key=st.text(max_size=10), nodes=st.lists(st.text(min_size=1, max_size=6), min_size=1, max_size=12))
def test_rendezvous_matches_on_any_text(key, nodes):
    assert compat.rendezvous(key, nodes) == article_rendezvous(key, nodes)


def test_rendezvous_without_nodes_raises_like_max():
    with pytest.raises(ValueError):
        compat.rendezvous("k", [])


# --- errors -------------------------------------------------------------------


def test_empty_ring_raises_lookup_error():
    ring = compat.ConsistentHashRing()
    with pytest.raises(LookupError):
        ring.get_node("user:42")
    with pytest.raises(LookupError):
        ring.get_nodes("user:42", 2)
    ring.add_node("a")
    ring.remove_node("a")
    with pytest.raises(LookupError):
        ring.get_node("user:42")


def test_documented_exceptions_for_the_articles_traps():
    ring = compat.ConsistentHashRing(vnodes=10)
    ring.add_node("a", 2)
    ring.add_node("a", 2)  # same weight: no-op, as the article's answers
    with pytest.raises(ringwise.DuplicateNodeError):
        ring.add_node("a", 3)
    with pytest.raises(ValueError):  # DuplicateNodeError is a ValueError
        ring.add_node("a", 1)
    for bad in (0, -1):
        with pytest.raises(ringwise.InvalidWeightError):
            ring.add_node("b", bad)
    for bad in (1.5, 2.0, "2", None):
        with pytest.raises(TypeError):
            ring.add_node("b", bad)
    with pytest.raises(TypeError):
        ring.add_node(42)
    ring.remove_node("never-added")  # a no-op, as in the article
    assert ring.nodes == {"a": 2}
    with pytest.raises(ValueError):
        ring.get_nodes("k", -1)
    with pytest.raises(TypeError):
        ring.get_nodes("k", 1.5)
    with pytest.raises(ringwise.InvalidVnodesError):
        compat.ConsistentHashRing(vnodes=0)
    with pytest.raises(TypeError):
        compat.ConsistentHashRing(vnodes=1.5)
    with pytest.raises(ringwise.Error):
        ring.add_node("", 1)  # not a valid ringwise name
    assert ring.get_nodes("k", 10) == ["a"]  # more than there are: all of them


@given(st.one_of(st.text(), st.binary(), st.integers(), st.none(), st.floats()))
def test_no_crash_on_any_key(key):
    ring = compat.ConsistentHashRing(vnodes=5)
    ring.add_node("a")
    ring.add_node("b", 2)
    try:
        got = ring.get_node(key)
    except (TypeError, ValueError):  # non-str/bytes keys; lone surrogates
        return
    assert got in ("a", "b")
    if isinstance(key, bytes):
        try:
            text = key.decode("utf-8")
        except UnicodeDecodeError:
            return
        assert got == ring.get_node(text)


# --- threads --------------------------------------------------------------


def test_readers_during_updates_see_only_whole_snapshots():
    """Readers never raise, and every answer is exactly what one of the
    snapshots published while the call ran would answer.

    The writer appends each published snapshot to `history` right after
    publishing it; a reader notes len(history) before (i) and after (j) its
    call, so the snapshot it used is one of history[i-1 : j+1].
    """
    base = [f"base-{i}" for i in range(5)]
    extra = [f"extra-{i}" for i in range(5)]
    ring = compat.ConsistentHashRing(vnodes=50)
    for name in base:
        ring.add_node(name)
    history = [ring.placement]
    stop = threading.Event()
    errors: list[BaseException] = []
    seen: list[tuple[str, str, list[str], int, int]] = []

    def reader(seed: int) -> None:
        rng = random.Random(seed)
        try:
            while not stop.is_set():
                key = f"user:{rng.randrange(10**6)}"
                i = len(history)
                node = ring.get_node(key)
                nodes = ring.get_nodes(key, 3)
                j = len(history)
                seen.append((key, node, nodes, i, j))
        except BaseException as e:  # noqa: BLE001 - report anything
            errors.append(e)

    threads = [threading.Thread(target=reader, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    rng = random.Random(0)
    for _ in range(200):
        name = rng.choice(extra)
        if name in ring:
            ring.remove_node(name)
        else:
            ring.add_node(name, rng.randint(1, 3))
        history.append(ring.placement)
    stop.set()
    for t in threads:
        t.join()
    assert not errors, errors[:3]
    assert len(seen) > 100
    for key, node, nodes, i, j in seen:
        live = history[max(i - 1, 0) : j + 1]
        assert node in {p.locate(key) for p in live}, key
        assert nodes in [p.replicas(key, 3) for p in live], key

    # Concurrent writers: no lost update.
    ring2 = compat.ConsistentHashRing(vnodes=5)
    names = [f"w{i}" for i in range(40)]
    writers = [
        threading.Thread(target=lambda part=part: [ring2.add_node(n) for n in part])
        for part in (names[0::2], names[1::2])
    ]
    for t in writers:
        t.start()
    for t in writers:
        t.join()
    assert set(ring2.nodes) == set(names)
    article = ArticleRing(vnodes=5)
    for n in ring2.nodes:
        article.add_node(n)
    for i in range(300):
        assert ring2.get_node(f"k{i}") == article.get_node(f"k{i}")


def test_incremental_changes_equal_a_fresh_build_at_every_step():
    """add_node/remove_node merge into (or filter) the previous snapshot instead
    of rebuilding: after each of 120 seeded steps the ring answers 1,000 keys as
    the article's class and as a Placement built from scratch, and its points
    are those of the fresh build."""
    rng = random.Random(25)
    ours, theirs = compat.ConsistentHashRing(50), ArticleRing(50)
    present: dict[str, int] = {}
    probe = [f"user:{rng.randrange(10**9)}" for _ in range(1000)]
    for _ in range(120):
        name = f"cache-{rng.randrange(15)}"
        if name in present and rng.random() < 0.6:
            ours.remove_node(name)
            theirs.remove_node(name)
            del present[name]
        elif name not in present:
            w = rng.randint(1, 4)
            ours.add_node(name, w)
            theirs.add_node(name, w)
            present[name] = w
        if not present:
            assert ours.placement is None
            continue
        fresh = ringwise.Placement(list(present.items()), algorithm="ring", hash="md5", vnodes=50)
        got = ours.placement.locate_many(probe)
        assert got == fresh.locate_many(probe)
        assert got == [theirs.get_node(k) for k in probe]
        assert ours.placement.stats() == fresh.stats()
