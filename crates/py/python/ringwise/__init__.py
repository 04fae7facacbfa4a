"""ringwise: consistent hashing at native speed.

Every placement algorithm of the Rust library ``ringwise`` behind one
immutable, thread-safe :class:`Placement`:

>>> import ringwise
>>> ring = ringwise.Placement(["cache-a", "cache-b", "cache-c"])
>>> ring.locate("user:42") in ring.nodes
True
>>> ring.locate("é") == ring.locate("é".encode())
True
>>> ring.locate_many(["user:1", "user:2"]) == [ring.locate("user:1"), ring.locate("user:2")]
True
>>> bigger = ring.with_node("cache-d", weight=2)
>>> (len(ring), len(bigger))
(3, 4)

Each algorithm also has a class of its own, whose instances are
placements of that algorithm:

>>> jump = ringwise.Jump(["a", "b", "c"])
>>> jump.algorithm, isinstance(jump, ringwise.Jump), isinstance(jump, ringwise.Ring)
('jump', True, False)

Errors are classes of their own, all subclasses of :class:`Error` and of
the built-in exception a caller would catch:

>>> try:
...     ringwise.Placement([]).locate("k")
... except LookupError as e:
...     type(e).__name__
'EmptyError'
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Tuple, Union

from . import _ringwise
from ._ringwise import (
    ALGORITHMS,
    FLAVORS,
    HASHES,
    ClusterFileError,
    DuplicateNodeError,
    EmptyError,
    Error,
    InvalidLayoutError,
    InvalidNameError,
    InvalidParameterError,
    InvalidSecretError,
    InvalidVnodesError,
    InvalidWeightError,
    InvalidZoneError,
    Placement,
    TooManyPointsError,
    UnknownAlgorithmError,
    UnknownHashError,
    UnknownNodeError,
    UnsupportedError,
    cassandra_token,
    simulate,
)

__version__: str = _ringwise.__version__

Nodes = Union[
    Iterable[Union[str, Tuple[str, float], Tuple[str, float, "str | None"]]],
    Mapping[str, float],
]


class _AlgorithmClass(type):
    """Calling the class builds a :class:`Placement` of its algorithm;
    ``isinstance(p, Ring)`` asks whether ``p`` is a placement of it."""

    algorithm: str

    def __call__(cls, nodes: Nodes = (), **options: Any) -> Placement:  # type: ignore[override]
        return Placement(nodes, algorithm=cls.algorithm, **options)

    def __instancecheck__(cls, obj: object) -> bool:
        return isinstance(obj, Placement) and obj.algorithm == cls.algorithm

    def from_toml(cls, text: str) -> Placement:
        """A placement from a cluster file's text whose algorithm is this one."""
        placement = Placement.from_toml(text)
        if placement.algorithm != cls.algorithm:
            raise ClusterFileError(
                f"cluster file: algorithm {placement.algorithm!r}, expected {cls.algorithm!r}"
            )
        return placement


class Ring(metaclass=_AlgorithmClass):
    """The Karger ring with virtual nodes (``vnodes`` per unit of weight).

    >>> Ring(["a", "b"], vnodes=100, hash="md5").hash
    'md5'
    """

    algorithm = "ring"


class Rendezvous(metaclass=_AlgorithmClass):
    """Weighted highest random weight.

    >>> Rendezvous({"a": 1, "b": 3}).replicas("k", 2) in (["a", "b"], ["b", "a"])
    True
    """

    algorithm = "rendezvous"


class Jump(metaclass=_AlgorithmClass):
    """Lamping & Veach's jump hash; buckets in listed order, unweighted.

    >>> Jump(["a", "b", "c"]).without_node("c").nodes
    ['a', 'b']
    """

    algorithm = "jump"


class Memento(metaclass=_AlgorithmClass):
    """Jump hash plus a table of removed buckets: any node may leave.

    >>> Memento(["a", "b", "c"]).without_node("b").nodes
    ['a', 'c']
    """

    algorithm = "memento"


class JumpBack(metaclass=_AlgorithmClass):
    """Ertl's JumpBackHash (Hash4j's, bit for bit): jump's buckets in constant time.

    >>> JumpBack(["a", "b", "c"]).without_node("c").nodes
    ['a', 'b']
    """

    algorithm = "jumpback"


