"""Run a native step that may kill its process (XLA's HLO parser CHECK-fails, aborts or
allocates without bound on some malformed text) outside the host process, so that the
host (a user's JAX session, a notebook, our CLI) survives.

:func:`run_isolated` sends the call to a small server process
(``python -m hlo_indexing.dialect_glue.isolation``, started on first use and kept) that
forks one child per call. The server only imports modules, so it forks without the
threads of the host (MLIR thread pools, XLA): forking the host itself deadlocked now
and then in the child. The child runs the function with its stderr going to a
temporary file and its address space capped (``limits.ISOLATED_MEMORY_BYTES`` above the
server's, never above the limit the host inherited: a user's ``ulimit -v`` stays the
child's when it is lower, see :func:`memory_cap`); its pickled result comes back through
the server. A child that runs out of memory (a ``MemoryError``, or a native
``std::bad_alloc`` abort) gives :class:`~hlo_indexing.errors.MemoryLimitError` naming the
cap that was hit, the user's or ours. A child that dies otherwise gives
:class:`ChildDied` (the signal or exit status and the last native log lines, e.g.
XLA's ``Check failed: ...``); a call that runs longer than ``limits.HLO_PARSE_SECONDS``
gives :class:`~hlo_indexing.errors.TimeLimitError` (the server is killed, and started
again by the next call).

Measured on a 2-core machine (``benchmarks/bench_hlo_import.py``): 15-30 ms per HLO
module over parsing in-process, and ~1 s once per process to start the server. The
function must be importable by name (module-level) and its arguments picklable.
Where ``os.fork`` does not exist (Windows) the function runs in-process.

A step that cannot kill its process but may run without bound (an isl proof:
:mod:`hlo_indexing.maps.exact`) runs in the server itself (``fork=False``: ~0.1 ms per
call instead of a fork's ~20 ms), under its own time limit (``limit`` names the
constant of :mod:`hlo_indexing.limits`); the server's CPU time is capped for the call
(``RLIMIT_CPU``, no core file), so that a server whose host died does not run on.
"""

from __future__ import annotations

import faulthandler
import importlib
import os
import pickle
import resource
import select
import signal
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import IO, TypeVar, overload

from hlo_indexing import limits
from hlo_indexing.errors import MemoryLimitError, SourceLocation, TimeLimitError

_T = TypeVar("_T")

_HEADER = struct.Struct("<Q")


class ChildDied(Exception):
    """The isolated child ended without a result: ``how`` says how (``signal SIGABRT``,
    ``exit status 1``), ``log`` holds its last native log lines."""

    def __init__(self, how: str, log: str):
        super().__init__(how, log)  # both in args: the exception crosses a pickle
        self.how, self.log = how, log


# ----------------------------------------------------------------------------- framing


def _write_frame(stream: IO[bytes], payload: bytes) -> None:
    stream.write(_HEADER.pack(len(payload)) + payload)
    stream.flush()


