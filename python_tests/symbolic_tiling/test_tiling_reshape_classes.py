"""The reshape classes of XLA's symbolic tile analysis tests that issue 27 lists (an
expanding reshape tiled past its dimension's bound, collapsing reshapes whose inner
dimensions are fully spanned or stepped, a split reshape after a reverse), each built
with the brute-force :class:`~tiling_fixtures.Fusion` and checked at every valid tiling:
every tile holds what its program reads, with the read and held counts the exactness
reports."""

from __future__ import annotations

import pytest
from tiling_fixtures import Fusion, analysis_of, check_reads_and_exactness, functions_of

from hlo_indexing.symbolic_tiling.exactness import tiling_exactness
from hlo_indexing.symbolic_tiling.tiled_computation import tiled_computation
from hlo_indexing.symbolic_tiling.tiled_fusion import TilingError


def expanding_reshape() -> tuple[Fusion, object]:
    """XLA's ExpandingReshapeIsSupportedWithTileParamsOutsideBounds: abs, 20 -> 4x5."""
    f = Fusion()
    return f, f.reshape(f.unary("abs", f.parameter([20])), [4, 5])


def collapse_spanned() -> tuple[Fusion, object]:
    """3x4x8 -> 96: a tile spans the inner dimensions whole or stays inside one."""
    f = Fusion()
    return f, f.reshape(f.parameter([3, 4, 8]), [96])


def collapse_stepped() -> tuple[Fusion, object]:
    """Every second column of 4x16, collapsed: the inner dimension steps by 2."""
    f = Fusion()
    return f, f.reshape(f.slice(f.parameter([4, 16]), [0, 0], [4, 16], [1, 2]), [32])


def collapse_transposed() -> tuple[Fusion, object]:
    """8x4 transposed, collapsed: the collapsed inner dimension strides by 4."""
    f = Fusion()
    return f, f.reshape(f.transpose(f.parameter([8, 4]), [1, 0]), [32])


def split_after_reverse() -> tuple[Fusion, object]:
    """24 reversed, split into 4x6: constraints as for the split, negative strides."""
    f = Fusion()
    return f, f.reshape(f.reverse(f.parameter([24]), [0]), [4, 6])


CASES = {
    "expanding_reshape": expanding_reshape,
    "collapse_spanned": collapse_spanned,
    "collapse_stepped": collapse_stepped,
    "collapse_transposed": collapse_transposed,
    "split_after_reverse": split_after_reverse,
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_valid_tiling_holds_what_it_reads(name: str) -> None:
    fusion, result = CASES[name]()
    with functions_of(fusion.text(name, result)) as functions:
        analysis = analysis_of(functions[name])
        tiled = refused = 0
        for sizes in analysis.valid_tilings():
            try:
                computation = tiled_computation(analysis, sizes)
            except TilingError as exc:  # XLA's "negative strides" (UNIMPLEMENTED) only
                assert exc.status == "UNIMPLEMENTED" and "negative stride" in exc.reason, exc
                refused += 1
                continue
            tiled += check_reads_and_exactness(fusion, result, computation, tiling_exactness(analysis, sizes))
        assert tiled >= 4
        assert (refused > 0) == (name == "split_after_reverse")


def test_a_split_after_a_reverse_is_constrained_as_the_split() -> None:
    # 4x6 tiles of the reversed 24: whole rows, or a piece of one row (t0 = 1), or one
    # column (t1 = 1); 2x4 would read two broken runs.
    fusion, result = split_after_reverse()
    with functions_of(fusion.text("f", result)) as functions:
        analysis = analysis_of(functions["f"])
        assert [analysis.satisfies_constraints(s) for s in ([2, 6], [1, 4], [4, 1], [2, 4])] == [True, True, True, False]


def test_an_expanding_reshape_tile_may_pass_the_dimension_bound() -> None:
    # XLA's tiling {1, 8} of 4x5: the parameter's tile is 8 elements at 5 * pid, which
    # holds the 5 the row reads.
    fusion, result = expanding_reshape()
    with functions_of(fusion.text("f", result)) as functions:
        analysis = analysis_of(functions["f"])
        computation = tiled_computation(analysis, [1, 8])
        parameter = next(i for i in computation.instructions if i.node.parameter_number == 0)
        assert (parameter.tile_sizes, parameter.tile_strides) == ((8,), (1,))
        assert [parameter.tile_offsets_indexing.evaluate([pid]) for pid in range(4)] == [(0,), (5,), (10,), (15,)]
        assert check_reads_and_exactness(fusion, result, computation, tiling_exactness(analysis, [1, 8])) == 4
