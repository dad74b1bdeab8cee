"""README's optimizer table: ``train`` for each model x optimizer x seed, test accuracy and time.

Each row is a whole command, ``python -m nn_from_scratch train --model M --optimizer O
--seed S --dataset mnist-5k`` (start-up included, as the README's times are), with the
defaults ``train`` has for that model and optimizer unless the row adds options. It prints
one line per run as it finishes and then the table: per row, the test accuracy of each seed,
their median and the whole command's time (range). Accuracy does not depend on the machine's
load; time does, so the table says the load average it ran at (``os.getloadavg``).

    .venv/bin/python benchmarks/optimizer_table.py                      # the README's rows
    .venv/bin/python benchmarks/optimizer_table.py --rows "transformer adamw" --seeds 0 1
    .venv/bin/python benchmarks/optimizer_table.py \\
        --rows "transformer adamw --step-size 2e-3 --warmup 5" --jobs 4   # settings tried

``--jobs N`` runs N commands at once, each pinned to its own ``--cores-per-job`` cores
(Linux ``taskset``): for trying settings on a big machine. Times are only comparable between
runs made the same way; measure the README's times with ``--jobs 1`` on a quiet machine.
"""
import argparse
import os
import platform
import re
import shlex
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from queue import Queue

ROWS = ("mlp sgd", "mlp adam", "cnn sgd", "cnn adam", "transformer sgd", "transformer adamw")
DONE = re.compile(r"Done: validation accuracy (0\.\d+), test accuracy (0\.\d+)")


def run(row: str, seed: int, dataset: str, cores: "Queue[str] | None") -> tuple[float, float]:
    """One ``train`` command: ``(test accuracy, seconds for the whole command)``."""
    model, optimizer, *options = shlex.split(row)
    command = [sys.executable, "-m", "nn_from_scratch", "train", "--model", model,
               "--optimizer", optimizer, "--dataset", dataset, "--seed", str(seed), *options]
    slot = cores.get() if cores else None
    try:
        start = time.perf_counter()
        result = subprocess.run((["taskset", "-c", slot] if slot else []) + command,
                                capture_output=True, text=True)
        seconds = time.perf_counter() - start
    finally:
        if slot:
            cores.put(slot)  # type: ignore[union-attr]
    found = DONE.search(result.stdout)
    if result.returncode or not found:
        raise RuntimeError(f"{shlex.join(command)} failed:\n{result.stdout[-2000:]}"
                           f"{result.stderr[-2000:]}")
    print(f"{row} seed {seed}: test {found.group(2)} in {seconds:.1f} s", flush=True)
    return float(found.group(2)), seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", nargs="+", default=list(ROWS),
                        help="'MODEL OPTIMIZER [train options]' per row")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--dataset", default="mnist-5k")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--cores-per-job", type=int, default=2)
    args = parser.parse_args()
    cores: Queue[str] | None = None
    if args.jobs > 1:
        cores = Queue()
        for j in range(args.jobs):
            first = j * args.cores_per_job
            cores.put(f"{first}-{first + args.cores_per_job - 1}")
    loads = [os.getloadavg()[0]]
    runs = [(row, seed) for seed in args.seeds for row in args.rows]  # rows interleaved
    with ThreadPoolExecutor(args.jobs) as pool:
        results = dict(zip(runs, pool.map(lambda r: run(*r, args.dataset, cores), runs)))
    loads.append(os.getloadavg()[0])
    print(f"\n{args.dataset}, seeds {', '.join(map(str, args.seeds))}; {platform.machine()}, "
          f"{os.cpu_count()} cores, Python {platform.python_version()}, {args.jobs} job(s) "
          f"at once; load average {min(loads):.1f}-{max(loads):.1f} (start, end)\n")
    print("| model | optimizer (options) | test accuracy per seed | median | whole command |")
    print("|---|---|---|---|---|")
    for row in args.rows:
        accuracies = [results[row, seed][0] for seed in args.seeds]
        times = [results[row, seed][1] for seed in args.seeds]
        model, rest = row.split(" ", 1)
        print(f"| {model} | {rest} | {', '.join(f'{a:.3f}' for a in accuracies)} | "
              f"**{statistics.median(accuracies):.3f}** | {min(times):.0f}-{max(times):.0f} s |")


if __name__ == "__main__":
    main()
