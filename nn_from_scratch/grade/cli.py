"""``python -m nn_from_scratch grade``: its options, the checks on them, and the exports.

Every output path is checked before any notebook runs, so a long run is never
lost to a typo in ``--csv``: a missing or unwritable folder is one ``error:``
line and exit status 2 (the folder of ``--feedback DIR`` or ``--gradescope DIR``
itself is made when the folder it goes in exists), and so is a sandbox that
cannot start. Each export is written whole or not at all, and one that fails at
the end stops none of the others (exit status 2; the journal keeps every row for
``--resume``). The exit status is 0 when every exercise passed.
"""
import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path

from .._checks import InputError, check_writable_folder
from ..i18n import ENV as LANGUAGE_ENV
from ..memory_watch import format_bytes, parse_bytes
from ..notebook_runner import CELL_TIMEOUT, NOTEBOOK_TIMEOUT, Limits
from .assignment import lesson_named, one_copy
from .exports import (
    REPORT_SUFFIXES,
    export_names,
    format_table,
    write_atomic,
    write_csv,
    write_feedback,
    write_report,
)
from .lms import write_classroom, write_gradescope
from .results import Graded, load_json, merge, to_json

__all__ = ["add_arguments", "default_memory", "grade_command"]


def default_memory(jobs: int) -> int:
    """The memory cap per notebook: three quarters of the machine's memory, shared by ``jobs``."""
    import psutil

    return max(2**30, int(0.75 * psutil.virtual_memory().total / max(1, jobs)))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", metavar="PATH",
                        help="notebooks, or folders of them (e.g. a class's submissions); with "
                             "--merge, JSON files written by --json-file")
    parser.add_argument("--lesson", metavar="NN", help="the assignment's lesson, e.g. 03 (or "
                        "its id, 03_autodiff_from_scratch): a notebook of another lesson scores "
                        "nothing; needed with --classroom")
    limits = parser.add_argument_group("limits")
    limits.add_argument("--timeout", type=float, default=NOTEBOOK_TIMEOUT, metavar="SECONDS",
                        help="time limit for each whole notebook")
    limits.add_argument("--cell-timeout", type=float, default=CELL_TIMEOUT, metavar="SECONDS",
                        help="time limit for one cell; a cell past it is interrupted")
    limits.add_argument("--memory", metavar="SIZE", help="memory cap per notebook, e.g. 2G or "
                        "1500M (default: 3/4 of the machine's memory shared by the jobs)")
    limits.add_argument("--jobs", type=int, default=os.cpu_count() or 1, metavar="N",
                        help="notebooks graded at once, each in its own kernel (default: cores)")
    limits.add_argument("--shard", metavar="K/N", help="grade only the K-th of N slices of the "
                        "notebooks (stable, by file name), e.g. one task of a Slurm array")
    limits.add_argument("--no-sandbox", action="store_true",
                        help="run each notebook with your own rights, not in a sandbox of its "
                             "own (only where the sandbox cannot start: every report says so)")
    out = parser.add_argument_group("results")
    out.add_argument("--lang", choices=("en", "zh"), default="en",
                     help="the language of every check's result and hint in the reports: en, "
                          "or zh for Chinese (English and Chinese submissions alike)")
    out.add_argument("--json", action="store_true", help="print the results as JSON")
    out.add_argument("--json-file", metavar="FILE", help="also write the JSON here (for --merge)")
    out.add_argument("--merge", action="store_true", help="PATHs are --json-file results of "
                     "earlier runs (e.g. shards): merge them, grade nothing")
    out.add_argument("--resume", action="store_true", help="keep every notebook that the last "
                     "run of the same command graded (its journal), and grade only the rest")
    out.add_argument("--csv", metavar="FILE", help="one row per notebook: points per exercise, "
                     "total, notes")
    out.add_argument("--gradescope", metavar="DIR|FILE.json", help="Gradescope results.json "
                     "per notebook in DIR, or FILE.json for a single submission")
    out.add_argument("--feedback", metavar="DIR", help="a Markdown file per notebook for its "
                     "student")
    out.add_argument("--classroom", metavar="FILE", help="append GitHub Classroom's result= "
                     "line to FILE (in a workflow: $GITHUB_OUTPUT)")
    out.add_argument("--report", metavar="FILE.html|FILE.md", help="what the class got wrong, "
                     "lesson by lesson: the exercises to revisit and the mistakes behind them; "
                     "one self-contained page (or Markdown), in the --lang language")


