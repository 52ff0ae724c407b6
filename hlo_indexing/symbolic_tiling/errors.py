"""Errors of tile propagation, with the status code XLA would return."""

from __future__ import annotations

from hlo_indexing.errors import HloIndexingError


class TilingError(HloIndexingError):
    """A tile cannot be propagated or a tiling space built; ``code`` is XLA's absl
    status code name (``UNIMPLEMENTED``, ``FAILED_PRECONDITION``, ``INVALID_ARGUMENT``)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def status_text(self) -> str:
        """``CODE: message``, as absl prints a status."""
        return f"{self.code}: {self.message}"
