"""What grading a notebook produces: a row per exercise, points, notes; saved and merged as JSON.

Every exercise of the notebook's lesson gets one :class:`Row`:

- ``passed`` / ``failed`` / ``not done``: what the grader's own check said;
- ``error``: the check (or the exercise cell before it) raised; the row quotes
  the exception's last line;
- ``timed out``: the cell ran past its limit, or the notebook's time ran out;
- ``out of memory``: the kernel passed the memory cap and was stopped.

A :class:`Graded` notebook also carries notes on what was tampered with and
restored. :func:`load_json` reads back :func:`to_json`'s output, signed by the
grader that wrote it, so that runs over slices of a class (``--shard``) merge
into one (:func:`merge`).
"""
import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .._checks import InputError
from .journal import sign, state_folder, verify

__all__ = ["STATUSES", "Graded", "Row", "exercise_columns", "from_dict", "load_json", "merge",
           "to_json"]

STATUSES = ("passed", "failed", "not done", "error", "timed out", "out of memory")
FORMAT = "nn_from_scratch.grade/3"  # the JSON's "format": changes when its shape does


@dataclass(frozen=True)
class Row:
    """One exercise of one notebook; ``exercise`` is ``None`` for a notebook that could not run.

    ``note`` compares with the submission, e.g. "showed ✓ in the submitted notebook; fails
    when run".
    """

    exercise: str | None
    title: str
    status: str
    message: str
    points: float = 0.0
    max_points: float = 1.0
    note: str = ""


@dataclass(frozen=True)
class Graded:
    """A graded notebook: its rows, the notes on what was restored, and where its time went."""

    notebook: str
    lesson: str | None
    rows: tuple[Row, ...]
    notes: tuple[str, ...] = ()
    seconds: dict[str, float] = field(default_factory=dict)  # kernel, lesson, checks

    @property
    def points(self) -> float:
        return sum(row.points for row in self.rows)

    @property
    def max_points(self) -> float:
        return sum(row.max_points for row in self.rows)

    @property
    def passed(self) -> int:
        return sum(row.status == "passed" for row in self.rows)

    @property
    def summary(self) -> str:
        """``"5 of 7 passed, 5/7 points"``."""
        return (f"{self.passed} of {len(self.rows)} passed, "
                f"{self.points:g}/{self.max_points:g} points")


def exercise_columns(graded: Sequence[Graded]) -> list[str]:
    """Every exercise id seen, in lesson and exercise order (``07.2`` before ``07.10``)."""
    ids = {row.exercise for g in graded for row in g.rows if row.exercise}
    return sorted(ids, key=lambda e: tuple(int(part) for part in e.split(".")))


def to_json(graded: Sequence[Graded]) -> str:
    """The results as JSON: ``{"format", "notebooks": [...], "signature"}``, signed by this
    grader (:func:`.journal.sign`), so that ``--merge`` takes only what a grader wrote."""
    notebooks = [asdict(g) for g in graded]
    return json.dumps({"format": FORMAT, "notebooks": notebooks, "signature": sign(notebooks)},
                      ensure_ascii=False, indent=1)


def from_dict(data: dict[str, Any]) -> Graded:
    """A :class:`Graded` from its JSON form (``dataclasses.asdict``)."""
    rows = tuple(Row(**row) for row in data["rows"])
    return Graded(data["notebook"], data["lesson"], rows, tuple(data.get("notes", ())),
                  dict(data.get("seconds", {})))


def load_json(path: str | Path) -> list[Graded]:
    """Read a file written with ``--json-file``; errors for people if it is not one, or if this
    grader's key did not sign it."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        if data.get("format") != FORMAT:
            raise ValueError(f"its format is {data.get('format')!r}, not {FORMAT!r}")
        graded = [from_dict(notebook) for notebook in data["notebooks"]]
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as err:
        raise InputError(f"--merge {path}: not the JSON results of a grade run ({err}); merge "
                         f"the files that `grade --json-file FILE` wrote.") from None
    if not verify(data["notebooks"], data.get("signature")):
        raise InputError(f"--merge {path}: not signed with this grader's key "
                         f"({state_folder() / 'grader.key'}): it was changed, or written by "
                         f"something else. Grade it again, or, for results graded on another "
                         f"machine, copy that machine's key file here.")
    return graded


def merge(parts: Iterable[tuple[str, Sequence[Graded]]]) -> list[Graded]:
    """One class from its slices, ``(file, its notebooks)`` each: every notebook once, by
    notebook path. A notebook in two files with different results is refused, naming both
    (red team, round fourteen: the last file named won, silently, so a stale part left in the
    folder could replace a student's 5/5 by an earlier 0/5)."""
    by_notebook: dict[str, tuple[str, Graded]] = {}
    for path, part in parts:
        for graded in part:  # one notebook however its path was spelt (a/../a/x.ipynb: red
            # team, round fourteen, a second look), without following links
            earlier = by_notebook.setdefault(os.path.normpath(graded.notebook), (path, graded))
            if earlier[1] != graded:
                raise InputError(f"--merge: {graded.notebook} is in {earlier[0]} and in {path}, "
                                 f"graded twice with different results; expected each notebook "
                                 f"in one part (a part left from an earlier run?). Merge the "
                                 f"parts of one run.")
    return [by_notebook[name][1] for name in sorted(by_notebook)]
