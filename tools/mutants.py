"""Mutation testing of every checker, and "Run all" with wrong answers in place.

    .venv/bin/python tools/mutants.py                          # every lesson: the score table
    .venv/bin/python tools/mutants.py 07_mlp_from_scratch -v   # one lesson, with its survivors

Each lesson runs in a fresh process, cell by cell in an IPython shell as a
kernel runs it. At each exercise cell, every single-site mutant of its solution
(``tools/mutate.py``) is executed in a copy of the namespace the lesson has
built so far, and the check cell after it is run: a mutant whose check passes
*survives*. A survivor is a wrong answer the checker lets through, unless it
computes the very same thing (``jnp.maximum(0, x)`` and ``jnp.maximum(x, 0)``):
those are listed, each with its reason, in ``tests/equivalent_mutants/<slug>.txt``
(``07.1 | jnp.maximum(0, x) -> jnp.maximum(x, 0) | maximum is symmetric``), a
reviewed list that ``tests/test_mutants.py`` reads. The score of an exercise is
killed / (mutants - equivalent ones).

With ``--graded``, each check also runs as the grader decides it: the checker
apart from the notebook's namespace, which it questions through the grader's
JSON, on inputs drawn for a grading; every wrong answer caught in class must be
caught there too (:func:`graded_misses`).

Then the lesson goes on as JupyterLab's "Run all" would for a student who got it
wrong: each function the exercise defines raises when called, each value it
sets is a wrong one (a killed mutant's), and every later cell must still run.
A cell that raises (other than one tagged ``raises-exception``) ends the run,
as it ends "Run all", and is reported.
"""
import argparse
import ast
import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

TOOLS = Path(__file__).resolve().parent
sys.path.insert(0, str(TOOLS))
import mutate  # noqa: E402

import notebooks  # noqa: E402

EQUIVALENT = notebooks.ROOT / "tests" / "equivalent_mutants"
MUTANT_TIME_LIMIT = 20  # seconds for one mutant's cell and its check: an endless loop is killed
LESSON_TIME_LIMIT = 900  # seconds for a whole lesson with all its mutants


class _TimeUp(Exception):
    """Raised by the alarm in a mutant that runs past its limit."""


def _alarm(signum: int, frame: Any) -> None:
    raise _TimeUp("ran past the time limit")


def _run(ns: dict, source: str, limit: float = MUTANT_TIME_LIMIT) -> Any:
    """Execute ``source`` in ``ns``, output discarded; return its last expression's value."""
    tree = ast.parse(source)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            exec(compile(tree, "<cell>", "exec"), ns)
            if last is not None:
                return eval(compile(ast.Expression(last.value), "<cell>", "eval"), ns)
            return None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        if "matplotlib.pyplot" in sys.modules:
            sys.modules["matplotlib.pyplot"].close("all")


def _check(ns: dict, check_source: str) -> tuple[str, str, float]:
    """Run a check cell: (status, message, seconds). "check raised" is a checker's own bug."""
    start = time.perf_counter()
    try:
        result = _run(ns, check_source)
    except Exception as err:
        return "check raised", f"{type(err).__name__}: {err}"[:300], time.perf_counter() - start
    seconds = time.perf_counter() - start
    return getattr(result, "status", "no result"), getattr(result, "message", ""), seconds


def _graded_check(ns: dict, check_source: str) -> tuple[str, str]:
    """The same check as the grader decides it: the checker run apart from the namespace, which
    it questions through the grader's JSON (InProcess), on inputs drawn for a grading."""
    from nn_from_scratch.grade.checking import InProcess, check_here, fresh_seed
    from nn_from_scratch.grade.verdicts import parse_check

    name, names = parse_check(check_source)
    signal.setitimer(signal.ITIMER_REAL, MUTANT_TIME_LIMIT)
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            result = check_here(InProcess(ns), getattr(ns["check"], name), list(names),
                                fresh_seed())
    except BaseException as err:  # noqa: BLE001 - a time-out, or the checker's own bug
        if isinstance(err, KeyboardInterrupt):
            raise
        return "check raised", f"{type(err).__name__}: {err}"[:300]
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    return result.status, result.message


def _wrong_version(ns: dict, base: dict, solution: str, wrong: dict) -> None:
    """What a student who got the exercise wrong has: functions that raise, wrong values."""
    _run(ns, solution)
    for name in [k for k in ns if k not in base or ns[k] is not base[k]]:
        if callable(ns[name]) and not isinstance(ns[name], type):
            def broken(*args: Any, _name: str = name, **kwargs: Any) -> Any:
                raise RuntimeError(f"a student's {_name} with a bug in it")
            ns[name] = broken
        elif name in wrong:
            ns[name] = wrong[name]


