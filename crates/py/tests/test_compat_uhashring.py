"""ringwise.compat.HashRing against the installed uhashring 2.5: its default ring,
hash_fn="ketama" (any vnodes and replicas it computes) and a callable hash_fn."""

from __future__ import annotations

import contextlib
import io
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ringwise
from ringwise import compat

uhashring = pytest.importorskip("uhashring")

NAMES = [f"10.0.0.{i}" for i in range(1, 9)] + ["172.31.1.125", "172.31.1.202", "cache-a:11211", "节点"]
keys = st.one_of(
    st.text(max_size=12),
    st.integers(0, 10**6).map(lambda i: f"user:{i}"),
    st.integers(),  # uhashring hashes str(key)
)
ops = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.sampled_from(NAMES), st.integers(1, 5)),
        st.tuples(st.just("setitem"), st.sampled_from(NAMES), st.integers(1, 5)),
        st.tuples(st.just("remove"), st.sampled_from(NAMES)),
        st.tuples(st.just("get"), st.lists(keys, min_size=1, max_size=20)),
    ),
    max_size=30,
)


def same_answers(ours: compat.HashRing, theirs, probe) -> None:
    for key in probe:
        assert ours.get_node(key) == theirs.get_node(key), key
        assert ours[key] == theirs[key], key
        assert ours.get_node_weight(key) == theirs.get_node_weight(key), key
        assert ours.get_server(key) == theirs.get_server(key), key
        assert ours.get_node_pos(key) == theirs.get_node_pos(key), key
    assert list(ours.get_nodes()) == list(theirs.get_nodes())
    assert ours.nodes == theirs.nodes
    assert ours.distribution == theirs.distribution
    assert ours.size == theirs.size


@settings(max_examples=100, deadline=None)
@given(initial=st.dictionaries(st.sampled_from(NAMES), st.integers(1, 5), max_size=6), ops=ops)
def test_random_sequences_match_uhashring_at_every_step(initial, ops):
    ours = compat.HashRing(nodes=dict(initial), hash_fn="ketama")
    theirs = uhashring.HashRing(nodes=dict(initial), hash_fn="ketama")
    probe = ["user:42", "", "coconut", 7]
    same_answers(ours, theirs, probe)
    for op in ops:
        if op[0] == "add":
            _, name, w = op
            ours.add_node(name, {"weight": w, "instance": f"inst-{name}"})
            theirs.add_node(name, {"weight": w, "instance": f"inst-{name}"})
        elif op[0] == "setitem":
            _, name, w = op
            ours[name] = w
            theirs[name] = w
        elif op[0] == "remove":
            _, name = op
            present = name in theirs.get_nodes()
            if present:
                del ours[name]
                theirs.remove_node(name)
            else:
                with pytest.raises(KeyError):
                    theirs.remove_node(name)
                with pytest.raises(KeyError):
                    ours.remove_node(name)
                with pytest.raises(ringwise.UnknownNodeError):
                    del ours[name]
        else:
            same_answers(ours, theirs, op[1])
    same_answers(ours, theirs, probe)
    assert [c for c in ours.range("user:1")] == [c for c in theirs.range("user:1")]
    assert list(ours.iterate_nodes("user:1", distinct=False))[:50] == list(
        theirs.iterate_nodes("user:1", distinct=False)
    )[:50]


def test_many_keys_weighted_list_and_dict_forms():
    rng = random.Random(6)
    probe = [f"k{rng.randrange(10**9)}" for _ in range(5000)]
    for nodes in (
        ["a", "b", "c"],
        {"a": 1, "b": 3, "c": 5, "d": 2},
        {f"10.1.0.{i}": {"weight": rng.randint(1, 5), "port": 11211, "hostname": f"h{i}"} for i in range(20)},
        "solo",
    ):
        ours = compat.HashRing(nodes=nodes, hash_fn="ketama")
        theirs = uhashring.HashRing(nodes=nodes, hash_fn="ketama")
        assert [ours.get_node(k) for k in probe] == [theirs.get_node(k) for k in probe]
        assert ours.get_points() == theirs.get_points()
        assert ours.ring == theirs.ring
        assert ours.get(probe[0]) == theirs.get(probe[0])
        assert ours.get_node_hostname(probe[1]) == theirs.get_node_hostname(probe[1])
        assert ours.get_node_port(probe[2]) == theirs.get_node_port(probe[2])


