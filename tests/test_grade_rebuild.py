"""Rebuilding a submission from the release: only exercise cells (and added cells) are the
student's; every released cell edited, deleted or moved is restored, and the notes say so.
No kernel here: these are the grader's first steps, on a small hand-made release."""
import copy

import nbformat
import pytest

from nn_from_scratch.grade.rebuild import left_as_released, rebuild
from nn_from_scratch.grade.release import assign_ids, load_release, write_manifest
from nn_from_scratch.grade.suspicious import flags

LESSON = "07_mlp_from_scratch"  # a real lesson's checkers name the exercises
CELLS = [("markdown", "", "# 07 · A small release"),
         ("code", "", "import jax.numpy as jnp\n"
                      "from nn_from_scratch.exercises import mlp_from_scratch as check"),
         ("code", "exercise", "def relu(x):\n    raise NotImplementedError"),
         ("code", "check", "check.relu(relu)"),
         ("code", "", "from nn_from_scratch.model import relu"),
         ("code", "exercise", "def predict(params, image):\n    raise NotImplementedError"),
         ("code", "check", "check.predict(predict)"),
         ("code", "", "print('the end')\n\ndef last():\n    \"\"\"The last cell.\"\"\"\n"
                      "    return 'the end'")]


def student_edition():
    nb = nbformat.v4.new_notebook(metadata={"nn_from_scratch": {"lesson": LESSON}})
    for kind, tag, source in CELLS:
        cell = (nbformat.v4.new_code_cell if kind == "code" else nbformat.v4.new_markdown_cell)(
            source)
        if tag:
            cell.metadata["tags"] = [tag]
        nb.cells.append(cell)
    assign_ids(nb, LESSON)
    return nb


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    folder = tmp_path_factory.mktemp("release")
    write_manifest(student_edition(), LESSON, folder)
    return load_release(LESSON, folder)


def code(rebuilt):
    return [c.source for c in rebuilt.nb.cells if c.cell_type == "code"]


def test_ids_are_stable_and_name_the_exercises(release):
    assert [c.id for c in release.cells] == ["07-c000", "07-c001", "07-ex1", "07-check1",
                                             "07-c004", "07-ex2", "07-check2", "07-c007"]
    assert [(c.role, c.exercise) for c in release.cells[2:4]] == [("exercise", "07.1"),
                                                                  ("check", "07.1")]
    assert release.cells[5].exercise == "07.4" and release.checker == "mlp_from_scratch"


def test_an_untouched_submission_is_the_release_with_no_notes(release):
    rebuilt = rebuild(student_edition(), release)
    assert code(rebuilt) == [c.source for c in release.cells if c.cell_type == "code"]
    assert rebuilt.notes == []


@pytest.mark.parametrize("ids", [True, False], ids=["with ids", "ids lost"])
def test_exercise_cells_come_from_the_student_and_everything_else_from_the_release(release, ids):
    nb = student_edition()
    nb.cells[2].source = "def relu(x):\n    return jnp.maximum(0, x)"
    nb.cells[3].source = "print('✓ 07.1 relu')"  # an edited check cell
    del nb.cells[7]  # a deleted lesson cell
    nb.cells[4], nb.cells[1] = nb.cells[1], nb.cells[4]  # a lesson cell moved
    nb.cells.insert(6, nbformat.v4.new_code_cell("scratch = 1"))  # added after 07.4's exercise
    if not ids:
        for cell in nb.cells:
            cell.id = nbformat.v4.new_code_cell().id  # random, as an older release had
    rebuilt = rebuild(nb, release)
    assert code(rebuilt) == [CELLS[1][2], "def relu(x):\n    return jnp.maximum(0, x)",
                             "check.relu(relu)", CELLS[4][2], CELLS[5][2], "scratch = 1",
                             "check.predict(predict)", CELLS[7][2]]
    assert "check cell of 07.1 was edited; restored" in rebuilt.notes
    assert "lesson cell 07-c007 (`print('the end')`) was deleted; restored" in rebuilt.notes
    assert any(note.endswith("was moved; run in its place") for note in rebuilt.notes)
    added = [p for p in rebuilt.placed if p.released is None]
    assert len(added) == 1


def test_a_deleted_exercise_cell_is_graded_as_its_stub(release):
    nb = student_edition()
    del nb.cells[5]
    rebuilt = rebuild(nb, release)
    assert CELLS[5][2] in code(rebuilt)
    assert rebuilt.notes == ["the exercise cell of 07.4 is missing; graded with the stub"]


