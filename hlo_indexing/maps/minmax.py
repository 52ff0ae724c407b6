"""Min and max in indexing maps (XLA's symbolic expressions since 2026): maps whose results
or constraints use ``min(a, b)`` and ``max(a, b)``, as XLA writes clamped start indices
(``dynamic-slice``, ``dynamic-update-slice``, ``gather``) and the bounds of pads and slices
in tiles.

Design. MLIR's ``AffineExpr`` has no min or max, so the affine parts stay on
``ir.AffineExpr`` and each min/max is a *defined variable* above them: a
:class:`ClampedMap` is an :class:`~hlo_indexing.maps.indexing_map.IndexingMap` (its
``base``) some of whose range variables are defined by a :class:`Definition`, ``s_k =
min(lhs, rhs)`` or ``max(lhs, rhs)`` of affine expressions over the other variables (a
definition may use the defined variables before it). The base alone, with the defined
variables free over their ranges, holds every pair of the map and more (a sound
over-approximation); the definitions make it exact. Everything that must be exact goes
through them:

* text: :func:`parse_clamped_map` reads XLA's text with ``min``/``max`` (a map without
  them is a plain ``IndexingMap``); ``str`` writes them back in place of the defined
  variables, which are neither declared nor given a range;
* :meth:`ClampedMap.evaluate` computes the defined variables, then the results;
* :meth:`ClampedMap.pieces`: the map as a union of plain maps with constraints, one per
  choice of an operand of each min/max (``min(a, b)`` is ``a`` where ``a - b <= 0``, ``b``
  where ``a - b >= 1``): exactly the same relation, which every algorithm on plain maps
  (relations, composition of fused maps, proof by isl) then handles;
* :meth:`ClampedMap.simplify` is range-aware: a min or max whose operands are ordered over
  the domain (``min(d0, 10)`` with ``d0 in [0, 9]``, ``min(d0, d0 + 1)``) is the operand it
  picks, substituted; a map left without min/max is a plain simplified ``IndexingMap``;
* :func:`compose` composes any mix of plain and clamped maps, the definitions carried
  into the composed map's variables;
* :func:`clamped_map_to_attribute` / :func:`clamped_map_from_attribute`: the base's
  attribute form (:mod:`~hlo_indexing.maps.attributes`) plus the definitions.

Example::

    >>> m = parse_clamped_map("(d0) -> (min(d0, 10)), domain: d0 in [0, 20]")
    >>> str(m), m.evaluate([15])
    ('(d0) -> (min(d0, 10)), domain: d0 in [0, 20]', (10,))
    >>> str(parse_clamped_map("(d0) -> (min(d0, 10)), domain: d0 in [0, 9]").simplify())
    '(d0) -> (d0), domain: d0 in [0, 9]'
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.dialect_glue.context import current_or_default_context
from hlo_indexing.errors import InvalidArgumentError, LimitExceededError
from hlo_indexing.maps import affine_expr as ax
from hlo_indexing.maps import text
from hlo_indexing.maps.algebra import compose as compose_plain
from hlo_indexing.maps.attributes import indexing_map_from_attribute, indexing_map_to_attribute
from hlo_indexing.maps.indexing_map import IndexingMap
from hlo_indexing.maps.interval import Interval
from hlo_indexing.maps.variables import MapParts, Variable

__all__ = [
    "KINDS",
    "MAX_PIECES",
    "ClampedMap",
    "Definition",
    "choices",
    "clamped_map_from_attribute",
    "clamped_map_to_attribute",
    "compose",
    "parse_clamped_map",
]

#: The operations a definition may be.
KINDS = ("min", "max")

#: Most pieces :meth:`ClampedMap.pieces` makes (2 per undecided min/max, multiplied).
MAX_PIECES = 1 << 12


@dataclass(frozen=True)
class Definition:
    """Range variable ``symbol`` (a position among the map's symbols) is ``kind(lhs,
    rhs)``, ``kind`` one of :data:`KINDS`, of affine expressions over the map's variables."""

    symbol: int
    kind: str
    lhs: ir.AffineExpr
    rhs: ir.AffineExpr

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise InvalidArgumentError(f"unknown kind '{self.kind}' of a defined variable (one of {', '.join(KINDS)})")

    def value(self, lhs: int, rhs: int) -> int:
        """The definition at operand values ``lhs`` and ``rhs``."""
        return min(lhs, rhs) if self.kind == "min" else max(lhs, rhs)

    def bounds(self, lhs: Interval, rhs: Interval) -> Interval:
        """The range of the definition over operand ranges ``lhs`` and ``rhs``."""
        pick = min if self.kind == "min" else max
        return Interval(pick(lhs.lower, rhs.lower), pick(lhs.upper, rhs.upper))


