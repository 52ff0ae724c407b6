"""``--help``, ``--version`` and ``--list-passes`` import neither the MLIR bindings nor
numpy, and the registry's declarative pass table equals what the pass classes declare."""

from __future__ import annotations

import doctest
import importlib
import inspect
import pkgutil
import subprocess
import sys
from dataclasses import dataclass, field
from typing import ClassVar

import pytest

import hlo_indexing.passes
from hlo_indexing.passes import registry
from hlo_indexing.passes.base import ModulePass

HEAVY = ("jaxlib", "jax", "numpy")

# Runs the driver in-process on argv, then reports on stderr which heavy packages it loaded.
WRAPPER = (
    "import sys\n"
    "from hlo_indexing.tools.opt import main\n"
    "code = main(sys.argv[1:])\n"
    f"heavy = sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r})\n"
    "print('HEAVY-MODULES', ' '.join(heavy), file=sys.stderr)\n"
    "sys.exit(code)\n"
)


def run_driver(*argv: str) -> tuple[subprocess.CompletedProcess, list[str]]:
    done = subprocess.run([sys.executable, "-c", WRAPPER, *argv], capture_output=True, text=True, timeout=120)
    report = [line for line in done.stderr.splitlines() if line.startswith("HEAVY-MODULES")]
    assert len(report) == 1, done.stderr
    return done, report[0].split()[1:]


@pytest.mark.parametrize(
    "flag, expected",
    [
        ("--help", "Compiler passes to run"),
        ("-h", "USAGE: hlo-indexing-opt"),
        ("--version", "MLIR Python bindings:"),
        ("--list-passes", "--hlo-attach-fused-indexing-maps"),
    ],
)
def test_info_flags_do_not_import_bindings_or_numpy(flag, expected):
    done, heavy = run_driver(flag)
    assert done.returncode == 0, done.stderr
    assert expected in done.stdout
    assert heavy == [], f"{flag} imported {heavy[:5]}"


def test_processing_input_does_import_the_bindings(tmp_path):
    """The check above can fail: the same wrapper sees jaxlib once a module is parsed."""
    source = tmp_path / "in.mlir"
    source.write_text("func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n  return %a : tensor<4xf32>\n}\n")
    done, heavy = run_driver(str(source), "--hlo-print-indexing-maps")
    assert done.returncode == 0, done.stderr
    assert "jaxlib" in heavy and "numpy" in heavy


def test_help_lists_every_pass_with_its_options():
    done, _ = run_driver("--list-passes")
    for entry in registry.PASSES.values():
        assert f"--{entry.name} " in done.stdout
        for option in entry.options:
            assert f"--{option.name}=<" in done.stdout


def _pass_classes() -> dict[str, type[ModulePass]]:
    """Every named ModulePass subclass defined in a module of hlo_indexing.passes."""
    found: dict[str, type[ModulePass]] = {}
    for module_info in pkgutil.iter_modules(hlo_indexing.passes.__path__):
        module = importlib.import_module(f"hlo_indexing.passes.{module_info.name}")
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if issubclass(cls, ModulePass) and cls.name and cls.__module__ == module.__name__:
                assert cls.name not in found, f"two passes named {cls.name}"
                found[cls.name] = cls
    return found


def test_every_pass_class_is_registered_under_its_name():
    classes = _pass_classes()
    assert sorted(classes) == registry.pass_names()
    for name, cls in classes.items():
        assert registry.lookup(name) is cls


@pytest.mark.parametrize("name", registry.pass_names())
def test_table_entry_equals_what_the_class_declares(name):
    assert registry.PASSES[name] == registry.describe(registry.lookup(name))


@dataclass(frozen=True)
class Sample(ModulePass):
    name: ClassVar[str] = "sample"
    description: ClassVar[str] = "A sample"

    max_things: int = field(default=3, metadata={"help": "how many"})
    mode: str = field(default="a", metadata={"help": "the mode", "choices": ["a", "b"]})


def test_describe_reads_kinds_defaults_help_and_choices():
    described = registry.describe(Sample)
    assert (described.name, described.description, described.target) == ("sample", "A sample", f"{__name__}:Sample")
    assert described.options == (
        registry.OptionInfo("max-things", "int", 3, "how many"),
        registry.OptionInfo("mode", "str", "a", "the mode", ("a", "b")),
    )


def test_unknown_names():
    assert registry.info("no-such-pass") is None and registry.lookup("no-such-pass") is None


def test_registry_docstring_example():
    outcome = doctest.testmod(registry)
    assert outcome.attempted >= 2 and outcome.failed == 0
