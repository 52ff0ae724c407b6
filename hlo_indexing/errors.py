"""Exceptions raised by hlo-indexing.

Every error a user can cause derives from :class:`HloIndexingError`. Errors that point
into a source text carry a :class:`SourceLocation` so that the CLI can print MLIR's
``file:line:col: error: message`` form.
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

    ``location`` is the place the error points at, when there is one.
    """

    def __init__(self, message: str, location: SourceLocation | None = None):
        super().__init__(message)
        self.message = message
        self.location = location

    def __str__(self) -> str:
        if self.location is None:
            return self.message
        return f"{self.location}: error: {self.message}"


class ParseError(HloIndexingError):
    """Malformed input text: MLIR, HLO, an indexing map or a layout. ``notes`` holds the
    (location, message) notes MLIR attached to the error (e.g. "see existing symbol
    definition here")."""

    notes: tuple[tuple[SourceLocation | None, str], ...] = ()


class UnsupportedError(HloIndexingError):
    """Valid input that this project cannot handle (e.g. a missing binding entry point)."""


class DomainTooLargeError(HloIndexingError):
    """Refusal to enumerate a domain above the configured number of points."""


class InvalidArgumentError(HloIndexingError, ValueError, TypeError):
    """A public function called with an argument it does not accept (an unknown
    direction, an object of the wrong type, ...); also a ``TypeError`` for the last
    case's sake."""


class IndexOutOfRangeError(HloIndexingError, IndexError):
    """An index or offset outside the shape, buffer or result list it addresses."""


class InputNotFoundError(HloIndexingError, FileNotFoundError):
    """A path given as input that names no file (also a ``FileNotFoundError``)."""

    def __init__(self, message: str, location: SourceLocation | None = None):
        HloIndexingError.__init__(self, message, location)