def colliding_key() -> tuple[str, int]:
    """A key owned by the point 1009926488 that 172.31.1.125 and .202 share (uhashring issue #6)."""
    ring = uhashring.HashRing(nodes=["172.31.1.125", "172.31.1.202"], hash_fn="ketama")
    for i in range(200_000):
        key = f"k{i}"
        if ring.get_server(key)[0] == 1009926488:
            return key, ring.runtime.hashi(key)
    raise AssertionError("no key lands on the shared point")


@pytest.mark.parametrize("options", [{}, {"vnodes": 80}, {"vnodes": 41, "replicas": 4}])
def test_the_colliding_pair_later_added_wins(options):
    # {}: the library's ketama flavour; other vnodes: ringwise's UhashringRing.
    key, _ = colliding_key()
    for order in (["172.31.1.125", "172.31.1.202"], ["172.31.1.202", "172.31.1.125"]):
        ours = compat.HashRing(nodes=order, hash_fn="ketama", **options)
        theirs = uhashring.HashRing(nodes=order, hash_fn="ketama", **options)
        assert ours.get_node(key) == theirs.get_node(key) == order[1]
        assert ours.size == theirs.size  # the shared point counts once
        assert ours.get_points() == theirs.get_points()  # ... but is listed twice
        assert ours.get_node_pos(key) == theirs.get_node_pos(key)
        assert (ours.placement is None) == bool(options)
    # Weighted, among others, and after changes: still the same owner.
    ours = compat.HashRing(nodes={"172.31.1.125": 1, "172.31.1.202": 1, "10.0.0.1": 1}, hash_fn="ketama")
    theirs = uhashring.HashRing(nodes={"172.31.1.125": 1, "172.31.1.202": 1, "10.0.0.1": 1}, hash_fn="ketama")
    for ring in (ours, theirs):
        ring.remove_node("172.31.1.125")
        ring.add_node("172.31.1.125")  # now the later added of the two
    assert ours.get_node(key) == theirs.get_node(key)


UHASHRING_SNIPPET = '''
from uhashring import HashRing

nodes = {
    "node1": {"hostname": "node1.fqdn", "instance": "redis-1", "port": 6379, "vnodes": 40, "weight": 1},
    "node2": {"hostname": "node2.fqdn", "instance": "redis-2", "port": 6379, "vnodes": 40},
    "node3": {"hostname": "node3.fqdn", "instance": "redis-3", "port": 6379, "weight": 3},
}
hr = HashRing(nodes, hash_fn="ketama")
print(hr.get_node("coconut"), hr["coconut"], hr.get_node_hostname("coconut"), hr.get_node_port("coconut"))
hr.add_node("node4", {"instance": "redis-4", "weight": 2})
hr["node5"] = 1
for key in ("apple", "banana", "coconut", 42):
    print(key, hr.get_node(key), hr.get_node_instance(key), hr.get_server(key))
del hr["node5"]
hr.remove_node("node1")
print(sorted(hr.get_nodes()), sorted(hr.get_instances()))
print(sorted(hr.distribution.items()))
print(hr.get_key("coconut"), hr.get_node_pos("coconut"), hr.size)
print([n for n in hr.iterate_nodes("coconut")])
hr.print_continuum()
try:
    hr.remove_node("nope")
except KeyError as e:
    print("KeyError")
'''