def choices(kind: str, lhs: ir.AffineExpr, rhs: ir.AffineExpr, difference: Interval) -> list[tuple[ir.AffineExpr, Interval]]:
    """``kind(lhs, rhs)`` as ``(operand, range of lhs - rhs where it is picked)`` pairs,
    ``difference`` being the range of ``lhs - rhs``: one pair when the choice is decided
    over it (``lhs - rhs`` never above 0, or never below: at 0 both are the value), two
    otherwise (``min``: ``lhs`` where ``lhs - rhs <= 0``, else ``rhs``)."""
    first, second = (lhs, rhs) if kind == "min" else (rhs, lhs)  # picked where lhs - rhs <= 0, >= 0
    if difference.upper <= 0:
        return [(first, difference)]
    if difference.lower >= 0:
        return [(second, difference)]
    return [(first, Interval(difference.lower, 0)), (second, Interval(1, difference.upper))]


@dataclass(frozen=True)
class ClampedMap:
    """A map with min/max (see the module docstring): ``base`` with some range variables
    defined by ``definitions`` (in order: each may use those before it)."""

    base: IndexingMap
    definitions: tuple[Definition, ...]

    @property
    def num_dims(self) -> int:
        """The number of dimensions."""
        return self.base.num_dims

    @property
    def num_results(self) -> int:
        """The number of results."""
        return self.base.num_results

    @property
    def defined(self) -> frozenset[int]:
        """The symbol positions of the defined variables."""
        return frozenset(d.symbol for d in self.definitions)

    # ---------------------------------------------------------------- values

    def evaluate(self, dims: Sequence[int], symbols: Sequence[int] = ()) -> tuple[int, ...]:
        """The results at ``dims`` and the free symbols ``symbols`` (range variables not
        defined, then runtime variables, in order)."""
        values = self._symbol_values(list(dims), list(symbols))
        return tuple(ax.evaluate(e, list(dims), values) for e in self.base.results)

    def _symbol_values(self, dims: list[int], free: list[int]) -> list[int]:
        defined = self.defined
        values = [0] * self.base.num_symbols
        free_positions = [j for j in range(self.base.num_symbols) if j not in defined]
        if len(free) != len(free_positions):
            raise InvalidArgumentError(f"expected {len(free_positions)} symbol values, got {len(free)}")
        for j, value in zip(free_positions, free):
            values[j] = value
        for d in self.definitions:
            values[d.symbol] = d.value(ax.evaluate(d.lhs, dims, values), ax.evaluate(d.rhs, dims, values))
        return values

    def result_bounds(self) -> list[Interval]:
        """The range of each result over the domain, each min/max over its operands'
        ranges (XLA's range evaluator: ``min(d0, d1)`` with ``d0 in [0, 9]``, ``d1 in
        [-10, -1]`` is in ``[-10, -1]``), narrowed by the constraints as
        :meth:`IndexingMap.constrained_bounds`."""
        return self._with_defined_ranges().base.result_bounds()

    def pieces(self) -> list[IndexingMap]:
        """The map as plain maps with constraints whose relations' union is the map's
        (module docstring); known-empty pieces left out. Past :data:`MAX_PIECES` pieces,
        :class:`~hlo_indexing.errors.LimitExceededError`."""
        pieces = [(self.base, ax.symbol_list(self.base.num_symbols, self.base.context))]
        for d in self.definitions:
            next_pieces = []
            for piece, replacement in pieces:
                lhs, rhs = (_substituted(e, piece, replacement) for e in (d.lhs, d.rhs))
                difference = _simplify_expr(piece, ax.add(lhs, ax.mul(rhs, -1)))
                for operand, part in choices(d.kind, lhs, rhs, piece.expr_bounds(difference)):
                    chosen = piece.add_constraint(difference, part) if part != piece.expr_bounds(difference) else piece
                    if chosen.is_known_empty():
                        continue
                    updated = list(replacement)
                    updated[d.symbol] = operand
                    next_pieces.append((chosen, updated))
            if len(next_pieces) > MAX_PIECES:
                raise LimitExceededError(
                    f"the map's min/max make more than {MAX_PIECES} pieces (maps.minmax.MAX_PIECES)",
                    limit="MAX_PIECES", value=len(next_pieces),
                )
            pieces = next_pieces
        return [_drop_defined(_apply(piece, replacement), self.defined) for piece, replacement in pieces]

    def relation(self, max_points: int | None = None) -> set[tuple[tuple[int, ...], tuple[int, ...]]]:
        """Every ``(dims, results)`` pair of the map (the union of its pieces')."""
        found: set[tuple[tuple[int, ...], tuple[int, ...]]] = set()
        for piece in self.pieces():
            found |= piece.relation() if max_points is None else piece.relation(max_points)
        return found

    # ---------------------------------------------------------------- algebra

    def simplify(self) -> "IndexingMap | ClampedMap":
        """Range-aware simplification (module docstring): decided min/max are replaced by
        the operand they pick, the rest of the map simplified as a plain map; a map left
        without min/max is a plain ``IndexingMap``."""
        m = self._with_defined_ranges()
        for d in m.definitions:
            lhs, rhs = _simplify_expr(m.base, d.lhs), _simplify_expr(m.base, d.rhs)
            difference = _simplify_expr(m.base, ax.add(lhs, ax.mul(rhs, -1)))
            picked = choices(d.kind, lhs, rhs, m.base.expr_bounds(difference))
            if len(picked) == 1 or lhs == rhs:
                value = picked[0][0]
                later = tuple(
                    Definition(o.symbol, o.kind, _replace_in(o.lhs, m.base, d.symbol, value), _replace_in(o.rhs, m.base, d.symbol, value))
                    for o in m.definitions if o is not d
                )
                return ClampedMap(_replace_symbol(m.base, d.symbol, value), later)._without_symbols({d.symbol}).simplify()
        base = m.base.simplify()
        if base.is_known_empty() or base.is_undefined:
            return base
        if (base.num_dims, base.num_symbols) != (m.base.num_dims, m.base.num_symbols):
            base = m.base  # (simplifying keeps the variables; kept as they are otherwise)
        out = ClampedMap(base, m.definitions)
        used = out._used_with_definitions()
        out = out._without_symbols({d.symbol for d in out.definitions if d.symbol not in used})
        return out.base if not out.definitions else out

    def _with_defined_ranges(self) -> "ClampedMap":
        """The map with each defined variable's range set from its definition (its
        operands' :meth:`IndexingMap.constrained_bounds`)."""
        base = self.base
        for d in self.definitions:
            bounds = d.bounds(*base.constrained_bounds([d.lhs, d.rhs]))
            base = _set_symbol_range(base, d.symbol, bounds)
        return ClampedMap(base, self.definitions)

    def _used_with_definitions(self) -> set[int]:
        """The symbols the results and constraints use, directly or through definitions."""
        used = _used_symbols(self.base, [])
        for d in reversed(self.definitions):
            if d.symbol in used:
                ax.used_variables(d.lhs, set(), used)
                ax.used_variables(d.rhs, set(), used)
        return used

    def _without_symbols(self, dropped: set[int]) -> "ClampedMap":
        """The map without the (unused) symbols ``dropped`` and their definitions, the
        other symbols renumbered."""
        if not dropped:
            return self
        keep = [j for j in range(self.base.num_symbols) if j not in dropped]
        position = {old: new for new, old in enumerate(keep)}
        base = _keep_symbols(self.base, keep)
        renumber = [ax.symbol(position[j], base.context) if j in position else ax.constant(0, base.context)
                    for j in range(self.base.num_symbols)]
        dims = ax.dim_list(base.num_dims, base.context)
        definitions = tuple(
            Definition(position[d.symbol], d.kind, ax.substitute(d.lhs, dims, renumber), ax.substitute(d.rhs, dims, renumber))
            for d in self.definitions if d.symbol in position
        )
        return ClampedMap(base, definitions)

    # ---------------------------------------------------------------- text

    def __str__(self) -> str:
        return text.print_parts(_parts(self.base), inline=self._inline_texts())

    def _inline_texts(self) -> dict[int, str]:
        """The printed ``min(...)``/``max(...)`` of each defined variable (named as
        :func:`~hlo_indexing.maps.text.print_parts` names the other variables)."""
        base = self.base
        defined = self.defined
        visible = [v for j, v in enumerate(base.range_vars) if j not in defined]
        dims, symbols = text.variable_names(base.dim_vars, visible, base.runtime_vars)
        found = iter(symbols)
        names = [f"<s{j}>" if j in defined else next(found) for j in range(base.num_symbols)]
        inline: dict[int, str] = {}
        for d in self.definitions:
            operands = [text.print_expr(e, dims, names) for e in (d.lhs, d.rhs)]
            inline[d.symbol] = f"{d.kind}({operands[0]}, {operands[1]})"
            names[d.symbol] = inline[d.symbol]
        return inline

    def __repr__(self) -> str:
        return f"ClampedMap({str(self)!r})"


