"""A time budget per fusion for the tiling passes (``fusion-seconds=``, issue #28).

The analysis, the ranking and the exactness of one computation run inside
:func:`fusion_time_budget`; their loops call :func:`check_time`, which raises
:class:`~hlo_indexing.errors.TimeLimitError` (``limit="FUSION_SECONDS"``) once the
budget is spent. The budget is CPU time of the process (``time.process_time``): a
fusion gets the same answer on a loaded machine as on an idle one. The passes catch it
per computation: that computation is reported not tiled (a warning naming the budget),
the others are still tiled. Outside a budget :func:`check_time` does nothing. Example::

    with fusion_time_budget(2.0):
        fusion = analyze_fusion(op)   # TimeLimitError after 2 s of CPU time
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from hlo_indexing.errors import TimeLimitError

#: (deadline in process CPU time, the budget in seconds) of the computation being tiled.
_DEADLINE: ContextVar[tuple[float, float] | None] = ContextVar("hlo_indexing_fusion_deadline", default=None)


@contextmanager
def fusion_time_budget(seconds: float) -> Iterator[None]:
    """Run the block under a budget of ``seconds`` (none when ``seconds <= 0``)."""
    token = _DEADLINE.set((time.process_time() + seconds, seconds) if seconds > 0 else None)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def check_time(what: str) -> None:
    """:class:`TimeLimitError` naming ``what`` when the current budget is spent."""
    found = _DEADLINE.get()
    if found is not None and time.process_time() > found[0]:
        raise TimeLimitError(
            f"{what} took longer than the budget of {found[1]:g} CPU seconds per fusion (option fusion-seconds, "
            "default limits.FUSION_SECONDS)",
            limit="FUSION_SECONDS",
            value=found[1],
        )
