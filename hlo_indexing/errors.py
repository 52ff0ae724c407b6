"""Exceptions raised by hlo-indexing.

Every error a user can cause derives from :class:`HloIndexingError`: the public API
raises nothing else for bad input (text, attributes, argument values, sizes). Errors
that point into a source text carry a :class:`SourceLocation` so that the CLI can print
MLIR's ``file:line:col: error: message`` form. Some classes also derive from the
built-in exception a Python user would expect (``ValueError``, ``IndexError``,
``OverflowError``), so ``except ValueError`` keeps working::

    HloIndexingError
    +-- ParseError (ValueError)              malformed text: MLIR, HLO, a map, a layout
    +-- InvalidInputError (ValueError)       well-formed input that is not valid
    |   +-- InvalidAttributeError            an op's attribute (names op and attribute)
    |   +-- InvalidArgumentError (+TypeError) a bad argument value or type of a public function
    +-- IndexOutOfRangeError (IndexError)    an index or offset outside a shape/buffer
    +-- UndefinedDivisionError (ValueError)  a divisor that is (or evaluates to) zero
    +-- UnsupportedError                     valid input this project cannot handle
    +-- TilingError                          a fusion not tileable at given sizes, a tile not propagated
    +-- LimitExceededError                   a resource limit of hlo_indexing.limits
        +-- NestingTooDeepError               nesting depth (parentheses, expressions)
        +-- DomainTooLargeError               points of a domain to enumerate
        +-- IntegerOverflowError (OverflowError, ValueError)   a number outside int64
        +-- EnumerationTooLargeError          size of a table to build (viewer cells)
        +-- TimeLimitError                    wall-clock time (isolated HLO parsing)
        +-- MemoryLimitError (MemoryError)    address space (isolated HLO parsing)

The limits themselves are documented, with their values, in :mod:`hlo_indexing.limits`.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SourceLocation:
    """A position in a source text; ``line`` and ``column`` are 1-based."""

    filename: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.filename}:{self.line}:{self.column}"


class HloIndexingError(Exception):
    """Base class of all errors raised by hlo-indexing.

    ``location`` is the place the error points at, when there is one. ``ir_location``
    is the MLIR location of the op the error is about (set by the per-op analysis), so
    that a pass reports the error at the op, in the op's own buffer.
    """

    ir_location: object = None

    def __init__(self, message: str, location: SourceLocation | None = None):
        super().__init__(message)
        self.message = message
        self.location = location

    def __str__(self) -> str:
        if self.location is None:
            return self.message
        return f"{self.location}: error: {self.message}"


class ParseError(HloIndexingError, ValueError):
    """Malformed input text: MLIR, HLO, an indexing map or a layout. ``notes`` holds the
    (location, message) notes MLIR attached to the error (e.g. "see existing symbol
    definition here")."""

    notes: tuple[tuple[SourceLocation | None, str], ...] = ()


class InvalidInputError(HloIndexingError, ValueError):
    """Input that parses but is not valid: an HLO module the verifier rejects, a fusion
    whose parameters disagree with its operands, a shape with negative sizes, ..."""


class InvalidAttributeError(InvalidInputError):
    """A malformed attribute of an op; the message names the op and the attribute, the
    location is the op's."""

    def __init__(self, op: str, attribute: str, problem: str, location: SourceLocation | None = None):
        super().__init__(f"{op}: attribute '{attribute}' {problem}", location)
        self.op, self.attribute = op, attribute


class InvalidArgumentError(HloIndexingError, ValueError, TypeError):
    """A public function called with an argument it does not accept (an unknown
    direction, a ``minor_to_major`` that is not a permutation, an object of the wrong
    type, ...); also a ``TypeError`` for the last case's sake."""


class IndexOutOfRangeError(HloIndexingError, IndexError):
    """An index or offset outside the shape or buffer it addresses."""


class UndefinedDivisionError(HloIndexingError, ValueError):
    """A ``floordiv``/``ceildiv``/``mod`` whose divisor is zero: in map text (located at
    the divisor), after simplification, or when evaluated at a point."""


class UnsupportedError(HloIndexingError):
    """Valid input that this project cannot handle (e.g. a missing binding entry point)."""


class TilingError(HloIndexingError):
    """Symbolic tiling failed: a fusion cannot be tiled at the given sizes, a tile cannot be
    propagated through an instruction, or a tiling space cannot be built. ``status`` is
    XLA's absl status code name (``UNIMPLEMENTED``, ``FAILED_PRECONDITION``,
    ``INVALID_ARGUMENT``), ``reason`` the explanation; ``message`` (and ``str()``) is both,
    as absl prints a status (``UNIMPLEMENTED: ...``)."""

    def __init__(self, status: str, reason: str) -> None:
        super().__init__(f"{status}: {reason}")
        self.status = status
        self.reason = reason


class LimitExceededError(HloIndexingError):
    """Input beyond one of the resource limits of :mod:`hlo_indexing.limits`. ``limit``
    names the limit (the constant's name there), ``value`` is what the input asked for."""

    def __init__(self, message: str, location: SourceLocation | None = None, *, limit: str = "", value: object = None):
        super().__init__(message, location)
        self.limit, self.value = limit, value


class NestingTooDeepError(LimitExceededError):
    """Parentheses or expressions nested deeper than ``limits.MAX_NESTING_DEPTH``."""


class DomainTooLargeError(LimitExceededError):
    """Refusal to enumerate a domain above the configured number of points
    (``limits.MAX_ENUMERATION_POINTS`` unless the caller gives its own)."""


class IntegerOverflowError(LimitExceededError, OverflowError, ValueError):
    """A number (a constant, a bound, a size, an offset) outside int64; the message names
    the value and what it is."""


class EnumerationTooLargeError(LimitExceededError):
    """A table an algorithm would build is larger than its limit (e.g. the layout
    viewer's cells, ``limits.MAX_VIEWER_CELLS``)."""


class TimeLimitError(LimitExceededError):
    """An isolated step ran longer than its limit (``limit`` names it): parsing
    untrusted HLO text in a child process, ``limits.HLO_PARSE_SECONDS``; an isl proof,
    ``limits.PROOF_SECONDS``."""


class MemoryLimitError(LimitExceededError, MemoryError):
    """An isolated step (parsing untrusted HLO text in a child process) ran out of its
    address space: ``limit`` is ``ISOLATED_MEMORY_BYTES`` (ours, above the parent's use)
    or ``RLIMIT_AS`` (the lower limit set for the process by its user, ``ulimit -v``)."""


class InputNotFoundError(HloIndexingError, FileNotFoundError):
    """A path given as input that names no file (also a ``FileNotFoundError``)."""

    def __init__(self, message: str, location: SourceLocation | None = None):
        HloIndexingError.__init__(self, message, location)
