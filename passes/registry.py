"""Name -> pass, with each pass's description and options, without importing the passes.

The pass modules import the MLIR bindings (jaxlib, numpy: ~0.2 s), so ``--help`` and
``--list-passes`` read the declarative table :data:`PASSES` instead, and :func:`lookup`
imports a pass's module only when the pass is used. The table is derived data: each
entry must equal :func:`describe` of its class (name, description, module, options with
their kinds, defaults, help and choices); ``python_tests/tools/test_driver_help.py`` checks it.

Example::

    >>> info("hlo-simplify-indexing-maps").options[0]
    OptionInfo(name='report', kind='bool', default=False, help='emit a remark for each map that was simplified', choices=None, minimum=None, maximum=None)
    >>> lookup("hlo-simplify-indexing-maps").__name__   # imports the pass module
    'SimplifyIndexingMaps'
"""

from __future__ import annotations

import difflib
import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from hlo_indexing.direction import Direction
from hlo_indexing.limits import FUSION_SECONDS, MAX_ENUMERATION_POINTS, MAX_PROGRAMS, MAX_TILED_NODES
from hlo_indexing.passes import upstream_passes

if TYPE_CHECKING:  # base is bindings-free, but the registry needs no more than its type
    from hlo_indexing.passes.base import ModulePass

_PACKAGE = "hlo_indexing.passes"


@dataclass(frozen=True)
class OptionInfo:
    """One pass option: ``name`` as spelled in pipelines (dashes), ``kind`` the field's
    type name (``bool``, ``int``, ``str``), its default, help text, allowed values and,
    for an ``int``, its smallest and largest valid values."""

    name: str
    kind: str
    default: bool | int | str
    help: str
    choices: tuple[str, ...] | None = None
    minimum: int | None = None
    maximum: int | None = None


@dataclass(frozen=True)
class PassInfo:
    """A registered pass: pipeline name, one-line description, ``module:ClassName``
    (module relative to ``hlo_indexing.passes``) and options in field order."""

    name: str
    description: str
    target: str
    options: tuple[OptionInfo, ...] = ()


_DIRECTION = OptionInfo(
    "direction", "str", Direction.OUTPUT_TO_INPUT, "output-to-input or input-to-output", (Direction.OUTPUT_TO_INPUT, Direction.INPUT_TO_OUTPUT)
)
_SIMPLIFY = OptionInfo("simplify", "bool", True, "simplify the maps")
_PHYSICAL = OptionInfo(
    "physical", "str", "none", "map physical indices through the layouts: none, coordinates or offset", ("none", "coordinates", "offset")
)
_FUSED_MAPS_OPTIONS = (
    OptionInfo("max-maps", "int", 16, "cap on distinct maps per value", minimum=1),
    OptionInfo("analyses", "bool", False, "also compute operand utilization and coalescing"),
    OptionInfo("max-points", "int", 1 << 20, "enumeration limit of the analyses", minimum=0, maximum=MAX_ENUMERATION_POINTS),
)
#: The option every pass has (hlo_indexing.passes.selection).
_FUNC = OptionInfo("func", "str", "", "only this function or HLO instruction (ynn_fusion.6) and what is nested in it; empty: all")
_FORMAT = OptionInfo("format", "str", "text", "text (remarks) or json (one JSON document per module)", ("text", "json"))
#: The help of the tiling passes' allow-pad (hlo_indexing.passes.tilings).
_ALLOW_PAD_HELP = "also tile pads outside gemm fusions (XLA tiles them only in gemm fusions)"

