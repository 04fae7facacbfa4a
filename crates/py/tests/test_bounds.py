"""Bounds and errors of the Python entry points, as classes.

* 8: every entry point that reads a file or text is bounded as the CLI is:
  ``Placement.from_file`` reads through the 64 MiB cluster-file cap (one
  byte past it at most: ``/dev/zero`` is refused, not read until the OOM
  killer), ``from_toml`` refuses text over the same cap before parsing,
  the node iterable of ``Placement(...)`` stops at the core's node cap,
  and ``locate_many`` over a long C iterator still answers Ctrl-C.
* 17: a lone ``str``/``bytes``/``bytearray``/``memoryview`` where an
  iterable of keys or nodes is expected is a ``TypeError`` with the reason,
  in every such call (no lookup of each character).
"""

from __future__ import annotations

import itertools
import os
import pathlib
import signal
import subprocess
import sys
import threading

import pytest

import ringwise
from ringwise import Placement, _ringwise
from ringwise.compat import rendezvous

CAP = 64 << 20
NODES = ["cache-a", "cache-b", "cache-c"]
LONE = {
    "str": "abc",
    "bytes": b"abc",
    "bytearray": bytearray(b"abc"),
    "memoryview": memoryview(b"abc"),
}
SMALL = 'algorithm = "ring"\n\n[[nodes]]\nname = "a"\n\n[[nodes]]\nname = "b"\n'


# --- 8: files, text and streams are bounded ----------------------------------


def test_from_file_refuses_dev_zero_under_a_memory_limit():
    # In a child with a 1 GiB address-space limit: reading /dev/zero to its
    # end (the old read_to_string) dies of MemoryError or an abort there;
    # through the cap it is a ClusterFileError after 64 MiB + 1 byte.
    code = (
        "import resource, ringwise\n"
        "resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))\n"
        "try:\n"
        "    ringwise.Placement.from_file('/dev/zero')\n"
        "except ringwise.ClusterFileError as e:\n"
        "    print(e)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == (
        "/dev/zero: a cluster file is at most 64 MiB (a 100,000-node file is about 3 MB); "
        "is this the right file?"
    )


def test_from_file_reads_at_most_one_byte_past_the_cap(tmp_path):
    # A FIFO whose writer never stops: the reader must stop by itself at
    # the cap + 1 byte and close, which ends the writer (BrokenPipeError).
    # What the writer got out is the bytes read plus at most the pipe's
    # buffer (64 KiB by default, 1 MiB at most without privileges).
    fifo = tmp_path / "endless.toml"
    os.mkfifo(fifo)
    written = [0]

    def writer() -> None:
        chunk = b"#" * 65536
        try:
            with open(fifo, "wb") as out:
                while written[0] < 4 * CAP:
                    out.write(chunk)
                    written[0] += len(chunk)
        except BrokenPipeError:
            pass

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        with pytest.raises(ringwise.ClusterFileError, match="at most 64 MiB"):
            Placement.from_file(fifo)
    finally:
        thread.join()
    assert written[0] <= CAP + 1 + (1 << 20) + 65536, written[0]


def test_from_file_accepts_a_file_at_the_cap_and_refuses_one_byte_more(tmp_path):
    path = tmp_path / "padded.toml"
    padding = CAP - len(SMALL)
    # One comment line of padding: the file is exactly CAP bytes.
    path.write_bytes(SMALL.encode() + b"#" + b"x" * (padding - 2) + b"\n")
    assert path.stat().st_size == CAP
    assert Placement.from_file(path).nodes == ["a", "b"]
    with open(path, "ab") as f:
        f.write(b"\n")
    with pytest.raises(ringwise.ClusterFileError, match=f"{path}: a cluster file is at most 64 MiB"):
        Placement.from_file(path)


def test_from_file_errors_say_what_and_where(tmp_path):
    missing = tmp_path / "missing.toml"
    with pytest.raises(FileNotFoundError, match=f"cannot read cluster file {missing}"):
        Placement.from_file(missing)
    with pytest.raises(IsADirectoryError, match=f"cannot read cluster file {tmp_path}"):
        Placement.from_file(tmp_path)
    latin = tmp_path / "latin1.toml"
    latin.write_bytes(b'# caf\xe9\nalgorithm = "ring"\n')
    with pytest.raises(ringwise.ClusterFileError, match="is not UTF-8 at byte 5; save it as UTF-8"):
        Placement.from_file(latin)


def test_from_toml_refuses_text_over_the_cap_before_parsing():
    huge = "#" * (CAP + 1)
    message = "the text given to from_toml .67108865 bytes.: a cluster file is at most 64 MiB"
    with pytest.raises(ringwise.ClusterFileError, match=message):
        Placement.from_toml(huge)
    # The per-algorithm classes read through the same call.
    with pytest.raises(ringwise.ClusterFileError, match=message):
        ringwise.Ring.from_toml(huge)
    at_cap = SMALL + "#" * (CAP - len(SMALL) - 1) + "\n"
    assert len(at_cap) == CAP
    assert Placement.from_toml(at_cap).nodes == ["a", "b"]


