"""The grader survives what students hand in, and reports every exercise of every notebook."""
import csv
import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from nn_from_scratch.exercises import lesson_exercises
from nn_from_scratch.grade import grade_paths, lesson_of

ROOT = Path(__file__).resolve().parent.parent
LESSON = "07_mlp_from_scratch"  # its checkers: relu, random_layer_params, ... he_ratio


def notebook(*cells, lesson=LESSON):
    """A small submission: (tag, source) pairs after an imports cell."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["nn_from_scratch"] = {"lesson": lesson, "edition": "student"}
    nb.cells.append(nbformat.v4.new_code_cell(
        "import jax\nimport jax.numpy as jnp\n"
        "from nn_from_scratch.exercises import mlp_from_scratch as check"))
    for tag, source in cells:
        cell = nbformat.v4.new_code_cell(source)
        cell.metadata["tags"] = [tag] if tag else []
        nb.cells.append(cell)
    return nb


def write(tmp_path, name, nb):
    path = tmp_path / name
    nbformat.write(nb, path)
    return path


@pytest.fixture
def hostile_class(tmp_path):
    """A mixed submission, one that loops forever, one that kills its kernel, a broken file, and
    one that says nothing of its lesson."""
    mixed = notebook(
        ("exercise", "def relu(x):\n    return jnp.maximum(0, x)"),
        ("check", "check.relu(relu)"),
        ("exercise", "def random_layer_params(m, n, key, scale=1e-2):\n"
                     "    return scale * jax.random.normal(key, (n, m)), "
                     "scale * jax.random.normal(key, (n,))"),  # the reused key
        ("check", "check.random_layer_params(random_layer_params)"),
        ("exercise", "def init_network_params(sizes, key):\n    raise NotImplementedError"),
        ("check", "check.init_network_params(init_network_params)"),
        ("exercise", "predict = undefined_name  # raises NameError"),
        ("check", "check.predict(predict)"),
        # 07.5 batched_predict: the check cell was deleted
        ("exercise", "n_params = 669_706"),
        ("check", "check.parameter_count(n_params)"),
        ("exercise", "ratio = 1 / 0"),
        ("check", "check.he_ratio(ratio)"),
    )
    looping = notebook(
        ("exercise", "def relu(x):\n    while True:\n        pass"),
        ("check", "check.relu(relu)"),
        ("exercise", "n_params = 669_706"),
        ("check", "check.parameter_count(n_params)"),
    )
    crashing = notebook(
        ("exercise", "import os\nos._exit(1)  # the kernel dies"),
        ("check", "check.relu(relu)"),
        ("exercise", "n_params = 669_706"),
        ("check", "check.parameter_count(n_params)"),
    )
    folder = tmp_path / "submissions"
    folder.mkdir()
    write(folder, "alice.ipynb", mixed)
    write(folder, "bob.ipynb", looping)
    write(folder, "erin.ipynb", crashing)
    (folder / "carol.ipynb").write_text("{ this is not json")
    write(folder, "dave.ipynb", notebook(lesson=None))
    return folder


def by_exercise(rows, name):
    return {r.exercise: r for r in rows if r.notebook.endswith(name)}


def test_every_kind_of_submission_is_reported_and_none_stops_the_rest(hostile_class):
    rows = grade_paths([hostile_class], timeout=120, cell_timeout=5)
    alice = by_exercise(rows, "alice.ipynb")
    assert list(alice) == ["07.1", "07.2", "07.3", "07.4", "07.5", "07.6", "07.7"]
    assert alice["07.1"].status == "passed"
    assert alice["07.2"].status == "failed" and "same key" in alice["07.2"].message
    assert alice["07.3"].status == "not done"
    assert alice["07.4"].status == "error"
    assert "NameError: name 'undefined_name' is not defined" in alice["07.4"].message
    assert alice["07.5"].status == "missing" and "check.batched_predict" in alice["07.5"].message
    assert alice["07.6"].status == "passed"
    assert alice["07.7"].status == "error" and "ZeroDivisionError" in alice["07.7"].message

    bob = by_exercise(rows, "bob.ipynb")
    assert bob["07.1"].status == "timed out" and "interrupted after 5 s" in bob["07.1"].message
    assert bob["07.6"].status == "passed"  # after the endless loop, the rest still ran
    assert bob["07.2"].status == "missing"

    erin = by_exercise(rows, "erin.ipynb")
    assert erin["07.1"].status == "error" and "made the kernel die" in erin["07.1"].message
    assert erin["07.6"].status == "error" and "the kernel had died" in erin["07.6"].message

    carol = [r for r in rows if r.notebook.endswith("carol.ipynb")]
    assert len(carol) == 1 and carol[0].exercise is None and carol[0].status == "error"
    assert "not a readable notebook" in carol[0].message
    dave = [r for r in rows if r.notebook.endswith("dave.ipynb")]
    assert dave[0].status == "error" and "cannot tell which lesson" in dave[0].message


def test_the_command_line_prints_json_writes_csv_and_exits_1(hostile_class, tmp_path):
    grades = tmp_path / "grades.csv"
    result = subprocess.run(
        [sys.executable, "-m", "nn_from_scratch", "grade", str(hostile_class / "carol.ipynb"),
         str(hostile_class / "dave.ipynb"), "--json", "--csv", str(grades)],
        capture_output=True, text=True, timeout=120)
    assert result.returncode == 1
    rows = json.loads(result.stdout)
    assert [set(r) for r in rows] == [{"notebook", "exercise", "status", "message"}] * 2
    assert rows[0]["exercise"] is None and rows[0]["status"] == "error"
    with open(grades, newline="") as f:
        table = list(csv.reader(f))
    assert table[0] == ["notebook", "passed", "total"] and len(table) == 3


def test_bad_usage_exits_2():
    result = subprocess.run([sys.executable, "-m", "nn_from_scratch", "grade", "/no/such/folder"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert result.stderr.strip() == "error: /no/such/folder: no such file or folder."


def test_the_solutions_pass_everything_and_the_student_edition_is_all_not_done():
    quick = "03_autodiff_from_scratch"  # the quickest lesson; every lesson's editions are
    # executed and checked the same way by test_lessons.py
    full, student = (ROOT / "notebooks" / f"{quick}.ipynb", ROOT / "student" / f"{quick}.ipynb")
    result = subprocess.run([sys.executable, "-m", "nn_from_scratch", "grade", str(full),
                             str(student), "--json"],
                            capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert result.returncode == 1, result.stdout + result.stderr  # the student edition is not done
    rows = json.loads(result.stdout)
    statuses = {edition: {r["status"] for r in rows if f"{edition}/" in r["notebook"]}
                for edition in ("notebooks", "student")}
    assert statuses == {"notebooks": {"passed"}, "student": {"not done"}}
    assert len(rows) == 2 * len(lesson_exercises(quick)) >= 6


def test_a_renamed_submission_is_still_recognised_by_its_metadata_or_name(tmp_path):
    nb = notebook()
    assert lesson_of(nb, tmp_path / "anything.ipynb") == LESSON
    nb.metadata.pop("nn_from_scratch")
    assert lesson_of(nb, tmp_path / f"{LESSON}-alice.ipynb") == LESSON
    assert lesson_of(nb, tmp_path / "alice.ipynb") is None
