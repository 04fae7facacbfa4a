"""The native API of ringwise (crates/py): every public call of the contract,
each exception where it is documented, the batch path against single
lookups, thread safety of snapshots, simulate() against the CLI's JSON, and
no crash on garbage input."""

from __future__ import annotations

import array
import json
import math
import os
import pathlib
import shutil
import subprocess
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ringwise
from ringwise import Placement

ROOT = pathlib.Path(__file__).resolve().parents[3]
NODES = ["cache-a", "cache-b", "cache-c", "cache-d"]
KEYS = [f"user:{i}" for i in range(2000)] + ["", "é", "日本語", "a{tag}b"]

# Every documented exception: the class, the built-in base it also has.
EXCEPTIONS = {
    "InvalidNameError": ValueError,
    "DuplicateNodeError": ValueError,
    "InvalidWeightError": ValueError,
    "InvalidZoneError": ValueError,
    "InvalidVnodesError": ValueError,
    "TooManyPointsError": ValueError,
    "UnknownNodeError": KeyError,
    "UnknownHashError": ValueError,
    "UnknownAlgorithmError": ValueError,
    "InvalidSecretError": ValueError,
    "InvalidParameterError": ValueError,
    "UnsupportedError": Exception,
    "InvalidLayoutError": ValueError,
    "ClusterFileError": ValueError,
    "EmptyError": LookupError,
}
DOCUMENTED = tuple(getattr(ringwise, name) for name in EXCEPTIONS) + (ringwise.Error,)


def placement(algorithm: str, nodes=NODES, **kw) -> Placement:
    """A placement of `algorithm`, the parameters it needs kept small."""
    if algorithm == "maglev":
        kw.setdefault("table_size", 251)
    return Placement(nodes, algorithm=algorithm, **kw)


# --- the module ------------------------------------------------------------


def test_registries_are_name_tuples():
    assert "ring" in ringwise.ALGORITHMS and "jump" in ringwise.ALGORITHMS
    assert "xxh3" in ringwise.HASHES and "md5" in ringwise.HASHES
    assert "uhashring" in ringwise.FLAVORS
    for names in (ringwise.ALGORITHMS, ringwise.HASHES, ringwise.FLAVORS):
        assert isinstance(names, tuple) and all(isinstance(n, str) for n in names)


@pytest.mark.parametrize("name,builtin", sorted(EXCEPTIONS.items()))
def test_exception_classes(name, builtin):
    cls = getattr(ringwise, name)
    assert issubclass(cls, ringwise.Error) and issubclass(cls, builtin)
    assert cls.__module__ == "ringwise"
    assert name in ringwise.__all__


def test_cassandra_token():
    # The library's own vectors (hash/wire.rs).
    assert ringwise.cassandra_token(bytes([0xFE] * 8)) == -8927430733708461935
    assert ringwise.cassandra_token(b"") == -(2**63)
    assert ringwise.cassandra_token("k") == ringwise.cassandra_token(b"k")


# --- building ---------------------------------------------------------------


def test_properties_and_listed_order():
    p = Placement(["b", "a", ("c", 2.0), ("d", 1, "zone-1")], vnodes=10)
    assert p.algorithm == "ring" and p.hash == "xxh3"
    assert p.nodes == ["b", "a", "c", "d"]
    assert p.nodes_by_index() == ["a", "b", "c", "d"]
    assert len(p) == 4 and "a" in p and "z" not in p and 3 not in p
    assert repr(p).startswith("Placement([")


def test_mapping_of_weights():
    p = Placement({"a": 1, "b": 3}, algorithm="rendezvous")
    weights = {n["name"]: n["weight"] for n in p.stats()["nodes"]}
    assert weights == {"a": 1.0, "b": 3.0}


def test_default_hash_follows_the_algorithm():
    assert Placement(["a"], algorithm="slots").hash == "redis-crc16"
    assert Placement(["a"], algorithm="ketama", flavor="twemproxy").hash == "fnv1a64-twemproxy"
    assert Placement(["a"], hash="md5").hash == "md5"