class Binomial(metaclass=_AlgorithmClass):
    """Coluzzi, Brocco and Antonucci's BinomialHash: buckets in listed order, unweighted.

    >>> Binomial(["a", "b"]).with_node("c").nodes
    ['a', 'b', 'c']
    """

    algorithm = "binomial"


class FlipHash(metaclass=_AlgorithmClass):
    """Masson and Lee's FlipHash (the ``fliphash`` crate's, bit for bit), unweighted.

    >>> FlipHash(["a", "b"]).algorithm
    'fliphash'
    """

    algorithm = "fliphash"


class Anchor(metaclass=_AlgorithmClass):
    """AnchorHash: a fixed ``capacity`` of buckets, any node may leave.

    >>> Anchor(["a", "b", "c"], capacity=8).without_node("b").nodes
    ['a', 'c']
    """

    algorithm = "anchor"


class Dx(metaclass=_AlgorithmClass):
    """DxHash: pseudo-random probes of a fixed ``capacity`` of buckets.

    >>> Dx(["a", "b", "c"], capacity=8).without_node("a").nodes
    ['b', 'c']
    """

    algorithm = "dx"


class Maglev(metaclass=_AlgorithmClass):
    """Google's Maglev lookup table (``table_size``, a prime).

    >>> Maglev(["a", "b"], table_size=251).locate("k") in ("a", "b")
    True
    """

    algorithm = "maglev"


class MultiProbe(metaclass=_AlgorithmClass):
    """One point per node, ``probes`` probes per key.

    >>> MultiProbe(["a", "b"], probes=5).algorithm
    'multiprobe'
    """

    algorithm = "multiprobe"


class Slots(metaclass=_AlgorithmClass):
    """Redis Cluster's 16384 hash slots (keys through CRC16, with tags).

    >>> Slots(["a", "b"]).hash
    'redis-crc16'
    """

    algorithm = "slots"


class Ketama(metaclass=_AlgorithmClass):
    """The memcached clients' ketama ring, per client ``flavor``.

    >>> Ketama(["10.0.0.1:11211", "10.0.0.2:11211"], flavor="uhashring").algorithm
    'ketama'
    """

    algorithm = "ketama"


class Nginx(metaclass=_AlgorithmClass):
    """nginx's ``hash $key consistent``.

    >>> Nginx(["10.0.0.1:80"]).locate("/index.html")
    '10.0.0.1:80'
    """

    algorithm = "nginx"


class EnvoyRing(metaclass=_AlgorithmClass):
    """Envoy's ``RING_HASH`` load balancer.

    >>> EnvoyRing(["a", "b"], min_ring_size=64, max_ring_size=1024).algorithm
    'envoy-ring'
    """

    algorithm = "envoy-ring"


class GrpcRing(metaclass=_AlgorithmClass):
    """gRPC's ``ring_hash`` policy: Envoy's ring, both sizes capped.

    >>> GrpcRing(["a", "b"], min_ring_size=8192, max_ring_size=8192).stats()["points"]
    4096
    """

    algorithm = "grpc-ring"


class Cassandra(metaclass=_AlgorithmClass):
    """A Cassandra ring of Murmur3 tokens (``num_tokens`` per node).

    >>> Cassandra(["n1", "n2"], num_tokens=4).stats()["points"]
    8
    """

    algorithm = "cassandra"


class VarnishShard(metaclass=_AlgorithmClass):
    """Varnish's ``directors.shard()``: ``shard_replicas`` SHA-256 points per
    unit of weight (default 67), keys hashed as ``shard.key()`` does.

    >>> VarnishShard(["cache1", ("cache2", 2)], shard_replicas=100).stats()["points"]
    301
    """

    algorithm = "varnish-shard"


class Haproxy(metaclass=_AlgorithmClass):
    """HAProxy's ``hash-type consistent``: 16 points per unit of weight from
    each server's id (in listed order; a cluster file gives explicit ids),
    the nearest point wins; keys hashed with ``sdbm`` unless ``hash=`` says
    otherwise, ``avalanche=True`` as HAProxy's ``avalanche``.

    >>> Haproxy(["web1", ("web2", 2)]).stats()["points"]
    48
    >>> Haproxy(["web1", "web2"], avalanche=True).hash
    'sdbm'
    """

    algorithm = "haproxy"


