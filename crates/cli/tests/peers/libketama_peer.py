"""The libketama peer of the ketama compatibility tests.

Usage: python libketama_peer.py SERVERS < KEYS

SERVERS is libketama's own server file: one `ip:port<TAB>weight` line per
server, each ending in a newline (libketama drops the weight's last
character, taking it for the newline). KEYS has one UTF-8 key a line.

The `ketama` package (PyPI, 0.1.1) compiles last.fm's `ketama.c` into a
C extension: Ketama(SERVERS) builds the continuum, get_points() lists its
(point, server) pairs, get_server(key) returns (point, server). Keys are
passed as bytes: for a str the binding hashes only as many UTF-8 bytes as
the key has characters, so a non-ASCII key would hash cut short.

libketama keeps the continuum in SysV shared memory (and a semaphore)
under the key ftok(SERVERS, 'R'). A segment or semaphore of that key left
by a dead process (a killed run whose file had the same inode) is removed
first: ketama would otherwise reuse its continuum, or wait on its lock.
Deleting the Ketama object removes what it made (`ketama_smoke`); the
script checks that nothing of its key is left.

Prints one line `NAME=COUNT ...` (points per server, in file order), then
the server of each key, one a line, in order.
"""

import ctypes
import gc
import os
import sys

from ketama import Ketama

IPC_RMID = 0
LIBC = ctypes.CDLL(None, use_errno=True)


def ftok(path, project):
    """glibc's ftok: project byte, low byte of the device, low 16 bits of
    the inode."""
    st = os.stat(path)
    key = (ord(project) << 24) | ((st.st_dev & 0xFF) << 16) | (st.st_ino & 0xFFFF)
    return key - (1 << 32) if key >= 1 << 31 else key


def ipc_entries(kind, key):
    """(id, creator pid or None) of the SysV `kind` (shm, sem) of `key`."""
    with open(f"/proc/sysvipc/{kind}") as table:
        header = table.readline().split()
        found = []
        for line in table:
            row = dict(zip(header, line.split()))
            if int(row["key"]) == key:
                ident = int(row["shmid" if kind == "shm" else "semid"])
                found.append((ident, int(row["cpid"]) if "cpid" in row else None))
        return found


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove(kind, ident):
    if kind == "shm":
        LIBC.shmctl(ident, IPC_RMID, None)
    else:
        LIBC.semctl(ident, 0, IPC_RMID)


def remove_stale(key):
    """Removes a dead creator's segment, and a semaphore without a live
    segment beside it."""
    segments = ipc_entries("shm", key)
    live = [i for i, pid in segments if alive(pid)]
    if live:
        sys.exit(f"a live process holds libketama's segment {live} of key {key:#x}")
    for ident, _ in segments:
        remove("shm", ident)
    for ident, _ in ipc_entries("sem", key):
        remove("sem", ident)


def main():
    servers = sys.argv[1]
    key = ftok(servers, "R")
    remove_stale(key)
    ring = Ketama(servers)
    counts = {}
    for _, server in ring.get_points():
        counts[server] = counts.get(server, 0) + 1
    order = []
    with open(servers) as lines:
        for line in lines:
            order.append(line.split("\t")[0])
    out = [" ".join(f"{name}={counts.get(name, 0)}" for name in order)]
    keys = sys.stdin.buffer.read().split(b"\n")
    if keys and keys[-1] == b"":
        keys.pop()
    out.extend(ring.get_server(k)[1] for k in keys)
    del ring
    gc.collect()
    left = ipc_entries("shm", key) + ipc_entries("sem", key)
    if left:
        for ident, _ in ipc_entries("shm", key):
            remove("shm", ident)
        for ident, _ in ipc_entries("sem", key):
            remove("sem", ident)
        sys.exit(f"libketama left SysV objects of key {key:#x} (removed now): {left}")
    sys.stdout.write("\n".join(out) + "\n")


main()
