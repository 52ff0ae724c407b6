"""mhlo.scan maps read from the body, against a dependence-set interpreter of the scan.

The interpreter runs the scan step by step on numpy object arrays whose elements are
frozensets of ``(operand, element index)``: an input slice element depends on itself,
an init element on itself, ``add`` unions its operands elementwise, ``reverse`` flips,
a constant depends on nothing. The maps' relation (enumerated) must equal that
dependence exactly when slices and carries have one element; with larger slices the
maps must contain it (the carry chain reads whole slices) and equal it on the
elements each step reads directly. Both directions are checked (input -> output must
be the transpose)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from hlo_indexing import input_to_output_indexing, output_to_input_indexing
from hlo_indexing.dialect_glue.bindings import ir

from test_op_indexing_support import CONTEXT, first_op, indices, relation, tensor


def _scan_text(n_in, n_carry, n_out, shape, dimension, reverse, body_lines, returns) -> str:
    slice_type = tensor([s for i, s in enumerate(shape) if i != dimension])
    operand_types = [tensor(shape)] * n_in + [slice_type] * n_carry
    result_types = [tensor(shape)] * n_out + [slice_type] * n_carry
    args = ", ".join(f"%a{i}: {t}" for i, t in enumerate(operand_types))
    block_args = ", ".join([f"%x{j}: {slice_type}" for j in range(n_in)] + [f"%c{c}: {slice_type}" for c in range(n_carry)])
    body = "\n".join(f"    {line.format(t=slice_type)}" for line in body_lines)
    results = ", ".join(f"%0#{i}" for i in range(len(result_types)))
    return (
        f"func.func @f({args}) -> ({', '.join(result_types)}) {{\n"
        f'  %0:{len(result_types)} = "mhlo.scan"({", ".join(f"%a{i}" for i in range(len(operand_types)))}) '
        f"<{{dimension = {dimension} : i64, is_associative = false, is_reverse = {str(reverse).lower()}, "
        f"operandSegmentSizes = array<i32: {n_in}, {n_carry}>, resultSegmentSizes = array<i32: {n_out}, {n_carry}>}}> ({{\n"
        f"  ^bb0({block_args}):\n{body}\n"
        f"    mhlo.return {', '.join(returns)} : {', '.join([slice_type] * len(returns))}\n"
        f"  }}) : ({', '.join(operand_types)}) -> ({', '.join(result_types)})\n"
        f"  return {results} : {', '.join(result_types)}\n}}"
    )


def _random_body(rng, n_in, n_carry, n_out, can_reverse):
    """Body lines and returned names; each result is a sum of a random subset of the
    arguments (some reversed), a single argument, or a constant."""
    names = [f"%x{j}" for j in range(n_in)] + [f"%c{c}" for c in range(n_carry)]
    lines, returns, spec = [], [], []
    for r in range(n_out + n_carry):
        choice = rng.random()
        if choice < 0.1:
            lines.append(f"%k{r} = mhlo.constant dense<1.0> : {{t}}")
            returns.append(f"%k{r}")
            spec.append(("const",))
            continue
        terms = rng.sample(names, 1 if choice < 0.45 else rng.randint(1, len(names)))
        flips = [can_reverse and rng.random() < 0.3 for _ in terms]
        current = []
        for i, (name, flip) in enumerate(zip(terms, flips)):
            if flip:
                lines.append(f'%f{r}_{i} = "mhlo.reverse"({name}) <{{{{dimensions = dense<0> : tensor<1xi64>}}}}> : ({{t}}) -> {{t}}')
                name = f"%f{r}_{i}"
            current.append(name)
        value = current[0]
        for i, other in enumerate(current[1:]):
            lines.append(f"%s{r}_{i} = mhlo.add {value}, {other} : {{t}}")
            value = f"%s{r}_{i}"
        returns.append(value)
        spec.append(("sum", [names.index(t) for t in terms], flips))
    return lines, returns, spec


def _singletons(shape, operand):
    out = np.empty(shape, dtype=object)
    for index in indices(shape):
        out[index] = frozenset({(operand, index)})
    return out


def _slice(x, t, dimension):
    """Step ``t`` of ``x`` as an object array (0-d for a scalar slice)."""
    index = [slice(None)] * x.ndim
    index[dimension] = t
    out = np.empty(x.shape[:dimension] + x.shape[dimension + 1 :], dtype=object)
    out[...] = x[tuple(index)]
    return out


def _union(a, b):
    out = np.empty(a.shape, dtype=object)
    for index in indices(a.shape):
        out[index] = a[index] | b[index]
    return out


def _interpret(spec, n_in, n_carry, n_out, shape, dimension, reverse):
    """Per result, an object array of dependence sets (operand number, element index)."""
    n = shape[dimension]
    slice_shape = tuple(s for i, s in enumerate(shape) if i != dimension)
    inputs = [_singletons(shape, j) for j in range(n_in)]
    carries = [_singletons(slice_shape, n_in + c) for c in range(n_carry)]
    outputs = [np.empty(shape, dtype=object) for _ in range(n_out)]
    for t in reversed(range(n)) if reverse else range(n):
        args = [_slice(x, t, dimension) for x in inputs] + carries
        values = []
        for entry in spec:
            value = np.empty(slice_shape, dtype=object)
            for index in indices(slice_shape):
                value[index] = frozenset()
            if entry[0] == "sum":
                for a, flip in zip(entry[1], entry[2]):
                    term = np.flip(args[a], axis=0) if flip else args[a]
                    value = _union(value, term)
            values.append(value)
        for k in range(n_out):
            index = [slice(None)] * len(shape)
            index[dimension] = t
            outputs[k][tuple(index)] = values[k] if slice_shape else values[k].item()
        carries = values[n_out:]
    return outputs + carries


def _expected(deps, n_operands):
    """Per operand, the pairs (result index, operand index)."""
    out = [set() for _ in range(n_operands)]
    for index in indices(deps.shape):
        for operand, element in deps[index]:
            out[operand].add((index, element))
    return out


def _run(rng, shape, dimension, exact):
    n_in, n_carry, n_out = rng.randint(1, 2), rng.randint(1, 3), rng.randint(1, 2)
    reverse = rng.random() < 0.5
    slice_rank = len(shape) - 1
    lines, returns, spec = _random_body(rng, n_in, n_carry, n_out, can_reverse=slice_rank == 1)
    _check(n_in, n_carry, n_out, shape, dimension, reverse, lines, returns, spec, exact)


def _sums(results: list[list[int]], n_in: int, n_carry: int):
    """Body lines, returns and spec of results that sum the given arguments."""
    names = [f"%x{j}" for j in range(n_in)] + [f"%c{c}" for c in range(n_carry)]
    lines, returns, spec = [], [], []
    for r, terms in enumerate(results):
        value = names[terms[0]]
        for i, a in enumerate(terms[1:]):
            lines.append(f"%s{r}_{i} = mhlo.add {value}, {names[a]} : {{t}}")
            value = f"%s{r}_{i}"
        returns.append(value)
        spec.append(("sum", terms, [False] * len(terms)))
    return lines, returns, spec


# (name, inputs, carries, outputs, results as lists of body arguments summed); the
# body arguments are the inputs then the carries.
BODIES = [
    ("passthrough", 1, 1, 1, [[0], [1]]),
    ("accumulate", 1, 1, 1, [[0, 1], [0, 1]]),
    ("output_reads_carry_only", 1, 1, 1, [[1], [0, 1]]),
    ("carry_swap", 1, 2, 1, [[1], [2], [0, 1]]),
    ("three_cycle", 1, 3, 1, [[1], [2], [3], [0, 1]]),
    ("two_inputs_two_carries", 2, 2, 2, [[0, 2], [1], [1, 3], [0]]),
]


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("name, n_in, n_carry, n_out, results", BODIES, ids=[b[0] for b in BODIES])
def test_named_bodies_are_exact(name, n_in, n_carry, n_out, results, reverse):
    lines, returns, spec = _sums(results, n_in, n_carry)
    _check(n_in, n_carry, n_out, (7,), 0, reverse, lines, returns, spec, exact=True)


def test_passthrough_maps_are_the_identity_and_no_dependence():
    """XLA's ScanOp test body: output t reads input t only, the final carry the init only."""
    lines, returns, _ = _sums([[0], [1]], 1, 1)
    with CONTEXT:
        module = ir.Module.parse(_scan_text(1, 1, 1, (10,), 0, False, lines, returns))
    op = first_op(module)
    output, final = output_to_input_indexing(op, 0), output_to_input_indexing(op, 1)
    assert relation(output.maps[0]) == {((t,), (t,)) for t in range(10)}
    assert output.maps[1] == frozenset() and final.maps[0] == frozenset()
    assert relation(final.maps[1]) == {((), ())}