def check_outputs(args: argparse.Namespace) -> None:
    """Refuse, before any grading, an output that could not be written afterwards."""
    if args.report and Path(args.report).suffix.lower() not in REPORT_SUFFIXES:
        raise InputError(f"--report {args.report}: the report is a page or Markdown, named "
                         f"FILE.html or FILE.md; got a name ending in "
                         f"{Path(args.report).suffix or 'nothing'}. Rename it, e.g. "
                         f"--report {Path(args.report).with_suffix('.html')}.")
    for option, value in (("--csv", args.csv), ("--json-file", args.json_file),
                          ("--classroom", args.classroom), ("--report", args.report)):
        if value:
            check_writable_folder(Path(value).parent, option, value)
    for option, value in (("--gradescope", args.gradescope), ("--feedback", args.feedback)):
        if value:
            path = Path(value)
            if option == "--gradescope" and path.suffix == ".json":  # one notebook's file
                check_writable_folder(path.parent, option, value)
                continue
            if not path.exists():  # a folder of files: made, as `mkdir` would, in a folder
                check_writable_folder(path.parent, option, value)  # that exists (a typo
                path.mkdir()  # deeper in the path is still refused before any grading)
            check_writable_folder(path, option, value)
    if args.classroom and not args.lesson:
        raise InputError("--classroom grades one student's repository for one assignment; "
                         "expected its lesson, got none. Add --lesson, e.g. --lesson 03.")


def _limits(args: argparse.Namespace) -> Limits:
    if args.timeout <= 0 or args.cell_timeout <= 0:
        raise InputError(f"--timeout and --cell-timeout must be positive; got {args.timeout:g} "
                         f"and {args.cell_timeout:g}.")
    if args.jobs < 1:
        raise InputError(f"--jobs must be 1 or more; got {args.jobs}.")
    try:
        memory = parse_bytes(args.memory) if args.memory else default_memory(args.jobs)
    except ValueError as err:
        raise InputError(f"--memory: {err}") from None
    return Limits(args.timeout, args.cell_timeout, memory)


def _per_notebook_names(args: argparse.Namespace, notebooks: list[str]) -> None:
    """Refuse, before grading, two notebooks whose names print alike (every export would show
    them as one: red team, round twelve), and two that would write one per-notebook file."""
    from .intake import looks

    printed: dict[str, str] = {}
    for name in notebooks:
        if name in printed.values():
            raise InputError(f"two notebooks print as {name} (a name that is not UTF-8 is "
                             f"printed with \\x escapes, and another file is named with them): "
                             f"every export would show their grades under one name; expected "
                             f"a name of its own for each. Rename one, or grade them in two "
                             f"runs.")
        if (alike := printed.get(looks(name))) is not None:  # red team, round fourteen: a
            # Cyrillic а in "аlice" beside alice, two rows "alice" in every export, 0/5 and 5/5
            raise InputError(f"two notebooks' names look alike, {name!a} and {alike!a} (as "
                             f"their characters' codes: letters of other alphabets that look "
                             f"like these, or I and l, 0 and O, rn and m): every export would "
                             f"show their grades under names "
                             f"no reader can tell apart; expected a name of its own for each. "
                             f"Rename one, or grade them in two runs.")
        printed[looks(name)] = name
    if args.feedback or (args.gradescope and Path(args.gradescope).suffix != ".json"):
        export_names(notebooks)


def _one_submission(args: argparse.Namespace, graded: list[Graded]) -> list[Graded]:
    """A run over ONE student's submission (--classroom, --gradescope FILE.json) counts the
    assignment's lesson once: several copies of it are refused, never summed."""
    single = args.classroom or (args.gradescope and Path(args.gradescope).suffix == ".json")
    return one_copy(graded, args.lesson) if single and args.lesson else graded