@pytest.mark.parametrize("where", ["the exercise before", "a cell of its own"])
def test_a_deleted_exercise_whose_answer_is_written_earlier_meets_that_answer(release, where):
    """Round six of the red team (honest students): 07.4's answer written in 07.1's cell, or
    in a cell added before, and 07.4's own cell deleted; the stub put back hid the answer, as
    it does not in Jupyter, and the point was lost."""
    nb = student_edition()
    answer = "def predict(params, image):\n    return image"
    if where == "the exercise before":
        nb.cells[2].source = "def relu(x):\n    return jnp.maximum(0, x)\n\n" + answer
    else:
        nb.cells.insert(4, nbformat.v4.new_code_cell(answer))
    del nb.cells[6 if where == "a cell of its own" else 5]
    rebuilt = rebuild(nb, release)
    assert CELLS[5][2] not in code(rebuilt)
    assert rebuilt.notes == ["the exercise cell of 07.4 is missing; its check meets what an "
                             "earlier cell of the student's defines (predict)"]
    assert left_as_released(rebuilt) == ({"07.1"} if where == "a cell of its own" else set())


def test_a_cell_of_another_kind_with_a_released_id_is_an_added_cell(release):
    nb = student_edition()
    impostor = nbformat.v4.new_markdown_cell("notes")
    impostor.id = nb.cells[7].id
    nb.cells[7] = impostor
    rebuilt = rebuild(nb, release)
    assert [c.source for c in rebuilt.nb.cells[-2:]] == ["notes", CELLS[7][2]]
    assert "lesson cell 07-c007 (`print('the end')`) was deleted; restored" in rebuilt.notes


def test_rebuilding_leaves_the_submission_as_it_was(release):
    nb = student_edition()
    nb.cells[3].source = "print('forged')"
    before = copy.deepcopy(nb)
    rebuild(nb, release)
    assert nb == before


@pytest.mark.parametrize("source, note", [
    ("import sys\nsys.modules['x'] = None", "touches sys.modules"),
    ("check = object()", "rebinds or patches `check`"),
    ("check.relu = lambda f: None", "rebinds or patches `check`"),
    ("from nn_from_scratch.model import relu", "imports nn_from_scratch (the library's own code)"),
    ("import builtins\nbuiltins.print = None", "touches builtins"),
    ("import inspect\ninspect.currentframe().f_back", "inspects the call stack"),
    ("get_ipython().display_pub.publish({})", "reaches into IPython's display"),
    # red team, round four: the library reached where an import at the start is not
    ("import math, nn_from_scratch.autodiff as A",
     "imports nn_from_scratch (the library's own code)"),
    ("pkgutil.resolve_name('nn_from_scratch.auto' + 'diff:backward')",
     "imports nn_from_scratch (the library's own code)"),
    ("import __main__\n__main__.grad = g",
     "touches __main__ (names bound where the grader does not read them)"),
    ("_nn_from_scratch_answers.answer = forged", "touches the grader's answering object"),
    ("import sys\nsys.setprofile = lambda f: None",
     "reads or switches Python's profiler or tracer (sys.setprofile, sys.getprofile)"),
    # red team, round five: full-width letters (Python reads them NFKC-normalised), the
    # profiler read, names reached through globals()
    ("import ｎn_from_scratch.autodiff as A", "imports nn_from_scratch (the library's own code)"),
    ("import sys as _s\n_s.ｓetprofile = lambda *a: None",
     "reads or switches Python's profiler or tracer (sys.setprofile, sys.getprofile)"),
    ("from ｃoncurrent.futures import ＴhreadPoolExecutor", "runs code in other threads"),
    ("import _＿main＿＿", "touches __main__ (names bound where the grader does not read them)"),
    ("if sys.getprofile() is not None:\n    x = []",
     "reads or switches Python's profiler or tracer (sys.setprofile, sys.getprofile)"),
    ("_a = globals()['_nn_from_scratch_' + 'answers']",
     "reaches names through globals(), vars() or locals()"),
    ("with ThreadPoolExecutor(1) as ex:\n    ex.submit(f).result()", "runs code in other threads"),
    # round seven: a docstring's text run as code, IPython's history, an event hook
    ("def _t():\n    exec(relu.__doc__)", "runs text as code (exec, eval, compile)"),
    ("def _t():\n    exec(relu.__doc__)", "reads a docstring (__doc__) as data"),
    ("code = In[-1].split(chr(34) * 3)[1]", "reads IPython's input or output history"),
    ("get_ipython().events.register('post_run_cell', f)", "registers an IPython event hook"),
    # round ten: the library through the notebook's own check object
    ("relu = lambda x: check.model.relu(x)",
     "reaches into the checkers' module (check.<name>, not a check called)"),
    ("folder = check.__file__", "reaches into the checkers' module (check.<name>, not a check "
     "called)"),
    # round twenty-seven: the same by getattr, the kernel's output thread, XLA's threads
    ("box().f = getattr(check, 'model').relu",
     "reaches into the checkers' module (check.<name>, not a check called)"),
    ("sys.stdout.pub_thread.schedule(lambda: out.append(fn(*a)))", "runs code in other threads"),
    ("sys.stdout.echo = _Echo()", "runs code in other threads"),
    ("jax.pure_callback(lambda v: np.asarray(_off(Box.f, v)), shape, x)",
     "runs code in other threads"),
    # a path: the library's files loaded under another name, with nothing imported by its own
    ("import runpy\nrelu = runpy.run_path('/srv/nn_from_scratch/model.py')['relu']",
     "names a folder nn_from_scratch in a path (the library's files can be loaded from it)"),
    ("sys.path.insert(0, r'C:\\course\\nn_from_scratch')\nfrom model import relu",
     "names a folder nn_from_scratch in a path (the library's files can be loaded from it)"),
])
def test_student_code_that_reaches_for_the_grader_is_flagged(source, note):
    assert f"the exercise cell of 07.1 {note}" in flags("the exercise cell of 07.1", source)


