"""The fused walk's shortcuts (issue #17) give the maps the plain walks give.

* ``computation_indexing(f, shared=d)`` with one ``d`` for every computation of a module
  (what ``analyze`` does: copies of a function then cost a walk) equals
  ``computation_indexing(f)`` alone and ``fusion_indexing(f, r)`` for each result ``r``
  (a walk per result, from scratch), maps and over-approximation notes alike, on every
  lit input, on renamed copies of a function and on a JAX training step (many results,
  elementwise chains that share their operands' table entries); also on copies whose
  maps grow past the caps, where each copy's over-approximation names its own value
  (the capped entry is not shared across copies); the memo of merged entries stays
  within its bound on code that does not repeat itself.
* The relation of a fused map through a chain of identity ops after a transpose and a
  broadcast (the case where a value shares its operand's entry) equals the one found by
  evaluating the program on numpy index arrays.
* ``analyze`` pauses the garbage collector and leaves it as it found it, also on error.
"""

from __future__ import annotations

import gc
import itertools
from pathlib import Path

import numpy as np
import pytest

import hlo_indexing
from hlo_indexing.analysis.fusion import computation_indexing, fusion_indexing
from hlo_indexing.analysis.map_sets import MERGED_MEMO_SIZE
from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.dialect_glue.call_like import computations
from hlo_indexing.dialect_glue.parsing import parse_module
from hlo_indexing.errors import HloIndexingError
from hlo_indexing.frontend import gc_paused

LIT = Path(__file__).resolve().parents[1] / "lit_tests"


def _chunks() -> list[tuple[str, str]]:
    found = []
    for path in sorted(LIT.rglob("*.mlir")):
        if "Output" in path.parts:
            continue
        for k, chunk in enumerate(path.read_text().split("// -----")):
            found.append((f"{path.relative_to(LIT)}#{k}", chunk))
    return found


def _as_tuple(fused) -> tuple:
    return fused.maps, fused.over_approximated, tuple(dict(e) for e in fused.elements)


def _check_module(module: ir.Module) -> int:
    """Compares the three ways on every computation of ``module``; returns how many."""
    shared: dict = {}
    count = 0
    for _, op in computations(module.operation):
        try:
            alone = computation_indexing(op)
        except (HloIndexingError, ValueError, NotImplementedError) as exc:
            with pytest.raises(type(exc)):
                computation_indexing(op, shared=shared)
            continue
        together = computation_indexing(op, shared=shared)
        assert [_as_tuple(f) for f in together] == [_as_tuple(f) for f in alone]
        if op.name == "func.func":
            per_result = [fusion_indexing(op, r) for r in range(len(alone))]
            assert [f.maps for f in alone] == [f.maps for f in per_result]
            assert [f.over_approximated for f in alone] == [f.over_approximated for f in per_result]
        count += 1
    return count


@pytest.mark.parametrize("name,text", _chunks(), ids=[name for name, _ in _chunks()])
def test_shared_walk_equals_plain_walks_on_lit_inputs(name: str, text: str) -> None:
    try:
        module = parse_module(text)
    except HloIndexingError:
        pytest.skip("not a module on its own (a diagnostics case)")
    _check_module(module)


COPY = """
  func.func @f{k}(%a: tensor<4x6xf32>, %b: tensor<6xf32>) -> (tensor<6x4xf32>, tensor<24xf32>) {{
    %t = stablehlo.transpose %a, dims = [1, 0] : (tensor<4x6xf32>) -> tensor<6x4xf32>
    %c = stablehlo.broadcast_in_dim %b, dims = [0] : (tensor<6xf32>) -> tensor<6x4xf32>
    %m = stablehlo.multiply %t, %c : tensor<6x4xf32>
    %e = stablehlo.exponential %m : tensor<6x4xf32>
    %n = stablehlo.negate %e : tensor<6x4xf32>
    %s = stablehlo.add %n, %t : tensor<6x4xf32>
    %r = stablehlo.reshape %s : (tensor<6x4xf32>) -> tensor<24xf32>
    return %s, %r : tensor<6x4xf32>, tensor<24xf32>
  }}
"""


def test_shared_walk_equals_plain_walks_on_copies() -> None:
    module = parse_module("module {" + "".join(COPY.format(k=k) for k in range(4)) + "}")
    assert _check_module(module) == 4


