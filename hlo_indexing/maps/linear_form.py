"""Linear forms of affine expressions: ``sum(coeff * atom) + constant`` with the atoms
the non-sum subexpressions (dimensions, symbols, ``mod``/``floordiv``/``ceildiv`` and
non-constant products), and the way back to a uniqued ``ir.AffineExpr``.

The simplifiers (:mod:`hlo_indexing.maps.expr_simplifier`,
:mod:`hlo_indexing.maps.simplifier`) and the coalescing analysis reason on these forms.

Example::

    form = linearize(d0 * 4 + (d1 + 3) * 2)   # terms {d0: 4, d1: 2}, constant 6
    build(form, context)                      # d0 * 4 + d1 * 2 + 6
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hlo_indexing.dialect_glue.bindings import AffineExpr, Context
from hlo_indexing.limits import check_int64
from hlo_indexing.maps import affine_expr as ax


class Linear:
    """``sum(coeff * atom) + constant``: an expression as a sum of non-sum atoms."""

    __slots__ = ("terms", "constant")

    def __init__(self, terms: dict[AffineExpr, int] | None = None, constant: int = 0):
        self.terms: dict[AffineExpr, int] = terms if terms is not None else {}
        self.constant = constant

    def add(self, atom: AffineExpr, coeff: int) -> None:
        """Add ``coeff * atom`` (a term whose coefficient becomes 0 is dropped)."""
        value = self.terms.get(atom, 0) + coeff
        if value:
            self.terms[atom] = value
        else:
            self.terms.pop(atom, None)

    def add_linear(self, other: "Linear", scale: int = 1) -> None:
        """Add ``scale * other``."""
        for atom, coeff in other.terms.items():
            self.add(atom, coeff * scale)
        self.constant += other.constant * scale

    def copy(self) -> "Linear":
        """An independent copy (the terms are not shared)."""
        return Linear(dict(self.terms), self.constant)


def linearize(expr: AffineExpr) -> Linear:
    """The linear form of ``expr`` (sums and products by constants are flattened). A
    sum too deep for the recursive walk (a sum of thousands of terms, as composition or
    the Python API may build) is flattened again on an explicit stack."""
    out = Linear()
    try:
        _linearize_into(ax.typed(expr), 1, out)
    except RecursionError:
        out = Linear()
        stack: list[tuple[Any, int]] = [(ax.typed(expr), 1)]
        while stack:
            node, scale = stack.pop()
            kind = type(node)
            if kind is ax.Const:
                out.constant += node.value * scale
            elif kind is ax.Add:
                stack.append((node.rhs, scale))
                stack.append((node.lhs, scale))
            elif kind is ax.Mul and type(rhs := node.rhs) is ax.Const:
                stack.append((node.lhs, scale * rhs.value))
            elif kind is ax.Mul and type(lhs := node.lhs) is ax.Const:
                stack.append((node.rhs, scale * lhs.value))
            else:
                out.add(node, scale)
    return out


def _linearize_into(expr: Any, scale: int, out: Linear) -> None:
    # ``expr`` is typed (children read through .lhs/.rhs are): dispatch on its class.
    kind = type(expr)
    if kind is ax.Const:
        out.constant += expr.value * scale
    elif kind is ax.Add:
        _linearize_into(expr.lhs, scale, out)
        _linearize_into(expr.rhs, scale, out)
    elif kind is ax.Mul and type(rhs := expr.rhs) is ax.Const:
        _linearize_into(expr.lhs, scale * rhs.value, out)
    elif kind is ax.Mul and type(lhs := expr.lhs) is ax.Const:
        _linearize_into(expr.rhs, scale * lhs.value, out)
    else:
        out.add(expr, scale)


def atom_order(atom: AffineExpr) -> tuple[int, int, str]:
    """Sort key of atoms: dimensions, then symbols (by position), then other atoms by text."""
    variable: Any = atom  # typed by the bindings: dispatch on its class
    kind = type(variable)  # (the expression classes have no subclasses: as isinstance, cheaper)
    if kind is ax.Dim:
        return (0, variable.position, "")
    if kind is ax.Sym:
        return (1, variable.position, "")
    return (2, 0, str(atom))


def build(linear: Linear, context: Context) -> AffineExpr:
    """The ``ir.AffineExpr`` of a linear form, terms in a deterministic order."""
    expr: AffineExpr | None = None
    check_int64(linear.constant, "constant of a simplified expression")
    variables_only = True
    for atom in sorted(linear.terms, key=atom_order):
        coeff = check_int64(linear.terms[atom], "coefficient of a simplified expression")
        term = atom if coeff == 1 else atom * coeff
        expr = term if expr is None else expr + term
        variables_only = variables_only and (type(atom) is ax.Dim or type(atom) is ax.Sym)
    if expr is None:
        return ax.constant(linear.constant, context)
    built = ax.typed(expr + linear.constant if linear.constant else expr)
    # Distinct variables times non-zero factors, the constant last: MLIR folds nothing
    # while adding them up, so the sum is already the left-associated tree.
    return built if variables_only else _left_associated(built)


def _left_associated(expr: AffineExpr) -> AffineExpr:
    """The tree MLIR builds when it parses the printed form of ``expr``: the summands in
    printed order, added left to right (repeated until MLIR's folding is stable), so
    that equal texts give equal (uniqued) expressions."""
    for _ in range(4):
        summands: list[AffineExpr] = []
        stack = [expr]
        while stack:
            node = stack.pop()
            if isinstance(node, ax.Add):
                stack.append(node.rhs)
                stack.append(node.lhs)
            else:
                summands.append(node)
        rebuilt = summands[0]
        for term in summands[1:]:
            rebuilt = rebuilt + term
        rebuilt = ax.typed(rebuilt)
        if rebuilt == expr:
            break
        expr = rebuilt
    return expr


class LinearForms:
    """Linear forms of expressions and expressions of linear forms, remembered: a memo
    for work that rewrites the same expressions again and again (the rounds of one map's
    simplification). Both are independent of variable ranges. Example::

        forms = LinearForms()
        forms.of(d0 * 4 + d1 * 2)          # Linear({d0: 4, d1: 2}); shared, do not modify
        forms.build(Linear({d0: 4}), ctx)  # d0 * 4, linear form remembered
    """

    __slots__ = ("_forms", "_exprs", "_variable_sums")

    def __init__(self) -> None:
        self._forms: dict[AffineExpr, Linear] = {}
        self._exprs: dict[tuple[frozenset[tuple[AffineExpr, int]], int], AffineExpr] = {}
        self._variable_sums: dict[AffineExpr, Linear | None] = {}

    def of(self, expr: AffineExpr) -> Linear:
        """:func:`linearize` of ``expr``, remembered (the object is shared: copy it before
        changing it)."""
        found = self._forms.get(expr)
        if found is None:
            found = self._forms[expr] = linearize(expr)
        return found

    def variable_sum(self, expr: AffineExpr) -> Linear | None:
        """:meth:`of` ``expr`` when it is a sum of variables (:func:`is_variable_sum`), else
        None; remembered."""
        found = self._variable_sums.get(expr, False)
        if found is False:
            form = self.of(expr)
            found = self._variable_sums[expr] = form if is_variable_sum(form) else None
        return found  # type: ignore[return-value]  # False is the memo's "not yet"

    def build(self, linear: Linear, context: Context) -> AffineExpr:
        """:func:`build` of ``linear``, remembered, and the result's linear form with it."""
        key = (frozenset(linear.terms.items()), linear.constant)
        found = self._exprs.get(key)
        if found is None:
            found = self._exprs[key] = build(linear, context)
            self._forms.setdefault(found, linear.copy())
        return found


def is_variable_sum(linear: Linear) -> bool:
    """Whether every atom of ``linear`` is a dimension or a symbol (the expression it
    came from holds no ``mod``, division or product of variables)."""
    return all(type(atom) is ax.Dim or type(atom) is ax.Sym for atom in linear.terms)


def single_dimension_forms(results: Sequence[AffineExpr]) -> list[tuple[int | None, int, int]] | None:
    """``(d, a, c)`` per expression when each is ``a * d<d> + c`` of one dimension (``d``
    None: the constant ``c``) and no two use the same dimension; else None. Such a map
    is *separable*: along each dimension its image is an arithmetic progression."""
    forms: list[tuple[int | None, int, int]] = []
    seen: set[int] = set()
    for expr in results:
        form = linearize(expr)
        if not form.terms:
            forms.append((None, 0, form.constant))
            continue
        if len(form.terms) != 1:
            return None
        ((atom, coefficient),) = form.terms.items()
        atom = ax.typed(atom)
        if not isinstance(atom, ax.Dim) or atom.position in seen:
            return None
        seen.add(atom.position)
        forms.append((atom.position, coefficient, form.constant))
    return forms
