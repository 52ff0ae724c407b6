"""Runtime variables that read one value are one variable in a fused map
(:mod:`hlo_indexing.analysis.runtime_identity`): a scan step reads row ``i`` of its
carry and writes it back at row ``i``, so each output row reads its own row only.

The fused maps' relation (runtime variables enumerated over their ranges) is compared
with the dependences of a numpy model of each function, found by perturbing every
input element for every value of the start indices."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import hlo_indexing
from helpers import image_sets

ROWS, COLUMNS = 6, 3


def step_text(slice_start: str, update_start: str, slice_rows: int) -> str:
    """``dynamic_update_slice(x, tanh(dynamic_slice(x, slice_start)[:1]), update_start)``."""
    return f"""
func.func @step(%x: tensor<{ROWS}x{COLUMNS}xf32>, %i: tensor<i32>, %j: tensor<i32>) -> tensor<{ROWS}x{COLUMNS}xf32> {{
  %z = stablehlo.constant dense<0> : tensor<i32>
  %s = stablehlo.dynamic_slice %x, {slice_start}, %z, sizes = [{slice_rows}, {COLUMNS}]
      : (tensor<{ROWS}x{COLUMNS}xf32>, tensor<i32>, tensor<i32>) -> tensor<{slice_rows}x{COLUMNS}xf32>
  %h = stablehlo.slice %s [0:1, 0:{COLUMNS}] : (tensor<{slice_rows}x{COLUMNS}xf32>) -> tensor<1x{COLUMNS}xf32>
  %t = stablehlo.tanh %h : tensor<1x{COLUMNS}xf32>
  %u = stablehlo.dynamic_update_slice %x, %t, {update_start}, %z
      : (tensor<{ROWS}x{COLUMNS}xf32>, tensor<1x{COLUMNS}xf32>, tensor<i32>, tensor<i32>) -> tensor<{ROWS}x{COLUMNS}xf32>
  return %u : tensor<{ROWS}x{COLUMNS}xf32>
}}
"""


def model(x: np.ndarray, i: int, j: int, slice_start: str, update_start: str, slice_rows: int) -> np.ndarray:
    """The function in numpy, with XLA's clamping of start indices."""
    starts = {"%i": i, "%j": j}
    read = min(max(starts[slice_start], 0), ROWS - slice_rows)
    write = min(max(starts[update_start], 0), ROWS - 1)
    out = x.copy()
    out[write] = np.tanh(x[read])
    return out


def dependences(slice_start: str, update_start: str, slice_rows: int) -> dict:
    """Output element -> the elements of ``x`` it depends on, over every start value."""
    out: dict = {}
    rng = np.random.default_rng(0)
    x = rng.standard_normal((ROWS, COLUMNS))
    for i, j in itertools.product(range(-1, ROWS + 1), repeat=2):
        base = model(x, i, j, slice_start, update_start, slice_rows)
        for r, c in itertools.product(range(ROWS), range(COLUMNS)):
            nudged = x.copy()
            nudged[r, c] += 1.0
            for changed in zip(*np.nonzero(model(nudged, i, j, slice_start, update_start, slice_rows) != base)):
                out.setdefault(tuple(int(k) for k in changed), set()).add((r, c))
    return out


def fused_relation(text: str) -> dict:
    (step,) = hlo_indexing.analyze(text).computations
    out: dict = {}
    for m in step.maps[0].argument_maps[0]:
        boxes = [range(v.bounds.lower, v.bounds.upper + 1) for v in m.dim_vars + m.symbol_vars]
        for point, images in image_sets(m, boxes[: m.num_dims], boxes[m.num_dims :]).items():
            out.setdefault(point, set()).update(images)
    return out


def test_a_scan_step_reads_the_row_it_writes_and_nothing_else():
    text = step_text("%i", "%i", 1)
    expected = dependences("%i", "%i", 1)
    assert expected == {(r, c): {(r, c)} for r in range(ROWS) for c in range(COLUMNS)}
    assert fused_relation(text) == expected  # before: every output row read every row


@pytest.mark.parametrize(
    "slice_start, update_start, slice_rows",
    [
        ("%i", "%j", 1),  # two values: an updated row reads any row
        ("%i", "%i", 2),  # one value, two clamp ranges: the starts differ at the last row
    ],
)
def test_starts_that_may_differ_stay_apart(slice_start, update_start, slice_rows):
    relation = fused_relation(step_text(slice_start, update_start, slice_rows))
    expected = dependences(slice_start, update_start, slice_rows)
    for element, read in expected.items():
        assert read <= relation[element], element  # sound
    assert any(len(read) > 1 for read in relation.values())  # and not made one value
