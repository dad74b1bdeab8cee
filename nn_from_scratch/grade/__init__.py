"""Grading students' notebooks offline: ``python -m nn_from_scratch grade PATH...``.

Verdicts are decided in the grader's own process, from values the student's code
computed for inputs drawn at grading time; never from what a submission displays.
The pieces, one module each, in the order a notebook goes through them:

- :mod:`.intake`: every submission copied, as a plain file, into the grader's
  private folder before any kernel starts; names and messages made safe to show;
- :mod:`.release`: the released student edition (a manifest per lesson, shipped
  with the package) and the stable cell ids the lesson build gives it;
- :mod:`.reading`: a submission's JSON read within caps (values, cells, nesting, source);
- :mod:`.rebuild`: a submission rebuilt from the release, only its exercise
  cells kept (plus cells the student added), with notes on what was restored;
- :mod:`.suspicious`: notes on student code that reaches for the grader's machinery;
- :mod:`.verdicts`: the check each check cell asks for (read from the release);
  :mod:`.checking`: each check run in a process of the grader's own
  (:mod:`.checker_process`, stopped at the check's deadline), the student's
  code called in its kernel on inputs drawn for this grading (:mod:`.answers`,
  the kernel's side; :mod:`nn_from_scratch.wire`, the plain data that crosses);
  :mod:`.copying`: an exercise that hands in the library's own answer;
- :mod:`.notebook`: one notebook, rebuilt, run (by :mod:`nn_from_scratch.notebook_runner`,
  with time and memory limits, in a sandbox of its own: :mod:`nn_from_scratch.sandbox`)
  and turned into rows; :mod:`.results` holds them;
- :mod:`.batch`: a class at a time, in parallel, or a slice of it (``--shard``);
  :mod:`.journal`: each result on disk as it is made (``--resume``), signed;
- :mod:`.assignment`: the assignment's lesson, pinned (``--lesson``): another lesson's
  notebook, or a second copy in one submission, scores nothing;
- :mod:`.exports` and :mod:`.lms`: the table, CSV, feedback files, JSON, and
  Gradescope's and GitHub Classroom's formats, each file under a name of its own, written
  whole; :mod:`.inert`: no formula, no markup and nothing of the grader's machine in them;
  :mod:`.report`: what the class got wrong, in the words of :mod:`.report_words`, as one
  page (:mod:`.report_page`) or Markdown (:mod:`.report_markdown`);
  :mod:`.cli`: the command line.
"""
import importlib
from typing import Any

# Imported on first use, so that ``grade --csv /no/such/dir/g.csv`` is refused before nbformat
# and JAX are even loaded.
_WHERE = {"grade_paths": "batch", "notebooks_in": "intake", "shard": "batch",
          "lesson_of": "notebook", "Graded": "results", "Row": "results",
          "check_results": "verdicts", "summarize": "report", "write_report": "exports"}
__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)
