"""Fused maps through chains of convolutions (strided, padded, valid), against a
brute-force receptive field: every input element an output element reads, walked back
layer by layer. Composition through such chains leaves one window variable per layer
and dimension, which :mod:`hlo_indexing.maps.range_variables` merges or projects out
where that is exact; the relation must stay the brute force's."""

from __future__ import annotations

import itertools

import pytest

import hlo_indexing
from helpers import image_sets

#: Input size, channels and window of the chains.
CHANNELS, WINDOW = 2, 3


def chain_text(size: int, layers: list[tuple[int, ...]]) -> tuple[str, list[int]]:
    """``@main(x, w)``: 3x3 convolutions ``(stride, pad[, dilation])`` applied in turn to
    ``x`` (NHWC, square), all with the weights ``w``; and the spatial size of each tensor."""
    lines, sizes, previous = [], [size], "%x"
    for k, (stride, pad, *rest) in enumerate(layers):
        dilation = rest[0] if rest else 1
        before = sizes[-1]
        after = (before + 2 * pad - (WINDOW - 1) * dilation - 1) // stride + 1
        sizes.append(after)
        lines.append(
            f"  %{k} = stablehlo.convolution({previous}, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], "
            f"window = {{stride = [{stride}, {stride}], pad = [[{pad}, {pad}], [{pad}, {pad}]], "
            f"rhs_dilate = [{dilation}, {dilation}]}} "
            "{batch_group_count = 1 : i64, feature_group_count = 1 : i64} : "
            f"(tensor<1x{before}x{before}x{CHANNELS}xf32>, tensor<3x3x{CHANNELS}x{CHANNELS}xf32>) "
            f"-> tensor<1x{after}x{after}x{CHANNELS}xf32>"
        )
        previous = f"%{k}"
    out = f"tensor<1x{sizes[-1]}x{sizes[-1]}x{CHANNELS}xf32>"
    text = (
        f"func.func @main(%x: tensor<1x{size}x{size}x{CHANNELS}xf32>, %w: tensor<3x3x{CHANNELS}x{CHANNELS}xf32>) "
        f"-> {out} {{\n" + "\n".join(lines) + f"\n  return {previous} : {out}\n}}"
    )
    return text, sizes


def receptive_field(position: int, layers: list[tuple[int, ...]], sizes: list[int]) -> set[int]:
    """The input positions (along one spatial dimension) that output ``position`` reads."""
    reached = {position}
    for (stride, pad, *rest), before in zip(reversed(layers), reversed(sizes[:-1])):
        dilation = rest[0] if rest else 1
        reached = {q * stride - pad + k * dilation for q in reached for k in range(WINDOW)} & set(range(before))
    return reached


def brute_force(layers: list[tuple[int, ...]], sizes: list[int]) -> dict:
    out = {}
    last = sizes[-1]
    for y, x, f in itertools.product(range(last), range(last), range(CHANNELS)):
        rows, columns = receptive_field(y, layers, sizes), receptive_field(x, layers, sizes)
        out[(0, y, x, f)] = {(0, r, c, k) for r in rows for c in columns for k in range(CHANNELS)}
    return out


def relation(maps) -> dict:
    out: dict = {}
    for m in maps:
        boxes = [range(v.bounds.lower, v.bounds.upper + 1) for v in m.dim_vars + m.symbol_vars]
        for point, images in image_sets(m, boxes[: m.num_dims], boxes[m.num_dims :]).items():
            out.setdefault(point, set()).update(images)
    return out


@pytest.mark.parametrize(
    "size, layers",
    [
        (12, [(1, 0)] * 4),  # valid: the windows merge
        (9, [(1, 1)] * 3),  # same padding: nested bounds per layer
        (9, [(1, 1), (2, 1), (1, 0)]),
        (11, [(2, 0), (1, 1), (1, 0)]),
        (11, [(1, 2, 2)] * 3),  # dilated, padded: window variables are terms 2 * s
        (13, [(1, 0, 2), (2, 1), (1, 1, 3)]),
    ],
)
def test_fused_maps_of_convolution_chains_are_their_receptive_fields(size, layers):
    text, sizes = chain_text(size, layers)
    (main,) = hlo_indexing.analyze(text).computations
    maps = main.maps[0].argument_maps[0]
    assert relation(maps) == brute_force(layers, sizes)


@pytest.mark.parametrize("layers", [[(1, 0)] * 4, [(1, 1)] * 4, [(1, 2, 2)] * 4])
def test_a_chain_reads_through_one_window_variable_per_dimension(layers):
    text, _ = chain_text(12, layers)
    (main,) = hlo_indexing.analyze(text).computations
    (m,) = main.maps[0].argument_maps[0]
    # rows, columns (each the sum of four 3-wide windows) and input channels
    assert sorted((v.bounds.lower, v.bounds.upper) for v in m.range_vars) == [(0, 1), (0, 8), (0, 8)]
    assert len(m.constraints) == (0 if layers[0][1] == 0 else 2)  # padded: one bound per dimension
