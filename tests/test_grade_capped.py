"""Reading a submission within caps (grade/capped.py): cells, nesting and source, each refused
with one line before nbformat or the rebuild walks the notebook; the lessons read as before."""
import json
import time
from pathlib import Path

import nbformat
import pytest

from nn_from_scratch.grade.capped import (
    MAX_CELLS,
    MAX_DEPTH,
    MAX_SOURCE,
    MAX_VALUES,
    Unreadable,
    read_notebook,
)

ROOT = Path(__file__).resolve().parent.parent


def markdown_flood(megabytes=22):
    """Issue 35's attack: 22 MB of tiny Markdown cells, which held the grader's loop for 95 s."""
    cell = {"cell_type": "markdown", "metadata": {}, "source": "x"}
    count = megabytes * 2**20 // len(json.dumps(cell))
    return json.dumps({"cells": [cell] * count, "metadata": {}, "nbformat": 4,
                       "nbformat_minor": 5})


def test_every_lesson_notebook_is_read_as_before():
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        content = path.read_bytes()
        assert read_notebook(content) == nbformat.reads(content.decode(), as_version=4), path


def test_tiny_markdown_cells_by_the_megabyte_are_refused_at_once():
    raw = markdown_flood().encode()
    start = time.perf_counter()
    with pytest.raises(Unreadable, match=f"JSON values, and the grader reads at most "
                                         f"{MAX_VALUES:,}"):
        read_notebook(raw)
    assert time.perf_counter() - start < 0.5  # counted, never parsed (parsing took 6 s here)
    cells = json.loads(markdown_flood(1))
    cells["cells"] = cells["cells"][:MAX_CELLS + 1]  # few values, but more cells than a lesson
    with pytest.raises(Unreadable, match=f"cells, and the grader reads at most {MAX_CELLS:,}"):
        read_notebook(json.dumps(cells))


def test_deep_nesting_and_too_much_source_are_refused_with_one_line():
    deep = nbformat.v4.new_notebook()
    nested: dict = {}
    for _ in range(MAX_DEPTH + 1):
        nested = {"y": nested}
    deep.metadata["x"] = nested
    with pytest.raises(Unreadable, match=f"nests more than {MAX_DEPTH} levels"):
        read_notebook(json.dumps(deep))
    wordy = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1\n" * 2000)
                                            for _ in range(MAX_SOURCE // 12_000 + 1)])
    with pytest.raises(Unreadable, match="characters of code and text") as refused:
        read_notebook(nbformat.writes(wordy))
    assert "\n" not in str(refused.value)
    with pytest.raises(Unreadable, match="not a readable notebook"):
        read_notebook(b"\xff\xfe not utf-8")
    with pytest.raises(Unreadable, match="not a readable notebook .RecursionError"):
        read_notebook("[" * 100_000 + "]" * 100_000)


def test_a_notebook_with_duplicate_cell_ids_is_read_without_a_word_on_the_graders_stderr():
    """Red team, round fourteen: nbformat's warnings about a submission's duplicate cell ids
    were printed raw among the grader's progress lines (the rebuild's notes say what it made
    of them)."""
    import warnings

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1"),
                                         nbformat.v4.new_code_cell("2")])
    nb.cells[1].id = nb.cells[0].id
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        read = read_notebook(json.dumps(nb).encode())
    assert [cell.source for cell in read.cells] == ["1", "2"]