def _parts(m: IndexingMap) -> MapParts:
    affine_map = m.affine_map
    assert affine_map is not None  # a defined map
    return MapParts(affine_map, m.dim_vars, m.range_vars, m.runtime_vars, m.constraints)


def _substituted(expr: ir.AffineExpr, m: IndexingMap, replacement: Sequence[ir.AffineExpr]) -> ir.AffineExpr:
    return ax.substitute(expr, ax.dim_list(m.num_dims, m.context), list(replacement))


def _apply(m: IndexingMap, replacement: Sequence[ir.AffineExpr]) -> IndexingMap:
    """``m`` with its symbols replaced by ``replacement`` in results and constraints."""
    dims = ax.dim_list(m.num_dims, m.context)
    results = [ax.substitute(e, dims, list(replacement)) for e in m.results]
    out = m.replace(affine_map=ir.AffineMap.get(m.num_dims, m.num_symbols, results, m.context), constraints={})
    for expr, interval in m.constraints.items():
        out = out.add_constraint(ax.substitute(expr, dims, list(replacement)), interval)
    return out


def _replace_symbol(m: IndexingMap, symbol: int, value: ir.AffineExpr) -> IndexingMap:
    replacement = ax.symbol_list(m.num_symbols, m.context)
    replacement[symbol] = value
    return _apply(m, replacement)


