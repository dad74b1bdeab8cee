"""Which check each check cell asks for, and what a submission's saved outputs showed.

The grader never runs a check cell in the student's kernel. It reads the cell
from the *release* (never from the submission), as the call it is, e.g.
``check.predict(predict)``: the checker's name and the names of the answers it is
handed (:func:`check_cells`). At that cell, :mod:`.checking` runs the checker in
the grader's own process on those answers. A submission's saved outputs are only
compared with the verdicts (:func:`check_results`): an exercise that showed ✓
there and fails when graded gets a note; nothing displayed decides anything.
"""
import ast
from dataclasses import dataclass
from typing import Any

from ..exercises import MIME
from ..parsing import parse
from .rebuild import Rebuilt

__all__ = ["CheckCell", "check_cells", "check_results", "parse_check"]


@dataclass(frozen=True)
class CheckCell:
    """A check cell of the rebuilt notebook: its place, its exercise, the checker it calls and
    the notebook's names for what it hands that checker (``("predict",)``)."""

    index: int
    exercise: str
    checker: str
    names: tuple[str, ...]


def parse_check(source: str) -> tuple[str, tuple[str, ...]] | None:
    """``("predict", ("predict",))`` for ``check.predict(predict)``; None for anything else."""
    try:
        tree = parse(source)
    except SyntaxError:
        return None
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.Expr):
        return None
    call = tree.body[0].value
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
            and isinstance(call.func.value, ast.Name) and call.func.value.id == "check"
            and not call.keywords and all(isinstance(a, ast.Name) for a in call.args)):
        return None
    return call.func.attr, tuple(a.id for a in call.args if isinstance(a, ast.Name))


def check_cells(rebuilt: Rebuilt) -> list[CheckCell]:
    """The check cells of ``rebuilt``, as their released source calls them (a release whose check
    cell is not one call of a checker on names is refused when the lesson is built)."""
    cells = []
    for index, placed in enumerate(rebuilt.placed):
        released = placed.released
        if released is None or released.role != "check" or not released.exercise:
            continue
        call = parse_check(released.source)
        if call is None:
            raise ValueError(f"the released check cell of {released.exercise} is not one call "
                             f"check.name(answer): {released.source!r}")
        cells.append(CheckCell(index, released.exercise, *call))
    return cells


def _records(cell: Any, mime: str) -> list[dict[str, Any]]:
    found = []
    for output in cell.get("outputs", []):
        record = output.get("data", {}).get(mime)
        if isinstance(record, dict):
            found.append(record)
    return found


def check_results(nb: Any) -> dict[str, dict[str, Any]]:
    """Every check result an executed notebook *shows* (the checkers' :data:`MIME` records).

    What the student saw, by exercise id: the lesson tools read it from their own
    notebooks; the grader only compares it with its verdicts, never trusts it.
    """
    found = {}
    for cell in nb.cells:
        for record in _records(cell, MIME):
            if "exercise" in record:
                found[record["exercise"]] = record
    return found
