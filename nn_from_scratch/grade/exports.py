"""Results where instructors keep them: the printed table, a CSV, a feedback file per student,
the class report; every file written whole, under a name that says whose it is.

Gradescope's and GitHub Classroom's formats are in :mod:`.lms`. Every writer
takes the graded notebooks (:class:`~.results.Graded`) in the order they were
graded; none reads a notebook again. What a submission controls is made harmless
where it is written (:mod:`.inert`): no formula in the CSV, no markup in Markdown,
and nothing of the grader's machine in what a student gets back.
"""
import csv
import io
import os
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path, PurePath

from .._checks import InputError
from .inert import csv_cell, markdown, unplaced
from .report_markdown import report_markdown
from .report_page import report_html
from .results import Graded, exercise_columns

__all__ = ["REPORT_SUFFIXES", "export_names", "feedback", "format_table", "write_atomic",
           "write_csv", "write_feedback", "write_per_notebook", "write_report"]

SYMBOLS = {"passed": "✓", "failed": "✗", "not done": "…"}
REPORT_SUFFIXES = (".html", ".htm", ".md", ".markdown")


def write_atomic(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` whole: into a new file beside it, then renamed over it."""
    path = Path(path)
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def export_names(notebooks: Sequence[str]) -> dict[str, str]:
    """Each notebook's own file name in a per-notebook export, without a suffix: its path from
    the folder that holds them all (``alice/lesson03`` and ``bob/lesson03``; ``alice`` for a
    folder of ``alice.ipynb``, ``bob.ipynb``), never outside the export's folder.

    Raises :class:`InputError` when two notebooks would write one file (names that differ
    only in case, on a file system that ignores it).
    """
    paths = {name: PurePath(os.path.abspath(name)) for name in notebooks}  # ".." resolved
    if not paths:
        return {}
    root = os.path.commonpath([str(p.parent) for p in paths.values()])
    names: dict[str, str] = {}
    owner: dict[str, str] = {}
    for notebook, path in paths.items():
        relative = path.relative_to(root)
        name = str(relative.with_suffix("") if relative.suffix == ".ipynb" else relative)
        other = owner.setdefault(name.casefold(), notebook)
        if other != notebook:
            raise InputError(f"{other} and {notebook} would write one export file ({name}); "
                             f"expected a name of its own for each notebook. Rename one, or "
                             f"grade them in two runs.")
        names[notebook] = name
    return names


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
    """One row per notebook: its points per exercise, the total, the maximum and the notes;
    no cell a spreadsheet would take for a formula (:func:`.inert.csv_cell`)."""
    exercises = exercise_columns(graded)
    f = io.StringIO()
    writer = csv.writer(f)
    writer.writerow(["notebook", "lesson", *exercises, "total", "max", "notes"])
    for g in graded:
        points = {r.exercise: f"{r.points:g}" for r in g.rows if r.exercise}
        notes = [*g.notes, *(f"{r.exercise}: {r.note}" for r in g.rows if r.note)]
        if not g.rows[0].exercise:
            notes.insert(0, g.rows[0].message)
        writer.writerow([csv_cell(cell) for cell in (
            g.notebook, g.lesson or "", *[points.get(e, "") for e in exercises],
            f"{g.points:g}", f"{g.max_points:g}", "; ".join(notes))])
    write_atomic(path, f.getvalue())


def feedback(graded: Graded, name: str | None = None) -> str:
    """The Markdown a student gets: each exercise's status and hint, then what to fix; every
    word from the submission inert, nothing of the grader's machine. ``name``: whose it is
    (:func:`export_names`; the file name alone by default)."""
    def said(text: str) -> str:
        return markdown(unplaced(text))

    lines = [f"# Feedback on {said(name or Path(graded.notebook).name)}", ""]
    if not graded.rows[0].exercise:
        return "\n".join(lines + [f"This notebook could not be graded: "
                                  f"{said(graded.rows[0].message)}.", ""])
    lines += [f"**{graded.points:g} of {graded.max_points:g} points** "
              f"({graded.passed} of {len(graded.rows)} exercises passed).", "",
              "| exercise | status | points | what the check said |", "|---|---|---|---|"]
    for r in graded.rows:
        lines.append(f"| {r.exercise} {r.title} | {SYMBOLS.get(r.status, '✗')} "
                     f"{r.status} | {r.points:g}/{r.max_points:g} | {said(r.message)} |")
    todo = [r for r in graded.rows if r.status != "passed"]
    lines += ["", "## What to fix", ""]
    lines += [f"- **{r.exercise} {r.title}** ({r.status}): {said(r.message)}"
              + (f" ({said(r.note)})" if r.note else "") for r in todo] or ["Nothing: well done."]
    if graded.notes:
        lines += ["", "## Notes from the grader", "",
                  "Your notebook was run with the lesson's own cells put back as released:", ""]
        lines += [f"- {said(note)}" for note in graded.notes]
    return "\n".join(lines) + "\n"


def write_per_notebook(graded: Sequence[Graded], folder: str | Path, suffix: str,
                       text: Callable[[Graded, str], str]) -> None:
    """``folder/<export name><suffix>`` for every notebook (:func:`export_names`), the
    folders of its name made as needed."""
    names = export_names([g.notebook for g in graded])
    for g in graded:
        path = Path(folder) / f"{names[g.notebook]}{suffix}"
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, text(g, names[g.notebook]))


def write_feedback(graded: Sequence[Graded], folder: str | Path) -> None:
    """``folder/<export name>.md`` for every notebook (``alice/lesson03.md``)."""
    write_per_notebook(graded, folder, ".md", feedback)


def write_report(graded: Sequence[Graded], path: str | Path) -> None:
    """The class report: ``path`` ending in ``.md`` (or ``.markdown``): Markdown
    (:mod:`.report_markdown`); ``.html``: one HTML page (:mod:`.report_page`)."""
    suffix = Path(path).suffix.lower()
    if suffix not in REPORT_SUFFIXES:
        raise InputError(f"write_report: {path} should end in one of {REPORT_SUFFIXES}; got "
                         f"{suffix or 'no suffix'}.")
    text = report_markdown(graded) if suffix in (".md", ".markdown") else report_html(graded)
    write_atomic(path, text)