def test_the_note_on_reaching_any_object_is_read_as_the_points_are():
    """Red team, round fourteen, a second look: an honest helper named get_objects drew the
    note that it reached the kernel through gc; the note is now read as the points are."""
    from nn_from_scratch.grade.suspicious import REACHES

    assert flags("a cell", "def get_objects(root):\n    return [root]") == []
    assert flags("a cell", "names = {'get_objects': 1}") == []
    assert flags("a cell", "k = object.__subclasses__()") == [f"a cell {REACHES}"]
    assert flags("a cell", "import gc\nx = gc.get_referrers(1)") == [f"a cell {REACHES}"]


def test_the_word_exercises_in_a_string_is_no_sign_of_the_checkers():
    """Red team, round fourteen: print("exercises done") drew "names the checkers' package"."""
    for honest in ('print("all exercises done")', 'print(f"exercises: {n}")'):
        assert flags("a cell the student added", honest) == [], honest
    assert flags("a cell the student added", "from nn_from_scratch import exercises as e") == [
        "a cell the student added imports nn_from_scratch (the library's own code)",
        "a cell the student added names the checkers' package (exercises)"]


def test_ordinary_exercise_code_is_not_flagged():
    honest = ("def relu(x):\n    return jnp.maximum(0, x)\n\nif check_ok == 1:\n    pass\n"
              "batched_predict = jax.vmap(predict, in_axes=(None, 0))")
    assert flags("the exercise cell of 07.1", honest) == []
    assert flags("a cell the student added", "check.relu(relu)\ncheck.relu (relu)") == []
    # red team, round five: an honest student's comments and self-test were called cheating
    commented = ("# compare it with nn_from_scratch's listing; no threading, as in the "
                 "exercises\ndef relu(x):\n    return jnp.maximum(0, x)  # sys.modules? no\n\n"
                 "if __name__ == \"__main__\":\n    print(relu(-1.0))")
    assert flags("the exercise cell of 07.1", commented) == []
    # round six: a docstring (or a bare string) naming the library runs nothing either
    documented = ('def relu(x):\n    """Like nn_from_scratch.model.relu, by hand;\n    no '
                  'sys.modules, no threading."""\n    return jnp.maximum(0, x)\n\n'
                  '"see nn_from_scratch/model.py"\nrelu_too = relu')
    assert flags("the exercise cell of 07.1", documented) == []
    # a string that is used is code: a module imported by name, a path put on sys.path
    for used in ('m = __import__("nn_from_scratch.model")',
                 'path = "/srv/nn_from_scratch"\nimport model',
                 'print("""\n""", "nn_from_scratch")',
                 '"""文档：一个字符串。"""; import nn_from_scratch',  # after it on its line
                 # round seven: a line end only str.splitlines knows shifted the blanking
                 'K = 0  # a\x0c b\nfrom nn_from_scratch.model import predict\n"doc"',
                 'K = 0  # a\u2028 b\nfrom nn_from_scratch.model import predict\n"doc"',
                 # round seven: NFKC makes one string of a line Python runs as code
                 '"＂＂"; import nn_from_scratch.model as M  # ＂＂＂',
                 # round eight: ＂ and ＃, a quote and a comment sign only once normalised
                 's = "＂＃"; import nn_from_scratch.model as M  # ＂'):
        assert flags("the exercise cell of 07.1", used) != [], used


def test_a_path_naming_the_library_is_not_called_an_import():
    """Red team, round six: Colab's line that puts the course's folder on ``sys.path`` was
    noted "imports nn_from_scratch"; it is noted as the path it is, and an import beside it
    still as an import."""
    colab = 'import sys\nsys.path.insert(0, "/content/drive/MyDrive/nn_from_scratch")'
    assert flags("a cell the student added", colab) == [
        "a cell the student added names a folder nn_from_scratch in a path (the library's files "
        "can be loaded from it)"]
    both = colab + "\nimport nn_from_scratch.model"
    assert "a cell the student added imports nn_from_scratch (the library's own code)" in \
        flags("a cell the student added", both)


