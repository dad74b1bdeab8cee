"""A memory cap for a kernel: a watchdog that polls its resident memory and kills it past the cap.

An address-space limit (``RLIMIT_AS``) would break JAX, which reserves far more
virtual memory than it ever touches, and a kernel running as root could raise
any rlimit again. So the watchdog, in the grader's process, adds up the
resident memory of the kernel and its children a few times a second and kills
them all when it passes the cap. It also asks the operating system to pick the
kernel first should memory run out between two polls (``oom_score_adj``).
"""
import asyncio
import re
from types import TracebackType

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
        self.pid, self.cap, self.tripped, self.peak = pid, cap, False, 0
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> "MemoryWatch":
        if self.pid is not None and self.cap is not None:
            try:  # the kernel, not the grader, is what the OS should stop first
                with open(f"/proc/{self.pid}/oom_score_adj", "w") as f:
                    f.write("1000")
            except OSError:
                pass  # not Linux, or not allowed: the watchdog still works
            self._task = asyncio.create_task(self._watch())
        return self

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
                processes = [kernel, *kernel.children(recursive=True)]
                used = 0
                for process in processes:
                    try:
                        used += process.memory_info().rss
                    except psutil.Error:
                        pass  # it ended between the listing and the look
                self.peak = max(self.peak, used)
                if used > self.cap:
                    self.tripped = True
                    for process in reversed(processes):
                        try:
                            process.kill()
                        except psutil.Error:
                            pass
                    return
                await asyncio.sleep(POLL)
        except psutil.Error:
            return  # the kernel is gone: nothing left to watch