def run_lesson(slug: str, first_wrong_only: bool = False,
               with_mutants: bool = True, graded: bool = False) -> dict[str, Any]:
    """Run one lesson with every exercise's mutants; in a process of its own (see module doc).

    Without mutants, the lesson still runs with its solutions checked, then with functions
    that raise in place of the student's: "Run all" alone. ``graded``: each check also as the
    grader decides it (:func:`_graded_check`), its verdict kept as ``graded``.
    """
    os.environ.update(NN_FROM_SCRATCH_OFFLINE="1", MPLBACKEND="Agg", JAX_PPRINT_USE_COLOR="false")
    os.chdir(notebooks.NOTEBOOKS)
    signal.signal(signal.SIGALRM, _alarm)
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    lesson = notebooks.LESSONS / f"{slug}.md"
    source_nb = notebooks.jupytext.read(lesson, fmt="md")
    full, _ = notebooks.editions(lesson)
    report: dict[str, Any] = {"lesson": slug, "exercises": [], "run_all": None, "not_raised": []}
    start = time.perf_counter()
    for index, cell in enumerate(full.cells):
        tags = cell.metadata.get("tags", [])
        if cell.cell_type != "code" or not cell.source.strip() or notebooks.CHECK_TAG in tags:
            continue
        ns = shell.user_ns
        if notebooks.EXERCISE_TAG not in tags:
            try:
                result = shell.run_cell(cell.source, store_history=False, silent=True)
                error = result.error_before_exec or result.error_in_exec
            finally:
                if "matplotlib.pyplot" in sys.modules:
                    sys.modules["matplotlib.pyplot"].close("all")
            if error is not None and notebooks.RAISES_TAG not in tags:
                report["run_all"] = {"cell": index, "error": f"{type(error).__name__}: {error}",
                                     "source": cell.source}
                break
            if error is None and notebooks.RAISES_TAG in tags:
                report["not_raised"].append(index)
            continue
        check_source = full.cells[index + 1].source
        base = dict(ns)
        exercise: dict[str, Any] = {"cell": index, "mutants": []}
        _run(ns, cell.source)
        exercise["status"], exercise["message"], exercise["seconds"] = _check(ns, check_source)
        if graded:
            exercise["graded"] = _graded_check(ns, check_source)
        exercise["id"] = _exercise_id(check_source, slug)
        lines = notebooks.solution_lines(source_nb.cells[index].source)
        wrong: dict[str, Any] = {}
        for mutant in mutate.mutants(cell.source, lines) if with_mutants else []:
            ns.clear()
            ns.update(base)
            try:
                _run(ns, mutant.source)
            except BaseException as err:  # noqa: BLE001 - any failure of the cell kills it
                if isinstance(err, KeyboardInterrupt):
                    raise
                exercise["mutants"].append({"key": mutant.key, "status": "cell raised",
                                            "message": f"{type(err).__name__}: {err}"[:200]})
                continue
            status, message, seconds = _check(ns, check_source)
            exercise["mutants"].append({"key": mutant.key, "status": status, "message": message,
                                        "seconds": seconds})
            if graded:
                exercise["mutants"][-1]["graded"] = _graded_check(ns, check_source)
            if status == "failed" and not wrong:
                wrong = {k: ns[k] for k in ns if k not in base or ns[k] is not base[k]}
            if first_wrong_only and status == "failed" and _a_wrong_value(message):
                break
        ns.clear()
        ns.update(base)
        _wrong_version(ns, base, cell.source, wrong)
        status, message, _ = _check(ns, check_source)
        if status == "check raised":
            report["run_all"] = {"cell": index + 1, "error": message, "source": check_source}
            report["exercises"].append(exercise)
            break
        report["exercises"].append(exercise)
    report["seconds"] = time.perf_counter() - start
    return report


def _a_wrong_value(message: str) -> bool:
    """Does a check's hint answer a wrong value (not an error the mutant's own code raised)?"""
    return " raised " not in message and "returned None" not in message


def _exercise_id(check_source: str, slug: str) -> str:
    """The id (``07.4``) of the exercise a check cell checks, from the checker's name."""
    from nn_from_scratch.exercises import lesson_exercises

    name = check_source.strip().split("check.", 1)[1].split("(", 1)[0]
    return next(e.id for e in lesson_exercises(slug) if e.name == name)


