"""Which upstream passes and pass pipelines the MLIR bindings accept, with their options:
the facts behind :data:`hlo_indexing.passes.upstream_passes.UPSTREAM_PASSES` (what
``hlo-indexing-opt --help`` lists).

The bindings cannot list their pass registry: ``PassManager`` has ``add``, ``parse``,
``run`` and ``enable_*`` only, and MLIR's C API has no function that walks the registry.
What a pass manager does tell, for a given name, is whether it is a registered pass and
on which operation it runs (MLIR refuses an op-specific pass on another op's manager with
"restricted to 'func.func'"); printed back, a pipeline shows every option with its
default (``canonicalize{max-iterations=10 ...}``), and a bad value for an option is
refused with LLVM's message naming its type ("value invalid for integer argument").
The pass descriptions never reach Python: they are left out.

So :func:`scan` takes every word that could be a pass argument from the native libraries
the bindings loaded (NUL-terminated lower-case strings, and their tails, which linkers
merge into longer strings) and asks a scratch ``PassManager`` about each. Reading the
libraries takes ~10 s (jaxlib's is ~350 MB): it runs when the table is regenerated and
in its test, never for ``--help``. Regenerate the table with::

    python -m hlo_indexing.passes.upstream_scan > passes/upstream_passes.py

Linux only (the loaded libraries are read from ``/proc/self/maps``).
"""

from __future__ import annotations

import mmap
import re
import sys
from collections.abc import Iterable
from importlib.metadata import version
from pathlib import Path

from hlo_indexing.dialect_glue import bindings
from hlo_indexing.dialect_glue.bindings import passmanager
from hlo_indexing.dialect_glue.context import current_or_default_context, register_passes
from hlo_indexing.passes.pass_manager import MODULE_ANCHOR, captured_native_stderr
from hlo_indexing.passes.pipeline_text import PipelineElement, parse_options, parse_pipeline
from hlo_indexing.passes.registry import UpstreamOption, UpstreamPass

#: A run of the characters of pass arguments ending a C string.
_WORD = re.compile(rb"[a-z0-9][a-z0-9_-]{1,80}(?=\x00)")
_RESTRICTED = re.compile(r"restricted to '([^']+)' on a PassManager intended to run on")
_NOT_A_PASS = "does not refer to a registered pass"
#: LLVM's refusal of a bad option value -> the option's kind (``cl::parser<T>`` messages).
_KINDS = (
    ("is invalid value for boolean argument", "bool"),
    ("value invalid for integer argument", "int"),
    ("value invalid for uint argument", "uint"),
    ("value invalid for long argument", "long"),
    ("value invalid for ulong argument", "ulong"),
    ("value invalid for llong argument", "llong"),
    ("value invalid for ullong argument", "ullong"),
    ("value invalid for floating point argument", "float"),
    ("Cannot find option named", "enum"),
)
#: The distribution that ships each bindings provider (for the version the table names).
_DISTRIBUTIONS = {"jaxlib": "jaxlib", "mlir": "mlir", "iree": "iree-base-compiler"}
#: The value tried on each option to learn its kind: no number, boolean or enum case.
_PROBE_VALUE = "hlo-indexing-probe"


def native_libraries() -> list[Path]:
    """The shared libraries of the bindings' package that this process has mapped."""
    roots = [Path(p).resolve() for p in sys.modules[bindings.ir.__name__.split(".")[0]].__path__]
    found: set[Path] = set()
    with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
        for line in maps:
            fields = line.split(maxsplit=5)
            if len(fields) == 6 and ".so" in fields[5]:
                path = Path(fields[5].strip()).resolve()
                if any(root in path.parents for root in roots):
                    found.add(path)
    return sorted(found)


