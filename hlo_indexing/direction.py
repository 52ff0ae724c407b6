"""The two directions of indexing maps, spelled once: :class:`Direction`.

Output-to-input maps take an element of a result to the operand elements it reads;
input-to-output maps take an element of an operand to the result elements it feeds.
The values are the user-facing spelling (pass option ``direction=output-to-input``,
``analyze(direction=...)``, JSON); a :class:`Direction` equals its value, so either may
be passed where a direction is expected.

Example::

    >>> Direction.of("input_to_output") is Direction.INPUT_TO_OUTPUT
    True
    >>> Direction.OUTPUT_TO_INPUT == "output-to-input"
    True
"""

from __future__ import annotations

from enum import StrEnum

from hlo_indexing.errors import InvalidArgumentError


class Direction(StrEnum):
    """A direction of indexing maps (see the module docstring)."""

    OUTPUT_TO_INPUT = "output-to-input"
    INPUT_TO_OUTPUT = "input-to-output"

    @classmethod
    def of(cls, value: "Direction | str") -> "Direction":
        """The direction ``value`` names (its value, or with ``_`` for ``-``);
        :class:`~hlo_indexing.errors.InvalidArgumentError` names the choices otherwise."""
        try:
            return cls(value.replace("_", "-") if isinstance(value, str) else value)
        except ValueError:
            raise InvalidArgumentError(
                f"direction must be one of {[d.value for d in cls]}, not {value!r}"
            ) from None