@pytest.mark.parametrize("algorithm", ringwise.ALGORITHMS)
def test_every_algorithm_builds_and_locates(algorithm):
    p = placement(algorithm)
    assert p.algorithm == algorithm
    assert p.locate("k") in NODES
    assert isinstance(p.hash_key("k"), int)


def test_convenience_classes():
    for cls, name in [
        (ringwise.Ring, "ring"),
        (ringwise.Rendezvous, "rendezvous"),
        (ringwise.Jump, "jump"),
        (ringwise.Memento, "memento"),
        (ringwise.JumpBack, "jumpback"),
        (ringwise.Binomial, "binomial"),
        (ringwise.FlipHash, "fliphash"),
        (ringwise.Anchor, "anchor"),
        (ringwise.Dx, "dx"),
        (ringwise.MultiProbe, "multiprobe"),
        (ringwise.Slots, "slots"),
        (ringwise.Ketama, "ketama"),
        (ringwise.Nginx, "nginx"),
        (ringwise.EnvoyRing, "envoy-ring"),
        (ringwise.GrpcRing, "grpc-ring"),
        (ringwise.Cassandra, "cassandra"),
        (ringwise.VarnishShard, "varnish-shard"),
        (ringwise.EnvoyRendezvous, "envoy-rendezvous"),
        (ringwise.Haproxy, "haproxy"),
        (ringwise.Dalli, "dalli"),
        (ringwise.RedisRb, "redis-rb"),
        (ringwise.Groupcache, "groupcache"),
        (ringwise.PhpMemcache, "php-memcache"),
        (ringwise.GoRedis, "go-redis"),
    ]:
        p = cls(["a", "b"])
        assert isinstance(p, Placement) and isinstance(p, cls)
        assert p.algorithm == name
        # A new snapshot is still of its algorithm.
        assert isinstance(p.with_node("c"), cls)
    m = ringwise.Maglev(["a", "b"], table_size=251)
    assert isinstance(m, ringwise.Maglev) and not isinstance(m, ringwise.Ring)


# --- errors -----------------------------------------------------------------


@pytest.mark.parametrize(
    "build,exc",
    [
        (lambda: Placement([("a", -1)]), ringwise.InvalidWeightError),
        (lambda: Placement([("a", math.nan)]), ringwise.InvalidWeightError),
        (lambda: Placement({"a": 0}), ringwise.InvalidWeightError),
        (lambda: Placement(["a", "a"]), ringwise.DuplicateNodeError),
        (lambda: Placement([""]), ringwise.InvalidNameError),
        (lambda: Placement(["a\n"]), ringwise.InvalidNameError),
        (lambda: Placement([("a", 1, "")]), ringwise.InvalidZoneError),
        (lambda: Placement(["a"], vnodes=0), ringwise.InvalidVnodesError),
        (lambda: Placement(["a"], vnodes=2**40), ringwise.InvalidVnodesError),
        (lambda: Placement(["a"], algorithm="karger"), ringwise.UnknownAlgorithmError),
        (lambda: Placement(["a"], hash="sha7"), ringwise.UnknownHashError),
        (lambda: Placement(["a"], hash="siphash"), ringwise.InvalidSecretError),
        (lambda: Placement(["a"], algorithm="maglev", table_size=100), ringwise.InvalidParameterError),
        (lambda: Placement(["a"], hash_tag="{"), ringwise.InvalidParameterError),
        (lambda: Placement(["a"], flavor="nope"), ringwise.Error),
        (lambda: Placement(["a"], vnodes=1000, max_points=10), ringwise.TooManyPointsError),
        (lambda: Placement(["a", "b", "c"], algorithm="jump").without_node("b"), ringwise.UnsupportedError),
        (lambda: Placement([("a", 2)], algorithm="jump"), ringwise.Error),
        (lambda: Placement(["a"]).without_node("zz"), ringwise.UnknownNodeError),
        (lambda: Placement(["a"]).with_node("a"), ringwise.DuplicateNodeError),
        (lambda: Placement(["a"]).with_node("b", weight=-2), ringwise.InvalidWeightError),
        (lambda: Placement([]).locate("k"), ringwise.EmptyError),
        (lambda: Placement([]).replicas("k", 2), ringwise.EmptyError),
        (lambda: Placement([]).locate_many(["k"]), ringwise.EmptyError),
    ],
)
def test_documented_errors(build, exc):
    with pytest.raises(exc):
        build()