def test_a_comment_or_docstring_is_no_edit_but_a_change_to_the_code_is(release):
    nb = student_edition()
    nb.cells[7].source = ("# 最后一个单元格 (a comment in another language)\nprint('the end')\n\n"
                          "def last():\n    \"\"\"最后一个单元格。\"\"\"\n    return 'the end'")
    nb.cells[4].source = "from nn_from_scratch.model import relu  # the library's"
    assert rebuild(nb, release).notes == []
    nb.cells[7].source = nb.cells[7].source.replace("return 'the end'", "return '最后一个单元格。'")
    assert len(rebuild(nb, release).notes) == 1  # a string that is no docstring is code
    nb.cells[7].source = "print('the end!')\n\ndef last():\n    return 'the end'"
    assert rebuild(nb, release).notes == [
        "lesson cell 07-c007 (`print('the end')`) was edited; restored"]


def test_stubs_left_as_released_are_found_from_the_source_alone(release):
    nb = student_edition()
    assert left_as_released(rebuild(nb, release)) == {"07.1", "07.4"}
    first = [c for c in nb.cells if "exercise" in c.metadata.get("tags", [])][0]
    first.source = "# my notes, no answer yet\n" + first.source
    assert left_as_released(rebuild(nb, release)) == {"07.1", "07.4"}
    first.source = "def relu(x):\n    return x * (x > 0)"
    assert left_as_released(rebuild(nb, release)) == {"07.4"}


def test_a_cell_added_between_a_stub_and_its_check_may_hold_the_answer(release):
    nb = student_edition()
    nb.cells.insert(6, nbformat.v4.new_code_cell("def predict(params, image):\n    return image"))
    nb.cells.insert(1, nbformat.v4.new_code_cell("x = 1"))  # before every stub: no answer
    assert left_as_released(rebuild(nb, release)) == {"07.1"}
    # red team, round five: a note, or a copy of the stub, between a stub and its check is
    # no answer
    nb = student_edition()
    nb.cells.insert(3, nbformat.v4.new_code_cell("# I'll come back to this one\n\"\"\"todo\"\"\""))
    nb.cells.insert(7, nbformat.v4.new_code_cell(nb.cells[6].source))  # 07.4's stub, again
    assert left_as_released(rebuild(nb, release)) == {"07.1", "07.4"}


def test_solved_cells_with_neither_id_nor_tag_are_still_the_students(release):
    """Red team, round five: an honest notebook whose cells lost their ids and tags (a
    converter, a copy into a fresh notebook) was graded with the stubs: 0/5."""
    nb = student_edition()
    nb.nbformat_minor = 4
    answers = {2: "def relu(x):\n    return jnp.maximum(0, x)",
               5: "def predict(params, image):\n    return image"}
    for index, cell in enumerate(nb.cells):
        cell.pop("id", None)
        cell.metadata.pop("tags", None)
        cell.source = answers.get(index, cell.source)
    rebuilt = rebuild(nb, release)
    assert [c for c in code(rebuilt) if c in answers.values()] == list(answers.values())
    assert left_as_released(rebuilt) == set()
    assert not [note for note in rebuilt.notes if "missing" in note], rebuilt.notes


def test_an_untagged_cell_that_binds_a_stubs_name_earlier_is_exploration_not_the_answer(release):
    """Red team, round six: the first untagged cell that bound `predict` was taken for 07.4's
    and run after the answer, which it overrode; the answer is the one nearest the check."""
    nb = student_edition()
    nb.nbformat_minor = 4
    for cell in nb.cells:
        cell.pop("id", None)
        cell.metadata.pop("tags", None)
    nb.cells[2].source = "def relu(x):\n    return jnp.maximum(0, x)"
    nb.cells[5].source = "def predict(params, image):\n    return image"
    nb.cells.insert(5, nbformat.v4.new_code_cell("predict = None  # a first look"))
    nb.cells.insert(2, nbformat.v4.new_code_cell("relu = 0"))
    for cell in nb.cells:
        cell.pop("id", None)
    rebuilt = rebuild(nb, release)
    sources = code(rebuilt)
    assert sources.index("def predict(params, image):\n    return image") == sources.index(
        "check.predict(predict)") - 1
    assert sources.index("predict = None  # a first look") < sources.index(
        "def predict(params, image):\n    return image")
    assert left_as_released(rebuilt) == set()
    assert not [note for note in rebuilt.notes if "moved" in note or "missing" in note]
