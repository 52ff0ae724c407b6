"""check_pallas on kernels written for the purpose (:mod:`pallas_kernels`): each defect
class found, no error on a correct kernel, every label checked by running the kernel.

Labels: the error kinds TPU interpret mode shows when the kernels run (one child
process for all, :func:`pallas_harness.run_kernels`): out-of-range blocks and revisits
raise, races are detected between simulated cores, uncovered output elements stay NaN;
correct kernels match their numpy reference. Illegal block shapes are labelled by
lowering for TPU with ``jax.export`` (CPU-only), the VMEM overflow by adding up the
blocks' bytes (nothing on a CPU runs out of VMEM).
"""

from __future__ import annotations

import pytest

jax = pytest.importorskip("jax")
pytest.importorskip("jax.experimental.pallas")

import pallas_harness  # noqa: E402
import pallas_kernels  # noqa: E402

import hlo_indexing  # noqa: E402

ERROR_KINDS = {"race", "uncovered-output", "block-index-out-of-range", "non-consecutive-revisit", "illegal-block-shape", "vmem-overflow"}


@pytest.fixture(scope="module")
def runs():
    names = list(pallas_kernels.KERNELS)
    return dict(zip(names, pallas_harness.run_kernels(names)))


def static(kernel, device="tpu-v5e"):
    return hlo_indexing.check_pallas(kernel.build(), *pallas_kernels.arguments(kernel), device=device)


@pytest.mark.parametrize("name", list(pallas_kernels.KERNELS))
def test_the_checker_finds_what_running_the_kernel_shows(runs, name):
    kernel = pallas_kernels.KERNELS[name]
    run = runs[name]
    assert not run.error, run
    observed = set(run.kinds)
    assert observed == set(kernel.defects), f"the kernel's label is wrong: {run}"
    report = static(kernel)
    # A run stops at the first raise: a kernel may have more defects than it shows.
    assert {f.kind for f in report.errors} == kernel.notes.get("static", observed), str(report)
    assert {f.kind for f in report.warnings} == set(kernel.warnings), str(report)
    if kernel.reference is not None:
        assert run.max_error is not None and run.max_error < 1e-3


@pytest.mark.parametrize("name", [n for n, k in pallas_kernels.KERNELS.items() if not k.defects])
def test_correct_kernels_lower_for_tpu(name):
    export = pytest.importorskip("jax.export")
    kernel = pallas_kernels.KERNELS[name]
    export.export(jax.jit(kernel.build()), platforms=["tpu"])(*pallas_kernels.arguments(kernel))


def test_an_illegal_block_is_found_and_the_tpu_lowering_rejects_it():
    export = pytest.importorskip("jax.export")
    kernel = pallas_kernels.ILLEGAL_BLOCK
    with pytest.raises(ValueError, match="divisible by 8 and 128"):
        export.export(jax.jit(kernel.build()), platforms=["tpu"])(*pallas_kernels.arguments(kernel))
    report = static(kernel)
    assert {f.kind for f in report.errors} == set(kernel.defects)
    illegal = [f for f in report.findings if f.kind == "illegal-block-shape"]
    assert {f.operand for f in illegal} == {"input 0 (x_ref)", "output 0 (o_ref)"}
    assert "64" in illegal[0].message and "mosaic.block-shape" in illegal[0].message
    # Without a device, no device rule is applied.
    assert "illegal-block-shape" not in {f.kind for f in static(kernel, device=None).findings}


def test_blocks_that_do_not_fit_the_vmem_limit_overflow():
    kernel = pallas_kernels.VMEM_OVERFLOW
    notes = kernel.notes
    needed = notes["block_bytes"] * notes["buffers"] * notes["operands"]
    assert needed > pallas_kernels.VMEM_LIMIT  # the label, by arithmetic
    report = static(kernel)
    assert {f.kind for f in report.errors} == {"vmem-overflow"}
    (finding,) = report.errors
    assert "4.0 MiB" in finding.message and "2.0 MiB" in finding.message and "vmem_limit_bytes" in finding.message
    # The same blocks fit a v5e's 128 MiB when the call sets no limit.
    relaxed = pallas_kernels.Kernel(
        "relaxed",
        lambda interpret=None, semantics=None: pallas_kernels.scale_rows(interpret, semantics, rows=1024, block=(512, 512)),
        kernel.shapes,
    )
    assert "vmem-overflow" not in {f.kind for f in static(relaxed).findings}


def test_findings_name_the_operand_the_grid_point_and_the_element():
    report = static(pallas_kernels.KERNELS["rows_off_by_one"])
    (finding,) = report.errors
    assert finding.operand == "input 0 (x_ref)"
    assert finding.grid_point == (3,) and finding.element == (32, 0)
    assert "(i=3)" in finding.message and "block index is (4, 0)" in finding.message
    data = report.to_dict()
    assert data["errors"] == 1 and data["calls"][0]["findings"][0]["grid_point"] == [3]
    assert data["calls"][0]["operands"][0]["block_index_maps"] == ["(i) -> (i + 1, 0), domain: i in [0, 3]"]
    assert "error: [block-index-out-of-range]" in str(report)


def test_a_prefetched_index_is_reported_as_not_decided_naming_the_operand():
    report = static(pallas_kernels.KERNELS["gather_blocks"])
    (finding,) = report.findings
    assert finding.kind == "not-decided" and finding.severity == "warning"
    assert "scalar-prefetch operand 0[i]" in finding.message


def test_axes_added_by_vmap_are_parallel_and_the_given_semantics_apply_to_the_others():
    import jax.numpy as jnp
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import tpu as pltpu

    def kernel(x_ref, o_ref):
        o_ref[...] += x_ref[...]

    def row_sums(x):  # accumulates over j into one output block per row block
        return pl.pallas_call(
            kernel,
            grid=(2, 4),
            in_specs=[pl.BlockSpec((8, 128), lambda i, j: (i, j))],
            out_specs=pl.BlockSpec((8, 128), lambda i, j: (i, 0)),
            out_shape=jax.ShapeDtypeStruct((16, 128), jnp.float32),
            compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel", "arbitrary")),
        )(x)

    report = hlo_indexing.check_pallas(jax.vmap(row_sums), jax.ShapeDtypeStruct((3, 16, 512), jnp.float32), device="tpu-v5e")
    (call,) = report.calls
    assert call.grid == (3, 2, 4) and call.parallel_axes == (0, 1)
    assert report.findings == ()


@pytest.mark.parametrize("steps, rows, kinds", [(0, 16, ["uncovered-output"]), (2, 0, [])])
def test_an_empty_grid_writes_nothing_and_an_empty_array_is_not_accessed(steps, rows, kinds):
    import jax.numpy as jnp
    from jax.experimental import pallas as pl

    def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...]

    def copy(x):
        return pl.pallas_call(
            kernel,
            grid=(steps,),
            in_specs=[pl.BlockSpec((8, 128), lambda i: (i, 0))],
            out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0)),
            out_shape=jax.ShapeDtypeStruct((rows, 128), jnp.float32),
        )(x)

    report = hlo_indexing.check_pallas(copy, jax.ShapeDtypeStruct((rows, 128), jnp.float32))
    assert [f.kind for f in report.findings] == kinds
