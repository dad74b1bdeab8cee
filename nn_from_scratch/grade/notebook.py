"""Grade one notebook: read it, rebuild it from the release, run it, read the grader's verdicts.

:func:`prepare` does everything before a kernel is needed (so that a batch can
start the kernel meanwhile), :func:`run_prepared` runs it and makes the rows.
The submission's own outputs are read once, only to compare: an exercise that
showed ✓ there and fails when graded gets a note saying so.
"""
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat

from ..exercises import lesson_exercises
from ..exercises._core import all_lessons
from ..notebook_runner import DEFAULT_LIMITS, CellRun, Kernel, Limits, in_thread, run_cells
from .rebuild import Rebuilt, rebuild
from .release import EXERCISE_TAG, RELEASE, Release, load_release
from .results import Graded, Row
from .suspicious import flags
from .verdicts import GradingCell, add_grading_cells, check_results, read_verdicts

__all__ = ["Prepared", "grade_notebook", "lesson_of", "prepare", "run_prepared"]


@dataclass
class Prepared:
    """A submission ready to run: its rebuilt notebook and the grader's cells in it."""

    path: Path
    release: Release
    rebuilt: Rebuilt
    grading: list[GradingCell]
    shown: dict[str, dict[str, Any]]  # what the submission's saved outputs showed
    notes: list[str]


def lesson_of(nb: Any, path: Path) -> str | None:
    """Which lesson a notebook is: its metadata, else its file name (``07_mlp...-alice.ipynb``)."""
    lesson = nb.metadata.get("nn_from_scratch", {}).get("lesson")
    if lesson:
        return str(lesson)
    return next((slug for slug in all_lessons() if slug in path.stem), None)


def _failed(path: Path, message: str, lesson: str | None = None) -> Graded:
    return Graded(str(path), lesson, (Row(None, "", "error", message, 0.0, 0.0),))


def prepare(path: str | Path, release_dir: Path = RELEASE) -> Prepared | Graded:
    """Read and rebuild ``path``; a :class:`Graded` error row if it cannot be graded at all."""
    path = Path(path)
    try:
        submission = nbformat.read(path, as_version=4)
    except Exception as err:
        first = str(err).splitlines()[0] if str(err) else ""
        return _failed(path, f"not a readable notebook ({type(err).__name__}: {first})")
    lesson = lesson_of(submission, path)
    if lesson is None:
        return _failed(path, "cannot tell which lesson this is: its metadata has no "
                             "nn_from_scratch.lesson and its name no lesson slug such as "
                             "07_mlp_from_scratch")
    release = load_release(lesson, release_dir)
    if release is None:
        return _failed(path, f"no released student edition of {lesson} ships with this "
                             f"package; rebuild it with tools/notebooks.py --release", lesson)
    rebuilt = rebuild(submission, release)
    notes = list(rebuilt.notes)
    for cell, placed in zip(rebuilt.nb.cells, rebuilt.placed):
        released = placed.released
        if cell.cell_type == "code" and (released is None or released.role == EXERCISE_TAG):
            first = cell.source.strip().splitlines()[0][:40] if cell.source.strip() else ""
            label = (f"the exercise cell of {released.exercise}" if released else
                     f"a cell the student added (`{first}`)")
            notes.extend(flags(label, cell.source))
    grading = add_grading_cells(rebuilt, release.checker)
    return Prepared(path, release, rebuilt, grading, check_results(submission), notes)


def _row(exercise: Any, verdict: dict | None, exercise_run: CellRun | None,
         check_run: CellRun | None, points: float, shown: dict | None) -> Row:
    if verdict and verdict["status"] == "passed":
        status, message = "passed", verdict["message"]
    elif exercise_run and exercise_run.status != "ok":
        status, message = exercise_run.status, f"the exercise cell {exercise_run.what_happened}"
    elif verdict:
        status, message = verdict["status"], verdict["message"]
    elif check_run is None:
        status, message = "error", "the release has no check cell for it"
    elif check_run.status != "ok":
        status, message = check_run.status, f"the check {check_run.what_happened}"
    else:
        status, message = "error", "the grader's check showed no result"
    note = ("showed ✓ in the submitted notebook; fails when run"
            if shown and shown.get("status") == "passed" and status != "passed" else "")
    return Row(exercise.id, exercise.title, status, message,
               points if status == "passed" else 0.0, points, note)


async def run_prepared(prepared: Prepared, kernel: Kernel, limits: Limits) -> Graded:
    """Run a prepared submission in ``kernel`` (shut down afterwards); one row per exercise."""
    nb, grading = prepared.rebuilt.nb, prepared.grading
    quiet = {cell.index for cell in grading}
    runs = {run.index: run for run in await run_cells(nb, kernel, limits, quiet)}
    verdicts, forged = read_verdicts(nb, grading)
    cells = {(placed.released.role, placed.released.exercise): index
             for index, placed in enumerate(prepared.rebuilt.placed) if placed.released}
    points = {c.exercise: c.points for c in prepared.release.cells if c.role == "check"}
    rows = []
    for exercise in lesson_exercises(prepared.release.lesson):
        check = cells.get(("check", exercise.id))
        rows.append(_row(exercise, verdicts.get(exercise.id),
                         runs.get(cells.get((EXERCISE_TAG, exercise.id), -1)),
                         runs.get(check, CellRun(check, "error", "was not run"))
                         if check is not None else None,
                         points.get(exercise.id, 1.0), prepared.shown.get(exercise.id)))
    checks = sum(runs[i].seconds for i in quiet if i in runs)
    seconds = {"kernel": round(kernel.seconds, 2), "checks": round(checks, 2),
               "lesson": round(sum(r.seconds for r in runs.values()) - checks, 2)}
    notes = tuple(dict.fromkeys(prepared.notes + forged))
    return Graded(str(prepared.path), prepared.release.lesson, tuple(rows), notes, seconds)


def grade_notebook(path: str | Path, limits: Limits = DEFAULT_LIMITS,
                   release_dir: Path = RELEASE) -> Graded:
    """Grade one notebook in a fresh kernel: one :class:`Row` per exercise of its lesson."""
    prepared = prepare(path, release_dir)
    if isinstance(prepared, Graded):
        return prepared

    async def start_and_run(job: Prepared) -> Graded:
        return await run_prepared(job, await Kernel.start(job.path.parent), limits)

    return in_thread(lambda: start_and_run(prepared))
