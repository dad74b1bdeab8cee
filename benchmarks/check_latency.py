"""How long does a student wait for a check? Every check of every lesson, right and wrong.

Each lesson runs in a fresh process, cell by cell, as a kernel runs it (the
runner of ``tools/mutants.py``). At each exercise the check is timed twice, as a
student meets it in a warm kernel: first with the lesson's solution (the check's
first call, compiles included), then with a typical wrong answer: the first
mutant of the solution that computes a wrong value, which the check rejects
with a hint (not one whose own code raises, which any check answers at once).
Lessons run one after another, never two at once, so that they do not compete
for the cores.

    .venv/bin/python benchmarks/check_latency.py                       # every lesson
    .venv/bin/python benchmarks/check_latency.py 07_mlp_from_scratch   # one

Prints one line per exercise, then the median, 95th percentile and maximum over
all of them (target on 2 cores: p95 <= 0.5 s, maximum <= 1 s).
"""
import argparse
import os
import platform
import statistics
import sys
from pathlib import Path

import jax
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
import mutants  # noqa: E402

import notebooks  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("lessons", nargs="*", help="lesson slugs (default: every lesson)")
    args = parser.parse_args()
    slugs = args.lessons or [p.stem for p in notebooks.lesson_paths()]
    print(f"Machine: {platform.machine()}, {os.cpu_count()} CPU cores, Python "
          f"{platform.python_version()}, JAX {jax.__version__} on CPU", flush=True)
    print(f"{'check':<44} {'solution':>9} {'wrong answer':>13}")
    right, wrong = [], []
    for slug in slugs:
        report = mutants.lesson_report(slug, first_wrong_only=True)
        for exercise in report["exercises"]:
            rejected = [m for m in exercise["mutants"] if m["status"] == "failed"
                        and mutants._a_wrong_value(m["message"])]
            right.append(exercise["seconds"])
            wrong_seconds = rejected[0]["seconds"] if rejected else float("nan")
            if rejected:
                wrong.append(wrong_seconds)
            label = f"{exercise['id']} ({exercise['status']})"
            hint = rejected[0]["message"][:60] if rejected else "no wrong answer rejected"
            print(f"{label:<44} {exercise['seconds']:8.3f}s {wrong_seconds:12.3f}s  {hint}",
                  flush=True)
    for name, times in (("solution", right), ("wrong answer", wrong), ("all", right + wrong)):
        print(f"{name:>12}: {len(times)} checks, median {statistics.median(times):.3f} s, "
              f"95th percentile {np.percentile(times, 95):.3f} s, max {max(times):.3f} s")


if __name__ == "__main__":
    main()