def _read_exactly(fd: int, size: int, deadline: float | None) -> bytes | None:
    """``size`` bytes from ``fd``; None at end of file; TimeoutError past ``deadline``."""
    chunks: list[bytes] = []
    while size:
        if deadline is not None:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
                raise TimeoutError
        chunk = os.read(fd, min(size, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def _read_frame(fd: int, deadline: float | None = None) -> bytes | None:
    header = _read_exactly(fd, _HEADER.size, deadline)
    if header is None:
        return None
    return _read_exactly(fd, _HEADER.unpack(header)[0], deadline)


# ----------------------------------------------------------------------------- server side


def _address_space() -> int | None:
    try:
        with open("/proc/self/statm", encoding="ascii") as handle:
            return int(handle.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def memory_cap(current: int | None) -> tuple[int | None, bool]:
    """The address-space limit of a child of a process using ``current`` bytes:
    ``limits.ISOLATED_MEMORY_BYTES`` above ``current``, unless the limit this process
    inherited (``ulimit -v``, a soft ``RLIMIT_AS``; never above the hard one) is lower.
    Returns ``(bytes or None for no limit, whether the inherited limit is the one)``."""
    soft, _hard = resource.getrlimit(resource.RLIMIT_AS)  # soft <= hard
    inherited = None if soft == resource.RLIM_INFINITY else soft
    ours = None if current is None else current + limits.ISOLATED_MEMORY_BYTES
    if inherited is not None and (ours is None or inherited <= ours):
        return inherited, True
    return ours, False


def _raised(exc: BaseException) -> bytes:
    """The reply for a call that raised ``exc``: the exception, or its text when it
    does not pickle."""
    try:
        return pickle.dumps(("raised", exc))
    except Exception:  # noqa: BLE001 - an unpicklable exception: send its text
        return pickle.dumps(("raised", RuntimeError(f"{type(exc).__name__}: {exc}")))


def _child(function: Callable[..., object], args: tuple, write_fd: int, log_fd: int, cap: int | None, by_user: bool) -> None:
    """Body of the forked child: never returns."""
    code = 0
    try:
        faulthandler.disable()
        os.dup2(log_fd, 2)
        if cap is not None and not by_user:  # below the inherited soft and hard limits
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        payload = pickle.dumps(("ok", function(*args)))
    except MemoryError:
        payload = pickle.dumps(("memory", (cap, by_user)))
    except BaseException as exc:  # noqa: BLE001 - everything goes back to the caller
        payload = _raised(exc)
    try:
        with os.fdopen(write_fd, "wb") as out:
            out.write(payload)
    except OSError:
        code = 1
    os._exit(code)


#: Native log text of a child that ran out of memory (C++'s allocation failure).
_OUT_OF_MEMORY = ("std::bad_alloc", "Cannot allocate memory", "out of memory")


def _log_tail(log: IO[bytes]) -> str:
    log.seek(0)
    noise = ("File ", "Extension modules", "Thread 0x", "Current thread", "Fatal Python error", "Stack (most recent")
    lines = [line.strip() for line in log.read().decode("utf-8", "replace").splitlines() if line.strip()]
    lines = [line for line in lines if not line.startswith(noise)]
    checks = [line for line in lines if "Check failed" in line or "RET_CHECK" in line or "terminate" in line]
    return " ".join((checks or lines)[-2:])[:500]


def _resolve(target: str) -> Callable[..., object]:
    """The function named ``module:qualname`` (imported on first use)."""
    module, _, name = target.partition(":")
    function: Callable[..., object] = getattr(importlib.import_module(module), name)
    return function


def _serve_one(target: str, args: tuple) -> bytes:
    """Fork a child for ``target(*args)``; the pickled ``(kind, value)`` it ends with."""
    function = _resolve(target)
    read_fd, write_fd = os.pipe()
    cap, by_user = memory_cap(_address_space())
    with tempfile.TemporaryFile() as log:
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            os.close(read_fd)
            _child(function, args, write_fd, log.fileno(), cap, by_user)
        os.close(write_fd)
        with os.fdopen(read_fd, "rb") as result:
            payload = result.read()
        _, status = os.waitpid(pid, 0)
        if payload and os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:
            return payload
        if os.WIFSIGNALED(status):
            number = os.WTERMSIG(status)
            try:
                how = f"signal {signal.Signals(number).name}"
            except ValueError:
                how = f"signal {number}"
        else:
            how = f"exit status {os.WEXITSTATUS(status)}"
        tail = _log_tail(log)
        if any(sign in tail for sign in _OUT_OF_MEMORY):
            return pickle.dumps(("memory", (cap, by_user)))
        return pickle.dumps(("died", (how, tail)))


def _serve_in_server(target: str, args: tuple, seconds: float) -> bytes:
    """``target(*args)`` in the server itself, its CPU time capped at ``seconds`` (and a
    second) past what the server has used: beyond it SIGXCPU ends the server."""
    function = _resolve(target)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
    cap = int(usage.ru_utime + usage.ru_stime + seconds) + 2
    resource.setrlimit(resource.RLIMIT_CPU, (cap if hard == resource.RLIM_INFINITY else min(cap, hard), hard))
    try:
        payload = pickle.dumps(("ok", function(*args)))
    except Exception as exc:  # noqa: BLE001 - everything goes back to the caller
        payload = _raised(exc)
    finally:
        resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))
    return payload


def serve(preload: list[str]) -> None:
    """The server loop: one framed ``(target, args, fork, seconds)`` request in, one
    framed reply out."""
    replies = os.fdopen(os.dup(1), "wb")  # the protocol's own copy of stdout ...
    os.dup2(2, 1)  # ... so that anything printed by the code it runs cannot corrupt it
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # a call past its CPU cap leaves no core file
    for module in preload:
        importlib.import_module(module)
    requests = sys.stdin.buffer.fileno()
    while True:
        frame = _read_frame(requests)
        if frame is None:
            return
        target, args, fork, seconds = pickle.loads(frame)
        _write_frame(replies, _serve_one(target, args) if fork else _serve_in_server(target, args, seconds))


# ----------------------------------------------------------------------------- caller side


class _Server:
    """The server process of this (host) process, started on demand."""

    def __init__(self) -> None:
        self.process: subprocess.Popen[bytes] | None = None
        self.owner = 0

    def start(self, preload: str) -> subprocess.Popen[bytes]:
        if self.process is not None and self.process.poll() is None and self.owner == os.getpid():
            return self.process
        self.stop()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "hlo_indexing.dialect_glue.isolation", preload],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # killed with its children on a timeout
        )
        self.owner = os.getpid()
        return self.process

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is None or self.owner != os.getpid():
            return
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        process.wait()
        for stream in (process.stdin, process.stdout):
            if stream is not None:
                stream.close()


