"""Verdicts from the grader's own cells, never from what a submission displays.

Each released check cell of the rebuilt notebook is replaced by a grading cell
(:func:`add_grading_cells`) that runs :mod:`.in_kernel` with a secret made for
that cell alone; the secret appears in no cell before it, and the cell runs
outside the kernel's history, so no later cell can read it back from ``In``.
:func:`read_verdicts` takes exactly one record per grading cell: from that
cell's own outputs and carrying its secret. A record displayed anywhere else,
or twice, changes no verdict; it is reported.
"""
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..exercises import MIME
from .in_kernel import GRADER_MIME
from .rebuild import Rebuilt

__all__ = ["GRADER_MIME", "GradingCell", "add_grading_cells", "check_results", "read_verdicts"]

IN_KERNEL = Path(__file__).resolve().parent / "in_kernel.py"
PACKAGE = IN_KERNEL.parent.parent


@dataclass(frozen=True)
class GradingCell:
    """The grader's cell for one exercise: where it sits in the rebuilt notebook, its secret."""

    index: int
    exercise: str
    secret: str


def _grading_source(secret: str, checker: str, exercise: str, check_source: str) -> str:
    loader = f"_nn_from_scratch_grade_{secret}"
    return "\n".join([
        f"def {loader}():",
        "    import importlib.util",
        f"    spec = importlib.util.spec_from_file_location({loader!r}, {str(IN_KERNEL)!r})",
        "    module = importlib.util.module_from_spec(spec)",
        "    spec.loader.exec_module(module)",
        f"    module.grade({secret!r}, {str(PACKAGE)!r}, {checker!r}, {exercise!r},",
        f"                 {check_source!r})",
        "try:",
        f"    {loader}()",
        "finally:",
        f"    del {loader}",
    ])


def add_grading_cells(rebuilt: Rebuilt, checker: str) -> list[GradingCell]:
    """Replace each released check cell's source by a grading cell with a fresh secret."""
    cells = []
    for index, placed in enumerate(rebuilt.placed):
        released = placed.released
        if released is None or released.role != "check" or not released.exercise:
            continue
        secret = secrets.token_hex(16)
        rebuilt.nb.cells[index].source = _grading_source(secret, checker, released.exercise,
                                                         released.source)
        cells.append(GradingCell(index, released.exercise, secret))
    return cells


def _records(cell: Any, mime: str) -> list[dict[str, Any]]:
    found = []
    for output in cell.get("outputs", []):
        record = output.get("data", {}).get(mime)
        if isinstance(record, dict):
            found.append(record)
    return found


def read_verdicts(nb: Any, grading: list[GradingCell]) -> tuple[dict[str, dict], list[str]]:
    """Exercise id -> the grader's record, from its own cell only; and notes on any forgery."""
    verdicts: dict[str, dict] = {}
    notes = []
    mine = {cell.index: cell for cell in grading}
    for index, cell in enumerate(nb.cells):
        records = _records(cell, GRADER_MIME)
        if index not in mine:
            if records:
                notes.append("a cell of the submission displayed a record imitating the "
                             "grader's; ignored")
            continue
        genuine = [r for r in records if r.get("secret") == mine[index].secret]
        if len(records) > 1:
            notes.append(f"the check of {mine[index].exercise} displayed more than one grader "
                         f"record (the student's code displayed one); not counted")
            verdicts[mine[index].exercise] = {
                "status": "error", "message": "the check's result was tampered with while it ran"}
        elif genuine:
            verdicts[mine[index].exercise] = genuine[0]
    return verdicts, notes


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
