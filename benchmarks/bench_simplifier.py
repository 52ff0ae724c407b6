"""Benchmark: maps simplified per second, as a ratio to parsing the same maps.

Inputs: the ``simplify`` records of XLA's conformance corpus (``input`` texts that parse)
and seeded random maps (sums, products, floordiv and mod by constants over 1-3 dims and
0-2 symbols, half of them with a constraint). The simplifier itself
(``IndexingMap.simplify``) is timed cold (the map memo cleared first).
With ``islpy`` installed, so is the proof that each simplified map has its input's
relation (:func:`hlo_indexing.maps.exact.prove_equal`, wall-clock: isl runs in the
isolation server, warmed up first): ``prove_ms_per_map``, ``prove_ratio`` (proof time /
parse time) and ``proven`` (how many proofs held; the others were not run, past
``limits.PROOF_SECONDS`` or outside Presburger arithmetic), None without islpy. Example::

    record = measure(random_map_texts(200, seed=0), repeat=3)
    record["maps_per_s"], record["ratio"]     # ratio: simplify time / parse time
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from bench_analysis import best_of, clear_caches

from hlo_indexing.dialect_glue.context import make_context
from hlo_indexing.errors import HloIndexingError
from hlo_indexing.maps.exact import isl_available, prove_equal
from hlo_indexing.maps.indexing_map import IndexingMap

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "conformance" / "xla_indexing" / "cases.jsonl"  # ../shared beside the clone


def corpus_map_texts(path: Path = CORPUS) -> list[str]:
    """The ``input`` of every ``simplify`` record of the corpus that parses (empty when
    the corpus is absent)."""
    if not path.exists():
        return []
    texts = []
    with make_context():
        for line in path.read_text().splitlines():
            record = json.loads(line)
            if record.get("kind") != "simplify" or not record.get("input"):
                continue
            try:
                IndexingMap.parse(record["input"])
            except (HloIndexingError, ValueError):
                continue
            texts.append(record["input"])
    return texts


def _random_expr(rng: random.Random, names: list[str], depth: int) -> str:
    if depth == 0 or rng.random() < 0.25:
        return rng.choice(names) if rng.random() < 0.85 else str(rng.randint(0, 20))
    op = rng.choice(["+", "+", "*", "floordiv", "mod"])
    lhs = _random_expr(rng, names, depth - 1)
    if op == "+":
        return f"({lhs} + {_random_expr(rng, names, depth - 1)})"
    if op == "*":
        return f"({lhs} * {rng.choice([2, 3, 4, 8, 16])})"
    return f"({lhs} {op} {rng.choice([2, 3, 4, 8, 16, 64])})"


def random_map_texts(count: int, seed: int = 0) -> list[str]:
    """``count`` random map texts from a seeded generator."""
    rng = random.Random(seed)
    texts = []
    for _ in range(count):
        dims = [f"d{i}" for i in range(rng.randint(1, 3))]
        symbols = [f"s{i}" for i in range(rng.randint(0, 2))]
        names = dims + symbols
        results = [_random_expr(rng, names, rng.randint(2, 4)) for _ in range(rng.randint(1, 2))]
        domain = [f"{n} in [0, {rng.choice([3, 7, 15, 63, 127])}]" for n in names]
        if rng.random() < 0.5:
            domain.append(f"{_random_expr(rng, names, 2)} in [0, {rng.randint(4, 40)}]")
        header = f"({', '.join(dims)})" + (f"[{', '.join(symbols)}]" if symbols else "")
        texts.append(f"{header} -> ({', '.join(results)}), domain: {', '.join(domain)}")
    return texts


def measure(texts: list[str], repeat: int = 3) -> dict[str, Any]:
    """Best-of-``repeat`` time to parse all ``texts`` and to simplify all parsed maps."""
    with make_context():
        maps: list[IndexingMap] = []
        parse_s = best_of(lambda: maps.__setitem__(slice(None), [IndexingMap.parse(t) for t in texts]), repeat)
        simplify_s = best_of(lambda: (clear_caches(), [m.simplify() for m in maps]), repeat)
        proven = prove_s = None
        if isl_available() and maps:
            pairs = [(m, m.simplify()) for m in maps]
            proofs = [prove_equal(m, simplified) for m, simplified in pairs]  # starts isl's server
            proven = sum(bool(p.holds) for p in proofs)
            prove_s = best_of(lambda: [prove_equal(m, simplified) for m, simplified in pairs], repeat)
    return {
        "maps": len(texts),
        "parse_s": parse_s,
        "simplify_s": simplify_s,
        "maps_per_s": len(texts) / simplify_s if simplify_s else float("inf"),
        "ratio": simplify_s / parse_s,
        "prove_ms_per_map": None if prove_s is None else 1000 * prove_s / len(texts),
        "prove_ratio": None if prove_s is None else prove_s / parse_s,
        "proven": proven,
    }
