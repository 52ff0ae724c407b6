"""numpy conversion between a logical array and its physical (tiled, padded) buffer.

:func:`pack` gives the 1-D buffer of :func:`hlo_indexing.layout.tiling.padded_size`
elements that a layout describes, padding slots set to ``fill``; :func:`unpack` reads
the logical array back. Both are vectorised: tiling is pad + reshape + transpose per tile
level, done on views. A single tile level without ``*`` (the common case) moves the data
with exactly one copy, block by block (full tiles, then the partial tiles at each
dimension's end); other layouts go level by level, copying only where numpy must.

Example::

    >>> x = np.arange(15, dtype=np.float32).reshape(3, 5)
    >>> buf = pack(x, Layout.parse("{1,0:T(2,2)}"), fill=-1)
    >>> buf[17], buf.size
    (np.float32(13.0), 24)
    >>> bool((unpack(buf, (3, 5), Layout.parse("{1,0:T(2,2)}")) == x).all())
    True
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence

import numpy as np

from hlo_indexing.errors import InvalidArgumentError
from hlo_indexing.layout.tiling import TileStep, TilingPlan, plan
from hlo_indexing.layout.types import Layout, Shape


def pack(array: np.ndarray, layout: Layout, fill: object = 0) -> np.ndarray:
    """The physical buffer (1-D, ``array.dtype``) of ``array`` under ``layout``, with
    every padding slot (tile and ``L(n)`` padding) set to ``fill``."""
    array = np.asarray(array)
    p = plan(array.shape, layout)
    out = np.empty(p.padded_size, dtype=array.dtype)
    n = math.prod(p.tiled_shape)
    out[n:] = fill
    tiled = out[:n].reshape(p.tiled_shape)
    if _is_simple(p):
        logical = _with_ones(array.transpose(p.permutation), p.steps[0].ones if p.steps else 0)
        for src, dst in _blocks(p, logical, tiled):
            np.copyto(dst, src)
        if p.steps:
            _fill_padding(p.steps[0], tiled, fill)
        return out
    current = array.transpose(p.permutation)
    for step in p.steps:
        current = current.reshape(step.combined)
        k = len(step.tile)
        head = step.combined[: len(step.combined) - k]
        padded = head + tuple(q * t for q, t in zip(step.output_shape[len(head) : len(head) + k], step.tile))
        if padded != current.shape:
            current = _pad(current, padded, fill)
        current = current.reshape(head + tuple(itertools.chain.from_iterable(_split_pairs(step)))).transpose(_to_tiled(len(head), k))
    np.copyto(tiled, current.reshape(p.tiled_shape) if current.ndim == 0 else current)
    return out


def unpack(buffer: np.ndarray, shape: Shape | Sequence[int], layout: Layout | None = None) -> np.ndarray:
    """The logical array (C-contiguous, a new array) stored in ``buffer`` (at least
    ``padded_size`` elements, flat) under ``layout`` (default: the :class:`Shape`'s)."""
    buffer = np.asarray(buffer).reshape(-1)
    p = plan(shape, layout)
    if buffer.size < p.padded_size:
        raise InvalidArgumentError(f"buffer has {buffer.size} elements, the layout needs {p.padded_size}")
    n = math.prod(p.tiled_shape)
    tiled = buffer[:n].reshape(p.tiled_shape)
    result = np.empty(p.dims, dtype=buffer.dtype)
    if _is_simple(p):
        logical = _with_ones(result.transpose(p.permutation), p.steps[0].ones if p.steps else 0)
        for dst, src in _blocks(p, logical, tiled):
            np.copyto(dst, src)
        return result
    current = tiled
    for step in reversed(p.steps):
        k = len(step.tile)
        h = len(step.combined) - k
        split = current.transpose(_from_tiled(h, k)).reshape(step.combined[:h] + tuple(q * t for q, t in _split_pairs(step)))
        current = split[tuple(slice(0, d) for d in step.combined)].reshape(step.expanded)
        current = current.reshape(step.input_shape)
    inverse = np.argsort(p.permutation)
    np.copyto(result, current.reshape(p.physical_dims).transpose(inverse))
    return result


def _is_simple(p: TilingPlan) -> bool:
    """At most one tile level, without ``*``: handled block by block with one copy."""
    return len(p.steps) == 0 or (len(p.steps) == 1 and all(len(g) == 1 for g in p.steps[0].groups))


def _with_ones(array: np.ndarray, ones: int) -> np.ndarray:
    return array[(np.newaxis,) * ones] if ones else array


def _split_pairs(step: TileStep) -> list[tuple[int, int]]:
    """(tile count, tile size) for each tiled dim of ``step``."""
    k = len(step.tile)
    h = len(step.combined) - k
    return list(zip(step.output_shape[h : h + k], step.tile))


def _to_tiled(h: int, k: int) -> tuple[int, ...]:
    """Axes taking ``head, q0, t0, ..., qk-1, tk-1`` to ``head, q0..qk-1, t0..tk-1``."""
    return tuple(range(h)) + tuple(h + 2 * i for i in range(k)) + tuple(h + 2 * i + 1 for i in range(k))


def _from_tiled(h: int, k: int) -> tuple[int, ...]:
    """The inverse of :func:`_to_tiled`."""
    return tuple(np.argsort(_to_tiled(h, k)))


def _pad(array: np.ndarray, shape: tuple[int, ...], fill: object) -> np.ndarray:
    """``array`` in the top corner of a new array of ``shape``; the rest is ``fill``."""
    out = np.empty(shape, dtype=array.dtype)
    out[tuple(slice(0, d) for d in array.shape)] = array
    for axis, (d, size) in enumerate(zip(array.shape, shape)):
        if size > d:
            out[(slice(None),) * axis + (slice(d, size),)] = fill
    return out


def _blocks(p: TilingPlan, logical: np.ndarray, tiled: np.ndarray) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Pairs of views ``(logical part, buffer part)`` of equal shape covering every
    element once, for a plan with at most one tile level and no ``*``. ``logical`` is
    in physical dim order with the step's size-1 dims prepended."""
    if not p.steps:
        yield logical, tiled.reshape(logical.shape)
        return
    step = p.steps[0]
    k = len(step.tile)
    h = len(step.combined) - k
    buffer = tiled.transpose(_from_tiled(h, k))  # head, q0, t0, q1, t1, ...
    choices = []
    for d, t in zip(step.combined[h:], step.tile):
        full, rem = divmod(d, t)
        options = []
        if full:
            options.append((slice(0, full * t), (full, t), slice(0, full), slice(None)))
        if rem:
            options.append((slice(full * t, d), (1, rem), slice(full, full + 1), slice(0, rem)))
        choices.append(options)
    head = (slice(None),) * h
    for combo in itertools.product(*choices):
        src = logical[head + tuple(c[0] for c in combo)]
        src = src.reshape(src.shape[:h] + tuple(itertools.chain.from_iterable(c[1] for c in combo)))
        dst = buffer[head + tuple(itertools.chain.from_iterable((c[2], c[3]) for c in combo))]
        yield src, dst


def _fill_padding(step: TileStep, tiled: np.ndarray, fill: object) -> None:
    """Set the padding slots of the last (partial) tile of each tiled dim."""
    k = len(step.tile)
    h = len(step.combined) - k
    buffer = tiled.transpose(_from_tiled(h, k))
    for i, (d, t) in enumerate(zip(step.combined[h:], step.tile)):
        full, rem = divmod(d, t)
        if rem or (d == 0 and buffer.size):
            index = [slice(None)] * (h + 2 * k)
            index[h + 2 * i] = slice(full, full + 1)
            index[h + 2 * i + 1] = slice(rem, t)
            buffer[tuple(index)] = fill
