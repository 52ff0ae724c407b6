"""Benchmark: ``pack``/``unpack`` against numpy's own pad-reshape-transpose.

Run: ``python benchmarks/bench_layout_pack.py [--elements N]`` (default 64M f32), or through
``benchmarks/run.py``. Prints the best-of-3 time of each and the ratio ours / numpy
(target <= 1.25)."""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from hlo_indexing.layout.packing import pack, unpack
from hlo_indexing.layout.types import Shape


def _best(fn, repeat: int = 3) -> float:
    best = math.inf
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def _numpy_pack(x: np.ndarray, t0: int, t1: int) -> np.ndarray:
    d0, d1 = x.shape
    p0, p1 = -(-d0 // t0) * t0, -(-d1 // t1) * t1
    padded = np.pad(x, ((0, p0 - d0), (0, p1 - d1)))
    return np.ascontiguousarray(padded.reshape(p0 // t0, t0, p1 // t1, t1).transpose(0, 2, 1, 3)).reshape(-1)


def _numpy_unpack(buf: np.ndarray, d0: int, d1: int, t0: int, t1: int) -> np.ndarray:
    p0, p1 = -(-d0 // t0) * t0, -(-d1 // t1) * t1
    tiles = buf.reshape(p0 // t0, p1 // t1, t0, t1).transpose(0, 2, 1, 3).reshape(p0, p1)
    return np.ascontiguousarray(tiles[:d0, :d1])


def measure(elements: int = 64 * 2**20, repeat: int = 3) -> list[dict]:
    """Pack/unpack of about ``elements`` f32 into ``{1,0:T(8,128)}`` tiles, for an
    aligned shape and a padded one: best-of-``repeat`` seconds and ratios ours / numpy."""
    side = math.isqrt(elements)
    records = []
    for d0, d1 in [(side // 8 * 8, side // 128 * 128), (side - 3, side + 5)]:
        shape = Shape.parse(f"f32[{d0},{d1}]{{1,0:T(8,128)}}")
        x = np.random.default_rng(0).random((d0, d1), dtype=np.float32)
        ours_pack = _best(lambda: pack(x, shape.layout), repeat)
        ref_pack = _best(lambda: _numpy_pack(x, 8, 128), repeat)
        buf = pack(x, shape.layout)
        if not np.array_equal(buf, _numpy_pack(x, 8, 128)):
            raise AssertionError(f"pack of {shape} differs from numpy's pad-reshape-transpose")
        ours_unpack = _best(lambda: unpack(buf, shape), repeat)
        ref_unpack = _best(lambda: _numpy_unpack(buf, d0, d1, 8, 128), repeat)
        records.append(
            {
                "shape": str(shape),
                "elements": d0 * d1,
                "pack_s": ours_pack,
                "numpy_pack_s": ref_pack,
                "pack_ratio": ours_pack / ref_pack,
                "unpack_s": ours_unpack,
                "numpy_unpack_s": ref_unpack,
                "unpack_ratio": ours_unpack / ref_unpack,
            }
        )
        del x, buf
    return records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--elements", type=int, default=64 * 2**20)
    args = parser.parse_args()
    for r in measure(args.elements):
        print(
            f"{r['shape']}: pack {r['pack_s']:.3f}s vs numpy {r['numpy_pack_s']:.3f}s (ratio {r['pack_ratio']:.2f}); "
            f"unpack {r['unpack_s']:.3f}s vs numpy {r['numpy_unpack_s']:.3f}s (ratio {r['unpack_ratio']:.2f})"
        )


if __name__ == "__main__":
    main()
