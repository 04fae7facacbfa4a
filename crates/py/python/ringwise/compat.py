"""Drop-in replacements for the two rings Python users already have.

* :class:`ConsistentHashRing` and :func:`rendezvous`: the classes of the seed
  article ("Консистентное хеширование: кольцо хешей, виртуальные узлы и код на
  Python"), same placement bit for bit (MD5 recipe: a node's points are the
  first 8 bytes, big-endian, of ``md5(f"{node}#{i}")``).
* :class:`HashRing`: uhashring 2.5's ``HashRing(hash_fn="ketama")``, same
  placement (ringwise's ``ketama`` algorithm, ``uhashring`` flavour).

Both are thin Python over :class:`ringwise.Placement`: every lookup is one
call into the native library on an immutable snapshot.

>>> from ringwise.compat import ConsistentHashRing
>>> ring = ConsistentHashRing(vnodes=100)
>>> for name in ("cache-a", "cache-b", "cache-c"):
...     ring.add_node(name)
>>> ring.get_node("user:42")
'cache-a'
>>> ring.get_nodes("user:42", 2)
['cache-a', 'cache-b']
"""

from __future__ import annotations

import hashlib
import operator
import threading
from bisect import bisect
from collections import Counter
from typing import Any, Callable, Dict, Iterable, Iterator, List, Mapping, Optional, Tuple, Union

import ringwise
from ringwise import _ringwise

__all__ = [
    "ConsistentHashRing",
    "HashRing",
    "UnsupportedOptionError",
    "rendezvous",
    "ring_hash",
]


class UnsupportedOptionError(ringwise.Error, NotImplementedError):
    """An option of the original library that ringwise.compat does not reproduce.

    Raised by :class:`HashRing` for ``hash_fn`` other than ``"ketama"``, for
    ``vnodes`` other than 40 and for ``replicas`` other than 4.
    """


# --- the seed article -------------------------------------------------------


def ring_hash(value: str) -> int:
    """The article's stable 64-bit hash: the first 8 bytes of MD5, big-endian.

    >>> ring_hash("user:42") == int.from_bytes(hashlib.md5(b"user:42").digest()[:8], "big")
    True
    """
    digest = hashlib.md5(value.encode()).digest()
    return int.from_bytes(digest[:8], "big")


def rendezvous(key: str, nodes: Iterable[str]) -> str:
    """The article's one-line rendezvous (highest random weight) hashing.

    Exactly ``max(nodes, key=lambda node: ring_hash(f"{node}:{key}"))``: the
    node whose ``ring_hash(f"{node}:{key}")`` is largest (the first listed of
    equal ones); ``ValueError`` for no nodes, as ``max`` raises. One
    ``str`` (or ``bytes``...) as ``nodes`` raises ``TypeError``: the article's
    ``max`` would pick one of its characters. Kept in
    Python on purpose: the article's text (``node:key``) is not the layout of
    ringwise's own ``Rendezvous`` algorithm, and at the article's sizes (tens
    of nodes) the MD5s dominate anyway.

    >>> rendezvous("user:42", ["cache-a", "cache-b", "cache-c"]) in {"cache-a", "cache-b", "cache-c"}
    True
    """
    if isinstance(nodes, (str, bytes, bytearray, memoryview)):
        raise TypeError(
            f"rendezvous expects an iterable of nodes, got a {type(nodes).__name__}:"
            " wrap one node in a list"
        )
    return max(nodes, key=lambda node: ring_hash(f"{node}:{key}"))


def _empty() -> ringwise.EmptyError:
    return ringwise.EmptyError("the ring has no nodes")