def candidate_names(libraries: Iterable[Path]) -> set[str]:
    """Every NUL-terminated word of pass-argument characters in ``libraries`` and each of
    its tails that starts with a letter (``cse`` may be stored as the end of
    ``...-cse``)."""
    names: set[str] = set()
    for library in libraries:
        with open(library, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
            for match in _WORD.finditer(data):
                word = match.group().decode()
                names.update(word[k:] for k in range(len(word) - 1) if word[k].isalpha())
    return names


def _try(text: str) -> tuple[str | None, str]:
    """(None, printed pipeline) when a module ``PassManager`` accepts ``text``, else
    (MLIR's message, ""). What LLVM writes to stderr meanwhile is the caller's to capture."""
    pm = passmanager.PassManager(MODULE_ANCHOR, context=current_or_default_context())
    try:
        pm.add(text)
    except ValueError as exc:
        return str(exc), ""
    return None, str(pm)


def probe(name: str) -> UpstreamPass | None:
    """What the bindings say about ``name``: None when it is no registered pass or
    pipeline; else its anchor (``any``, or the op it is restricted to), whether it is a
    pipeline, and its options with their kinds and defaults."""
    refusal, printed = _try(name)
    if refusal is not None and _NOT_A_PASS in refusal:
        return None
    anchor = "any"
    if refusal is not None:
        restricted = _RESTRICTED.search(refusal)
        if restricted is None:
            return None
        anchor = restricted.group(1)
        refusal, printed = _try(f"{anchor}({name})")
        if refusal is not None:
            return None
    element = _element_named(printed, name)
    if element is None:  # printed as the passes it stands for
        return UpstreamPass(name, anchor, (), pipeline=True)
    if anchor == "any" and _try(f"func.func({name})")[0] is not None:
        anchor = MODULE_ANCHOR  # a pass on modules (refused on functions)
    options = parse_options(element.options or "")
    return UpstreamPass(
        name, anchor, tuple(UpstreamOption(key, _kind(name, anchor, key), value) for key, value in sorted(options.items()))
    )


def _element_named(printed: str, name: str) -> PipelineElement | None:
    """The element ``name`` of the printed pipeline ``builtin.module(name{...})`` or
    ``builtin.module(op(name{...}))``; None when the pipeline holds other passes."""
    elements = parse_pipeline(printed).elements
    while len(elements) == 1 and elements[0].name != name and elements[0].nested is not None:
        elements = elements[0].nested
    return elements[0] if len(elements) == 1 and elements[0].name == name else None


def _kind(name: str, anchor: str, option: str) -> str:
    """The kind of ``option`` of pass ``name``, from LLVM's refusal of a value no number,
    boolean or enum case has (``str`` when accepted, ``value`` for another refusal)."""
    text = f"{name}{{{option}={_PROBE_VALUE}}}"
    with captured_native_stderr() as native:  # LLVM's option parser writes its refusal there
        refusal, _ = _try(text if anchor in ("any", MODULE_ANCHOR) else f"{anchor}({text})")
    if refusal is None:
        return "str"
    return next((kind for message, kind in _KINDS if message in "".join(native)), "value")


def scan() -> list[UpstreamPass]:
    """Every upstream pass and pipeline the bindings accept, sorted by name."""
    register_passes()
    names = sorted(candidate_names(native_libraries()))
    with captured_native_stderr():  # MLIR's refusals of the non-passes: not wanted
        found = [probe(name) for name in names]
    return [entry for entry in found if entry is not None]


def table_source(passes: Iterable[UpstreamPass]) -> str:
    """The text of ``passes/upstream_passes.py`` for ``passes``: plain tuples, read by
    :mod:`hlo_indexing.passes.registry`."""
    bindings_version = f"{bindings.PROVIDER} {version(_DISTRIBUTIONS.get(bindings.PROVIDER, bindings.PROVIDER))}"
    lines = [
        f'"""The upstream MLIR passes and pass pipelines the bindings of {bindings_version} accept:\n'
        "(name, the op it runs on or ``any``, options as (name, kind, default), pipeline or not).\n"
        "Generated by ``python -m hlo_indexing.passes.upstream_scan`` (see\n"
        ":mod:`hlo_indexing.passes.upstream_scan`): do not edit. ``hlo-indexing-opt --help`` lists\n"
        'them (via :mod:`hlo_indexing.passes.registry`); a test checks them against the installed bindings."""',
        "",
        f'BINDINGS = "{bindings_version}"',
        "",
        "PASSES = (",
    ]
    for entry in passes:
        options = tuple((o.name, o.kind, o.default) for o in entry.options)
        lines.append(f"    ({entry.name!r}, {entry.anchor!r}, {options!r}, {entry.pipeline!r}),")
    lines.append(")  # fmt: skip")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(table_source(scan()))
