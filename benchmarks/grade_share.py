"""Does a notebook that starts many busy loops, or floods the grader with tiny displays, slow a
classmate graded beside it?

Issue 35's attacks: one submission of lesson 03 starts LOOPS busy loops, each in a session of its
own (``setsid``, refused in the fallback), for as long as the classmate takes (``--attack
loops``), or sends DISPLAYS tiny displays from one cell (``--attack displays``: messages the
event loop that all jobs share must read, past the cell's first 1,000 at the runner's own pace,
``cell_outputs.PACE``; red team round five), or holds code that is slow to read before
anything runs (``--attack reading``: red team round twelve, now read in a process); an honest
classmate (the lesson's solutions) is graded beside it with ``--jobs 2``. For each way the grader
can share the machine (a cgroup per sandbox where it can make one, else the fallback: seccomp
refusing ``setsid``, the session scheduled as one) it prints the classmate's time alone, beside an
honest neighbour (a second copy of the solutions: what sharing the machine with ``--jobs 2`` costs
anyway) and beside the attack, side by side in one run, and the attack's ratio to each (the
grader's target: under 1.5x), with the machine's load. Speed is measured here, never asserted in
the tests (the red-team test only checks that the classmate keeps its score).

    .venv/bin/python benchmarks/grade_share.py              # 100 loops, both modes
    .venv/bin/python benchmarks/grade_share.py --loops 20 --rounds 2
    .venv/bin/python benchmarks/grade_share.py --attack displays   # 60,000 tiny displays
    .venv/bin/python benchmarks/grade_share.py --attack reading    # 5,000 helpers, slow to read
"""
import argparse
import copy
import os
import platform
import sys
import tempfile
from pathlib import Path
from unittest import mock

import nbformat

from nn_from_scratch import cgroups
from nn_from_scratch.grade import grade_paths
from nn_from_scratch.notebook_runner import Limits

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import notebooks  # noqa: E402

LESSON = ROOT / "lessons" / "03_autodiff_from_scratch.md"


def busy_loops(student: nbformat.NotebookNode, loops: int, seconds: int) -> nbformat.NotebookNode:
    """The student edition whose first exercise cell starts ``loops`` busy loops, each trying
    to leave for a session of its own, and waits ``seconds`` for them."""
    nb = copy.deepcopy(student)
    loop = (f"import os, time\ntry:\n    os.setsid()\nexcept OSError:\n    pass\n"
            f"end = time.time() + {seconds}\nwhile time.time() < end:\n    pass")
    cell = next(c for c in nb.cells if "exercise" in c.metadata.get("tags", []))
    cell.source += (f"\nimport subprocess, sys, time\nfor _ in range({loops}):\n"
                    f"    subprocess.Popen([sys.executable, '-S', '-c', {loop!r}])\n"
                    f"time.sleep({seconds})\n")
    return nb


def tiny_displays(student: nbformat.NotebookNode, displays: int) -> nbformat.NotebookNode:
    """The student edition whose first exercise cell sends ``displays`` tiny displays, as fast
    as the kernel can (red team round five's flood)."""
    nb = copy.deepcopy(student)
    cell = next(c for c in nb.cells if "exercise" in c.metadata.get("tags", []))
    cell.source += (f"\nfrom IPython.display import display as _d\nfor _i in range({displays}):\n"
                    f"    _d({{'text/plain': '.'}}, raw=True)\n")
    return nb


def slow_to_read(student: nbformat.NotebookNode, helpers: int) -> nbformat.NotebookNode:
    """The student edition whose first exercise cell defines ``helpers`` one-line functions and
    binds twice as many names, every exercise cell naming every helper (red team round twelve:
    code that is slow for the grader to read before anything runs)."""
    nb = copy.deepcopy(student)
    names = ";".join(f"f{i}" for i in range(helpers))
    first = "\n".join(f"def f{i}():0" for i in range(helpers)) + "\n" + "=".join(
        f"b{i}" for i in range(2 * helpers)) + "=0\n"
    for number, cell in enumerate(c for c in nb.cells if "exercise" in c.metadata.get("tags", [])):
        cell.source += ("\n" + (first if number == 0 else "")
                        + f"\ndef _uses_every_helper():\n    {names}\n")
    return nb


def seconds_of(graded) -> float:
    return graded.seconds["lesson"] + graded.seconds["checks"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--loops", type=int, default=100)
    parser.add_argument("--seconds", type=int, default=40, help="how long the loops run")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--attack", choices=("loops", "displays", "reading"), default="loops")
    parser.add_argument("--displays", type=int, default=60_000)
    parser.add_argument("--helpers", type=int, default=5_000, help="for --attack reading")
    args = parser.parse_args()
    solution, student = notebooks.editions(LESSON)
    limits = Limits(memory=2 * 2**30, cell_timeout=120, timeout=300)
    modes = (["cgroup"] if cgroups.hierarchy() is not None else []) + ["fallback"]
    print(f"{platform.node()}: {os.cpu_count()} cores, Python {platform.python_version()}; "
          + {"loops": f"{args.loops} busy loops for {args.seconds} s",
             "displays": f"{args.displays:,} tiny displays",
             "reading": f"{args.helpers:,} helpers named by every exercise"}[args.attack]
          + f"; load before: {os.getloadavg()[0]:.2f}")
    print(f"{'mode':<10}{'round':>6}{'alone':>9}{'honest':>9}{'attack':>9}"
          f"{'/alone':>8}{'/honest':>8}  classmate's points")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        attack = {"loops": lambda: busy_loops(student, args.loops, args.seconds),
                  "displays": lambda: tiny_displays(student, args.displays),
                  "reading": lambda: slow_to_read(student, args.helpers)}[args.attack]()
        nbformat.write(attack, folder / "a_attack.ipynb")
        nbformat.write(solution, folder / "b_honest.ipynb")
        nbformat.write(solution, folder / "a_neighbour.ipynb")
        for r in range(args.rounds):
            for mode in modes:  # interleaved: each ratio within one round
                found = cgroups.hierarchy if mode == "cgroup" else (lambda root=None: None)
                with mock.patch.object(cgroups, "hierarchy", found):
                    alone = seconds_of(grade_paths([folder / "b_honest.ipynb"], limits)[0])
                    paired = {}
                    for first in ("a_neighbour", "a_attack"):
                        graded = {Path(g.notebook).stem: g for g in grade_paths(
                            [folder / f"{first}.ipynb", folder / "b_honest.ipynb"], limits,
                            jobs=2)}
                        paired[first] = graded["b_honest"]
                honest, attacked = (seconds_of(paired[k]) for k in ("a_neighbour", "a_attack"))
                classmate = paired["a_attack"]
                print(f"{mode:<10}{r + 1:>6}{alone:>8.1f}s{honest:>8.1f}s{attacked:>8.1f}s"
                      f"{attacked / alone:>7.2f}x{attacked / honest:>7.2f}x  "
                      f"{sum(row.points for row in classmate.rows)} of {len(classmate.rows)}")
    print(f"load after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
