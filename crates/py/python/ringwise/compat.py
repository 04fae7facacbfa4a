"""Drop-in replacements for the two rings Python users already have.

* :class:`ConsistentHashRing` and :func:`rendezvous`: the classes of the seed
  article ("Консистентное хеширование: кольцо хешей, виртуальные узлы и код на
  Python"), same placement bit for bit (MD5 recipe: a node's points are the
  first 8 bytes, big-endian, of ``md5(f"{node}#{i}")``).
* :class:`HashRing`: uhashring 2.5's ``HashRing`` in every constructor form it
  documents, same placement: its default ring (``HashRing(nodes)``, 160 md5
  points per node, natively in ``ringwise._ringwise.UhashringRing``),
  ``hash_fn="ketama"`` (ringwise's ``ketama`` algorithm, ``uhashring``
  flavour; other ``vnodes``/``replicas`` natively too) and a callable
  ``hash_fn`` (in Python: a Python callable cannot run natively).

Both are thin Python over immutable native snapshots: every lookup is one
call into the native library (the callable ``hash_fn`` excepted), and a
change publishes a new snapshot made from the previous one (only the changed
node's points are hashed, where the original is incremental).

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
from typing import Any, Callable, Dict, Iterable, Iterator, List, Mapping, Optional, Set, Tuple, Union

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

    Raised by :class:`HashRing` for ``hash_fn="ketama"`` with ``replicas``
    outside 1 to 4: uhashring 2.5 itself fails there (``IndexError`` above 4,
    reading past the 16-byte MD5 digest) or makes a ring without points
    (below 1).
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
_META_VNODES = 160
# Keyword arguments uhashring 2.5 reads. ``compat`` is uhashring 0.x's switch
# between its ketama and md5 rings: 2.5 no longer reads it (any value gives the
# ring ``hash_fn`` asks for), and neither does this class.
_OPTIONS = frozenset({"hash_fn", "vnodes", "weight_fn", "replicas", "compat"})

_NodeConf = Dict[str, Any]


# uhashring's ketama key hash, ``hashi(key, replica=0)``: bytes ``4*replica``
# to ``4*replica + 4`` of ``md5(str(key))``, little-endian; the library's
# ``md5-le32`` words, computed natively.
_ketama_hashi = _ringwise.uhashring_hashi
# uhashring's default key hash, ``int(md5(str(key)).hexdigest(), 16)``.
_meta_hashi = _ringwise.UhashringRing().hash_key


class _Continuum:
    """uhashring's ``_keys``/``_ring``/``_distribution`` of one snapshot.

    Only the positional methods (``get_points``, ``get_server``,
    ``get_node_pos``, ``range``, ``ring``...) need it; lookups do not, so it
    is made on first use (O(P)).
    """

    __slots__ = ("keys", "ring", "distribution")

    def __init__(self, keys: List[Any], ring: Dict[Any, str], distribution: Mapping[str, int]) -> None:
        self.keys = keys
        self.ring = ring
        self.distribution: Counter[str] = Counter(distribution)


class _KetamaEngine:
    """``hash_fn="ketama"`` with 40 vnodes and 4 replicas everywhere: the
    library's ``ketama`` algorithm, ``uhashring`` flavour."""

    __slots__ = ("placement", "locate", "weights")
    incremental = False

    def __init__(self, weights: List[Tuple[str, int]]) -> None:
        self.weights = weights
        self.placement: Optional[ringwise.Placement] = (
            ringwise.Placement(weights, algorithm="ketama", flavor="uhashring") if weights else None
        )
        placement = self.placement
        if placement is None:
            self.locate: Callable[[Any], Optional[str]] = lambda key: None
        else:
            native = placement.locate
            self.locate = lambda key: native(str(key))

    hashi = staticmethod(_ketama_hashi)

    def continuum(self) -> _Continuum:
        return _Continuum(*_ringwise.uhashring_continuum(self.weights))

    def server(self, continuum: _Continuum, key: Any) -> Optional[Tuple[int, Any, str]]:
        return _bisect_server(continuum, _ketama_hashi(key))


