"""Inputs of the fuzz campaign: five kinds, each a mutant of the project's own corpus or
a random structure, drawn from one ``random.Random`` so that a seed replays a campaign.

A case is a JSON-able dict ``{"kind": K, ...}``:

* ``mlir`` / ``hlo``: ``{"text": ...}``, a mutated chunk of ``lit_tests/**/*.mlir`` (split
  at ``// -----``) or of ``lit_tests/hlo/*.hlo`` and ``examples/*.hlo``;
* ``map``: ``{"text": ...}``, indexing-map text (random maps, or mutants of the maps
  written in the tests);
* ``layout``: ``{"text": ...}``, a shape with a layout (``f32[3,5]{1,0:T(2,2)}``);
* ``cli``: ``{"tool": "opt" | "layout", "argv": [...], "input": text, "suffix": ".mlir"}``;
  ``{input}`` and ``{out}`` in ``argv`` stand for the input file and an output path.

Standard library only (the campaign parent needs no third-party package).
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass
from pathlib import Path

KINDS = ("mlir", "hlo", "map", "layout", "cli")

#: Numbers that break assumptions: zero, negative, int32/int64 edges, huge.
INTERESTING = (
    0, 1, -1, 2, 3, 7, 16, 127, 128, 255, 1024, 65536, 2147483647, 2147483648, -2147483648,
    4294967296, 9223372036854775807, 9223372036854775808, -9223372036854775808, 10**30,
)
ELEMENT_TYPES = ("f32", "f16", "bf16", "i1", "i8", "i32", "i64", "ui8", "complex<f32>", "complex<f64>", "f64", "index")
HLO_ELEMENT_TYPES = ("f32", "f16", "bf16", "pred", "s8", "s32", "s64", "u8", "c64", "c128", "token", "f64")

_NUMBER = re.compile(r"(?<![\w.])-?\d+(?![\w.])")
_TOKEN = re.compile(r"\s+|[A-Za-z_%@#!^][\w.$-]*|-?\d+|\S")
_MAP_TEXT = re.compile(r"\((?:[ds]\d+(?:, )?)*\)(?:\[[^\]]*\])?(?:\{[^}]*\})? -> \([^\n\"]*?domain: [^\n\"]*")


@dataclass
class Corpus:
    """Seed texts read from the repository."""

    mlir: list[str]
    hlo: list[str]
    maps: list[str]
    layouts: list[str]
    op_names: list[str]


def _strip_test_lines(text: str) -> str:
    keep = [line for line in text.split("\n") if not re.match(r"\s*(//|#)\s*(RUN|CHECK|REQUIRES|UNSUPPORTED|XFAIL)", line)]
    return "\n".join(keep)


def load_corpus(root: Path) -> Corpus:
    """Chunks of the lit tests and examples, map texts and layouts found in the tests, and,
    when ``../shared/conformance`` is beside the repository, XLA's indexing test modules
    (HLO) and the tiled-layout vectors."""
    mlir: list[str] = []
    for path in sorted((root / "lit_tests").rglob("*.mlir")) + sorted((root / "examples").rglob("*.mlir")):
        for chunk in path.read_text(encoding="utf-8", errors="replace").split("// -----"):
            chunk = _strip_test_lines(chunk).strip()
            if "func.func" in chunk or "module" in chunk:
                mlir.append(chunk)
    hlo = [
        _strip_test_lines(p.read_text(encoding="utf-8", errors="replace"))
        for p in sorted((root / "lit_tests" / "hlo").glob("*.hlo")) + sorted((root / "examples").glob("*.hlo"))
    ]
    texts = []
    for path in sorted((root / "lit_tests").rglob("*")) + sorted((root / "python_tests").glob("*.py")):
        if path.is_file() and path.suffix in (".mlir", ".test", ".py", ".hlo"):
            texts.append(path.read_text(encoding="utf-8", errors="replace"))
    maps = sorted({m.group(0).rstrip("\"' ,)") for t in texts for m in _MAP_TEXT.finditer(t) if len(m.group(0)) < 400})
    layouts = sorted(
        {m.group(0) for t in texts for m in re.finditer(r"[a-z]\w*\[[\d,]*\]\{[^}\"'\s]*\}", t)}
        | {"f32[3,5]{1,0:T(2,2)}", "f32[8,128]{1,0:T(8,128)(2,1)}", "bf16[16,256]{0,1:T(8,128)(2,1)}", "s8[4,4,4]{2,1,0:T(2,*,2)}"}
    )
    conformance = root.parent / "shared" / "conformance"
    cases = conformance / "xla_indexing" / "cases.jsonl"
    if cases.is_file():
        records = [json.loads(line) for line in cases.read_text().splitlines() if line.strip()]
        hlo += sorted({r["hlo"] for r in records if r.get("hlo")})
    vectors = conformance / "tiled_layout" / "vectors.jsonl"
    if vectors.is_file():
        for line in vectors.read_text().splitlines():
            if line.strip():
                v = json.loads(line)
                layouts.append(f"{v['dtype']}[{','.join(map(str, v['shape']))}]{v['layout']}")
    ops = sorted({m.group(0) for t in mlir for m in re.finditer(r"\b(?:stablehlo|mhlo|chlo)\.[a-z_]+", t)})
    return Corpus(mlir, hlo, maps, sorted(set(layouts)), ops)


# ----------------------------------------------------------------------------- mutators


def _replace_number(rng: random.Random, text: str) -> str:
    matches = list(_NUMBER.finditer(text))
    if not matches:
        return text
    m = rng.choice(matches)
    value = rng.choice(INTERESTING) if rng.random() < 0.7 else int(m.group(0)) + rng.choice((-2, -1, 1, 2))
    return text[: m.start()] + str(value) + text[m.end() :]


def _lines_op(rng: random.Random, text: str, other: str) -> str:
    lines = text.split("\n")
    if not lines:
        return text
    i = rng.randrange(len(lines))
    choice = rng.randrange(4)
    if choice == 0:
        del lines[i]
    elif choice == 1:
        lines.insert(i, lines[i])
    elif choice == 2:
        other_lines = other.split("\n")
        lines.insert(i, rng.choice(other_lines))
    else:
        j = rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
    return "\n".join(lines)


def _tokens_op(rng: random.Random, text: str, other: str) -> str:
    tokens = _TOKEN.findall(text)
    if not tokens:
        return text
    i = rng.randrange(len(tokens))
    choice = rng.randrange(4)
    if choice == 0:
        del tokens[i]
    elif choice == 1:
        tokens.insert(i, tokens[i])
    elif choice == 2:
        other_tokens = _TOKEN.findall(other) or ["("]
        tokens[i] = rng.choice(other_tokens)
    else:
        tokens.insert(i, rng.choice(("(", ")", "[", "]", "{", "}", ",", ":", "<", ">", "x", "0", "-1", "?")))
    return "".join(tokens)


def _truncate(rng: random.Random, text: str) -> str:
    return text[: rng.randrange(len(text) + 1)] if text else text


def _element_type(rng: random.Random, text: str, types: tuple[str, ...]) -> str:
    present = [t for t in types if re.search(rf"\b{re.escape(t)}\b", text)]
    if not present:
        return text
    old = rng.choice(present)
    new = rng.choice(types)
    if rng.random() < 0.5:
        return re.sub(rf"\b{re.escape(old)}\b", new, text)
    matches = list(re.finditer(rf"\b{re.escape(old)}\b", text))
    m = rng.choice(matches)
    return text[: m.start()] + new + text[m.end() :]


def _zero_dim(rng: random.Random, text: str) -> str:
    matches = list(re.finditer(r"(?<=[<x\[,])\d+(?=x|\])", text))
    if not matches:
        return text
    m = rng.choice(matches)
    return text[: m.start()] + rng.choice(("0", "1", "0", "2147483648")) + text[m.end() :]


def _empty_list(rng: random.Random, text: str) -> str:
    matches = list(re.finditer(r"(?<=[\[:<{(])[^\[\]<>{}()\n]*(?=[\]>})])", text))
    if not matches:
        return text
    m = rng.choice(matches)
    return text[: m.start()] + rng.choice(("", "0", "1, 0", "-1", "2147483648", "0, 0")) + text[m.end() :]


def _type_or_location(rng: random.Random, text: str) -> str:
    """A tensor type made a token, dynamic or unranked; or an op's location made unknown."""
    matches = list(re.finditer(r"tensor<[^<>]*(?:<[^<>]*>)?[^<>]*>", text))
    if rng.random() < 0.3 or not matches:
        lines = text.split("\n")
        i = rng.randrange(len(lines))
        if "=" in lines[i] and ":" in lines[i]:
            lines[i] = lines[i] + " loc(unknown)"
        return "\n".join(lines)
    m = rng.choice(matches)
    replacement = rng.choice(("!stablehlo.token", "tensor<?xf32>", "tensor<*xf32>", "tensor<0xf32>", "tuple<>"))
    return text[: m.start()] + replacement + text[m.end() :]


