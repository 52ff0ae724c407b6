"""The names JAX gives a function's arguments and results, where the program carries them.

``jax.jit(f).lower(params, batch)`` writes each result's pytree path as an attribute,
``jax.result_info = "result['loss']"``, and each argument's as its location,
``loc("params['w']")`` (a name with no file position; older JAX wrote the attribute
``jax.arg_info``). XLA's optimised HLO (``compiled.as_text()``) keeps an entry
parameter's name as its ``metadata={op_name="params['w']"}``: :func:`entry_parameter_names`
reads them, and :func:`name_arguments` writes them as ``jax.arg_info`` where the HLO
importer left only the instruction names. Without such names an argument or result has
None (it is shown by position, ``arg 3``). An HLO instruction name (a name location
around a file position, as the HLO importer writes) is not JAX's name.

Example::

    >>> argument_names(main), result_names(main)   # doctest: +SKIP
    (("params['b']", "params['w']", "batch['x']", "batch['y']"), ("result['loss']", "result['pred']"))
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from hlo_indexing.dialect_glue.bindings import OpLike, ir
from hlo_indexing.dialect_glue.locations import bare_location_name

#: The result attribute JAX writes (``jax.result_info = "result['loss']"``).
RESULT_ATTRIBUTE = "jax.result_info"
#: The argument attribute older JAX wrote (current JAX writes the name as the location).
ARGUMENT_ATTRIBUTE = "jax.arg_info"

# An HLO parameter instruction: "%name = type parameter(N)..., metadata={op_name="..."}"
_PARAMETER = re.compile(r"=\s*[^=]*?\bparameter\((\d+)\).*?\bop_name=\"((?:[^\"\\]|\\.)*)\"")
_ESCAPE = re.compile(r"\\(.)")


def result_names(function: OpLike) -> tuple[str | None, ...]:
    """Each result's ``jax.result_info`` of the ``func.func`` ``function`` (None where
    there is none); () for any other op."""
    if function.operation.name != "func.func":
        return ()
    return tuple(_attribute_strings(function, "res_attrs", RESULT_ATTRIBUTE, _result_count(function)))


def _result_count(function: OpLike) -> int:
    return len(ir.FunctionType(ir.TypeAttr(function.operation.attributes["function_type"]).value).results)


def argument_names(function: OpLike) -> tuple[str | None, ...]:
    """Each argument's JAX name in the ``func.func`` ``function``: its ``jax.arg_info``,
    else its location when that is a bare name (``loc("params['w']")``); None where there
    is neither, and for any other op."""
    operation = function.operation
    if operation.name != "func.func" or not operation.regions[0].blocks:
        return ()
    arguments = list(operation.regions[0].blocks[0].arguments)
    attributes = _attribute_strings(function, "arg_attrs", ARGUMENT_ATTRIBUTE, len(arguments))
    return tuple(found or bare_location_name(argument.location) for found, argument in zip(attributes, arguments))


def _attribute_strings(function: OpLike, list_name: str, key: str, count: int) -> list[str | None]:
    """``key`` of each dictionary of the ``func.func``'s ``list_name`` array attribute
    (``arg_attrs``/``res_attrs``), as a string; None where absent."""
    operation = function.operation
    found: list[str | None] = [None] * count
    if operation.name != "func.func" or list_name not in operation.attributes:
        return found
    for index, entry in enumerate(ir.ArrayAttr(operation.attributes[list_name])):
        dictionary = ir.DictAttr(entry)
        if index < count and key in dictionary and isinstance(dictionary[key], ir.StringAttr):
            found[index] = ir.StringAttr(dictionary[key]).value
    return found


def entry_parameter_names(hlo_text: str) -> dict[int, str]:
    """Parameter number -> ``op_name`` of the ENTRY computation's parameters in XLA's HLO
    text (JAX names them after the pytree paths of the arguments)."""
    entry = hlo_text.find("\nENTRY ")
    if entry < 0:
        return {}
    end = hlo_text.find("\n}", entry)
    names = {}
    for line in hlo_text[entry : end if end >= 0 else len(hlo_text)].splitlines():
        match = _PARAMETER.search(line)
        if match is not None:
            names[int(match.group(1))] = _ESCAPE.sub(r"\1", match.group(2))
    return names


def name_arguments(function: OpLike, names: Mapping[int, str]) -> None:
    """Write ``names`` (argument number -> name) as the ``jax.arg_info`` of the arguments
    of the ``func.func`` ``function``, keeping their other attributes."""
    count = len(function.operation.regions[0].blocks[0].arguments)
    _write_strings(function, "arg_attrs", ARGUMENT_ATTRIBUTE, names, count)


def name_results(function: OpLike, names: Sequence[str]) -> None:
    """Write ``names`` (one per result) as the ``jax.result_info`` of the results of the
    ``func.func`` ``function``, keeping their other attributes."""
    _write_strings(function, "res_attrs", RESULT_ATTRIBUTE, dict(enumerate(names)), _result_count(function))


def _write_strings(function: OpLike, list_name: str, key: str, values: Mapping[int, str], count: int) -> None:
    """Set ``key`` to ``values[i]`` in dictionary ``i`` of the ``func.func``'s
    ``list_name`` array attribute (``count`` dictionaries, the others' entries kept)."""
    operation = function.operation
    old = list(ir.ArrayAttr(operation.attributes[list_name])) if list_name in operation.attributes else []
    entries: list[ir.Attribute] = []
    for index in range(count):
        items = {} if index >= len(old) else _entries(ir.DictAttr(old[index]))
        if index in values:
            items[key] = ir.StringAttr.get(values[index], operation.context)
        entries.append(ir.DictAttr.get(items, operation.context))
    operation.attributes[list_name] = ir.ArrayAttr.get(entries, operation.context)


def _entries(dictionary: ir.DictAttr) -> dict[str, ir.Attribute]:
    """The name -> attribute entries of ``dictionary``."""
    return {named.name: named.attr for named in (dictionary[k] for k in range(len(dictionary)))}