def test_an_endless_node_iterable_stops_at_the_node_cap():
    with pytest.raises(ringwise.Error, match="more than 1048576 nodes given"):
        Placement(itertools.repeat("a"))


class Interrupted(Exception):
    pass


def test_locate_many_answers_a_signal_on_a_long_c_iterator():
    # itertools runs no bytecode, so only the call's own check turns the
    # pending SIGALRM into the handler's exception; without it the call
    # would return two million owners.
    def handler(signum, frame):
        raise Interrupted()

    old = signal.signal(signal.SIGALRM, handler)
    p = Placement(NODES)
    try:
        with pytest.raises(Interrupted):
            signal.setitimer(signal.ITIMER_REAL, 0.001)
            p.locate_many(itertools.islice(itertools.repeat("k"), 2_000_000))
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


# --- 17: one str where an iterable is expected -------------------------------


def calls_taking_iterables():
    """Every call that takes an iterable of keys or nodes: (name, call)."""
    p = Placement(NODES)
    calls = [
        ("locate_many", "keys", "key", lambda v: p.locate_many(v)),
        ("locate_many", "keys", "key", lambda v: p.locate_many(v, indices=True)),
        ("Placement", "nodes", "name", lambda v: Placement(v)),
        ("Placement", "nodes", "name", lambda v: Placement(v, algorithm="jump")),
        ("uhashring_continuum", "(name, weight) pairs", "pair", _ringwise.uhashring_continuum),
        ("simulate(vnodes=...)", "ints", "int", lambda v: ringwise.simulate(vnodes=v)),
        ("simulate(failure_vnodes=...)", "ints", "int", lambda v: ringwise.simulate(failure_vnodes=v)),
        ("simulate(weight_vnodes=...)", "ints", "int", lambda v: ringwise.simulate(weight_vnodes=v)),
        ("simulate(experiments=...)", "experiment names", "name", lambda v: ringwise.simulate(experiments=v)),
        ("rendezvous", "nodes", "node", lambda v: rendezvous("user:42", v)),
    ]
    # Every per-algorithm class builds through Placement(nodes).
    for name in ringwise.__all__:
        cls = getattr(ringwise, name)
        if isinstance(cls, type) and hasattr(cls, "algorithm") and cls is not Placement:
            calls.append(("Placement", "nodes", "name", cls))
    return calls


# simulate's list options take a str on purpose ("1,10,100", as the CLI's
# --vnodes); only bytes and the buffers are lone text there.
TAKES_A_STR = ("simulate(",)


@pytest.mark.parametrize("kind", LONE)
def test_every_call_taking_an_iterable_refuses_lone_text(kind):
    value = LONE[kind]
    for call, items, one, function in calls_taking_iterables():
        if kind == "str" and call.startswith(TAKES_A_STR):
            continue
        with pytest.raises(TypeError) as raised:
            function(value)
        message = str(raised.value)
        assert message.startswith(f"{call} expects an iterable of {items}"), (call, message)
        assert f"got a {kind}: wrap one {one} in a list" in message, (call, message)


def test_locate_many_refuses_a_str():
    p = Placement(NODES)
    with pytest.raises(TypeError, match="^locate_many expects an iterable of keys, got a str: wrap one key in a list$"):
        p.locate_many("abc")
    # What the caller meant, and an explicit iterator of characters, work.
    assert p.locate_many(["abc"]) == [p.locate("abc")]
    assert p.locate_many(iter("abc")) == [p.locate(c) for c in "abc"]
    assert p.locate_many([b"abc", bytearray(b"x").decode()]) == [p.locate(b"abc"), p.locate("x")]


def test_placement_refuses_a_str_of_nodes():
    with pytest.raises(TypeError, match="Placement expects an iterable of nodes .* got a str: wrap one name in a list"):
        Placement("cache-a")
    assert Placement(["cache-a"]).nodes == ["cache-a"]


def test_simulate_list_options_still_take_their_str_form():
    assert ringwise.simulate(keys=1000, nodes=3, vnodes="1,10", experiments="seeds")["version"] == 1


def test_capacity_zero_is_refused_and_leaving_it_out_is_the_default():
    """``capacity=0`` silently meant the default (twice the nodes, at
    least 256): it is refused by name, as in a cluster file and in etcd;
    leaving it out (``None``) is the default."""
    for cls in (ringwise.Anchor, ringwise.Dx):
        with pytest.raises(ValueError, match="capacity"):
            cls(["a", "b"], capacity=0)
        assert cls(["a", "b"]).nodes == ["a", "b"]
        assert cls(["a", "b"], capacity=8).nodes == ["a", "b"]
    with pytest.raises(ValueError, match="4194304"):
        ringwise.Placement(["a"], algorithm="anchor", capacity=0)