def _consistent_shape(rng: random.Random, text: str) -> str:
    """One tensor type (``tensor<4x8xf32>`` or HLO's ``f32[4,8]``) changed everywhere it
    is written, so that the module still verifies more often than with a single change:
    a dimension becomes 0, 1, larger, or the element type complex."""
    types = sorted(set(re.findall(r"tensor<(?:\d+x)+[a-z]\w*>", text) + re.findall(r"\b[a-z]\w*\[\d+(?:,\s*\d+)*\]", text)))
    if not types:
        return text
    old = rng.choice(types)
    numbers = list(re.finditer(r"\d+(?=x)" if old.startswith("tensor<") else r"(?<=[\[,\s])\d+(?=[,\]])", old))
    choice = rng.random()
    if choice < 0.2 and "tensor<" in old:
        new = re.sub(r"x[a-z]\w*>$", "xcomplex<f32>>", old)
    elif choice < 0.3 and "[" in old:
        new = "c64" + old[old.index("["):]
    else:
        m = rng.choice(numbers)
        value = rng.choice((0, 1, 2, 3, 17, 1024, 2147483648))
        new = old[: m.start()] + str(value) + old[m.end() :]
    return re.sub(rf"(?<![\w<]){re.escape(old)}", new, text)


def _op_name(rng: random.Random, text: str, names: list[str]) -> str:
    present = list(re.finditer(r"\b(?:stablehlo|mhlo|chlo)\.[a-z_]+", text))
    if not present or not names:
        return text
    m = rng.choice(present)
    return text[: m.start()] + rng.choice(names) + text[m.end() :]


