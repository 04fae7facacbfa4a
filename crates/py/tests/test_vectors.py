"""Golden vectors shared with the Rust tests: the same fixture files, read in place.

* crates/ringwise/tests/fixtures/libmemcached_ketama.tsv: libmemcached's
  ketama test (weighted and spymemcached tables), as compat_vectors.rs.
* crates/ringwise/tests/fixtures/nginx_upstream.csv: 1,001 requests logged by
  a real nginx (`hash $request_uri consistent`, 9 servers of weight 100).
* Cassandra Murmur3Partitioner tokens (compatibility notes §6, from the
  DataStax python-driver's tests).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

import ringwise

FIXTURES = Path(__file__).resolve().parents[2] / "ringwise" / "tests" / "fixtures"

WEIGHTS = [600, 300, 200, 350, 1000, 800, 950, 100]
SERVERS = [(f"10.0.1.{i}:11211", w) for i, w in zip(range(1, 9), WEIGHTS)]


def ketama_rows() -> list[tuple[str, int, int, str, str]]:
    rows = []
    text = (FIXTURES / "libmemcached_ketama.tsv").read_text(encoding="utf-8")
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        key, hash1, hash2, server, spy = line.split("\t")
        rows.append((key, int(hash1), int(hash2), server, spy))
    return rows


def test_the_fixtures_are_the_rust_tests_files():
    assert (FIXTURES / "libmemcached_ketama.tsv").is_file(), FIXTURES
    header = (FIXTURES / "libmemcached_ketama.tsv").read_text(encoding="utf-8").splitlines()[1]
    assert "10.0.1.1:11211=600 .2=300 .3=200 .4=350 .5=1000 .6=800 .7=950 .8=100" in header


@pytest.mark.parametrize("flavor", ["libmemcached", "spymemcached"])
def test_libmemcached_ketama_fixture(flavor):
    rows = ketama_rows()
    assert len(rows) == 99
    placement = ringwise.Placement(SERVERS, algorithm="ketama", flavor=flavor)
    assert placement.nodes == [name for name, _ in SERVERS]
    for key, hash1, _hash2, server, spy in rows:
        # hash1 is the key's MD5, first four bytes little-endian.
        assert int.from_bytes(hashlib.md5(key.encode()).digest()[:4], "little") == hash1
        want = server if flavor == "libmemcached" else spy
        assert placement.locate(key) == f"{want}:11211", (flavor, key)
        assert placement.locate(key.encode()) == f"{want}:11211", (flavor, key)
    got = placement.locate_many([row[0] for row in rows])
    want = [(row[3] if flavor == "libmemcached" else row[4]) + ":11211" for row in rows]
    assert list(got) == want


def test_libmemcached_points_per_server():
    stats = ringwise.Placement(SERVERS, algorithm="ketama", flavor="libmemcached").stats()
    assert [n["points"] for n in stats["nodes"]] == [176, 88, 56, 104, 296, 236, 280, 28]
    assert stats["points"] == 1264


def test_nginx_log_of_a_real_upstream():
    servers = [(f"10.0.0.{i}:443", 100) for i in range(1, 10)]
    placement = ringwise.Placement(servers, algorithm="nginx")
    rows = []
    for line in (FIXTURES / "nginx_upstream.csv").read_text(encoding="utf-8").splitlines():
        uri, server = line.split(",", 1)
        rows.append((uri, server))
    assert len(rows) == 1001
    for uri, server in rows:
        assert placement.locate(uri) == server, uri
    assert list(placement.locate_many(uri for uri, _ in rows)) == [s for _, s in rows]
    assert placement.stats()["points"] == 144_000


CASSANDRA = [
    (b"123", -7468325962851647638),
    (b"\x00\xff\x10\xfa\x99" * 10, 5837342703291459765),
    (b"\xfe" * 8, -8927430733708461935),
    (b"\x10" * 8, 1446172840243228796),
    (b"9223372036854775807", 7162290910810015547),
    (bytes(range(0x01, 0x11)), -5563837382979743776),
    (bytes(range(0x02, 0x12)), -1513403162740402161),
]


@pytest.mark.parametrize("key,token", CASSANDRA)
def test_cassandra_tokens(key, token):
    assert ringwise.cassandra_token(key) == token


def test_cassandra_token_of_text_is_its_utf8():
    assert ringwise.cassandra_token("123") == -7468325962851647638
