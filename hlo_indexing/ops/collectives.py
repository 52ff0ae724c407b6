"""Collectives, as *per-device* maps.

A collective runs on every device (replica or partition) of a group; its maps describe
one device: indices are into that device's operand and result. Where the element read
lives on another device, the rule's ``replicas`` map gives the device's position in
the group (printed as ``replica id``, as XLA prints it for ``all-gather``); where the
element depends on the position of *this* device in its group, that position is a
range variable (``r`` below, over ``[0, G - 1]`` for groups of ``G`` devices), so the
map covers every device. Variadic collectives map result ``i`` to operand ``i`` only.

- ``all_gather`` (``all_gather_dim`` ``a``, operand size ``n`` along it): result
  ``d`` reads element ``d[a] mod n`` of the operand of device ``d[a] floordiv n``.
- ``all_reduce`` (and ``cross-replica-sum``): result ``d`` reads operand ``d`` of every
  device of the group (replica id ``s0`` over the group).
- ``reduce_scatter`` (``scatter_dimension`` ``a``, result size ``m`` along it): result
  ``d`` reads operand element ``d[a] + r * m`` of every device of the group.
- ``all_to_all`` (``split_dimension`` ``p``, ``concat_dimension`` ``c``, operand size
  ``n`` along ``c``, blocks of ``m`` (operand size along ``p`` over ``split_count``)):
  result ``d`` reads, on device ``d[c] floordiv n``, element ``d[c] mod n`` along ``c``
  and ``r * m + d[p]`` along ``p`` (the block that device sends to this one); when
  ``p == c``, element ``r * m + d[p] mod m`` of device ``d[p] floordiv m``. XLA's
  *tuple* form (no ``split_dimension``; its CPU and GPU compilers split an array
  all-to-all into one operand per device of the group): on the ``r``-th device, result
  ``i`` is operand ``r`` of device ``i``, so result ``i`` reads element ``d`` of every
  operand (operand ``j`` on the ``j``-th device), from device ``i``.
- ``collective_permute``: result ``d`` reads operand ``d`` of the source device
  (devices without a source get zeros: there the map over-approximates).
- ``collective_broadcast``: result ``d`` reads operand ``d`` of the group's first
  device (replica id ``0``).

Input -> output maps are the exact inverses of these (per device).
"""

from __future__ import annotations

from hlo_indexing.dialect_glue import op_attrs
from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.maps import affine_expr as ax
from hlo_indexing.maps.indexing_map import IndexingMap
from hlo_indexing.ops.inversion import inverse_rule
from hlo_indexing.ops.map_builders import dims, make_map, syms
from hlo_indexing.ops.rule import Entry, OpInfo, RuleResult, UnknownIndexing


def group_size(info: OpInfo) -> int:
    """Devices per group: the second dimension of ``replica_groups`` (1 when absent)."""
    attributes = info.op.attributes
    if "replica_groups" not in attributes:
        return 1
    groups = attributes["replica_groups"]
    shape = ir.ShapedType(groups.type).shape if isinstance(groups, ir.DenseElementsAttr) else ()
    return shape[1] if len(shape) == 2 and shape[1] > 0 else 1


def _only(info: OpInfo, result_index: int, maps: list) -> RuleResult:
    """``maps`` for operand ``result_index``, no dependence on the others."""
    out: list = [[] for _ in range(info.num_operands)]
    out[result_index] = maps
    return out


def _same_index(info: OpInfo, result_index: int) -> RuleResult:
    space = info.result(result_index)
    if space != info.operand(result_index):
        raise UnknownIndexing(f"result {space} and operand {info.operand(result_index)} differ")
    return _only(info, result_index, [make_map(info.context, space, dims(len(space), info.context))])


def _gather_axis(info: OpInfo) -> int:
    """``all_gather_dim``, checked: a dimension along which every operand's size divides
    its result's (the result holds one operand per device of the group)."""
    name = "all_gather_dim"
    axis = op_attrs.dimension_attr(info.op, name, len(info.result(0)))
    for k in range(info.num_operands):
        operand, result = info.operand(k), info.result(k)
        others_differ = any(operand[i] != result[i] for i in range(min(len(operand), len(result))) if i != axis)
        if len(operand) != len(result) or others_differ or (operand[axis] == 0 and result[axis] != 0) or (operand[axis] and result[axis] % operand[axis]):
            raise op_attrs.invalid(info.op, name, f"{axis}: operand {k} {list(operand)} does not tile result {list(result)} along it")
    return axis


def all_gather_output_to_input(info: OpInfo, result_index: int) -> RuleResult:
    """Output ``d`` reads element ``d mod n`` (along the gathered axis) of the operand
    held by replica ``d floordiv n`` of its group (printed as ``replica id``)."""
    axis = _gather_axis(info)
    operand, result = info.operand(result_index), info.result(result_index)
    d = dims(len(result), info.context)
    exprs = [ax.mod(d[i], operand[i]) if i == axis else d[i] for i in range(len(result))]
    out: list[list[IndexingMap] | Entry] = [[] for _ in range(info.num_operands)]
    out[result_index] = Entry((make_map(info.context, result, exprs),))
    return out


def all_gather_replicas(info: OpInfo, result_index: int) -> IndexingMap:
    """Output ``d`` -> the id of the replica whose operand it reads: ``d floordiv n`` along the
    gathered axis (``n`` the operand's extent there), within the replica group."""
    axis = _gather_axis(info)
    operand, result = info.operand(result_index), info.result(result_index)
    d = dims(len(result), info.context)
    return make_map(info.context, result, [ax.floordiv(d[axis], operand[axis])])