def mutate(rng: random.Random, text: str, others: list[str], types: tuple[str, ...], names: list[str]) -> str:
    """One to three random mutations of ``text``."""
    for _ in range(rng.choice((1, 1, 2, 3))):
        other = rng.choice(others) if others else text
        op = rng.randrange(13)
        if op >= 11:
            text = _consistent_shape(rng, text)
        elif op == 10:
            text = _type_or_location(rng, text)
        elif op <= 2:
            text = _replace_number(rng, text)
        elif op == 3:
            text = _lines_op(rng, text, other)
        elif op == 4:
            text = _tokens_op(rng, text, other)
        elif op == 5:
            text = _element_type(rng, text, types)
        elif op == 6:
            text = _zero_dim(rng, text)
        elif op == 7:
            text = _empty_list(rng, text)
        elif op == 8:
            text = _op_name(rng, text, names)
        else:
            text = _truncate(rng, text) if rng.random() < 0.2 else _tokens_op(rng, text, other)
    return text


# ----------------------------------------------------------------------------- maps


def random_expr(rng: random.Random, dims: int, symbols: int, depth: int = 0) -> str:
    """An affine (or semi-affine) expression in XLA's text form."""
    leaves = [f"d{i}" for i in range(dims)] + [f"s{i}" for i in range(symbols)]
    if depth > 3 or rng.random() < 0.3 or not leaves:
        if leaves and rng.random() < 0.75:
            return rng.choice(leaves)
        return str(rng.choice(INTERESTING) if rng.random() < 0.15 else rng.randint(-4, 20))
    op = rng.randrange(6)
    a = random_expr(rng, dims, symbols, depth + 1)
    k = rng.choice(INTERESTING) if rng.random() < 0.1 else rng.randint(-3, 17)
    if op == 0:
        return f"{a} + {random_expr(rng, dims, symbols, depth + 1)}"
    if op == 1:
        return f"({a}) * {k}"
    if op == 2:
        return f"({a}) floordiv {k}"
    if op == 3:
        return f"({a}) mod {k}"
    if op == 4:
        return f"({a}) ceildiv {k}"
    return f"{a} - {random_expr(rng, dims, symbols, depth + 1)}"


