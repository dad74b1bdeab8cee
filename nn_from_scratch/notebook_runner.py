"""Executing a notebook with limits: the one way this project runs a notebook.

The lesson tools (building and testing the lessons) and the grader both run
notebooks through :func:`execute` or :func:`run_cells`: each notebook in a fresh
kernel, offline, every cell with errors allowed (a cell that raises does not
stop the rest), within three limits:

- ``cell_timeout``: a cell past it is interrupted, and the next cells still run;
- ``timeout``: once the whole notebook has used it, no more cells start;
- ``memory``: a kernel whose memory (its process and its children, resident)
  passes it is killed by a watchdog, and its cell is reported "out of memory".
  (An address-space rlimit would break JAX, which reserves far more than it uses.)

and three on what comes back, ``cell_output``, ``output`` and ``cell_outputs``
(:mod:`.cell_outputs`: the rest is dropped, and the cell says so). A single message over
``MAX_MESSAGE`` bytes ends the output connection (ZeroMQ never reads it); the runner then
connects anew before the next cell, and that cell's outputs are reported cut.

The notebook runs in a :class:`~.kernel.Kernel`, which can be started (and its imports
warmed) before its notebook is ready, so that a batch starts the next kernel while one
notebook runs; the grader starts each in a sandbox of its own.
"""
import asyncio
import math
import threading
import time
from collections.abc import Awaitable, Callable, Collection, Coroutine, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

from .cell_outputs import bounded_client, error_line
from .kernel import Kernel
from .memory_watch import MemoryWatch, format_bytes

__all__ = ["CELL_TIMEOUT", "DEFAULT_LIMITS", "NOTEBOOK_TIMEOUT", "CellRun", "Hook", "Limits",
           "execute", "in_thread", "run_cells"]

NOTEBOOK_TIMEOUT = 300  # seconds for a whole notebook
CELL_TIMEOUT = 60  # seconds for one cell: an endless loop costs this, and the rest still runs
GRACE = 15  # seconds a cell gets to answer an interrupt before we give up on the kernel
T = TypeVar("T")


@dataclass(frozen=True)
class Limits:
    """Seconds for the whole notebook and for one cell; bytes of memory (``None``: no cap)."""

    timeout: float = NOTEBOOK_TIMEOUT
    cell_timeout: float = CELL_TIMEOUT
    memory: int | None = None
    cell_output: int = 8 * 2**20  # bytes of outputs kept for a cell (a lesson's largest: 0.6 MB)
    output: int = 32 * 2**20  # and for the whole notebook
    # messages that make or change an output, kept for a cell (a lesson's cell has at most 8
    # outputs; prints coalesce into one): past it, a flood of tiny displays costs the runner
    # only reading them, not a validated output each (red team round five: 3.9 of 12 s)
    cell_outputs: int = 1_000


DEFAULT_LIMITS = Limits()


@dataclass(frozen=True)
class CellRun:
    """How one code cell ran: ``status`` is "ok", "error", "timed out" or "out of memory".

    ``error`` is the exception's last line when the cell ``raised``, and otherwise says what
    happened ("was interrupted after 60 s", "was not run: the kernel had died").
    """

    index: int
    status: str
    error: str = ""
    seconds: float = 0.0
    raised: bool = False
    cut: bool = False  # outputs past the limits were dropped

    @property
    def what_happened(self) -> str:
        return f"raised {self.error}" if self.raised else self.error



# What the grader does in place of running a cell (a check, decided in its own process): given
# the kernel and the seconds the cell may take, how it went.
Hook = Callable[[Kernel, float], Awaitable[CellRun]]


