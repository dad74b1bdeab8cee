"""Lessons -> notebooks: the one pipeline that builds, executes and checks them.

Each lesson's single source is ``lessons/NN_slug.md`` (jupytext Markdown). This
script turns it into ``notebooks/NN_slug.ipynb`` and executes it in a fresh
Jupyter kernel, offline, so the committed notebook carries outputs and plots.

    .venv/bin/python tools/notebooks.py                    # every lesson
    .venv/bin/python tools/notebooks.py lessons/03_jit.md  # just one

The tests import the same functions: they execute every lesson from its source
and fail when a committed notebook's cells differ from its lesson.
"""
import asyncio
import os
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import jupytext
import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
LESSONS = ROOT / "lessons"
NOTEBOOKS = ROOT / "notebooks"
LESSON_TIME_LIMIT = 300  # seconds for a whole lesson; a hung cell must not hang the suite
RAISES_TAG = "raises-exception"  # nbclient lets these cells raise; we check that they do
SOLUTION_TAG = "solution"


def lesson_paths():
    """Every lesson source, in order: ``lessons/00_*.md``, ``lessons/01_*.md``, ..."""
    return sorted(LESSONS.glob("[0-9][0-9]_*.md"))


def notebook_path(lesson):
    return NOTEBOOKS / (Path(lesson).stem + ".ipynb")


def read_lesson(lesson):
    """The lesson as an (unexecuted) notebook."""
    return jupytext.read(lesson, fmt="md")


def cell_sources(nb):
    """What must match between a lesson and its notebook: each cell's type, source and tags."""
    return [(c.cell_type, c.source.strip(), sorted(c.metadata.get("tags", [])))
            for c in nb.cells]


@contextmanager
def _lesson_environment():
    """Offline, and with matplotlib's inline backend (so plots land in the notebook)."""
    saved = dict(os.environ)
    os.environ.pop("MPLBACKEND", None)
    os.environ["NN_FROM_SCRATCH_OFFLINE"] = "1"
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), saved.get("PYTHONPATH")]))
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def execute(nb, time_limit=LESSON_TIME_LIMIT):
    """Execute ``nb`` top to bottom in a fresh kernel, in ``notebooks/``; return seconds taken.

    Raises ``nbclient.exceptions.CellExecutionError`` when a cell fails that is
    not tagged ``raises-exception``, ``TimeoutError`` past ``time_limit`` seconds,
    and ``AssertionError`` when a cell tagged ``raises-exception`` did not raise.
    """
    client = NotebookClient(nb, timeout=time_limit, kernel_name="python3",
                            resources={"metadata": {"path": str(NOTEBOOKS)}})
    start = time.perf_counter()
    with _lesson_environment():
        asyncio.run(asyncio.wait_for(client.async_execute(), time_limit))
    for i, cell in enumerate(nb.cells):
        if RAISES_TAG in cell.metadata.get("tags", []):
            errors = [o for o in cell.get("outputs", []) if o.output_type == "error"]
            assert errors, f"cell {i} is tagged {RAISES_TAG} but did not raise:\n{cell.source}"
    return time.perf_counter() - start


def build(lessons):
    """Regenerate and execute the notebooks of ``lessons``; print each one's time."""
    NOTEBOOKS.mkdir(exist_ok=True)
    for lesson in lessons:
        nb = read_lesson(lesson)
        seconds = execute(nb)
        nb.metadata.pop("jupytext", None)  # the pairing lives here, not in every notebook
        nbformat.write(nb, notebook_path(lesson))
        print(f"{Path(lesson).name}: executed in {seconds:.1f} s -> "
              f"{notebook_path(lesson).relative_to(ROOT)}")


if __name__ == "__main__":
    build([Path(p).resolve() for p in sys.argv[1:]] or lesson_paths())
