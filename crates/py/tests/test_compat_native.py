"""The native helpers of compat.HashRing against the pure-Python code they replaced."""

from __future__ import annotations

import hashlib
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from ringwise import _ringwise


def python_hashi(key, replica=0):
    digest = hashlib.md5(str(key).encode("utf-8")).digest()
    return int.from_bytes(digest[replica * 4 : replica * 4 + 4], "little")


def python_continuum(nodes):
    total = sum(nodes.values())
    keys, ring, distribution = [], {}, Counter()
    for name, weight in nodes.items():
        for w in range(40 * len(nodes) * weight // total if total else 0):
            digest = hashlib.md5(f"{name}-{w}".encode("utf-8")).digest()
            for i in range(4):
                h = int.from_bytes(digest[i * 4 : i * 4 + 4], "little")
                ring[h] = name
                keys.append(h)
                distribution[name] += 1
    keys.sort()
    return keys, ring, distribution


def outcome(fn, *args):
    try:
        return ("ok", fn(*args))
    except Exception as e:  # the same exception, type and message
        return ("error", type(e), str(e))


class OwnStr(str):
    def __str__(self) -> str:
        return "something else"


KEYS = ["", "apple", "节点", 7, 2**70, None, 1.5, b"x", OwnStr("k"), "\ud800"]
REPLICAS = [0, 1, 2, 3, 4, -1, -2, -5, 2**70, True, 1.0, None, "a"]


def test_hashi_is_the_python_slice_for_any_replica():
    for key in KEYS:
        assert outcome(_ringwise.uhashring_hashi, key) == outcome(python_hashi, key), key
        for replica in REPLICAS:
            got = outcome(_ringwise.uhashring_hashi, key, replica)
            assert got == outcome(python_hashi, key, replica), (key, replica)


def test_hashi_vector():
    assert _ringwise.uhashring_hashi("apple") == 3195025439  # twemproxy's test_all.c
    assert _ringwise.uhashring_hashi(key="apple", replica=0) == 3195025439


names = st.sampled_from([f"10.0.0.{i}" for i in range(1, 20)] + ["172.31.1.125", "172.31.1.202", "节点"])


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(names, st.sampled_from([1, 2, 3, 5, 17, 100]), max_size=10))
def test_continuum_is_the_python_one_in_order(nodes):
    keys, ring, distribution = _ringwise.uhashring_continuum(list(nodes.items()))
    want_keys, want_ring, want_distribution = python_continuum(nodes)
    assert keys == want_keys
    assert list(ring.items()) == list(want_ring.items())
    assert list(Counter(distribution).items()) == list(want_distribution.items())


def test_shared_point_goes_to_the_later_added():
    for order in (["172.31.1.125", "172.31.1.202"], ["172.31.1.202", "172.31.1.125"]):
        keys, ring, _ = _ringwise.uhashring_continuum([(name, 1) for name in order])
        assert keys.count(1009926488) == 2 and ring[1009926488] == order[1]
