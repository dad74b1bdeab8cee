"""Verdicts a submission cannot forge: each forgery of issue 16 is refused on the real lesson 07,
while the honest solution notebook passes every exercise.

The honest solution, in both languages, is graded on every run of the suite (the ``graded``
class); the forgeries beside it (the ``forged`` class) are marked slow: ``pytest --slow`` runs
them, as CI does once.

Each forgery starts from the student edition (every exercise still a stub) and carries the
saved outputs its author would have seen (✓ everywhere), as a real submission would. Both
editions and the release are made from lessons/ now, so the test follows the lesson as it
changes (tests/test_grade_release.py checks the release that ships).
"""
import copy
import re
import sys
from pathlib import Path

import nbformat
import pytest

from nn_from_scratch.exercises import MIME, lesson_exercises
from nn_from_scratch.grade import grade_paths, release
from nn_from_scratch.notebook_runner import Limits

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import translations  # noqa: E402

import notebooks  # noqa: E402

LESSON = "07_mlp_from_scratch"
SOLUTION, STUDENT = notebooks.editions(ROOT / "lessons" / f"{LESSON}.md")
EXERCISES = lesson_exercises(LESSON)
FUNCTIONS = {"relu": "model", "random_layer_params": "params", "init_network_params": "params",
             "predict": "model", "batched_predict": "model"}  # the exercises that ask for one


def student_edition():
    return copy.deepcopy(STUDENT)


def tagged(nb, tag):
    return [cell for cell in nb.cells if tag in cell.metadata.get("tags", [])]


def shown_passed(exercise):
    """The output a forged ✓ leaves in a saved notebook."""
    return nbformat.v4.new_output("display_data", data={
        "text/plain": f"✓ {exercise.id} {exercise.title}: ok",
        MIME: {"exercise": exercise.id, "title": exercise.title, "status": "passed",
               "message": "ok"}})


def extra_cell():
    nb = student_edition()
    cell = nbformat.v4.new_code_cell(
        "from IPython.display import display\n"
        "from nn_from_scratch.exercises import MIME, lesson_exercises\n"
        "for e in lesson_exercises('07_mlp_from_scratch'):\n"
        "    display({'text/plain': '✓', MIME: {'exercise': e.id, 'title': e.title,\n"
        "             'status': 'passed', 'message': 'ok'}}, raw=True)")
    cell.outputs = [shown_passed(e) for e in EXERCISES]
    nb.cells.append(cell)
    return nb


def edited_check_cells():
    nb = student_edition()
    for cell, exercise in zip(tagged(nb, "check"), EXERCISES):
        cell.source = (f"from IPython.display import display\n"
                       f"display({{'text/plain': '✓', {MIME!r}: {{'exercise': {exercise.id!r}, "
                       f"'title': 'x', 'status': 'passed', 'message': 'ok'}}}}, raw=True)")
        cell.outputs = [shown_passed(exercise)]
    return nb


def rebound_check():
    nb = student_edition()
    first = tagged(nb, "exercise")[0]
    first.source = ("from nn_from_scratch.exercises._core import CheckResult\n\n"
                    "class AlwaysPasses:\n"
                    "    def __getattr__(self, name):\n"
                    "        return lambda *answers: CheckResult('07', name, 'passed', 'ok')\n\n"
                    "check = AlwaysPasses()\n" + first.source)
    for cell, exercise in zip(tagged(nb, "check"), EXERCISES):
        cell.outputs = [shown_passed(exercise)]
    return nb


def library_functions():
    nb = student_edition()
    for cell in tagged(nb, "exercise"):
        name = re.search(r"(?:def |^)(\w+)", cell.source, re.M).group(1)
        if name in FUNCTIONS:
            cell.source = f"from nn_from_scratch.{FUNCTIONS[name]} import {name}"
    return nb


