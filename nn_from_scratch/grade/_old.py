"""Grading notebooks offline, and the one way this project executes a notebook.

``python -m nn_from_scratch grade PATH...`` runs each notebook top to bottom in
a fresh kernel, offline, with a time limit, and reads back every check's result
(the :data:`~nn_from_scratch.exercises.MIME` copy a checker leaves in its
output). Every exercise of the notebook's lesson gets one row:

- ``passed`` / ``failed`` / ``not done``: what the check said;
- ``error``: its check cell (or the exercise cell before it) raised; the row
  quotes the exception's last line;
- ``timed out``: the cell ran past its limit, or the notebook's time ran out first;
- ``missing``: no check cell for it (deleted).

It survives what students submit: an endless loop is interrupted and the rest
still runs; a file that is not a notebook is one error row, the others are
graded. :func:`execute` is also what builds and tests the lessons.
"""
import argparse
import asyncio
import csv
import json
import math
import os
import re
import sys
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import nbformat

from ._checks import InputError
from .exercises import MIME, lesson_exercises
from .exercises._core import all_lessons

__all__ = ["CELL_TIMEOUT", "NOTEBOOK_TIMEOUT", "CellRun", "Row", "check_results", "execute",
           "grade_notebook", "grade_paths", "lesson_of"]

NOTEBOOK_TIMEOUT = 300  # seconds for a whole notebook
CELL_TIMEOUT = 60  # seconds for one cell: an endless loop costs this, and the rest still runs
GRACE = 15  # seconds a cell gets to answer an interrupt before we give up on the kernel
CHECK_TAG, EXERCISE_TAG, RAISES_TAG = "check", "exercise", "raises-exception"
STATUSES = ("passed", "failed", "not done", "error", "timed out", "missing")


