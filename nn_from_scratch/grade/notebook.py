"""Grade one notebook: read its copy, rebuild it from the release, run it, check it here.

:func:`prepare` does everything before a kernel is needed (so that a batch can
start the kernel meanwhile), :func:`run_prepared` runs it and makes the rows:
the kernel runs the lesson's cells and the student's; at each check cell the
grader runs the checker in its own process (:mod:`.checking`), and an exercise
whose submitted code copies the library's answer (:mod:`.copying`) is marked so.
The submission's own outputs are read once, only to compare: an exercise that
showed ✓ there and fails when graded gets a note saying so. Everything a
submission controls that reaches a row (its name, an exception's text, a hint
that quotes its values) is one clean line of bounded length (:func:`.intake.clean`).
"""
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..exercises import lesson_exercises
from ..exercises._core import all_lessons
from ..kernel import Kernel
from ..notebook_runner import CellRun, Limits, run_cells
from .assignment import other_lesson
from .capped import Unreadable, read_notebook
from .checker_process import CheckerProcess, grading_hook
from .checking import PROLOGUE
from .copying import Copy, called_twin, library_copies
from .intake import Submission, clean
from .rebuild import Rebuilt, left_as_released, rebuild
from .release import (
    EXERCISE_TAG,
    RELEASE,
    Release,
    course_metadata,
    edition_folder,
    edition_language,
    load_release,
)
from .results import Graded, Row
from .suspicious import ORDER, signs
from .verdicts import CheckCell, check_cells, check_results

__all__ = ["RUNS_PROGRAMS", "Prepared", "failed", "lesson_of", "prepare", "run_prepared"]

# The lessons whose own cells start programs (lesson 12: run_multiprocess starts two Pythons).
# In every other lesson's graded kernel no process can start one (Kernel.forbid_programs): a
# program runs code the reading never sees (round nineteen ran the library's relu in a child
# Python through matplotlib.testing). In these, a child process remains a way past the
# reading (the README says so).
RUNS_PROGRAMS = frozenset({"12_sharding"})


@dataclass
class Prepared:
    """A submission ready to run: its rebuilt notebook, its check cells, what it copied."""

    submission: Submission
    release: Release
    rebuilt: Rebuilt
    checks: list[CheckCell]
    shown: dict[str, dict[str, Any]]  # what the submission's saved outputs showed
    notes: list[str]
    copies: dict[str, Copy]  # exercise id -> the library's function its code hands in


def lesson_of(nb: Any, path: str | Path) -> str | None:
    """Which lesson a notebook is: its metadata, else its file name (``07_mlp...-alice.ipynb``).

    Only a lesson of this course counts: the metadata names a lesson, never a path.
    """
    lessons = all_lessons()
    lesson = course_metadata(nb).get("lesson")
    if isinstance(lesson, str) and lesson in lessons:
        return lesson
    return next((slug for slug in lessons if slug in Path(path).stem), None)


def failed(path: str, message: str, lesson: str | None = None) -> Graded:
    """A notebook that could not be graded at all: one error row."""
    return Graded(clean(path), lesson, (Row(None, "", "error", clean(message), 0.0, 0.0),))


def prepare(submission: Submission, release_dir: Path = RELEASE,
            pinned: str | None = None) -> Prepared | Graded:
    """Read and rebuild a submission; a :class:`Graded` error row if it cannot be graded.

    ``pinned``: the assignment's lesson (:mod:`.assignment`): a notebook of another is
    refused, and one that names no lesson is taken as this one."""
    path = submission.path
    if submission.copy is None:
        return failed(path, f"not graded: {submission.problem}")
    try:
        nb = read_notebook(submission.copy.read_bytes())
    except Unreadable as err:
        return failed(path, str(err))
    lesson = lesson_of(nb, path) or pinned
    if pinned and lesson and lesson != pinned:
        return failed(path, other_lesson(lesson, pinned), lesson)
    if lesson is None:
        return failed(path, "cannot tell which lesson this is: its metadata has no "
                            "nn_from_scratch.lesson of this course and its name no lesson slug "
                            "such as 07_mlp_from_scratch")
    # A Chinese submission is rebuilt from the Chinese release (the English one if none ships).
    release = load_release(lesson, edition_folder(release_dir, edition_language(nb))) or \
        load_release(lesson, release_dir)
    if release is None:
        return failed(path, f"no released student edition of {lesson} ships with this "
                            f"package; rebuild it with tools/notebooks.py --release", lesson)
    rebuilt = rebuild(nb, release)
    notes = list(rebuilt.notes)
    found: dict[str, list[tuple[str, bool]]] = {}  # what -> the cells that do it, in the
    # notebook's order: (label, added by the student)
    for cell, placed in zip(rebuilt.nb.cells, rebuilt.placed):
        released = placed.released
        if cell.cell_type == "code" and (released is None or released.role == EXERCISE_TAG):
            first = cell.source.strip().splitlines()[0][:40] if cell.source.strip() else ""
            label = (f"the exercise cell of {released.exercise}" if released else  # quoted as
                     f"a cell the student added ({first!r})")  # repr: it cannot close its quote
            for what in signs(cell.source):
                found.setdefault(what, []).append((label, released is None))
    for what in sorted(found, key=ORDER.index):  # the library and the grader's machinery first
        # each exercise cell's own note, and one for the cells added that do the same (300
        # added cells starting a thread buried the note of the one that imported the library,
        # at the end of a 25 KB cell: red team, round fourteen)
        added = [label for label, by_student in found[what] if by_student]
        notes.extend(clean(f"{label} {what}") for label, by_student in found[what]
                     if not by_student or len(added) <= 3)
        if len(added) > 3:
            notes.append(clean(f"{added[0]} {what} (and so do {len(added) - 1} other cells "
                               f"the student added)"))
    return Prepared(submission, release, rebuilt, check_cells(rebuilt), check_results(nb), notes,
                    library_copies(rebuilt, release))