def all_gather_input_to_output(info: OpInfo, operand_index: int) -> RuleResult:
    """The operand lands in the slot of its replica: a range variable over the group."""
    axis = _gather_axis(info)
    operand, result = info.operand(operand_index), info.result(operand_index)
    d, s = dims(len(operand), info.context), syms(1, info.context)
    exprs = [s[0] * operand[i] + d[i] if i == axis else d[i] for i in range(len(operand))]
    out: list[list[IndexingMap]] = [[] for _ in range(info.num_results)]
    out[operand_index] = [make_map(info.context, operand, exprs, [result[axis] // operand[axis] if operand[axis] else 1])]
    return out


def all_reduce_output_to_input(info: OpInfo, result_index: int) -> RuleResult:
    """Result ``d`` reads operand ``d`` (of every device of the group: :func:`every_device`)."""
    return _same_index(info, result_index)


def every_device(info: OpInfo, result_index: int) -> IndexingMap:
    """``(d...)[s0] -> (s0)``: every device of the group."""
    space = info.result(result_index)
    return make_map(info.context, space, syms(1, info.context), [group_size(info)])


def reduce_scatter_output_to_input(info: OpInfo, result_index: int) -> RuleResult:
    """Result ``d`` reads operand element ``d + r * m`` along the scatter dimension (``r``
    this device's position, ``m`` the result's size there), of every device."""
    operand, result = info.operand(result_index), info.result(result_index)
    axis = op_attrs.dimension_attr(info.op, "scatter_dimension", len(result))
    if len(operand) != len(result) or (result[axis] and operand[axis] % result[axis]):
        raise op_attrs.invalid(info.op, "scatter_dimension", f"{axis}: result {list(result)} does not tile operand {list(operand)} along it")
    d, r = dims(len(result), info.context), syms(1, info.context)[0]
    exprs = [d[i] + r * result[i] if i == axis else d[i] for i in range(len(result))]
    count = operand[axis] // result[axis] if result[axis] else 1
    return _only(info, result_index, [make_map(info.context, result, exprs, [count])])


def _all_to_all_params(info: OpInfo, index: int) -> tuple[int, int, int, tuple, tuple]:
    operand, result = info.operand(index), info.result(index)
    split = op_attrs.dimension_attr(info.op, "split_dimension", len(operand))
    concat = op_attrs.dimension_attr(info.op, "concat_dimension", len(operand))
    count = op_attrs.int_attr(info.op, "split_count", minimum=1)
    if len(result) != len(operand) or operand[split] % count:
        raise op_attrs.invalid(info.op, "split_count", f"{count} does not split dimension {split} of {list(operand)} evenly")
    return split, concat, count, operand, result


def _tuple_all_to_all(info: OpInfo) -> bool:
    """Whether ``info`` is XLA's tuple all-to-all (module docstring), checked: one
    operand per device of the group, every operand and result of one static shape."""
    if "split_dimension" in info.op.attributes:
        return False
    shapes = {info.operand(k) for k in range(info.num_operands)} | {info.result(k) for k in range(info.num_results)}
    if info.num_operands != info.num_results or info.num_operands != group_size(info) or len(shapes) != 1:
        raise op_attrs.invalid(
            info.op, "split_dimension",
            f"is missing, and the tuple form needs one operand per device of the group ({group_size(info)}), "
            f"as many results, all of one shape: not {info.num_operands} operands and {info.num_results} results "
            f"of shapes {sorted(list(shape) for shape in shapes)}",
        )
    return True


def all_to_all_output_to_input(info: OpInfo, result_index: int) -> RuleResult:
    """The element of the block the sending device sends to this one (module docstring)."""
    if _tuple_all_to_all(info):
        space = info.result(result_index)
        return [[make_map(info.context, space, dims(len(space), info.context))] for _ in range(info.num_operands)]
    split, concat, count, operand, result = _all_to_all_params(info, result_index)
    d, r = dims(len(result), info.context), syms(1, info.context)[0]
    exprs = list(d)
    m = operand[split] // count  # the block each device sends to each other
    if split == concat:
        exprs[split] = r * m + ax.mod(d[split], m)
    else:
        exprs[concat] = ax.mod(d[concat], operand[concat])
        exprs[split] = r * m + d[split]
    return _only(info, result_index, [make_map(info.context, result, exprs, [count])])


def all_to_all_replicas(info: OpInfo, result_index: int) -> IndexingMap:
    """The device whose block holds result ``d``: ``d[c] floordiv`` the block size along
    the concatenated dimension ``c``; in the tuple form, device ``i`` for result ``i``."""
    if _tuple_all_to_all(info):
        return make_map(info.context, info.result(result_index), [ax.constant(result_index, info.context)])
    split, concat, count, operand, result = _all_to_all_params(info, result_index)
    d = dims(len(result), info.context)
    block = operand[split] // count if split == concat else operand[concat]
    return make_map(info.context, result, [ax.floordiv(d[concat], block)])


def collective_permute_output_to_input(info: OpInfo, result_index: int) -> RuleResult:
    """Result ``d`` reads operand ``d`` (of the source device; ``collective_broadcast``:
    of the group's first device, :func:`first_device`)."""
    return _same_index(info, result_index)


def first_device(info: OpInfo, result_index: int) -> IndexingMap:
    """``(d...) -> (0)``: every element comes from the group's first device."""
    return make_map(info.context, info.result(result_index), [ax.constant(0, info.context)])


all_reduce_input_to_output = inverse_rule(all_reduce_output_to_input)
reduce_scatter_input_to_output = inverse_rule(reduce_scatter_output_to_input)
all_to_all_input_to_output = inverse_rule(all_to_all_output_to_input)
collective_permute_input_to_output = inverse_rule(collective_permute_output_to_input)
