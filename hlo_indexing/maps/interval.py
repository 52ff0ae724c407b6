"""Inclusive integer intervals and the arithmetic the simplifier needs.

An :class:`Interval` ``[lower, upper]`` holds every integer ``x`` with
``lower <= x <= upper``; ``lower > upper`` is the empty interval. Bounds are Python
ints; :func:`check_int64` guards the places where values enter from users.
"""

from __future__ import annotations

from dataclasses import dataclass

from hlo_indexing.limits import INT64_MAX, INT64_MIN, check_int64

__all__ = ["INT64_MAX", "INT64_MIN", "Interval", "check_int64"]  # the int64 helpers live in limits


@dataclass(frozen=True, slots=True)
class Interval:
    """The integers ``lower..upper``, both inclusive. Example: ``Interval(0, 9)`` is a
    dimension of size 10; ``str(Interval(0, 9)) == "[0, 9]"``."""

    lower: int
    upper: int

    @staticmethod
    def point(value: int) -> "Interval":
        """The interval ``[value, value]``."""
        return Interval(value, value)

    @staticmethod
    def of_size(size: int) -> "Interval":
        """``[0, size - 1]``: the index range of a dimension of ``size`` elements."""
        return Interval(0, size - 1)

    def __str__(self) -> str:
        return f"[{self.lower}, {self.upper}]"

    @property
    def is_empty(self) -> bool:
        """True when ``lower > upper`` (no integer in the interval)."""
        return self.lower > self.upper

    @property
    def is_point(self) -> bool:
        """True when the interval holds exactly one integer."""
        return self.lower == self.upper

    @property
    def size(self) -> int:
        """The number of integers in the interval (0 if empty)."""
        return max(0, self.upper - self.lower + 1)

    def contains(self, value: "int | Interval") -> bool:
        """Whether ``value`` (an integer, or every integer of an interval; an empty one always)
        lies in the interval."""
        if isinstance(value, Interval):
            return value.is_empty or (self.lower <= value.lower and value.upper <= self.upper)
        return self.lower <= value <= self.upper

    def intersect(self, other: "Interval") -> "Interval":
        """The integers in both intervals (empty when they do not overlap)."""
        return Interval(max(self.lower, other.lower), min(self.upper, other.upper))

    def hull(self, other: "Interval") -> "Interval":
        """The smallest interval holding both (the union's convex hull)."""
        if self.is_empty:
            return other
        if other.is_empty:
            return self
        return Interval(min(self.lower, other.lower), max(self.upper, other.upper))

    def __add__(self, other: "Interval | int") -> "Interval":
        if isinstance(other, int):
            return Interval(self.lower + other, self.upper + other)
        return Interval(self.lower + other.lower, self.upper + other.upper)

    def __neg__(self) -> "Interval":
        return Interval(-self.upper, -self.lower)

    def __mul__(self, other: "Interval | int") -> "Interval":
        if isinstance(other, int):
            other = Interval.point(other)
        corners = (
            self.lower * other.lower,
            self.lower * other.upper,
            self.upper * other.lower,
            self.upper * other.upper,
        )
        return Interval(min(corners), max(corners))

    def floordiv(self, divisor: int) -> "Interval":
        """``{floor(x / divisor)}`` for a non-zero constant divisor."""
        a, b = self.lower // divisor, self.upper // divisor
        return Interval(min(a, b), max(a, b))

    def ceildiv(self, divisor: int) -> "Interval":
        """``{ceil(x / divisor)}`` for a non-zero constant divisor."""
        a, b = -((-self.lower) // divisor), -((-self.upper) // divisor)
        return Interval(min(a, b), max(a, b))

    def mod(self, divisor: int) -> "Interval":
        """``{x mod divisor}`` (floor semantics, as MLIR) for a positive divisor: exact
        when the interval does not wrap, else ``[0, divisor - 1]``."""
        if divisor <= 0:
            return Interval(min(0, divisor + 1), max(0, divisor - 1))
        if self.lower // divisor == self.upper // divisor:
            return Interval(self.lower % divisor, self.upper % divisor)
        return Interval(0, divisor - 1)
