"""Preparing a submission in a process of its own, within a time limit.

Reading, rebuilding and the static reading of a notebook (:func:`.notebook.prepare`) are
pure Python: in a thread of the grader they held the interpreter's lock against the
event loop every kernel's replies go through, and nothing bounded their time (red team
round twelve: 15,000 helpers named by every exercise took 377 s to read, outside
``--timeout``, and held the classmate graded beside them at 3.1x its time). Here each
preparation runs in a child forked from a server process that imported the grader once
(``forkserver``: a fresh fork costs milliseconds), and the child is killed at
:data:`PREPARE_SECONDS`: that notebook gets one error row, the class goes on.
"""
import multiprocessing
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from .intake import Submission
from .notebook import Prepared, failed, prepare
from .results import Graded

__all__ = ["PREPARE_SECONDS", "prepare_apart"]

PREPARE_SECONDS = 60.0  # a lesson's notebook takes under 1 s (lesson 14: 0.8 s)
_SERVER = "nn_from_scratch.grade.notebook"  # what the fork server imports once
_context: Any = None


def _child(there: Connection, submission: Submission, release_dir: Path,
           lesson: str | None) -> None:
    try:
        there.send(("done", prepare(submission, release_dir, lesson)))
    except BaseException as err:  # anything at all: one row, said as it was
        there.send(("raised", type(err).__name__, str(err)))


def prepare_apart(submission: Submission, release_dir: Path, lesson: str | None,
                  seconds: float = PREPARE_SECONDS) -> Prepared | Graded:
    """:func:`.notebook.prepare` in a child process; an error row if it takes more than
    ``seconds`` or dies. Raises ``SystemError`` when prepare raised one (the caller's retry
    of CPython 3.11's AST race), any other exception as an error row."""
    global _context
    if _context is None:
        _context = multiprocessing.get_context("forkserver")
        _context.set_forkserver_preload([_SERVER])
    here, there = _context.Pipe(duplex=False)
    child = _context.Process(target=_child, args=(there, submission, release_dir, lesson),
                             daemon=True)
    child.start()
    there.close()
    said: tuple[Any, ...] = ("late",)
    try:
        if here.poll(seconds):
            said = here.recv()
    except (EOFError, OSError):
        said = ("died",)
    finally:
        child.kill()
        child.join()
        here.close()
    if said[0] == "late":
        return failed(submission.path, f"could not be prepared: reading it took more than "
                                       f"{seconds:g} s (a lesson's notebook takes under 1 s)")
    if said[0] == "died":
        return failed(submission.path, f"could not be prepared: the process reading it ended "
                                       f"(exit status {child.exitcode})")
    if said[0] == "done":
        result: Prepared | Graded = said[1]
        return result
    if said[1] == "SystemError":
        raise SystemError(said[2])
    return failed(submission.path, f"could not be prepared ({said[1]}: {said[2]})")