def _one_for_gradescope(args: argparse.Namespace, count: int) -> None:
    if args.gradescope and Path(args.gradescope).suffix == ".json" and count != 1:
        raise InputError(f"--gradescope {args.gradescope} holds the results of ONE notebook; "
                         f"got {count}. Give a folder to get one file per notebook.")


def _results(args: argparse.Namespace) -> list[Graded]:
    if args.merge:
        merged = merge((path, load_json(path)) for path in args.paths)
        _one_for_gradescope(args, len(merged))
        _per_notebook_names(args, [g.notebook for g in merged])
        return merged
    from ..sandbox import Unavailable
    from .batch import grade_paths, notebooks_in, shard  # nbformat, JAX: after the checks
    from .intake import clean, printable
    from .journal import Journal, class_id

    limits = _limits(args)
    notebooks = notebooks_in(args.paths)
    if args.shard:
        notebooks = shard(notebooks, args.shard)
    _one_for_gradescope(args, len(notebooks))
    _per_notebook_names(args, [clean(printable(path)) for path in notebooks])  # as exported
    jobs = min(args.jobs, len(notebooks))
    journal = Journal(class_id(args.paths, args.shard or "", args.lang, args.lesson or ""))
    print(f"grading {len(notebooks)} notebook{'s' * (len(notebooks) != 1)}, {jobs} at a time, "
          f"memory cap {format_bytes(limits.memory)} each, "
          f"{'WITHOUT a sandbox' if args.no_sandbox else 'each in a sandbox'}; journal "
          f"{journal.path} (if stopped, the same command with --resume goes on)",
          file=sys.stderr)
    if not hasattr(sys, "monitoring"):  # Python 3.11: the watch is its profiler, one thread's
        print("note: on Python 3.11 the grader's watch of what an answer calls sees only the "
              "thread it asks and the threads a notebook starts through threading (red team, "
              "round twenty-seven: the library ran unseen on the kernel's output thread and on "
              "XLA's callback threads); grade with Python 3.12 or newer, whose sys.monitoring "
              "sees every thread", file=sys.stderr)
    try:
        return grade_paths(notebooks, limits, jobs=jobs, progress=True,
                           sandbox=not args.no_sandbox, journal=journal, resume=args.resume,
                           lesson=args.lesson)
    except Unavailable as err:
        raise InputError(str(err)) from None


def _export(what: str, write: Callable[[], None]) -> bool:
    """Write one export; on failure, one line on stderr, and the others are still written."""
    try:
        write()
    except OSError as err:
        print(f"error: {what} could not be written ({err}); the other exports were, and the "
              f"journal holds every result: --resume writes them all again without grading",
              file=sys.stderr)
        return False
    return True


def grade_command(args: argparse.Namespace) -> int:
    check_outputs(args)
    if args.lesson:
        args.lesson = lesson_named(args.lesson)
    # The kernels inherit it: the grader's own checks answer in the instructor's language,
    # whatever language the submission's edition set (the release's first cell sets none).
    os.environ[LANGUAGE_ENV] = {"en": "en", "zh": "zh_CN"}[args.lang]
    graded = _one_submission(args, _results(args))
    print(to_json(graded) if args.json else format_table(graded))
    written = [
        _export(option, write) for option, value, write in (
            ("--json-file", args.json_file,
             lambda: write_atomic(args.json_file, to_json(graded) + "\n")),
            ("--csv", args.csv, lambda: write_csv(graded, args.csv)),
            ("--gradescope", args.gradescope, lambda: write_gradescope(graded, args.gradescope)),
            ("--feedback", args.feedback, lambda: write_feedback(graded, args.feedback)),
            ("--classroom", args.classroom, lambda: write_classroom(graded, args.classroom)),
            ("--report", args.report, lambda: write_report(graded, args.report)))
        if value]
    if not all(written):
        return 2
    return 0 if graded and all(r.status == "passed" for g in graded for r in g.rows) else 1
