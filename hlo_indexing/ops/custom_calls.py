"""Custom calls with known semantics: a table keyed by the call's target name.

An unknown target keeps *unknown indexing*, with the target named in the reason. The
known ones, by kind:

``matrix``
    The linear-algebra kernels JAX emits for ``jnp.linalg`` / ``jax.scipy.linalg``
    (LAPACK ``lapack_<t><name>_ffi``, cuSOLVER/hipSOLVER, cuBLAS/hipBLAS batched
    kernels, XLA's ``Qr``/``Eigh``/``LuDecomposition``...): the leading *batch*
    dimensions (``num_batch_dims`` in ``mhlo.frontend_attributes``, else the operand's
    rank minus 2) are elementwise, the matrix dimensions are read whole: every result
    element of batch ``b`` reads every element of batch ``b`` of every operand. Exact
    for dense factorisations (Cholesky, LU, QR, eigen, SVD), an over-approximation where
    the kernel reads one triangle only (``uplo``) or solves column by column.
``marker``
    Sharding and placement annotations (``Sharding``, ``SPMDFullToShardShape``,
    ``SPMDShardToFullShape``, ``MoveToHost``, ...): result ``i`` is operand ``i``.
    Per device, ``SPMDFullToShardShape`` reads this device's shard of the full value
    (its position among the shards is a range variable: it depends on the device) and
    ``SPMDShardToFullShape`` reads element ``d mod n`` of the shard held by device
    ``d floordiv n`` along each dimension that differs (``n`` the shard size).
``selection``
    ``ApproxTopK``, ``PartialReduce`` and ``TopK``: whole rows along the reduction
    dimension (:mod:`hlo_indexing.ops.sorting`).
``gemm``
    The cuBLAS GEMMs of XLA's GPU modules (``__cublas$gemm``, ``__cublas$lt$matmul`` and
    its FP8 form): a dot with the dimension numbers of the ``backend_config`` JSON
    (:func:`hlo_indexing.ops.contraction.gemm_output_to_input`).
``cudnn_conv``
    The cuDNN convolutions of XLA's GPU modules (forward, with bias and activation,
    backward input and backward filter), read through the forward convolution their
    ``window`` and ``dim_labels`` describe (:mod:`hlo_indexing.ops.cudnn`).
``tpu_kernel``
    Pallas TPU kernels (``tpu_custom_call``), read from their grid and blocks
    (:mod:`hlo_indexing.ops.tpu_kernels`).
``scaled_dot``
    XLA's ``scaled-dot``, which the importer translates as a custom call to
    ``hlo_text.SCALED_DOT_TARGET`` (:func:`hlo_indexing.ops.contraction.scaled_dot_output_to_input`).
``callback``
    JAX's host callbacks (``jax.pure_callback``, ``jax.debug.callback``, equinox's
    runtime checks: ``xla_ffi_python_cpu_callback`` and its GPU and older variants):
    Python code the analysis cannot read, but which sees only its operands, so every
    result element reads every element of every operand (sound, not exact); the tokens
    of an ordered ``io_callback`` hold no element and get no map.

Example: ``lapack_spotrf_ffi`` of ``tensor<2x3x3xf32>`` with ``num_batch_dims = "1"``
gives ``(d0, d1, d2)[s0, s1] -> (d0, s0, s1)``.
"""

from __future__ import annotations

from hlo_indexing.dialect_glue import op_attrs
from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.dialect_glue.hlo_text import SCALED_DOT_TARGET
from hlo_indexing.dialect_glue.mosaic import TPU_CUSTOM_CALL
from hlo_indexing.maps import affine_expr as ax
from hlo_indexing.ops import contraction, cudnn, sorting, tpu_kernels
from hlo_indexing.ops.inversion import inverse_rule
from hlo_indexing.ops.map_builders import dims, make_map, whole_map
from hlo_indexing.ops.rule import Entry, OpInfo, RuleResult, UnknownIndexing

_LAPACK_NAMES = """potrf getrf geqrf geqp3 orgqr ungqr syevd heevd gesdd gesvd geev gees gehrd sytrd hetrd
trsm gtsv""".split()
_GPU_SOLVER_NAMES = """potrf getrf geqrf orgqr syevd syevj gesvd gesvdj sytrd csrlsvqr""".split()
_GPU_BLAS_NAMES = ["getrf_batched", "geqrf_batched"]

#: Target name -> kind (see the module docstring).
TARGETS: dict[str, str] = {
    **{f"lapack_{t}{name}_ffi": "matrix" for t in "sdcz" for name in _LAPACK_NAMES},
    **{f"lapack_{t}{name}": "matrix" for t in "sdcz" for name in _LAPACK_NAMES},
    **{f"{lib}_{name}_ffi": "matrix" for lib in ("cusolver", "hipsolver") for name in _GPU_SOLVER_NAMES},
    **{f"{lib}_{name}": "matrix" for lib in ("cusolver", "hipsolver") for name in _GPU_SOLVER_NAMES},
    **{f"{lib}_{name}_ffi": "matrix" for lib in ("cublas", "hipblas") for name in _GPU_BLAS_NAMES},
    **{f"{lib}_{name}": "matrix" for lib in ("cublas", "hipblas") for name in _GPU_BLAS_NAMES},
    **{name: "matrix" for name in ("Qr", "Eigh", "LuDecomposition", "ProductOfElementaryHouseholderReflectors")},
    **{f"{lib}_lu_pivots_to_permutation": "matrix" for lib in ("cu", "hip")},
    **{name: "marker" for name in ("Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape", "MoveToHost",
                                   "MoveToDevice", "annotate_device_placement", "LayoutConstraint")},
    **{name: "selection" for name in ("ApproxTopK", "PartialReduce", "TopK")},
    **{f"xla{ffi}_python_{device}_callback": "callback" for ffi in ("", "_ffi") for device in ("cpu", "gpu")},
    **{name: "gemm" for name in ("__cublas$gemm", "__cublas$lt$matmul", "__cublas$lt$matmul$f8")},
    **{name: "cudnn_conv" for name in cudnn.TARGETS},
    TPU_CUSTOM_CALL: "tpu_kernel",
    SCALED_DOT_TARGET: "scaled_dot",
}


