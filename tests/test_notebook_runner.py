"""Running a notebook's cells: what the grader's quiet cells leave behind."""

import nbformat

from nn_from_scratch.notebook_runner import execute


def test_a_quiet_cell_runs_but_leaves_nothing_in_the_kernels_history(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source) for source in (
        "visible = 1",
        "hidden_token = 'abc123'",  # run quietly, as the grader's cells are
        "print(hidden_token, any('abc123' in text for text in In[:-1]), 'abc123' in _i)",
    )]
    runs = execute(nb, timeout=60, cell_timeout=30, cwd=tmp_path, quiet={1})
    assert [run.status for run in runs] == ["ok", "ok", "ok"]
    assert nb.cells[2].outputs[0]["text"] == "abc123 False False\n"
    assert nb.cells[0].execution_count == 1 and nb.cells[2].execution_count == 2