class _NativeEngine:
    """A :class:`ringwise._ringwise.UhashringRing`: uhashring's default ring
    (incremental) or its ketama ring with other vnodes/replicas (rebuilt)."""

    __slots__ = ("ring", "locate", "incremental", "hashi", "_ketama")

    def __init__(self, ring: "_ringwise.UhashringRing", ketama: bool) -> None:
        self.ring = ring
        self.locate = ring.locate
        self.incremental = not ketama
        self._ketama = ketama
        self.hashi: Callable[..., Any] = _ketama_hashi if ketama else ring.hash_key

    placement = None

    def with_node(self, name: str, count: int) -> "_NativeEngine":
        return _NativeEngine(self.ring.with_node(name, count), False)

    def without_node(self, name: str) -> "_NativeEngine":
        return _NativeEngine(self.ring.without_node(name), False)

    def continuum(self) -> _Continuum:
        keys, ring = self.ring.continuum()
        return _Continuum(keys, ring, self.ring.distribution())

    def server(self, continuum: _Continuum, key: Any) -> Optional[Tuple[int, Any, str]]:
        return self.ring.server(key)


class _PythonEngine:
    """uhashring's default ring with a user ``hash_fn``, in Python.

    A callable cannot run natively, and what it returns (any ordered values:
    ints of any size, negative ones, strings...) is compared by Python. The
    state is uhashring's own (point -> owner dict, the sorted keys, each
    node's points) kept immutable per snapshot: a change copies the dict and
    the key list (O(P), in C) and calls ``hash_fn`` for the changed node's
    points only (O(k)); the keys are merged by ``list.sort`` on an already
    sorted run plus the k new ones (O(P + k log k) comparisons). Lookups are
    one ``hash_fn`` call plus ``bisect``, as in uhashring.
    """

    __slots__ = ("hash_fn", "ring", "keys", "node_points", "made")
    incremental = True
    placement = None

    def __init__(
        self,
        hash_fn: Callable[[Any], Any],
        ring: Dict[Any, str],
        keys: List[Any],
        node_points: Dict[str, List[Any]],
        made: Dict[str, int],
    ) -> None:
        self.hash_fn = hash_fn
        self.ring = ring
        self.keys = keys
        self.node_points = node_points
        self.made = made

    def hashi(self, key: Any) -> Any:
        return self.hash_fn(key)

    def locate(self, key: Any) -> Optional[str]:
        keys = self.keys
        if not keys:
            return None
        p = bisect(keys, self.hash_fn(key))
        return self.ring[keys[0 if p == len(keys) else p]]

    def _remake(self, name: str, count: int) -> Tuple[Set[Any], List[Any]]:
        """uhashring's ``_create_ring([(name, conf)])`` on this (fresh, not yet
        published) state: drop the points ``name`` still owns, then write its
        ``count`` new ones (over any equal point). Returns the points dropped
        from and added to the ring's key set."""
        ring = self.ring
        dropped = set()
        for point in self.node_points.pop(name, ()):
            # Only a point the node still owns (another may have written over it).
            if ring.get(point) == name:
                del ring[point]
                dropped.add(point)
        self.made.pop(name, None)
        fresh = [self.hash_fn(f"{name}-{i}") for i in range(count)]
        added = []
        for point in fresh:
            if point not in ring:
                added.append(point)
            ring[point] = name
        if count:
            self.made[name] = count
        self.node_points[name] = fresh
        return dropped, added

    def _copy(self, keys: List[Any]) -> "_PythonEngine":
        return _PythonEngine(self.hash_fn, dict(self.ring), keys, dict(self.node_points), dict(self.made))

    def with_node(self, name: str, count: int) -> "_PythonEngine":
        """A new snapshot with ``name`` made again: O(P) copies, k calls of
        ``hash_fn``, O(P + k log k) comparisons to merge the keys."""
        new = self._copy([])
        dropped, added = new._remake(name, count)
        keys = [k for k in self.keys if k not in dropped] if dropped else list(self.keys)
        keys.extend(added)
        keys.sort()  # a sorted run and the new points: one merge
        new.keys = keys
        return new

    def remade(self, counts: List[Tuple[str, int]]) -> "_PythonEngine":
        """A new snapshot with every node of ``counts`` made again in turn
        (uhashring's ``_create_ring`` over all nodes; also how it starts)."""
        new = self._copy([])
        for name, count in counts:
            new._remake(name, count)
        new.keys = sorted(new.ring)
        return new

    def without_node(self, name: str) -> "_PythonEngine":
        new = self._copy([])
        dropped = set()
        for point in new.node_points.pop(name, ()):
            if new.ring.get(point) == name:
                del new.ring[point]
                dropped.add(point)
        new.made.pop(name, None)
        new.keys = [k for k in self.keys if k not in dropped]
        return new

    def continuum(self) -> _Continuum:
        return _Continuum(self.keys, self.ring, self.made)

    def server(self, continuum: _Continuum, key: Any) -> Optional[Tuple[int, Any, str]]:
        return _bisect_server(continuum, self.hash_fn(key))


