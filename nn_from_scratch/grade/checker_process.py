"""Checks in a process of the grader's own: stoppable, and nothing they meet reaches the grader.

A checker reads what a kernel answered and computes on it, in Python, for as long
as that takes; in a thread of the grader it could not be stopped, and an exception
that escaped it (``SystemExit``) could end the batch. So checks run in a child
process (:class:`CheckerProcess`), one per worker of the batch, started once
(``python -m nn_from_scratch.grade.checker_process``) and kept, so that JAX's
compiled code stays warm from one notebook to the next. The grader keeps the
kernel's client: the child sends each question up its pipe, the grader asks the
kernel (:class:`.checking.KernelQuestions`) and sends the reply down as it came, and
the child reads it (:mod:`nn_from_scratch.wire`) and decides. The grader waits for
the verdict until the check's deadline and not a moment more: past it, the child
is killed and the check "timed out"; a child that dies, or raises anything at all
(``BaseException`` included), gives that exercise an error row, and the next check
gets a fresh child.

What crosses the pipe is JSON the grader's own code made, both ways, each message
prefixed with its length (8 bytes); the child's own prints go nowhere.
"""
import asyncio
import importlib
import json
import os
import subprocess
import sys
import time
from typing import Any, BinaryIO

from ..exercises._hints import first_line
from ..exercises._remote import Session
from ..i18n import language, set_language
from ..kernel import Kernel
from ..notebook_runner import CellRun, Hook
from .checking import CheckTimedOut, KernelDied, KernelQuestions, check_here, fresh_seed

__all__ = ["READY", "CheckerProcess", "grading_hook"]

READY = 120  # seconds a new checker process may take to start and import a lesson's checkers
_UNREADABLE = {"type": "ValueError", "module": "builtins", "base": "ValueError", "cause": None,
               "message": "the kernel gave no answer the grader can read"}


def _write(stream: BinaryIO, message: dict[str, Any]) -> None:
    data = json.dumps(message).encode()
    stream.write(len(data).to_bytes(8, "big") + data)
    stream.flush()


def _read(stream: BinaryIO) -> dict[str, Any]:
    header = stream.read(8)
    if len(header) < 8:
        raise EOFError
    return json.loads(stream.read(int.from_bytes(header, "big")))


class _PipeSession(Session):
    """The child's side: each question goes up the pipe, and the kernel's reply comes down."""

    def __init__(self, down: BinaryIO, up: BinaryIO) -> None:
        super().__init__()
        self.down, self.up = down, up

    def ask(self, question: dict[str, Any]) -> dict[str, Any]:
        _write(self.up, {"ask": question})
        return _read(self.down)


def serve(down: BinaryIO, up: BinaryIO) -> None:
    """The child: one request at a time, ``{"import": module}`` (answered when imported) or a
    check, which ends in one message whatever it raises."""
    import jax.numpy as jnp

    jnp.zeros(()).block_until_ready()  # JAX's backend started before the first check's clock
    while True:
        try:
            job = _read(down)
        except EOFError:
            return
        if "import" in job:
            importlib.import_module(f"nn_from_scratch.exercises.{job['import']}")
            _write(up, {"ready": True})
            continue
        try:
            set_language(job["language"])
            checkers = importlib.import_module(f"nn_from_scratch.exercises.{job['module']}")
            session = _PipeSession(down, up)
            result = check_here(session, getattr(checkers, job["checker"]), job["names"],
                                job["seed"])
            said = {"status": result.status, "message": result.message,
                    "called": session.called}
        except Exception as err:  # a name never defined, gibberish: one row
            said = {"status": "error", "message": first_line(err, 300)}
        except BaseException as err:  # SystemExit, an interrupt: one row, then a fresh child
            _write(up, {"done": {"status": "error", "message": first_line(err, 300)},
                        "last": True})  # (a reply it was reading may be half read)
            return
        _write(up, {"done": said})


