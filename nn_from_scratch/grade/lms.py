"""Exports for the platforms that collect submissions: Gradescope and GitHub Classroom.

- Gradescope: its autograder reads ``/autograder/results/results.json``:
  ``score``, ``max_score``, ``execution_time``, ``output`` and one entry in
  ``tests`` per exercise (``name``, ``number``, ``score``, ``max_score``,
  ``status`` "passed" or "failed", ``output``: the hint). :func:`gradescope_results`
  makes it; ``--gradescope DIR`` writes one per notebook, ``--gradescope FILE.json``
  the one of a single submission (what ``run_autograder`` does). Every text is plain
  (``output_format`` "text": no Markdown or HTML of a submission's renders).
- GitHub Classroom: its reporter action (``classroom-resources/autograding-grading-reporter``)
  reads each grading step's ``result`` output, base64 JSON in the format of its
  Python and command graders (``version``, ``status``, ``max_score``, ``tests`` with
  ``name``, ``status`` "pass"/"fail", ``message``, ``score``); ``--classroom FILE``
  appends ``result=...`` to FILE (``$GITHUB_OUTPUT`` in a workflow).
"""
import base64
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .exports import write_atomic, write_per_notebook
from .inert import unplaced
from .results import Graded

__all__ = ["classroom_result", "gradescope_results", "write_classroom", "write_gradescope"]


def _hint(graded: Graded, index: int) -> str:
    row = graded.rows[index]
    return unplaced(row.message + (f" ({row.note})" if row.note else ""))


def gradescope_results(graded: Graded) -> dict[str, Any]:
    """Gradescope's ``results.json`` for one notebook: plain text, nothing of the grader's
    machine (:func:`.inert.unplaced`)."""
    tests = [{"name": f"{r.exercise} {r.title}".strip(), "number": r.exercise or "",
              "score": r.points, "max_score": r.max_points,
              "status": "passed" if r.status == "passed" else "failed",
              "output": f"{r.status}: {_hint(graded, i)}", "output_format": "text",
              "visibility": "visible"}
             for i, r in enumerate(graded.rows)]
    output = f"{Path(graded.notebook).name}: {graded.summary}"
    if graded.notes:
        output += "\nNotes from the grader:\n" + "\n".join(f"- {n}" for n in graded.notes)
    return {"score": graded.points, "max_score": graded.max_points, "output_format": "text",
            "test_output_format": "text",
            "execution_time": round(sum(graded.seconds.values()), 1), "output": unplaced(output),
            "visibility": "visible", "stdout_visibility": "hidden", "tests": tests}


def write_gradescope(graded: Sequence[Graded], target: str | Path) -> None:
    """``target/<export name>.json`` per notebook (``alice/lesson03.json``:
    :func:`.exports.export_names`), or ``target`` itself when it ends in ``.json``."""
    target = Path(target)
    if target.suffix == ".json":
        (only,) = graded  # checked before grading: one notebook for one results.json
        write_atomic(target, json.dumps(gradescope_results(only), indent=1))
        return
    write_per_notebook(graded, target, ".json",
                       lambda g, _name: json.dumps(gradescope_results(g), indent=1))


def classroom_result(graded: Sequence[Graded]) -> dict[str, Any]:
    """GitHub Classroom's result for a student's repository (all its notebooks together)."""
    tests = [{"name": f"{Path(g.notebook).name} {r.exercise or ''} {r.title}".strip(),
              "status": "pass" if r.status == "passed" else "fail",
              "message": f"{r.status}: {_hint(g, i)}", "score": r.points,
              "max_score": r.max_points}
             for g in graded for i, r in enumerate(g.rows)]
    passed = all(t["status"] == "pass" for t in tests)
    return {"version": 1, "status": "pass" if passed else "fail",
            "max_score": sum(g.max_points for g in graded), "tests": tests}


def write_classroom(graded: Sequence[Graded], path: str | Path) -> None:
    """Append ``result=<base64 JSON>`` to ``path``, as GitHub Actions' step outputs are set."""
    encoded = base64.b64encode(json.dumps(classroom_result(graded)).encode()).decode()
    with open(path, "a", encoding="utf-8") as f:
        f.write(f"result={encoded}\n")