def _replace_in(expr: ir.AffineExpr, m: IndexingMap, symbol: int, value: ir.AffineExpr) -> ir.AffineExpr:
    replacement = ax.symbol_list(m.num_symbols, m.context)
    replacement[symbol] = value
    return _substituted(expr, m, replacement)


def _set_symbol_range(m: IndexingMap, symbol: int, bounds: Interval) -> IndexingMap:
    n_range = len(m.range_vars)
    ranges = list(m.range_vars)
    ranges[symbol] = Variable(bounds, ranges[symbol].name) if symbol < n_range else ranges[symbol]
    return m.replace(ranges=ranges)


def _used_symbols(m: IndexingMap, definitions: Iterable[Definition]) -> set[int]:
    used: set[int] = set()
    for e in [*m.results, *m.constraints]:
        ax.used_variables(e, set(), used)
    for d in definitions:
        ax.used_variables(d.lhs, set(), used)
        ax.used_variables(d.rhs, set(), used)
    return used


def _keep_symbols(m: IndexingMap, keep: list[int]) -> IndexingMap:
    """``m`` with only the symbols ``keep`` (in order; the others must be unused)."""
    zero = ax.constant(0, m.context)
    position = {old: new for new, old in enumerate(keep)}
    replacement = [ax.symbol(position[j], m.context) if j in position else zero for j in range(m.num_symbols)]
    dims = ax.dim_list(m.num_dims, m.context)
    results = [ax.substitute(e, dims, replacement) for e in m.results]
    n_range = len(m.range_vars)
    constraints = {ax.substitute(e, dims, replacement): c for e, c in m.constraints.items()}
    return IndexingMap.from_exprs(
        m.dim_vars,
        results,
        [m.symbol_vars[j] for j in keep if j < n_range],
        [m.symbol_vars[j] for j in keep if j >= n_range],
        constraints,
        m.context,
    )