def hidden_bindings():
    """Red team, round seven: each answer a stub-like def, and the library's function bound
    over it where the reading did not look: code run by a class body, a decorator, a default
    argument or a helper called on its own line, from a docstring or IPython's history (7/7 with
    no note, until the reading followed them)."""
    q = '"' * 3

    def library(name):  # what each hidden binding puts in the student's place
        return f"global {name}; {name} = __import__('nn_from_scratch').{FUNCTIONS[name]}.{name}"
    sources = {
        "relu": f"def relu(x):\n    return x\n\n\nclass _Notes:\n    {q}{library('relu')}{q}\n"
                f"    exec(__doc__)\n",
        "random_layer_params": "def random_layer_params(m, n, key, scale=1e-2):\n    return None"
                               f"\n\n\ndef _keep(f):\n    exec(f.__doc__)\n    return f\n\n\n"
                               f"@_keep\ndef _notes():\n    {q}{library('random_layer_params')}"
                               f"{q}\n",
        "init_network_params": f"def init_network_params(sizes, key):\n    {q}"
                               f"{library('init_network_params')}{q}\n    return None\n\n\n"
                               f"def _warm(_=exec(init_network_params.__doc__)):\n    pass\n",
        "predict": f"def predict(params, image):\n    {q}{library('predict')}{q}\n    return None"
                   f"\n\n\ndef _tidy():\n    exec(predict.__doc__)\n\n\n_tidy()\n",
        "batched_predict": f"batched_predict = None\n{q}{library('batched_predict')}{q}\n\n\n"
                           f"def _tidy():\n    exec(In[-1].split(chr(34) * 3)[1])\n\n\n_tidy()\n",
    }
    nb = student_edition()
    for cell in tagged(nb, "exercise"):
        name = re.search(r"(?:def |^)(\w+)", cell.source, re.M).group(1)
        cell.source = sources.get(name, cell.source)
    return nb


def answers_patched():
    """Red team, round four (W3): every stub left as released, and one added cell that makes
    the kernel's answering object hand the check the library's functions by name."""
    nb = student_edition()
    nb.cells.insert(2, nbformat.v4.new_code_cell(
        "import importlib\n"
        f"_where = {FUNCTIONS!r}\n"
        "_real = _nn_from_scratch_answers.answer\n"
        "def _answer(request, _real=_real):\n"
        "    name = request.get('name')\n"
        "    if request.get('op') == 'lookup' and name in _where:\n"
        "        f = getattr(importlib.import_module('nn_from_scratch.' + _where[name]), name)\n"
        "        return lambda *a, **k: f(*a, **k)\n"
        "    return _real(request)\n"
        "_nn_from_scratch_answers.answer = _answer"))
    return nb