def lesson_report(slug: str, first_wrong_only: bool = False,
                  with_mutants: bool = True, graded: bool = False) -> dict[str, Any]:
    """:func:`run_lesson` in a fresh Python process (simulated devices need one each)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "report.json"
        command = [sys.executable, __file__, "--worker", slug, "--out", str(out)]
        if first_wrong_only:
            command.append("--first-wrong-only")
        if not with_mutants:
            command.append("--no-mutants")
        if graded:
            command.append("--graded")
        done = subprocess.run(command, capture_output=True, text=True, timeout=LESSON_TIME_LIMIT)
        if not out.exists():
            raise RuntimeError(f"{slug}: the mutation run died (exit {done.returncode}):\n"
                               f"{done.stderr[-3000:]}")
        return json.loads(out.read_text())


def equivalents(slug: str) -> dict[tuple[str, str], str]:
    """The reviewed equivalent mutants of a lesson: (exercise id, mutant key) -> why."""
    path = EQUIVALENT / f"{slug}.txt"
    found = {}
    for line in path.read_text().splitlines() if path.exists() else []:
        if line.strip() and not line.startswith("#"):
            exercise_id, *key, reason = [part.strip() for part in line.split(" | ")]
            found[(exercise_id, " | ".join(key))] = reason
    return found


def scores(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Per exercise: mutants, killed, equivalent, survivors (keys) and the score."""
    listed = equivalents(report["lesson"])
    table = {}
    for ex in report["exercises"]:
        survived = [m["key"] for m in ex["mutants"] if m["status"] == "passed"]
        equivalent = [k for k in survived if (ex["id"], k) in listed]
        survivors = [k for k in survived if (ex["id"], k) not in listed]
        counted = len(ex["mutants"]) - len(equivalent)
        table[ex["id"]] = {
            "mutants": len(ex["mutants"]), "killed": counted - len(survivors),
            "equivalent": len(equivalent), "survivors": survivors,
            "score": (counted - len(survivors)) / counted if counted else 1.0,
            "stale": [k for (i, k) in listed if i == ex["id"] and k not in survived],
            "check raised": [m["key"] for m in ex["mutants"] if m["status"] == "check raised"]}
    return table


def graded_misses(report: dict[str, Any]) -> list[str]:
    """The wrong answers that a check in class catches and the grader's check lets through
    (and the solutions the grader does not pass): should be none."""
    missed = [f"{ex['id']} the solution: {ex['graded']}" for ex in report["exercises"]
              if ex.get("graded") and ex["status"] == "passed" and ex["graded"][0] != "passed"]
    for ex in report["exercises"]:
        missed += [f"{ex['id']} {m['key']}" for m in ex["mutants"] if m.get("graded")
                   and m["status"] != "passed" and m["graded"][0] == "passed"]
    return missed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("lessons", nargs="*", help="lesson slugs (default: every lesson)")
    parser.add_argument("-v", "--verbose", action="store_true", help="list every survivor")
    parser.add_argument("--jobs", type=int, default=2, help="lessons run at once")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    parser.add_argument("--first-wrong-only", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--no-mutants", action="store_true",
                        help="only 'Run all' with wrong answers in place, no mutation testing")
    parser.add_argument("--graded", action="store_true",
                        help="check each mutant as the grader does too, and compare")
    args = parser.parse_args()
    if args.worker:
        report = run_lesson(args.worker, args.first_wrong_only, not args.no_mutants,
                            args.graded)
        Path(args.out).write_text(json.dumps(report, default=str))
        return
    slugs = args.lessons or [p.stem for p in notebooks.lesson_paths()]
    with ThreadPoolExecutor(args.jobs) as pool:
        reports = list(pool.map(lambda slug: lesson_report(slug, False, not args.no_mutants,
                                                           args.graded), slugs))
    for report in reports if args.graded else []:
        for missed in graded_misses(report):
            print(f"{report['lesson']}: caught in class, passed by the grader: {missed}")
    total = killed = 0
    for report in reports:
        for index in report["not_raised"]:
            print(f"{report['lesson']}: cell {index} is tagged raises-exception but did not raise")
        if report["run_all"]:
            run_all = report["run_all"]
            print(f"{report['lesson']}: Run all STOPS at cell {run_all['cell']}: "
                  f"{run_all['error']}")
        for exercise_id, row in scores(report).items():
            counted = row["mutants"] - row["equivalent"]
            total, killed = total + counted, killed + row["killed"]
            print(f"{exercise_id}  {row['mutants']:4d} mutants  {row['killed']:4d} killed  "
                  f"{row['equivalent']:3d} equivalent  {len(row['survivors']):3d} survive  "
                  f"score {row['score']:.3f}")
            for key in row["survivors"] if args.verbose else []:
                print(f"    survives: {key}")
            for key in row["stale"] if args.verbose else []:
                print(f"    listed as equivalent but killed or gone: {key}")
            for key in row["check raised"] if args.verbose else []:
                print(f"    the check cell raised: {key}")
    print(f"course: {killed} of {total} non-equivalent mutants killed, "
          f"score {killed / max(total, 1):.3f}")


if __name__ == "__main__":
    main()