def test_a_body_that_cannot_be_analysed_reads_every_earlier_step():
    """An unknown op in the body: output t may read every input element of steps 0..t,
    every init; the final carry everything."""
    lines = ['%u = "mhlo.custom_call"(%x0, %c0) <{{call_target_name = "f"}}> : ({t}, {t}) -> {t}']
    with CONTEXT:
        module = ir.Module.parse(_scan_text(1, 1, 1, (4, 2), 0, False, lines, ["%u", "%u"]))
    op = first_op(module)
    prefix = {(o, x) for o in indices((4, 2)) for x in indices((4, 2)) if x[0] <= o[0]}
    assert relation(output_to_input_indexing(op, 0).maps[0]) == prefix
    assert relation(output_to_input_indexing(op, 0).maps[1]) == {(o, (c,)) for o in indices((4, 2)) for c in range(2)}
    assert relation(output_to_input_indexing(op, 1).maps[0]) == {((c,), x) for c in range(2) for x in indices((4, 2))}
    assert relation(input_to_output_indexing(op, 0).maps[0]) == {(x, o) for o, x in prefix}


def _check(n_in, n_carry, n_out, shape, dimension, reverse, lines, returns, spec, exact):
    text = _scan_text(n_in, n_carry, n_out, shape, dimension, reverse, lines, returns)
    with CONTEXT:
        module = ir.Module.parse(text)
    op = first_op(module)
    truth = _interpret(spec, n_in, n_carry, n_out, shape, dimension, reverse)
    n_operands = n_in + n_carry
    for r, deps in enumerate(truth):
        expected = _expected(deps, n_operands)
        forward = output_to_input_indexing(op, r)
        for k in range(n_operands):
            ours = relation(forward.maps[k])
            if exact:
                assert ours == expected[k], f"result {r} -> operand {k}\n{text}\n{forward}"
            else:
                assert expected[k] <= ours, f"result {r} -> operand {k} misses {sorted(expected[k] - ours)[:3]}\n{text}"
    for k in range(n_operands):
        backward = input_to_output_indexing(op, k)
        for r in range(len(truth)):
            transposed = {(i, o) for o, i in relation(output_to_input_indexing(op, r).maps[k])}
            assert relation(backward.maps[r]) == transposed, f"operand {k} -> result {r}\n{text}\n{backward}"
    return module


@pytest.mark.parametrize("seed", range(60))
def test_scalar_slices_are_exact(seed):
    rng = random.Random(seed)
    n = rng.randint(1, 6)
    shape, dimension = rng.choice([((n,), 0), ((n, 1), 0), ((1, n), 1)])
    _run(rng, shape, dimension, exact=True)


@pytest.mark.parametrize("seed", range(20))
def test_wider_slices_are_sound(seed):
    rng = random.Random(1000 + seed)
    n, w = rng.randint(1, 4), rng.randint(2, 3)
    shape, dimension = rng.choice([((n, w), 0), ((w, n), 1)])
    _run(rng, shape, dimension, exact=False)
