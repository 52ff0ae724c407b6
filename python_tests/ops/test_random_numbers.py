"""``rng_bit_generator`` and ``rng`` against JAX running them.

``rng_bit_generator`` is deterministic: for each word of the state, perturbed alone,
the output elements that change must be exactly the pairs of the enumerated fused
maps (every random word reads every state word), and the new state's changed words
must be among the maps' pairs, which say they over-approximate (XLA's generators
update each state word from itself). ``rng`` draws from XLA's own seed at every run,
so it is checked through its bounds: with ``a = c`` and ``b = c + 1`` every element lies
in ``[c, c + 1)``, for two values of ``c`` whose intervals are apart, so every element
reads ``a`` and ``b``."""

from __future__ import annotations

import numpy as np
import pytest

from hlo_indexing import analyze

jax = pytest.importorskip("jax")
jnp = jax.numpy
lax = jax.lax

STATE_WORDS = 4  # uint32 words: the 2 x uint64 state of XLA's generators
OUTPUT_SHAPE = (3, 4)


def relation(maps) -> set:
    assert not any(m.is_undefined for m in maps), [m.reason for m in maps if m.is_undefined]
    return set().union(*(m.relation() for m in maps))


def changed_pairs(f, key: np.ndarray) -> list[set]:
    """Per result of ``f``, the (result element, state word) pairs where adding a
    delta to the word alone changes the element."""
    base = [np.asarray(v) for v in f(jnp.asarray(key))]
    pairs: list[set] = [set() for _ in base]
    for word in range(key.size):
        for delta in (1, 0x9E3779B9):
            perturbed = key.copy()
            perturbed[word] += np.uint32(delta)
            for r, value in enumerate(f(jnp.asarray(perturbed))):
                diff = np.argwhere(np.asarray(value) != base[r])
                pairs[r] |= {(tuple(int(v) for v in row), (word,)) for row in diff}
    return pairs


@pytest.mark.parametrize("algorithm", ["RNG_DEFAULT", "RNG_THREE_FRY", "RNG_PHILOX"])
def test_rng_bit_generator_against_perturbed_state_words(algorithm) -> None:
    kind = getattr(lax.RandomAlgorithm, algorithm)

    def f(key):
        return lax.rng_bit_generator(key, OUTPUT_SHAPE, dtype=jnp.uint32, algorithm=kind)

    key = np.arange(1, STATE_WORDS + 1, dtype=np.uint32)
    state_pairs, output_pairs = changed_pairs(jax.jit(f), key)
    lowered = jax.jit(f).lower(jnp.asarray(key))
    assert "stablehlo.rng_bit_generator" in lowered.as_text()
    state, output = analyze(lowered).computation("main").maps
    assert relation(output.maps[0]) == output_pairs
    assert not output.over_approximated
    assert state_pairs <= relation(state.maps[0])
    assert len(state.over_approximated) == 1 and "stablehlo.rng_bit_generator result 0" in state.over_approximated[0]
    (inverse,) = analyze(lowered, direction="input-to-output").computation("main").maps
    assert relation(inverse.maps[1]) == {(word, element) for element, word in output_pairs}
    assert {(word, element) for element, word in state_pairs} <= relation(inverse.maps[0])


def test_rng_result_elements_read_both_bounds_and_the_shape() -> None:
    def f(a, b):
        return lax.rng_uniform(a, b, OUTPUT_SHAPE)

    run = jax.jit(f)
    for c in (0.0, 10.0):
        drawn = np.asarray(run(jnp.float32(c), jnp.float32(c + 1)))
        assert ((drawn >= c) & (drawn < c + 1)).all()
    every_element = set(np.ndindex(*OUTPUT_SHAPE))
    lowered = run.lower(jnp.float32(0), jnp.float32(1))
    (rng,) = [op for op in analyze(lowered).ops if op.op == "stablehlo.rng"]
    a, b, shape = rng.indexing[0].maps
    assert relation(a) == relation(b) == {(element, ()) for element in every_element}
    assert relation(shape) == {(element, (k,)) for element in every_element for k in range(len(OUTPUT_SHAPE))}
    inverse = analyze(lowered, direction="input-to-output")
    (rng,) = [op for op in inverse.ops if op.op == "stablehlo.rng"]
    for operand in range(2):
        (maps,) = rng.indexing[operand].maps
        assert relation(maps) == {((), element) for element in every_element}