def test_builtin_bases_catch_them():
    with pytest.raises(LookupError):
        Placement().locate("k")
    with pytest.raises(KeyError):
        Placement(["a"]).without_node("b")
    with pytest.raises(ValueError):
        Placement(["a", "a"])


@pytest.mark.parametrize(
    "call",
    [
        lambda: Placement("abc"),
        lambda: Placement([1, 2]),
        lambda: Placement([("a", "heavy")]),
        lambda: Placement([("a", 1, 2, 3)]),
        lambda: Placement(["a"]).locate(42),
        lambda: Placement(["a"]).locate_many([b"x", None]),
        lambda: Placement(["a"]).replicas(1.5, 2),
        lambda: ringwise.simulate(bogus=1),
    ],
)
def test_wrong_types_raise_type_error(call):
    with pytest.raises(TypeError):
        call()


def test_cluster_file_error_names_the_line():
    text = 'algorithm = "ring"\n\n[[nodes]]\nname = "a"\nweight = "heavy"\n'
    with pytest.raises(ringwise.ClusterFileError, match="line 5"):
        Placement.from_toml(text)
    with pytest.raises(ringwise.ClusterFileError, match="line"):
        Placement.from_toml("algorithm = \n")


def test_cluster_file(tmp_path):
    text = 'algorithm = "ring"\nhash = "md5"\nvnodes = 100\n\n[[nodes]]\nname = "cache-b"\nweight = 2\n\n[[nodes]]\nname = "cache-a"\nzone = "eu-1a"\n'
    path = tmp_path / "cluster.toml"
    path.write_text(text)
    for p in (Placement.from_toml(text), Placement.from_file(path), Placement.from_file(str(path))):
        assert (p.algorithm, p.hash, p.nodes) == ("ring", "md5", ["cache-b", "cache-a"])
    same = Placement([("cache-b", 2), ("cache-a", 1, "eu-1a")], hash="md5", vnodes=100)
    assert p.locate_many(KEYS) == same.locate_many(KEYS)
    with pytest.raises(OSError):
        Placement.from_file(tmp_path / "missing.toml")


# --- lookups ----------------------------------------------------------------


def test_str_and_bytes_keys_agree():
    p = Placement(NODES)
    for key in KEYS:
        assert p.locate(key) == p.locate(key.encode())
        assert p.hash_key(key) == p.hash_key(key.encode())
        assert p.replicas(key, 2) == p.replicas(key.encode(), 2)
    assert p.locate("é") == p.locate("é".encode())


@pytest.mark.parametrize("algorithm", ringwise.ALGORITHMS)
def test_locate_many_is_a_loop_of_locate(algorithm):
    p = placement(algorithm)
    one = [p.locate(k) for k in KEYS]
    assert p.locate_many(KEYS) == one
    assert p.locate_many(iter(k.encode() for k in KEYS)) == one
    idx = p.locate_many(KEYS, indices=True)
    names = p.nodes_by_index()
    assert [names[i] for i in idx] == one
    assert len(idx) == len(KEYS)
    assert p.locate_many([]) == []


def test_indices_type():
    idx = Placement(NODES).locate_many(["a", "b"], indices=True)
    try:
        import numpy
    except ImportError:
        assert isinstance(idx, array.array) and idx.typecode == "I"
    else:
        assert isinstance(idx, numpy.ndarray) and idx.dtype == numpy.uint32


