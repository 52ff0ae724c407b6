"""The tiling passes on compiled programs as a user runs them (issue #28, points 2, 3, 4
and 8): results as each computation is done, per-fusion limits as options (a located
warning, the other fusions still tiled), the program limit named when it removed a
tiling and a ranking whose memory does not grow with it, ``func=`` with the HLO
instruction name, tile sizes per fusion, and the Python API's argument checks."""

from __future__ import annotations

import json
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

from hlo_indexing import parse_module
from hlo_indexing.dialect_glue.call_like import computations
from hlo_indexing.errors import InvalidArgumentError
from hlo_indexing.passes import tilings
from hlo_indexing.passes.base import Diagnostics
from hlo_indexing.symbolic_tiling import tile_counts
from hlo_indexing.symbolic_tiling.footprint import declared_parameter_layouts
from hlo_indexing.symbolic_tiling.ranking import rank_tilings
from hlo_indexing.symbolic_tiling.tiled_fusion import TiledFusion, analyze_fusion

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "jax_fusions_cpu.hlo"
OPT = Path(sys.executable).parent / "hlo-indexing-opt"


def _run(*arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(OPT), *arguments], capture_output=True, text=True, timeout=300)


def test_each_computation_is_reported_when_it_is_done(monkeypatch: pytest.MonkeyPatch) -> None:
    events: list[str] = []
    tile = tilings.computation_tilings

    def logged(label, *args, **kwargs):
        events.append(f"tiling {label}")
        return tile(label, *args, **kwargs)

    monkeypatch.setattr(tilings, "computation_tilings", logged)
    module = parse_module(EXAMPLE)
    diagnostics = Diagnostics(listener=lambda d: events.append(f"{d.severity} {d.message.split(' ')[0].rstrip(':')}"))
    tilings.PrintTilings(max=1).run(module.operation, diagnostics)
    labels = [e.removeprefix("tiling ") for e in events if e.startswith("tiling ")]
    assert len(labels) == 5
    for first, second in zip(labels, labels[1:]):  # first's remark before second is tiled
        assert events.index(f"remark {first}") < events.index(f"tiling {second}")


def test_jsonl_is_one_line_per_computation() -> None:
    result = _run(str(EXAMPLE), "--hlo-print-tilings=format=jsonl max=1", "-o", "/dev/null")
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line)["report"] for line in result.stdout.splitlines()]
    assert [line["name"] for line in lines] == [label for label, op in computations(parse_module(EXAMPLE).operation)
                                               if op.name == "mhlo.fusion"]
    assert all(line["location"].startswith(f"{EXAMPLE}:") for line in lines)
    assert lines[0]["tilings"][0]["rank"] == 1


@pytest.mark.parametrize(
    ("option", "named"),
    [("fusion-seconds=0.000001", "option fusion-seconds"), ("max-nodes=1", "option max-nodes")],
)
def test_a_per_fusion_limit_is_a_located_warning_and_the_run_succeeds(option: str, named: str) -> None:
    result = _run(str(EXAMPLE), f"--hlo-print-tilings={option}", "-o", "/dev/null")
    assert result.returncode == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if ": warning: " in line]
    assert len(warnings) == 5
    assert all(line.startswith(f"{EXAMPLE}:") and ": cannot tile: " in line and named in line for line in warnings)
    # A large limit tiles them all.
    relaxed = _run(str(EXAMPLE), f"--hlo-print-tilings={option.split('=')[0]}=1000", "-o", "/dev/null")
    assert relaxed.returncode == 0 and "warning" not in relaxed.stderr


def test_func_takes_the_instruction_name_the_remarks_print() -> None:
    result = _run(str(EXAMPLE), "--hlo-print-tilings=func=ynn_fusion.2 max=1", "-o", "/dev/null")
    assert result.returncode == 0, result.stderr
    assert result.stderr.count("remark: ynn_fusion.2 tiling #1") == 1
    assert "ynn_fusion.1" not in result.stderr and "ynn_fusion " not in result.stderr
    missing = _run(str(EXAMPLE), "--hlo-print-tilings=func=ynn_fusion.7", "-o", "/dev/null")
    assert missing.returncode == 1 and "no function or fusion 'ynn_fusion.7'" in missing.stderr


def test_tile_sizes_per_fusion_attach_only_there() -> None:
    result = _run(str(EXAMPLE), "--hlo-attach-tiles=tile-sizes=ynn_fusion.2:8,128;ynn_fusion:16,64,128",
                  "--mlir-print-local-scope")
    assert result.returncode == 0, result.stderr
    tilings_attached = [line for line in result.stdout.splitlines() if "hlo_indexing.tiling = " in line]
    assert len(tilings_attached) == 2
    assert any("tile_sizes = array<i64: 8, 128>" in line for line in tilings_attached)
    assert any("tile_sizes = array<i64: 16, 64, 128>" in line for line in tilings_attached)
    one = _run(str(EXAMPLE), "--hlo-attach-tiles=tile-sizes=8,128 func=ynn_fusion.2", "-o", "/dev/null")
    assert one.returncode == 0, one.stderr


def _layer_norm_hlo() -> str:
    jax = pytest.importorskip("jax")  # test dependency (pyproject's test extra)
    jnp = jax.numpy

    def layer_norm(x, scale, bias):
        x32 = x.astype(jnp.float32)
        mean = x32.mean(-1, keepdims=True)
        var = ((x32 - mean) ** 2).mean(-1, keepdims=True)
        return ((x32 - mean) * jax.lax.rsqrt(var + 1e-5) * scale + bias).astype(jnp.bfloat16)

    shapes = [jax.ShapeDtypeStruct((262144, 4096), jnp.bfloat16), jax.ShapeDtypeStruct((4096,), jnp.float32),
              jax.ShapeDtypeStruct((4096,), jnp.float32)]
    return jax.jit(layer_norm).lower(*shapes).compile().as_text()