def _drop_defined(m: IndexingMap, defined: frozenset[int]) -> IndexingMap:
    """A piece without the (now unused) defined variables."""
    if m.is_known_empty() or m.is_undefined:
        return m
    return _keep_symbols(m, [j for j in range(m.num_symbols) if j not in defined])


def _simplify_expr(m: IndexingMap, expr: ir.AffineExpr) -> ir.AffineExpr:
    """``expr`` simplified over ``m``'s variables and ranges."""
    single = m.replace(affine_map=ir.AffineMap.get(m.num_dims, m.num_symbols, [expr], m.context), constraints={})
    out = single.simplify()
    return out.results[0] if not out.is_known_empty() and out.num_symbols == m.num_symbols else expr


# --------------------------------------------------------------------- text


def parse_clamped_map(source: str, context: "ir.Context | None" = None, *, filename: str = "<indexing map>") -> "IndexingMap | ClampedMap":
    """Read XLA's text form of a map, ``min``/``max`` included (module docstring); a map
    without them is a plain ``IndexingMap``. Errors as for ``IndexingMap.parse``."""
    context = context or current_or_default_context()
    parsed = text.parse_map_text(source, context, filename=filename, min_max=True)
    if not parsed.definitions:
        return IndexingMap.parse(source, context, filename=filename)
    assert parsed.parts is not None  # a map with min/max has parts
    affine_map, dims, ranges, runtimes, constraints = parsed.parts
    base = IndexingMap._make(affine_map, dims, ranges, runtimes, {})
    for expr, interval in constraints.items():
        base = base.add_constraint(expr, interval)
    definitions = tuple(Definition(symbol, kind, lhs, rhs) for kind, lhs, rhs, symbol in parsed.definitions)
    return ClampedMap(base, definitions)


# --------------------------------------------------------------------- composition