#: pass name -> its description (checked against the pass classes by a test)
PASSES: dict[str, PassInfo] = {
    info.name: info
    for info in (
        PassInfo(
            "hlo-lower-tiled-layouts",
            "Attach the affine maps of XLA tiled layouts (hlo_indexing.layout, entry layouts)",
            "lower_tiled_layouts:LowerTiledLayouts",
            (OptionInfo("rewrite-memrefs", "bool", False, "give laid-out memref function arguments the tiled layout map"), _FUNC),
        ),
        PassInfo(
            "hlo-attach-indexing-maps",
            "Attach each HLO op's per-op indexing maps as hlo_indexing.* attributes",
            "attach_indexing_maps:AttachIndexingMaps",
            (_DIRECTION, _SIMPLIFY, _FUNC, _PHYSICAL),
        ),
        PassInfo(
            "hlo-print-indexing-maps",
            "Emit a remark with each HLO op's per-op indexing maps (XLA text)",
            "print_indexing_maps:PrintIndexingMaps",
            (_DIRECTION, _SIMPLIFY, _FUNC, _PHYSICAL, _FORMAT),
        ),
        PassInfo(
            "hlo-simplify-indexing-maps",
            "Simplify every indexing-map attribute (hlo_indexing.*) in the module",
            "simplify_maps:SimplifyIndexingMaps",
            (OptionInfo("report", "bool", False, "emit a remark for each map that was simplified"), _FUNC),
        ),
        PassInfo(
            "hlo-attach-fused-indexing-maps",
            "Attach result->argument fused indexing maps to functions and mhlo.fusion ops",
            "fusion_maps:AttachFusedIndexingMaps",
            _FUSED_MAPS_OPTIONS + (_FUNC,),
        ),
        PassInfo(
            "hlo-print-fused-indexing-maps",
            "Print fused result->argument indexing maps as remarks",
            "fusion_maps:PrintFusedIndexingMaps",
            _FUSED_MAPS_OPTIONS + (_FUNC, _FORMAT, _PHYSICAL),
        ),
        PassInfo(
            "hlo-print-tilings",
            "Print the valid tilings of each function and mhlo.fusion, ranked under a byte budget or by time on a device",
            "tilings:PrintTilings",
            (
                OptionInfo("budget", "str", "48KiB", "per-tile footprint budget (bytes, KiB, MiB); not used with a device"),
                OptionInfo("max", "int", 5, "tilings printed per computation"),
                OptionInfo(
                    "format", "str", "text",
                    "text (remarks), json (one JSON document per module) or jsonl (one JSON line per computation, as each is done)",
                    ("text", "json", "jsonl"),
                ),
                _FUNC,
                OptionInfo("max-programs", "int", MAX_PROGRAMS, "tilings with more programs are not evaluated", minimum=1),
                OptionInfo("max-nodes", "int", MAX_TILED_NODES, "a fusion with more tiled instructions is not tiled", minimum=1),
                OptionInfo("fusion-seconds", "str", f"{FUSION_SECONDS:g}", "CPU seconds spent tiling one computation at most (0: no limit)"),
                OptionInfo("device", "str", "", "rank the tilings legal on this device by estimated time (a bundled "
                           "name such as h100 or tpu-v5e, or a JSON description file); empty: by bytes moved under the budget"),
                OptionInfo("top", "int", 0, "with a device: tilings printed per computation (0: max)", minimum=0),
                OptionInfo("prove", "bool", False, "prove each printed exactness by isl (needs islpy)"),
                OptionInfo("allow-pad", "bool", False, _ALLOW_PAD_HELP + "; not with a device"),
            ),
        ),
        PassInfo(
            "hlo-audit-tilings",
            "Audit XLA's block-level tiling of each GPU fusion: legal, coverage, time against the best found",
            "audit_tilings:AuditTilings",
            (OptionInfo("device", "str", "h100", "the GPU the dump was compiled for (a bundled name or a JSON description file)"), _FORMAT, _FUNC),
        ),
        PassInfo(
            "hlo-attach-tiles",
            "Attach each op's tile (pid->offsets map, sizes, strides) for the given tile sizes",
            "tilings:AttachTiles",
            (
                OptionInfo(
                    "tile-sizes", "str", "",
                    "flat tile sizes, one per tiling parameter (e.g. 8,128), or per fusion (ynn_fusion.6:16,32,128;fusion.2:8)",
                ),
                _FUNC,
                OptionInfo("allow-pad", "bool", False, _ALLOW_PAD_HELP),
            ),
        ),
    )
}


