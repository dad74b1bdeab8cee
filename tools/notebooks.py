"""Lessons -> notebooks, in two editions: the one pipeline that builds, executes and checks them.

Each lesson's single source is ``lessons/NN_slug.md`` (jupytext Markdown). Its
exercise cells (tagged ``exercise``) hold the solution and the stub together:

    def relu(x):
        # BEGIN SOLUTION
        return jnp.maximum(0, x)
        # END SOLUTION
        \"\"\" # BEGIN STUB
        # TODO: return max(0, x) elementwise (jnp.maximum does it).
        raise NotImplementedError
        \"\"\" # END STUB

The stub sits in a string, so the source itself runs as the solution. From it:

- ``notebooks/NN_slug.ipynb``, the full edition: solutions in place, markers and
  stubs removed, executed offline so it carries outputs and plots (every check ✓);
- ``student/NN_slug.ipynb``, the student edition: stubs in place of solutions,
  no outputs (every check says "not done yet" until the student works);
- ``nn_from_scratch/grade/release/NN_slug.json``, the student edition's manifest
  (cell ids, roles, sources, hashes) that the grader rebuilds submissions from.

Both editions carry the same stable cell ids, made from the lesson and each
cell's place (``07-ex4``, ``07-check4``, ``07-c012``), so that the grader finds a
submission's cells in the release.

    .venv/bin/python tools/notebooks.py                     # every lesson
    .venv/bin/python tools/notebooks.py lessons/04_jit.md   # just one
    .venv/bin/python tools/notebooks.py --release           # only the grader's manifests

The tests import these functions: they build both editions from each lesson,
execute them, and fail when a committed notebook differs from its lesson.
"""
import contextlib
import copy
import os
import platform
import re
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import jupytext
import nbformat

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from nn_from_scratch import notebook_runner  # noqa: E402
from nn_from_scratch.grade import release  # noqa: E402
from nn_from_scratch.grade.verdicts import check_results  # noqa: E402

LESSONS, NOTEBOOKS, STUDENT = ROOT / "lessons", ROOT / "notebooks", ROOT / "student"
LESSON_TIME_LIMIT = 300  # seconds for a whole lesson; a hung cell must not hang the suite
RAISES_TAG, EXERCISE_TAG, CHECK_TAG = release.RAISES_TAG, release.EXERCISE_TAG, release.CHECK_TAG
MARKERS = {  # marker line -> what follows it
    "BEGIN SOLUTION": "solution", "END SOLUTION": "code",
    "BEGIN STUB": "stub", "END STUB": "code",
}
_MARKER = re.compile(r'^\s*(?:"""\s*)?#\s*(BEGIN SOLUTION|END SOLUTION|BEGIN STUB|END STUB)\s*$')


def lesson_paths() -> list[Path]:
    """Every lesson source, in order: ``lessons/00_*.md``, ``lessons/01_*.md``, ..."""
    return sorted(LESSONS.glob("[0-9][0-9]_*.md"))


def notebook_path(lesson: Path, edition: str = "full") -> Path:
    return (NOTEBOOKS if edition == "full" else STUDENT) / (Path(lesson).stem + ".ipynb")


def _parts(source: str) -> list[tuple[str, str]]:
    """``(part, line)`` for every line of an exercise cell that is not a marker; part is
    "code" (in both editions), "solution" or "stub".

    Raises ``ValueError`` for markers out of order or a cell without both parts.
    """
    parts, part, seen = [], "code", set()
    for number, line in enumerate(source.splitlines(), 1):
        marker = _MARKER.match(line)
        if marker:
            name = marker.group(1)
            opening = name.startswith("BEGIN")
            closes_the_open_part = not opening and MARKERS[f"BEGIN {name[4:]}"] == part
            if (part == "code") != opening or (not opening and not closes_the_open_part):
                raise ValueError(f"line {number}: '{name}' is out of order")
            part = MARKERS[name]
            if opening:
                seen.add(part)
            continue
        parts.append((part, line))
    if part != "code" or not {"solution", "stub"} <= seen:
        raise ValueError("an exercise cell needs a closed BEGIN/END SOLUTION block and a closed "
                         "\"\"\" # BEGIN STUB ... \"\"\" # END STUB block")
    return parts


def split_exercise(source: str) -> tuple[str, str]:
    """An exercise cell's source -> ``(full, student)``: solution only, and stub only.

    Raises ``ValueError`` for markers out of order or a cell without both parts.
    """
    parts = _parts(source)
    full = "\n".join(line for part, line in parts if part in ("code", "solution"))
    student = "\n".join(line for part, line in parts if part in ("code", "stub"))
    return full.strip(), student.strip()


def solution_lines(source: str) -> set[int]:
    """The line numbers (1-based) of the solution in the full edition of an exercise cell."""
    full = [(part, line) for part, line in _parts(source) if part in ("code", "solution")]
    leading = next((i for i, (_, line) in enumerate(full) if line.strip()), 0)  # strip() drops
    return {i - leading + 1 for i, (part, _) in enumerate(full) if part == "solution"}


