"""A made-up class: a folder of one lesson's submissions to try the grader and its report on.

Each notebook is the student edition with every exercise answered one of three ways: the
solution, the stub left as handed out, or a typical mistake. The mistakes are real wrong
answers: single-site mutants of the solution (tools/mutate.py), the reviewed equivalent ones
left out. As in a real class, some exercises are harder than others and a few mistakes are
common: each exercise draws how often it is got wrong, and three of its mutants, the first
made most often. The same seed makes the same class.

    .venv/bin/python tools/made_up_class.py 07_mlp_from_scratch class/ --size 40
    .venv/bin/nn-from-scratch grade class/ --report report.html
"""
import argparse
import random
import sys
from pathlib import Path

import jupytext
import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parent))
import mutants  # noqa: E402
import mutate  # noqa: E402

import notebooks  # noqa: E402

MISTAKE_WEIGHTS = (6, 3, 1)  # how often each exercise's three mistakes are made


def answers(lesson: str) -> list[tuple[str, str, list[str]]]:
    """For each exercise cell, in order: its solution, its stub and its mistakes (sources)."""
    path = notebooks.LESSONS / f"{lesson}.md"
    raw = jupytext.read(path, fmt="md")
    equivalent = {key for _exercise, key in mutants.equivalents(lesson)}
    found = []
    for cell in raw.cells:
        if notebooks.EXERCISE_TAG not in cell.metadata.get("tags", []):
            continue
        solution, stub = notebooks.split_exercise(cell.source)
        wrong = [m.source for m in mutate.mutants(solution, notebooks.solution_lines(cell.source))
                 if m.key.removesuffix(" (again)") not in equivalent]
        found.append((solution, stub, wrong))
    return found


def make_class(lesson: str, folder: Path, size: int = 40, seed: int = 0) -> list[Path]:
    """Write ``size`` submissions of ``lesson`` into ``folder``; return their paths."""
    rng = random.Random(seed)
    _full, student = notebooks.editions(notebooks.LESSONS / f"{lesson}.md")
    cells = [c for c in student.cells if notebooks.EXERCISE_TAG in c.metadata.get("tags", [])]
    options = answers(lesson)
    plans = []
    for _solution, _stub, wrong in options:  # how hard each exercise is, its common mistakes
        plans.append((rng.uniform(0.05, 0.5), rng.sample(wrong, min(3, len(wrong)))))
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for i in range(size):
        stubs = rng.choice((0.0, 0.0, 0.0, 0.0, 0.1, 0.3, 1.0))  # one in seven hands in nothing
        for cell, (solution, stub, _wrong), (hard, mistakes) in zip(cells, options, plans):
            draw = rng.random()
            if draw < stubs:
                cell.source = stub
            elif draw < stubs + hard * (1 - stubs) and mistakes:
                cell.source = rng.choices(mistakes, MISTAKE_WEIGHTS[:len(mistakes)])[0]
            else:
                cell.source = solution
        path = folder / f"student{i:02d}.ipynb"
        nbformat.write(student, path)
        written.append(path)
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("lesson", help="a lesson's name, e.g. 07_mlp_from_scratch")
    parser.add_argument("folder", type=Path)
    parser.add_argument("--size", type=int, default=40, help="notebooks (default 40)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    paths = make_class(args.lesson, args.folder, args.size, args.seed)
    print(f"{len(paths)} submissions of {args.lesson} in {args.folder}")


if __name__ == "__main__":
    main()