@pytest.mark.parametrize("algorithm", ringwise.ALGORITHMS)
def test_replicas(algorithm):
    p = placement(algorithm)
    for key in KEYS[:50]:
        r = p.replicas(key, 3)
        assert len(r) == 3 and len(set(r)) == 3 and set(r) <= set(NODES)
        assert p.replicas(key, 10) and len(p.replicas(key, 10)) <= len(NODES)
    assert p.replicas("k", 0) == []


def test_hash_tag():
    p = Placement(NODES, hash_tag="{}")
    assert p.locate("user:{42}:cart") == p.locate("user:{42}:profile") == p.locate("42")


def test_with_and_without_node_are_new_snapshots():
    p = Placement(NODES, hash="md5", vnodes=100)
    q = p.with_node("cache-e", weight=2, zone="z")
    assert p.nodes == NODES and q.nodes == NODES + ["cache-e"]
    assert q.hash == "md5"
    r = q.without_node("cache-e")
    assert r.nodes == NODES and r.locate_many(KEYS) == p.locate_many(KEYS)
    moved = [a != b for a, b in zip(p.locate_many(KEYS), q.locate_many(KEYS))]
    assert 0 < sum(moved) < len(KEYS) // 2
    assert all(b == "cache-e" for a, b in zip(p.locate_many(KEYS), q.locate_many(KEYS)) if a != b)


def test_stats():
    ring = Placement(NODES, vnodes=100)
    s = ring.stats()
    assert s["algorithm"] == "ring" and s["exact"] is True and s["points"] == 400
    assert sorted(n["name"] for n in s["nodes"]) == NODES
    assert math.isclose(sum(n["share"] for n in s["nodes"]), 1.0, rel_tol=1e-9)
    assert 0 < s["spread"] < 0.5
    jump = Placement(NODES, algorithm="jump").stats()
    assert jump["exact"] is False and jump["points"] == 0
    assert all(abs(n["share"] - 0.25) < 0.01 for n in jump["nodes"])


def test_stats_like_inspect(tmp_path):
    """The same figures as `ringwise inspect --format json`."""
    binary = ringwise_binary()
    path = tmp_path / "c.toml"
    path.write_text('algorithm = "rendezvous"\n' + "".join(f'[[nodes]]\nname = "{n}"\n' for n in "abc"))
    out = subprocess.run(
        binary + ["inspect", "--cluster", str(path), "--format", "json"],
        check=True, capture_output=True, text=True, cwd=ROOT,
    ).stdout
    cli = json.loads(out)
    ours = Placement.from_file(path).stats()
    for key in ("algorithm", "hash", "exact", "points", "spread", "max", "min"):
        assert ours[key] == pytest.approx(cli[key]), key
    for a, b in zip(ours["nodes"], cli["nodes"]):
        assert (a["name"], a["share"]) == (b["name"], pytest.approx(b["share"]))


# --- threads ----------------------------------------------------------------


def test_readers_see_only_complete_snapshots():
    keys = KEYS[:500]
    snapshots = [Placement(NODES[:1], vnodes=50)]
    for i in range(30):
        snapshots.append(snapshots[-1].with_node(f"extra-{i}"))
    expected = {len(s): s.locate_many(keys) for s in snapshots}
    current = [snapshots[0]]
    failures: list[str] = []
    stop = threading.Event()

    def reader():
        while not stop.is_set():
            p = current[0]
            if p.locate_many(keys) != expected[len(p)]:
                failures.append(f"batch at {len(p)} nodes")
            if [p.locate(k) for k in keys[:50]] != expected[len(p)][:50]:
                failures.append(f"single at {len(p)} nodes")

    threads = [threading.Thread(target=reader) for _ in range(4)]
    for t in threads:
        t.start()
    try:
        for _ in range(3):
            p = Placement(NODES[:1], vnodes=50)
            for i in range(30):
                p = p.with_node(f"extra-{i}")  # built off to the side...
                current[0] = p  # ...then swapped in one assignment
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert failures == []


# --- simulate -----------------------------------------------------------------


