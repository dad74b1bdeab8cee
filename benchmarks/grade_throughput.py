"""How many notebooks a minute does the grader get through, with and without its sandbox, one and
two at a time?

A class-sized folder of lesson 07 submissions (half the solutions, half the untouched student
edition, made from lessons/ now) is graded four ways, ``--jobs 1`` and ``--jobs 2``, each with
the sandbox and with ``--no-sandbox``, in INTERLEAVED ROUNDS (the four settings one after
another, then again), because a shared machine's speed drifts by the minute: each ratio is
computed within one round, and the median over rounds is reported with its range. For each
setting it prints notebooks per minute and the time of one notebook split into:

  kernel   starting its kernel (in its sandbox) and importing what lessons import first (with
           a worker's next kernel started while the current notebook runs, this mostly overlaps)
  lesson   the lesson's own cells and the student's exercise cells
  checks   the grader's check cells (checkers loaded afresh for each)

and the two ratios the grader is held to: what the sandbox costs per notebook (seconds per
notebook with it / without it, at the same --jobs), and --jobs 2 / --jobs 1 in the sandbox.

    .venv/bin/python benchmarks/grade_throughput.py                       # 40 notebooks, 1 round
    .venv/bin/python benchmarks/grade_throughput.py --copies 8 --rounds 3 # steadier on a busy box

``--against DIR`` compares this grader with another checkout of the repository instead (an older
commit, say, in a ``git worktree``): in each round, ``--jobs 1`` and ``--jobs 2`` in the sandbox,
each grader grades a class made from its own lessons, in a process of its own (the same code
starts both), in turn, the order swapped every round; it prints seconds per notebook and per
exercise for each, and this grader's time over the other's.

    git worktree add --detach /tmp/then <commit>
    .venv/bin/python benchmarks/grade_throughput.py --against /tmp/then --copies 8 --rounds 3
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

from nn_from_scratch.grade import grade_paths
from nn_from_scratch.notebook_runner import Limits

# The checkout whose lessons make the class: this one, or with --one, the one being measured
# (the package imported is the one on PYTHONPATH, which --against sets to it).
ROOT = Path(os.environ.get("GRADE_THROUGHPUT_CHECKOUT", Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(ROOT / "tools"))
import notebooks  # noqa: E402

LESSON = ROOT / "lessons" / "07_mlp_from_scratch.md"
SETTINGS = [(1, True), (1, False), (2, True), (2, False)]  # (jobs, sandbox)


def make_class(folder: Path, copies: int) -> None:
    """``copies`` submissions of lesson 07: even ones the solutions, odd ones all stubs."""
    solution, stubs = notebooks.editions(LESSON)
    for i in range(copies):
        nbformat.write(solution if i % 2 == 0 else stubs, folder / f"student{i:03d}.ipynb")


def grade_round(folder: Path, jobs: int, sandbox: bool) -> tuple[float, dict[str, float], int]:
    """(notebooks per minute, mean seconds per notebook by part, notebooks all passed)."""
    start = time.monotonic()
    graded = grade_paths([folder], Limits(memory=4 * 2**30), jobs=jobs, sandbox=sandbox)
    seconds = time.monotonic() - start
    parts = {part: statistics.mean(g.seconds.get(part, 0.0) for g in graded)
             for part in ("kernel", "lesson", "checks")}
    passed = sum(all(r.status == "passed" for r in g.rows) for g in graded)
    return 60 * len(graded) / seconds, parts, passed


def name(jobs: int, sandbox: bool) -> str:
    return f"--jobs {jobs}{'' if sandbox else ' --no-sandbox'}"


def spread(values: list[float]) -> str:
    return (f"{statistics.median(values):.2f}x (range {min(values):.2f}-{max(values):.2f} over "
            f"{len(values)} round(s))")


def one_grading(copies: int, jobs: int) -> None:
    """--one: grade a class of ``copies`` in the sandbox, ``jobs`` at a time, with the package
    on PYTHONPATH and ROOT's lessons; print what --against reads, as one JSON line."""
    with tempfile.TemporaryDirectory() as tmp:
        make_class(Path(tmp), copies)
        start = time.monotonic()
        graded = grade_paths([Path(tmp)], Limits(memory=4 * 2**30), jobs=jobs)
        seconds = time.monotonic() - start
    rows = [r for g in graded for r in g.rows]
    print(json.dumps({"seconds": seconds, "notebooks": len(graded), "exercises": len(rows),
                      "passed": sum(r.status == "passed" for r in rows)}))


