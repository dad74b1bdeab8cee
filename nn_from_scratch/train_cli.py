"""``python -m nn_from_scratch train``: an MLP, a CNN or a vision transformer trained on
handwritten digits (``--model gpt``, a tiny GPT on Python's documentation: :mod:`.gpt_cli`).

The command's options and each model's defaults (:data:`DEFAULTS`, :data:`OPTIMIZER_DEFAULTS`),
the network ``--model`` builds (:func:`build_model`), the optimizer ``--optimizer`` makes
(:func:`make_optimizer`), and the command itself: load the data, train with one line per
epoch, and report validation and test accuracy (:func:`train_command`).
"""
import argparse
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from ._checks import InputError, check_positive_int, check_writable_folder
from .augment import MAX_SHIFT
from .train import BATCH_SIZE, EPOCHS, MODES, STEP_SIZE

if TYPE_CHECKING:
    import jax

    from .data import Dataset
    from .losses import Predict
    from .optim import Optimizer
    from .params import Params

HIDDEN = (512, 512)
CNN_HIDDEN = (128,)  # the CNN's dense layer between its convolutions and the classes
MODELS = ("mlp", "cnn", "transformer", "gpt")
SCHEDULES = ("constant", "cosine")
AUGMENTS = ("none", "shift")
# (epochs, batch size, step size, schedule, augmentation) per model: the CNN learns from more
# and smaller steps; it has fewer weights to fit, and random shifts of a pixel or two and a
# step size that falls to zero along a cosine (train.cosine_schedule) take its test accuracy
# on mnist-5k from about 0.96 to 0.97 (README).
DEFAULTS: dict[str, tuple[int, int, float, str, str]] = {
    "mlp": (EPOCHS, BATCH_SIZE, STEP_SIZE, "constant", "none"),
    "cnn": (24, 32, 0.1, "cosine", "shift"),
    "transformer": (90, 32, 0.3, "cosine", "shift"),
}
# --optimizer: each model's default, and for the optimizers other than plain SGD their own
# (epochs, learning rate, warm-up epochs, weight decay); batch size, schedule and augmentation
# stay the model's (DEFAULTS). With sgd, DEFAULTS alone apply, as before --optimizer existed.
OPTIMIZERS = ("sgd", "momentum", "adam", "adamw")
# What benchmarks/optimizer_table.py measured on mnist-5k, seeds 0-4 (README): Adam beat SGD
# on every seed for the MLP, SGD beat Adam for the CNN, AdamW lifted the transformer's median.
DEFAULT_OPTIMIZER = {"mlp": "adam", "cnn": "sgd", "transformer": "adamw"}
# momentum's rate is SGD's times (1 - beta): with beta = 0.9 its steps settle at lr / (1 - beta),
# SGD's size. Adam's 1e-3 is Kingma and Ba's default.
OPTIMIZER_DEFAULTS: dict[str, dict[str, tuple[int, float, int, float]]] = {
    "mlp": {"momentum": (EPOCHS, 0.02, 0, 0.0), "adam": (EPOCHS, 1e-3, 0, 0.0),
            "adamw": (EPOCHS, 1e-3, 0, 1e-4)},
    "cnn": {"momentum": (24, 0.01, 0, 0.0), "adam": (24, 1e-3, 0, 0.0),
            "adamw": (24, 1e-3, 0, 1e-4)},
    "transformer": {"momentum": (90, 0.03, 0, 0.0), "adam": (60, 2e-3, 5, 0.0),
                    "adamw": (60, 2e-3, 5, 0.1)},
}
# The transformer's shape: every image cut into a 4 x 4 grid of patches (7x7 pixels for MNIST:
# 16 positions, so attention is cheap), width 64, blocks of 4 heads and an MLP of 128.
PATCH_GRID = 4
TRANSFORMER = {"width": 64, "heads": 4, "depth": 2, "mlp_width": 128}


def per_model(field: int) -> str:
    """A default of every model for --help: ``"15 for the MLP, 24 for the CNN, ..."``."""
    names = {"mlp": "the MLP", "cnn": "the CNN", "transformer": "the transformer"}
    return ", ".join(f"{values[field]} for {names[model]}" for model, values in DEFAULTS.items())


def optimizer_defaults(field: int, only: str | None = None) -> str:
    """One field of OPTIMIZER_DEFAULTS for --help: ``"adam 0.001 for the MLP, ..."``."""
    return ", ".join(f"{name} {values[field]:g} for the {model}"
                     for model, table in OPTIMIZER_DEFAULTS.items()
                     for name, values in table.items() if only in (None, name))


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