def ringwise_binary() -> list[str]:
    built = ROOT / "target" / "debug" / "ringwise"
    if built.exists():
        return [str(built)]
    if shutil.which("cargo") is None:
        pytest.skip("neither target/debug/ringwise nor cargo")
    return ["cargo", "run", "--quiet", "-p", "ringwise-cli", "--"]


def without_timings(value):
    """The figures without wall-clock ones (elapsed, lookup and build times)."""
    if isinstance(value, dict):
        return {
            k: without_timings(v)
            for k, v in value.items()
            if not (k.endswith("_s") or k.endswith("_ns") or k.endswith("_ms") or "elapsed" in k)
        }
    if isinstance(value, list):
        return [without_timings(v) for v in value]
    return value


def test_simulate_matches_the_cli():
    ours = ringwise.simulate(keys=20000, experiments=["single"])
    out = subprocess.run(
        ringwise_binary()
        + ["simulate", "--keys", "20000", "--experiments", "single", "--format", "json"],
        check=True, capture_output=True, text=True, cwd=ROOT,
    ).stdout
    cli = json.loads(out)
    assert ours["version"] == cli["version"]
    assert without_timings(ours) == without_timings(cli)
    assert "single" in json.dumps(ours)


def test_simulate_options():
    a = ringwise.simulate(keys=5000, experiments="single", vnodes=[1, 10], nodes=5)
    b = ringwise.simulate(keys=5000, experiments=["single"], vnodes="1,10", nodes=5)
    assert without_timings(a) == without_timings(b)
    with pytest.raises(ringwise.InvalidParameterError):
        ringwise.simulate(keys=5000, experiments=["nope"])
    with pytest.raises(ringwise.InvalidParameterError):
        ringwise.simulate(keys=5000, experiments=["cost"], hit_rate=2.0)
    with pytest.raises(ringwise.UnknownAlgorithmError):
        ringwise.simulate(algo="karger")


# --- garbage in -----------------------------------------------------------------

names = st.one_of(st.text(max_size=12), st.sampled_from(["a", "b", "c"]))
weights = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True), st.integers(-5, 5), st.just(1)
)
nodes = st.lists(
    st.one_of(names, st.tuples(names, weights), st.tuples(names, weights, st.one_of(st.none(), names))),
    max_size=6,
)
keys = st.one_of(st.text(max_size=20), st.binary(max_size=20))


@settings(max_examples=300, deadline=None)
@given(
    nodes=nodes,
    algorithm=st.one_of(st.sampled_from(ringwise.ALGORITHMS), st.text(max_size=5)),
    hash=st.one_of(st.none(), st.sampled_from(ringwise.HASHES), st.text(max_size=5)),
    keys=st.lists(keys, max_size=8),
    extra=names,
)
def test_no_crash_on_garbage(nodes, algorithm, hash, keys, extra):
    kw = {"table_size": 251} if algorithm == "maglev" else {}
    try:
        p = Placement(nodes, algorithm=algorithm, hash=hash, vnodes=3, **kw)
    except DOCUMENTED:
        return
    for key in keys:
        try:
            assert p.locate(key) in p.nodes
            assert set(p.replicas(key, 2)) <= set(p.nodes)
        except ringwise.EmptyError:
            assert len(p) == 0
    try:
        assert p.locate_many(keys) == [p.locate(k) for k in keys]
    except ringwise.EmptyError:
        assert len(p) == 0
    for change in (lambda: p.with_node(extra), lambda: p.without_node(extra)):
        try:
            q = change()
        except DOCUMENTED:
            continue
        assert isinstance(q, Placement)


def test_locate_many_takes_any_sequence_of_keys():
    p = Placement(NODES)
    ascii_keys = [f"k{i}" for i in range(300)]
    one = [p.locate(k) for k in ascii_keys]
    assert p.locate_many(tuple(ascii_keys)) == one
    assert p.locate_many(ascii_keys + ["é"]) == one + [p.locate("é")]
    assert p.locate_many(ascii_keys + [b"k1"]) == one + [p.locate("k1")]
    assert p.locate_many(k for k in ascii_keys) == one
    assert p.locate_many({"only": 1}) == [p.locate("only")]
