"""Every constructor form uhashring 2.5 documents, against the real uhashring.

For each form (``nodes`` as a name, a list, a dict of weights or of node
configurations; ``hash_fn`` None, "ketama" or a callable; ``vnodes``,
``replicas``, ``compat``, ``weight_fn``), a seeded random sequence of
add/change/remove steps runs on ``ringwise.compat.HashRing`` and on
``uhashring.HashRing`` side by side; after every step both must place 1,000
keys on the same nodes and agree on the node set, the configurations, the
distribution, the points and the positional getters.
"""

from __future__ import annotations

import hashlib
import random
import zlib

import pytest

import ringwise
from ringwise import compat

uhashring = pytest.importorskip("uhashring")


def crc_mod(key):
    """A user hash with many collisions (2,000 values): exercises uhashring's
    dict rule for shared points (the later writer owns; removing it drops the
    point)."""
    return zlib.crc32(str(key).encode()) % 2000


def signed32(key):
    """Like mmh3.hash: signed 32-bit integers."""
    return zlib.crc32(str(key).encode()) - 2**31


def sha1_text(key):
    """Not an int at all: hex strings, ordered as strings."""
    return hashlib.sha1(str(key).encode()).hexdigest()


def weight_by_digit(**conf):
    return sum(map(ord, conf["nodename"])) % 3 + 1


NAMES = [f"node{i}" for i in range(1, 10)] + ["10.0.0.1:11211", "кэш-7", "172.31.1.125", "172.31.1.202"]

NODE_FORMS = {
    "name": "node1",
    "list": ["node1", "node2", "node3"],
    "weights": {"node1": 1, "node2": 3, "node3": 2},
    "configs": {
        "node1": {"hostname": "node1.fqdn", "instance": "redis-1", "port": 6379, "vnodes": 40, "weight": 1},
        "node2": {"hostname": "node2.fqdn", "instance": "redis-2", "port": 6379, "vnodes": 40},
        "node3": {"hostname": "node3.fqdn", "instance": "redis-3", "port": 6379, "weight": 3},
        "node4": {"nodename": "fourth", "vnodes": 7},
    },
    "empty": [],
}

OPTION_FORMS = {
    "default": {},
    "default-explicit": {"hash_fn": None},
    "default-vnodes40": {"vnodes": 40},
    "default-vnodes7": {"vnodes": 7},
    "default-compat": {"compat": True},
    "default-replicas-ignored": {"replicas": 2},
    "default-weight_fn": {"weight_fn": weight_by_digit},
    "ketama": {"hash_fn": "ketama"},
    "ketama-vnodes80": {"hash_fn": "ketama", "vnodes": 80},
    "ketama-replicas1": {"hash_fn": "ketama", "replicas": 1},
    "ketama-replicas3-vnodes9": {"hash_fn": "ketama", "replicas": 3, "vnodes": 9},
    "ketama-weight_fn": {"hash_fn": "ketama", "weight_fn": weight_by_digit},
    "callable-colliding": {"hash_fn": crc_mod},
    "callable-signed": {"hash_fn": signed32, "vnodes": 20},
    "callable-text": {"hash_fn": sha1_text, "vnodes": 10},
}

FORMS = [
    (nodes, options)
    for options in OPTION_FORMS
    for nodes in NODE_FORMS
    # The full cross product for the default ring and ketama; a callable
    # hash runs in Python (slow in both): its forms with two node shapes.
    if not options.startswith("callable") or nodes in ("list", "configs")
]


def random_conf(rng: random.Random):
    """One of the shapes add_node/item assignment take."""
    choice = rng.randrange(6)
    if choice == 0:
        return None  # add_node(name): weight 1
    if choice == 1:
        return rng.randint(1, 4)
    if choice == 2:
        return {"weight": rng.randint(1, 4)}
    if choice == 3:
        return {"weight": rng.randint(1, 3), "instance": f"inst-{rng.randrange(100)}", "port": 11211}
    if choice == 4:
        return {"vnodes": rng.choice([5, 40, 60]), "hostname": "h"}
    return {"instance": f"only-instance-{rng.randrange(100)}"}  # no ring change


def same_state(ours, theirs, probe, label):
    assert [ours.get_node(k) for k in probe] == [theirs.get_node(k) for k in probe], label
    assert list(ours.get_nodes()) == list(theirs.get_nodes()), label
    assert ours.nodes == theirs.nodes, label
    assert ours.distribution == theirs.distribution, label
    assert ours.size == theirs.size, label
    assert ours.get_points() == theirs.get_points(), label
    assert ours.get_instances() == theirs.get_instances(), label
    for key in probe[:60]:
        assert ours.get_server(key) == theirs.get_server(key), (label, key)
        assert ours.get_node_pos(key) == theirs.get_node_pos(key), (label, key)
        assert ours.get(key) == theirs.get(key), (label, key)
        assert ours[key] == theirs[key], (label, key)
        assert ours.get_key(key) == theirs.get_key(key), (label, key)
    assert list(ours.range(probe[0])) == list(theirs.range(probe[0])), label
    assert list(ours.range(probe[1], size=2)) == list(theirs.range(probe[1], size=2)), label
    assert list(ours.iterate_nodes(probe[2], distinct=False))[:300] == list(
        theirs.iterate_nodes(probe[2], distinct=False)
    )[:300], label


