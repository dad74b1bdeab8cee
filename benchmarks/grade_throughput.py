"""How many notebooks a minute does the grader get through, one at a time and two at a time?

A class-sized folder of lesson 07 submissions (half the solutions, half the untouched student
edition, made from lessons/ now) is graded with ``--jobs 1`` and ``--jobs 2`` in INTERLEAVED
ROUNDS (jobs 1, jobs 2, jobs 1, ...), because a shared machine's speed drifts by the minute:
each ratio is computed within one round, and the median over rounds is reported with its range.
For each setting it prints notebooks per minute and the time of one notebook split into:

  kernel   starting its kernel and importing what lessons import first (with a worker's next
           kernel started while the current notebook runs, this mostly overlaps other work)
  lesson   the lesson's own cells and the student's exercise cells
  checks   the grader's check cells (checkers loaded afresh for each)

    .venv/bin/python benchmarks/grade_throughput.py                       # 40 notebooks, 1 round
    .venv/bin/python benchmarks/grade_throughput.py --copies 8 --rounds 3 # steadier on a busy box
"""
import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

import nbformat

from nn_from_scratch.grade import grade_paths
from nn_from_scratch.notebook_runner import Limits

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import notebooks  # noqa: E402

LESSON = ROOT / "lessons" / "07_mlp_from_scratch.md"


def make_class(folder: Path, copies: int) -> None:
    """``copies`` submissions of lesson 07: even ones the solutions, odd ones all stubs."""
    solution, stubs = notebooks.editions(LESSON)
    for i in range(copies):
        nbformat.write(solution if i % 2 == 0 else stubs, folder / f"student{i:03d}.ipynb")


def grade_round(folder: Path, jobs: int) -> tuple[float, dict[str, float], int]:
    """(notebooks per minute, mean seconds per notebook by part, notebooks all passed)."""
    start = time.monotonic()
    graded = grade_paths([folder], Limits(memory=4 * 2**30), jobs=jobs)
    seconds = time.monotonic() - start
    parts = {part: statistics.mean(g.seconds.get(part, 0.0) for g in graded)
             for part in ("kernel", "lesson", "checks")}
    passed = sum(all(r.status == "passed" for r in g.rows) for g in graded)
    return 60 * len(graded) / seconds, parts, passed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=40, help="notebooks in the class folder")
    parser.add_argument("--rounds", type=int, default=1, help="interleaved rounds of each")
    args = parser.parse_args()
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}; load average {os.getloadavg()[0]:.2f} at the start")
    rates: dict[int, list[float]] = {1: [], 2: []}
    parts: dict[int, list[dict[str, float]]] = {1: [], 2: []}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        make_class(folder, args.copies)
        for round_ in range(args.rounds):
            for jobs in (1, 2):
                rate, split, passed = grade_round(folder, jobs)
                rates[jobs].append(rate)
                parts[jobs].append(split)
                print(f"round {round_ + 1}, --jobs {jobs}: {rate:.1f} notebooks/min "
                      f"({passed} of {args.copies} passed everything)", flush=True)
    print(f"\n{args.copies} notebooks of lesson 07, {args.rounds} round(s); "
          f"load average {os.getloadavg()[0]:.2f} at the end")
    print(f"{'':9} {'notebooks/min':>14} {'kernel s':>9} {'lesson s':>9} {'checks s':>9}")
    for jobs in (1, 2):
        split = {p: statistics.median(s[p] for s in parts[jobs]) for p in parts[jobs][0]}
        print(f"--jobs {jobs}  {statistics.median(rates[jobs]):14.1f} {split['kernel']:9.1f} "
              f"{split['lesson']:9.1f} {split['checks']:9.1f}")
    ratios = [two / one for one, two in zip(rates[1], rates[2])]
    print(f"--jobs 2 / --jobs 1: {statistics.median(ratios):.2f}x "
          f"(range {min(ratios):.2f}-{max(ratios):.2f} over {len(ratios)} round(s))")


if __name__ == "__main__":
    main()
