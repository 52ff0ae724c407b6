"""Pallas index maps, read from their jaxprs into piecewise-affine block indices.

:func:`block_index_cases` interprets an index map's jaxpr over a
:class:`~hlo_indexing.maps.piecewise.Space` (the grid): each grid index is a dimension
``d_k``, each scalar read from a prefetched array (``s_ref[i]``) an unknown named after
the operand and the index it is read at, and each equation maps the :data:`Cases` of its
operands to those of its results. Understood: integer ``add sub mul neg div rem max min
clamp sign abs``, comparisons, ``and or not xor`` on truth values, ``select_n``,
``convert_element_type``, shifts by constants, literals and scalar constants, and the
bodies of ``jit``/``closed_call``/``custom_jvp_call``/``custom_vjp_call``. Anything else
(a product of two grid-dependent values, an unknown primitive, too many cases) yields an
unknown named after it: the checks then report what they could not decide.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

import numpy as np

from hlo_indexing.maps.affine_expr import constant_value
from hlo_indexing.maps.piecewise import Cases, NotAffine, Space, TooManyCases, is_truth
from hlo_indexing.symbolic_tiling.pallas import grid_index_name

if TYPE_CHECKING:  # jax is optional: imported at run time by jax_support only
    from jax.extend.core import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var

_ARITHMETIC = {"add", "sub", "mul", "neg", "div", "rem", "max", "min", "sign", "abs"}
_COMPARISONS = {"lt", "le", "gt", "ge", "eq", "ne"}
_LOGIC = {"and", "or", "xor", "not"}
_TRANSPARENT = {"copy", "copy_p", "squeeze", "reshape", "broadcast_in_dim", "optimization_barrier", "reduce_precision"}
_CALLS = {"pjit": "jaxpr", "jit": "jaxpr", "closed_call": "call_jaxpr", "core_call": "call_jaxpr", "custom_jvp_call": "call_jaxpr", "custom_vjp_call": "call_jaxpr", "remat": "jaxpr", "checkpoint": "jaxpr"}


@dataclass(frozen=True)
class Ref:
    """A scalar-prefetch operand inside an index map (read by ``get``)."""

    number: int
    shape: tuple[int, ...]


#: What the interpreter binds a jaxpr variable to.
_Value = Cases | Ref


def block_index_cases(index_map: ClosedJaxpr, space: Space, num_prefetch: int, prefetch_shapes: Sequence[tuple[int, ...]]) -> list[Cases]:
    """The block index of every block dimension as :data:`Cases` over ``space``.
    ``index_map`` is the closed jaxpr (grid indices, then ``num_prefetch`` refs)."""
    jaxpr = index_map.jaxpr
    grid_rank = len(space.dim_ranges)
    inputs: list[_Value] = [space.dim(k) for k in range(grid_rank)]
    inputs += [Ref(k, tuple(prefetch_shapes[k]) if k < len(prefetch_shapes) else ()) for k in range(num_prefetch)]
    while len(inputs) < len(jaxpr.invars):  # dynamic grid bounds or other operands: unknown
        inputs.append(space.unknown(f"index-map operand {len(inputs)}"))
    consts = [_constant(value, space, "a constant of the index map") for value in index_map.consts]
    outputs = _interpret(jaxpr, consts, inputs, space)
    result = []
    for position, value in enumerate(outputs):
        if isinstance(value, Ref):
            value = space.unknown(f"scalar-prefetch operand {value.number} used as a block index")
        if not _is_integer_value(value):
            value = space.unknown(f"block index {position}, not an integer scalar")
        result.append(value)
    return result


def _is_integer_value(value: _Value) -> bool:
    return isinstance(value, tuple) and all(not isinstance(v, bool) for _, v in value)


def _constant(value: object, space: Space, origin: str) -> Cases:
    array = np.asarray(value)
    if array.shape == () and array.dtype.kind in "biu":
        return space.constant(bool(array) if array.dtype.kind == "b" else int(array))
    return space.unknown(origin)


def _interpret(jaxpr: Jaxpr, consts: Sequence[_Value], inputs: Sequence[_Value], space: Space) -> list[_Value]:
    env: dict[Var, _Value] = {}
    for var, value in zip(jaxpr.constvars, consts):
        env[var] = value
    for var, value in zip(jaxpr.invars, inputs):
        env[var] = value

    def read(atom: Var | Literal) -> _Value:
        if hasattr(atom, "val"):  # a Literal (jax's classes are not imported at run time)
            literal = cast("Literal", atom).val
            return _constant(literal, space, f"the literal {literal!r}")
        return env[atom]

    for eqn in jaxpr.eqns:
        values = [read(atom) for atom in eqn.invars]
        results = _equation(eqn, values, space)
        for var, value in zip(eqn.outvars, results):
            env[var] = value
    return [read(atom) for atom in jaxpr.outvars]


def _equation(eqn: JaxprEqn, values: list[_Value], space: Space) -> list[_Value]:
    name = eqn.primitive.name
    try:
        return _rule(eqn, name, values, space)
    except (NotAffine, TooManyCases) as reason:
        what = f"'{name}' ({reason})" if str(reason) else f"'{name}' (more cases than limits.MAX_INDEX_MAP_CASES)"
        return [_unknown_like(var, space, f"the result of {what}") for var in eqn.outvars]


def _unknown_like(var: object, space: Space, origin: str) -> Cases:
    dtype = getattr(getattr(var, "aval", None), "dtype", None)
    if dtype is not None and np.dtype(dtype).kind == "b":
        return space.unknown_bool(origin)
    return space.unknown(origin)


def _rule(eqn: JaxprEqn, name: str, values: list[_Value], space: Space) -> list[_Value]:
    if name == "get":
        return [_prefetched(eqn, values, space)]
    cases = [v for v in values if not isinstance(v, Ref)]
    if len(cases) < len(values):
        raise NotAffine("applied to a prefetched array")
    if name in _CALLS:
        closed = eqn.params.get(_CALLS[name])
        if closed is None:
            raise NotAffine("no body")
        inner = getattr(closed, "jaxpr", closed)
        consts = [_constant(c, space, "a constant of the index map") for c in getattr(closed, "consts", ())]
        return _interpret(inner, consts, cases, space)
    if any(not _is_scalar(var) for var in eqn.outvars):
        raise NotAffine("a non-scalar value")
    if name in _ARITHMETIC:
        if any(_is_bool(v) for v in cases):
            cases = [space.as_integer(v) for v in cases]
        return [space.arithmetic(name, cases)]
    if name == "clamp":
        low, x, high = cases
        return [space.arithmetic("min", [space.arithmetic("max", [x, low]), high])]
    if name in _COMPARISONS:
        return [space.compare(name, cases[0], cases[1])]
    if name in _LOGIC:
        if all(_is_bool(v) for v in cases):
            return [space.logic(name, cases)]
        raise NotAffine("bitwise arithmetic")
    if name == "select_n":
        return [space.select(cases[0], cases[1:])]
    if name == "convert_element_type":
        (value,) = cases
        target = np.dtype(eqn.params["new_dtype"])
        if target.kind == "b":
            return [value if _is_bool(value) else space.compare("ne", value, space.constant(0))]
        if target.kind in "iu":
            return [space.as_integer(value)]
        raise NotAffine(f"a conversion to {target}")
    if name in _TRANSPARENT:
        return [cases[0]]
    if name in ("shift_left", "shift_right_arithmetic"):
        amount = _constant_of(cases[1])
        if amount is None or not 0 <= amount < 31:
            raise NotAffine("a shift by a value that varies")
        if name == "shift_left":
            return [space.arithmetic("mul", [cases[0], space.constant(1 << amount)])]
        return [_floor_divide(cases[0], 1 << amount, space)]
    raise NotAffine("not an integer operation the analysis follows")


def _floor_divide(value: Cases, divisor: int, space: Space) -> Cases:
    """``value floordiv divisor`` (an arithmetic shift right): ``div`` when the value is
    not negative, else split on its sign."""
    quotient = space.arithmetic("div", [value, space.constant(divisor)])
    remainder = space.arithmetic("rem", [value, space.constant(divisor)])
    negative_remainder = space.compare("lt", remainder, space.constant(0))
    corrected = space.arithmetic("sub", [quotient, space.constant(1)])
    return space.select(negative_remainder, [quotient, corrected])


def _constant_of(value: Cases) -> int | None:
    found = [v for _, v in value]
    if len(found) != 1 or isinstance(found[0], bool):
        return None
    return constant_value(found[0])


def _prefetched(eqn: JaxprEqn, values: list[_Value], space: Space) -> Cases:
    ref = values[0]
    if not isinstance(ref, Ref):
        raise NotAffine("a read from a value that is not a prefetched array")
    indices = []
    for value in values[1:]:
        texts = {"..."} if isinstance(value, Ref) else {_render(v) for _, v in value}
        indices.append(texts.pop() if len(texts) == 1 else "...")
    where = f"[{', '.join(indices)}]" if indices else ""
    return space.unknown(f"scalar-prefetch operand {ref.number}{where}")


def _render(value: object) -> str:
    if isinstance(value, bool):
        return str(value)
    text = str(value).replace(" floordiv ", " // ").replace(" mod ", " % ")
    return re.sub(r"\bd(\d+)\b", lambda m: grid_index_name(int(m.group(1))), text)


def _is_scalar(var: object) -> bool:
    return tuple(getattr(getattr(var, "aval", None), "shape", ())) == ()


def _is_bool(value: _Value) -> bool:
    return isinstance(value, tuple) and is_truth(value)