@dataclass(frozen=True)
class CellRun:
    """How one code cell ran: ``status`` is "ok", "error" or "timed out".

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


@dataclass(frozen=True)
class Row:
    """One exercise of one notebook; ``exercise`` is ``None`` for a notebook that could not run."""

    notebook: str
    exercise: str | None
    status: str
    message: str


def _kernel_env() -> dict[str, str]:
    """Offline, with matplotlib's inline backend, and importing this very copy of the package."""
    env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}
    env["NN_FROM_SCRATCH_OFFLINE"] = "1"
    env["JAX_PPRINT_USE_COLOR"] = "false"  # jaxprs without colour codes in the saved outputs
    package_root = str(Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")]))
    return env


def _error_line(cell: Any) -> str:
    for output in cell.get("outputs", []):
        if output.get("output_type") == "error":
            return f"{output.get('ename', 'Error')}: {output.get('evalue', '')}".strip().rstrip(":")
    return ""


async def _execute(nb: Any, timeout: float, cell_timeout: float, cwd: Path) -> list[CellRun]:
    from nbclient import NotebookClient
    from nbclient.exceptions import DeadKernelError

    client = NotebookClient(nb, kernel_name="python3", allow_errors=True,
                            interrupt_on_timeout=True, resources={"metadata": {"path": str(cwd)}},
                            # no kernel chatter; an error shows as its message, not a
                            # traceback through JAX's internals (the grader reads that line)
                            extra_arguments=["--Application.log_level=ERROR",
                                             "--InteractiveShell.xmode=Minimal"])
    runs: list[CellRun] = []
    deadline = time.monotonic() + timeout
    broken: CellRun | None = None  # once the kernel can run nothing more: what later cells get
    async with client.async_setup_kernel(env=_kernel_env()):
        for index, cell in enumerate(nb.cells):
            if cell.cell_type != "code" or not cell.source.strip():
                continue
            limit = min(cell_timeout, deadline - time.monotonic())
            if broken or limit <= 0:
                runs.append(CellRun(index, broken.status if broken else "timed out",
                                    broken.error if broken else
                                    f"was not run: the notebook's {timeout:g} s had run out"))
                continue
            client.timeout = max(1, math.ceil(limit))
            start = time.monotonic()
            try:
                await asyncio.wait_for(client.async_execute_cell(cell, index), limit + GRACE)
            except (TimeoutError, DeadKernelError):  # nbclient reports our time-out as a death
                seconds = time.monotonic() - start
                if seconds >= limit + GRACE - 1:
                    runs.append(CellRun(index, "timed out", f"ran past {limit:.0f} s and ignored "
                                                            f"the interrupt", seconds))
                    broken = CellRun(index, "timed out", "was not run: an earlier cell could "
                                                         "not be interrupted")
                else:
                    runs.append(CellRun(index, "error", "made the kernel die (out of memory, or "
                                                        "a crash)", seconds))
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
    return runs


def execute(nb: Any, *, timeout: float = NOTEBOOK_TIMEOUT, cell_timeout: float = CELL_TIMEOUT,
            cwd: str | Path = ".") -> list[CellRun]:
    """Run ``nb`` (an ``nbformat`` notebook, changed in place) in a fresh kernel, offline.

    Cells run one by one with errors allowed: a cell that raises does not stop
    the rest. A cell that runs past ``cell_timeout`` seconds is interrupted;
    once ``timeout`` seconds have passed for the whole notebook no more cells
    start. Returns one :class:`CellRun` per non-empty code cell.
    """
    runs: list[CellRun] = []
    failure: list[BaseException] = []

    def run() -> None:  # a thread of its own: works even where an event loop already runs
        try:
            runs.extend(asyncio.run(_execute(nb, timeout, cell_timeout, Path(cwd))))
        except BaseException as err:  # re-raised below, in the caller's thread
            failure.append(err)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    if failure:
        raise failure[0]
    return runs


def lesson_of(nb: Any, path: Path) -> str | None:
    """Which lesson a notebook is: its metadata, else its file name (``07_mlp...-alice.ipynb``)."""
    lesson = nb.metadata.get("nn_from_scratch", {}).get("lesson")
    if lesson:
        return lesson
    return next((slug for slug in all_lessons() if slug in path.stem), None)


def check_results(nb: Any) -> dict[str, dict[str, Any]]:
    """Every check result the executed notebook holds, by exercise id."""
    found = {}
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            record = output.get("data", {}).get(MIME)
            if isinstance(record, dict) and "exercise" in record:
                found[record["exercise"]] = record
    return found


def _check_cells(nb: Any, names: dict[str, str]) -> dict[str, int]:
    """Exercise id -> index of the check cell that calls its checker (by the checker's name)."""
    cells: dict[str, int] = {}
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "code" and CHECK_TAG in cell.metadata.get("tags", []):
            for name, exercise_id in names.items():
                if re.search(rf"\bcheck\.{name}\(", cell.source):
                    cells.setdefault(exercise_id, index)
    return cells


def grade_notebook(path: str | Path, *, timeout: float = NOTEBOOK_TIMEOUT,
                   cell_timeout: float = CELL_TIMEOUT) -> list[Row]:
    """Execute one notebook and return one :class:`Row` per exercise of its lesson."""
    path = Path(path)
    try:
        nb = nbformat.read(path, as_version=4)
    except Exception as err:
        return [Row(str(path), None, "error", f"not a readable notebook ({type(err).__name__}: "
                                              f"{str(err).splitlines()[0] if str(err) else ''})")]
    lesson = lesson_of(nb, path)
    if lesson is None:
        return [Row(str(path), None, "error", "cannot tell which lesson this is: its metadata "
                                              "has no nn_from_scratch.lesson and its name no "
                                              "lesson slug such as 07_mlp_from_scratch")]
    exercises = lesson_exercises(lesson)
    runs = {run.index: run for run in execute(nb, timeout=timeout, cell_timeout=cell_timeout,
                                              cwd=path.parent)}
    records = check_results(nb)
    check_cells = _check_cells(nb, {e.name: e.id for e in exercises})
    rows = []
    for ex in exercises:
        label = f"{ex.id} {ex.title}"
        if ex.id in records:
            record = records[ex.id]
            rows.append(Row(str(path), ex.id, record["status"], record["message"]))
            continue
        index = check_cells.get(ex.id)
        if index is None:
            rows.append(Row(str(path), ex.id, "missing", f"no check cell for {label} (was it "
                                                         f"deleted? it calls check.{ex.name})"))
            continue
        run = runs.get(index, CellRun(index, "error", "was not run"))
        before = runs.get(index - 1)  # the exercise cell, when it raised or timed out
        exercise_cell = EXERCISE_TAG in nb.cells[index - 1].metadata.get("tags", [])
        if exercise_cell and before and before.status != "ok":
            rows.append(Row(str(path), ex.id, before.status,
                            f"the exercise cell {before.what_happened}"))
        elif run.status != "ok":
            rows.append(Row(str(path), ex.id, run.status, f"the check cell {run.what_happened}"))
        else:
            rows.append(Row(str(path), ex.id, "error", "the check cell ran but showed no result "
                                                       "(is its last line the check call?)"))
    return rows


def notebooks_in(paths: Iterable[str | Path]) -> list[Path]:
    """The ``.ipynb`` files named, or found (not recursively) in the folders named."""
    found = []
    for given in paths:
        path = Path(given)
        if path.is_dir():
            found.extend(sorted(p for p in path.glob("*.ipynb")))
        elif path.exists():
            found.append(path)
        else:
            raise InputError(f"{given}: no such file or folder.")
    if not found:
        raise InputError(f"no notebooks (.ipynb) in {', '.join(map(str, paths))}.")
    return found


def grade_paths(paths: Sequence[str | Path], *, timeout: float = NOTEBOOK_TIMEOUT,
                cell_timeout: float = CELL_TIMEOUT, progress: bool = False) -> list[Row]:
    """Grade every notebook in ``paths`` (files or folders), one after the other."""
    rows = []
    for path in notebooks_in(paths):
        if progress:
            print(f"grading {path} ...", file=sys.stderr, flush=True)
        rows.extend(grade_notebook(path, timeout=timeout, cell_timeout=cell_timeout))
    return rows


def format_table(rows: Sequence[Row]) -> str:
    """Rows as an aligned text table, with a passed / total line per notebook."""
    header = ("notebook", "exercise", "status", "message")
    cells = [header] + [(r.notebook, r.exercise or "-", r.status, r.message) for r in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(3)]
    lines = ["  ".join(c[i].ljust(widths[i]) for i in range(3)) + "  " + c[3] for c in cells]
    lines.insert(1, "  ".join("-" * w for w in widths) + "  " + "-" * 7)
    for notebook in dict.fromkeys(r.notebook for r in rows):
        mine = [r for r in rows if r.notebook == notebook]
        passed = sum(r.status == "passed" for r in mine)
        lines.append(f"{notebook}: {passed} of {len(mine)} passed")
    return "\n".join(lines)


def write_csv(rows: Sequence[Row], path: str | Path) -> None:
    """One row per notebook: passed, total, then each exercise's status (a class's spreadsheet)."""
    exercises = sorted({r.exercise for r in rows if r.exercise})
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["notebook", "passed", "total", *exercises])
        for notebook in dict.fromkeys(r.notebook for r in rows):
            mine = [r for r in rows if r.notebook == notebook]
            status = {r.exercise: r.status for r in mine if r.exercise}
            writer.writerow([notebook, sum(r.status == "passed" for r in mine),
                             len(mine), *[status.get(e, "") for e in exercises]])


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", metavar="PATH",
                        help="notebooks, or folders of them (e.g. a class's submissions)")
    parser.add_argument("--timeout", type=float, default=NOTEBOOK_TIMEOUT, metavar="SECONDS",
                        help="time limit for each whole notebook")
    parser.add_argument("--cell-timeout", type=float, default=CELL_TIMEOUT, metavar="SECONDS",
                        help="time limit for one cell; a cell past it is interrupted")
    parser.add_argument("--json", action="store_true",
                        help="print a JSON list of {notebook, exercise, status, message}")
    parser.add_argument("--csv", metavar="FILE", help="also write one row per notebook here")


def grade_command(args: argparse.Namespace) -> int:
    if args.timeout <= 0 or args.cell_timeout <= 0:
        raise InputError(f"--timeout and --cell-timeout must be positive; got {args.timeout:g} "
                         f"and {args.cell_timeout:g}.")
    rows = grade_paths(args.paths, timeout=args.timeout, cell_timeout=args.cell_timeout,
                       progress=not args.json)
    print(json.dumps([asdict(r) for r in rows], ensure_ascii=False, indent=1) if args.json
          else format_table(rows))
    if args.csv:
        write_csv(rows, args.csv)
    return 0 if rows and all(r.status == "passed" for r in rows) else 1
