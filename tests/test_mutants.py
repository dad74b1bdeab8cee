"""No wrong answer passes a check, and the student edition runs to the end: one execution of
each lesson's Chinese student edition in a fresh kernel, with the mutation test of its checkers
(tools/mutants.py, whose docstring says why one run carries both honestly).

For each lesson, every single-site mutant of every exercise's solution runs with
its check. A mutant that passes is a wrong answer the checker lets through,
unless it is listed, with its reason, in ``tests/equivalent_mutants/<slug>.txt``.
Each exercise must kill >= 90% of its non-equivalent mutants and each lesson
>= 98% (so the course does too). The same run is the student's "Run all": every
check shows its stub "not done", in Chinese, and with a wrong answer in place of
each exercise every later cell must still run. For the lessons in GRADED, each
mutant is also checked as the grader checks a submission, and no wrong answer
caught in class may pass there.
"""
import json
import os
import re
import sys
from pathlib import Path

import pytest

from nn_from_scratch.exercises import lesson_exercises

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
import mutants  # noqa: E402

import notebooks  # noqa: E402

LESSONS = [p.stem for p in notebooks.lesson_paths()]
EXERCISE_TARGET, LESSON_TARGET = 0.90, 0.98
# Lessons whose mutants are also checked as the grader decides (in its own process, through its
# JSON, on a grading's fresh inputs): every wrong answer caught in class must be caught there.
GRADED = {"07_mlp_from_scratch", "13_cnn_from_scratch", "14_attention_from_scratch"}


# "slow" (pyproject.toml): the README's test command leaves these executions out, and CI runs
# them once, on its first run (`pytest --slow`). The mutation scores do not depend on JAX's
# version, and a student edition is its lesson's full edition with stubs in the exercise cells
# (tools/notebooks.py writes both from one lesson; tests/test_lessons.py proves the committed
# notebooks are what it writes), whose full edition runs in every run (tests/test_lessons.py).
@pytest.mark.slow
@pytest.mark.parametrize("slug", LESSONS)
def test_checkers_kill_the_mutants_and_the_student_edition_runs_to_the_end(slug):
    graded = slug in GRADED
    report = mutants.lesson_report(slug, graded=graded)
    missed = mutants.graded_misses(report) if graded else []
    assert not missed, f"wrong answers caught in class that the grader passes: {missed}"
    assert not report["not_raised"], (
        f"cells tagged raises-exception that did not raise: {report['not_raised']}")
    expected = {e.id for e in lesson_exercises(slug)}
    assert set(report["student_checks"]) == expected, (
        f"checks shown: {sorted(report['student_checks'])}; expected {sorted(expected)}")
    claimed = {i: status for i, status in report["student_checks"].items()
               if status != "not done"}
    assert not claimed, f"stubs must be 'not done', never passed or failed: {claimed}"
    lines = report["student_check_lines"]
    english = [line for line in lines if not re.search("[\u4e00-\u9fff]", line)]
    assert len(lines) == len(expected) and not english, f"not in Chinese: {english}"
    run_all = report["run_all"]
    assert run_all is None, (
        f"with the stubs and then a wrong answer in each exercise, 'Run all' stops at cell "
        f"{run_all['cell']}: {run_all['error']}\n--- its source:\n{run_all['source']}")
    not_passing = {e["id"]: e["message"] for e in report["exercises"] if e["status"] != "passed"}
    assert not not_passing, f"checks that fail on the lesson's own solutions: {not_passing}"
    # the grader watches what the handed-in code calls when it runs (grade/answers.py): no
    # lesson's own solution may call the library's function of its exercise
    called = {e["id"]: e["called_twin"] for e in report["exercises"] if e["called_twin"]}
    assert not called, f"solutions that call the library's own answer when run: {called}"
    table = mutants.scores(report)
    if os.environ.get("NN_FROM_SCRATCH_MUTANT_SCORES"):  # a folder: keep the table for the README
        folder = Path(os.environ["NN_FROM_SCRATCH_MUTANT_SCORES"])
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{slug}.json").write_text(json.dumps(table, indent=1))
    problems = []
    for exercise_id, row in table.items():
        if row["check raised"]:
            problems.append(f"{exercise_id}: the check cell raised for {row['check raised']}")
        if row["stale"]:
            problems.append(f"{exercise_id}: listed as equivalent but killed or no longer made "
                            f"(remove from tests/equivalent_mutants/{slug}.txt): {row['stale']}")
        if row["score"] < EXERCISE_TARGET:
            problems.append(f"{exercise_id}: score {row['score']:.2f} < {EXERCISE_TARGET}; "
                            f"surviving wrong answers: {row['survivors']}")
    counted = sum(r["mutants"] - r["equivalent"] for r in table.values())
    killed = sum(r["killed"] for r in table.values())
    if killed < LESSON_TARGET * counted:
        survivors = {i: r["survivors"] for i, r in table.items() if r["survivors"]}
        problems.append(f"lesson score {killed}/{counted} = {killed / counted:.3f} < "
                        f"{LESSON_TARGET}; survivors: {survivors}")
    assert not problems, "\n".join(problems)
