"""Helpers shared by the tests.

:func:`evaluate_affine` is the tests' own evaluator of ``ir.AffineExpr`` trees, written
independently of the library's (:mod:`hlo_indexing.maps.affine_expr`) so that a test
comparing a map with a brute-force evaluation does not check the library against itself.
"""

from __future__ import annotations

import importlib.util
import itertools
import sys
from pathlib import Path
from types import ModuleType
from typing import TypeVar

import numpy as np

from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.layout import pack
from hlo_indexing.layout.tiling import physical_shape
from hlo_indexing.layout.types import Layout
from hlo_indexing.maps.indexing_map import IndexingMap


#: The repository's root (``python_tests/`` is one of its folders); test files in the
#: folders below read paths from these constants, not from their own ``__file__``.
REPO_ROOT = Path(__file__).resolve().parent.parent
#: ``python_tests/``: the shared helpers and data files (``conformance_baseline.json``, ...).
TESTS = REPO_ROOT / "python_tests"
EXAMPLES = REPO_ROOT / "examples"
LIT_TESTS = REPO_ROOT / "lit_tests"
BENCHMARKS = REPO_ROOT / "benchmarks"
#: The conformance corpora, in ``../shared`` beside the clone (as CI sees it).
CONFORMANCE = REPO_ROOT.parent / "shared" / "conformance"


def load_module(path: Path) -> ModuleType:
    """The Python file ``path`` imported as a module named after its stem (registered in
    ``sys.modules``), without adding its folder to the import path: benchmark scripts and
    sibling test files."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None, path
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    return module


def layout_places(shape: tuple[int, ...], layout: str | None, form: str) -> dict[tuple[int, ...], tuple[int, ...]]:
    """Logical index -> physical index of an array of ``shape`` in ``layout`` (row-major
    when None): the ``"offset"`` in its buffer, or (``"coordinates"``) that offset
    unravelled over the tiled shape; read off the buffer :func:`hlo_indexing.layout.pack`
    makes of an iota, so padding slots get no index."""
    if not shape:
        return {(): ()}
    resolved = Layout.parse(layout) if layout else Layout.row_major(len(shape))
    count = int(np.prod(shape))
    buffer = pack(np.arange(1, count + 1).reshape(shape), resolved)  # 0 marks padding
    tiled = physical_shape(shape, resolved)
    out = {}
    for offset in np.flatnonzero(buffer):
        index = tuple(int(i) for i in np.unravel_index(int(buffer[offset]) - 1, shape))
        out[index] = (int(offset),) if form == "offset" else tuple(int(c) for c in np.unravel_index(int(offset), tiled))
    return out


#: Python ints, or numpy integer arrays (evaluated elementwise, broadcasting).
Value = TypeVar("Value", int, np.ndarray)


def evaluate_affine(expr: ir.AffineExpr, dims: list[Value] | tuple[Value, ...], symbols: list[Value] | tuple[Value, ...]) -> Value:
    """The value of ``expr`` with ``d_i = dims[i]`` and ``s_j = symbols[j]``: MLIR's
    semantics (``floordiv`` and ``mod`` round towards minus infinity, ``ceildiv`` up,
    ``a mod b = a - b * (a floordiv b)``). A constant is a Python int (numpy broadcasts
    it). ``ZeroDivisionError`` names the expression when a divisor is 0."""
    expr = expr.maybe_downcast()
    if isinstance(expr, ir.AffineConstantExpr):
        return expr.value
    if isinstance(expr, ir.AffineDimExpr):
        return dims[expr.position]
    if isinstance(expr, ir.AffineSymbolExpr):
        return symbols[expr.position]
    a, b = evaluate_affine(expr.lhs, dims, symbols), evaluate_affine(expr.rhs, dims, symbols)
    if isinstance(expr, ir.AffineAddExpr):
        return a + b
    if isinstance(expr, ir.AffineMulExpr):
        return a * b
    if np.any(np.asarray(b) == 0):
        raise ZeroDivisionError(f"a divisor of {expr} is 0")
    quotient = a // b
    if isinstance(expr, ir.AffineFloorDivExpr):
        return quotient
    if isinstance(expr, ir.AffineCeilDivExpr):
        return -((-a) // b)
    assert isinstance(expr, ir.AffineModExpr), f"unknown affine expression kind: {expr}"
    return a - b * quotient


#: A test-built expression tree: ``("d", i)``, ``("s", j)``, ``("c", value)`` or
#: ``(op, lhs, rhs)`` with ``op`` one of ``+ * floordiv mod`` (the random-map tests build
#: them, print them as map text and evaluate them as the oracle).
Tree = tuple


def evaluate_tree(tree: Tree, dims: list[Value] | tuple[Value, ...], symbols: list[Value] | tuple[Value, ...]) -> Value:
    """The value of ``tree`` with ``d_i = dims[i]`` and ``s_j = symbols[j]`` (floor
    semantics for ``floordiv`` and ``mod``); a constant is a Python int."""
    kind = tree[0]
    if kind == "d":
        return dims[tree[1]]
    if kind == "s":
        return symbols[tree[1]]
    if kind == "c":
        return tree[1]
    a, b = evaluate_tree(tree[1], dims, symbols), evaluate_tree(tree[2], dims, symbols)
    if kind == "+":
        return a + b
    if kind == "*":
        return a * b
    quotient = a // b
    if kind == "floordiv":
        return quotient
    assert kind == "mod", f"unknown tree operation: {kind}"
    return a - b * quotient


def tree_text(tree: Tree) -> str:
    """``tree`` in the map text syntax (parenthesised at every operation)."""
    kind = tree[0]
    if kind in ("d", "s"):
        return f"{kind}{tree[1]}"
    if kind == "c":
        return str(tree[1])
    return f"({tree_text(tree[1])} {kind} {tree_text(tree[2])})"


def feasible(m: IndexingMap, dims, symbols) -> bool:
    """Whether the point ``(dims, symbols)`` is in ``m``'s domain: every variable in its
    range, every constraint met (evaluated by :func:`evaluate_affine`)."""
    for value, var in zip(list(dims) + list(symbols), m.dim_vars + m.symbol_vars):
        if not var.bounds.lower <= value <= var.bounds.upper:
            return False
    return all(c.lower <= evaluate_affine(e, dims, symbols) <= c.upper for e, c in m.constraints.items())


def image_sets(m: IndexingMap, dim_box, symbol_box) -> dict:
    """dims -> set of images, over the boxes (points outside ``m``'s domain skipped): the
    brute-force relation of a map, to compare two maps with."""
    out: dict = {}
    if m.is_known_empty():
        return out
    for dims in itertools.product(*dim_box):
        for symbols in itertools.product(*symbol_box):
            if feasible(m, dims, symbols):
                out.setdefault(dims, set()).add(tuple(evaluate_affine(e, dims, symbols) for e in m.results))
    return out
