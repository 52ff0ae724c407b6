"""Issue #30: ``--help`` lists every pass the pipeline accepts, ours and upstream, as
mlir-opt lists them. The upstream table (``passes/upstream_passes.py``) is what the
installed bindings accept, found again by scanning their native libraries; each listed
pass, with each listed option at its listed default, is accepted by the driver's
pipeline, and a pass listed "on func.func" is nested under it."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from hlo_indexing.dialect_glue.bindings import passmanager
from hlo_indexing.dialect_glue.context import make_context
from hlo_indexing.passes import registry, upstream_passes, upstream_scan
from hlo_indexing.passes.pass_manager import MODULE_ANCHOR, add_to

OPT = Path(sys.executable).parent / "hlo-indexing-opt"


def _help() -> str:
    done = subprocess.run([str(OPT), "--help"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _listed(text: str) -> dict[str, list[tuple[str, str]]]:
    """Pass name -> its (option, default) pairs, from the "Passes:" and "Pass Pipelines:"
    sections of ``--help`` (a pass at 4 spaces, its options at 6)."""
    passes: dict[str, list[tuple[str, str]]] = {}
    options: list[tuple[str, str]] = []
    section = text[text.index("  Passes:\n") :]
    for line in section.splitlines():
        option = re.match(r"^ {6}--([\w-]+)=<[^>]*>\s+- .*\(default: (.*)\)$", line)
        name = re.match(r"^ {4}--([\w.-]+)\s+- ", line)
        if option:
            options.append((option.group(1), option.group(2)))
        elif name:
            options = passes[name.group(1)] = []
    return passes


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="the scan reads /proc/self/maps (Linux)")
def test_the_upstream_table_is_what_the_installed_bindings_accept():
    # in a fresh interpreter, as the driver's: importing jax registers more passes (Mosaic's) in this one
    done = subprocess.run(
        [sys.executable, "-m", "hlo_indexing.passes.upstream_scan"], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == Path(upstream_passes.__file__).read_text()


def test_help_lists_ours_and_every_upstream_pass_and_each_is_accepted_with_its_defaults():
    listed = _listed(_help())
    assert set(listed) == set(registry.PASSES) | set(registry.ALIASES) | set(registry.UPSTREAM_PASSES)
    with make_context():
        for name, options in listed.items():
            for option, default in options or [(None, None)]:
                element = name if option is None else f"{name}{{{option}='{default}'}}"
                pm = passmanager.PassManager(MODULE_ANCHOR)
                add_to(pm, element)  # raises for a pass or an option the pipeline does not accept
                anchor = registry.UPSTREAM_PASSES[name].anchor if name in registry.UPSTREAM_PASSES else "any"
                if anchor not in ("any", MODULE_ANCHOR):  # nested under the op it runs on
                    assert str(pm).startswith(f"{MODULE_ANCHOR}({anchor}({name}")


def test_a_name_that_is_no_pass_is_refused_and_the_table_has_the_common_ones():
    assert upstream_scan.probe("hlo-indexing-no-such-pass") is None
    for name in ("canonicalize", "cse", "symbol-dce", "chlo-legalize-to-stablehlo", "stablehlo-legalize-to-hlo"):
        assert name in registry.UPSTREAM_PASSES
    assert registry.UPSTREAM_PASSES["chlo-legalize-to-stablehlo"].anchor == "func.func"
    assert registry.UPSTREAM_PASSES["sdy-propagation-pipeline"].pipeline