_SERVER = _Server()


@overload
def run_isolated(
    function: Callable[..., _T], *args: object, what: str, location: SourceLocation | None = None,
    limit: str = "HLO_PARSE_SECONDS", fork: bool = True,
) -> _T:
    """A callable run isolated gives back its own result type."""


@overload
def run_isolated(
    function: str, *args: object, what: str, location: SourceLocation | None = None,
    limit: str = "HLO_PARSE_SECONDS", fork: bool = True,
) -> object:
    """A ``"module:qualname"`` target run isolated gives back an object of unknown type."""


def run_isolated(
    function: Callable[..., _T] | str,
    *args: object,
    what: str,
    location: SourceLocation | None = None,
    limit: str = "HLO_PARSE_SECONDS",
    fork: bool = True,
) -> _T | object:
    """``function(*args)`` in a child of the isolation server (in the server itself
    when not ``fork``); its result (or the exception it raised, re-raised here).
    ``function`` may be named ``"module:qualname"``: only the server imports its module
    (one with a dependency the host should not load). ``what`` names the step in errors;
    past ``limits.<limit>`` seconds a :class:`TimeLimitError` pointing at ``location``."""
    target = function if isinstance(function, str) else f"{function.__module__}:{function.__qualname__}"
    if not hasattr(os, "fork"):
        return _resolve(target)(*args)
    seconds = float(getattr(limits, limit))
    process = _SERVER.start(target.partition(":")[0])
    deadline = time.monotonic() + seconds
    assert process.stdin is not None and process.stdout is not None
    try:
        _write_frame(process.stdin, pickle.dumps((target, args, fork, seconds)))
        reply = _read_frame(process.stdout.fileno(), deadline)
    except TimeoutError:
        _SERVER.stop()
        raise TimeLimitError(
            f"{what} took longer than {seconds:g} s (limits.{limit})", location, limit=limit, value=seconds
        ) from None
    except OSError:  # the server died (killed from outside): start it again
        reply = None
    if reply is None:
        _SERVER.stop()
        raise ChildDied("the isolation server stopped", "")
    kind, value = pickle.loads(reply)
    if kind == "raised":
        raise value
    if kind == "died":
        raise ChildDied(*value)
    if kind == "memory":
        cap, by_user = value
        raise _memory_error(what, cap, by_user, location)
    return value  # what function returned, through pickle


def _memory_error(what: str, cap: int | None, by_user: bool, location: SourceLocation | None) -> MemoryLimitError:
    """The error of a child that ran out of memory under ``cap`` (the user's or ours)."""
    size = "no limit" if cap is None else f"{cap / (1 << 30):.1f} GiB"
    if by_user:
        return MemoryLimitError(
            f"{what} ran out of memory under the address-space limit set for this process ({size}, ulimit -v); "
            "raise that limit to process this input",
            location,
            limit="RLIMIT_AS",
            value=cap,
        )
    return MemoryLimitError(
        f"{what} ran out of memory: it may use {limits.ISOLATED_MEMORY_BYTES / (1 << 30):.1f} GiB above its parent "
        f"(limits.ISOLATED_MEMORY_BYTES; {size} in all)",
        location,
        limit="ISOLATED_MEMORY_BYTES",
        value=cap,
    )


if __name__ == "__main__":
    serve(sys.argv[1:])
