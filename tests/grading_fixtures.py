"""Small hand-made releases and submissions for the grader's tests (a real lesson's checkers,
a few of its exercises: each notebook runs in seconds, not the whole lesson)."""
import nbformat

from nn_from_scratch.grade.release import assign_ids, write_manifest

LESSON = "07_mlp_from_scratch"
IMPORTS = ("import jax\nimport jax.numpy as jnp\n"
           "from nn_from_scratch.exercises import mlp_from_scratch as check")
STUBS = {  # checker name -> the stub of its exercise cell
    "relu": "def relu(x):\n    raise NotImplementedError",
    "random_layer_params": "def random_layer_params(m, n, key, scale=1e-2):\n"
                           "    raise NotImplementedError",
    "init_network_params": "def init_network_params(sizes, key):\n    raise NotImplementedError",
}


def notebook(*cells, lesson=LESSON, imports=True):
    """A notebook of (tag, source) code cells, after an imports cell."""
    nb = nbformat.v4.new_notebook()
    if lesson:
        nb.metadata["nn_from_scratch"] = {"lesson": lesson, "edition": "student"}
    for tag, source in ((("", IMPORTS),) if imports else ()) + cells:
        cell = nbformat.v4.new_code_cell(source)
        cell.metadata["tags"] = [tag] if tag else []
        nb.cells.append(cell)
    return nb


def small_release(folder):
    """A release of three of lesson 07's exercises in ``folder``; returns the folder."""
    cells = []
    for name, stub in STUBS.items():
        cells += [("exercise", stub), ("check", f"check.{name}({name})")]
    student = notebook(*cells)
    assign_ids(student, LESSON)
    write_manifest(student, LESSON, folder)
    return folder