def compose(consumer: "IndexingMap | ClampedMap", producer: "IndexingMap | ClampedMap") -> "IndexingMap | ClampedMap":
    """``x -> producer(consumer(x))`` for plain or clamped maps: the bases composed as
    :func:`hlo_indexing.maps.algebra.compose` composes maps (its symbol order: producer
    range variables, consumer range variables, producer runtime, consumer runtime
    variables), the definitions of both carried to their variables' new positions (the
    producer's with its dimensions replaced by the consumer's results)."""
    c_base, c_defs = (consumer.base, consumer.definitions) if isinstance(consumer, ClampedMap) else (consumer, ())
    p_base, p_defs = (producer.base, producer.definitions) if isinstance(producer, ClampedMap) else (producer, ())
    composed = compose_plain(c_base, p_base)
    if not c_defs and not p_defs:
        return composed
    if composed.is_undefined or composed.is_known_empty():
        return composed
    context = composed.context
    pr, cr = len(p_base.range_vars), len(c_base.range_vars)
    prt = len(p_base.runtime_vars)
    symbols = ax.symbol_list(composed.num_symbols, context)
    producer_symbols = symbols[:pr] + symbols[pr + cr : pr + cr + prt]
    consumer_symbols = symbols[pr : pr + cr] + symbols[pr + cr + prt :]
    consumer_dims = ax.dim_list(c_base.num_dims, context)
    inner = [ax.substitute(e, consumer_dims, consumer_symbols) for e in c_base.results]
    definitions = [
        Definition(d.symbol + pr, d.kind, ax.substitute(d.lhs, consumer_dims, consumer_symbols),
                   ax.substitute(d.rhs, consumer_dims, consumer_symbols))
        for d in c_defs
    ]
    # The consumer's defined variables are computed before the producer's, which may use them.
    definitions += [
        Definition(d.symbol, d.kind, ax.substitute(d.lhs, inner, producer_symbols), ax.substitute(d.rhs, inner, producer_symbols))
        for d in p_defs
    ]
    return ClampedMap(composed, tuple(definitions))


# --------------------------------------------------------------------- attributes


def clamped_map_to_attribute(m: "IndexingMap | ClampedMap", context: "ir.Context | None" = None) -> "ir.Attribute":
    """The attribute form of a plain map (:func:`~hlo_indexing.maps.attributes.indexing_map_to_attribute`)
    or of a clamped one: its base's, with ``definitions``, one ``[symbol, lhs and rhs as
    affine_map<(dims)[symbols] -> (lhs, rhs)>]`` per defined variable and ``kinds``
    (``"min"``/``"max"``, in order)."""
    if isinstance(m, IndexingMap):
        return indexing_map_to_attribute(m, context)
    context = context or m.base.context
    entries = _named(ir.DictAttr(indexing_map_to_attribute(m.base, context)))
    base = m.base
    entries["definitions"] = ir.ArrayAttr.get([
        ir.ArrayAttr.get([
            ir.IntegerAttr.get(ir.IntegerType.get_signless(64, context), d.symbol),
            ir.AffineMapAttr.get(ir.AffineMap.get(base.num_dims, base.num_symbols, [d.lhs, d.rhs], context)),
        ], context)
        for d in m.definitions
    ], context)
    entries["kinds"] = ir.ArrayAttr.get([ir.StringAttr.get(d.kind, context) for d in m.definitions], context)
    entries["text"] = ir.StringAttr.get(str(m), context)
    return ir.DictAttr.get(entries, context)


def clamped_map_from_attribute(attribute: "ir.Attribute") -> "IndexingMap | ClampedMap":
    """The map of an attribute written by :func:`clamped_map_to_attribute`."""
    entries = ir.DictAttr(attribute)
    if "definitions" not in entries:
        return indexing_map_from_attribute(attribute)
    base_entries = {k: v for k, v in _named(entries).items() if k not in ("definitions", "kinds", "text")}
    base = indexing_map_from_attribute(ir.DictAttr.get(base_entries, attribute.context))
    kinds = [ir.StringAttr(k).value for k in ir.ArrayAttr(entries["kinds"])]
    definitions = []
    for kind, entry in zip(kinds, ir.ArrayAttr(entries["definitions"]), strict=True):
        symbol_attr, operands = ir.ArrayAttr(entry)
        lhs, rhs = ir.AffineMapAttr(operands).value.results
        definitions.append(Definition(ir.IntegerAttr(symbol_attr).value, kind, lhs, rhs))
    return ClampedMap(base, tuple(definitions))


def _named(attribute: "ir.DictAttr") -> dict[str, "ir.Attribute"]:
    """The entries of a dictionary attribute by name."""
    return {attribute[i].name: attribute[i].attr for i in range(len(attribute))}
