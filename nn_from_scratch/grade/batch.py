"""A class at a time: the notebooks to grade, a slice of them, and N graded at once.

:func:`grade_paths` grades each notebook in its own kernel, ``jobs`` at a time,
and starts each worker's next kernel (with its imports warmed) while the
current notebook runs, so that a notebook no longer waits for its kernel.
Results come back in the order of :func:`notebooks_in`, whatever the order in
which they finish, so ``--jobs 4`` and ``--jobs 1`` report the same rows.
"""
import asyncio
import re
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from .._checks import InputError
from ..notebook_runner import DEFAULT_LIMITS, Kernel, Limits, in_thread
from .notebook import Prepared, prepare, run_prepared
from .release import RELEASE
from .results import Graded, Row

__all__ = ["grade_paths", "notebooks_in", "shard"]


def notebooks_in(paths: Iterable[str | Path]) -> list[Path]:
    """The ``.ipynb`` files named, or found (not recursively) in the folders named."""
    found: list[Path] = []
    for given in paths:
        path = Path(given)
        if path.is_dir():
            found.extend(sorted(path.glob("*.ipynb")))
        elif path.exists():
            found.append(path)
        else:
            raise InputError(f"{given}: no such file or folder.")
    if not found:
        raise InputError(f"no notebooks (.ipynb) in {', '.join(map(str, paths))}.")
    return found


def shard(notebooks: Sequence[Path], spec: str) -> list[Path]:
    """The K-th of N slices (``spec`` = ``"K/N"``, K from 1): stable, by file name."""
    match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", spec)
    if not match or not 1 <= int(match.group(1)) <= int(match.group(2)):
        raise InputError(f"--shard takes K/N with 1 <= K <= N, e.g. 2/8 for the second of "
                         f"eight slices; got {spec!r}.")
    k, n = int(match.group(1)), int(match.group(2))
    return sorted(notebooks, key=lambda p: (p.name, str(p)))[k - 1::n]


Report = Callable[[int, Graded], None]


async def _grade_all(notebooks: Sequence[Path], limits: Limits, jobs: int, release_dir: Path,
                     report: Report) -> list[Graded]:
    results: dict[int, Graded] = {}
    queue = iter(enumerate(notebooks))

    def finish(index: int, graded: Graded) -> None:
        results[index] = graded
        report(len(results), graded)

    def next_job() -> tuple[int, Prepared] | None:
        for index, path in queue:  # notebooks that cannot run need no kernel
            prepared = prepare(path, release_dir)
            if isinstance(prepared, Graded):
                finish(index, prepared)
            else:
                return index, prepared
        return None

    def start(job: tuple[int, Prepared] | None) -> "asyncio.Task[Kernel] | None":
        return asyncio.create_task(Kernel.start(job[1].path.parent)) if job else None

    async def worker() -> None:
        job = next_job()
        kernel = start(job)
        while job is not None and kernel is not None:
            following = next_job()
            upcoming = start(following)  # starts while this notebook runs
            index, prepared = job
            try:
                graded = await run_prepared(prepared, await kernel, limits)
            except Exception as err:  # a kernel that would not start, a full disk...
                graded = Graded(str(prepared.path), prepared.release.lesson, (Row(
                    None, "", "error", f"could not be run ({type(err).__name__}: {err})", 0.0,
                    0.0),))
            finish(index, graded)
            job, kernel = following, upcoming

    await asyncio.gather(*(worker() for _ in range(max(1, jobs))))
    return [results[i] for i in range(len(notebooks))]


def grade_paths(paths: Sequence[str | Path], limits: Limits = DEFAULT_LIMITS, *, jobs: int = 1,
                progress: bool = False, release_dir: Path = RELEASE) -> list[Graded]:
    """Grade every notebook in ``paths`` (files or folders), ``jobs`` at a time, in order.

    With ``progress``, one line per notebook on stderr as each finishes, and a last line
    with the count and the time.
    """
    notebooks = notebooks_in(paths)
    start = time.monotonic()

    def report(done: int, graded: Graded) -> None:
        if progress:
            row = graded.rows[0]
            what = graded.summary if row.exercise else f"{row.status}: {row.message}"
            took = sum(graded.seconds.values())
            print(f"[{done}/{len(notebooks)}] {graded.notebook}: {what}"
                  + (f" ({took:.1f} s)" if took else ""), file=sys.stderr, flush=True)

    graded = in_thread(lambda: _grade_all(notebooks, limits, jobs, release_dir, report))
    if progress:
        seconds = time.monotonic() - start
        print(f"graded {len(graded)} notebook{'s' * (len(graded) != 1)} in {seconds:.1f} s "
              f"({60 * len(graded) / seconds:.1f} a minute, {jobs} at a time)",
              file=sys.stderr, flush=True)
    return graded
