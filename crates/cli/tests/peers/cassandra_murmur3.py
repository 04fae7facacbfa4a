"""The cassandra-driver peer of the Murmur3Partitioner token tests.

Usage: python cassandra_murmur3.py text|hex < KEYS

Each line of KEYS is a key: its UTF-8 bytes (`text`) or its bytes in hex
(`hex`; an empty line is the empty key). Prints the driver's token of each
key, cassandra.metadata.Murmur3Token.hash_fn(bytes), in decimal, one a line.

The driver has two murmur3 functions: the pure-Python one hash_fn calls and
a C extension (cassandra.cmurmur3). Where both are importable they must
agree, or this exits with an error naming the key.
"""

import sys

from cassandra import murmur3 as python_murmur3
from cassandra.metadata import Murmur3Token

try:
    from cassandra import cmurmur3
except ImportError:
    cmurmur3 = None


def main():
    mode = sys.argv[1]
    lines = sys.stdin.buffer.read().split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    out = []
    for line in lines:
        key = bytes.fromhex(line.decode("ascii")) if mode == "hex" else line
        if cmurmur3 is not None and cmurmur3.murmur3(key) != python_murmur3.murmur3(key):
            sys.exit(f"cassandra.cmurmur3 and cassandra.murmur3 disagree on {key!r}")
        out.append(str(Murmur3Token.hash_fn(key)))
    sys.stdout.write("".join(f"{token}\n" for token in out))


main()