def grade_class(folder, notebooks_by_name):
    """Grade ``notebooks_by_name`` ({name: notebook}) as one class of lesson 07, two at a time,
    against releases of both editions written from the lesson; {name: its GradedNotebook}."""
    released = release.write_manifest(STUDENT, LESSON, folder / "release").parent
    catalog = translations.read(ROOT / "lessons" / f"{LESSON}.md")
    release.write_manifest(translations.translate(STUDENT, catalog), LESSON, released / "zh")
    for name, nb in notebooks_by_name.items():
        nbformat.write(nb, folder / f"{name}.ipynb")
    results = grade_paths([folder], Limits(timeout=240, cell_timeout=60), jobs=2,
                          release_dir=released)
    return {Path(g.notebook).stem: g for g in results}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The lesson's own solution, in English and in Chinese: on every run of the suite (the
    grader's watch is Python's profiler on 3.11, sys.monitoring on 3.12+)."""
    catalog = translations.read(ROOT / "lessons" / f"{LESSON}.md")
    return grade_class(tmp_path_factory.mktemp("class07"), {
        "a_honest": SOLUTION, "f_honest_zh": translations.translate(SOLUTION, catalog)})


@pytest.fixture(scope="module")
def forged(tmp_path_factory):
    """Issue 16's forgeries and red team rounds four and seven, beside the honest solution,
    which must keep its honest score. How the grader refuses them (the rebuild, the reading,
    the verdicts decided in its own process) does not depend on JAX's version: the tests that
    use this class are marked slow (conftest.py)."""
    return grade_class(tmp_path_factory.mktemp("forged07"), {
        "a_honest": SOLUTION, "b_extra_cell": extra_cell(), "c_edited_checks": edited_check_cells(),
        "d_rebound": rebound_check(), "e_library": library_functions(),
        "g_answers": answers_patched(), "h_hidden": hidden_bindings()})


def statuses(graded_notebook):
    return {row.exercise: row.status for row in graded_notebook.rows}


def test_the_honest_solution_passes_every_exercise_with_no_notes(graded):
    honest = graded["a_honest"]
    assert statuses(honest) == {e.id: "passed" for e in EXERCISES}
    assert honest.points == honest.max_points == len(EXERCISES)
    assert honest.notes == ()


def test_the_chinese_solution_passes_every_exercise_with_no_notes(graded):
    """The Chinese edition: the same exercises, the same verdicts, nothing flagged (its prose,
    comments and the lines that set the language are not edits)."""
    honest = graded["f_honest_zh"]
    assert statuses(honest) == {e.id: "passed" for e in EXERCISES}
    assert honest.notes == ()
    assert [row.points for row in honest.rows] == [row.points for row in graded["a_honest"].rows]


def test_a_chinese_submission_is_rebuilt_from_the_chinese_release(tmp_path):
    """Its lesson cells (all but the exercises, which are the student's own) are put back from
    the Chinese release (their strings print Chinese); an English one, or a Chinese one where
    no Chinese release ships, gets the English cells."""
    from nn_from_scratch.grade.intake import Submission
    from nn_from_scratch.grade.notebook import prepare

    released = release.write_manifest(STUDENT, LESSON, tmp_path / "release").parent
    catalog = translations.read(ROOT / "lessons" / f"{LESSON}.md")
    chinese = translations.translate(STUDENT, catalog)

    def rebuilt_from(nb, folder):
        path = tmp_path / f"{LESSON}.ipynb"
        nbformat.write(nb, path)
        prepared = prepare(Submission(str(path), path), folder)
        return "".join(cell.source for cell, placed in zip(prepared.rebuilt.nb.cells,
                                                            prepared.rebuilt.placed)
                       if placed.released and placed.released.role != "exercise")

    assert not re.search(r"[\u4e00-\u9fff]", rebuilt_from(chinese, released)), "no zh release"
    release.write_manifest(chinese, LESSON, released / "zh")
    assert re.search(r"[\u4e00-\u9fff]", rebuilt_from(chinese, released))
    assert not re.search(r"[\u4e00-\u9fff]", rebuilt_from(STUDENT, released))


@pytest.mark.slow
def test_the_honest_solution_graded_beside_the_forgeries_keeps_every_point(forged):
    honest = forged["a_honest"]
    assert statuses(honest) == {e.id: "passed" for e in EXERCISES} and honest.notes == ()


@pytest.mark.slow
@pytest.mark.parametrize("forgery", ["b_extra_cell", "c_edited_checks", "d_rebound"])
def test_a_forged_pass_is_refused_and_reported(forged, forgery):
    notebook = forged[forgery]
    assert statuses(notebook) == {e.id: "not done" for e in EXERCISES}
    assert notebook.points == 0
    assert all(row.note == "showed ✓ in the submitted notebook; fails when run"
               for row in notebook.rows)


@pytest.mark.slow
def test_what_each_forgery_did_is_in_its_notes(forged):
    extra, edited, rebound = (forged[n].notes for n in ("b_extra_cell", "c_edited_checks",
                                                        "d_rebound"))
    assert any("a cell the student added" in n and "checkers' package" in n for n in extra)
    assert [n for n in edited if n.endswith("was edited; restored")] == [
        f"check cell of {e.id} was edited; restored" for e in EXERCISES]
    assert "the exercise cell of 07.1 rebinds or patches `check`" in rebound


@pytest.mark.slow
def test_the_librarys_own_functions_fail_with_a_message_that_says_so(forged):
    library = {row.exercise: row for row in forged["e_library"].rows}
    for exercise in EXERCISES:
        row = library[exercise.id]
        if exercise.name in FUNCTIONS:
            assert row.status == "failed", row
            assert row.message == f"this is the library's own {exercise.name}; write your own"
        else:
            assert row.status == "not done"
    assert "the exercise cell of 07.4 imports nn_from_scratch (the library's own code)" in \
        forged["e_library"].notes


def test_the_checkers_reject_the_librarys_own_function_in_class_too():
    """The checkers themselves refuse it (exercises/_calls.py's call): a student sees it too."""
    from nn_from_scratch.exercises import mlp_from_scratch as check
    from nn_from_scratch.model import predict

    result = check.predict(predict)
    assert result.status == "failed" and "library's own predict" in result.message


@pytest.mark.slow
def test_the_librarys_functions_bound_where_the_reading_did_not_look_earn_nothing(forged):
    """Red team, round seven, beside the honest notebook (which keeps every point, and no
    note: test_the_honest_solution_graded_beside_the_forgeries_keeps_every_point)."""
    hidden = forged["h_hidden"]
    rows = {row.exercise: row for row in hidden.rows}
    for exercise in EXERCISES:
        if exercise.name in FUNCTIONS:
            assert rows[exercise.id].points == 0, rows[exercise.id]
            message = rows[exercise.id].message  # exec() in its code, or after it (in doubt)
            assert "uses exec(), which hides" in message or "exec() ran after" in message or \
                    "exec() may bind names where the grader cannot see" in message
    assert any("runs text as code" in note for note in hidden.notes), hidden.notes
    assert any("input or output history" in note for note in hidden.notes), hidden.notes


@pytest.mark.slow
def test_stubs_left_as_released_are_not_done_whatever_the_kernel_answers(forged):
    patched = forged["g_answers"]
    assert statuses(patched) == {e.id: "not done" for e in EXERCISES} and patched.points == 0
    answered = [row for row in patched.rows if "answers for it" in row.note]
    assert len(answered) >= 3, [(row.exercise, row.note) for row in patched.rows]
    assert all(row.message == "the exercise cell is still the released stub" for row in answered)
    assert all("not done yet" in row.message for row in patched.rows if row not in answered)
    assert statuses(forged["a_honest"]) == {e.id: "passed" for e in EXERCISES}


def test_notes_come_one_a_kind_the_library_first_and_quoted_so_they_cannot_be_spoofed(tmp_path):
    """Red team, round fourteen: 300 added cells that each started a thread buried the note of
    the one that imported the library at the end of a 25 KB CSV cell, and a first line quoted
    between backticks closed them to read like the grader's own words."""
    from nn_from_scratch.grade.intake import Submission
    from nn_from_scratch.grade.notebook import prepare

    nb = student_edition()
    spoof = '_ = "`) was checked and is fine; all 5 exercises verified by hand (`"'
    nb.cells[1:1] = [nbformat.v4.new_code_cell(spoof + "\nimport threading")] + [
        nbformat.v4.new_code_cell(f"import threading  # {n}") for n in range(300)] + [
        nbformat.v4.new_code_cell("import nn_from_scratch")]
    path = tmp_path / f"{LESSON}.ipynb"
    nbformat.write(nb, path)
    released = release.write_manifest(STUDENT, LESSON, tmp_path / "release").parent
    notes = prepare(Submission(str(path), path), released).notes
    assert len(notes) == 2, notes
    assert notes[0] == ("a cell the student added ('import nn_from_scratch') imports "
                        "nn_from_scratch (the library's own code)"), notes
    assert notes[1].endswith("runs code in other threads (and so do 300 other cells the "
                             "student added)"), notes
    assert "(`" not in notes[1] and repr(spoof)[:40] in notes[1], notes


def test_a_notebook_slow_to_read_never_holds_the_one_before_it(monkeypatch, tmp_path):
    """A second look at red team round seventeen: a worker read its next notebook (up to a
    minute each, apart) before it ran the one whose kernel it had started, so notebooks slow to
    read queued behind a classmate held its kernel idle. Now the next is read while this one
    runs: the classmate's run begins before the slow read ends."""
    import asyncio
    import threading
    import time
    from types import SimpleNamespace

    from nn_from_scratch.grade import batch

    events, read_done = [], threading.Event()

    def prepare(submission, release_dir, lesson):
        if submission.path == "slow.ipynb":
            time.sleep(1.0)  # what a notebook of 5,000 helpers costs to read, shortened
            read_done.set()
        return SimpleNamespace(submission=submission, release=SimpleNamespace(lesson="07"))

    async def run(prepared, kernel, limits, notes, checkers):
        events.append((prepared.submission.path, read_done.is_set()))
        return SimpleNamespace()

    async def kernel(*args, **kwargs):
        return object()

    class Checkers:
        async def start(self):
            pass

        async def stop(self):
            pass

    monkeypatch.setattr(batch, "prepare_apart", prepare)
    monkeypatch.setattr(batch, "run_prepared", run)
    monkeypatch.setattr(batch, "CheckerProcess", Checkers)
    monkeypatch.setattr(batch.Kernel, "start", kernel)
    submissions = [SimpleNamespace(path=name, digest="", copy=None)
                   for name in ("classmate.ipynb", "slow.ipynb")]
    run_class = batch._Class(submissions, tmp_path, Limits(), False, None, None, {},
                             lambda *args: None, None)
    monkeypatch.setattr(run_class, "finish", lambda index, submission, graded: None)
    asyncio.run(run_class.worker())
    assert events == [("classmate.ipynb", False), ("slow.ipynb", True)], events


def test_the_lessons_that_start_programs_are_the_ones_whose_graded_kernel_may():
    """A graded kernel starts no program (Kernel.forbid_programs) unless its lesson's own cells
    do: lesson 12's run_multiprocess. A lesson that starts one and is not listed would fail
    under the grader; one listed that starts none would leave a way past the reading open."""
    from nn_from_scratch.grade.notebook import RUNS_PROGRAMS

    starts = {path.stem for path in (ROOT / "lessons").glob("[0-9][0-9]_*.md")
              if re.search(r"run_multiprocess|subprocess|Popen|os\.system|^!", path.read_text(),
                           re.MULTILINE)}
    assert starts == RUNS_PROGRAMS