class ConsistentHashRing:
    """The article's ``ConsistentHashRing``, backed by ringwise.

    Same constructor and methods as the article's class, same answers for
    every key (it is ``ringwise.Placement(nodes, algorithm="ring",
    hash="md5", vnodes=vnodes)`` with the integer weights in the order the
    nodes were added)::

        >>> ring = ConsistentHashRing(vnodes=100)
        >>> for name in ("cache-a", "cache-b", "cache-c"):
        ...     ring.add_node(name)
        >>> print(ring.get_node("user:42"))
        cache-a
        >>> print(ring.get_nodes("user:42", 2))
        ['cache-a', 'cache-b']
        >>> ring.remove_node(ring.get_node("user:42"))
        >>> print(ring.get_node("user:42"))
        cache-b

    Threads. The article closes by warning that its class is not safe to
    change while other threads read it (``add_node`` extends and re-sorts the
    list in place, so a reader can bisect a half-sorted ring). Here every
    change builds a new immutable :class:`ringwise.Placement` and publishes
    it with one attribute assignment: a reader sees the ring before the
    change or after it, never a half-built one. Writers are serialised by a
    lock, so concurrent ``add_node``/``remove_node`` calls never lose each
    other's changes.

    Cost of a change: ``add_node`` hashes only the new node's ``k = vnodes *
    weight`` points and merges them into a copy of the snapshot's sorted
    points, O(k log k + P) for P points on the ring (the P part is a copy of
    12-byte entries, about a millisecond per million points); ``remove_node``
    copies the other nodes' points, O(P). Nobody else's points are hashed
    again. (The article's ``add_node`` re-sorts its whole list of tuples.)

    Where this class differs from the article, on purpose:

    * Empty ring: ``get_node``/``get_nodes`` raise ``LookupError``
      (``ringwise.EmptyError``, a subclass), as the article's text does. The
      bare recipe without that check fails with ``ZeroDivisionError``.
    * Adding a node that is already on the ring with the **same** weight is a
      no-op, as in the article (its duplicate points change no answer). With
      a **different** weight the article silently keeps the larger of the two
      (it re-adds points ``#0``.. on top of the old ones, and ``remove_node``
      is the only way back down); here it raises
      ``ringwise.DuplicateNodeError`` (a ``ValueError``): remove the node
      first to change its weight.
    * Removing a node that is not on the ring is a no-op, as in the article
      (harmless: the ring is unchanged).
    * Weights must be integers (``operator.index``: ``int``, ``bool``,
      NumPy integers); anything else raises ``TypeError`` (the article's
      ``range`` raises it too). A weight below 1 raises
      ``ringwise.InvalidWeightError`` (a ``ValueError``); the article
      silently adds a node that owns nothing. ``vnodes`` below 1 raises
      ``ringwise.InvalidVnodesError`` (the article builds a ring that can
      never answer).
    * Node names must be ``str`` (``TypeError`` otherwise; the article
      formats any object into its points) and valid ringwise names
      (``ringwise.InvalidNameError`` otherwise).
    * Keys may be ``str`` (UTF-8, as the article encodes them) or ``bytes``
      (the same bytes; the article raises ``AttributeError`` for them).
    * ``get_nodes(key, 0)`` returns ``[]`` and a negative count raises
      ``ValueError``; the article returns every node for both.
    """

    def __init__(self, vnodes: int = 100) -> None:
        vnodes = operator.index(vnodes)
        if vnodes < 1:
            raise ringwise.InvalidVnodesError(f"vnodes must be at least 1, got {vnodes}")
        self.vnodes: int = vnodes
        # Writers only: the members in the order they were added.
        self._members: Dict[str, int] = {}
        # The snapshot readers use; None while the ring is empty.
        self._placement: Optional[ringwise.Placement] = None
        self._lock = threading.Lock()

    def _publish(self, members: Dict[str, int], placement: Optional[ringwise.Placement]) -> None:
        self._members = members
        self._placement = placement  # the one assignment readers see
        # Fast path: on a non-empty ring, `ring.get_node` is the snapshot's own
        # native `locate` (an instance attribute shadowing the method below),
        # which saves the Python frame of a wrapper (about 40-100 ns of the
        # ~450 ns a lookup costs). It is rebound right after `_placement`, to
        # the same snapshot; a reader that fetched either sees a whole ring.
        if placement is None:
            self.__dict__.pop("get_node", None)
        else:
            self.__dict__["get_node"] = placement.locate

    def add_node(self, node: str, weight: int = 1) -> None:
        """Put ``node`` on the ring with ``vnodes * weight`` points."""
        if not isinstance(node, str):
            raise TypeError(f"node must be a str, got {type(node).__name__}")
        weight = operator.index(weight)
        if weight < 1:
            raise ringwise.InvalidWeightError(
                f"weight of {node!r} must be a whole number of at least 1, got {weight}"
            )
        with self._lock:
            old = self._members.get(node)
            if old == weight:
                return
            if old is not None:
                raise ringwise.DuplicateNodeError(
                    f"{node!r} is already on the ring with weight {old};"
                    f" remove it before adding it with weight {weight}"
                )
            # Only the new node's points are made (k = vnodes * weight MD5s),
            # then merged into a copy of the current snapshot's sorted points
            # (`Placement.with_node`): O(k log k + P), not a rebuild of all P.
            current = self._placement
            if current is None:
                placement = ringwise.Placement(
                    [(node, weight)], algorithm="ring", hash="md5", vnodes=self.vnodes
                )
            else:
                placement = current.with_node(node, weight)
            members = dict(self._members)
            members[node] = weight
            self._publish(members, placement)

    def remove_node(self, node: str) -> None:
        """Take ``node`` and all its points off the ring (no-op when absent)."""
        with self._lock:
            if node not in self._members:
                return
            members = dict(self._members)
            del members[node]
            # The node's points are filtered out of a copy (O(P)); nobody's
            # points are made again.
            current = self._placement
            placement = current.without_node(node) if members and current is not None else None
            self._publish(members, placement)

    def get_node(self, key: Union[str, bytes]) -> str:
        """The node owning ``key``: the first point at or after its hash, wrapping."""
        placement = self._placement
        if placement is None:
            raise _empty()
        return placement.locate(key)

    def get_nodes(self, key: Union[str, bytes], count: int) -> List[str]:
        """The first ``count`` distinct nodes clockwise from ``key`` (for replicas)."""
        count = operator.index(count)
        if count < 0:
            raise ValueError(f"count must not be negative, got {count}")
        placement = self._placement
        if placement is None:
            raise _empty()
        if count == 0:
            return []
        return placement.replicas(key, count)

    @property
    def nodes(self) -> Dict[str, int]:
        """A copy of the members and their weights, in the order they were added."""
        return dict(self._members)

    @property
    def placement(self) -> Optional[ringwise.Placement]:
        """The current immutable snapshot (``None`` while empty)."""
        return self._placement

    def __len__(self) -> int:
        return len(self._members)

    def __contains__(self, node: object) -> bool:
        return node in self._members

    def __repr__(self) -> str:
        return f"ConsistentHashRing(vnodes={self.vnodes}, nodes={self._members!r})"


