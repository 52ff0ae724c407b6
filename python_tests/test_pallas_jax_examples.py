"""The Pallas kernels that ship with the installed jax (``jax.experimental.pallas.ops``)
get no error from check_pallas: TPU kernels (matmul, flash attention forward and
backward, causal or not, paged attention, grouped matmul) checked for a TPU v5e, GPU
kernels (softmax, layer norm, RMS norm, attention, decode attention) without a device.
What they do get: partial blocks where a block is larger than a small test array (a
warning), not-decided where a grid size is known only at run time (megablox) or a GPU
kernel addresses a whole output itself."""

from __future__ import annotations

import functools

import pytest

jax = pytest.importorskip("jax")
pytest.importorskip("jax.experimental.pallas")

import jax.numpy as jnp  # noqa: E402

import hlo_indexing  # noqa: E402

S = jax.ShapeDtypeStruct
F32, I32, BF16 = jnp.float32, jnp.int32, jnp.bfloat16


def _flash_blocks(fa):
    return fa.BlockSizes(
        block_q=128, block_k_major=128, block_k=128, block_b=1,
        block_q_major_dkv=128, block_k_major_dkv=128, block_k_dkv=128, block_q_dkv=128,
        block_k_major_dq=128, block_k_dq=128, block_q_dq=128,
    )


def _examples():
    tpu = pytest.importorskip("jax.experimental.pallas.ops.tpu.flash_attention")
    from jax.experimental.pallas.ops.gpu import attention, decode_attention, layer_norm, rms_norm, softmax
    from jax.experimental.pallas.ops.tpu import matmul
    from jax.experimental.pallas.ops.tpu.megablox import ops as megablox
    from jax.experimental.pallas.ops.tpu.paged_attention import paged_attention_kernel

    blocks = _flash_blocks(tpu)
    qkv = [S((2, 2, 512, 128), F32)] * 3

    def flash(causal):
        return functools.partial(tpu.flash_attention, causal=causal, block_sizes=blocks)

    def flash_grad(q, k, v):
        return tpu.flash_attention(q, k, v, causal=True, block_sizes=blocks).sum()

    return {
        "tpu matmul": (functools.partial(matmul.matmul, block_shape=(128, 128), block_k=128), [S((512, 256), F32), S((256, 384), F32)], "tpu-v5e"),
        "tpu flash attention": (flash(False), qkv, "tpu-v5e"),
        "tpu flash attention, causal": (flash(True), qkv, "tpu-v5e"),
        "tpu flash attention, backward": (jax.grad(flash_grad, argnums=(0, 1, 2)), qkv, "tpu-v5e"),
        "tpu paged attention": (
            functools.partial(paged_attention_kernel.paged_attention, pages_per_compute_block=4),
            [S((4, 8, 128), F32), S((2, 64, 16, 128), F32), S((2, 64, 16, 128), F32), S((4,), I32), S((4, 16), I32)],
            "tpu-v5e",
        ),
        "tpu grouped matmul (megablox)": (megablox.gmm, [S((512, 256), BF16), S((4, 256, 384), BF16), S((4,), I32)], "tpu-v5e"),
        "gpu softmax": (softmax.softmax, [S((64, 256), F32)], None),
        "gpu layer norm": (layer_norm.layer_norm, [S((2, 8, 256), F32), S((256,), F32), S((256,), F32)], None),
        "gpu rms norm, backward": (jax.grad(lambda x, w, b: rms_norm.rms_norm(x, w, b).sum(), argnums=(0, 1, 2)), [S((2, 8, 256), F32), S((256,), F32), S((256,), F32)], None),
        "gpu attention, backward": (jax.grad(lambda q, k, v: attention.mha(q, k, v, None).sum(), argnums=(0, 1, 2)), [S((2, 256, 2, 64), F32)] * 3, None),
        "gpu decode attention": (decode_attention.mqa, [S((2, 4, 64), F32), S((2, 256, 64), F32), S((2, 256, 64), F32)], None),
    }


NAMES = [
    "tpu matmul", "tpu flash attention", "tpu flash attention, causal", "tpu flash attention, backward",
    "tpu paged attention", "tpu grouped matmul (megablox)", "gpu softmax", "gpu layer norm",
    "gpu rms norm, backward", "gpu attention, backward", "gpu decode attention",
]


@pytest.fixture(scope="module")
def examples():
    return _examples()


@pytest.mark.parametrize("name", NAMES)
def test_jax_pallas_examples_get_no_error(examples, name):
    function, args, device = examples[name]
    report = hlo_indexing.check_pallas(function, *args, device=device)
    assert report.calls, "the example has a pallas_call"
    assert report.errors == (), str(report)
    assert {f.kind for f in report.warnings} <= {"partial-block", "not-decided"}


def test_the_causal_flash_attention_maps_are_split_by_the_diagonal(examples):
    function, args, device = examples["tpu flash attention, backward"]
    report = hlo_indexing.check_pallas(function, *args, device=device)
    forward = report.calls[0]
    key = next(o for o in forward.operands if o.label.startswith("input 1"))
    assert len(key.block_index_maps) == 2  # below or on the diagonal, and above it
    assert any("k - l in [0, 3]" in text for text in key.block_index_maps)
