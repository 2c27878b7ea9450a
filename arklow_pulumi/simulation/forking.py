"""Running a task in forked worker processes, each returning one picklable result, and, while it
runs, sending parts of it as they are made (:func:`stream_forked`).

The task is kept in a module global before the processes fork, so a child inherits it (and the
trace and topology it closes over) instead of receiving it pickled. A child ignores Ctrl-C (the
parent ends it; SIGINT is blocked while it forks, see :func:`_no_interrupt`), dies with the
parent on Linux (even one killed outright), and leaves with ``os._exit`` once its result is
written, so it never runs the parent's exit handlers nor flushes a copy of the parent's output
buffers.

Every failure reaches the caller as an exception, never as a hang: an exception in a child comes
back as itself when it survives pickling unchanged (else as :class:`WorkerFailed` carrying its
type and text); a child that ends without a result (killed, out of memory) is
:class:`WorkerLost`. On any failure, and on Ctrl-C in the parent, the other children are
terminated; every child is joined before this returns or raises (no zombie is left).

Parts go through the same pipe as the result, one round at a time: the parent takes one part
from every child, hands the round to its consumer, then takes the next; a child that runs ahead
waits on its full pipe. So the parent holds at most a round of parts, however long the task is
(the simulator's per-tick totals, :mod:`.aggregating`).
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from typing import Any, TypeVar

T = TypeVar("T")
Emit = Callable[[Any], None]  # what a streaming task calls with each part it sends

PR_SET_PDEATHSIG = 1  # linux/prctl.h

_task: Callable[[int, Emit], Any] | None = None
# the parent's ends of the pipes: a child closes its copies (its own included), so a parent's
# death leaves no reader and a writing child gets an error instead of waiting forever
_readers: list[Connection] = []


class WorkerFailed(RuntimeError):
    """A child raised an exception that does not survive pickling; its type and text."""


class WorkerLost(RuntimeError):
    """A child ended without sending its result."""


def fork_available() -> bool:
    return "fork" in multiprocessing.get_all_start_methods()


def usable_cores() -> int:
    """The cores this process may run on (its affinity where the platform tells it)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def stream_forked(
    task: Callable[[int, Emit], T], count: int, consume: Callable[[list[Any]], None]
) -> list[T]:
    """``[task(0, emit), …, task(count - 1, emit)]``, each call in its own forked child; every
    call sends the same number of parts (``emit(part)``), and ``consume`` gets each round of
    them (the children's n-th parts, in child order) as they come."""
    global _task
    context = multiprocessing.get_context("fork")
    children: list[tuple[BaseProcess, Connection]] = []
    sys.stdout.flush()
    sys.stderr.flush()
    _task = task
    try:
        for i in range(count):
            reader, writer = context.Pipe(duplex=False)
            _readers.append(reader)
            started = context.Process(target=_child, args=(i, writer, os.getpid()), daemon=True)
            with _no_interrupt():
                started.start()
            writer.close()
            children.append((started, reader))
        return _collect(children, consume)
    finally:
        _task = None
        _readers.clear()
        for child, _reader in children:
            if child.exitcode is None:
                child.terminate()
        for child, reader in children:
            child.join(10)
            if child.exitcode is None:
                child.kill()
                child.join()
            reader.close()


def _collect(
    children: list[tuple[BaseProcess, Connection]], consume: Callable[[list[Any]], None]
) -> list[Any]:
    results: dict[int, Any] = {}
    while len(results) < len(children):
        parts: dict[int, Any] = {}
        pending = {reader: i for i, (_child, reader) in enumerate(children) if i not in results}
        while pending:  # one message from every child still running, as they come
            for ready in wait(list(pending)):
                assert isinstance(ready, Connection)
                i = pending.pop(ready)
                status, value = _receive(i, children)
                if status == "part":
                    parts[i] = value
                elif status == "ok":
                    results[i] = value
                else:
                    raise value
        if parts:
            if len(parts) != len(children):
                raise WorkerFailed("the simulation workers sent different numbers of parts")
            consume([parts[i] for i in range(len(children))])
    return [results[i] for i in range(len(children))]


def _receive(i: int, children: list[tuple[BaseProcess, Connection]]) -> tuple[str, Any]:
    child, reader = children[i]
    try:
        status, value = pickle.loads(reader.recv_bytes())
    except EOFError:
        child.join()
        raise WorkerLost(
            f"simulation worker {i + 1} ended without a result ({_how(child)})"
        ) from None
    return status, value


def _how(child: BaseProcess) -> str:
    code = child.exitcode
    if code is not None and code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


@contextmanager
def _no_interrupt() -> Iterator[None]:
    """SIGINT held back while a child forks: the child starts with it blocked, so a Ctrl-C
    during the fork cannot interrupt the interpreter's own after-fork code in the child (it
    printed a traceback there); the child ignores SIGINT before it unblocks it, and the parent
    gets a Ctrl-C held back when this ends."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def _child(index: int, writer: Connection, parent: int) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a SIGINT held back is dropped with it
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    _die_with(parent)
    for reader in _readers:
        reader.close()

    def emit(part: Any) -> None:
        writer.send_bytes(pickle.dumps(("part", part), pickle.HIGHEST_PROTOCOL))

    try:
        assert _task is not None
        payload = pickle.dumps(("ok", _task(index, emit)), pickle.HIGHEST_PROTOCOL)
    except BaseException as exc:  # everything reaches the parent, as data
        payload = pickle.dumps(("error", _portable(exc)), pickle.HIGHEST_PROTOCOL)
    try:
        writer.send_bytes(payload)
        writer.close()
    finally:
        os._exit(0)


def _die_with(parent: int) -> None:
    """On Linux, have the kernel kill this child when the parent dies (even by SIGKILL), so an
    orphan never steps on for nothing."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the parent died before the call above
        os._exit(1)


def _portable(exc: BaseException) -> BaseException:
    """The exception itself when pickling keeps its type and text, else a stand-in."""
    try:
        back = pickle.loads(pickle.dumps(exc, pickle.HIGHEST_PROTOCOL))
    except Exception:
        back = None
    if type(back) is type(exc) and str(back) == str(exc):
        assert isinstance(back, BaseException)
        return exc
    return WorkerFailed(f"{type(exc).__name__}: {exc}")
