"""cuDNN convolution custom calls of XLA GPU modules (``__cudnn$convForward``,
``__cudnn$convBiasActivationForward``, ``__cudnn$convBackwardInput``,
``__cudnn$convBackwardFilter``): their ``window`` and ``dim_labels`` describe a forward
convolution, and each call computes one of its arrays from the other two. The maps of the
call's first tuple element must equal the dependence, found by perturbing each input
element, of a numpy evaluation written here from the convolution's definition (every
output element, window position and input feature of its group, one product each); bad
attributes are located errors, a backward call with an input dilation is unknown."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import pytest
from op_fixtures import perturbed_dependence, relation

from hlo_indexing import fusion_indexing, input_to_output_indexing, output_to_input_indexing, parse_module
from hlo_indexing.direction import Direction
from hlo_indexing.errors import InvalidArgumentError, InvalidAttributeError
from hlo_indexing.ops.dispatch import tuple_elements_indexing


@dataclass(frozen=True)
class Conv:
    """A forward convolution: labels as XLA writes them, the input's batch, features and
    spatial sizes, the kernel's spatial sizes and output features, and its window."""

    labels: str
    batch: int
    features: int
    spatial: tuple[int, ...]
    kernel: tuple[int, ...]
    out_features: int
    strides: tuple[int, ...] = ()
    padding: tuple[tuple[int, int], ...] = ()
    dilations: tuple[int, ...] = ()
    reversal: tuple[int, ...] = ()
    feature_groups: int = 1
    batch_groups: int = 1

    def field(self, name: str, default: int) -> tuple:
        return getattr(self, name) or (default,) * len(self.kernel)

    def out_spatial(self) -> tuple[int, ...]:
        pads = self.padding or ((0, 0),) * len(self.kernel)
        return tuple(
            (x + lo + hi - ((k - 1) * d + 1)) // s + 1
            for x, k, s, (lo, hi), d in zip(self.spatial, self.kernel, self.field("strides", 1), pads, self.field("dilations", 1))
        )

    def window(self) -> str:
        text = "size=" + "x".join(map(str, self.kernel))
        if self.strides:
            text += " stride=" + "x".join(map(str, self.strides))
        if self.padding:
            text += " pad=" + "x".join(f"{lo}_{hi}" for lo, hi in self.padding)
        if self.dilations:
            text += " rhs_dilate=" + "x".join(map(str, self.dilations))
        if self.reversal:
            text += " rhs_reversal=" + "x".join(map(str, self.reversal))
        return text

    def _parts(self) -> list[str]:
        lhs, rest = self.labels.split("_", 1)
        return [lhs, *rest.split("->")]

    def shapes(self) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
        """Input, kernel, output shapes, laid out by the labels."""
        lhs, rhs, out = self._parts()
        sizes = {
            0: {"b": self.batch, "f": self.features, **{str(j): n for j, n in enumerate(self.spatial)}},
            1: {"i": self.features // self.feature_groups, "o": self.out_features, **{str(j): n for j, n in enumerate(self.kernel)}},
            2: {"b": self.batch // self.batch_groups, "f": self.out_features, **{str(j): n for j, n in enumerate(self.out_spatial())}},
        }
        return tuple(tuple(sizes[k][c] for c in labels) for k, labels in enumerate((lhs, rhs, out)))

    def triples(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Flat (input, kernel, output) element numbers of every product of the
        convolution, by its definition."""
        lhs_labels, rhs_labels, out_labels = self._parts()
        lhs, rhs, out = self.shapes()
        pads = self.padding or ((0, 0),) * len(self.kernel)
        strides, dilations, reversal = self.field("strides", 1), self.field("dilations", 1), self.field("reversal", 0)
        group_in, out_batch = self.features // self.feature_groups, self.batch // self.batch_groups
        found = []
        for b, o, *y in itertools.product(range(out_batch), range(self.out_features), *map(range, self.out_spatial())):
            group = o // (self.out_features // self.feature_groups)
            batch_group = o // (self.out_features // self.batch_groups)
            for w in itertools.product(*map(range, self.kernel)):
                x = [yj * s + wj * d - lo for yj, wj, s, d, (lo, _) in zip(y, w, strides, dilations, pads)]
                if not all(0 <= xj < n for xj, n in zip(x, self.spatial)):
                    continue
                tap = [k - 1 - wj if r else wj for wj, k, r in zip(w, self.kernel, reversal)]
                for c in range(group_in):
                    at = (
                        {"b": batch_group * out_batch + b, "f": group * group_in + c, **{str(j): v for j, v in enumerate(x)}},
                        {"i": c, "o": o, **{str(j): v for j, v in enumerate(tap)}},
                        {"b": b, "f": o, **{str(j): v for j, v in enumerate(y)}},
                    )
                    found.append([
                        np.ravel_multi_index(tuple(at[k][ch] for ch in labels), shape)
                        for k, (labels, shape) in enumerate(((lhs_labels, lhs), (rhs_labels, rhs), (out_labels, out)))
                    ])
        triples = np.array(found, dtype=np.int64).reshape(-1, 3)
        return triples[:, 0], triples[:, 1], triples[:, 2]


def _computed(shape: tuple[int, ...], at: np.ndarray, a: np.ndarray, a_at: np.ndarray, b: np.ndarray, b_at: np.ndarray) -> np.ndarray:
    """The array of ``shape`` whose element ``at[t]`` sums ``a[a_at[t]] * b[b_at[t]]``."""
    out = np.zeros(int(np.prod(shape)))
    np.add.at(out, at, a.ravel()[a_at] * b.ravel()[b_at])
    return out.reshape(shape)


def _hlo(target: str, conv: Conv, operands: list, result: tuple, text: str | None = None) -> str:
    def shape(dims) -> str:
        return "f32[" + ",".join(map(str, dims)) + "]"

    groups = (f", feature_group_count={conv.feature_groups}" if conv.feature_groups > 1 else "") + (
        f", batch_group_count={conv.batch_groups}" if conv.batch_groups > 1 else "")
    attributes = text if text is not None else f"window={{{conv.window()}}}, dim_labels={conv.labels}{groups}"
    params = "\n".join(f"  p{i} = {shape(s)} parameter({i})" for i, s in enumerate(operands))
    names = ", ".join(f"p{i}" for i in range(len(operands)))
    return (
        f"HloModule m\nENTRY e {{\n{params}\n"
        f"  c = ({shape(result)}, u8[0]) custom-call({names}), {attributes}, custom_call_target=\"{target}\", "
        'backend_config={"cudnn_conv_backend_config":{"activation_mode":"kNone","conv_result_scale":1}}\n'
        f"  ROOT r = {shape(result)} get-tuple-element(c), index=0\n}}\n"
    )


def _check(target: str, conv: Conv, operands: list, result: tuple, evaluate) -> None:
    module = parse_module(_hlo(target, conv, operands, result), filename="cudnn.hlo")  # kept alive: MLIR frees its ops with it
    fused = fusion_indexing(module.body.operations[0], 0)
    for k, pairs in enumerate(perturbed_dependence(operands, evaluate)):
        assert relation(fused.maps[k]) == pairs, f"operand {k}: {fused.maps[k]}"


FORWARD = [
    Conv("bf01_oi01->bf01", 2, 3, (5, 4), (3, 3), 2, padding=((1, 1), (1, 1))),
    Conv("b01f_01io->b01f", 1, 4, (6, 5), (2, 3), 4, strides=(2, 1), padding=((0, 1), (1, 0)), dilations=(1, 2), feature_groups=2),
    Conv("bf0_oi0->bf0", 4, 2, (7,), (3,), 4, strides=(2,), reversal=(1,), batch_groups=2),
]
BACKWARD = [
    Conv("bf01_oi01->bf01", 2, 3, (6, 5), (3, 3), 2, strides=(2, 2), padding=((1, 1), (1, 1))),
    Conv("b01f_01io->b01f", 1, 4, (7, 4), (3, 2), 4, strides=(3, 1), padding=((1, 2), (0, 1)), dilations=(2, 1), feature_groups=2),
    Conv("bf0_oi0->bf0", 2, 2, (8,), (2,), 3, strides=(2,), padding=((0, -1),), reversal=(1,)),
]


@pytest.mark.parametrize("conv", FORWARD, ids=[c.labels for c in FORWARD])
def test_a_forward_convolution_reads_its_input_window_and_kernel(conv: Conv) -> None:
    lhs, rhs, out = conv.shapes()
    at_lhs, at_rhs, at_out = conv.triples()
    _check("__cudnn$convForward", conv, [lhs, rhs], out, lambda x, k: _computed(out, at_out, x, at_lhs, k, at_rhs))


def test_a_fused_bias_and_side_input_are_read_at_the_output_feature_and_index() -> None:
    conv = FORWARD[1]
    lhs, rhs, out = conv.shapes()
    at_lhs, at_rhs, at_out = conv.triples()
    feature = conv.labels.split("->")[1].index("f")
    along = [1] * len(out)
    along[feature] = out[feature]

    def evaluate(x, k, bias, side):
        return np.maximum(_computed(out, at_out, x, at_lhs, k, at_rhs) + 0.5 * side + bias.reshape(along), 0.0)

    _check("__cudnn$convBiasActivationForward", conv, [lhs, rhs, (out[feature],), out], out, evaluate)


@pytest.mark.parametrize("conv", BACKWARD, ids=[c.labels for c in BACKWARD])
def test_a_backward_input_convolution_reads_the_outputs_whose_windows_cover_it(conv: Conv) -> None:
    lhs, rhs, out = conv.shapes()
    at_lhs, at_rhs, at_out = conv.triples()
    _check("__cudnn$convBackwardInput", conv, [out, rhs], lhs, lambda g, k: _computed(lhs, at_lhs, g, at_out, k, at_rhs))


@pytest.mark.parametrize("conv", BACKWARD + FORWARD[2:], ids=[c.labels for c in BACKWARD + FORWARD[2:]])
def test_a_backward_filter_convolution_reads_every_input_its_tap_meets(conv: Conv) -> None:
    lhs, rhs, out = conv.shapes()
    at_lhs, at_rhs, at_out = conv.triples()
    _check("__cudnn$convBackwardFilter", conv, [lhs, out], rhs, lambda x, g: _computed(rhs, at_rhs, x, at_lhs, g, at_out))


def _call(text: str):
    module = parse_module(text, filename="cudnn.hlo")
    return module, module.body.operations[0].regions[0].blocks[0].operations[0]


@pytest.mark.parametrize("attributes, problem", [
    ("window={size=3x3 pad=1_1x1_1}", "dim_labels' is missing"),
    ("window={size=3}, dim_labels=bf0_oi0->bf0", "labels the input"),
    ("window={size=2x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01", r"size \[2, 3\] is not the kernel's spatial sizes \[3, 3\]"),
    ("window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01", r"gives output spatial sizes \[3, 2\]"),
    ("window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01, feature_group_count=2", "feature_group_count"),
])
def test_a_convolution_call_with_unusable_attributes_is_a_located_error(attributes: str, problem: str) -> None:
    conv = FORWARD[0]
    lhs, rhs, out = conv.shapes()
    module, call = _call(_hlo("__cudnn$convForward", conv, [lhs, rhs], out, attributes))
    with pytest.raises(InvalidAttributeError, match=problem) as raised:
        tuple_elements_indexing(call, Direction.OUTPUT_TO_INPUT, 0)
    assert "cudnn.hlo:" in str(raised.value)


def test_a_backward_convolution_with_an_input_dilation_is_unknown_with_its_reason() -> None:
    conv = BACKWARD[0]
    lhs, rhs, out = conv.shapes()
    text = _hlo("__cudnn$convBackwardInput", conv, [out, rhs], lhs).replace("pad=1_1x1_1", "pad=1_1x1_1 lhs_dilate=2x1")
    module, call = _call(text)
    maps = tuple_elements_indexing(call, Direction.OUTPUT_TO_INPUT, 0).maps
    assert all(m.is_undefined and "input dilation" in m.reason for operand in maps for m in operand)


def test_the_per_op_maps_of_a_call_returning_a_tuple_are_per_tuple_element() -> None:
    """As in XLA's indexing, result #k of a call returning one tuple is element k: the
    per-op API gives the maps of the computed array and of the scratch buffer, and a
    located error past the last element."""
    conv = BACKWARD[0]
    lhs, rhs, out = conv.shapes()
    module, call = _call(_hlo("__cudnn$convBackwardInput", conv, [out, rhs], lhs))
    fused = fusion_indexing(module.body.operations[0], 0)
    computed = output_to_input_indexing(call, 0)
    assert [relation(maps) for maps in computed.maps] == [relation(maps) for maps in fused.maps]
    scratch = output_to_input_indexing(call, 1)
    assert all(m.is_known_empty() for maps in scratch.maps for m in maps)  # u8[0] reads nothing
    backward = input_to_output_indexing(call, 1)
    assert relation(backward.maps[0]) == {(k, x) for x, k in relation(computed.maps[1])}
    with pytest.raises(InvalidArgumentError, match="has no tuple element 2") as raised:
        output_to_input_indexing(call, 2)
    assert "cudnn.hlo:" in str(raised.value)
