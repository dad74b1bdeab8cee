"""What the class got wrong: per lesson, the exercises to revisit and the mistakes behind them.

The grader has every row's hint, and a hint names the mistake ("returned
probabilities (a softmax); predict returns LOG-probabilities..."). :func:`summarize`
turns a class's rows into what an instructor reads before the next lecture, for
each lesson graded:

- how many notebooks, and how their scores spread;
- each exercise's pass rate, hardest first, and the two to revisit first;
- for each exercise, its failing hints grouped (hints that differ only in their
  numbers are one mistake), each with its count, its share of the class and the
  notebooks that made it; "not done" apart;
- every notebook against every exercise, best score first;
- the grader's notes (restored cells, flags), counted by kind;

and, before the lessons, the notebooks that could not be graded at all (:func:`ungraded`).

:mod:`.report_page` writes it as one self-contained HTML page, :mod:`.report_markdown` as
Markdown.
"""
import os
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import PurePath

from .results import Graded, exercise_columns

__all__ = ["ExerciseSummary", "Group", "LessonSummary", "mistake_of", "short_names", "summarize",
           "ungraded"]

# A number, in any of the ways a hint writes one (-3, 0.25, 1e-05, 1,280): one group of hints
_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:(?:\d{1,3}(?:,\d{3})+(?!\d)|\d+)(?:\.\d*)?|\.\d+)"
                     r"(?:[eE][-+]?\d+)?")


def mistake_of(message: str) -> str:
    """A hint with its numbers taken out: the mistake it names, whatever the values."""
    return _NUMBER.sub("#", message).strip()


@dataclass
class Group:
    """Notebooks whose hint for an exercise named the same mistake (numbers aside)."""

    status: str
    mistake: str
    example: str  # the most common of its hints, numbers and all
    notebooks: list[str] = field(default_factory=list)


@dataclass
class ExerciseSummary:
    """One exercise over the class: counts per status, its pass rate, its mistakes grouped."""

    exercise: str
    title: str
    counts: Counter
    notebooks: int
    groups: list[Group]  # failed, error, timed out...: most common first
    not_done: list[str]  # the notebooks that left it as the stub

    @property
    def pass_rate(self) -> float:
        return self.counts["passed"] / self.notebooks if self.notebooks else 0.0


@dataclass
class LessonSummary:
    """One lesson's notebooks: scores, exercises (hardest first), the grid, the notes."""

    lesson: str
    scores: list[tuple[str, float, float]]  # (notebook, points, max), best first
    exercises: list[ExerciseSummary]  # hardest first
    grid: list[tuple[str, dict[str, str]]]  # (notebook, {exercise: status}), best first
    notes: list[tuple[str, int]]  # (kind, count), most common first
    columns: list[str]  # the exercises, in lesson order

    @property
    def revisit(self) -> list[ExerciseSummary]:
        """The two exercises to revisit first: the lowest pass rates (none that all passed)."""
        return [e for e in self.exercises[:2] if e.pass_rate < 1.0]


def short_names(graded: Sequence[Graded]) -> dict[str, str]:
    """Each notebook's path, relative to the folder that holds them all: ``alice.ipynb`` for a
    folder of notebooks, ``alice/lesson07.ipynb`` where each student's has the same name."""
    paths = [PurePath(g.notebook) for g in graded]
    if not paths:
        return {}
    root = PurePath(os.path.commonpath([str(p.parent) for p in paths])) \
        if len({p.is_absolute() for p in paths}) == 1 else PurePath()
    return {str(p): str(p.relative_to(root)) if p.is_relative_to(root) else str(p)
            for p in paths}


def _exercise(exercise: str, notebooks: list[Graded], name: dict[str, str]) -> ExerciseSummary:
    rows = [(g, row) for g in notebooks for row in g.rows if row.exercise == exercise]
    counts = Counter(row.status for _g, row in rows)
    grouped: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for g, row in rows:
        if row.status not in ("passed", "not done"):
            grouped.setdefault((row.status, mistake_of(row.message)), []).append(
                (name[g.notebook], row.message))
    groups = [Group(status, mistake, Counter(m for _n, m in members).most_common(1)[0][0],
                    sorted(n for n, _m in members))
              for (status, mistake), members in grouped.items()]
    groups.sort(key=lambda group: (-len(group.notebooks), group.mistake))
    title = next((row.title for _g, row in rows), "")
    return ExerciseSummary(exercise, title, counts, len(rows), groups,
                           sorted(name[g.notebook] for g, row in rows
                                  if row.status == "not done"))


def _was_graded(graded: Graded) -> bool:
    return bool(graded.lesson and graded.rows and graded.rows[0].exercise)


def ungraded(graded: Sequence[Graded]) -> list[tuple[str, str]]:
    """``(notebook, why)`` for each notebook that could not be graded at all (not a notebook,
    of no lesson, its kernel never started...), by name."""
    name = short_names(graded)
    return sorted((name[g.notebook], g.rows[0].message if g.rows else "")
                  for g in graded if not _was_graded(g))


def summarize(graded: Sequence[Graded]) -> list[LessonSummary]:
    """The class's rows, lesson by lesson (the notebooks that could not be graded are
    :func:`ungraded`'s)."""
    name = short_names(graded)
    lessons: dict[str, list[Graded]] = {}
    for g in graded:
        if _was_graded(g):
            lessons.setdefault(g.lesson, []).append(g)  # type: ignore[arg-type]
    summaries = []
    for lesson, notebooks in sorted(lessons.items()):
        notebooks = sorted(notebooks, key=lambda g: (-g.points, name[g.notebook]))
        columns = exercise_columns(notebooks)
        exercises = [_exercise(e, notebooks, name) for e in columns]
        exercises.sort(key=lambda e: (e.pass_rate, -len(e.groups), columns.index(e.exercise)))
        notes = Counter(mistake_of(note) for g in notebooks for note in g.notes)
        summaries.append(LessonSummary(
            lesson, [(name[g.notebook], g.points, g.max_points) for g in notebooks], exercises,
            [(name[g.notebook], {r.exercise: r.status for r in g.rows if r.exercise})
             for g in notebooks],
            sorted(notes.items(), key=lambda item: (-item[1], item[0])), columns))
    return summaries
