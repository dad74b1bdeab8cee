"""Every lesson runs top to bottom, offline, and every committed notebook matches its lesson."""
import sys
from pathlib import Path

import nbformat
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
import notebooks  # noqa: E402

LESSONS = notebooks.lesson_paths()
ids = [p.stem for p in LESSONS]


def test_there_are_lessons():
    assert LESSONS, "no lessons/NN_slug.md found"


@pytest.mark.parametrize("lesson", LESSONS, ids=ids)
def test_notebook_matches_its_lesson(lesson):
    path = notebooks.notebook_path(lesson)
    assert path.exists(), f"{path.name} is missing: run .venv/bin/python tools/notebooks.py {lesson.name}"
    committed = nbformat.read(path, as_version=4)
    assert notebooks.cell_sources(committed) == notebooks.cell_sources(notebooks.read_lesson(lesson)), (
        f"{path.name} is stale: regenerate it with .venv/bin/python tools/notebooks.py "
        f"lessons/{lesson.name}")
    unexecuted = [i for i, c in enumerate(committed.cells)
                  if c.cell_type == "code" and c.source.strip() and c.execution_count is None]
    assert not unexecuted, f"{path.name} was not executed (cells {unexecuted} have no outputs)"


@pytest.mark.parametrize("lesson", LESSONS, ids=ids)
def test_lesson_structure(lesson):
    nb = notebooks.read_lesson(lesson)
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert "You will learn" in text and "You need" in text, "a lesson opens with what you will learn"
    assert "## Summary" in text and "## Exercises" in text
    tags = [c.metadata.get("tags", []) for c in nb.cells]
    solutions = [i for i, t in enumerate(tags) if notebooks.SOLUTION_TAG in t]
    assert solutions, "exercises have solutions in cells tagged 'solution'"
    exercises_at = next(i for i, c in enumerate(nb.cells) if "## Exercises" in c.source)
    assert min(solutions) > exercises_at, "solutions sit after the exercises, at the end"
    first_code = next(c for c in nb.cells if c.cell_type == "code")
    assert "import" in first_code.source, "the first code cell holds imports and settings"
    old = ("DeviceArray", "jax.config.FLAGS", "from jax.config import", "jax.tree_map(")
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    assert not [o for o in old if o in code], "lessons use today's JAX API"


@pytest.mark.parametrize("lesson", LESSONS, ids=ids)
def test_lesson_executes_offline(lesson):
    seconds = notebooks.execute(notebooks.read_lesson(lesson))
    print(f"{lesson.name} executed in {seconds:.1f} s")
