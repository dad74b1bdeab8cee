"""Mutation testing of every checker, and "Run all" with wrong answers in place.

    .venv/bin/python tools/mutants.py                          # every lesson: the score table
    .venv/bin/python tools/mutants.py 07_mlp_from_scratch -v   # one lesson, with its survivors

One execution of each lesson carries three tests: it is the student edition's
"Run all", in Chinese, in a fresh kernel (``notebook_runner``, as the lesson tests
run notebooks), with cells of the mutation test's added between the edition's own:

- before each exercise cell, :meth:`Mutation.exercise` runs the solution and
  every single-site mutant of it (``tools/mutate.py``), each in a copy of the
  namespace the lesson has built so far, with the check cell after it: a mutant
  whose check passes *survives*. A survivor is a wrong answer the checker lets
  through, unless it computes the very same thing (``jnp.maximum(0, x)`` and
  ``jnp.maximum(x, 0)``): those are listed, each with its reason, in
  ``tests/equivalent_mutants/<slug>.txt`` (``07.1 | jnp.maximum(0, x) ->
  jnp.maximum(x, 0) | maximum is symmetric``), a reviewed list that
  ``tests/test_mutants.py`` reads. The score of an exercise is killed / (mutants
  - equivalent ones). The namespace is then put back as it was;
- the student edition's exercise cell (the stub) and its check cell run as a
  student's "Run all" runs them: the check must show "not done", in Chinese;
- after the check, :meth:`Mutation.wrong_answer` puts a wrong answer in the
  student's place for the rest of the lesson, as for a student who got it wrong:
  each function the solution defines raises when called (a ``RuntimeError``, as
  a bug would; a value keeps the stub's ``...``), and the check cell, run again,
  must not raise. Every later cell of the lesson must still run.

Why one run can carry the student edition's test and the mutation test's "Run
all" honestly: every cell of the student edition still runs, in order, in a fresh
kernel, and every check still sees its stub; a later cell finds in the student's
place what it would find after either run, whichever is the more demanding. A stub
function raises ``NotImplementedError`` when called and a buggy one may raise
anything: the ``RuntimeError`` put in its place fails a later cell that calls the
student's function exactly as the stub does, and fails one that catches only
``NotImplementedError`` too. A stub value is ``...``, which no arithmetic, indexing
or array accepts, so a later cell that reads the student's value fails with it
where a wrong number could pass unseen: the stub's is kept. (Before they were one
run, the mutation test put a killed mutant's value there.) The full edition is
executed on its own, by ``tests/test_lessons.py``; the English student edition runs
the very code of the Chinese one, which ``tests/test_translations.py`` proves
through ast.

With ``--graded``, the check of each solution, and of each mutant caught in
class, also runs as the grader decides it: the checker apart from the notebook's
namespace, which it questions through the grader's JSON, on inputs drawn for a
grading; every wrong answer caught in class must be caught there too
(:func:`graded_misses`). The mutants' checks answer in English
(a verdict does not depend on the language).
"""
import argparse
import ast
import contextlib
import io
import json
import signal
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

TOOLS = Path(__file__).resolve().parent
sys.path.insert(0, str(TOOLS))
import mutate  # noqa: E402
import translations  # noqa: E402

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


def _graded_check(ns: dict, check_source: str, seed: int | None) -> tuple[str, str, bool]:
    """The same check as the grader decides it: the checker run apart from the namespace, which
    it questions through the grader's JSON (InProcess), on inputs drawn for a grading from
    ``seed`` (``fresh_seed()``: one per exercise in a run, shared by its solution and mutants,
    so that a mutant meets the shapes its solution met and JAX compiles each operation once,
    not once per mutant; None: the check in class's inputs). The third: whether the verdict is
    the grader's "the library's own", for what the answer called (grade/answers.py)."""
    from nn_from_scratch.grade.checking import InProcess, check_here
    from nn_from_scratch.grade.copying import called_twin
    from nn_from_scratch.grade.verdicts import parse_check

    name, names = parse_check(check_source)
    signal.setitimer(signal.ITIMER_REAL, MUTANT_TIME_LIMIT)
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            session = InProcess(ns)
            result = check_here(session, getattr(ns["check"], name), list(names), seed)
    except BaseException as err:  # noqa: BLE001 - a time-out, or the checker's own bug
        if isinstance(err, KeyboardInterrupt):
            raise
        return "check raised", f"{type(err).__name__}: {err}"[:300], False
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    copied = called_twin(name, names, session.called)  # as grade/notebook.py decides
    if copied is not None:
        return "failed", copied.message, True
    return result.status, result.message, False


