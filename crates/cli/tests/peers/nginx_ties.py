"""Which keys an nginx `hash ... consistent` ring places by a tie.

Usage: python nginx_ties.py SERVERS < KEYS

SERVERS has one `server weight` line per upstream server, `server` as the
nginx config writes it. nginx sorts its points with an unstable sort and
keeps the first of equal ones, so a point that two servers share goes to
either: keys whose successor point is such a point have no defined owner,
and the compatibility test leaves them out.

The points follow nginx's ngx_http_upstream_hash_module (compatibility
notes section 2): per server, weight * 160 points, point j being the CRC32
of host, a zero byte, port and the previous point as 4 little-endian bytes
(0 before the first). A key's successor is the first point >= CRC32(key),
wrapping. This is not the judge (nginx is): it only marks the keys a judge
cannot decide. If it were wrong, the keys it fails to mark would still be
compared.

Prints `shared N` (the number of point values two servers share), then
`tie` or `-` for each key, one a line.
"""

import bisect
import struct
import sys
import zlib


def points(server, weight):
    host, port = server, ""
    digits = server.rstrip("0123456789")
    if digits.endswith(":") and len(digits) < len(server):
        host, port = digits[:-1], server[len(digits):]
    base = zlib.crc32(host.encode() + b"\0" + port.encode())
    crc32, pack = zlib.crc32, struct.Struct("<I").pack
    prev = 0
    for _ in range(weight * 160):
        prev = crc32(pack(prev), base)
        yield prev


def main():
    owners = {}
    with open(sys.argv[1], encoding="utf-8") as lines:
        for line in lines:
            server, weight = line.split()
            for point in set(points(server, int(weight))):
                owners[point] = owners.get(point, 0) + 1
    ring = sorted(owners)
    shared = {point for point, servers in owners.items() if servers > 1}
    keys = sys.stdin.buffer.read().split(b"\n")
    if keys and keys[-1] == b"":
        keys.pop()
    out = [f"shared {len(shared)}"]
    for key in keys:
        successor = ring[bisect.bisect_left(ring, zlib.crc32(key)) % len(ring)]
        out.append("tie" if successor in shared else "-")
    sys.stdout.write("\n".join(out) + "\n")


main()