def editions(lesson: Path) -> tuple[nbformat.NotebookNode, nbformat.NotebookNode]:
    """The lesson's two unexecuted notebooks: ``(full, student)``, with stable cell ids."""
    full = jupytext.read(lesson, fmt="md")
    full.metadata.pop("jupytext", None)  # the pairing lives here, not in every notebook
    student = copy.deepcopy(full)
    for nb, edition in ((full, "full"), (student, "student")):
        nb.metadata["nn_from_scratch"] = {"lesson": Path(lesson).stem, "edition": edition}
    for full_cell, student_cell in zip(full.cells, student.cells):
        if EXERCISE_TAG in full_cell.metadata.get("tags", []):
            try:
                full_cell.source, student_cell.source = split_exercise(full_cell.source)
            except ValueError as err:
                raise ValueError(f"{Path(lesson).name}: exercise cell "
                                 f"{full_cell.source.splitlines()[:1]}: {err}") from None
    for nb in (full, student):
        release.assign_ids(nb, Path(lesson).stem)
    return full, student


def cell_sources(nb: nbformat.NotebookNode) -> list[tuple[str, str, list[str]]]:
    """What must match between a lesson and its notebook: each cell's type, source and tags."""
    return [(c.cell_type, c.source.strip(), sorted(c.metadata.get("tags", []))) for c in nb.cells]


# A compile time used in the lesson's code, not only printed in an f-string ({h.compile_time:.2f}):
# the lessons whose subject is how long a compile takes (04, 05, 06, 09, 10).
TIMES_A_COMPILE = re.compile(r"\bcompile_time\(|clear_caches|compare_jit|\.compile_time\b(?!:)")
COMPILE_CACHE = "NN_FROM_SCRATCH_COMPILE_CACHE"  # set by tests/conftest.py, for the suite only
# Every compile of a tenth of a second or more is kept (JAX's default keeps those of 1 s); the
# mutants' many small ones are not, and cost nothing but a look-up.
CACHE_LIMITS = {"JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0.1",
                "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "0"}


@contextlib.contextmanager
def compilation_cache(*nbs: nbformat.NotebookNode) -> Iterator[None]:
    """The kernels started inside share the test run's folder of compiled programs
    (JAX's persistent compilation cache, in the folder ``$NN_FROM_SCRATCH_COMPILE_CACHE``):
    the suite executes a lesson in several editions (the full one; the student one, with the
    mutation test; the student one in JupyterLab), and each compiles the same training steps.
    Only the XLA compile is saved; every cell still runs, traced, in a fresh kernel. Not for a
    lesson that times a compile (:data:`TIMES_A_COMPILE`; with several notebooks, none may),
    where a cached compile would look free, nor outside the suite: the committed notebooks'
    outputs never come from it."""
    folder = os.environ.get(COMPILE_CACHE)
    code = "\n".join(c.source for nb in nbs for c in nb.cells if c.cell_type == "code")
    if not folder or TIMES_A_COMPILE.search(code):
        yield
        return
    settings = {"JAX_COMPILATION_CACHE_DIR": folder, **CACHE_LIMITS}
    saved = {key: os.environ.get(key) for key in settings}
    os.environ.update(settings)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def execute(nb: nbformat.NotebookNode, time_limit: float = LESSON_TIME_LIMIT) -> float:
    """Execute ``nb`` top to bottom in a fresh kernel, in ``notebooks/``; return seconds taken.

    Raises ``AssertionError`` naming the cell when a cell raised that is not
    tagged ``raises-exception``, when such a cell did not raise, or when a cell
    ran out of time.
    """
    start = time.perf_counter()
    with compilation_cache(nb):
        runs = notebook_runner.execute(nb, timeout=time_limit, cell_timeout=time_limit,
                                       cwd=NOTEBOOKS)
    seconds = time.perf_counter() - start
    for run in runs:
        cell = nb.cells[run.index]
        meant_to_raise = RAISES_TAG in cell.metadata.get("tags", [])
        if (run.status == "error") != meant_to_raise or run.status == "timed out":
            what = (f"is tagged {RAISES_TAG} but did not raise"
                    if meant_to_raise and run.status == "ok" else f"{run.status}: {run.error}")
            raise AssertionError(f"cell {run.index} {what}\n--- its source:\n{cell.source}")
    return seconds


def build(lessons: list[Path]) -> None:
    """Regenerate both editions of ``lessons``; execute the full one; print each one's time."""
    import jax

    NOTEBOOKS.mkdir(exist_ok=True)
    STUDENT.mkdir(exist_ok=True)
    for lesson in lessons:
        full, student = editions(lesson)
        seconds = execute(full)
        failed = {i: r for i, r in check_results(full).items() if r["status"] != "passed"}
        if failed:
            raise AssertionError(f"{lesson.name}: checks that fail on the solutions: {failed}")
        full.metadata["nn_from_scratch"]["executed"] = {
            "seconds": round(seconds, 1), "python": platform.python_version(),
            "jax": jax.__version__, "cpu_cores": os.cpu_count()}
        nbformat.write(full, notebook_path(lesson))
        nbformat.write(student, notebook_path(lesson, "student"))
        written = [notebook_path(lesson, e).relative_to(ROOT) for e in ("full", "student")]
        written.append(release.write_manifest(student, lesson.stem).relative_to(ROOT))
        print(f"{lesson.name}: executed in {seconds:.1f} s -> {', '.join(map(str, written))}")


def write_release(lesson: Path, folder: Path = release.RELEASE) -> Path:
    """Write the grader's manifest of ``lesson``'s student edition (no executing needed)."""
    return release.write_manifest(editions(lesson)[1], Path(lesson).stem, folder)


if __name__ == "__main__":
    arguments = [a for a in sys.argv[1:] if a != "--release"]
    chosen = [Path(p).resolve() for p in arguments] or lesson_paths()
    if "--release" in sys.argv[1:]:
        for path in chosen:
            print(f"{path.name} -> {write_release(path).relative_to(ROOT)}")
    else:
        build(chosen)