def add_arguments(train: argparse.ArgumentParser) -> None:
    """The ``train`` command's options, the GPT's included (:func:`.gpt_cli.add_arguments`)."""
    from .data import DATASETS
    from .params import INITS

    train.add_argument("--dataset", choices=DATASETS, default="auto",
                       help="'auto' uses MNIST when it is prepared or can be downloaded "
                            "(decided in 5 s at most), otherwise mnist-5k: 5,000 real MNIST "
                            "images that need no download")
    train.add_argument("--model", choices=MODELS, default="mlp",
                       help="mlp: the seed tutorial's multi-layer perceptron; cnn: two 3x3 "
                            "convolutions with max-pooling, then two dense layers (lesson 13); "
                            "transformer: the image as a sequence of 16 patches, two "
                            "transformer blocks (lesson 14); gpt: a character-level language "
                            "model of Python's documentation (lesson 16)")
    train.add_argument("--epochs", type=int, default=None,
                       help=f"passes over the training set (default: {per_model(0)})")
    train.add_argument("--batch-size", type=int, default=None,
                       help=f"examples per SGD step (default: {per_model(1)})")
    train.add_argument("--optimizer", choices=OPTIMIZERS, default=None,
                       help="sgd: plain SGD (lessons 08-14); momentum: heavy-ball, beta 0.9; "
                            "adam; adamw: Adam with decoupled weight decay on the weight "
                            "matrices (nn_from_scratch.optim, lesson 15) (default: "
                            + ", ".join(f"{name} for the {model}" for model, name
                                        in DEFAULT_OPTIMIZER.items()) + ")")
    train.add_argument("--step-size", type=float, default=None,
                       help=f"the learning rate (with sgd: {per_model(2)}; "
                            f"{optimizer_defaults(1)})")
    train.add_argument("--schedule", choices=SCHEDULES, default=None,
                       help=f"constant: the same step size every epoch; cosine: falling to 0 "
                            f"along half a cosine (default: {per_model(3)})")
    train.add_argument("--warmup", type=int, default=None, metavar="EPOCHS",
                       help=f"epochs over which the learning rate rises linearly from 0 before "
                            f"the schedule, step by step (with sgd: 0; {optimizer_defaults(2)}; "
                            f"scaled with --epochs)")
    train.add_argument("--weight-decay", type=float, default=None,
                       help=f"adamw's decoupled weight decay ({optimizer_defaults(3, 'adamw')})")
    train.add_argument("--augment", choices=AUGMENTS, default=None,
                       help=f"shift: each epoch, every training image moved by up to "
                            f"{MAX_SHIFT} pixels in each direction (default: {per_model(4)})")
    train.add_argument("--layers", type=parse_layers, default=None,
                       help="the MLP's layer sizes, inputs first, e.g. 784,512,512,10 (default: "
                            "the data's pixels, 512, 512, the data's classes)")
    train.add_argument("--init", choices=INITS, default="he",
                       help="the MLP's weight initialisation ('normal' is the seed tutorial's "
                            "0.01); the CNN's is He, the transformer's its own")
    train.add_argument("--mode", choices=MODES, default="scan",
                       help="eager: every operation dispatched from Python; jit: one compiled "
                            "step; scan: one compiled program per epoch")
    train.add_argument("--no-jit", dest="mode", action="store_const", const="eager",
                       help="the same as --mode eager (slow; to see what jit buys)")
    train.add_argument("--seed", type=int, default=0, help="seed of the PRNG key")
    train.add_argument("--plot", metavar="FILE", default=None,
                       help="save loss and accuracy curves to this image file")
    from .gpt_cli import add_arguments as add_gpt_arguments
    add_gpt_arguments(train)


def build_model(args: argparse.Namespace, data: "Dataset",
                key: "jax.Array") -> "tuple[Params, Predict, str]":
    """``(params, batched predict, one line describing the model)`` for ``--model``."""
    from .params import count_params, init_network_params

    if args.model != "mlp" and (args.layers or args.init != "he"):
        raise InputError(f"--layers and --init are the MLP's options; the {args.model} has its "
                         f"own layers and init (leave them out, or use --model mlp).")
    if args.model == "transformer":
        from .transformer import batched_predict_transformer, init_transformer_params
        patch = data.image_shape[-1] // PATCH_GRID
        params = init_transformer_params(key, image_shape=data.image_shape, patch_size=patch,
                                         **TRANSFORMER)
        t = TRANSFORMER
        about = (f"transformer: {PATCH_GRID * PATCH_GRID} patches of {patch}x{patch}, width "
                 f"{t['width']}, {t['depth']} blocks of {t['heads']} heads and an MLP of "
                 f"{t['mlp_width']}, mean over the patches, {count_params(params):,} parameters")
        return params, batched_predict_transformer, about
    if args.model == "cnn":
        from .conv import batched_predict_cnn, init_cnn_params
        params = init_cnn_params(key, image_shape=data.image_shape, hidden=CNN_HIDDEN)
        convs = [w.shape for w, _ in params if w.ndim == 4]
        dense = [w.shape[1] for w, _ in params if w.ndim == 2] + [data.num_classes]
        about = (f"CNN: {', '.join(f'{s[0]} {s[2]}x{s[3]} filters' for s in convs)} "
                 f"(each conv -> relu -> 2x2 max-pool), dense {' -> '.join(map(str, dense))}, "
                 f"{count_params(params):,} parameters, He init")
        return params, batched_predict_cnn, about
    from .model import batched_predict
    sizes = args.layers or [data.num_features, *HIDDEN, data.num_classes]
    params = init_network_params(sizes, key, init=args.init)
    return (params, batched_predict,
            f"layers {sizes}, {count_params(params):,} parameters, {args.init} init")