class EnvoyRendezvous(metaclass=_AlgorithmClass):
    """Envoy's ``rendezvous_hash`` load-balancing policy (O(N) a lookup).

    >>> EnvoyRendezvous(["127.0.0.1:90", "127.0.0.1:91"]).hash
    'xxh64'
    """

    algorithm = "envoy-rendezvous"


class Dalli(metaclass=_AlgorithmClass):
    """Dalli's continuum (Ruby's memcached client): nodes named
    ``host:port``, ``floor(N·160·w / W)`` SHA-1 points each, a key to the
    greatest point ``<=`` its CRC-32.

    >>> Dalli(["10.0.0.1:11211", ("10.0.0.2:11211", 2)]).stats()["points"]
    319
    """

    algorithm = "dalli"


class RedisRb(metaclass=_AlgorithmClass):
    """redis-rb's ``Redis::Distributed``: nodes named by their client id
    (``redis://host:port/db``), 160 CRC-32 points each, redis-rb's
    ``{tag}`` rule at the start of a key.

    >>> r = RedisRb(["redis://10.0.0.1:6379/0", "redis://10.0.0.2:6379/0"])
    >>> r.locate("{user:1}:cart") == r.locate("{user:1}:profile")
    True
    """

    algorithm = "redis-rb"


class Groupcache(metaclass=_AlgorithmClass):
    """groupcache's ``consistenthash``: ``groupcache_replicas`` points per
    peer (default 50), ``crc32(itoa(i) + peer)``.

    >>> Groupcache(["http://10.0.0.1:8080", "http://10.0.0.2:8080"]).stats()["points"]
    100
    """

    algorithm = "groupcache"


class PhpMemcache(metaclass=_AlgorithmClass):
    """pecl memcache's ``hash_strategy = consistent``: ``160·weight`` points
    per ``host:port``, keys through 1024 buckets; ``hash="fnv1a32-php"``
    for ``hash_function = fnv``.

    >>> PhpMemcache(["10.0.0.1:11211", ("10.0.0.2:11211", 2)]).stats()["points"]
    480
    """

    algorithm = "php-memcache"


class GoRedis(metaclass=_AlgorithmClass):
    """go-redis ``Ring``'s rendezvous (go-rendezvous): shard names hashed
    with xxh64, keys through Redis Cluster's ``{}`` tag.

    >>> GoRedis(["shard1", "shard2", "shard3"]).locate("user:1")
    'shard2'
    """

    algorithm = "go-redis"


__all__ = [
    "ALGORITHMS",
    "FLAVORS",
    "HASHES",
    "Anchor",
    "Binomial",
    "Cassandra",
    "ClusterFileError",
    "Dalli",
    "DuplicateNodeError",
    "Dx",
    "EmptyError",
    "EnvoyRendezvous",
    "EnvoyRing",
    "Error",
    "FlipHash",
    "GoRedis",
    "Groupcache",
    "GrpcRing",
    "Haproxy",
    "InvalidLayoutError",
    "InvalidNameError",
    "InvalidParameterError",
    "InvalidSecretError",
    "InvalidVnodesError",
    "InvalidWeightError",
    "InvalidZoneError",
    "Jump",
    "JumpBack",
    "Ketama",
    "Maglev",
    "Memento",
    "MultiProbe",
    "Nginx",
    "PhpMemcache",
    "Placement",
    "RedisRb",
    "Rendezvous",
    "Ring",
    "Slots",
    "TooManyPointsError",
    "UnknownAlgorithmError",
    "UnknownHashError",
    "UnknownNodeError",
    "UnsupportedError",
    "VarnishShard",
    "cassandra_token",
    "simulate",
]

# The drop-ins (the article's ConsistentHashRing, uhashring's HashRing),
# importable as ringwise.compat after a bare `import ringwise`. Last: it
# builds on the names above.
from . import compat  # noqa: E402
