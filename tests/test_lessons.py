"""Every lesson runs top to bottom offline, and the committed notebooks match it.

The full edition (``notebooks/``) is executed here and must pass every check, on both of CI's
runs and in the README's test command. The student edition is executed by
``tests/test_mutants.py`` (marked ``slow``: ``pytest --slow`` runs it, as CI does once, on its
first run): the Chinese one (``student/zh``
runs the very code of ``student/``, which tests/test_translations.py proves through ast), in a
fresh kernel, to the end, with every check saying "not done yet" in Chinese, in the same run
as the mutation test of its checkers (tools/mutants.py says why one run carries both).
"""
import ast
import re
import sys
from pathlib import Path

import jupytext
import nbformat
import pytest

from nn_from_scratch.exercises import lesson_exercises
from nn_from_scratch.grade import check_results

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))

import notebooks  # noqa: E402

LESSONS = notebooks.lesson_paths()
ids = [p.stem for p in LESSONS]
OLD_APIS = ("DeviceArray", "jax.config.FLAGS", "from jax.config import", "jax.tree_map(",
            "jax.tree_util.tree_map(")


def tags(cell):
    return cell.metadata.get("tags", [])


def test_there_are_lessons():
    assert len(LESSONS) >= 14, [p.name for p in LESSONS]


@pytest.mark.parametrize("lesson", LESSONS, ids=ids)
def test_committed_notebooks_match_their_lesson(lesson):
    full, student = notebooks.editions(lesson)
    for edition, generated in (("full", full), ("student", student)):
        path = notebooks.notebook_path(lesson, edition)
        fix = f"regenerate with .venv/bin/python tools/notebooks.py lessons/{lesson.name}"
        assert path.exists(), f"{path.name} ({edition} edition) is missing: {fix}"
        committed = nbformat.read(path, as_version=4)
        assert notebooks.cell_sources(committed) == notebooks.cell_sources(generated), (
            f"{path.relative_to(notebooks.ROOT)} is stale: {fix}")
        code = [c for c in committed.cells if c.cell_type == "code" and c.source.strip()]
        if edition == "full":
            unexecuted = [c.source[:40] for c in code if c.execution_count is None]
            assert not unexecuted, f"{path.name} was not executed: {unexecuted}"
        else:
            with_outputs = [c.source[:40] for c in code if c.outputs]
            assert not with_outputs, f"the student edition has outputs: {with_outputs}"


@pytest.mark.parametrize("lesson", LESSONS, ids=ids)
def test_lesson_structure(lesson):
    nb = jupytext.read(lesson, fmt="md")
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert "You will learn" in text and "You need" in text, "a lesson opens with what it teaches"
    assert "## Summary" in text, "a lesson ends with a recap"
    first_code = next(c for c in nb.cells if c.cell_type == "code")
    assert "import" in first_code.source, "the first code cell holds imports and settings"
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    assert not [old for old in OLD_APIS if old in code], "lessons use today's JAX API"
    assert not [c for c in nb.cells if "solution" in tags(c)], "solutions sit in exercise cells"


@pytest.mark.parametrize("lesson", LESSONS, ids=ids)
def test_exercises_are_written_and_checked(lesson):
    nb = jupytext.read(lesson, fmt="md")
    exercises = lesson_exercises(lesson.stem)
    assert len(exercises) >= 3, f"{lesson.name}: at least 3 checked exercises"
    cells = nb.cells
    exercise_cells = [i for i, c in enumerate(cells) if "exercise" in tags(c)]
    check_cells = [i for i, c in enumerate(cells) if "check" in tags(c)]
    assert len(exercise_cells) == len(check_cells) == len(exercises), (
        f"{len(exercises)} checkers, {len(exercise_cells)} exercise cells, "
        f"{len(check_cells)} check cells")
    for i in exercise_cells:
        assert i + 1 in check_cells, f"exercise cell {i} is not followed by its check cell"
    called = [re.findall(r"\bcheck\.(\w+)\(", cells[i].source) for i in check_cells]
    assert all(len(c) == 1 for c in called), f"one checker call per check cell: {called}"
    assert [c[0] for c in called] == [e.name for e in exercises], (
        "the check cells call this lesson's checkers, in order")
    code = "\n".join(c.source for c in cells if c.cell_type == "code")
    modules = re.findall(r"from nn_from_scratch\.exercises import (\w+) as check", code)
    assert len(modules) == 1, "the lesson imports its checkers once, as `check`"
    module = modules[0]
    assert sys.modules[f"nn_from_scratch.exercises.{module}"].LESSON == lesson.stem

    full, student = notebooks.editions(lesson)
    for i in exercise_cells:
        for edition in (full, student):
            ast.parse(edition.cells[i].source)  # both editions are valid Python
        stub = student.cells[i].source
        assert "TODO" in stub and ("NotImplementedError" in stub or "..." in stub), stub
        assert full.cells[i].source != stub


@pytest.mark.parametrize("lesson", LESSONS, ids=ids)
def test_lesson_executes_offline_with_every_check_passing(lesson):
    full, _ = notebooks.editions(lesson)
    seconds = notebooks.execute(full)
    results = check_results(full)
    expected = [e.id for e in lesson_exercises(lesson.stem)]
    assert set(results) == set(expected), f"checks shown: {sorted(results)}; expected {expected}"
    failed = {i: r["message"] for i, r in results.items() if r["status"] != "passed"}
    assert not failed, f"checks that fail on the lesson's own solutions: {failed}"
    print(f"{lesson.name} executed in {seconds:.1f} s")


def test_the_readme_maps_every_lesson_with_its_exercise_count():
    readme = (notebooks.ROOT / "README.md").read_text()
    for lesson in LESSONS:
        row = re.search(rf"^\| {lesson.stem[:2]} \| \[[^]]+\]\(lessons/{lesson.name}\) \|.*"
                        rf"\| (\d+) \| ~\d+ s \|$", readme, re.M)
        assert row, f"README.md's lesson map has no row for {lesson.name}"
        assert int(row.group(1)) == len(lesson_exercises(lesson.stem)), lesson.name
