"""Pallas kernels written for the checker's tests: correct ones and one per defect.

Each :class:`Kernel` builds its ``pallas_call`` (``build(interpret, semantics)``: TPU
interpret parameters or None, and dimension semantics to use instead of the kernel's,
or None), names its argument shapes and, for the correct ones, a numpy reference. The
label of each (``defects``: the error kinds it has) is checked by running it in TPU
interpret mode (:func:`run_kernel`, in the worker of :mod:`pallas_harness`), never taken
from the checker; ``illegal-block-shape`` is checked by lowering for TPU
(``jax.export``), ``vmem-overflow`` by summing the blocks' bytes (interpret mode does
not model VMEM).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class Kernel:
    name: str
    build: Callable  # (interpret, semantics) -> function
    shapes: tuple[tuple[tuple[int, ...], str], ...]
    defects: frozenset[str] = frozenset()
    warnings: frozenset[str] = frozenset()
    reference: Callable | None = None
    semantics: tuple[str, ...] | None = None
    grid: tuple[int, ...] = ()
    notes: dict = field(default_factory=dict)


def _pl():
    import jax
    import jax.numpy as jnp
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import tpu as pltpu

    return jax, jnp, pl, pltpu


def _params(pltpu, semantics):
    return pltpu.CompilerParams(dimension_semantics=tuple(semantics)) if semantics is not None else None


# ------------------------------------------------------------------ matmuls


def _matmul_kernel(x_ref, y_ref, o_ref):
    import jax.numpy as jnp
    from jax.experimental import pallas as pl

    @pl.when(pl.program_id(2) == 0)
    def _():
        o_ref[...] = jnp.zeros_like(o_ref)

    o_ref[...] += jnp.dot(x_ref[...], y_ref[...], preferred_element_type=jnp.float32)


def _matmul_k_first_kernel(x_ref, y_ref, o_ref):
    import jax.numpy as jnp
    from jax.experimental import pallas as pl

    @pl.when(pl.program_id(0) == 0)
    def _():
        o_ref[...] = jnp.zeros_like(o_ref)

    o_ref[...] += jnp.dot(x_ref[...], y_ref[...], preferred_element_type=jnp.float32)


M, K, N, BM, BK, BN = 16, 256, 128, 8, 128, 128


def matmul(interpret=None, semantics=None, *, k_first=False, parallel_k=False):
    jax, jnp, pl, pltpu = _pl()
    grid = (K // BK, M // BM, N // BN) if k_first else (M // BM, N // BN, K // BK)
    if k_first:
        specs = (lambda k, i, j: (i, k), lambda k, i, j: (k, j), lambda k, i, j: (i, j))
        default = ("arbitrary", "arbitrary", "arbitrary")  # interpret mode wants parallel axes first
    else:
        specs = (lambda i, j, k: (i, k), lambda i, j, k: (k, j), lambda i, j, k: (i, j))
        default = ("parallel", "parallel", "parallel" if parallel_k else "arbitrary")
    return pl.pallas_call(
        _matmul_k_first_kernel if k_first else _matmul_kernel,
        grid=grid,
        in_specs=[pl.BlockSpec((BM, BK), specs[0]), pl.BlockSpec((BK, BN), specs[1])],
        out_specs=pl.BlockSpec((BM, BN), specs[2]),
        out_shape=jax.ShapeDtypeStruct((M, N), jnp.float32),
        compiler_params=_params(pltpu, semantics or default),
        interpret=interpret or False,
    )


# ------------------------------------------------------------------ elementwise


def _add_one(x_ref, o_ref):
    o_ref[...] = x_ref[...] + 1.0


def scale_rows(interpret=None, semantics=None, *, rows=32, grid_rows=None, in_map=None, out_map=None, block=(8, 128), vmem_limit=None):
    """``x + 1`` over blocks of rows; the keyword arguments make the defects."""
    jax, jnp, pl, pltpu = _pl()
    grid = (grid_rows if grid_rows is not None else -(-rows // block[0]),)
    in_map = in_map or (lambda i: (i, 0))
    out_map = out_map or (lambda i: (i, 0))
    semantics = semantics or ("parallel",)
    params = pltpu.CompilerParams(dimension_semantics=tuple(semantics), vmem_limit_bytes=vmem_limit)
    return pl.pallas_call(
        _add_one,
        grid=grid,
        in_specs=[pl.BlockSpec(block, in_map)],
        out_specs=pl.BlockSpec(block, out_map),
        out_shape=jax.ShapeDtypeStruct((rows, 128 if block[1] <= 128 else block[1]), jnp.float32),
        compiler_params=params,
        interpret=interpret or False,
    )


def _block_sparse_kernel(s_ref, x_ref, o_ref):
    o_ref[...] = x_ref[...] * 2.0


def gather_blocks(interpret=None, semantics=None):
    """Copies row blocks of ``x`` in the order a prefetched table gives (block-sparse)."""
    jax, jnp, pl, pltpu = _pl()
    return pl.pallas_call(
        _block_sparse_kernel,
        grid_spec=pltpu.PrefetchScalarGridSpec(
            num_scalar_prefetch=1,
            grid=(4,),
            in_specs=[pl.BlockSpec((8, 128), lambda i, s: (s[i], 0))],
            out_specs=pl.BlockSpec((8, 128), lambda i, s: (i, 0)),
        ),
        out_shape=jax.ShapeDtypeStruct((32, 128), jnp.float32),
        compiler_params=_params(pltpu, semantics or ("parallel",)),
        interpret=interpret or False,
    )


def clamped_tail(interpret=None, semantics=None):
    """A grid longer than the blocks, clamped with ``min``: the last block is written
    twice in a row (allowed) and nothing is out of range."""
    jax, jnp, pl, pltpu = _pl()
    return pl.pallas_call(
        _add_one,
        grid=(6,),
        in_specs=[pl.BlockSpec((8, 128), lambda i: (jnp.minimum(i, 3), 0))],
        out_specs=pl.BlockSpec((8, 128), lambda i: (jnp.minimum(i, 3), 0)),
        out_shape=jax.ShapeDtypeStruct((32, 128), jnp.float32),
        compiler_params=_params(pltpu, semantics or ("arbitrary",)),
        interpret=interpret or False,
    )


def _readme_example():
    """``examples/pallas_buggy_add.py`` (the README's buggy kernel)."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "examples" / "pallas_buggy_add.py"
    spec = importlib.util.spec_from_file_location("pallas_buggy_add", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def readme_add(interpret=None, semantics=None, *, y_map=None, out_map=None):
    """The README's kernel (its bugs, or others through the maps), its semantics
    replaceable for the runs."""
    jax, jnp, pl, pltpu = _pl()
    example = _readme_example()
    return pl.pallas_call(
        example.add_kernel,
        grid=(README_SHAPE[0] // 8, README_SHAPE[1] // 128),
        in_specs=[pl.BlockSpec((8, 128), lambda i, j: (i, j)), pl.BlockSpec((8, 128), y_map or (lambda i, j: (i, j + 1)))],
        out_specs=pl.BlockSpec((8, 128), out_map or (lambda i, j: (i, 0))),
        out_shape=jax.ShapeDtypeStruct(README_SHAPE, jnp.float32),
        compiler_params=_params(pltpu, semantics or ("parallel", "parallel")),
        interpret=interpret or False,
    )


def _matmul_reference(x, y):
    return x.astype(np.float64) @ y.astype(np.float64)


F32 = "float32"
MATMUL_ARGS = (((M, K), F32), ((K, N), F32))
ROWS_ARG = (((32, 128), F32),)
#: The README runs its kernel on (64, 256); the tests on fewer rows (fewer simulated cores).
README_SHAPE = (16, 256)
README_ARGS = ((README_SHAPE, F32), (README_SHAPE, F32))

KERNELS = {
    kernel.name: kernel
    for kernel in [
        Kernel("matmul", matmul, MATMUL_ARGS, reference=_matmul_reference, grid=(2, 1, 2), semantics=("parallel", "parallel", "arbitrary")),
        Kernel(
            "matmul_k_outermost",
            lambda interpret=None, semantics=None: matmul(interpret, semantics, k_first=True),
            MATMUL_ARGS,
            defects=frozenset({"non-consecutive-revisit"}),
            grid=(2, 2, 1),
            semantics=("arbitrary", "arbitrary", "arbitrary"),
        ),
        Kernel(
            "matmul_parallel_k",
            lambda interpret=None, semantics=None: matmul(interpret, semantics, parallel_k=True),
            MATMUL_ARGS,
            defects=frozenset({"race"}),
            grid=(2, 1, 2),
            semantics=("parallel", "parallel", "parallel"),
        ),
        Kernel("rows", scale_rows, ROWS_ARG, reference=lambda x: x + 1.0, grid=(4,), semantics=("parallel",)),
        Kernel(
            "rows_off_by_one",
            lambda interpret=None, semantics=None: scale_rows(interpret, semantics, in_map=lambda i: (i + 1, 0)),
            ROWS_ARG,
            defects=frozenset({"block-index-out-of-range"}),
            grid=(4,),
            semantics=("parallel",),
        ),
        Kernel(
            "rows_grid_too_short",
            lambda interpret=None, semantics=None: scale_rows(interpret, semantics, rows=28, grid_rows=28 // 8),
            (((28, 128), F32),),
            defects=frozenset({"uncovered-output"}),
            grid=(3,),
            semantics=("parallel",),
        ),
        Kernel(
            "rows_ragged",
            lambda interpret=None, semantics=None: scale_rows(interpret, semantics, rows=28),
            (((28, 128), F32),),
            warnings=frozenset({"partial-block"}),
            reference=lambda x: x + 1.0,
            grid=(4,),
            semantics=("parallel",),
        ),
        Kernel(
            "rows_same_block",
            lambda interpret=None, semantics=None: scale_rows(interpret, semantics, out_map=lambda i: (i // 2, 0)),
            ROWS_ARG,
            defects=frozenset({"race", "uncovered-output"}),
            grid=(4,),
            semantics=("parallel",),
        ),
        Kernel("gather_blocks", gather_blocks, (((4,), "int32"), ((32, 128), F32)), warnings=frozenset({"not-decided"}), grid=(4,), semantics=("parallel",)),
        Kernel("clamped_tail", clamped_tail, (((32, 128), F32),), reference=lambda x: x + 1.0, grid=(6,), semantics=("arbitrary",)),
        # The README's kernel: running it stops at its first bug (the out-of-range read);
        # with that one fixed, the run shows the other two.
        Kernel("readme_add", readme_add, README_ARGS, defects=frozenset({"block-index-out-of-range"}), grid=(2, 2), semantics=("parallel", "parallel"),
               notes={"static": {"block-index-out-of-range", "uncovered-output", "race"}}),
        Kernel(
            "readme_add_y_fixed",
            lambda interpret=None, semantics=None: readme_add(interpret, semantics, y_map=lambda i, j: (i, j)),
            README_ARGS,
            defects=frozenset({"uncovered-output", "race"}),
            grid=(2, 2),
            semantics=("parallel", "parallel"),
        ),
        Kernel(
            "readme_add_fixed",
            lambda interpret=None, semantics=None: readme_add(interpret, semantics, y_map=lambda i, j: (i, j), out_map=lambda i, j: (i, j)),
            README_ARGS,
            reference=lambda x, y: x + y,
            grid=(2, 2),
            semantics=("parallel", "parallel"),
        ),
    ]
}

#: Kernels whose defect is seen by lowering for a TPU (not by running).
ILLEGAL_BLOCK = Kernel(
    "rows_narrow_block",
    lambda interpret=None, semantics=None: scale_rows(interpret, semantics, block=(8, 64), out_map=lambda i: (i, 0)),
    (((32, 128), F32),),
    defects=frozenset({"illegal-block-shape", "uncovered-output"}),
)
#: 512 x 512 f32 blocks (1 MiB), in and out, double-buffered: 4 MiB, under a 2 MiB limit.
VMEM_LIMIT = 2 << 20
VMEM_OVERFLOW = Kernel(
    "rows_big_blocks",
    lambda interpret=None, semantics=None: scale_rows(interpret, semantics, rows=1024, block=(512, 512), vmem_limit=VMEM_LIMIT),
    (((1024, 512), F32),),
    defects=frozenset({"vmem-overflow"}),
    notes={"block_bytes": 512 * 512 * 4, "buffers": 2, "operands": 2},
)


def arguments(kernel: Kernel, concrete: bool = False, seed: int = 0):
    """Argument structs (or arrays: random values, prefetched tables a permutation)."""
    import jax
    import jax.numpy as jnp

    if not concrete:
        return [jax.ShapeDtypeStruct(shape, jnp.dtype(dtype)) for shape, dtype in kernel.shapes]
    rng = np.random.default_rng(seed)
    out = []
    for shape, dtype in kernel.shapes:
        if dtype == "int32":
            out.append(jnp.asarray(rng.permutation(math.prod(shape)).reshape(shape).astype(np.int32)))
        else:
            out.append(jnp.asarray(rng.standard_normal(shape).astype(dtype)))
    return out