def test_max_programs_is_named_when_it_removed_the_tilings(tmp_path: Path) -> None:
    # A LayerNorm over bf16[262144,4096] (the issue's): two rows per tile need 131072
    # programs, above the default limit, and nothing smaller fits the budget.
    source = tmp_path / "layer_norm.hlo"
    source.write_text(_layer_norm_hlo())
    capped = _run(str(source), "--hlo-print-tilings=max=1", "-o", "/dev/null")
    assert capped.returncode == 0, capped.stderr
    assert "no valid tiling fits the budget of 49152 bytes among those with at most 65536 programs (max-programs)" in capped.stderr
    raised = _run(str(source), "--hlo-print-tilings=max=1 max-programs=1048576", "-o", "/dev/null")
    assert raised.returncode == 0, raised.stderr
    assert "tiling #1: tile sizes [2, " in raised.stderr


def test_ranking_memory_does_not_grow_with_the_program_limit() -> None:
    module = parse_module(_layer_norm_hlo(), input_format="hlo")
    (op,) = [op for _, op in computations(module.operation) if op.name == "mhlo.fusion"]
    fusion = analyze_fusion(op)
    assert isinstance(fusion, TiledFusion)
    layouts, output_layouts = declared_parameter_layouts(op)
    peaks = []
    for max_programs in (1 << 16, 1 << 40):
        tracemalloc.start()
        ranking = rank_tilings(fusion, 48 * 1024, layouts=layouts, output_layouts=output_layouts, max_programs=max_programs)
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    assert ranking.skipped == 0 and ranking.tilings[0].tile_sizes[0] == 2
    # 2**40 programs admits every candidate (one of 268 million programs): the tables
    # stay per dimension (the reduction's rows hold the direct tile), under 64 MiB.
    assert max(peaks) < 64 << 20, peaks


def test_tile_indices_in_small_batches_rank_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    module = parse_module(EXAMPLE)
    rankings = {}
    for batch in (tile_counts.MAX_TILE_INDICES_PER_BATCH, 7):
        monkeypatch.setattr(tile_counts, "MAX_TILE_INDICES_PER_BATCH", batch)
        figures = []
        for _, op in computations(module.operation):
            if op.name != "mhlo.fusion":
                continue
            fusion = analyze_fusion(op)
            assert isinstance(fusion, TiledFusion)
            ranking = rank_tilings(fusion, 48 * 1024)
            figures.append([(f.tile_sizes, f.bytes_per_tile, f.bytes_moved) for f in ranking.tilings])
        rankings[batch] = figures
    assert rankings[7] == rankings[tile_counts.MAX_TILE_INDICES_PER_BATCH]


def test_module_tilings_accepts_what_users_pass_and_refuses_the_rest() -> None:
    text = EXAMPLE.read_text()
    by_path = tilings.module_tilings(EXAMPLE, "48KiB", 1, function="ynn_fusion.2")
    assert [c["name"] for c in by_path["computations"]] == ["ynn_fusion.2"]
    assert by_path["budget_bytes"] == 48 * 1024
    assert tilings.module_tilings(str(EXAMPLE), 49152, 1, function="ynn_fusion.2") == by_path
    assert tilings.module_tilings(text, "48KiB", 1, function="ynn_fusion.2")["computations"][0]["tilings"] == \
        by_path["computations"][0]["tilings"]
    module = parse_module(EXAMPLE)
    assert tilings.module_tilings(module, 49152, 1, function="ynn_fusion.2") == by_path
    for bad in [dict(budget_bytes="48 parsecs"), dict(budget_bytes=1.5), dict(budget_bytes=-1), dict(max_tilings="5"),
                dict(function=3), dict(max_programs=0), dict(fusion_seconds="fast")]:
        with pytest.raises(InvalidArgumentError):
            tilings.module_tilings(module, **bad)
    with pytest.raises(InvalidArgumentError):
        tilings.module_tilings(42)
    with pytest.raises(InvalidArgumentError, match="no function or fusion 'nothing'"):
        tilings.module_tilings(module, function="nothing")


def test_a_while_body_is_reported_once_with_where_it_is_used(tmp_path: Path) -> None:
    jax = pytest.importorskip("jax")  # test dependency (pyproject's test extra)
    jnp = jax.numpy

    def rnn(h0, xs, w):
        return jax.lax.scan(lambda h, x: (jnp.tanh(h @ w + x),) * 2, h0, xs)[1]

    shapes = [jax.ShapeDtypeStruct(s, jnp.float32) for s in ((4, 8), (6, 4, 8), (8, 8))]
    source = tmp_path / "rnn.hlo"
    source.write_text(jax.jit(rnn).lower(*shapes).compile().as_text())
    result = _run(str(source), "--hlo-print-tilings=format=jsonl max=1", "-o", "/dev/null")
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line)["report"] for line in result.stdout.splitlines()]
    names = [line["name"] for line in lines]
    assert len(names) == len(set(names))  # each fusion once (the body was also inlined in the loop)
    in_body = [line for line in lines if line["used_in"]]
    assert in_body and all(line["used_in"] == ["stablehlo.while in @main"] for line in in_body)
    text = _run(str(source), "--hlo-print-tilings=max=1", "-o", "/dev/null").stderr
    assert text.count("tiling #1") + text.count("cannot tile") == len(names)
    assert "also used by stablehlo.while in @main" in text