async def run_cells(nb: Any, kernel: Kernel, limits: Limits = DEFAULT_LIMITS,
                    quiet: Collection[int] = (), hooks: Mapping[int, Hook] | None = None,
                    prologue: str = "") -> list[CellRun]:
    """Run ``nb``'s code cells (outputs written in place) in ``kernel``, then shut it down.

    Cells whose index is in ``quiet`` run without entering the kernel's history (``In``,
    ``_i``); for those in ``hooks``, the hook runs instead of the cell, within the cell's time.
    ``prologue`` runs first, quietly. Returns one :class:`CellRun` per non-empty code cell.
    """
    from nbclient.exceptions import DeadKernelError

    client = bounded_client()(nb, km=kernel.manager, kernel_name="python3", allow_errors=True,
                               interrupt_on_timeout=True)
    client.bound(limits)
    client.kc = kernel.client
    watch = MemoryWatch(kernel.pid, limits.memory)
    runs: list[CellRun] = []
    deadline = time.monotonic() + limits.timeout
    broken: CellRun | None = None  # once the kernel can run nothing more: what later cells get
    hooks = hooks or {}
    if kernel.box is not None:
        kernel.box.share.run()  # the notebook's code begins: cores of its own from now on
    try:
        async with client.async_setup_kernel(cleanup_kc=False), watch:
            if prologue:
                await kernel.client.execute_interactive(
                    prologue, silent=True, store_history=False, timeout=60,
                    output_hook=lambda msg: None)
            for index, cell in enumerate(nb.cells):
                if cell.cell_type != "code" or not cell.source.strip():
                    continue
                limit = min(limits.cell_timeout, deadline - time.monotonic())
                if kernel.refused:
                    raise kernel.refused
                if broken:
                    runs.append(CellRun(index, broken.status, broken.error))
                    continue
                if limit <= 0:
                    runs.append(CellRun(index, "timed out", f"was not run: the notebook's "
                                                            f"{limits.timeout:g} s had run out"))
                    continue
                if index in hooks:
                    run = await hooks[index](kernel, limit)
                    if kernel.refused:
                        raise kernel.refused
                    if watch.tripped:
                        run = CellRun(index, "out of memory", f"used more than "
                                      f"{format_bytes(watch.cap)} of memory and was stopped",
                                      run.seconds)
                        broken = CellRun(index, "out of memory", "was not run: the kernel "
                                                                 "was stopped (out of memory)")
                    elif not await kernel.manager.is_alive():
                        broken = CellRun(index, "error", "was not run: the kernel had died")
                    runs.append(run)
                    continue
                client.timeout = max(1, math.ceil(limit))
                start = time.monotonic()
                try:
                    await asyncio.wait_for(client.async_execute_cell(
                        cell, index, store_history=index not in quiet), limit + GRACE)
                except (TimeoutError, DeadKernelError):  # nbclient reports a time-out as death
                    if refused := client.refused or kernel.refused:
                        raise refused from None
                    seconds = time.monotonic() - start
                    if watch.tripped:
                        runs.append(CellRun(index, "out of memory", "used more than "
                                            f"{format_bytes(watch.cap)} of memory and was "
                                            f"stopped", seconds))
                        broken = CellRun(index, "out of memory", "was not run: the kernel "
                                                                 "was stopped (out of memory)")
                    elif seconds >= limit + GRACE - 1:
                        runs.append(CellRun(index, "timed out", f"ran past {limit:.0f} s and "
                                                                f"ignored the interrupt", seconds))
                        broken = CellRun(index, "timed out", "was not run: an earlier cell could "
                                                             "not be interrupted")
                    else:
                        runs.append(CellRun(index, "error", "made the kernel die (a crash)",
                                            seconds))
                        broken = CellRun(index, "error", "was not run: the kernel had died")
                    continue
                seconds = time.monotonic() - start
                if await kernel.reconnect_outputs():
                    client.cut.add(index)
                await kernel.reconnect_requests()
                error = error_line(cell)
                if error.startswith("KeyboardInterrupt") and seconds >= limit - 1:
                    runs.append(CellRun(index, "timed out", f"was interrupted after {limit:.0f} s",
                                        seconds))
                else:
                    runs.append(CellRun(index, "error" if error else "ok", error, seconds,
                                        raised=bool(error)))
    finally:
        await kernel.shutdown()
    return [replace(run, cut=run.index in client.cut) for run in runs]


def execute(nb: Any, *, timeout: float = NOTEBOOK_TIMEOUT, cell_timeout: float = CELL_TIMEOUT,
            memory: int | None = None, cwd: str | Path = ".",
            quiet: Collection[int] = ()) -> list[CellRun]:
    """Run ``nb`` (an ``nbformat`` notebook, changed in place) in a fresh kernel, offline.

    Cells run one by one with errors allowed: a cell that raises does not stop
    the rest. A cell that runs past ``cell_timeout`` seconds is interrupted;
    once ``timeout`` seconds have passed for the whole notebook no more cells
    start; past ``memory`` bytes the kernel is stopped. Returns one
    :class:`CellRun` per non-empty code cell.
    """
    limits = Limits(timeout, cell_timeout, memory)

    async def start_and_run() -> list[CellRun]:
        return await run_cells(nb, await Kernel.start(cwd), limits, quiet)

    return in_thread(start_and_run)


def in_thread(make: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run the coroutine ``make()`` to its end in a thread of its own, and return its result.

    Works even where an event loop already runs (in Jupyter); an exception is re-raised here.
    """
    result: list[T] = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            result.append(asyncio.run(make()))
        except BaseException as err:  # re-raised below, in the caller's thread
            failure.append(err)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    if failure:
        raise failure[0]
    return result[0]