@pytest.mark.parametrize("nodes_form,options_form", FORMS)
def test_every_form_matches_uhashring_at_every_step(nodes_form, options_form):
    nodes, options = NODE_FORMS[nodes_form], OPTION_FORMS[options_form]
    seed = zlib.crc32(f"{nodes_form}/{options_form}".encode())
    rng = random.Random(seed)
    # Keys of every kind uhashring takes (it hashes str(key)); callables get
    # the key itself.
    probe = [f"user:{rng.randrange(10**9)}" for _ in range(990)] + [0, 7, -3, 2.5, None, "", "coconut", b"b", ("t", 1), "节点"]
    ours = compat.HashRing(nodes, **options)
    theirs = uhashring.HashRing(nodes, **options)
    same_state(ours, theirs, probe, ("start", nodes_form, options_form))
    steps = 8 if options_form.startswith("callable") else 14
    for step in range(steps):
        action = rng.random()
        name = rng.choice(NAMES)
        present = name in theirs.get_nodes()
        if action < 0.35 and present:
            ours.remove_node(name)
            theirs.remove_node(name)
        elif action < 0.45:
            if present:
                del ours[name]
                del theirs[name]
            else:
                with pytest.raises(KeyError):
                    del theirs[name]
                with pytest.raises(ringwise.UnknownNodeError):
                    del ours[name]
        else:
            conf = random_conf(rng)
            if conf is None:
                ours.add_node(name)
                theirs.add_node(name)
            elif isinstance(conf, int) or rng.random() < 0.5:
                ours[name] = conf
                theirs[name] = conf
            else:
                ours.add_node(name, dict(conf))
                theirs.add_node(name, dict(conf))
        same_state(ours, theirs, probe, (step, nodes_form, options_form))
    if options.get("weight_fn"):
        ours.regenerate()
        theirs.regenerate()
        same_state(ours, theirs, probe, ("regenerate", nodes_form, options_form))


def test_the_default_ring_is_what_uhashring_documents():
    """uhashring's README example: HashRing(nodes=[...]) with no hash_fn,
    160 points per node, md5 of f"{name}-{i}" as 128-bit integers."""
    ring = compat.HashRing(nodes=["node1", "node2", "node3"])
    assert ring.distribution == {"node1": 160, "node2": 160, "node3": 160}
    assert ring.size == 480
    point, owner = ring.get_points()[0]
    assert point == min(
        int(hashlib.md5(f"{n}-{i}".encode()).hexdigest(), 16) for n in ("node1", "node2", "node3") for i in range(160)
    )
    assert ring.get_key("coconut") == int(hashlib.md5(b"coconut").hexdigest(), 16)
    assert ring.placement is None  # not a library Placement: 128-bit points
    with pytest.raises(TypeError):
        ring.hashi("coconut", 1)  # uhashring's MetaRing.hashi takes the key only


def test_colliding_user_hash_follows_uhashring_dict_rule():
    """Two nodes writing the same point: the later owns it, and removing the
    later drops the point altogether (the earlier does not get it back)."""
    ours = compat.HashRing(["a", "b"], hash_fn=lambda k: len(str(k)) % 4, vnodes=3)
    theirs = uhashring.HashRing(["a", "b"], hash_fn=lambda k: len(str(k)) % 4, vnodes=3)
    assert ours.ring == theirs.ring == {3: "b"}
    for ring in (ours, theirs):
        ring.remove_node("b")
    assert ours.ring == theirs.ring == {}
    assert ours.get_node("xyz") is theirs.get_node("xyz") is None
    assert list(ours.get_nodes()) == list(theirs.get_nodes()) == ["a"]
    assert ours.distribution == theirs.distribution


def test_incremental_default_ring_equals_a_fresh_one():
    """The native default ring changes one node at a time; after 60 seeded
    changes it answers as a ring made from scratch of the same nodes."""
    rng = random.Random(55)
    ring = compat.HashRing([f"n{i}" for i in range(5)])
    probe = [f"k{rng.randrange(10**9)}" for _ in range(2000)]
    for _ in range(60):
        name = f"n{rng.randrange(12)}"
        if name in ring.get_nodes() and rng.random() < 0.5:
            ring.remove_node(name)
        else:
            ring.add_node(name, {"weight": rng.randint(1, 3), "vnodes": rng.choice([10, 160])})
        fresh = compat.HashRing({n: dict(c) for n, c in ring.nodes.items()})
        assert [ring.get_node(k) for k in probe] == [fresh.get_node(k) for k in probe]
        assert ring.get_points() == fresh.get_points()
