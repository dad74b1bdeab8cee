"""The command line: ``python -m nn_from_scratch train [options]``.

Loads a data set, builds an MLP, trains it with one line per epoch and prints a
summary. ``python -m nn_from_scratch train --help`` lists the options.
"""
import argparse
import sys
import time

import jax

from .data import DATASETS, load_dataset
from .params import INITS, count_params, init_network_params
from .train import BATCH_SIZE, EPOCHS, STEP_SIZE, fit

HIDDEN = (512, 512)


def parse_layers(text):
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


def build_parser():
    parser = argparse.ArgumentParser(
        prog="python -m nn_from_scratch",
        description="A neural network built from jax.numpy, grad, jit and vmap.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    train = commands.add_parser(
        "train", help="train an MLP on MNIST or the bundled digits",
        description="Train a multi-layer perceptron with SGD and report accuracy each epoch.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    train.add_argument("--dataset", choices=DATASETS, default="auto",
                       help="'auto' uses MNIST when it is prepared or can be downloaded "
                            "(decided in 5 s at most), the bundled 8x8 digits otherwise")
    train.add_argument("--epochs", type=int, default=EPOCHS, help="passes over the training set")
    train.add_argument("--batch-size", type=int, default=BATCH_SIZE, help="examples per SGD step")
    train.add_argument("--step-size", type=float, default=STEP_SIZE, help="SGD learning rate")
    train.add_argument("--layers", type=parse_layers, default=None,
                       help="layer sizes, inputs first, e.g. 784,512,512,10 (default: "
                            "the data's pixels, 512, 512, the data's classes)")
    train.add_argument("--init", choices=INITS, default="he",
                       help="weight initialisation ('normal' is the seed tutorial's 0.01)")
    train.add_argument("--no-jit", action="store_true",
                       help="run every operation eagerly (slow; to see what jit buys)")
    train.add_argument("--seed", type=int, default=0, help="seed of the PRNG key")
    train.add_argument("--plot", metavar="FILE", default=None,
                       help="save loss and accuracy curves to this image file")
    return parser


def train_command(args):
    data = load_dataset(args.dataset)
    sizes = args.layers or [data.num_features, *HIDDEN, data.num_classes]
    init_key, shuffle_key = jax.random.split(jax.random.key(args.seed))
    params = init_network_params(sizes, init_key, init=args.init)
    mode = "eager" if args.no_jit else "scan"
    print(f"{data}\nModel: layers {sizes}, {count_params(params):,} parameters, "
          f"{args.init} init; {mode} mode on {jax.devices()[0].platform.upper()}.")
    start = time.perf_counter()
    params, history = fit(params, data, epochs=args.epochs, batch_size=args.batch_size,
                          step_size=args.step_size, key=shuffle_key, mode=mode,
                          verbose=True, progress=sys.stderr.isatty())
    total = time.perf_counter() - start
    print(f"Done: test accuracy {history['test_accuracy'][-1]:.4f}, train accuracy "
          f"{history['train_accuracy'][-1]:.4f} after {args.epochs} epochs; "
          f"training {sum(history['epoch_time']):.2f} s + compile {history['compile_time']:.2f} s "
          f"(total with evaluation {total:.2f} s).")
    if args.plot:
        from .plots import plot_history
        plot_history(history, path=args.plot)
        print(f"Saved training curves to {args.plot}.")
    return history


def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        if args.command == "train":
            train_command(args)
    except (ValueError, TypeError) as err:  # our own clear errors: no traceback for a typo
        print(f"error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
