"""The kernel at the limits of its process: an input too large for the memory the process may have
raises ``MemoryError`` naming it (the interpreter goes on), never an abort (SIGABRT, exit 134);
a signal arriving while it copies a long input interrupts the copy (the handler's exception, not
the copy's end). Each case runs in a child process: one under ``RLIMIT_AS``, one sent SIGINT."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest

# The child caps its address space at what it uses plus HEADROOM, then hands the kernel an endless
# iterator of numbers: the copy must fail to grow, and say so.
UNDER_A_LIMIT = """
import itertools, resource, sys
from arklow_pulumi.core._kernel import Network, Sizings

HEADROOM = 256 << 20
with open("/proc/self/status") as status:
    (used,) = [int(l.split()[1]) << 10 for l in status if l.startswith("VmSize:")]
resource.setrlimit(resource.RLIMIT_AS, (used + HEADROOM, used + HEADROOM))
calls = {
    "weights": lambda: Network(itertools.repeat(1.0), [], [], 0),
    "limits": lambda: Network([1.0], itertools.repeat(1.0), [], 0),
    "lane_pools": lambda: Network([1.0], [1.0], itertools.repeat(()), 0),
    "caps": lambda: Network([1.0], [1.0], [[(0, 1.0)]], 1).fill(itertools.repeat(1.0), [1.0]),
    "demands": lambda: Sizings([]).desired(itertools.repeat(1.0)),
}
for name, call in calls.items():
    try:
        call()
    except MemoryError as exc:
        print(type(exc).__name__, exc)
    else:
        sys.exit(f"{name}: no MemoryError")
# the interpreter and the kernel go on
print(Network([1.0], [5.0], [[(0, 1.0)]], 1).fill([5.0], [2.0]).allocation)
"""


def test_an_input_too_large_for_memory_raises_memory_error() -> None:
    result = subprocess.run(
        [sys.executable, "-c", UNDER_A_LIMIT],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, (result.returncode, result.stderr[-2000:])  # not -6 (SIGABRT)
    lines = result.stdout.splitlines()
    assert lines[-1] == "[2.0]"
    names = ["weights", "limits", "lane_pools", "caps", "demands"]
    assert [line.split(":")[0] for line in lines[:-1]] == [f"MemoryError {n}" for n in names]
    assert all("no memory for a copy of" in line for line in lines[:-1])


# The child prints its address space, then copies an endless iterator; SIGINT comes once the
# copy has grown it.
INTERRUPTED = """
import itertools, resource, signal, sys
from arklow_pulumi.core._kernel import Network

# Python leaves SIGINT ignored when it starts so (a command a shell started with '&'): the
# handler that raises is installed here, so the case does not depend on how the tests were started
signal.signal(signal.SIGINT, signal.default_int_handler)

# should the signal not stop the copy, it ends at this cap (MemoryError), not in the machine's swap;
# wide enough that a parent slowed by a loaded machine still sends its signal well before it
CAP = 6 << 30
with open("/proc/self/status") as status:
    (used,) = [int(l.split()[1]) << 10 for l in status if l.startswith("VmSize:")]
resource.setrlimit(resource.RLIMIT_AS, (used + CAP, used + CAP))

counted = itertools.count(1)
print(used, flush=True)
try:
    Network(counted, [], [], 0)
except KeyboardInterrupt as exc:
    print("interrupted", type(exc.__context__).__name__, next(counted))
"""
GROWN = 64 << 20  # the copy is under way once the child's address space has grown this much


def address_space(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        (size,) = [int(line.split()[1]) << 10 for line in status if line.startswith("VmSize:")]
    return size


def test_a_signal_interrupts_a_long_copy() -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", INTERRUPTED],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        before = int(child.stdout.readline())
        while address_space(child.pid) < before + GROWN:  # ends: the copy grows or fails
            assert child.poll() is None, child.communicate()
            time.sleep(0.01)
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=300)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == 0, err[-2000:]
    # KeyboardInterrupt out of the copy itself, millions of items in: no MemoryError before it
    interrupted, context, items = out.split()
    assert (interrupted, context) == ("interrupted", "NoneType"), out
    assert int(items) > GROWN // 8 // 2


@pytest.mark.parametrize("length", [0, 1, 70_000])
def test_copies_of_every_length_still_fill(length: int) -> None:
    """Copies across the growth and signal-check steps keep every item, in order."""
    from arklow_pulumi.core._kernel import Network

    network = Network([1.0] * length, [float(i) for i in range(length)], [()] * length, 0)
    allocation = network.fill([float(i) for i in range(length)], []).allocation
    assert allocation == [float(i) for i in range(length)]