def target_name(info: OpInfo) -> str:
    """The custom call's ``call_target_name`` ('' when absent)."""
    attributes = info.op.attributes
    if "call_target_name" not in attributes:
        return ""
    return ir.StringAttr(attributes["call_target_name"]).value


def _kind(info: OpInfo) -> str:
    name = target_name(info)
    kind = TARGETS.get(name)
    if kind is None:
        raise UnknownIndexing(f"custom call target '{name}' has no indexing rule")
    return kind


def _batch_dims(info: OpInfo) -> int:
    """``num_batch_dims`` of ``mhlo.frontend_attributes``, else operand 0's rank - 2."""
    attributes = info.op.attributes
    frontend = attributes["mhlo.frontend_attributes"] if "mhlo.frontend_attributes" in attributes else None
    rank = len(info.operand(0)) if info.num_operands else 0
    if isinstance(frontend, ir.DictAttr) and "num_batch_dims" in frontend:
        value = frontend["num_batch_dims"]
        text = value.value if isinstance(value, ir.StringAttr) else str(value)
        if not text.isdigit() or int(text) > max(0, rank - 2):
            raise op_attrs.invalid(info.op, "mhlo.frontend_attributes", f"num_batch_dims {text!r} is not a batch count for rank {rank}")
        return int(text)
    return max(0, rank - 2)


def _matrix(info: OpInfo, result_index: int) -> RuleResult:
    space, batch = info.result(result_index), _batch_dims(info)
    out = []
    for k in range(info.num_operands):
        target = info.operand(k)
        kept = batch if len(target) >= batch and len(space) >= batch and target[:batch] == space[:batch] else 0
        out.append([whole_map(info.context, space, target, kept)])
    return out


def _marker(info: OpInfo, result_index: int) -> RuleResult:
    """Result ``result_index`` reads operand ``result_index`` (see the module docstring)."""
    space, target = info.result(result_index), info.operand(result_index)
    if len(space) != len(target):
        raise UnknownIndexing(f"{target_name(info)}: result {space} and operand {target} differ in rank")
    d, context = dims(len(space), info.context), info.context
    exprs: list = []
    ranges: list[int] = []
    for i, (n_result, n_operand) in enumerate(zip(space, target, strict=True)):
        if n_result == n_operand:
            exprs.append(d[i])
        elif n_result < n_operand and n_operand % n_result == 0:  # full -> shard: this device's shard
            exprs.append(d[i] + ax.symbol(len(ranges), context) * n_result)
            ranges.append(n_operand // n_result)
        elif n_result > n_operand and n_result % n_operand == 0:  # shard -> full: the shard of its device
            exprs.append(ax.mod(d[i], n_operand))
        else:
            raise UnknownIndexing(f"{target_name(info)}: {target} does not split evenly into {space}")
    out: list = [[] for _ in range(info.num_operands)]
    out[result_index] = [make_map(context, space, exprs, ranges)]
    return out


def _callback(info: OpInfo, result_index: int) -> RuleResult:
    """Every element of result ``result_index`` reads every element of every operand; a
    token (an ordered ``io_callback``'s, in and out) holds no element: no map to or from it."""
    if info.result_is_token(result_index):
        return [[] for _ in range(info.num_operands)]
    space = info.result(result_index)
    note = f"{target_name(info)}: a host callback: Python the analysis cannot read, taken to read every operand element"
    return [[] if info.operand_is_token(k) else Entry((whole_map(info.context, space, info.operand(k), 0),), note=note)
            for k in range(info.num_operands)]


def custom_call_output_to_input(info: OpInfo, result_index: int) -> RuleResult:
    """Output -> input maps of a custom call (see the module docstring)."""
    kind = _kind(info)
    if kind == "matrix":
        return _matrix(info, result_index)
    if kind == "marker":
        return _marker(info, result_index)
    if kind == "scaled_dot":
        return contraction.scaled_dot_output_to_input(info, result_index)
    if kind == "gemm":
        return contraction.gemm_output_to_input(info, result_index)
    if kind == "tpu_kernel":
        return tpu_kernels.tpu_kernel_output_to_input(info, result_index)
    if kind == "cudnn_conv":
        return cudnn.cudnn_conv_output_to_input(info, target_name(info), result_index)
    if kind == "callback":
        return _callback(info, result_index)
    return sorting.selection_maps(info, result_index, sorting.approx_top_k_dimension(info))


_by_inversion = inverse_rule(custom_call_output_to_input)


def custom_call_input_to_output(info: OpInfo, operand_index: int) -> RuleResult:
    """Input -> output maps: the exact inverses of :func:`custom_call`'s maps."""
    _kind(info)
    return _by_inversion(info, operand_index)
