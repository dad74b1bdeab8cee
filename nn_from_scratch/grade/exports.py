"""Results where instructors keep them: the printed table, a CSV, and a feedback file per student.

Gradescope's and GitHub Classroom's formats are in :mod:`.lms`. Every writer
takes the graded notebooks (:class:`~.results.Graded`) in the order they were
graded; none reads a notebook again.
"""
import csv
import io
from collections.abc import Sequence
from pathlib import Path

from .journal import write_atomic
from .results import Graded

__all__ = ["exercise_columns", "feedback", "format_table", "stem", "write_csv", "write_feedback"]

SYMBOLS = {"passed": "✓", "failed": "✗", "not done": "…"}


def stem(graded: Graded) -> str:
    """The file name a notebook's own export gets: its name without ``.ipynb``."""
    return Path(graded.notebook).stem


def exercise_columns(graded: Sequence[Graded]) -> list[str]:
    """Every exercise id seen, in lesson and exercise order (``07.2`` before ``07.10``)."""
    ids = {row.exercise for g in graded for row in g.rows if row.exercise}
    return sorted(ids, key=lambda e: tuple(int(part) for part in e.split(".")))


def format_table(graded: Sequence[Graded]) -> str:
    """An aligned text table (notebook, exercise, status, message), then a line per notebook."""
    header = ("notebook", "exercise", "status", "message")
    cells = [header] + [(g.notebook, r.exercise or "-", r.status,
                         r.message + (f" [{r.note}]" if r.note else ""))
                        for g in graded for r in g.rows]
    widths = [max(len(c[i]) for c in cells) for i in range(3)]
    lines = ["  ".join(c[i].ljust(widths[i]) for i in range(3)) + "  " + c[3] for c in cells]
    lines.insert(1, "  ".join("-" * w for w in widths) + "  " + "-" * 7)
    for g in graded:
        lines.append(f"{g.notebook}: {g.summary}" if g.rows[0].exercise else
                     f"{g.notebook}: not graded")
        lines.extend(f"    note: {note}" for note in g.notes)
    return "\n".join(lines)


def write_csv(graded: Sequence[Graded], path: str | Path) -> None:
    """One row per notebook: its points per exercise, the total, the maximum and the notes."""
    exercises = exercise_columns(graded)
    f = io.StringIO()
    writer = csv.writer(f)
    writer.writerow(["notebook", "lesson", *exercises, "total", "max", "notes"])
    for g in graded:
        points = {r.exercise: f"{r.points:g}" for r in g.rows if r.exercise}
        notes = [*g.notes, *(f"{r.exercise}: {r.note}" for r in g.rows if r.note)]
        if not g.rows[0].exercise:
            notes.insert(0, g.rows[0].message)
        writer.writerow([g.notebook, g.lesson or "", *[points.get(e, "") for e in exercises],
                         f"{g.points:g}", f"{g.max_points:g}", "; ".join(notes)])
    write_atomic(path, f.getvalue())


def feedback(graded: Graded) -> str:
    """The Markdown a student gets: each exercise's status and hint, then what to fix."""
    lines = [f"# Feedback on {Path(graded.notebook).name}", ""]
    if not graded.rows[0].exercise:
        return "\n".join(lines + [f"This notebook could not be graded: "
                                  f"{graded.rows[0].message}.", ""])
    lines += [f"**{graded.points:g} of {graded.max_points:g} points** "
              f"({graded.passed} of {len(graded.rows)} exercises passed).", "",
              "| exercise | status | points | what the check said |", "|---|---|---|---|"]
    for r in graded.rows:
        message = r.message.replace("|", "\\|").replace("\n", " ")
        lines.append(f"| {r.exercise} {r.title} | {SYMBOLS.get(r.status, '✗')} {r.status} "
                     f"| {r.points:g}/{r.max_points:g} | {message} |")
    todo = [r for r in graded.rows if r.status != "passed"]
    lines += ["", "## What to fix", ""]
    lines += [f"- **{r.exercise} {r.title}** ({r.status}): {r.message}"
              + (f" ({r.note})" if r.note else "") for r in todo] or ["Nothing: well done."]
    if graded.notes:
        lines += ["", "## Notes from the grader", "",
                  "Your notebook was run with the lesson's own cells put back as released:", ""]
        lines += [f"- {note}" for note in graded.notes]
    return "\n".join(lines) + "\n"


def write_feedback(graded: Sequence[Graded], folder: str | Path) -> None:
    """``folder/<notebook name>.md`` for every notebook."""
    for g in graded:
        write_atomic(Path(folder) / f"{stem(g)}.md", feedback(g))
