#!/usr/bin/env python3
"""The seed article's measurement program, the reference of `ringwise simulate`'s speed.

Source: the consistent-hashing article (seed 000_b504d0d17185bd5a, "Консистентное
хеширование: кольцо хешей, виртуальные узлы и код на Python"). Its listings are
copied here unchanged and in the article's order, as the article runs them: one
file, each listing appended to the previous ones ("дописав к предыдущим листингам",
"Продолжаем в том же файле"):

1. `ring_hash` and the `% N` loop (section "Почему hash(key) % N ломается");
2. the `ConsistentHashRing` class ("Реализация на Python");
3. `build_ring`, `measure`, one ring over 1,000,000 keys and 30 name sets over
   100,000 ("Замер: сколько ключей переезжает на самом деле");
4. removing the most loaded node ("Что происходит при отказе").

Left out: the toy examples that measure nothing (the 100-position ring, the
`cache-a` usage lines) and what the article reports only in prose, without code
(the weights split, the rendezvous timing). `ringwise simulate` runs those too, so
timing it against this file favours the Python side.

Usage (the article says "всё вместе считается примерно 30 секунд" on Python 3.9):
    /usr/bin/time -f "%e %U %S %M" python3 crates/sim/bench/article.py
Standard library only.
"""

# --- listing 1 --------------------------------------------------------------
import hashlib


def ring_hash(value: str) -> int:
    """Стабильный 64-битный хеш: одинаковый во всех процессах и на всех машинах."""
    digest = hashlib.md5(value.encode()).digest()
    return int.from_bytes(digest[:8], "big")


keys = [f"user:{i}" for i in range(1_000_000)]
hashes = [ring_hash(key) for key in keys]

for old, new in [(10, 11), (10, 9), (100, 101), (10, 20)]:
    moved = sum(h % old != h % new for h in hashes)
    print(f"{old:>3} -> {new:<3} перемещено {moved / len(keys):.2%}")

# --- listing 2: the class ---------------------------------------------------
import bisect


class ConsistentHashRing:
    def __init__(self, vnodes: int = 100):
        self.vnodes = vnodes
        self._ring: list[tuple[int, str]] = []  # (точка на кольце, узел), по возрастанию

    def add_node(self, node: str, weight: int = 1) -> None:
        points = [
            (ring_hash(f"{node}#{i}"), node) for i in range(self.vnodes * weight)
        ]
        self._ring.extend(points)
        self._ring.sort()

    def remove_node(self, node: str) -> None:
        self._ring = [point for point in self._ring if point[1] != node]

    def get_node(self, key: str) -> str:
        if not self._ring:
            raise LookupError("на кольце нет узлов")
        # (h,) меньше любого (h, node), поэтому находим первую точку >= h
        index = bisect.bisect_left(self._ring, (ring_hash(key),))
        # Дошли до конца массива: кольцо замыкается на нулевой элемент
        return self._ring[index % len(self._ring)][1]

    def get_nodes(self, key: str, count: int) -> list[str]:
        """Первые count разных физических узлов по часовой стрелке: для реплик."""
        if not self._ring:
            raise LookupError("на кольце нет узлов")
        start = bisect.bisect_left(self._ring, (ring_hash(key),))
        result: list[str] = []
        for offset in range(len(self._ring)):
            node = self._ring[(start + offset) % len(self._ring)][1]
            if node not in result:
                result.append(node)
                if len(result) == count:
                    break
        return result


# --- listing 3: the measurement ---------------------------------------------
from collections import Counter
from statistics import mean, pstdev


def build_ring(vnodes: int, prefix: str = "node") -> ConsistentHashRing:
    ring = ConsistentHashRing(vnodes)
    for i in range(10):
        ring.add_node(f"{prefix}-{i}")
    return ring


def measure(vnodes: int, keys: list[str], prefix: str = "node") -> dict:
    ring = build_ring(vnodes, prefix)
    before = [ring.get_node(key) for key in keys]

    new_node = f"{prefix}-10"
    ring.add_node(new_node)
    after = [ring.get_node(key) for key in keys]

    changed = [(b, a) for b, a in zip(before, after) if b != a]
    load = Counter(before)
    average = len(keys) / 10
    return {
        "moved": len(changed) / len(keys),
        "to_new": sum(a == new_node for _, a in changed) / max(len(changed), 1),
        "donors": len({b for b, _ in changed}),
        "max": max(load.values()) / average,
        "min": min(load.get(f"{prefix}-{i}", 0) for i in range(10)) / average,
        "spread": pstdev(load.get(f"{prefix}-{i}", 0) for i in range(10)) / average,
    }


keys = [f"user:{i}" for i in range(1_000_000)]

print("vnodes  moved   to_new  donors  max   min   spread")
for vnodes in (1, 10, 100, 1000):
    m = measure(vnodes, keys)
    print(
        f"{vnodes:>6}  {m['moved']:.2%}  {m['to_new']:.0%}  {m['donors']:>6}"
        f"  {m['max']:.2f}  {m['min']:.2f}  {m['spread']:.1%}"
    )

# Одно кольцо ничего не доказывает: повторим на 30 наборах имён узлов
sample = keys[:100_000]
print("vnodes  moved: min    avg     max   | max/avg  spread")
for vnodes in (1, 10, 100, 1000):
    runs = [measure(vnodes, sample, f"s{seed}") for seed in range(30)]
    moved = [run["moved"] for run in runs]
    print(
        f"{vnodes:>6}  {min(moved):>10.2%}  {mean(moved):.2%}  {max(moved):.2%}"
        f" | {mean(run['max'] for run in runs):.2f}"
        f"  {mean(run['spread'] for run in runs):.1%}"
    )

# --- listing 4: a failure ---------------------------------------------------
for vnodes in (1, 100):
    ring = build_ring(vnodes)
    before = [ring.get_node(key) for key in keys]
    load = Counter(before)

    victim = load.most_common(1)[0][0]  # убираем самый загруженный узел
    ring.remove_node(victim)
    after = [ring.get_node(key) for key in keys]

    # Ключи уходят только с убранного узла
    assert all(b == victim for b, a in zip(before, after) if b != a)

    received = Counter(a for b, a in zip(before, after) if b != a)
    neighbor, extra = received.most_common(1)[0]
    print(
        f"vnodes={vnodes}: {victim} держал {load[victim] / len(keys):.1%} ключей, "
        f"приняли узлов: {len(received)}; "
        f"{neighbor}: {load[neighbor] / len(keys):.1%} -> "
        f"{(load[neighbor] + extra) / len(keys):.1%}"
    )