def _row(exercise: Any, verdict: dict | None, exercise_run: CellRun | None,
         check_run: CellRun | None, points: float, shown: dict | None,
         copied: Copy | None = None, stub: bool = False) -> Row:
    if stub and verdict:  # nothing the student wrote is what the check was handed: whatever
        # the kernel answered (a kernel that died or ran out of memory is said as it was)
        status, message = "not done", (verdict["message"] if verdict["status"] == "not done"
                                       else "the exercise cell is still the released stub")
    elif copied and not any(run and run.status != "ok" and not run.raised
                            for run in (exercise_run, check_run)):  # what a check in class
        status, message = "failed", copied.message  # says of it too, in the grader's language
        # (a kernel stopped, out of memory, out of time or dead, is said as it was: what
        # stopped it matters more)
    elif verdict and verdict["status"] == "passed":
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
    if stub and verdict and verdict["status"] == "passed":
        note = ("the kernel handed the check a passing answer although the exercise cell is "
                "the released stub: something in the notebook answers for it")
    return Row(exercise.id, exercise.title, status, clean(message),
               points if status == "passed" else 0.0, points, note)


async def run_prepared(prepared: Prepared, kernel: Kernel, limits: Limits,
                       notes: tuple[str, ...] = (),
                       checkers: CheckerProcess | None = None) -> Graded:
    """Run a prepared submission in ``kernel`` (shut down afterwards), each check decided in
    ``checkers`` (the batch worker's; else one of its own, stopped at the end); one row per
    exercise. ``notes``: what the grader says of every notebook of the run."""
    nb, checks = prepared.rebuilt.nb, prepared.checks
    own = checkers is None
    checkers = checkers or CheckerProcess()  # a process of the grader's that can be stopped
    verdicts: dict[str, dict[str, Any]] = {}
    module = prepared.release.checker
    hooks = {c.index: grading_hook(c.index, checkers, {"module": module, "checker": c.checker,
                                                       "names": list(c.names)},
                                   verdicts, c.exercise) for c in checks}
    try:
        if prepared.release.lesson not in RUNS_PROGRAMS:
            try:
                await kernel.forbid_programs()  # (False, and nothing done, without a sandbox)
            except BaseException:
                await kernel.shutdown()  # (run_cells, which would, never started)
                raise
        runs = {run.index: run for run in await run_cells(nb, kernel, limits, hooks=hooks,
                                                          prologue=PROLOGUE)}
    finally:
        if own:
            await checkers.stop()
    cells = {(placed.released.role, placed.released.exercise): index
             for index, placed in enumerate(prepared.rebuilt.placed) if placed.released}
    points = {c.exercise: c.points for c in prepared.release.cells if c.role == "check"}
    rows, stubs = [], left_as_released(prepared.rebuilt)
    job = {c.exercise: c for c in checks}
    for exercise in lesson_exercises(prepared.release.lesson):
        check = cells.get(("check", exercise.id))
        verdict = verdicts.get(exercise.id)
        copied = prepared.copies.get(exercise.id) or (  # (a check that failed it already
            called_twin(job[exercise.id].checker, list(job[exercise.id].names),  # says why)
                        verdict.get("called"))
            if verdict and verdict["status"] == "passed" and exercise.id in job else None)
        rows.append(_row(exercise, verdict,
                         runs.get(cells.get((EXERCISE_TAG, exercise.id), -1)),
                         runs.get(check, CellRun(check, "error", "was not run"))
                         if check is not None else None,
                         points.get(exercise.id, 1.0), prepared.shown.get(exercise.id),
                         copied, exercise.id in stubs))
    checked = sum(runs[c.index].seconds for c in checks if c.index in runs)
    seconds = {"kernel": round(kernel.seconds, 2), "checks": round(checked, 2),
               "lesson": round(sum(r.seconds for r in runs.values()) - checked, 2)}
    cut = [f"the output of cell {index + 1} passed the limit ({limits.cell_output // 2**20} MB "
           f"or {limits.cell_outputs:,} outputs a cell, {limits.output // 2**20} MB a notebook); "
           f"the rest was dropped"
           for index, run in sorted(runs.items()) if run.cut]
    everything = tuple(dict.fromkeys([*notes, *prepared.notes, *cut]))
    return Graded(clean(prepared.submission.path), prepared.release.lesson, tuple(rows),
                  everything, seconds)
