"""A memory cap for a kernel: its sandbox's cgroup where it has one, and otherwise a watchdog.

In a sandbox with a control group of its own (:mod:`.share`), the cap is the
group's memory limit: the kernel counts every byte the sandbox holds, shared
memory, ``memfd`` files and its ``tmpfs`` folders included, and past the cap
kills; the watch reads how many it killed (:attr:`MemoryWatch.tripped`) and
then ends the whole sandbox.

Elsewhere a watchdog in the grader's process adds up the resident memory of the
kernel and its children (for a sandbox without a cgroup, of every process in its
PID namespace, and its ``tmpfs`` folders; what it cannot count, the sandbox
refuses) a few times a second and kills them all past the cap. An address-space
limit (``RLIMIT_AS``) would break JAX, which reserves far more virtual memory
than it ever touches. It also asks the operating system to pick the kernel
first should memory run out between two polls (``oom_score_adj``).
"""
import asyncio
import os
import re
from types import TracebackType
from typing import Any

from . import cgroups
from .share import Share, of_process

__all__ = ["MemoryWatch", "format_bytes", "parse_bytes"]

POLL = 0.05  # seconds between two looks: allocating 1 GB takes longer than this
_UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def parse_bytes(text: str) -> int:
    """``"2G"``, ``"1500M"``, ``"1.5GB"`` or ``"800000000"`` -> bytes (binary units)."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:i?B)?\s*", text, re.I)
    if not match or float(match.group(1)) <= 0:
        raise ValueError(f"a memory size is a positive number with K, M, G or T, e.g. 2G or "
                         f"1500M; got {text!r}.")
    return int(float(match.group(1)) * _UNITS[match.group(2).upper()])


def format_bytes(n: int | None) -> str:
    """Bytes -> ``"1.5 GB"`` (binary units, as :func:`parse_bytes` reads them)."""
    if n is None:
        return "no limit"
    for unit in ("T", "G", "M", "K"):
        if n >= _UNITS[unit]:
            return f"{n / _UNITS[unit]:.3g} {unit}B"
    return f"{n} B"


class MemoryWatch:
    """``async with MemoryWatch(pid, cap):`` kills process ``pid`` (and children) past ``cap``.

    ``tripped`` says afterwards whether it did. With ``cap`` or ``pid`` ``None`` it
    watches nothing.
    """

    def __init__(self, pid: int | None, cap: int | None) -> None:
        self.pid, self.cap, self._tripped, self._peak = pid, cap, False, 0
        self._task: asyncio.Task[None] | None = None
        self._share: Share | None = None
        self._kills = 0  # the group's OOM kills before the cap was set

    async def __aenter__(self) -> "MemoryWatch":
        if self.pid is not None and self.cap is not None:
            try:  # the kernel, not the grader, is what the OS should stop first
                with open(f"/proc/{self.pid}/oom_score_adj", "w") as f:
                    f.write("1000")
            except OSError:
                pass  # not Linux, or not allowed: the watchdog still works
            self._share = of_process(self.pid)
            group = self._share.group if self._share else None
            if group is not None:
                self._kills = group.oom_kills()
                if not group.set_memory(self.cap):  # it holds more already
                    self._trip()
            self._task = asyncio.create_task(self._watch())
        return self

    @property
    def _group(self) -> cgroups.Group | None:
        return self._share.group if self._share else None

    @property
    def tripped(self) -> bool:
        """Whether the cap was passed (and the kernel stopped); read afresh from the group,
        whose kill may come just before the runner asks."""
        if not self._tripped and self._group is not None and \
                self._group.oom_kills() > self._kills:
            self._trip()
        return self._tripped

    @property
    def peak(self) -> int:
        """The most memory it was seen to hold, in bytes."""
        return max(self._peak, self._group.peak() if self._group is not None else 0)

    def _trip(self) -> None:
        """Past the cap: say so and end the whole sandbox (its group: every process in it)."""
        self._tripped = True
        if self._group is not None:
            self._group.kill()

    async def __aexit__(self, kind: type[BaseException] | None, err: BaseException | None,
                        traceback: TracebackType | None) -> None:
        if self._task:
            self._task.cancel()

    async def _watch(self) -> None:
        import psutil

        assert self.pid is not None and self.cap is not None
        try:
            kernel = psutil.Process(self.pid)
            while True:
                if self._group is not None:  # the kernel enforces the cap; this reads its kills
                    if self.tripped:
                        return
                    await asyncio.sleep(POLL)
                    continue
                if self._share is not None:  # a sandbox: read through its own /proc
                    used = self._share.held(self.pid)
                else:
                    used = 0
                    for process in _family(kernel):
                        try:
                            used += process.memory_info().rss
                        except psutil.Error:
                            pass  # it ended between the listing and the look
                self._peak = max(self._peak, used)
                if used > self.cap:
                    self._tripped = True
                    for process in reversed(_family(kernel)):
                        try:
                            process.kill()
                        except psutil.Error:
                            pass
                    return
                await asyncio.sleep(POLL)
        except psutil.Error:
            return  # the kernel is gone: nothing left to watch


def _family(kernel: Any) -> list[Any]:
    """``kernel`` (a ``psutil.Process``) and its descendants. Read from its own
    ``/proc/PID/task/TID/children`` files where the OS has them: psutil would read every
    process of the machine a few times a second, in the process that grades the others."""
    import psutil

    if not os.path.exists(f"/proc/{kernel.pid}/task/{kernel.pid}/children"):
        return [kernel, *kernel.children(recursive=True)]
    found, stack = [], [kernel.pid]
    while stack:
        pid = stack.pop()
        try:
            found.append(kernel if pid == kernel.pid else psutil.Process(pid))
            for task in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{task}/children") as children:
                    stack.extend(int(child) for child in children.read().split())
        except (OSError, psutil.Error):
            continue  # it ended while we looked
    return found