def _capped_copy(k: int) -> str:
    """A chain of alternating reshapes and transposes (exact maps past the caps) after
    ``k`` unused ops, which shift the printed names of the chain's values."""
    lines = [f"    %z{i} = stablehlo.negate %a : tensor<4x6xf32>" for i in range(k)]
    previous = "%a"
    for i in range(10):
        lines.append(f"    %r{i} = stablehlo.reshape {previous} : (tensor<4x6xf32>) -> tensor<6x4xf32>")
        lines.append(f"    %t{i} = stablehlo.transpose %r{i}, dims = [1, 0] : (tensor<6x4xf32>) -> tensor<4x6xf32>")
        previous = f"%t{i}"
    lines.append(f"    %s = stablehlo.add {previous}, %a : tensor<4x6xf32>")
    body = "\n".join(lines)
    return f"  func.func @f{k}(%a: tensor<4x6xf32>) -> tensor<4x6xf32> {{\n{body}\n    return %s : tensor<4x6xf32>\n  }}\n"


def test_shared_walk_equals_plain_walks_on_capped_copies() -> None:
    module = parse_module("module {" + "".join(_capped_copy(k) for k in range(3)) + "}")
    assert _check_module(module) == 3
    shared: dict = {}
    names = [computation_indexing(f, shared=shared)[0].over_approximated for f in module.body.operations]
    assert len(set(names)) == 3 and all(names)


def test_merged_entries_memo_is_bounded_on_distinct_code() -> None:
    functions = []
    for k in range(1, 31):  # a different shape per function: no entry is met twice
        t = f"tensor<{k}x8xf32>"
        lines, previous = [], "%a"
        for i in range(50):
            op = "stablehlo.add" if i % 2 else "stablehlo.multiply"
            lines.append(f"    %v{i} = {op} {previous}, %b : {t}")
            previous = f"%v{i}"
        body = "\n".join(lines)
        functions.append(f"  func.func @f{k}(%a: {t}, %b: {t}) -> {t} {{\n{body}\n    return {previous} : {t}\n  }}\n")
    module = parse_module("module {" + "".join(functions) + "}")
    shared: dict = {}
    merges = 0
    for f in module.body.operations:
        computation_indexing(f, shared=shared)
        (composer,) = shared.values()
        merges = max(merges, len(composer.merged))
    assert 0 < merges <= MERGED_MEMO_SIZE < 30 * 50
    assert _check_module(module) == 30


def _index_relation(fused_maps: frozenset) -> set:
    pairs: set = set()
    for m in fused_maps:
        pairs |= m.relation()
    return pairs


def test_fused_relation_through_shared_entries_equals_numpy_evaluation() -> None:
    module = parse_module("module {" + COPY.format(k=0) + "}")
    func = module.body.operations[0]
    fused = computation_indexing(func)
    # numpy: every output element's inputs, from index-valued inputs (a 4x6 and a 6).
    a_index = np.arange(24).reshape(4, 6)
    s_from_a = a_index.T  # %s reads %t (and %n, through elementwise ops, reads %t too)
    s_from_b = np.broadcast_to(np.arange(6)[:, None], (6, 4))
    r_from_a, r_from_b = s_from_a.reshape(24), s_from_b.reshape(24)
    expected = {
        (0, 0): {((i, j), tuple(int(x) for x in np.unravel_index(s_from_a[i, j], (4, 6)))) for i, j in itertools.product(range(6), range(4))},
        (0, 1): {((i, j), (int(s_from_b[i, j]),)) for i, j in itertools.product(range(6), range(4))},
        (1, 0): {((i,), tuple(int(x) for x in np.unravel_index(r_from_a[i], (4, 6)))) for i in range(24)},
        (1, 1): {((i,), (int(r_from_b[i]),)) for i in range(24)},
    }
    for (result, argument), pairs in expected.items():
        assert _index_relation(fused[result].maps[argument]) == pairs


def test_shared_walk_equals_plain_walks_on_a_training_step() -> None:
    pytest.importorskip("jax")
    import jax_training_step  # benchmarks/ (pytest's pythonpath); it needs JAX, skipped above

    module = parse_module(jax_training_step.training_step_text(1))
    assert _check_module(module) >= 1


@pytest.mark.parametrize("enabled", [True, False])
def test_analyze_leaves_the_garbage_collector_as_it_found_it(enabled: bool) -> None:
    was = gc.isenabled()
    try:
        gc.enable() if enabled else gc.disable()
        hlo_indexing.analyze(COPY.format(k=0))
        assert gc.isenabled() is enabled
        with pytest.raises(RuntimeError, match="inside"):
            with gc_paused():
                assert not gc.isenabled()
                raise RuntimeError("inside")
        assert gc.isenabled() is enabled
    finally:
        gc.enable() if was else gc.disable()