def run_snippet(module) -> str:
    out = io.StringIO()
    import sys

    saved = sys.modules["uhashring"]
    sys.modules["uhashring"] = module
    try:
        with contextlib.redirect_stdout(out):
            exec(UHASHRING_SNIPPET, {})
    finally:
        sys.modules["uhashring"] = saved
    return out.getvalue()


def test_uhashring_user_code_runs_unchanged():
    ours = run_snippet(compat)
    theirs = run_snippet(uhashring)
    assert ours == theirs
    assert "KeyError" in ours


def test_unsupported_options_raise():
    # What uhashring 2.5 itself refuses, refused the same way.
    for hash_fn in ("md5", 42):
        with pytest.raises(TypeError):
            uhashring.HashRing(["a"], hash_fn=hash_fn)
        with pytest.raises(TypeError):
            compat.HashRing(["a"], hash_fn=hash_fn)
    # ketama replicas outside the 4 words of a digest: uhashring breaks.
    with pytest.raises(IndexError):
        uhashring.HashRing(["a"], hash_fn="ketama", replicas=5)
    for replicas in (0, -1, 5, 2.0, True):
        with pytest.raises(compat.UnsupportedOptionError):
            compat.HashRing(["a"], hash_fn="ketama", replicas=replicas)
    with pytest.raises(NotImplementedError):
        compat.HashRing(["a"], hash_fn="ketama", replicas=5)
    # Misspelt options are refused (uhashring would ignore them).
    with pytest.raises(TypeError, match="vnode"):
        compat.HashRing(["a"], vnode=80)
    for hash_fn in (None, "ketama"):
        for bad in (0, -1, 1.5, True):
            with pytest.raises(ringwise.InvalidVnodesError):
                compat.HashRing(["a"], hash_fn=hash_fn, vnodes=bad)
            with pytest.raises(ringwise.InvalidVnodesError):
                compat.HashRing({"a": {"vnodes": bad}}, hash_fn=hash_fn)
        for bad in (0, -2, 1.5):
            with pytest.raises(ringwise.InvalidWeightError):
                compat.HashRing({"a": {"weight": bad}}, hash_fn=hash_fn)
        with pytest.raises(ValueError):
            compat.HashRing(42, hash_fn=hash_fn)
        with pytest.raises(TypeError):
            compat.HashRing([1, 2], hash_fn=hash_fn)
        ring = compat.HashRing([], hash_fn=hash_fn)
        assert ring.get_node("k") is None and ring["k"] is None and ring.get_server("k") is None
        assert ring.get_node_pos("k") is None and ring.get("k") is None
        assert list(ring.iterate_nodes("k")) == [None]
        assert list(ring.range("k")) == [] and ring.size == 0 and ring.get_points() == []


def test_weight_fn_and_regenerate():
    state = {"a": 1, "b": 1}

    def weight_fn(**conf):
        return state[conf["nodename"]]

    ours = compat.HashRing(["a", "b"], hash_fn="ketama", weight_fn=weight_fn)
    theirs = uhashring.HashRing(["a", "b"], hash_fn="ketama", weight_fn=weight_fn)
    state["b"] = 4
    ours.regenerate()
    theirs.regenerate()
    probe = [f"k{i}" for i in range(2000)]
    assert [ours.get_node(k) for k in probe] == [theirs.get_node(k) for k in probe]
    assert ours.distribution == theirs.distribution


@given(st.one_of(st.text(), st.binary(), st.integers(), st.none(), st.floats(allow_nan=False)))
def test_no_crash_on_any_key(key):
    ours = compat.HashRing({"a": 1, "b": 2}, hash_fn="ketama")
    theirs = uhashring.HashRing({"a": 1, "b": 2}, hash_fn="ketama")
    try:
        want = theirs.get_node(key)
    except UnicodeEncodeError:
        with pytest.raises(UnicodeEncodeError):
            ours.get_node(key)
        return
    assert ours.get_node(key) == want
