"""The pass interface shared by every hlo-indexing pass.

A pass is a frozen dataclass with class variables ``name`` (its pipeline name, e.g.
``hlo-attach-indexing-maps``) and ``description`` (one line), and dataclass fields for
its options, each with a default and a ``metadata={"help": ...}`` entry (an ``int``
option may add ``"min"`` and ``"max"``, its smallest and largest valid values; ``str``
options ``"choices"``). Options are spelled with dashes in pipelines (``simplify=false``,
``max-maps=8``); field names use underscores. A pass is registered by an entry in :data:`hlo_indexing.passes.registry.PASSES`
that repeats its name, description and options, so that ``--help`` needs no pass module
(a test checks that the entry equals the class).

``run(module, diagnostics)`` transforms or inspects a ``builtin.module`` operation in
place. It reports through ``diagnostics``:

* ``diagnostics.remark(location, message)`` / ``warning`` / ``note``: collected and
  printed by the driver (Python cannot emit remarks through MLIR itself);
* ``diagnostics.error(location, message)``: the pass fails; the driver prints
  ``file:line:col: error: message`` and exits 1, and a ``PassManager`` run fails.

Example::

    @dataclass(frozen=True)
    class CountOps(ModulePass):
        name: ClassVar[str] = "count-ops"
        description: ClassVar[str] = "Remark the number of ops in the module"

        def run(self, module, diagnostics):
            diagnostics.remark(module.location, f"{count(module)} ops")
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar, cast

from hlo_indexing.errors import HloIndexingError

if TYPE_CHECKING:  # the bindings load only when a pass runs: `--help` stays fast
    from hlo_indexing.dialect_glue.bindings import ir


@dataclass(frozen=True)
class Diagnostic:
    """One message of a pass: severity is ``error``, ``warning``, ``remark`` or ``note``,
    or ``output`` for a report printed verbatim (location None)."""

    severity: str
    location: ir.Location | None
    message: str


@dataclass
class Diagnostics:
    """Collects the diagnostics of a pass run, in emission order; ``listener``, when
    set, also gets each one as it is emitted (the driver prints them as they come: a
    print pass reports each computation when it is done, not at the end of the module)."""

    items: list[Diagnostic] = field(default_factory=list)
    listener: "Callable[[Diagnostic], None] | None" = None

    def emit(self, severity: str, location: "ir.Location | None", message: str) -> None:
        """Record a diagnostic of ``severity`` at ``location``."""
        diagnostic = Diagnostic(severity, location, message)
        self.items.append(diagnostic)
        if self.listener is not None:
            self.listener(diagnostic)

    def error(self, location: "ir.Location", message: str) -> None:
        """Record an error at ``location``."""
        self.emit("error", location, message)

    def warning(self, location: "ir.Location", message: str) -> None:
        """Record a warning at ``location``."""
        self.emit("warning", location, message)

    def remark(self, location: "ir.Location", message: str) -> None:
        """Record a remark at ``location``."""
        self.emit("remark", location, message)

    def note(self, location: "ir.Location", message: str) -> None:
        """Record a note at ``location``."""
        self.emit("note", location, message)

    def failure(self, location: "ir.Location", exc: Exception, context: str = "") -> None:
        """An error for ``exc`` raised while the pass handled the op at ``location``: at
        the op the error is about when it says so (``HloIndexingError.ir_location``),
        with a note at ``location`` saying what the pass was doing (``context``)."""
        if isinstance(exc, HloIndexingError):
            where = cast("ir.Location", exc.ir_location) if exc.ir_location is not None else location
            self.error(where, exc.message)
            if context and where is not location:
                self.note(location, context)
        else:
            self.error(location, f"{context + ': ' if context else ''}internal error: {type(exc).__name__}: {exc}")

    def output(self, text: str) -> None:
        """Record a report to print verbatim (severity ``output``, no location): the
        JSON documents of the print passes' ``format=json``."""
        self.emit("output", None, text)

    @property
    def has_errors(self) -> bool:
        """True when an error was recorded."""
        return any(d.severity == "error" for d in self.items)


class PassOptionError(ValueError):
    """An unknown option or a value of the wrong type in ``name{opt=value}``."""


@dataclass(frozen=True)
class ModulePass:
    """Base class of hlo-indexing passes (see the module docstring)."""

    name: ClassVar[str] = ""
    description: ClassVar[str] = ""

    def run(self, module: "ir.Operation", diagnostics: Diagnostics) -> None:
        """Transform or annotate ``module`` in place, reporting problems to ``diagnostics``
        (never raising for bad input); every pass overrides it."""
        raise NotImplementedError(f"pass {self.name} does not implement run()")

    # -- options

    @classmethod
    def options(cls) -> list[dataclasses.Field]:
        """The pass's options: its dataclass fields, in declaration order."""
        return list(dataclasses.fields(cls))

    @classmethod
    def from_options(cls, options: dict[str, str]) -> "ModulePass":
        """Build from textual options (``{"max-maps": "8"}``); raises
        :class:`PassOptionError` naming the bad option."""
        known = {f.name.replace("_", "-"): f for f in cls.options()}
        values: dict[str, object] = {}
        for key, text in options.items():
            option = known.get(key)
            if option is None:
                raise PassOptionError(
                    f"no such option '{key}' for pass '{cls.name}'"
                    + (f"; options are: {', '.join(sorted(known))}" if known else "")
                )
            _check_not_joined(cls.name, key, text, known)
            values[option.name] = _convert(cls.name, key, option, text)
        return cls(**values)


def _check_not_joined(pass_name: str, key: str, text: str, known: dict[str, dataclasses.Field]) -> None:
    """Raise :class:`PassOptionError` when ``text`` holds another option after a comma
    (``device=h100,top=1``): options are separated by spaces, as MLIR's are."""
    head, _, rest = text.partition(",")
    joined = rest.split("=", 1)[0].strip() if "=" in rest else ""
    if joined in known:
        together = " ".join(part.strip() for part in [f"{key}={head}", *rest.split(",")])
        raise PassOptionError(
            f"option '{key}' of pass '{pass_name}' is given '{text}', which holds option '{joined}' after a comma: "
            f"options are separated by spaces ('{together}')"
        )


def _convert(pass_name: str, key: str, option: dataclasses.Field, text: str) -> bool | int | str:
    kind = option.type if isinstance(option.type, str) else getattr(option.type, "__name__", str(option.type))
    choices = option.metadata.get("choices")
    if choices is not None and text not in choices:
        raise PassOptionError(
            f"invalid value '{text}' for option '{key}' of pass '{pass_name}'; expected one of: {', '.join(choices)}"
        )
    if kind == "bool":
        if text in ("true", "1", "on", ""):
            return True
        if text in ("false", "0", "off"):
            return False
        raise PassOptionError(f"option '{key}' of pass '{pass_name}' expects true or false, got '{text}'")
    if kind == "int":
        try:
            value = int(text)
        except ValueError:
            raise PassOptionError(f"option '{key}' of pass '{pass_name}' expects an integer, got '{text}'") from None
        minimum, maximum = option.metadata.get("min"), option.metadata.get("max")
        if minimum is not None and value < minimum:
            raise PassOptionError(f"option '{key}' of pass '{pass_name}' must be at least {minimum}, got {value}")
        if maximum is not None and value > maximum:
            raise PassOptionError(f"option '{key}' of pass '{pass_name}' must be at most {maximum}, got {value}")
        return value
    return text
