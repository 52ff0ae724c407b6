"""Memos never carry an object of one MLIR context to a caller working in another, and a
process that makes a context per input (the CLI run in-process, a fuzz worker, a
notebook) keeps a bounded number of contexts alive: the package's memos live per
context, for the ``MAX_MEMO_CONTEXTS`` most recently used ones
(:func:`hlo_indexing.dialect_glue.context.context_memo`).

Before, the compose/simplify memo handed a known-empty map of one context to a caller in
another (known-empty maps compare equal across contexts), and the memos kept every
context they had an entry of alive, with its thread pool: a fuzz worker grew past 600
threads and 3 GB in 18,000 CLI cases."""

from __future__ import annotations

import contextlib
import gc
import io
from pathlib import Path

from hlo_indexing.dialect_glue.bindings import ir
from hlo_indexing.dialect_glue.context import MAX_MEMO_CONTEXTS, context_memo, make_context
from hlo_indexing.maps.algebra import compose
from hlo_indexing.maps.indexing_map import IndexingMap
from hlo_indexing.tools import opt

LIT = Path(__file__).resolve().parents[1] / "lit_tests"


def test_a_memo_hit_stays_in_the_callers_context() -> None:
    first, second = make_context(), make_context()
    empty_first = IndexingMap.known_empty(2, 0, 1, first)
    empty_second = IndexingMap.known_empty(2, 0, 1, second)
    assert empty_first == empty_second  # equal maps, so one memo key for both
    producer_first = IndexingMap.known_empty(1, 0, 3, first)
    producer_second = IndexingMap.known_empty(1, 0, 3, second)
    assert empty_first.simplify().context is first
    assert compose(empty_first, producer_first).context is first
    assert empty_second.simplify().context is second
    assert compose(empty_second, producer_second).context is second


def test_memo_tables_are_kept_for_the_latest_contexts_only() -> None:
    contexts = [make_context() for _ in range(MAX_MEMO_CONTEXTS + 1)]
    for k, ctx in enumerate(contexts):
        context_memo(ctx, "test")[k] = ctx
    assert context_memo(contexts[-1], "test") == {len(contexts) - 1: contexts[-1]}
    assert context_memo(contexts[0], "test") == {}  # the oldest context's tables were dropped


def _live_contexts() -> int:
    gc.collect()
    return ir.Context._get_live_count()


def test_cli_runs_in_process_keep_a_bounded_number_of_contexts() -> None:
    inputs = [str(LIT / "ops" / "ops-stablehlo.mlir"), str(LIT / "ops" / "ops-mhlo.mlir")]
    flags = (["--hlo-attach-indexing-maps"], ["--hlo-attach-fused-indexing-maps", "--cse"], ["--hlo-print-indexing-maps"])
    opt.main([inputs[0], *flags[0]])  # the memo tables now hold contexts of this process
    before = _live_contexts()
    runs = 3 * MAX_MEMO_CONTEXTS
    for k in range(runs):
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            assert opt.main([inputs[k % 2], *flags[k % 3]]) == 0
    assert _live_contexts() <= max(before, MAX_MEMO_CONTEXTS + 1)