def against(other: Path, copies: int, rounds: int) -> None:
    """This grader and ``other``'s, side by side (see the module's docstring)."""
    here = ROOT
    times: dict[tuple[Path, int], list[float]] = {}
    ratios: dict[int, list[float]] = {1: [], 2: []}
    loads = []
    for round_ in range(rounds):
        for jobs in (1, 2):
            order = [here, other] if round_ % 2 == 0 else [other, here]
            per_notebook = {}
            for checkout in order:
                env = {**os.environ, "PYTHONPATH": str(checkout),
                       "GRADE_THROUGHPUT_CHECKOUT": str(checkout)}
                out = subprocess.run(
                    [sys.executable, __file__, "--one", str(jobs), "--copies", str(copies)],
                    env=env, cwd=checkout, capture_output=True, text=True, check=True)
                result = json.loads(out.stdout.strip().splitlines()[-1])
                per_notebook[checkout] = result["seconds"] / result["notebooks"]
                times.setdefault((checkout, jobs), []).append(per_notebook[checkout])
                loads.append(os.getloadavg()[0])
                print(f"round {round_ + 1}, --jobs {jobs}, {checkout}: "
                      f"{per_notebook[checkout]:.2f} s a notebook, {result['exercises']} "
                      f"exercises, {result['passed']} passed (load {loads[-1]:.2f})", flush=True)
            ratios[jobs].append(per_notebook[here] / per_notebook[other])
    print(f"\n{copies} notebooks of lesson 07 (each checkout's own), {rounds} round(s); load "
          f"average {min(loads):.2f}-{max(loads):.2f} after each grading")
    for jobs in (1, 2):
        print(f"--jobs {jobs}: this grader {statistics.median(times[here, jobs]):.2f} s a "
              f"notebook, the other {statistics.median(times[other, jobs]):.2f} s; this / the "
              f"other: {spread(ratios[jobs])}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=40, help="notebooks in the class folder")
    parser.add_argument("--rounds", type=int, default=1, help="interleaved rounds of each")
    parser.add_argument("--against", type=Path, metavar="DIR",
                        help="another checkout of this repository: compare with its grader")
    parser.add_argument("--one", type=int, metavar="JOBS", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        one_grading(args.copies, args.one)
        return
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}; load average {os.getloadavg()[0]:.2f} at the start")
    if args.against:
        if not (args.against / "nn_from_scratch" / "grade").is_dir():
            parser.error(f"--against {args.against}: no nn_from_scratch/grade there; give a "
                         f"checkout of this repository (git worktree add --detach DIR COMMIT)")
        against(args.against.resolve(), args.copies, args.rounds)
        return
    rates: dict[tuple[int, bool], list[float]] = {s: [] for s in SETTINGS}
    parts: dict[tuple[int, bool], list[dict[str, float]]] = {s: [] for s in SETTINGS}
    loads = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        make_class(folder, args.copies)
        for round_ in range(args.rounds):
            for setting in SETTINGS:
                rate, split, passed = grade_round(folder, *setting)
                rates[setting].append(rate)
                parts[setting].append(split)
                loads.append(os.getloadavg()[0])
                print(f"round {round_ + 1}, {name(*setting)}: {rate:.1f} notebooks/min "
                      f"({passed} of {args.copies} passed everything; load {loads[-1]:.2f})",
                      flush=True)
    print(f"\n{args.copies} notebooks of lesson 07, {args.rounds} round(s); load average "
          f"{min(loads):.2f}-{max(loads):.2f} after each setting")
    print(f"{'':24} {'notebooks/min':>14} {'kernel s':>9} {'lesson s':>9} {'checks s':>9}")
    for setting in SETTINGS:
        split = {p: statistics.median(s[p] for s in parts[setting]) for p in parts[setting][0]}
        print(f"{name(*setting):24} {statistics.median(rates[setting]):14.1f} "
              f"{split['kernel']:9.2f} {split['lesson']:9.2f} {split['checks']:9.2f}")
    for jobs in (1, 2):  # seconds per notebook is 1 / rate: with / without = without / with
        costs = [plain / boxed for boxed, plain in zip(rates[jobs, True], rates[jobs, False])]
        print(f"the sandbox's cost per notebook at --jobs {jobs}: {spread(costs)}")
    scaling = [two / one for one, two in zip(rates[1, True], rates[2, True])]
    print(f"--jobs 2 / --jobs 1, in the sandbox: {spread(scaling)}")


if __name__ == "__main__":
    main()