class CheckerProcess:
    """A checker process for one worker of the batch, which grades notebooks one after another:
    :meth:`start` it early; a check it had to be stopped in leaves the next to start another."""

    def __init__(self) -> None:
        self.process: asyncio.subprocess.Process | None = None
        self.imported: set[str] = set()
        self._starting = asyncio.Lock()  # a check may come while the worker's start is under way

    async def start(self) -> asyncio.subprocess.Process:
        async with self._starting:
            if self.process is None:
                self.process = await asyncio.create_subprocess_exec(
                    sys.executable, "-m", __name__, stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
                self.imported = set()
            return self.process

    async def _send(self, message: dict[str, Any]) -> None:
        assert self.process is not None and self.process.stdin is not None
        try:
            data = json.dumps(message).encode()
        except (ValueError, TypeError, RecursionError):  # a kernel's reply nested past JSON's
            data = json.dumps({"error": _UNREADABLE}).encode()  # depth: a wrong answer
        self.process.stdin.write(len(data).to_bytes(8, "big") + data)
        await self.process.stdin.drain()

    async def _receive(self, until: float) -> dict[str, Any] | None:
        """The child's next message, or None at ``until``; EOFError if it died."""
        assert self.process is not None and self.process.stdout is not None

        async def read() -> dict[str, Any]:
            header = await self.process.stdout.readexactly(8)  # type: ignore[union-attr]
            size = int.from_bytes(header, "big")
            return json.loads(await self.process.stdout.readexactly(size))  # type: ignore

        try:
            return await asyncio.wait_for(read(), max(0.0, until - time.monotonic()))
        except TimeoutError:
            return None

    async def check(self, kernel: Kernel, job: dict[str, Any], limit: float) -> dict[str, Any]:
        """Run ``job`` in the child, asking ``kernel`` for it; its verdict within ``limit``
        seconds of the child being ready. Raises :class:`.checking.CheckTimedOut` or
        :class:`.checking.KernelDied`."""
        try:
            await self.start()
            if job["module"] not in self.imported:  # the grader's start-up, not the student's
                await self._send({"import": job["module"]})
                if await self._receive(time.monotonic() + READY) is None:
                    raise EOFError
                self.imported.add(job["module"])
            deadline = time.monotonic() + limit
            questions = KernelQuestions(kernel, deadline)
            await self._send(job)
            while (said := await self._receive(deadline)) is not None:
                if "done" in said:
                    if said.get("last"):
                        await self.stop()
                    return dict(said["done"])
                await self._send(await questions.ask(said["ask"]))
        except (EOFError, OSError):  # the child died: os._exit, a crash, the memory it took
            code = self.process.returncode if self.process else None
            await self.stop()
            return {"status": "error", "message": f"the check stopped its process (exit status "
                                                  f"{code})"}
        except BaseException:
            await self.stop()
            raise
        await self.stop()  # past the deadline while the child computed: it cannot stretch it
        raise CheckTimedOut()

    async def stop(self) -> None:
        """End the child now (it holds nothing of the grader's)."""
        if self.process is not None:
            if self.process.returncode is None:
                self.process.kill()
            await self.process.wait()
        self.process = None


def grading_hook(index: int, checkers: CheckerProcess, job: dict[str, Any],
                 verdicts: dict[str, dict[str, Any]], exercise: str) -> Hook:
    """What the grader does at a check cell: the checker ``job`` names (``module``, ``checker``,
    ``names``) run in the worker's checker process on inputs drawn for this grading, within
    the cell's time; its verdict goes to ``verdicts[exercise]``."""
    async def hook(kernel: Kernel, limit: float) -> CellRun:
        start = time.monotonic()
        asked = {**job, "seed": fresh_seed(), "language": language()}
        try:
            verdict = await checkers.check(kernel, asked, limit)
        except CheckTimedOut:
            return CellRun(index, "timed out", f"was interrupted after {limit:.0f} s",
                           time.monotonic() - start)
        except KernelDied:
            return CellRun(index, "error", "made the kernel die (a crash)",
                           time.monotonic() - start)
        verdicts[exercise] = verdict
        if verdict["status"] == "error":
            return CellRun(index, "error", verdict["message"], time.monotonic() - start,
                           raised=True)
        return CellRun(index, "ok", "", time.monotonic() - start)
    return hook


if __name__ == "__main__":
    protocol = os.fdopen(os.dup(1), "wb")  # the pipe to the grader; prints go nowhere
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    sys.stdout = open(os.devnull, "w")  # noqa: SIM115 (for the life of the process)
    serve(sys.stdin.buffer, protocol)