# --- uhashring --------------------------------------------------------------

_KETAMA_VNODES = 40
_KETAMA_REPLICAS = 4

_NodeConf = Dict[str, Any]


# uhashring's ketama key hash, ``hashi(key, replica=0)``: bytes ``4*replica``
# to ``4*replica + 4`` of ``md5(str(key))``, little-endian; the library's
# ``md5-le32`` words, computed natively.
_ketama_hashi = _ringwise.uhashring_hashi


class _Continuum:
    """uhashring's ``_keys``/``_ring``/``_distribution``, made on demand.

    The points are the library's own (``ketama``, ``uhashring`` flavour:
    ``ringwise._ringwise.uhashring_continuum``). Only the positional methods
    (``get_points``, ``get_server``, ``get_node_pos``, ``range``, ``ring``...)
    need it; lookups do not.
    """

    __slots__ = ("keys", "ring", "distribution")

    def __init__(self, nodes: Mapping[str, _NodeConf]) -> None:
        keys, ring, distribution = _ringwise.uhashring_continuum(
            [(name, conf["weight"]) for name, conf in nodes.items()]
        )
        self.keys: List[int] = keys
        self.ring: Dict[int, str] = ring
        self.distribution: Counter[str] = Counter(distribution)


class _Snapshot:
    """One immutable state of a :class:`HashRing`."""

    __slots__ = ("nodes", "placement", "_continuum")

    def __init__(self, nodes: Dict[str, _NodeConf], placement: Optional[ringwise.Placement]):
        self.nodes = nodes
        self.placement = placement
        self._continuum: Optional[_Continuum] = None

    @property
    def continuum(self) -> _Continuum:
        if self._continuum is None:
            self._continuum = _Continuum(self.nodes)
        return self._continuum


