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

A :class:`Kernel` can be started (and its imports warmed) before its notebook
is ready, so that a batch starts the next kernel while one notebook runs.
"""
import asyncio
import math
import os
import threading
import time
from collections.abc import Callable, Collection, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from .memory_watch import MemoryWatch, format_bytes

__all__ = ["CELL_TIMEOUT", "DEFAULT_LIMITS", "NOTEBOOK_TIMEOUT", "CellRun", "Kernel", "Limits",
           "WARM_UP", "execute", "in_thread", "run_cells"]

NOTEBOOK_TIMEOUT = 300  # seconds for a whole notebook
CELL_TIMEOUT = 60  # seconds for one cell: an endless loop costs this, and the rest still runs
GRACE = 15  # seconds a cell gets to answer an interrupt before we give up on the kernel
# What every lesson imports first; importing (no computation) leaves JAX's backend unstarted,
# so lessons that configure devices in their first cell still can.
T = TypeVar("T")
WARM_UP = "import numpy, jax, jax.numpy, nn_from_scratch, nn_from_scratch.exercises"


@dataclass(frozen=True)
class Limits:
    """Seconds for the whole notebook and for one cell; bytes of memory (``None``: no cap)."""

    timeout: float = NOTEBOOK_TIMEOUT
    cell_timeout: float = CELL_TIMEOUT
    memory: int | None = None


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

    @property
    def what_happened(self) -> str:
        return f"raised {self.error}" if self.raised else self.error


def kernel_env() -> dict[str, str]:
    """Offline, with matplotlib's inline backend, and importing this very copy of the package."""
    env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}
    env["NN_FROM_SCRATCH_OFFLINE"] = "1"
    env["JAX_PPRINT_USE_COLOR"] = "false"  # jaxprs without colour codes in the saved outputs
    package_root = str(Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")]))
    return env


class Kernel:
    """A started IPython kernel (and its client), ready to run one notebook in ``cwd``."""

    def __init__(self, manager: Any, client: Any, seconds: float) -> None:
        self.manager, self.client, self.seconds = manager, client, seconds

    @classmethod
    async def start(cls, cwd: str | Path = ".", warm: bool = True) -> "Kernel":
        """Start a kernel in ``cwd``; with ``warm``, import what every lesson imports first."""
        from jupyter_client.manager import AsyncKernelManager

        start = time.monotonic()
        manager = AsyncKernelManager(kernel_name="python3")
        # no kernel chatter; an error shows as its message, not a traceback through JAX
        await manager.start_kernel(env=kernel_env(), cwd=str(cwd), extra_arguments=[
            "--Application.log_level=ERROR", "--InteractiveShell.xmode=Minimal"])
        kernel = cls(manager, manager.client(), 0.0)
        try:
            kernel.client.start_channels()
            await kernel.client.wait_for_ready(timeout=60)
            if warm:
                await kernel.client.execute_interactive(WARM_UP, silent=True,
                                                        store_history=False, timeout=60)
        except BaseException:
            await kernel.shutdown()  # never leave a half-started kernel behind
            raise
        kernel.seconds = time.monotonic() - start
        return kernel

    @property
    def pid(self) -> int | None:
        return getattr(self.manager.provisioner, "pid", None)

    async def shutdown(self) -> None:
        self.client.stop_channels()
        if await self.manager.is_alive():
            await self.manager.shutdown_kernel(now=True)
        await self.manager.cleanup_resources()


def _error_line(cell: Any) -> str:
    for output in cell.get("outputs", []):
        if output.get("output_type") == "error":
            return f"{output.get('ename', 'Error')}: {output.get('evalue', '')}".strip().rstrip(":")
    return ""


async def run_cells(nb: Any, kernel: Kernel, limits: Limits = DEFAULT_LIMITS,
                    quiet: Collection[int] = ()) -> list[CellRun]:
    """Run ``nb``'s code cells (outputs written in place) in ``kernel``, then shut it down.

    Cells whose index is in ``quiet`` run without entering the kernel's history (``In``,
    ``_i``): what the grader runs there cannot be read back by the cells after it.
    Returns one :class:`CellRun` per non-empty code cell.
    """
    from nbclient import NotebookClient
    from nbclient.exceptions import DeadKernelError

    client = NotebookClient(nb, km=kernel.manager, kernel_name="python3", allow_errors=True,
                            interrupt_on_timeout=True)
    client.kc = kernel.client
    watch = MemoryWatch(kernel.pid, limits.memory)
    runs: list[CellRun] = []
    deadline = time.monotonic() + limits.timeout
    broken: CellRun | None = None  # once the kernel can run nothing more: what later cells get
    try:
        async with client.async_setup_kernel(cleanup_kc=False), watch:
            for index, cell in enumerate(nb.cells):
                if cell.cell_type != "code" or not cell.source.strip():
                    continue
                limit = min(limits.cell_timeout, deadline - time.monotonic())
                if broken:
                    runs.append(CellRun(index, broken.status, broken.error))
                    continue
                if limit <= 0:
                    runs.append(CellRun(index, "timed out", f"was not run: the notebook's "
                                                            f"{limits.timeout:g} s had run out"))
                    continue
                client.timeout = max(1, math.ceil(limit))
                start = time.monotonic()
                try:
                    await asyncio.wait_for(client.async_execute_cell(
                        cell, index, store_history=index not in quiet), limit + GRACE)
                except (TimeoutError, DeadKernelError):  # nbclient reports a time-out as death
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
                error = _error_line(cell)
                if error.startswith("KeyboardInterrupt") and seconds >= limit - 1:
                    runs.append(CellRun(index, "timed out", f"was interrupted after {limit:.0f} s",
                                        seconds))
                else:
                    runs.append(CellRun(index, "error" if error else "ok", error, seconds,
                                        raised=bool(error)))
    finally:
        await kernel.shutdown()
    return runs


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