@contextlib.contextmanager
def _in_english() -> Any:
    """The mutants' checks answer in English, whatever the edition's language: a verdict does
    not depend on it (the checkers' tests run both), and the report's hints stay readable."""
    from nn_from_scratch import i18n

    chosen = list(i18n._chosen)
    i18n._chosen[:] = ["en"]
    try:
        yield
    finally:
        i18n._chosen[:] = chosen


def _wrong_version(ns: dict, solution: str) -> None:
    """What a student who got the exercise wrong has: each function the solution defines
    raises when called; each value it sets is what the student edition had there (the
    stub's ``...``)."""
    before = dict(ns)
    _run(ns, solution)
    for name in [k for k in ns if k not in before or ns[k] is not before[k]]:
        if callable(ns[name]) and not isinstance(ns[name], type):
            def broken(*args: Any, _name: str = name, **kwargs: Any) -> Any:
                raise RuntimeError(f"a student's {_name} with a bug in it")
            ns[name] = broken
        elif name in before:
            ns[name] = before[name]


class Mutation:
    """The mutation test's side of a lesson's run, inside the kernel that runs its student
    edition: :func:`lesson_report` adds a call of :meth:`exercise` before each exercise cell
    and one of :meth:`wrong_answer` after its check cell (see the module's docstring)."""

    def __init__(self, slug: str, first_wrong_only: bool = False, with_mutants: bool = True,
                 graded: bool = False) -> None:
        signal.signal(signal.SIGALRM, _alarm)
        lesson = notebooks.LESSONS / f"{slug}.md"
        self.source_nb = notebooks.jupytext.read(lesson, fmt="md")
        self.full, _ = notebooks.editions(lesson)
        self.slug, self.first_wrong_only = slug, first_wrong_only
        self.with_mutants, self.graded = with_mutants, graded
        self.report: dict[str, Any] = {"lesson": slug, "exercises": [], "check_raised": None}
        self.start = time.perf_counter()

    def exercise(self, ns: dict, index: int) -> None:
        """Before the student's exercise cell ``index``: the solution, then every mutant of it,
        each in a copy of the namespace ``ns`` built so far, with its check (in English; with
        ``graded`` also as the grader decides it). ``ns`` is left as it was."""
        from nn_from_scratch.grade.checking import fresh_seed

        cell, check_source = self.full.cells[index], self.full.cells[index + 1].source
        base = dict(ns)
        exercise: dict[str, Any] = {"cell": index, "mutants": []}
        lines = notebooks.solution_lines(self.source_nb.cells[index].source)
        seed = fresh_seed()  # the grading's draw of this exercise, for its solution and mutants
        with _in_english():
            _run(ns, cell.source)
            exercise["status"], exercise["message"], exercise["seconds"] = _check(ns,
                                                                                   check_source)
            # the solution checked as the grader checks it (for every lesson: on the inputs of
            # the check in class, already compiled), for what it called of the library
            graded = _graded_check(ns, check_source, seed if self.graded else None)
            exercise["called_twin"] = graded[1] if graded[2] else None
            if self.graded:
                exercise["graded"] = graded[:2]
            exercise["id"] = _exercise_id(check_source, self.slug)
            for mutant in mutate.mutants(cell.source, lines) if self.with_mutants else []:
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
                exercise["mutants"].append({"key": mutant.key, "status": status,
                                            "message": message, "seconds": seconds})
                if self.graded and status != "passed":  # a miss is a wrong answer caught
                    exercise["mutants"][-1]["graded"] = _graded_check(ns, check_source,
                                                                       seed)[:2]
                if self.first_wrong_only and status == "failed" and _a_wrong_value(message):
                    break
        ns.clear()
        ns.update(base)
        self.report["exercises"].append(exercise)

    def wrong_answer(self, ns: dict, index: int) -> None:
        """After the check cell of exercise ``index`` (which showed the stub "not done"): a
        wrong answer in the student's place for the rest of the lesson, and the check cell
        run once more with it, which must not raise."""
        check_source = self.full.cells[index + 1].source
        _wrong_version(ns, self.full.cells[index].source)
        with _in_english():
            status, message, _ = _check(ns, check_source)
        if status == "check raised" and self.report["check_raised"] is None:
            self.report["check_raised"] = {"cell": index + 1, "error": message,
                                           "source": check_source}

    def save(self, path: str) -> None:
        self.report["seconds"] = time.perf_counter() - self.start
        Path(path).write_text(json.dumps(self.report, default=str))