class HashRing:
    """uhashring 2.5's ``HashRing`` with ``hash_fn="ketama"``, backed by ringwise.

    Same constructor, methods and answers as ``uhashring.HashRing(nodes,
    hash_fn="ketama")``: a node of weight ``w`` among ``n`` nodes of total
    weight ``W`` gets ``40*n*w // W`` MD5 digests of ``f"{name}-{i}"``, 4
    points each; a key goes to the first point strictly above the first
    four bytes of ``md5(str(key))`` (little-endian), wrapping; of two nodes
    with the same point the one added later wins. Lookups are
    ``ringwise.Placement(nodes, algorithm="ketama", flavor="uhashring")``;
    the listed order is the order the nodes were added (a dict's order).

    >>> ring = HashRing(nodes={"node1": 1, "node2": {"weight": 2, "instance": "redis2"}},
    ...                 hash_fn="ketama")
    >>> ring.get_node("coconut") in ("node1", "node2")
    True
    >>> ring.get_node_weight("coconut") in (1, 2)
    True
    >>> sorted(ring.get_nodes())
    ['node1', 'node2']

    Node configuration, as uhashring: ``nodes`` is a name, a list of names
    (weight 1), or a dict mapping each name to an ``int`` weight or to a dict
    with any of ``hostname``, ``instance``, ``nodename``, ``port``,
    ``vnodes``, ``weight``. ``weight_fn(**conf)``, if given, computes each
    node's weight.

    Differences from uhashring, on purpose:

    * ``hash_fn`` must be ``"ketama"``: uhashring's default ring (its
      ``MetaRing``, 160 vnodes, md5 or a user callable) is not reproduced and
      any other ``hash_fn`` raises :class:`UnsupportedOptionError` (a
      ``ringwise.Error`` and a ``NotImplementedError``). So do ``vnodes``
      (constructor or node conf) other than 40 and ``replicas`` other than 4,
      the only values ringwise's ``uhashring`` flavour computes.
    * Weights must be whole numbers of at least 1 (``InvalidWeightError``,
      a ``ValueError``); uhashring fails later with ``TypeError`` on floats
      and divides by zero when every weight is 0.
    * Node names must be ``str`` (``TypeError``); uhashring formats any
      object into its points.
    * Changes publish a new immutable snapshot in one attribute assignment,
      so readers in other threads never see a half-built ring (uhashring
      rebuilds its lists in place). ``nodes``/``conf`` return the snapshot's
      dict: treat it as read-only and change nodes through ``add_node``,
      ``remove_node`` and item assignment.

    Kept as uhashring does it: an empty ring answers ``None`` to every
    getter (no exception); removing an unknown node raises ``KeyError``
    (``ringwise.UnknownNodeError``, a subclass); ``get_nodes()`` takes no
    key and returns every configured node name.
    """

    def __init__(self, nodes: Union[str, List[str], Dict[str, Any]] = [], **kwargs: Any) -> None:
        hash_fn = kwargs.get("hash_fn", None)
        vnodes = kwargs.get("vnodes", None)
        weight_fn = kwargs.get("weight_fn", None)
        replicas = kwargs.get("replicas", _KETAMA_REPLICAS)
        if hash_fn != "ketama":
            raise UnsupportedOptionError(
                f"ringwise.compat.HashRing reproduces uhashring's hash_fn='ketama' only, got {hash_fn!r}"
            )
        if vnodes is None:
            vnodes = _KETAMA_VNODES
        if vnodes != _KETAMA_VNODES:
            raise UnsupportedOptionError(f"uhashring's ketama ring with vnodes={vnodes!r} (only 40)")
        if replicas != _KETAMA_REPLICAS:
            raise UnsupportedOptionError(f"uhashring's ketama ring with replicas={replicas!r} (only 4)")
        if weight_fn and not callable(weight_fn):
            raise TypeError("weight_fn should be a callable function")
        self._default_vnodes: int = vnodes
        self._weight_fn: Optional[Callable[..., int]] = weight_fn
        self._lock = threading.Lock()
        self._snapshot = _Snapshot({}, None)
        with self._lock:
            self._configure_and_publish(nodes)

    # -- configuration -------------------------------------------------------

    def _configure_and_publish(self, nodes: Any, *, force: bool = False) -> None:
        """Apply uhashring's ``_configure_nodes`` to a copy; publish if it changed."""
        if isinstance(nodes, str):
            nodes = [nodes]
        elif not isinstance(nodes, (dict, list)):
            raise ValueError(
                "nodes configuration should be a list or a dict, got {}".format(type(nodes))
            )
        current = self._snapshot.nodes
        confs = dict(current)
        changed = force
        for node in nodes:
            if not isinstance(node, str):
                raise TypeError(f"node name must be a str, got {type(node).__name__}")
            conf: _NodeConf = {
                "hostname": node,
                "instance": None,
                "nodename": node,
                "port": None,
                "vnodes": self._default_vnodes,
                "weight": 1,
            }
            current_conf = current.get(node, {})
            if not current_conf:
                changed = True
            if isinstance(nodes, dict):
                node_conf = nodes[node]
                if isinstance(node_conf, int):
                    conf["weight"] = node_conf
                elif isinstance(node_conf, dict):
                    for k, v in node_conf.items():
                        if k in conf:
                            conf[k] = v
                            if k in ("nodename", "vnodes", "weight") and current_conf.get(k) != v:
                                changed = True
                else:
                    raise ValueError(
                        "node configuration should be a dict or an int, got {}".format(type(node_conf))
                    )
            if self._weight_fn:
                conf["weight"] = self._weight_fn(**conf)
            if current_conf.get("weight") != conf["weight"]:
                changed = True
            if conf["vnodes"] != _KETAMA_VNODES:
                raise UnsupportedOptionError(
                    f"node {node!r}: vnodes={conf['vnodes']!r} (ringwise reproduces uhashring's ketama ring with 40 only)"
                )
            weight = conf["weight"]
            if isinstance(weight, bool) or not isinstance(weight, int):
                raise ringwise.InvalidWeightError(
                    f"node {node!r}: weight must be a whole number, got {weight!r}"
                )
            if weight < 1:
                raise ringwise.InvalidWeightError(f"node {node!r}: weight must be at least 1, got {weight}")
            confs[node] = conf
        # Like uhashring, the confs are replaced even when the ring stays the
        # same (instance, hostname and port changes are visible at once).
        self._publish(confs, rebuild=changed)

    def _publish(self, confs: Dict[str, _NodeConf], rebuild: bool = True) -> None:
        if not rebuild:
            placement = self._snapshot.placement
        elif confs:
            placement = ringwise.Placement(
                [(name, conf["weight"]) for name, conf in confs.items()],
                algorithm="ketama",
                flavor="uhashring",
            )
        else:
            placement = None
        self._snapshot = _Snapshot(confs, placement)  # the one assignment readers see

    def __setitem__(self, nodename: str, conf: Union[int, Dict[str, Any]] = {"weight": 1}) -> None:
        """Add ``nodename`` (or change its configuration)."""
        with self._lock:
            self._configure_and_publish({nodename: conf})

    add_node = __setitem__

    def __delitem__(self, nodename: str) -> None:
        """Remove ``nodename``; ``KeyError`` (``ringwise.UnknownNodeError``) if absent."""
        with self._lock:
            current = self._snapshot.nodes
            if nodename not in current:
                raise ringwise.UnknownNodeError(
                    "node '{}' not found, available nodes: {}".format(nodename, current.keys())
                )
            confs = dict(current)
            del confs[nodename]
            self._publish(confs)

    remove_node = __delitem__

    def regenerate(self) -> None:
        """Re-evaluate ``weight_fn`` for every node and rebuild the ring."""
        with self._lock:
            self._configure_and_publish(dict(self._snapshot.nodes), force=True)

    # -- lookups ---------------------------------------------------------------

    def get_node(self, key: Any) -> Optional[str]:
        """The name of the node owning ``key`` (``None`` on an empty ring)."""
        placement = self._snapshot.placement
        if placement is None:
            return None
        return placement.locate(str(key))

    def _conf_of(self, key: Any) -> Optional[_NodeConf]:
        snapshot = self._snapshot
        if snapshot.placement is None:
            return None
        return snapshot.nodes[snapshot.placement.locate(str(key))]

    def get(self, key: Any) -> Optional[_NodeConf]:
        """The configuration dict of the node owning ``key``."""
        return self._conf_of(key)

    def __getitem__(self, key: Any) -> Any:
        """The ``instance`` of the node owning ``key``."""
        conf = self._conf_of(key)
        return None if conf is None else conf["instance"]

    get_node_instance = __getitem__

    def get_node_hostname(self, key: Any) -> Any:
        conf = self._conf_of(key)
        return None if conf is None else conf["hostname"]

    def get_node_port(self, key: Any) -> Any:
        conf = self._conf_of(key)
        return None if conf is None else conf["port"]

    def get_node_weight(self, key: Any) -> Optional[int]:
        conf = self._conf_of(key)
        return None if conf is None else conf["weight"]

    def hashi(self, key: Any, replica: int = 0) -> int:
        """uhashring's ketama hash of ``key``: 4 bytes of ``md5(str(key))``, little-endian."""
        return _ketama_hashi(key, replica)

    def get_key(self, key: Any) -> int:
        """Alias of :meth:`hashi` (hash_ring compatibility)."""
        return _ketama_hashi(key)

    def get_nodes(self) -> Any:
        """The names of all configured nodes (a dict keys view, as uhashring)."""
        return self._snapshot.nodes.keys()

    def get_instances(self) -> List[Any]:
        """The truthy ``instance`` of every configured node."""
        return [c.get("instance") for c in self._snapshot.nodes.values() if c.get("instance")]

    # -- positional views (the native continuum, made on first use per snapshot)

    def _pos(self, snapshot: _Snapshot, key: Any) -> int:
        keys = snapshot.continuum.keys
        p = bisect(keys, _ketama_hashi(key))
        return 0 if p == len(keys) else p

    def get_node_pos(self, key: Any) -> Optional[int]:
        """Index in :meth:`get_points` of the point owning ``key``."""
        snapshot = self._snapshot
        if snapshot.placement is None:
            return None
        return self._pos(snapshot, key)

    def get_server(self, key: Any) -> Optional[Tuple[int, str]]:
        """The ketama ``(point, nodename)`` tuple owning ``key``."""
        snapshot = self._snapshot
        if snapshot.placement is None:
            return None
        c = snapshot.continuum
        point = c.keys[self._pos(snapshot, key)]
        return (point, c.ring[point])

    def get_points(self) -> List[Tuple[int, str]]:
        """Every ``(point, nodename)``, ascending (equal points repeated, as uhashring)."""
        c = self._snapshot.continuum
        return [(k, c.ring[k]) for k in c.keys]

    def range(self, key: Any, size: Optional[int] = None, unique: bool = True) -> Iterator[_NodeConf]:
        """Node configurations clockwise from ``key`` (distinct unless ``unique=False``)."""
        snapshot = self._snapshot
        c = snapshot.continuum
        seen: Any = set() if unique else []
        if unique:
            size = size or len(snapshot.nodes)
        if not c.keys:
            return
        pos = self._pos(snapshot, key)
        for point in c.keys[pos:] + c.keys[:pos]:
            name = c.ring[point]
            if unique:
                if name in seen:
                    continue
                seen.add(name)
            else:
                seen.append(name)
            yield snapshot.nodes[name]
            if len(seen) == size:
                break

    def iterate_nodes(self, key: Any, distinct: bool = True) -> Iterator[Optional[str]]:
        """hash_ring compatibility: node names clockwise from ``key``."""
        if self._snapshot.placement is None:
            yield None
        else:
            for conf in self.range(key, unique=distinct):
                yield conf["nodename"]

    def print_continuum(self) -> None:
        """Print a ketama-style continuum report."""
        points = self.get_points()
        if points:
            print(f"Numpoints in continuum: {len(points)}")
        else:
            print("Continuum empty")
        for point, node in points:
            print(f"{node} ({point})")

    @property
    def conf(self) -> Dict[str, _NodeConf]:
        """Every node's configuration dict, in the order added (read-only by convention)."""
        return self._snapshot.nodes

    nodes = conf

    @property
    def distribution(self) -> Counter[str]:
        """Points per node name (a ``Counter``)."""
        return Counter(self._snapshot.continuum.distribution)

    @property
    def ring(self) -> Dict[int, str]:
        """Point to node name (the later-added node for a shared point)."""
        return dict(self._snapshot.continuum.ring)

    continuum = ring

    @property
    def size(self) -> int:
        """Number of distinct points."""
        return len(self._snapshot.continuum.ring)

    @property
    def placement(self) -> Optional[ringwise.Placement]:
        """The current immutable ringwise snapshot (``None`` while empty)."""
        return self._snapshot.placement
