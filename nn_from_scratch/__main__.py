"""The command line: ``python -m nn_from_scratch {train,grade,progress,doctor} [options]``.

- ``train``: load a data set, build an MLP (or with ``--model cnn`` a convolutional
  network, with ``--model transformer`` a vision transformer), train it with one line
  per epoch, and report validation and test accuracy (:mod:`.train_cli`); ``--model gpt``
  trains a tiny GPT on Python's documentation instead (:mod:`.gpt_cli`);
- ``grade``: grade students' notebooks offline, a class at a time, and export the results
  (instructors; :mod:`.grade.cli`);
- ``progress``: a self-paced student's lessons and exercises, from grading their own
  notebooks (:mod:`.progress_cli`);
- ``doctor``: check that this machine can run the lessons (the classroom preflight).

``python -m nn_from_scratch COMMAND --help`` lists each command's options. Bad
input is one ``error:`` line and exit status 2; a bug keeps its traceback.
"""
import argparse
import sys

from ._checks import InputError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m nn_from_scratch",
        description="A neural network built from jax.numpy, grad, jit and vmap.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    train = commands.add_parser(
        "train", help="train an MLP, a CNN or a transformer on real handwritten digits, or a "
                      "GPT on Python's documentation",
        description="Train a multi-layer perceptron (or a convolutional network, or a vision "
                    "transformer) with SGD, "
                    "watching the validation split, and report test accuracy once at the end.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    from .train_cli import add_arguments as add_train_arguments
    add_train_arguments(train)

    from .doctor import add_arguments as add_doctor_arguments
    from .grade.cli import add_arguments as add_grade_arguments
    add_grade_arguments(commands.add_parser(
        "grade", help="grade students' notebooks offline and report every exercise",
        description="Rebuild each notebook from the released student edition (only its "
                    "exercise cells kept), run it offline in a fresh kernel with time and "
                    "memory limits, check every exercise with the grader's own checks, and "
                    "report passed, failed, not done, error, timed out or out of memory, with "
                    "points and notes on what was tampered with. Exit status 0 when every "
                    "exercise passed, 1 otherwise, 2 on bad usage.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter))
    from .progress_cli import add_arguments as add_progress_arguments
    add_progress_arguments(commands.add_parser(
        "progress", help="where am I? every lesson and exercise, from grading your notebooks",
        description="Grade your own notebooks (each in a sandbox, by the grader's own checks; "
                    "only those changed since the last run) and show every lesson and "
                    "exercise: passed, failed with the hint, not done, or not started; in the "
                    "terminal and as one page (progress.html). Exit status 0 when every "
                    "exercise passed, 1 otherwise, 2 on bad usage."))  # its help gives defaults
    add_doctor_arguments(commands.add_parser(
        "doctor", help="check that this machine can run the lessons (classroom preflight)",
        description="A checklist of what the lessons need, with the fix for each problem. "
                    "Exit status 1 if anything a lesson needs is missing.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter))
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command == "train":
            from .train_cli import train_command
            return train_command(args)
        if args.command == "grade":
            from .grade.cli import grade_command
            return grade_command(args)
        if args.command == "progress":
            from .progress_cli import progress_command
            return progress_command(args)
        from .doctor import doctor_command
        return doctor_command(args)
    except InputError as err:  # our own clear errors: no traceback for a typo
        print(f"error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