def _a_wrong_value(message: str) -> bool:
    """Does a check's hint answer a wrong value (not an error the mutant's own code raised)?"""
    return " raised " not in message and "returned None" not in message


def _exercise_id(check_source: str, slug: str) -> str:
    """The id (``07.4``) of the exercise a check cell checks, from the checker's name."""
    from nn_from_scratch.exercises import lesson_exercises

    name = check_source.strip().split("check.", 1)[1].split("(", 1)[0]
    return next(e.id for e in lesson_exercises(slug) if e.name == name)


def _with_mutation_cells(student: Any, out: Path, arguments: str) -> tuple[Any, list[int]]:
    """``student`` with the mutation test's cells added (see the module's docstring), and for
    each cell of the result the index of the student edition's cell it is (-1: one added)."""
    import nbformat

    def added(source: str) -> Any:
        return nbformat.v4.new_code_cell(source)

    cells = [added(f"import sys as _nn_sys\n_nn_sys.path.insert(0, {str(TOOLS)!r})\n"
                   f"import mutants as _nn_mutants\n"
                   f"_nn_mutation = _nn_mutants.Mutation({arguments})")]
    original = [-1]
    for index, cell in enumerate(student.cells):
        tags = cell.metadata.get("tags", [])
        if notebooks.EXERCISE_TAG in tags:
            cells.append(added(f"_nn_mutation.exercise(globals(), {index})"))
            original.append(-1)
        cells.append(cell)
        original.append(index)
        if notebooks.CHECK_TAG in tags:
            cells.append(added(f"_nn_mutation.wrong_answer(globals(), {index - 1})"))
            original.append(-1)
    cells.append(added(f"_nn_mutation.save({str(out)!r})"))
    original.append(-1)
    nb = nbformat.from_dict({**student, "cells": cells})
    return nb, original


def lesson_report(slug: str, first_wrong_only: bool = False,
                  with_mutants: bool = True, graded: bool = False) -> dict[str, Any]:
    """Run the lesson's Chinese student edition in a fresh kernel, with the mutation test's
    cells added (see the module's docstring). The report: ``exercises`` (each solution's check
    and every mutant's), ``run_all`` (the first cell that raised and was not meant to, or a
    check cell that raised with a wrong answer in place; None if none did), ``not_raised``
    (cells tagged raises-exception that did not raise), and what the student edition's check
    cells showed: ``student_checks`` (exercise id -> status) and ``student_check_lines``."""
    import nbformat

    from nn_from_scratch import notebook_runner
    from nn_from_scratch.grade.verdicts import check_results

    lesson = notebooks.LESSONS / f"{slug}.md"
    student = nbformat.read(translations.zh_path(lesson, "student"), as_version=4)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "report.json"
        arguments = f"{slug!r}, {first_wrong_only}, {with_mutants}, {graded}"
        nb, original = _with_mutation_cells(student, out, arguments)
        with notebooks.compilation_cache(nb):
            runs = notebook_runner.execute(nb, timeout=LESSON_TIME_LIMIT,
                                           cell_timeout=LESSON_TIME_LIMIT,
                                           cwd=notebooks.NOTEBOOKS)
        meant = {run.index for run in runs
                 if notebooks.RAISES_TAG in nb.cells[run.index].metadata.get("tags", [])}
        first = next((run for run in runs if run.status != "ok"
                      and not (run.index in meant and run.status == "error")), None)
        where = f"cell {first.index} {first.status}: {first.error}\n--- its source:\n" \
                f"{nb.cells[first.index].source}" if first else ""
        if not out.exists():
            raise RuntimeError(f"{slug}: the mutation run ended before its report: {where}")
        report = json.loads(out.read_text())
    report["run_all"] = report.pop("check_raised") if first is None else {
        "cell": original[first.index], "error": f"{first.status}: {first.error}",
        "source": nb.cells[first.index].source}
    report["not_raised"] = [original[run.index] for run in runs
                            if run.index in meant and run.status == "ok"]
    report["student_checks"] = {i: r["status"] for i, r in check_results(nb).items()}
    report["student_check_lines"] = [o["data"]["text/plain"] for cell in nb.cells
                                     if notebooks.CHECK_TAG in cell.metadata.get("tags", [])
                                     for o in cell.outputs if "data" in o]
    return report


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
    parser.add_argument("--no-mutants", action="store_true",
                        help="only the student edition's 'Run all' (its stubs checked, then "
                             "wrong answers in place), no mutation testing")
    parser.add_argument("--graded", action="store_true",
                        help="check each mutant as the grader does too, and compare")
    args = parser.parse_args()
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
