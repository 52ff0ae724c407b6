"""More programs of the kinds JAX and its libraries emit (issues #31 and #28), none of them of a kind
that :mod:`library_programs` has: a greedy decode loop with a KV cache, beam search, scans and sorts,
boundary modes of pads and gathers, FFTs, linear algebra and its gradients, random sampling, sparse
matmul, complex arithmetic, integer bit operations, remat policies, a U-Net, more optax optimisers, an
SDE, FIRE minimisation, Hugging Face BigBird and CLIP, keras-hub's BERT classifier and Whisper.

Each entry of :data:`PROGRAMS` builds one program at a realistic size with random initialisation, in
the :class:`library_programs.LibraryProgram` form (written by ``library_programs.py OUT NAME ...``,
which knows both registries). They are not part of the benchmark run.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from library_programs import LibraryProgram, _normal, _tokens, by_name, flat_program

# --------------------------------------------------------------------------- plain JAX


def jax_greedy_decode_kv_cache() -> LibraryProgram:
    """A 2-layer decoder generating 32 tokens greedily, its KV cache written with
    ``dynamic_update_slice`` inside a ``while`` loop; top-5 candidates of the last step."""
    width, heads, vocab, layers, prompt_len, steps = 128, 4, 1024, 2, 8, 32
    total = prompt_len + steps
    keys = iter(range(200, 300))
    head_dim = width // heads

    def init() -> dict[str, jax.Array]:
        shapes = {"wq": (width, width), "wk": (width, width), "wv": (width, width), "wo": (width, width),
                  "w1": (width, 4 * width), "w2": (4 * width, width)}
        return {k: 0.05 * _normal(next(keys), s) for k, s in shapes.items()}

    params = {"embed": 0.05 * _normal(next(keys), (vocab, width)), "pos": 0.05 * _normal(next(keys), (total, width)),
              "layers": [init() for _ in range(layers)]}

    def norm(x: jax.Array) -> jax.Array:
        return x * jax.lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + 1e-6)

    def decode_step(params: Any, cache: Any, token: jax.Array, position: jax.Array) -> tuple[jax.Array, Any]:
        x = params["embed"][token] + jax.lax.dynamic_index_in_dim(params["pos"], position, keepdims=False)
        new_cache = []
        for p, (k_cache, v_cache) in zip(params["layers"], cache):
            h = norm(x)
            q, k, v = (jnp.reshape(h @ p[w], (-1, heads, head_dim)) for w in ("wq", "wk", "wv"))
            k_cache = jax.lax.dynamic_update_slice(k_cache, k[:, None], (0, position, 0, 0))
            v_cache = jax.lax.dynamic_update_slice(v_cache, v[:, None], (0, position, 0, 0))
            scores = jnp.einsum("bhd,bthd->bht", q, k_cache) / np.sqrt(head_dim).astype(np.float32)
            scores = jnp.where(jnp.arange(total) <= position, scores, -1e9)
            attended = jnp.einsum("bht,bthd->bhd", jax.nn.softmax(scores, axis=-1), v_cache)
            x = x + jnp.reshape(attended, (-1, width)) @ p["wo"]
            x = x + jax.nn.gelu(norm(x) @ p["w1"]) @ p["w2"]
            new_cache.append((k_cache, v_cache))
        return norm(x) @ params["embed"].T, new_cache

    def generate(params: Any, prompt: jax.Array) -> Any:
        batch = prompt.shape[0]
        cache = [(jnp.zeros((batch, total, heads, head_dim)),) * 2 for _ in range(layers)]
        tokens = jnp.zeros((batch, total), jnp.int32).at[:, :prompt_len].set(prompt)

        def body(state: Any) -> Any:
            position, tokens, cache, _ = state
            logits, cache = decode_step(params, cache, tokens[:, position], position)
            chosen = jnp.argmax(logits, axis=-1).astype(jnp.int32)
            keep = position + 1 < prompt_len
            following = jnp.where(keep, tokens[:, position + 1], chosen)
            tokens = jax.lax.dynamic_update_slice(tokens, following[:, None], (0, position + 1))
            return position + 1, tokens, cache, logits

        state = (jnp.int32(0), tokens, cache, jnp.zeros((batch, vocab)))
        _, tokens, cache, logits = jax.lax.while_loop(lambda s: s[0] < total - 1, body, state)
        top_values, top_indices = jax.lax.top_k(logits, 5)
        return tokens, top_values, top_indices, cache[-1][0]

    prompt = _tokens(201, (4, prompt_len), vocab)
    return flat_program("jax_greedy_decode_kv_cache", "jax", "2-layer decoder, greedy decode of 32 tokens in a while "
                        "loop with a KV cache (dynamic_update_slice, argmax), top_k of the last logits",
                        generate, params, prompt)


def jax_scans_sorts() -> LibraryProgram:
    """Associative scan, cumulative ops, sorts of several operands, argsort, unique with a size,
    searchsorted, segment sums, bincount and histogram, with a differentiable result of each kind."""
    def ops(x: jax.Array, y: jax.Array, segments: jax.Array, labels: jax.Array) -> Any:
        def combine(a: Any, b: Any) -> Any:  # the linear recurrence h' = a * h + b
            return a[0] * b[0], b[0] * a[1] + b[1]

        decay, drive = jax.nn.sigmoid(x), y
        _, recurrence = jax.lax.associative_scan(combine, (decay, drive), axis=1)
        cumulative = jnp.cumsum(x, axis=1) + jnp.cumprod(1.0 + 0.01 * y, axis=0) + jax.lax.cummax(x, axis=1)
        reverse_min = jax.lax.cummin(y, axis=0, reverse=True)
        keys_sorted, values_sorted, labels_sorted = jax.lax.sort((x[0], y[0], labels), num_keys=1)
        order = jnp.argsort(x, axis=-1, descending=True)
        gathered = jnp.take_along_axis(y, order, axis=-1)
        unique = jnp.unique(labels, size=64, fill_value=-1)
        edges = jnp.sort(y[1])
        positions = jnp.searchsorted(edges, x[2], side="right")
        segment_sums = jax.ops.segment_sum(x.T, segments, num_segments=16)
        segment_max = jax.ops.segment_max(y.T, segments, num_segments=16)
        counts = jnp.bincount(labels, length=128)
        histogram, _ = jnp.histogram(x[3], bins=32, range=(-3.0, 3.0))
        return (recurrence, cumulative, reverse_min, keys_sorted, values_sorted, labels_sorted, gathered, unique,
                positions, segment_sums, segment_max, counts, histogram)

    x, y = _normal(210, (64, 512)), _normal(211, (64, 512))
    segments = jnp.sort(_tokens(212, (512,), 16))
    labels = _tokens(213, (512,), 128)
    return flat_program("jax_scans_sorts", "jax", "associative_scan, cumsum/cumprod/cummax/cummin, 3-operand sort, "
                        "argsort, unique(size=), searchsorted, segment_sum/max, bincount, histogram",
                        ops, x, y, segments, labels)


def jax_fft_spectral() -> LibraryProgram:
    """FFTs of 1 to 3 dimensions (complex, real, inverse real) in a spectral filter and its gradient."""
    def loss(filters: Any, signal: jax.Array, image: jax.Array, volume: jax.Array) -> jax.Array:
        spectrum = jnp.fft.rfft(signal, axis=-1) * filters["f1"]
        filtered = jnp.fft.irfft(spectrum, n=signal.shape[-1], axis=-1)
        image_spectrum = jnp.fft.fft2(image.astype(jnp.complex64)) * filters["f2"]
        image_back = jnp.real(jnp.fft.ifft2(image_spectrum))
        volume_spectrum = jnp.fft.rfftn(volume, axes=(1, 2, 3)) * filters["f3"]
        volume_back = jnp.fft.irfftn(volume_spectrum, s=volume.shape[1:], axes=(1, 2, 3))
        power = jnp.abs(jnp.fft.fftshift(jnp.fft.fft(signal, axis=0), axes=0)) ** 2
        return (jnp.mean(filtered ** 2) + jnp.mean(image_back ** 2) + jnp.mean(volume_back ** 2)
                + 1e-3 * jnp.mean(power))

    filters = {"f1": _normal(220, (257,)), "f2": _normal(221, (64, 64)), "f3": _normal(222, (16, 16, 9))}
    signal, image, volume = _normal(223, (32, 512)), _normal(224, (8, 64, 64)), _normal(225, (4, 16, 16, 16))

    def grad(filters: Any, signal: jax.Array, image: jax.Array, volume: jax.Array) -> Any:
        return jax.value_and_grad(loss, argnums=(0, 1))(filters, signal, image, volume)

    return flat_program("jax_fft_spectral", "jax", "rfft/irfft 1-D, fft2/ifft2, rfftn/irfftn 3-D, fft + fftshift: "
                        "spectral filters, value and gradient", grad, filters, signal, image, volume)


def jax_linalg_decompositions() -> LibraryProgram:
    """QR, SVD, eigh and lstsq of batched matrices: value and gradient. (With the solves of
    :func:`jax_linalg_solves` in the same program, jaxlib 0.10.2's CPU runtime hangs when it runs it.)"""
    def loss(a: jax.Array, spd: jax.Array, b: jax.Array) -> jax.Array:
        q, r = jnp.linalg.qr(a)
        s = jnp.linalg.svd(a, compute_uv=False)
        eigenvalues, eigenvectors = jnp.linalg.eigh(spd @ spd.mT + 16.0 * jnp.eye(spd.shape[-1]))
        fitted = jnp.linalg.lstsq(a[0], b[0])[0]
        return (jnp.sum(q[..., :4] ** 2 * r[..., :4, :4].sum()) + jnp.sum(s) + jnp.sum(eigenvalues[..., -3:])
                + jnp.sum(jnp.abs(eigenvectors[..., 0])) + jnp.sum(fitted ** 2))

    return flat_program("jax_linalg_decompositions", "jax", "qr, svd, eigh, lstsq of batched matrices: value and "
                        "gradient", jax.value_and_grad(loss, argnums=(0, 1, 2)), _normal(230, (4, 48, 32)),
                        _normal(232, (4, 48, 48)), _normal(231, (4, 48, 8)))


def jax_linalg_solves() -> LibraryProgram:
    """solve, Cholesky, triangular solve, slogdet and eigenvalues of batched SPD matrices: value and gradient."""
    def loss(spd: jax.Array, b: jax.Array) -> jax.Array:
        symmetric = spd @ spd.mT + 16.0 * jnp.eye(spd.shape[-1])
        solved = jnp.linalg.solve(symmetric, b)
        lower = jnp.linalg.cholesky(symmetric)
        triangular = jax.scipy.linalg.solve_triangular(lower, b, lower=True)
        sign, logdet = jnp.linalg.slogdet(symmetric)
        return (jnp.sum(solved ** 2) + jnp.sum(triangular) + jnp.sum(sign * logdet)
                + jnp.sum(jnp.linalg.eigvalsh(symmetric)[..., -3:]))

    return flat_program("jax_linalg_solves", "jax", "solve, cholesky, solve_triangular, slogdet, eigvalsh of batched "
                        "SPD matrices: value and gradient", jax.value_and_grad(loss, argnums=(0, 1)),
                        _normal(232, (4, 48, 48)), _normal(231, (4, 48, 8)))


def jax_random_sampling() -> LibraryProgram:
    """Categorical and Gumbel sampling, permutations, choice without replacement and a
    Gumbel-softmax relaxation (differentiable in the logits), from threefry keys."""
    def sample(logits: jax.Array, x: jax.Array, key: jax.Array) -> Any:
        k1, k2, k3, k4, k5 = jax.random.split(key, 5)
        drawn = jax.random.categorical(k1, logits, axis=-1, shape=(8, logits.shape[0]))
        permuted = jax.random.permutation(k2, x, axis=0)
        gumbel = jax.random.gumbel(k3, logits.shape)
        relaxed = jax.nn.softmax((logits + gumbel) / 0.5, axis=-1)
        chosen = jax.random.choice(k4, x.shape[0], (16,), replace=False)
        noisy = x + 0.1 * jax.random.truncated_normal(k5, -2.0, 2.0, x.shape)
        return drawn, permuted, relaxed, chosen, x[chosen], noisy

    return flat_program("jax_random_sampling", "jax", "categorical, permutation, gumbel softmax, choice without "
                        "replacement, truncated normal (threefry)", sample, _normal(240, (64, 1000)),
                        _normal(241, (256, 32)), jax.random.PRNGKey(242))


def jax_sparse_bcoo() -> LibraryProgram:
    """A graph convolution with a BCOO adjacency (``jax.experimental.sparse``): sparse-dense
    matmuls and the gradient through the sparse values."""
    from jax.experimental import sparse

    nodes, features, nnz = 512, 64, 4096
    rows = _tokens(250, (nnz,), nodes)
    cols = _tokens(251, (nnz,), nodes)
    indices = jnp.stack([rows, cols], axis=-1)

    def loss(values: jax.Array, w1: jax.Array, w2: jax.Array, x: jax.Array) -> jax.Array:
        adjacency = sparse.BCOO((values, indices), shape=(nodes, nodes))
        h = jax.nn.relu(adjacency @ (x @ w1))
        h = adjacency @ (h @ w2)
        transpose = adjacency.T @ h
        return jnp.mean(h ** 2) + jnp.mean(transpose ** 2) + jnp.sum(sparse.todense(adjacency).sum(0) ** 2) * 1e-6

    def grad(values: jax.Array, w1: jax.Array, w2: jax.Array, x: jax.Array) -> Any:
        return jax.value_and_grad(loss, argnums=(0, 1, 2))(values, w1, w2, x)

    return flat_program("jax_sparse_bcoo", "jax.experimental.sparse", "2-layer graph convolution with a BCOO "
                        "adjacency (4096 non-zeros of 512x512), todense, value and gradient", grad,
                        jax.nn.sigmoid(_normal(252, (nnz,))), 0.1 * _normal(253, (features, features)),
                        0.1 * _normal(254, (features, 16)), _normal(255, (nodes, features)))


def jax_complex_arithmetic() -> LibraryProgram:
    """Complex numbers built from real inputs: products, conjugates, exp/log, angle and abs,
    a complex matmul and its (real) loss's gradient."""
    def loss(re: jax.Array, im: jax.Array, w_re: jax.Array, w_im: jax.Array) -> jax.Array:
        z = jax.lax.complex(re, im)
        w = jax.lax.complex(w_re, w_im)
        y = z @ w
        rotated = y * jnp.exp(1j * jnp.angle(y).astype(jnp.complex64))
        mixed = jnp.conj(rotated) * jnp.log(1.0 + jnp.abs(y)).astype(jnp.complex64) + jnp.sqrt(z @ w + 2.0)
        return jnp.mean(jnp.abs(mixed) ** 2) + jnp.mean(jnp.real(mixed) * jnp.imag(y))

    def grad(*args: jax.Array) -> Any:
        value, grads = jax.value_and_grad(loss, argnums=(0, 1, 2, 3))(*args)
        z = jax.lax.complex(args[0], args[1])
        return value, grads, jnp.real(z * jnp.conj(z[::-1])), jnp.imag(jnp.fft.fft(z, axis=-1))

    return flat_program("jax_complex_arithmetic", "jax", "complex matmul, conj, exp/log/sqrt, angle/abs: value and "
                        "gradient through lax.complex", grad, _normal(260, (128, 96)), _normal(261, (128, 96)),
                        0.1 * _normal(262, (96, 64)), 0.1 * _normal(263, (96, 64)))


def jax_bit_ops() -> LibraryProgram:
    """Integer bit manipulation as hashing and quantisation code writes it: shifts, xor, and/or,
    population count, leading zeros, bitcasts between float and int, and a float path through
    the bitcast mantissa."""
    def ops(x: jax.Array, words: jax.Array, salt: jax.Array) -> Any:
        bits = jax.lax.bitcast_convert_type(x, jnp.uint32)
        hashed = words ^ (words << 13)
        hashed = hashed ^ jax.lax.shift_right_logical(hashed, jnp.uint32(17))
        hashed = (hashed ^ (hashed << 5)) * jnp.uint32(0x9E3779B1) + salt
        ones = jax.lax.population_count(hashed)
        leading = jax.lax.clz(hashed | jnp.uint32(1))
        signed = jax.lax.shift_right_arithmetic(hashed.astype(jnp.int32), 3)
        mantissa = jax.lax.bitcast_convert_type((bits & jnp.uint32(0x007FFFFF)) | jnp.uint32(0x3F800000), jnp.float32)
        rounded = jax.lax.bitcast_convert_type(bits & jnp.uint32(0xFFFF0000), jnp.float32)
        halves = jax.lax.bitcast_convert_type(x.astype(jnp.bfloat16), jnp.uint16)
        pairs = jax.lax.bitcast_convert_type(jnp.reshape(halves, (*halves.shape[:-1], -1, 2)), jnp.uint32)
        scaled = x * mantissa + rounded * (ones.astype(jnp.float32) / 32.0)
        return hashed, ones, leading, signed, pairs, scaled, jnp.bitwise_not(words) & (words >> 3)

    words = jax.random.bits(jax.random.PRNGKey(270), (256, 512), jnp.uint32)
    return flat_program("jax_bit_ops", "jax", "xorshift hash (shifts, xor), popcount, clz, arithmetic shift, "
                        "float/int bitcasts incl. bf16 pairs to u32", ops, _normal(271, (256, 512)), words,
                        jnp.uint32(12345))


def jax_remat_policies() -> LibraryProgram:
    """An MLP stack under ``jax.checkpoint`` with three policies (dots saveable, nothing saveable,
    only a named residual saveable) and a scanned remat block: the gradient."""
    from jax.ad_checkpoint import checkpoint_name

    width, depth = 256, 6
    policies = [jax.checkpoint_policies.dots_with_no_batch_dims_saveable, jax.checkpoint_policies.nothing_saveable,
                jax.checkpoint_policies.save_only_these_names("pre_activation")]

    def layer(p: Any, x: jax.Array) -> jax.Array:
        h = checkpoint_name(x @ p["w"] + p["b"], "pre_activation")
        return x + jnp.tanh(h) * jax.nn.sigmoid(h @ p["g"])

    def loss(params: Any, scanned: Any, x: jax.Array) -> jax.Array:
        for i, p in enumerate(params):
            x = jax.checkpoint(layer, policy=policies[i % len(policies)])(p, x)

        def body(x: jax.Array, p: Any) -> tuple[jax.Array, None]:
            return jax.checkpoint(layer, prevent_cse=False)(p, x), None

        x, _ = jax.lax.scan(body, x, scanned)
        return jnp.mean(x ** 2)

    def init(key: int) -> dict[str, jax.Array]:
        return {"w": 0.05 * _normal(key, (width, width)), "b": jnp.zeros(width),
                "g": 0.05 * _normal(key + 1, (width, width))}

    params = [init(280 + 2 * i) for i in range(depth)]
    scanned = jax.tree.map(lambda *leaves: jnp.stack(leaves), *[init(300 + 2 * i) for i in range(4)])
    return flat_program("jax_remat_policies", "jax", "6 layers under jax.checkpoint with dots/nothing/named "
                        "policies and a scanned remat block: value and gradient",
                        jax.value_and_grad(loss, argnums=(0, 1)), params, scanned, _normal(310, (64, width)))


def jax_beam_search() -> LibraryProgram:
    """Beam search (4 beams, 24 steps) over a GRU language model: ``top_k`` over beams x vocab in a
    ``fori_loop``, beams' histories and states reordered with ``take_along_axis``, final best beam."""
    vocab, hidden, beams, steps = 512, 128, 4, 24
    params = {"embed": 0.1 * _normal(400, (vocab, hidden)), "wi": 0.1 * _normal(401, (hidden, 3 * hidden)),
              "wh": 0.1 * _normal(402, (hidden, 3 * hidden)), "out": 0.1 * _normal(403, (hidden, vocab))}

    def gru(p: Any, h: jax.Array, token: jax.Array) -> jax.Array:
        gates_x, gates_h = p["embed"][token] @ p["wi"], h @ p["wh"]
        r, z, _ = jnp.split(jax.nn.sigmoid(gates_x + gates_h), 3, axis=-1)
        n = jnp.tanh(jnp.split(gates_x, 3, axis=-1)[2] + r * jnp.split(gates_h, 3, axis=-1)[2])
        return (1 - z) * n + z * h

    def search(p: Any, h0: jax.Array, start: jax.Array) -> Any:
        batch = h0.shape[0]
        h = jnp.repeat(h0[:, None], beams, axis=1)
        scores = jnp.tile(jnp.array([0.0] + [-1e9] * (beams - 1)), (batch, 1))
        history = jnp.zeros((batch, beams, steps), jnp.int32)
        tokens = jnp.repeat(start[:, None], beams, axis=1)

        def body(t: jax.Array, state: Any) -> Any:
            h, scores, history, tokens = state
            h = gru(p, h, tokens)
            logp = jax.nn.log_softmax(h @ p["out"], axis=-1) + scores[..., None]
            top, flat = jax.lax.top_k(jnp.reshape(logp, (batch, beams * vocab)), beams)
            parent, tokens = flat // vocab, (flat % vocab).astype(jnp.int32)
            h = jnp.take_along_axis(h, parent[..., None], axis=1)
            history = jnp.take_along_axis(history, parent[..., None], axis=1)
            history = jax.lax.dynamic_update_slice_in_dim(history, tokens[..., None], t, axis=2)
            return h, top, history, tokens

        h, scores, history, _ = jax.lax.fori_loop(0, steps, body, (h, scores, history, tokens))
        best = jnp.argmax(scores, axis=-1)
        return jnp.take_along_axis(history, best[:, None, None], axis=1)[:, 0], scores, h

    return flat_program("jax_beam_search", "jax", "beam search (4 beams, 24 steps) over a GRU LM: top_k over "
                        "beams x vocab, beam reordering by take_along_axis, in a fori_loop", search, params,
                        _normal(404, (8, hidden)), _tokens(405, (8,), vocab))


def jax_pad_gather_modes() -> LibraryProgram:
    """Index arithmetic of boundary modes: ``jnp.pad`` reflect/symmetric/wrap/edge, ``roll``,
    ``take`` with wrap/clip/fill, ``map_coordinates`` (order 1, mirror and wrap), clamped
    ``dynamic_slice``, ``lax.rev``, full 1-D convolution, average pooling with padding and an
    input-dilated convolution; value and gradient."""
    def loss(image: jax.Array, signal: jax.Array, kernel: jax.Array, coords: jax.Array, start: jax.Array) -> Any:
        padded = (jnp.pad(image, ((0, 0), (3, 3), (3, 3)), mode="reflect")
                  + jnp.pad(image, ((0, 0), (3, 3), (3, 3)), mode="symmetric")
                  + jnp.pad(image, ((0, 0), (3, 3), (3, 3)), mode="wrap")
                  + jnp.pad(image, ((0, 0), (3, 3), (3, 3)), mode="edge"))
        rolled = jnp.roll(padded, (5, -7), axis=(1, 2))
        index = jnp.arange(-40, 40, 3)
        taken = (jnp.take(signal, index, axis=1, mode="wrap") + jnp.take(signal, index, axis=1, mode="clip")
                 + jnp.take(signal, index, axis=1, mode="fill", fill_value=0.0))
        sampled = jax.vmap(lambda im: jax.scipy.ndimage.map_coordinates(im, coords, order=1, mode="mirror")
                           + jax.scipy.ndimage.map_coordinates(im, coords, order=1, mode="wrap"))(image)
        window = jax.lax.dynamic_slice(padded, (0, start, start - 3), (image.shape[0], 16, 16))
        reversed_ = jax.lax.rev(signal, (1,))
        convolved = jax.vmap(lambda x: jnp.convolve(x, kernel, mode="full"))(signal)
        pooled = jax.lax.reduce_window(image, 0.0, jax.lax.add, (1, 3, 3), (1, 2, 2), ((0, 0), (1, 1), (1, 1))) / 9.0
        dilated = jax.lax.conv_general_dilated(image[:, None], kernel[None, None, :3, None] * jnp.ones((1, 1, 3, 3)),
                                               (1, 1), ((2, 2), (2, 2)), lhs_dilation=(2, 2))
        value = (jnp.mean(rolled ** 2) + jnp.mean(taken ** 2) + jnp.mean(sampled ** 2) + jnp.mean(window)
                 + jnp.mean(reversed_ * signal) + jnp.mean(convolved ** 2) + jnp.mean(pooled ** 2)
                 + jnp.mean(dilated ** 2))
        return value, (rolled, taken, sampled, window, convolved, pooled, dilated)

    def grad(*args: jax.Array) -> Any:
        return jax.value_and_grad(loss, argnums=(0, 1, 2), has_aux=True)(*args)

    coords = jnp.stack(jnp.meshgrid(jnp.linspace(-4.0, 36.0, 24), jnp.linspace(-2.5, 33.5, 20), indexing="ij"))
    return flat_program("jax_pad_gather_modes", "jax", "pad reflect/symmetric/wrap/edge, roll, take wrap/clip/fill, "
                        "map_coordinates mirror/wrap, clamped dynamic_slice, rev, convolve, avg-pool, lhs-dilated conv",
                        grad, _normal(410, (8, 32, 32)), _normal(411, (16, 64)), _normal(412, (7,)), coords,
                        jnp.int32(30))


# --------------------------------------------------------------------------- flax.linen


def linen_unet_step() -> LibraryProgram:
    """A small U-Net: GroupNorm, depthwise, grouped and dilated convolutions, strided down-sampling,
    ``ConvTranspose`` and ``jax.image.resize`` up-sampling, skip connections; Adam step."""
    import flax.linen as nn  # optional dependency (programs extra)
    import optax  # optional dependency (programs extra)

    class Block(nn.Module):
        features: int

        @nn.compact
        def __call__(self, x: jax.Array) -> jax.Array:
            h = nn.Conv(x.shape[-1], (3, 3), feature_group_count=x.shape[-1])(x)  # depthwise
            h = nn.swish(nn.GroupNorm(num_groups=8)(nn.Conv(self.features, (1, 1))(h)))
            h = nn.Conv(self.features, (3, 3), kernel_dilation=(2, 2), feature_group_count=4)(h)
            h = nn.GroupNorm(num_groups=8)(h)
            skip = nn.Conv(self.features, (1, 1))(x) if x.shape[-1] != self.features else x
            return nn.swish(h + skip)

    class UNet(nn.Module):
        @nn.compact
        def __call__(self, x: jax.Array) -> jax.Array:
            x = nn.Conv(32, (3, 3))(x)
            skips = []
            for features in (32, 64, 128):
                x = Block(features)(x)
                skips.append(x)
                x = nn.Conv(features, (3, 3), strides=(2, 2))(x)
            x = Block(128)(x)
            for i, features in enumerate((128, 64, 32)):
                if i % 2 == 0:
                    x = nn.ConvTranspose(features, (2, 2), strides=(2, 2))(x)
                else:
                    b, h, w, c = x.shape
                    x = nn.Conv(features, (1, 1))(jax.image.resize(x, (b, 2 * h, 2 * w, c), "bilinear"))
                x = Block(features)(jnp.concatenate([x, skips.pop()], axis=-1))
            return nn.Conv(3, (1, 1))(x)

    model = UNet()
    images = _normal(320, (4, 64, 64, 3))
    targets = _normal(321, (4, 64, 64, 3))
    params = model.init(jax.random.PRNGKey(0), images)["params"]
    tx = optax.adam(1e-3)
    opt_state = tx.init(params)

    def step(params: Any, opt_state: Any, images: jax.Array, targets: jax.Array) -> Any:
        def loss(p: Any) -> jax.Array:
            return jnp.mean((model.apply({"params": p}, images) - targets) ** 2)

        value, grads = jax.value_and_grad(loss)(params)
        updates, opt_state = tx.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, value

    return flat_program("linen_unet_step", "flax.linen+optax", "U-Net (GroupNorm, depthwise/grouped/dilated convs, "
                        "ConvTranspose, bilinear resize, skips) on 64x64, Adam step",
                        step, params, opt_state, images, targets)


# --------------------------------------------------------------------------- optax


def optax_adafactor_lion_lamb() -> LibraryProgram:
    """One gradient of a 3-layer MLP applied by adafactor (factored second moments), lion and lamb."""
    import optax  # optional dependency (programs extra)

    shapes = [(512, 1024), (1024,), (1024, 1024), (1024,), (1024, 10), (10,)]
    params = [0.02 * _normal(330 + i, s) for i, s in enumerate(shapes)]
    optimisers = [optax.adafactor(1e-3), optax.lion(1e-4, weight_decay=0.01), optax.lamb(1e-3)]
    states = [tx.init(params) for tx in optimisers]

    def step(params: Any, states: Any, x: jax.Array, labels: jax.Array) -> Any:
        def loss(p: Any) -> jax.Array:
            h = x
            for w, b in zip(p[:-2:2], p[1:-2:2]):
                h = jax.nn.gelu(h @ w + b)
            return optax.softmax_cross_entropy_with_integer_labels(h @ p[-2] + p[-1], labels).mean()

        value, grads = jax.value_and_grad(loss)(params)
        results = []
        for tx, state in zip(optimisers, states):
            updates, state = tx.update(grads, state, params)
            results.append((optax.apply_updates(params, updates), state))
        return value, results

    return flat_program("optax_adafactor_lion_lamb", "optax", "MLP gradient applied by adafactor, lion and lamb",
                        step, params, states, _normal(340, (128, 512)), _tokens(341, (128,), 10))


# --------------------------------------------------------------------------- diffrax


def diffrax_sde_brownian_tree() -> LibraryProgram:
    """An Ornstein-Uhlenbeck-like SDE with a learned drift (equinox MLP), Euler-Maruyama driven by a
    ``VirtualBrownianTree``, 64 saved times, vmapped over a batch of keys' paths; the loss's gradient."""
    import diffrax  # optional dependency (programs extra)
    import equinox as eqx  # optional dependency (programs extra)
    import lineax  # optional dependency (diffrax's)

    mlp = eqx.nn.MLP(4, 4, 32, 2, activation=jnp.tanh, key=jax.random.PRNGKey(0))
    params, static = eqx.partition(mlp, eqx.is_array)
    ts = jnp.linspace(0.0, 1.0, 64)

    def solve(params: Any, y0: jax.Array, sigma: jax.Array, key: jax.Array) -> jax.Array:
        drift_net = eqx.combine(params, static)

        def diffusion(t: Any, y: jax.Array, args: Any) -> Any:
            return lineax.DiagonalLinearOperator(sigma * jnp.ones_like(y))

        brownian = diffrax.VirtualBrownianTree(0.0, 1.0, tol=1e-3, shape=(4,), key=key)
        terms = diffrax.MultiTerm(diffrax.ODETerm(lambda t, y, args: drift_net(y) - y),
                                  diffrax.ControlTerm(diffusion, brownian))
        solution = diffrax.diffeqsolve(terms, diffrax.Euler(), 0.0, 1.0, dt0=1 / 64, y0=y0,
                                       saveat=diffrax.SaveAt(ts=ts), max_steps=128)
        return solution.ys

    def step(params: Any, y0: jax.Array, sigma: jax.Array, keys: jax.Array) -> Any:
        def loss(p: Any, sigma: jax.Array) -> jax.Array:
            paths = jax.vmap(lambda y, k: solve(p, y, sigma, k))(y0, keys)
            return jnp.mean(paths[:, -1] ** 2)

        return jax.value_and_grad(loss, argnums=(0, 1))(params, sigma)

    keys = jax.random.split(jax.random.PRNGKey(350), 8)
    return flat_program("diffrax_sde_brownian_tree", "diffrax+equinox", "SDE (MLP drift, diagonal noise), Euler-"
                        "Maruyama on a VirtualBrownianTree, 8 paths, value and gradient",
                        step, params, _normal(351, (8, 4)), jnp.float32(0.3), keys)


# --------------------------------------------------------------------------- jax-md


def jaxmd_fire_minimise() -> LibraryProgram:
    """FIRE energy minimisation of a soft-sphere system (jax-md), 200 steps in a ``fori_loop``."""
    from jax_md import energy, minimize, space  # optional dependency (programs extra)

    n, box = 256, 12.0
    displacement, shift = space.periodic(box)
    energy_fn = energy.soft_sphere_pair(displacement, sigma=1.0)
    init_fn, apply_fn = minimize.fire_descent(energy_fn, shift, dt_start=1e-3, dt_max=4e-3)
    positions = jax.random.uniform(jax.random.PRNGKey(360), (n, 2 + 1), maxval=box)
    state = init_fn(positions)

    def run(state: Any) -> Any:
        final = jax.lax.fori_loop(0, 200, lambda i, s: apply_fn(s), state)
        return final, energy_fn(final.position)

    return flat_program("jaxmd_fire_minimise", "jax-md", "FIRE descent, 256 soft spheres in 3-D, 200 steps "
                        "(fori_loop), final energy", run, state)


# --------------------------------------------------------------------------- Hugging Face (Flax)


def hf_flax_bigbird() -> LibraryProgram:
    """BigBird with block-sparse attention (sliding, global and random key blocks gathered per query
    block) on a padded batch, forward."""
    from transformers import BigBirdConfig, FlaxBigBirdModel  # optional dependency (programs extra)

    config = BigBirdConfig(vocab_size=4096, hidden_size=128, num_hidden_layers=2, num_attention_heads=4,
                           intermediate_size=512, max_position_embeddings=512, attention_type="block_sparse",
                           block_size=16, num_random_blocks=2)
    model = FlaxBigBirdModel(config, seed=0)
    ids = _tokens(370, (2, 256), 4096)
    mask = (jnp.arange(256)[None, :] < jnp.array([256, 200])[:, None]).astype(jnp.int32)

    def forward(params: Any, ids: jax.Array, mask: jax.Array) -> Any:
        out = model(ids, attention_mask=mask, params=params)
        return out.last_hidden_state, out.pooler_output

    return flat_program("hf_flax_bigbird", "transformers (Flax)", "BigBird (2 layers, block-sparse attention, "
                        "blocks of 16, 2 random blocks), 256 tokens, forward", forward, model.params, ids, mask)


def hf_flax_clip() -> LibraryProgram:
    """CLIP: a ViT image tower and a causal text tower, normalised embeddings and contrastive logits."""
    from transformers import CLIPConfig, FlaxCLIPModel  # optional dependency (programs extra)

    config = CLIPConfig(
        text_config={"vocab_size": 2048, "hidden_size": 128, "intermediate_size": 512, "num_hidden_layers": 3,
                     "num_attention_heads": 4, "max_position_embeddings": 64},
        vision_config={"hidden_size": 192, "intermediate_size": 768, "num_hidden_layers": 3,
                       "num_attention_heads": 4, "image_size": 64, "patch_size": 8},
        projection_dim=128,
    )
    model = FlaxCLIPModel(config, seed=0)
    ids = _tokens(380, (8, 32), 2048)
    pixels = _normal(381, (8, 3, 64, 64))

    def forward(params: Any, ids: jax.Array, pixels: jax.Array) -> Any:
        out = model(input_ids=ids, pixel_values=pixels, params=params)
        return out.logits_per_image, out.text_embeds, out.image_embeds

    return flat_program("hf_flax_clip", "transformers (Flax)", "CLIP (3-layer ViT 8x8 patches of 64x64, 3-layer "
                        "text tower), contrastive logits, forward", forward, model.params, ids, pixels)


# --------------------------------------------------------------------------- keras-hub


def kerashub_bert_classifier_step() -> LibraryProgram:
    """keras-hub's BERT classifier (backbone + pooled head, dropout) in a keras Adam training step."""
    import keras  # optional dependency (programs extra)
    import keras_hub  # optional dependency (programs extra)
    from library_programs import _keras_train_step

    keras.utils.set_random_seed(0)
    backbone = keras_hub.models.BertBackbone(vocabulary_size=4096, num_layers=2, num_heads=4, hidden_dim=128,
                                             intermediate_dim=512, max_sequence_length=128)
    model = keras_hub.models.BertClassifier(backbone, num_classes=3, preprocessor=None)
    inputs = {"token_ids": _tokens(390, (16, 64), 4096), "segment_ids": jnp.zeros((16, 64), jnp.int32),
              "padding_mask": (jnp.arange(64)[None, :] < _tokens(391, (16, 1), 64) + 1).astype(jnp.int32)}
    program = _keras_train_step("kerashub_bert_classifier_step", "BERT classifier (2 layers, hidden 128, dropout), "
                                "padded batch, Adam step", model, inputs, _tokens(392, (16,), 3))
    program.library = "keras-hub"
    return program


def kerashub_whisper_backbone() -> LibraryProgram:
    """keras-hub's Whisper backbone: strided 1-D convolutions over log-mel frames, encoder and
    a cross-attending decoder, forward."""
    import keras  # optional dependency (programs extra)
    import keras_hub  # optional dependency (programs extra)
    from library_programs import _keras_forward

    keras.utils.set_random_seed(0)
    model = keras_hub.models.WhisperBackbone(vocabulary_size=2048, num_layers=2, num_heads=4, hidden_dim=128,
                                             intermediate_dim=512, num_mels=80, max_encoder_sequence_length=400,
                                             max_decoder_sequence_length=64)
    inputs = {"encoder_features": _normal(395, (2, 400, 80)), "decoder_token_ids": _tokens(396, (2, 64), 2048),
              "decoder_padding_mask": jnp.ones((2, 64), jnp.int32)}
    return _keras_forward("kerashub_whisper_backbone", "Whisper backbone (2+2 layers, hidden 128), 400 log-mel "
                          "frames, forward", model, inputs)


PROGRAMS: dict[str, Callable[[], LibraryProgram]] = by_name(
    jax_greedy_decode_kv_cache, jax_beam_search, jax_scans_sorts, jax_fft_spectral, jax_linalg_decompositions,
    jax_linalg_solves, jax_random_sampling, jax_sparse_bcoo, jax_complex_arithmetic, jax_bit_ops,
    jax_remat_policies, jax_pad_gather_modes, linen_unet_step, optax_adafactor_lion_lamb,
    diffrax_sde_brownian_tree, jaxmd_fire_minimise, hf_flax_bigbird, hf_flax_clip,
    kerashub_bert_classifier_step, kerashub_whisper_backbone,
)