#: Old pass name -> the pass's name. The fused-map passes were renamed to pair up with
#: their per-op twins (issue #25); the old names still run the pass, and say that they
#: are aliases in ``--list-passes`` and in a note where they are used.
ALIASES: dict[str, str] = {
    "hlo-fuse-indexing-maps": "hlo-attach-fused-indexing-maps",
    "hlo-print-fusion-indexing": "hlo-print-fused-indexing-maps",
}


def alias_note(name: str) -> str:
    """What is said where the alias ``name`` is used."""
    return f"'{name}' is an alias of '{ALIASES[name]}' (its old name); use '{ALIASES[name]}'"


@dataclass(frozen=True)
class UpstreamOption:
    """An option of an upstream pass: its name, its kind as LLVM's parser of it tells
    (``bool``, ``int``, ``uint``, ``long``, ``float``, ``enum``, ``str``, or ``value``
    when it cannot tell) and its default as MLIR prints it."""

    name: str
    kind: str
    default: str


@dataclass(frozen=True)
class UpstreamPass:
    """An upstream pass or pass pipeline the bindings accept: its name, the op it runs on
    (``any``, or e.g. ``func.func``: given at the module level it is nested under that
    op, as mlir-opt nests it), its options and whether it is a pipeline (a name for a
    sequence of passes)."""

    name: str
    anchor: str
    options: tuple[UpstreamOption, ...] = ()
    pipeline: bool = False


#: The upstream passes of the bindings the table was made from, by name (see
#: :mod:`hlo_indexing.passes.upstream_scan`); for ``--help`` and "did you mean" hints.
UPSTREAM_PASSES: dict[str, UpstreamPass] = {
    name: UpstreamPass(name, anchor, tuple(UpstreamOption(*option) for option in options), pipeline)
    for name, anchor, options, pipeline in upstream_passes.PASSES
}
#: Which bindings the upstream table describes, e.g. ``jaxlib 0.10.2``.
UPSTREAM_BINDINGS = upstream_passes.BINDINGS


def suggestion(name: str, extra: tuple[str, ...] = ()) -> str | None:
    """The registered or known upstream pass (or one of ``extra``, e.g. driver flags)
    closest to the misspelt ``name``, by :func:`difflib.get_close_matches`; None when
    nothing is close."""
    close = difflib.get_close_matches(name, [*PASSES, *ALIASES, *UPSTREAM_PASSES, *extra], n=1, cutoff=0.75)
    return close[0] if close else None


def pass_names() -> list[str]:
    """The registered pass names, sorted; imports nothing."""
    return sorted(PASSES)


def is_ours(name: str) -> bool:
    """Whether ``name`` is one of our passes (its name or an alias); imports nothing."""
    return name in PASSES or name in ALIASES


def info(name: str) -> PassInfo | None:
    """The description of the pass registered under ``name`` (or whose alias it is), or
    None; imports nothing."""
    return PASSES.get(ALIASES.get(name, name))


def lookup(name: str) -> type[ModulePass] | None:
    """The pass class registered under ``name`` (or whose alias it is), importing its
    module; None when there is none."""
    entry = info(name)
    if entry is None:
        return None
    module_name, class_name = entry.target.split(":")
    return getattr(importlib.import_module(f"{_PACKAGE}.{module_name}"), class_name)


def describe(cls: type[ModulePass]) -> PassInfo:
    """The :class:`PassInfo` of a pass class, read from its class variables and dataclass
    fields: what its :data:`PASSES` entry must be."""
    module = cls.__module__.removeprefix(f"{_PACKAGE}.")
    options = []
    for option in cls.options():
        kind = option.type if isinstance(option.type, str) else option.type.__name__
        choices = option.metadata.get("choices")
        options.append(
            OptionInfo(
                option.name.replace("_", "-"),
                kind,
                cast("bool | int | str", option.default),  # every pass option has a default
                option.metadata.get("help", ""),
                tuple(choices) if choices is not None else None,
                option.metadata.get("min"),
                option.metadata.get("max"),
            )
        )
    return PassInfo(cls.name, cls.description, f"{module}:{cls.__qualname__}", tuple(options))