def random_map(rng: random.Random) -> str:
    dims, symbols = rng.randint(0, 3), rng.randint(0, 2)
    results = [random_expr(rng, dims, symbols) for _ in range(rng.randint(0, 3))]
    head = "(" + ", ".join(f"d{i}" for i in range(dims)) + ")"
    if symbols:
        head += "[" + ", ".join(f"s{i}" for i in range(symbols)) + "]"

    def bound() -> str:
        lo = rng.choice((0, 0, 0, 1, -3)) if rng.random() < 0.9 else rng.choice(INTERESTING)
        hi = lo + (rng.randint(0, 12) if rng.random() < 0.9 else rng.choice(INTERESTING))
        return f"[{lo}, {hi}]"

    domain = [f"d{i} in {bound()}" for i in range(dims)] + [f"s{i} in {bound()}" for i in range(symbols)]
    if results and rng.random() < 0.3:
        domain.append(f"{random_expr(rng, dims, symbols)} in {bound()}")
    text = f"{head} -> ({', '.join(results)})"
    return text + (", domain: " + ", ".join(domain) if domain or rng.random() < 0.5 else "")


def map_case(rng: random.Random, corpus: Corpus) -> str:
    r = rng.random()
    if r < 0.45:
        return random_map(rng)
    if r < 0.55:
        depth = rng.choice((50, 200, 400, 1000))
        if rng.random() < 0.5:
            return "(d0) -> (" + "(" * depth + "d0" + ")" * depth + "), domain: d0 in [0, 9]"
        return "(d0) -> (" + " + ".join(["d0"] * depth) + "), domain: d0 in [0, 9]"
    base = rng.choice(corpus.maps) if corpus.maps else random_map(rng)
    return mutate(rng, base, corpus.maps, (), [])


# ----------------------------------------------------------------------------- layouts


def random_layout(rng: random.Random) -> str:
    rank = rng.randint(0, 4)
    dims = [rng.choice((1, 2, 3, 4, 5, 8, 0, 16)) if rng.random() < 0.95 else rng.choice(INTERESTING) for _ in range(rank)]
    order = list(range(rank))
    rng.shuffle(order)
    text = f"{rng.choice(HLO_ELEMENT_TYPES[:-1])}[{','.join(map(str, dims))}]" + "{" + ",".join(map(str, order))
    tiles = []
    for _ in range(rng.choice((0, 1, 1, 2, 3))):
        sizes = [
            str(rng.choice((1, 2, 4, 8, 128)) if rng.random() < 0.9 else rng.choice(INTERESTING + ("*",)))
            for _ in range(rng.randint(1, 3))
        ]
        tiles.append("T(" + ",".join(sizes) + ")")
    extras = "".join(tiles)
    if rng.random() < 0.2:
        extras += rng.choice(("E(4)", "S(1)", "L(2)", "P(3)", "#(4)", "*(2)"))
    if extras:
        text += ":" + extras
    return text + "}"


def layout_case(rng: random.Random, corpus: Corpus) -> str:
    if rng.random() < 0.6:
        return random_layout(rng)
    return mutate(rng, rng.choice(corpus.layouts), corpus.layouts, HLO_ELEMENT_TYPES, [])


# ----------------------------------------------------------------------------- CLI

