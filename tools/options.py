"""The command line of ``hlo-indexing-opt``: its flags (MLIR's spellings), their parsing
into :class:`Options`, usage checks, and the ``--help``/``--version``/``--list-passes``
texts. Imports neither the MLIR bindings nor numpy, so those three stay fast.

Example::

    >>> options = parse_command_line(["in.mlir", "--hlo-simplify-indexing-maps=report=true", "-o", "out.mlir"])
    >>> options.inputs, options.get("o"), options.pass_flags[0].name
    (['in.mlir'], 'out.mlir', 'hlo-simplify-indexing-maps')
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from hlo_indexing.errors import HloIndexingError, SourceLocation
from hlo_indexing.passes import registry
from hlo_indexing.version import distribution_version, installed_version

PROGRAM = "hlo-indexing-opt"
COMMAND_LINE = "<command line>"
DEFAULT_SPLIT_MARKER = "// -----"
STDIN_NAME = "<stdin>"

# flag -> (kind, help). Kinds: "bool" (optionally =true/false), "value" (needs a value),
# "optional" (bare, or =value: the value's meaning is in the help).
FLAGS: dict[str, tuple[str, str]] = {
    "o": ("value", "Output filename (default: stdout), an output directory with several inputs; written only on success"),
    "j": ("value", "With several inputs or a directory: number of worker processes (default 1, 0 = one per CPU)"),
    "split-input-file": ("optional", "Split the input into chunks at '// -----' (or =MARKER) and process each"),
    "output-split-marker": ("value", "Marker between output chunks (default '// -----')"),
    "pass-pipeline": ("value", "A textual pipeline 'builtin.module(pass1, pass2{opt=v}, func.func(cse))'"),
    "verify-diagnostics": ("optional", "Check expected-* comments against diagnostics (=all or =only-expected)"),
    "mlir-print-op-generic": ("bool", "Print operations in the generic form"),
    "mlir-print-debuginfo": ("bool", "Print locations"),
    "mlir-print-local-scope": ("bool", "Print affine maps and types inline instead of as #aliases"),
    "allow-unregistered-dialect": ("bool", "Allow operations of unregistered dialects"),
    "mlir-print-ir-before-all": ("bool", "Print the IR before each pass (stderr)"),
    "mlir-print-ir-after-all": ("bool", "Print the IR after each pass (stderr)"),
    "mlir-print-ir-before": ("value", "Print the IR before the passes named (comma-separated pass arguments, stderr)"),
    "mlir-print-ir-after": ("value", "Print the IR after the passes named (comma-separated pass arguments, stderr)"),
    "mlir-print-ir-after-change": ("bool", "With --mlir-print-ir-after-all, print only when the pass changed the IR"),
    "mlir-print-ir-module-scope": ("bool", "Print the whole module when printing IR of nested passes"),
    "mlir-timing": ("bool", "Report the time of each pass (stderr)"),
    "hlo-verify-exact": ("bool", "Prove by isl that every per-op and fused map equals its unsimplified form (needs islpy)"),
    "dump-pass-pipeline": ("bool", "Print the pass pipeline before running it (stderr)"),
    "list-passes": ("bool", "List hlo-indexing's passes with their options"),
    "report-file": (
        "value",
        "Where format=json reports go: a file, or - for stdout (default: stdout when -o sends the IR elsewhere, "
        "else stderr); JSON Lines unless one input makes one report",
    ),
    "input-format": ("value", "Input format: mlir or hlo (default: by suffix .hlo / 'HloModule' header)"),
    "show-layout": ("value", "Show an XLA layout, e.g. 'f32[3,5]{1,0:T(2,2)}', as a grid of memory positions"),
    "format": ("value", "Format of --show-layout: text or svg"),
    "debug": ("bool", "Show Python tracebacks of internal errors"),
    "help": ("bool", "Show this help"),
    "version": ("bool", "Show the version"),
}
_ALIASES = {"h": "help"}


class UsageError(HloIndexingError):
    """A bad command line; ``location`` points into ``<command line>``."""


@dataclass
class PassFlag:
    """A ``--<pass-name>[=options]`` flag: its pipeline element text and its column."""

    element: str
    column: int
    spelling: str


@dataclass
class Options:
    """The parsed command line: input files, driver flags (``--name[=value]``; a flag without
    value is True), per-pass flags in order, and the column of each argument for error
    messages."""
    inputs: list[str] = field(default_factory=list)
    flags: dict[str, str | bool] = field(default_factory=dict)
    pass_flags: list[PassFlag] = field(default_factory=list)
    columns: dict[str, int] = field(default_factory=dict)

    def get(self, name: str, default=None):
        """The value of flag ``name``, or ``default`` when it was not given."""
        return self.flags.get(name, default)


def parse_command_line(argv: list[str]) -> Options:
    """Split ``argv`` into flags, per-pass flags and input files (see :data:`FLAGS`)."""
    options = Options()
    column = 1
    columns = []
    for arg in argv:
        columns.append(column)
        column += len(arg) + 1
    index = 0
    while index < len(argv):
        arg, where = argv[index], columns[index]
        index += 1
        if arg == "-" or not arg.startswith("-"):
            options.inputs.append(arg)
            options.columns.setdefault("input", where)
            options.columns.setdefault(f"input {arg}", where)
            continue
        body = arg[2:] if arg.startswith("--") else arg[1:]
        name, separator, value = body.partition("=")
        has_value = bool(separator)
        name = _ALIASES.get(name, name)
        if name not in FLAGS:
            options.pass_flags.append(PassFlag(f"{name}{{{value}}}" if has_value else name, where, arg))
            continue
        kind = FLAGS[name][0]
        if kind == "value" and not has_value:
            if index >= len(argv):
                raise UsageError(f"option '{arg}' requires a value", SourceLocation(COMMAND_LINE, 1, where))
            value, has_value = argv[index], True
            index += 1
        if kind == "bool" and has_value:
            if value not in ("true", "false", "1", "0"):
                raise UsageError(
                    f"'{value}' is invalid value for boolean argument! Try 0 or 1", SourceLocation(COMMAND_LINE, 1, where)
                )
            options.flags[name] = value in ("true", "1")
        else:
            options.flags[name] = value if has_value else True
        options.columns[name] = where
    return options


def version_text() -> str:
    """The ``--version`` text: our version, the bindings provider and its version."""
    ours = installed_version() or "unknown"
    provider = os.environ.get("HLO_INDEXING_BINDINGS", "jaxlib")
    bindings = distribution_version(provider if provider != "iree" else "iree-base-compiler") or "unknown"
    return f"{PROGRAM} {ours}\n  MLIR Python bindings: {provider} {bindings}"


#: Where pass descriptions start in ``--list-passes`` and ``--help``.
_LIST_WIDTH = 38
_HELP_WIDTH = 50


def help_text() -> str:
    """The ``--help`` text: usage, driver flags, and every pass the pipeline accepts, ours
    and upstream, with their options, as mlir-opt lists them (imports no pass module)."""
    lines = [
        "OVERVIEW: hlo-indexing optimizer driver (mlir-opt flag names)",
        "",
        f"USAGE: {PROGRAM} [options] <input file | - >",
        f"       {PROGRAM} [options] [-j N] [-o DIR] <input file | directory>...   (batch mode)",
        "",
        "OPTIONS:",
    ]
    for name, (kind, text) in FLAGS.items():
        spelling = f"-{name}" if name in ("o", "j") else f"--{name}"
        if kind == "value":
            spelling += "=<value>"
        elif kind == "optional":
            spelling += "[=<value>]"
        lines.append(f"  {spelling:<36} - {text}")
    lines += ["", *_pipeline_passes_lines()]
    return "\n".join(lines)


def _pipeline_passes_lines() -> list[str]:
    """Every pass and pass pipeline the pipeline accepts, sorted by name as mlir-opt sorts
    them, ours with their descriptions, the upstream ones with the op they run on."""
    upstream = registry.UPSTREAM_PASSES
    lines = [
        "Compiler passes to run (--<pass>[='opt=v ...'] or --pass-pipeline): hlo-indexing's and the upstream passes",
        f"of the MLIR bindings ({registry.UPSTREAM_BINDINGS}), which give no descriptions. 'on func.func': given at",
        "the module level such a pass is nested under func.func, as mlir-opt nests it.",
        "  Passes:",
    ]
    ours_and_upstream = [*registry.pass_names(), *registry.ALIASES, *(n for n, entry in upstream.items() if not entry.pipeline)]
    for name in sorted(ours_and_upstream):
        if name in registry.ALIASES:
            lines += _pass_lines("    ", _HELP_WIDTH, name, f"alias of --{registry.ALIASES[name]} (its old name)", [])
            continue
        entry = registry.info(name)
        if entry is not None:
            lines += _our_pass_lines(entry, "    ", _HELP_WIDTH)
            continue
        pass_ = upstream[name]
        where = "any op" if pass_.anchor == "any" else pass_.anchor
        options = [(o.name, o.kind, f"(default: {o.default})") for o in pass_.options]
        lines += _pass_lines("    ", _HELP_WIDTH, name, f"upstream, on {where}", options)
    lines.append("  Pass Pipelines:")
    for name, pipeline in sorted(upstream.items()):
        if pipeline.pipeline:
            lines += _pass_lines("    ", _HELP_WIDTH, name, "upstream pipeline", [])
    return lines


def _pass_lines(indent: str, width: int, name: str, description: str, options: list[tuple[str, str, str]]) -> list[str]:
    """A pass and its options (name, value kind, help with its default), one line each,
    the descriptions from column ``width``."""
    lines = [f"{indent}--{name}".ljust(width) + f" - {description}"]
    lines += [f"{indent}  --{option}=<{value}>".ljust(width) + f" - {text}" for option, value, text in options]
    return lines


def _our_pass_lines(entry: registry.PassInfo, indent: str, width: int) -> list[str]:
    """A pass of ours and its options (``--list-passes``, ``--help``)."""
    options = []
    for option in entry.options:
        default = option.default
        if isinstance(default, bool):
            default = "true" if default else "false"
        value = "|".join(option.choices) if option.choices else option.kind
        options.append((option.name, value, f"{option.help} (default: {default})"))
    return _pass_lines(indent, width, entry.name, entry.description, options)


def list_passes_text() -> str:
    """Our passes and their options, from the registry's table: imports no pass module
    (nor the MLIR bindings). ``--help`` lists the upstream passes too."""
    lines = ["Available Passes:"]
    for name in sorted([*registry.pass_names(), *registry.ALIASES]):
        if name in registry.ALIASES:
            lines.append(f"  --{name:<34} - alias of --{registry.ALIASES[name]} (its old name)")
            continue
        entry = registry.info(name)
        assert entry is not None  # a name of pass_names()
        lines += _our_pass_lines(entry, "  ", _LIST_WIDTH)
    lines += [
        "",
        f"The {len(registry.UPSTREAM_PASSES)} upstream passes and pass pipelines of the MLIR bindings (canonicalize, cse,",
        "symbol-dce, loop passes, the stablehlo/mhlo/chlo conversions, ...) are accepted too, in",
        "--pass-pipeline and as --<pass-name> flags; --help lists them with their options.",
    ]
    return "\n".join(lines)


def check_usage(options: Options) -> None:
    """Raise :class:`UsageError` for flag values that are wrong whatever the input."""
    input_format = options.get("input-format")
    if input_format not in (None, "mlir", "hlo"):
        raise UsageError(
            f"invalid value '{input_format}' for --input-format: expected mlir or hlo",
            SourceLocation(COMMAND_LINE, 1, options.columns["input-format"]),
        )
    if options.get("report-file") == "-" and options.get("o", "-") == "-":
        raise UsageError(
            "--report-file=- needs -o: the IR goes to stdout", SourceLocation(COMMAND_LINE, 1, options.columns["report-file"])
        )
    if verify_mode(options) not in (None, "all", "only-expected"):
        raise UsageError(
            f"invalid value '{options.get('verify-diagnostics')}' for --verify-diagnostics: expected all or only-expected",
            SourceLocation(COMMAND_LINE, 1, options.columns["verify-diagnostics"]),
        )


#: The flags --show-layout takes (the layout viewer's own options are those of ``hlo-indexing-layout``).
SHOW_LAYOUT_FLAGS = frozenset({"show-layout", "format", "o", "debug"})


def check_show_layout_usage(options: Options) -> None:
    """Raise :class:`UsageError` at the first argument ``--show-layout`` does not take: an
    input file, a pass, a misspelt flag (with the driver's suggestion) or a driver flag
    of the pass pipeline."""
    if options.inputs:
        raise UsageError(
            f"--show-layout takes no input file, got '{options.inputs[0]}'",
            SourceLocation(COMMAND_LINE, 1, options.columns["input"]),
        )
    for flag in options.pass_flags:
        name = flag.element.split("{")[0]
        if registry.info(name) is None and name not in registry.UPSTREAM_PASSES:
            raise UsageError(unknown_argument_message(flag.spelling), SourceLocation(COMMAND_LINE, 1, flag.column))
        raise UsageError(
            f"'{flag.spelling}' is a pass: --show-layout runs no pipeline", SourceLocation(COMMAND_LINE, 1, flag.column)
        )
    for name in options.flags:
        if name not in SHOW_LAYOUT_FLAGS:
            raise UsageError(
                f"--{name} cannot be used with --show-layout (it takes --format and -o; hlo-indexing-layout has more)",
                SourceLocation(COMMAND_LINE, 1, options.columns[name]),
            )


def unknown_argument_message(spelling: str) -> str:
    """mlir-opt's message for an argument that is neither a flag nor a pass, with the
    closest flag or pass as a suggestion."""
    message = f"Unknown command line argument '{spelling}'.  Try: '{PROGRAM} --help'"
    close = registry.suggestion(spelling.lstrip("-").split("=")[0], tuple(FLAGS))
    return message + (f"  Did you mean '--{close}'?" if close is not None else "")


def verify_mode(options: Options):
    """The ``--verify-diagnostics`` mode: ``"all"`` for the bare flag, the given value, or None
    when absent."""
    mode = options.get("verify-diagnostics")
    return "all" if mode is True else mode
