"""The command line: ``python -m nn_from_scratch {train,grade,doctor} [options]``.

- ``train``: load a data set, build an MLP, train it with one line per epoch,
  and report validation and test accuracy;
- ``grade``: grade students' notebooks offline, a class at a time, and export the results
  (instructors);
- ``doctor``: check that this machine can run the lessons (the classroom preflight).

``python -m nn_from_scratch COMMAND --help`` lists each command's options. Bad
input is one ``error:`` line and exit status 2; a bug keeps its traceback.
"""
import argparse
import sys
import time
from pathlib import Path

from ._checks import InputError, check_writable_folder
from .train import BATCH_SIZE, EPOCHS, MODES, STEP_SIZE

HIDDEN = (512, 512)


def parse_layers(text: str) -> list[int]:
    """``"784,512,512,10"`` -> ``[784, 512, 512, 10]``, with a clear error otherwise."""
    try:
        sizes = [int(part) for part in text.split(",")]
    except ValueError:
        sizes = []
    if len(sizes) < 2 or min(sizes) < 1:
        raise argparse.ArgumentTypeError(
            f"--layers takes at least two positive whole numbers separated by commas, "
            f"inputs first, e.g. 784,512,512,10; got {text!r}."
        )
    return sizes


def check_plot_path(path: str) -> None:
    """Refuse, before any training, a plot file that could not be written afterwards."""
    from matplotlib.figure import Figure

    target = Path(path)
    check_writable_folder(target.parent, "--plot", path)
    formats = Figure().canvas.get_supported_filetypes()
    if target.suffix.lstrip(".").lower() not in formats:
        kind = f"{target.suffix} files" if target.suffix else "a file with no extension"
        raise InputError(f"--plot {path}: matplotlib cannot write {kind}; use one of "
                         f"{', '.join('.' + f for f in sorted(formats))}, e.g. curves.png.")


def build_parser() -> argparse.ArgumentParser:
    from .data import DATASETS
    from .params import INITS

    parser = argparse.ArgumentParser(
        prog="python -m nn_from_scratch",
        description="A neural network built from jax.numpy, grad, jit and vmap.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    train = commands.add_parser(
        "train", help="train an MLP on real handwritten digits",
        description="Train a multi-layer perceptron with SGD, watching the validation split, "
                    "and report test accuracy once at the end.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    train.add_argument("--dataset", choices=DATASETS, default="auto",
                       help="'auto' uses MNIST when it is prepared or can be downloaded "
                            "(decided in 5 s at most), otherwise mnist-5k: 5,000 real MNIST "
                            "images that need no download")
    train.add_argument("--epochs", type=int, default=EPOCHS, help="passes over the training set")
    train.add_argument("--batch-size", type=int, default=BATCH_SIZE, help="examples per SGD step")
    train.add_argument("--step-size", type=float, default=STEP_SIZE, help="SGD learning rate")
    train.add_argument("--layers", type=parse_layers, default=None,
                       help="layer sizes, inputs first, e.g. 784,512,512,10 (default: "
                            "the data's pixels, 512, 512, the data's classes)")
    train.add_argument("--init", choices=INITS, default="he",
                       help="weight initialisation ('normal' is the seed tutorial's 0.01)")
    train.add_argument("--mode", choices=MODES, default="scan",
                       help="eager: every operation dispatched from Python; jit: one compiled "
                            "step; scan: one compiled program per epoch")
    train.add_argument("--no-jit", dest="mode", action="store_const", const="eager",
                       help="the same as --mode eager (slow; to see what jit buys)")
    train.add_argument("--seed", type=int, default=0, help="seed of the PRNG key")
    train.add_argument("--plot", metavar="FILE", default=None,
                       help="save loss and accuracy curves to this image file")

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
    add_doctor_arguments(commands.add_parser(
        "doctor", help="check that this machine can run the lessons (classroom preflight)",
        description="A checklist of what the lessons need, with the fix for each problem. "
                    "Exit status 1 if anything a lesson needs is missing.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter))
    return parser


def train_command(args: argparse.Namespace) -> int:
    import jax

    from .data import load_dataset
    from .params import count_params, init_network_params
    from .train import evaluate, fit

    if args.plot:
        check_plot_path(args.plot)
    data = load_dataset(args.dataset)
    sizes = args.layers or [data.num_features, *HIDDEN, data.num_classes]
    init_key, shuffle_key = jax.random.split(jax.random.key(args.seed))
    params = init_network_params(sizes, init_key, init=args.init)
    print(f"{data}\nModel: layers {sizes}, {count_params(params):,} parameters, "
          f"{args.init} init; {args.mode} mode on {jax.devices()[0].platform.upper()}.", flush=True)
    start = time.perf_counter()
    params, history = fit(params, data, epochs=args.epochs, batch_size=args.batch_size,
                          step_size=args.step_size, key=shuffle_key, mode=args.mode,
                          verbose=True)
    _, test_accuracy = evaluate(params, data.x_test, data.y_test)  # once, at the very end
    total = time.perf_counter() - start
    print(f"Done: validation accuracy {history.val_accuracy[-1]:.4f}, test accuracy "
          f"{float(test_accuracy):.4f} (the test split, evaluated once now), train accuracy "
          f"{history.train_accuracy[-1]:.4f} after {history.epochs} epochs; training "
          f"{sum(history.epoch_time):.2f} s + compile {history.compile_time:.2f} s "
          f"(total with evaluation {total:.2f} s).")
    if args.plot:
        from .plots import plot_history
        try:
            plot_history(history, path=args.plot)
        except OSError as err:  # checked before training, but a disk can still fill up
            print(f"error: could not save the curves to {args.plot} ({err.strerror or err}); "
                  f"the results above are complete.", file=sys.stderr)
            return 1
        print(f"Saved training curves to {args.plot}.")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command == "train":
            return train_command(args)
        if args.command == "grade":
            from .grade.cli import grade_command
            return grade_command(args)
        from .doctor import doctor_command
        return doctor_command(args)
    except InputError as err:  # our own clear errors: no traceback for a typo
        print(f"error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