OPT_FLAGS = (
    "--hlo-attach-indexing-maps", "--hlo-attach-indexing-maps=direction=input-to-output", "--hlo-attach-fused-indexing-maps",
    "--hlo-print-fused-indexing-maps", "--hlo-print-fused-indexing-maps=analyses=true", "--hlo-print-indexing-maps",
    "--hlo-simplify-indexing-maps", "--hlo-simplify-indexing-maps=report=true", "--hlo-lower-tiled-layouts",
    "--hlo-lower-tiled-layouts=rewrite-memrefs=true", "--canonicalize", "--cse", "-split-input-file",
    "-verify-diagnostics", "--mlir-print-local-scope", "--mlir-print-debuginfo", "--mlir-print-op-generic",
    "--mlir-print-ir-after-all", "--mlir-timing", "--allow-unregistered-dialect", "--dump-pass-pipeline",
    "--hlo-attach-fused-indexing-maps=max-maps=0", "--hlo-attach-fused-indexing-maps=max-maps=-1", "--hlo-print-fused-indexing-maps=max-points=1",
    "--input-format=hlo", "--input-format=mlir", "--no-such-flag", "-j=2",
)
PIPELINES = (
    "builtin.module(hlo-print-fused-indexing-maps, hlo-attach-fused-indexing-maps)",
    "builtin.module(canonicalize, hlo-attach-indexing-maps{direction=input-to-output}, cse)",
    "builtin.module(func.func(canonicalize), hlo-simplify-indexing-maps{report=true})",
    "builtin.module(hlo-print-fused-indexing-maps{max-maps=3 analyses=true max-points=16})",
    "builtin.module(hlo-lower-tiled-layouts, hlo-print-indexing-maps)",
)


def cli_case(rng: random.Random, corpus: Corpus) -> dict:
    if rng.random() < 0.2:
        argv = [layout_case(rng, corpus)]
        if rng.random() < 0.3:
            argv.append(rng.choice(("--format=svg", "--format=text", "--format=png")))
        if rng.random() < 0.3:
            argv += ["-o", "{out}"]
        return {"kind": "cli", "tool": "layout", "argv": argv, "input": "", "suffix": ".txt"}
    hlo = rng.random() < 0.25
    if hlo:
        text = mutate(rng, rng.choice(corpus.hlo), corpus.hlo, HLO_ELEMENT_TYPES, []) if rng.random() < 0.7 else rng.choice(corpus.hlo)
    else:
        base = rng.choice(corpus.mlir)
        text = mutate(rng, base, corpus.mlir, ELEMENT_TYPES, corpus.op_names) if rng.random() < 0.7 else base
    argv = ["{input}"]
    if rng.random() < 0.3:
        pipeline = rng.choice(PIPELINES)
        if rng.random() < 0.4:
            pipeline = mutate(rng, pipeline, list(PIPELINES), (), [])
        argv.append(f"--pass-pipeline={pipeline}")
    else:
        argv += rng.sample(OPT_FLAGS, rng.randint(1, 3))
    if rng.random() < 0.5:
        argv += ["-o", "{out}"]
    return {"kind": "cli", "tool": "opt", "argv": argv, "input": text, "suffix": ".hlo" if hlo else ".mlir"}


# ----------------------------------------------------------------------------- driver


def generate(rng: random.Random, corpus: Corpus, kind: str) -> dict:
    """One case of ``kind``."""
    if kind == "mlir":
        base = rng.choice(corpus.mlir)
        return {"kind": kind, "text": mutate(rng, base, corpus.mlir, ELEMENT_TYPES, corpus.op_names)}
    if kind == "hlo":
        base = rng.choice(corpus.hlo)
        return {"kind": kind, "text": mutate(rng, base, corpus.hlo, HLO_ELEMENT_TYPES, [])}
    if kind == "map":
        return {"kind": kind, "text": map_case(rng, corpus)}
    if kind == "layout":
        return {"kind": kind, "text": layout_case(rng, corpus)}
    return cli_case(rng, corpus)