def _bisect_server(continuum: _Continuum, hashed: Any) -> Optional[Tuple[int, Any, str]]:
    keys = continuum.keys
    if not keys:
        return None
    p = bisect(keys, hashed)
    if p == len(keys):
        p = 0
    return (p, keys[p], continuum.ring[keys[p]])


_Engine = Union[_KetamaEngine, _NativeEngine, _PythonEngine]


class _Snapshot:
    """One immutable state of a :class:`HashRing`: the node configurations and
    the ring made of them."""

    __slots__ = ("nodes", "engine", "_continuum")

    def __init__(self, nodes: Dict[str, _NodeConf], engine: _Engine) -> None:
        self.nodes = nodes
        self.engine = engine
        self._continuum: Optional[_Continuum] = None

    @property
    def continuum(self) -> _Continuum:
        if self._continuum is None:
            self._continuum = self.engine.continuum()
        return self._continuum


class HashRing:
    """uhashring 2.5's ``HashRing``, backed by ringwise: every constructor form,
    the same keys on the same nodes.

    ``HashRing(nodes)`` is uhashring's default ring (its ``MetaRing``): a
    node of weight ``w`` with ``vnodes`` (default 160) gets ``vnodes * w``
    points ``int(md5(f"{name}-{i}").hexdigest(), 16)``, 128-bit integers, and a
    key goes to the first point strictly above ``int(md5(str(key)).hexdigest(),
    16)``, wrapping. It lives natively
    (:class:`ringwise._ringwise.UhashringRing`), and, as in uhashring, adding,
    changing or removing a node changes only that node's points: O(k log k + P)
    for its k points on a ring of P (k MD5s, then a merge into a copy of the
    sorted points), where uhashring re-sorts all P keys in Python.

    ``HashRing(nodes, hash_fn="ketama")``: a node of weight ``w`` among ``n``
    nodes of total weight ``W`` gets ``vnodes*n*w // W`` (``vnodes`` default 40)
    MD5 digests of ``f"{name}-{i}"``, ``replicas`` (default 4) points each (the
    little-endian words of the digest); a key goes to the first point strictly
    above the first four bytes of ``md5(str(key))``, wrapping; of two nodes
    with the same point the one added later wins. With 40 and 4 it is the
    library's ``ketama`` algorithm, ``uhashring`` flavour
    (``ringwise.Placement(..., algorithm="ketama", flavor="uhashring")``, also
    :attr:`placement`); other values use ``UhashringRing.ketama``. Point counts
    depend on every weight, so every change rebuilds the ring (O(P)), as in
    uhashring.

    ``HashRing(nodes, hash_fn=f)`` with a callable ``f``: the default ring with
    ``f`` as the hash of keys and of point texts. A Python callable cannot run
    natively, so this one ring is Python (uhashring's algorithm, kept
    immutable per snapshot): a change calls ``f`` k times and copies the ring
    (O(P)); a lookup is one call of ``f`` and a ``bisect``, about what
    uhashring costs.

    >>> ring = HashRing(nodes=["node1", "node2", "node3"])  # uhashring's default
    >>> ring.get_node("coconut")
    'node2'
    >>> ring.distribution
    Counter({'node1': 160, 'node2': 160, 'node3': 160})
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
    node's weight. Keyword arguments: ``hash_fn``, ``vnodes``, ``weight_fn``,
    ``replicas`` (ketama only; uhashring's default ring ignores it, so does
    this one) and ``compat`` (uhashring 0.x's ring switch, which 2.5 ignores:
    so does this class).

    Differences from uhashring, on purpose:

    * ``replicas`` of a ketama ring must be 1 to 4 (the words of one MD5
      digest): other values raise :class:`UnsupportedOptionError` (a
      ``ringwise.Error`` and a ``NotImplementedError``). uhashring 2.5 fails
      with ``IndexError`` above 4 and makes a ring without points below 1.
    * Weights must be whole numbers of at least 1 (``InvalidWeightError``,
      a ``ValueError``) and ``vnodes`` too (``InvalidVnodesError``);
      uhashring fails later with ``TypeError`` on floats, divides by zero
      when every ketama weight is 0, and on its default ring adds a node of
      weight 0 that it then cannot remove (``KeyError``).
    * Node names must be ``str`` (``TypeError``); uhashring formats any
      object into its points.
    * A ``hash_fn`` that is neither ``"ketama"`` nor callable raises
      ``TypeError`` when the ring is made, as uhashring does; an unknown
      keyword argument raises ``TypeError`` too (uhashring ignores it, so a
      misspelt ``vnode=80`` would silently place keys as 160 does).
    * Changes publish a new immutable snapshot in one attribute assignment,
      so readers in other threads never see a half-built ring (uhashring
      changes its dict and list in place). ``nodes``/``conf`` return the
      snapshot's dict and ``ring`` a copy: treat them as read-only and change
      nodes through ``add_node``, ``remove_node`` and item assignment.

    Kept as uhashring does it: an empty ring answers ``None`` to every
    getter (no exception); removing an unknown node raises ``KeyError``
    (``ringwise.UnknownNodeError``, a subclass); ``get_nodes()`` takes no
    key and returns every configured node name.
    """

    def __init__(self, nodes: Union[str, List[str], Dict[str, Any]] = [], **kwargs: Any) -> None:
        unknown = sorted(set(kwargs) - _OPTIONS)
        if unknown:
            raise TypeError(
                f"HashRing() got unexpected keyword arguments {unknown}:"
                f" uhashring 2.5 reads {sorted(_OPTIONS - {'compat'})} (and ignores compat)"
            )
        hash_fn = kwargs.get("hash_fn", None)
        vnodes = kwargs.get("vnodes", None)
        weight_fn = kwargs.get("weight_fn", None)
        replicas = kwargs.get("replicas", _KETAMA_REPLICAS)
        self._ketama = hash_fn == "ketama"
        self._hash_fn: Optional[Callable[[Any], Any]] = None
        if self._ketama:
            if vnodes is None:
                vnodes = _KETAMA_VNODES
            if isinstance(replicas, bool) or not isinstance(replicas, int) or not 1 <= replicas <= 4:
                raise UnsupportedOptionError(
                    f"uhashring's ketama ring with replicas={replicas!r}: ringwise reproduces 1 to 4"
                    " (the words of one MD5 digest; uhashring 2.5 fails with IndexError above 4"
                    " and makes no points below 1)"
                )
        else:
            if vnodes is None:
                vnodes = _META_VNODES
            if hash_fn is not None:
                if not callable(hash_fn):
                    raise TypeError("hash_fn should be a callable function")
                self._hash_fn = hash_fn
        _check_vnodes("the vnodes argument", vnodes)
        if weight_fn and not callable(weight_fn):
            raise TypeError("weight_fn should be a callable function")
        self._replicas: int = replicas
        self._default_vnodes: int = vnodes
        self._weight_fn: Optional[Callable[..., int]] = weight_fn
        self._lock = threading.Lock()
        self._publish(_Snapshot({}, self._build({})))
        with self._lock:
            confs, changed = self._configure(nodes)
            self._publish(_Snapshot(confs, self._build(confs) if changed else self._snapshot.engine))

    # -- configuration -------------------------------------------------------

    def _publish(self, snapshot: _Snapshot) -> None:
        self._snapshot = snapshot  # the one assignment readers see
        # Fast path, as ConsistentHashRing's: ``ring.get_node`` is the
        # snapshot's own ``locate`` (an instance attribute shadowing the
        # method), the native method itself on the default ring: no Python
        # frame per lookup there, one (``str(key)``) on ketama.
        self.__dict__["get_node"] = snapshot.engine.locate

    def _build(self, confs: Dict[str, _NodeConf]) -> _Engine:
        """The ring of ``confs`` made from scratch (uhashring's ``_create_ring``
        over every node, in the order added)."""
        if self._ketama:
            if self._replicas == _KETAMA_REPLICAS and all(
                c["vnodes"] == _KETAMA_VNODES for c in confs.values()
            ):
                return _KetamaEngine([(name, c["weight"]) for name, c in confs.items()])
            ring = _ringwise.UhashringRing.ketama(
                [(name, c["vnodes"], c["weight"]) for name, c in confs.items()], self._replicas
            )
            return _NativeEngine(ring, True)
        counts = [(name, c["vnodes"] * c["weight"]) for name, c in confs.items()]
        if self._hash_fn is None:
            return _NativeEngine(_ringwise.UhashringRing.meta(counts), False)
        return _PythonEngine(self._hash_fn, {}, [], {}, {}).remade(counts)

    def _configure(self, nodes: Any) -> Tuple[Dict[str, _NodeConf], bool]:
        """uhashring's ``_configure_nodes`` on a copy: the new configurations and
        whether the ring must change."""
        if isinstance(nodes, str):
            nodes = [nodes]
        elif not isinstance(nodes, (dict, list)):
            raise ValueError(
                "nodes configuration should be a list or a dict, got {}".format(type(nodes))
            )
        current = self._snapshot.nodes
        confs = dict(current)
        changed = False
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
            _check_vnodes(f"node {node!r}", conf["vnodes"])
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
        return confs, changed

    def __setitem__(self, nodename: str, conf: Union[int, Dict[str, Any]] = {"weight": 1}) -> None:
        """Add ``nodename`` (or change its configuration).

        On the default ring only this node's points change (uhashring's own
        incremental ``_create_ring([node])``); a ketama ring is rebuilt.
        """
        with self._lock:
            snapshot = self._snapshot
            confs, changed = self._configure({nodename: conf})
            engine = snapshot.engine
            if changed:
                if isinstance(engine, _KetamaEngine) or not engine.incremental:
                    engine = self._build(confs)
                else:
                    c = confs[nodename]
                    engine = engine.with_node(nodename, c["vnodes"] * c["weight"])
            self._publish(_Snapshot(confs, engine))

    add_node = __setitem__

    def __delitem__(self, nodename: str) -> None:
        """Remove ``nodename``; ``KeyError`` (``ringwise.UnknownNodeError``) if absent."""
        with self._lock:
            snapshot = self._snapshot
            current = snapshot.nodes
            if nodename not in current:
                raise ringwise.UnknownNodeError(
                    "node '{}' not found, available nodes: {}".format(nodename, current.keys())
                )
            confs = dict(current)
            del confs[nodename]
            engine = snapshot.engine
            if isinstance(engine, _KetamaEngine) or not engine.incremental:
                engine = self._build(confs)
            else:
                engine = engine.without_node(nodename)
            self._publish(_Snapshot(confs, engine))

    remove_node = __delitem__

    def regenerate(self) -> None:
        """Re-evaluate ``weight_fn`` for every node and rebuild the ring."""
        with self._lock:
            confs, _ = self._configure(dict(self._snapshot.nodes))
            engine = self._snapshot.engine
            if isinstance(engine, _PythonEngine):
                # uhashring remakes each node in turn over the current ring;
                # with a user hash (which may collide) that differs from a
                # ring made from scratch.
                engine = engine.remade([(n, c["vnodes"] * c["weight"]) for n, c in confs.items()])
            else:
                engine = self._build(confs)
            self._publish(_Snapshot(confs, engine))

    # -- lookups ---------------------------------------------------------------

    def get_node(self, key: Any) -> Optional[str]:
        """The name of the node owning ``key`` (``None`` on an empty ring)."""
        return self._snapshot.engine.locate(key)

    def _conf_of(self, key: Any) -> Optional[_NodeConf]:
        snapshot = self._snapshot
        name = snapshot.engine.locate(key)
        return None if name is None else snapshot.nodes[name]

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

    def hashi(self, key: Any, *replica: int) -> Any:
        """uhashring's ``hashi``: the key hash of this ring.

        Ketama: 4 bytes of ``md5(str(key))``, little-endian (``hashi(key,
        replica)`` reads word ``replica``). Default ring: ``int(md5(str(key))
        .hexdigest(), 16)``; with a ``hash_fn``, ``hash_fn(key)`` (both take
        the key only, as uhashring's).
        """
        if self._ketama:
            return _ketama_hashi(key, *replica)
        if replica:
            raise TypeError("hashi() of uhashring's default ring takes the key only")
        if self._hash_fn is not None:
            return self._hash_fn(key)
        return _meta_hashi(key)

    def get_key(self, key: Any) -> Any:
        """Alias of :meth:`hashi` (hash_ring compatibility)."""
        return self.hashi(key)

    def get_nodes(self) -> Any:
        """The names of all configured nodes (a dict keys view, as uhashring)."""
        return self._snapshot.nodes.keys()

    def get_instances(self) -> List[Any]:
        """The truthy ``instance`` of every configured node."""
        return [c.get("instance") for c in self._snapshot.nodes.values() if c.get("instance")]

    # -- positional views ----------------------------------------------------

    def _server(self, snapshot: _Snapshot, key: Any) -> Optional[Tuple[int, Any, str]]:
        engine = snapshot.engine
        if isinstance(engine, _NativeEngine):
            return engine.ring.server(key)  # no continuum needed
        return engine.server(snapshot.continuum, key)

    def get_node_pos(self, key: Any) -> Optional[int]:
        """Index in :meth:`get_points` of the point owning ``key``."""
        found = self._server(self._snapshot, key)
        return None if found is None else found[0]

    def get_server(self, key: Any) -> Optional[Tuple[Any, str]]:
        """The ketama ``(point, nodename)`` tuple owning ``key``."""
        found = self._server(self._snapshot, key)
        return None if found is None else (found[1], found[2])

    def get_points(self) -> List[Tuple[Any, str]]:
        """Every ``(point, nodename)``, ascending (ketama repeats a point two
        digests made, as uhashring)."""
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
        found = self._server(snapshot, key)
        pos = 0 if found is None else found[0]
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
        if not self._snapshot.continuum.keys:
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
        """Points made per node name (a ``Counter``)."""
        return Counter(self._snapshot.continuum.distribution)

    @property
    def ring(self) -> Dict[Any, str]:
        """Point to node name (the later-written node for a shared point)."""
        return dict(self._snapshot.continuum.ring)

    continuum = ring

    @property
    def size(self) -> int:
        """Number of distinct points."""
        engine = self._snapshot.engine
        if isinstance(engine, _NativeEngine):
            return len(engine.ring)
        return len(self._snapshot.continuum.ring)

    @property
    def placement(self) -> Optional[ringwise.Placement]:
        """The ringwise snapshot of a ketama ring with 40 vnodes and 4 replicas
        (``None`` while empty and for every other ring)."""
        return self._snapshot.engine.placement


def _check_vnodes(where: str, vnodes: Any) -> None:
    if isinstance(vnodes, bool) or not isinstance(vnodes, int) or vnodes < 1:
        raise ringwise.InvalidVnodesError(
            f"{where}: vnodes must be a whole number of at least 1, got {vnodes!r}"
        )
