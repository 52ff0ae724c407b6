"""``--hlo-verify-exact`` (:mod:`hlo_indexing.analysis.verify_exact`): every lit test's
per-op and fused maps are proven by isl to have the relations of their unsimplified
forms; a wrong map is caught; without islpy the option says the proof was not run."""

from __future__ import annotations

import pytest

from hlo_indexing import IndexingMap, parse_module
from hlo_indexing.analysis import verify_exact
from hlo_indexing.errors import HloIndexingError
from hlo_indexing.maps import exact
from hlo_indexing.maps.exact import isl_available
from hlo_indexing.tools.opt import main
from helpers import LIT_TESTS

needs_isl = pytest.mark.skipif(not isl_available(), reason="islpy is not installed (the 'exact' extra)")


def _chunks() -> list[tuple[str, str]]:
    out = []
    for path in sorted(LIT_TESTS.rglob("*.mlir")):
        if "Output" in path.parts:
            continue
        for k, chunk in enumerate(path.read_text().split("// -----")):
            out.append((f"{path.relative_to(LIT_TESTS)}#{k}", chunk))
    return out


@needs_isl
def test_every_lit_chunk_is_proven() -> None:
    proven = parsed = 0
    for name, chunk in _chunks():
        try:
            module = parse_module(chunk, filename=name)
        except HloIndexingError:
            continue  # the error tests' inputs
        parsed += 1
        checks = verify_exact.verify_module(module.operation)
        errors = [c.message for c in checks if c.severity == "error"]
        assert not errors, f"{name}: {errors}"
        summary = checks[-1].message
        assert "not proven" not in summary, f"{name}: {summary}"
        proven += int(summary.split(": ", 1)[1].split(" ", 1)[0])
    assert parsed > 50 and proven > 800, (parsed, proven)


@needs_isl
def test_a_wrong_simplification_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    module = parse_module(
        """
        func.func @f(%x: tensor<8xf32>) -> tensor<4xf32> {
          %0 = stablehlo.slice %x [1:8:2] : (tensor<8xf32>) -> tensor<4xf32>
          return %0 : tensor<4xf32>
        }"""
    )
    real = verify_exact.indexings

    def off_by_one(op, direction, simplify):  # simplified maps read one element further
        found = real(op, direction, simplify)
        if not simplify:
            return found
        shifted = IndexingMap.parse("(d0) -> (d0 * 2 + 2), domain: d0 in [0, 3]")
        return [type(i)((frozenset({shifted}),), i.runtime, i.replica_maps, i.direction) for i in found]

    monkeypatch.setattr(verify_exact, "indexings", off_by_one)
    errors = [c for c in verify_exact.verify_module(module.operation) if c.severity == "error"]
    assert errors and "differs from its unsimplified form" in errors[0].message


def test_without_islpy_the_option_says_the_proof_was_not_run(monkeypatch, tmp_path, capsys) -> None:
    monkeypatch.setattr(exact, "_installed", lambda: False)
    source = tmp_path / "t.mlir"
    source.write_text("func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n  return %x : tensor<4xf32>\n}\n")
    assert main([str(source), "--hlo-verify-exact", "-o", str(tmp_path / "out.mlir")]) == 0
    assert "islpy is not installed" in capsys.readouterr().err