def make_optimizer(name: str, learning_rate: float, schedule: str, warmup: int,
                   weight_decay: float, epochs: int, steps: int) -> "Optimizer | None":
    """``--optimizer`` as an :class:`~nn_from_scratch.optim.Optimizer` whose rate follows
    ``--schedule`` step by step after ``warmup`` epochs of warm-up; ``None`` for plain SGD
    without warm-up, which ``fit`` runs as lessons 08-14 do, one step size per epoch."""
    from . import optim

    if name == "sgd" and not warmup:
        return None
    # "constant" is the cosine from the peak to the peak: after the warm-up it stays put
    end = learning_rate if schedule == "constant" else 0.0
    rate = learning_rate if schedule == "constant" and not warmup else \
        optim.warmup_cosine_schedule(learning_rate, warmup * steps, epochs * steps,
                                     end_value=end)
    if name == "adamw":
        return optim.adamw(rate, weight_decay=weight_decay)
    return {"sgd": optim.sgd, "momentum": optim.momentum, "adam": optim.adam}[name](rate)


def train_command(args: argparse.Namespace) -> int:
    from .gpt_cli import gpt_command, refuse_gpt_options
    if args.model == "gpt":
        return gpt_command(args)
    refuse_gpt_options(args)
    import jax

    from .augment import shift_images
    from .data import load_dataset
    from .epoch import evaluate
    from .train import cosine_schedule, fit

    if args.plot:
        check_plot_path(args.plot)
    data = load_dataset(args.dataset)
    init_key, shuffle_key = jax.random.split(jax.random.key(args.seed))
    params, predict, about = build_model(args, data, init_key)
    default_epochs, default_batch_size, default_step_size, schedule, augment = DEFAULTS[args.model]
    name = args.optimizer or DEFAULT_OPTIMIZER[args.model]
    warmup, weight_decay = 0, 0.0
    if name != "sgd":
        default_epochs, default_step_size, warmup, weight_decay = \
            OPTIMIZER_DEFAULTS[args.model][name]
    epochs = default_epochs if args.epochs is None else args.epochs
    batch_size = default_batch_size if args.batch_size is None else args.batch_size
    step_size = default_step_size if args.step_size is None else args.step_size
    if args.warmup is None:  # the default warm-up is the same share of fewer (or more) epochs
        warmup = round(warmup * epochs / default_epochs)
    else:
        warmup = args.warmup
    schedule = args.schedule or schedule
    augment = args.augment or augment
    check_positive_int(epochs, "--epochs")
    check_positive_int(warmup, "--warmup", minimum=0)
    if warmup >= epochs:
        raise InputError(f"--warmup {warmup} must be fewer epochs than --epochs {epochs}, so "
                         f"that some training happens at the full rate; e.g. --warmup "
                         f"{max(epochs // 10, 0)}.")
    if args.weight_decay is not None:
        if name != "adamw":
            raise InputError(f"--weight-decay is adamw's; --optimizer {name} has none "
                             f"(add --optimizer adamw, or leave --weight-decay out).")
        weight_decay = args.weight_decay
    optimizer = make_optimizer(name, step_size, schedule, warmup, weight_decay,
                               epochs, len(data.x_train) // batch_size)
    steps = cosine_schedule(step_size, epochs) if schedule == "cosine" else step_size
    decay = f", weight decay {weight_decay:g}" if name == "adamw" else ""
    warm = f", warmed up over {warmup} epoch{'s' * (warmup > 1)}" if warmup else ""
    print(f"{data}\nModel: {about}; {args.mode} mode on {jax.devices()[0].platform.upper()}.\n"
          f"Training: {epochs} epochs, batches of {batch_size}, "
          f"{'' if name == 'sgd' else name + ' at '}step size "
          f"{step_size:g}{decay}{warm}"
          f"{' falling to 0 along a cosine' if schedule == 'cosine' else ''}"
          f"{f', images shifted by up to {MAX_SHIFT} pixels' if augment == 'shift' else ''}.",
          flush=True)
    start = time.perf_counter()
    params, history = fit(params, data, epochs=epochs, batch_size=batch_size,
                          step_size=None if optimizer is not None else steps, key=shuffle_key,
                          mode=args.mode, verbose=True, predict=predict,
                          augment=shift_images if augment == "shift" else None,
                          optimizer=optimizer)
    _, test_accuracy = evaluate(params, data.x_test, data.y_test, predict)  # once, at the end
    total = time.perf_counter() - start
    training = sum(history.epoch_time)
    print(f"Done: validation accuracy {history.val_accuracy[-1]:.4f}, test accuracy "
          f"{float(test_accuracy):.4f} (the test split, evaluated once now), train accuracy "
          f"{history.train_accuracy[-1]:.4f} (the last epoch's average) after {history.epochs} "
          f"epochs; training {training:.2f} s + compile {history.compile_time:.2f} s + "
          f"validation and test {max(total - training - history.compile_time, 0):.2f} s = "
          f"{total:.2f} s.")
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
