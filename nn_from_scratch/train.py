"""Training: ``fit``, epoch after epoch, each run one of three ways, with a history.

The three ways to run an epoch give the same parameters (up to float rounding)
and differ only in how much Python sits between the steps (lessons 08 and 09):

- ``"eager"``: every jnp operation is dispatched one by one from Python;
- ``"jit"``: one compiled program per step, batches fed from host NumPy (the
  seed tutorial's loop);
- ``"scan"``: one compiled program per epoch (:func:`~nn_from_scratch.epoch.train_epoch`);
  the data stays on the device and ``lax.scan`` runs the steps.

The SGD step (``update``), the batches and the epoch program are :mod:`~nn_from_scratch.epoch`'s.

One loop trains every network: each function takes the model as its batched
``predict`` (:data:`~nn_from_scratch.losses.Predict`), the MLP's
``batched_predict`` by default and the CNN's ``batched_predict_cnn`` in lesson 13.
Under ``jit`` it is a static argument: a program is compiled per model.
"""
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Protocol

import jax
import jax.numpy as jnp
import numpy as np
from jax import jit, random

from ._checks import InputError, check_choice, check_key, check_positive_int, check_step_size

# The step and the epoch program are epoch.py's. They stay names of this module too: notebooks
# of lessons 02, 08 and 09 handed out before they moved import them from here.
from .epoch import (
    _optimizer_epoch,
    _optimizer_step,
    _shuffled_batches,
    _update_with_metrics,
    batch_indices,
    evaluate,
    train_epoch,
    update,
)
from .i18n import _
from .losses import Predict, one_hot
from .model import batched_predict
from .optim import Optimizer
from .params import Params

__all__ = ["BATCH_SIZE", "EPOCHS", "MODES", "STEP_SIZE", "TRAIN_METRICS", "DivergedError",
           "History", "batch_indices", "cosine_schedule", "evaluate", "fit", "format_epoch",
           "train_epoch", "update"]

MODES = ("eager", "jit", "scan")
# How fit measures the training split's loss and accuracy: "during" the epoch, averaging the
# figures of the forward passes the steps make anyway; or "after" it, in a second pass.
TRAIN_METRICS = ("during", "after")
# Defaults that reach about 0.93 test accuracy on the 5,000 real MNIST images with He
# init (4,000 of them for training) in a few seconds on a laptop CPU, and suit full MNIST.
EPOCHS, BATCH_SIZE, STEP_SIZE = 30, 128, 0.2


class DivergedError(InputError):
    """The loss became NaN or infinite: the step size was too large for this problem.

    Attributes:
      history: the :class:`History` of the epochs completed before it happened.
    """

    def __init__(self, message: str, history: "History"):
        super().__init__(message)
        self.history = history


class TrainingData(Protocol):
    """What :func:`fit` needs from a data set (a :class:`~nn_from_scratch.data.Dataset` has it)."""

    @property
    def x_train(self) -> np.ndarray: ...  # (n, pixels)
    @property
    def y_train(self) -> np.ndarray: ...  # (n,) int labels
    @property
    def x_val(self) -> np.ndarray: ...
    @property
    def y_val(self) -> np.ndarray: ...
    @property
    def num_classes(self) -> int: ...
    @property
    def name(self) -> str: ...


@dataclass(frozen=True)
class History:
    """What :func:`fit` saw, one entry per epoch in each tuple; times in seconds.

    ``train_metrics`` says what ``train_loss`` and ``train_accuracy`` are: ``"during"``, the
    average over the epoch's batches of each batch's loss and accuracy, measured by the
    forward pass of its own step, while the weights were still moving (what Keras and
    PyTorch users see); ``"after"``, a second pass over the whole training split with the
    epoch's final weights. ``epoch_time`` is training only (compile and evaluation excluded);
    ``compile_time`` is the one-off cost before the first epoch, almost all of it compiling
    ahead of time: the training program (a step, or a whole epoch with ``lax.scan``; none in
    eager mode), and the shuffle, the evaluation and the augmentation that every mode
    compiles. JAX caches compiled programs, so a second ``fit`` with the same shapes in the
    same process reports a few milliseconds. The ``val_*`` figures are on the validation
    split: the test split is for the very end. ``optimizer_state`` is the optimizer's state
    after the last epoch (``None`` for plain SGD).
    """

    mode: str
    batch_size: int
    steps_per_epoch: int
    compile_time: float
    epoch_time: tuple[float, ...] = ()
    train_loss: tuple[float, ...] = ()
    train_accuracy: tuple[float, ...] = ()
    val_loss: tuple[float, ...] = ()
    val_accuracy: tuple[float, ...] = ()
    train_metrics: str = "after"
    optimizer_state: Any = field(default=None, compare=False, repr=False)

    @property
    def epochs(self) -> int:
        """Number of epochs recorded."""
        return len(self.epoch_time)


# A runner prepares (and compiles) one mode once and returns run_epoch, where
# run_epoch(params, batches, step_size, x_epoch) -> (params, (losses, accuracies)), both
# (steps,); x_epoch: this epoch's training images, (n, n_in), augmented, or None for the
# training images as they are.
Metrics = tuple[jax.Array, jax.Array]  # (losses, accuracies), one of each per step
Runner = Callable[[Params, jax.Array, float, "jax.Array | None"], tuple[Params, Metrics]]
Augment = Callable[[jax.Array, jax.Array], jax.Array]  # (images (n, n_in), key) -> same shape


def _step_loop(step: Callable[..., Any], x: np.ndarray, y: np.ndarray) -> Runner:
    """An epoch as a Python loop over batches, feeding ``step`` from host NumPy arrays."""
    def run_epoch(params: Params, batches: jax.Array, step_size: float,
                  x_epoch: jax.Array | None = None) -> tuple[Params, Metrics]:
        images = x if x_epoch is None else np.asarray(x_epoch)
        metrics = []  # (loss, accuracy) of every step
        for batch in np.asarray(batches):
            params, batch_metrics = step(params, images[batch], y[batch], step_size)
            metrics.append(batch_metrics)
        losses, accuracies = zip(*metrics)
        return params, (jnp.stack(losses), jnp.stack(accuracies))
    return run_epoch


def _eager_runner(params: Params, x: np.ndarray, y: np.ndarray, batch_size: int, steps: int,
                  step_size: float, predict: Predict, optimizer: Optimizer | None) -> Runner:
    if optimizer is not None:
        return _step_loop(partial(_optimizer_step, predict=predict, optimizer=optimizer), x, y)
    return _step_loop(partial(_update_with_metrics, predict=predict), x, y)


def _jit_runner(params: Params, x: np.ndarray, y: np.ndarray, batch_size: int, steps: int,
                step_size: float, predict: Predict, optimizer: Optimizer | None) -> Runner:
    # Compiled ahead of time, so that the compile is measured apart. Donating params lets XLA
    # write each step's new parameters over the old ones, in place, as PyTorch's optimizers
    # do, instead of allocating 2.7 MB afresh every step.
    if optimizer is not None:  # params is the carry (params, state)
        step = jit(_optimizer_step, donate_argnums=0,
                   static_argnames=("predict", "optimizer")).lower(
            params, x[:batch_size], y[:batch_size], step_size, predict=predict,
            optimizer=optimizer).compile()
        return _step_loop(step, x, y)
    step = jit(_update_with_metrics, donate_argnums=0, static_argnames="predict").lower(
        params, x[:batch_size], y[:batch_size], step_size, predict=predict).compile()
    return _step_loop(step, x, y)


def _scan_runner(params: Params, x: np.ndarray, y: np.ndarray, batch_size: int, steps: int,
                 step_size: float, predict: Predict, optimizer: Optimizer | None) -> Runner:
    x_dev, y_dev = jax.device_put(x), jax.device_put(y)  # the data goes to the device once
    batches = jnp.zeros((steps, batch_size), jnp.int32)
    if optimizer is None:
        epoch = train_epoch.lower(params, x_dev, y_dev, batches, step_size,
                                  predict=predict).compile()
    else:  # params is the carry (params, state)
        epoch = _optimizer_epoch.lower(params, x_dev, y_dev, batches, step_size,
                                       predict=predict, optimizer=optimizer).compile()
    def run_epoch(params: Params, batches: jax.Array, step_size: float,
                  x_epoch: jax.Array | None = None) -> tuple[Params, Metrics]:
        return epoch(params, x_dev if x_epoch is None else x_epoch, y_dev, batches, step_size)
    return run_epoch


_RUNNERS = {"eager": _eager_runner, "jit": _jit_runner, "scan": _scan_runner}


def cosine_schedule(step_size: float, epochs: int) -> tuple[float, ...]:
    """One step size per epoch, falling from ``step_size`` towards 0 along half a cosine:
    ``step_size * (1 + cos(pi * e / epochs)) / 2`` for epoch ``e = 0 .. epochs - 1``.

    Large steps early cover ground; small steps at the end settle into a minimum instead of
    bouncing around it. Pass the result to :func:`fit` as its ``step_size``.
    """
    check_step_size(step_size)
    check_positive_int(epochs, "epochs")
    return tuple(step_size * (1 + math.cos(math.pi * e / epochs)) / 2 for e in range(epochs))


def _epoch_step_sizes(step_size: "float | Sequence[float]", epochs: int) -> list[float]:
    """``fit``'s ``step_size``, a number or one per epoch, as a list of ``epochs`` numbers."""
    if not isinstance(step_size, (list, tuple)):
        return [check_step_size(step_size)] * epochs
    if len(step_size) != epochs:
        raise InputError(f"step_size has {len(step_size)} step sizes, one per epoch, but "
                         f"epochs={epochs}: give one number, or exactly one per epoch, e.g. "
                         f"cosine_schedule({step_size[0] if step_size else 0.1}, {epochs}).")
    return [check_step_size(value, f"step_size[{e}]") for e, value in enumerate(step_size)]


def _check_optimizer(optimizer: Any, step_size: Any) -> None:
    """``fit``'s ``optimizer``: None or an Optimizer, and then no ``step_size`` beside it."""
    if optimizer is None:
        return
    if not (callable(getattr(optimizer, "init", None))
            and callable(getattr(optimizer, "update", None))):  # ours, or Optax's
        raise InputError(f"optimizer must be an Optimizer such as adam(1e-3) from "
                         f"nn_from_scratch.optim (or an Optax one), or None for plain SGD; "
                         f"got {type(optimizer).__name__} {optimizer!r:.60}.")
    if step_size is not None:
        raise InputError(
            f"fit got both step_size={step_size!r:.60} and an optimizer: the optimizer's "
            f"learning rate is the one used, so step_size would be ignored. Give the rate "
            f"(or a schedule of the step, e.g. warmup_cosine_schedule) to the optimizer, "
            f"e.g. adamw(1e-3), and leave step_size out.")


def _check_fit_args(params: Params, data: TrainingData, epochs: int, batch_size: int,
                    key: jax.Array, mode: str, predict: Predict,
                    augment: Augment | None, train_metrics: str) -> None:
    check_key(key)
    check_choice(mode, "mode", MODES)
    check_choice(train_metrics, "train_metrics", TRAIN_METRICS)
    check_positive_int(epochs, "epochs")
    check_positive_int(batch_size, "batch_size")
    pixels = data.x_train.shape[1]
    if predict is batched_predict:  # the MLP: its layer sizes say what it expects
        sizes = [params[0][0].shape[1]] + [b.shape[0] for _, b in params]
        if sizes[0] != pixels or sizes[-1] != data.num_classes:
            raise InputError(
                f"Layer sizes {sizes} do not match the {data.name} data: it has "
                f"{pixels} pixels per image and {data.num_classes} classes, so the "
                f"sizes must start with {pixels} and end with {data.num_classes}, "
                f"e.g. {[pixels, *sizes[1:-1], data.num_classes]}."
            )
    else:  # another model checks its input itself; only the shapes are worked out, no compute
        scores = jax.eval_shape(predict, params, data.x_train[:1]).shape[1:]
        if scores != (data.num_classes,):
            raise InputError(f"The model gives {scores} scores per image, but the {data.name} "
                             f"data has {data.num_classes} classes: give its last layer "
                             f"{data.num_classes} outputs.")
    if batch_size > len(data.x_train):
        raise InputError(f"batch_size must be between 1 and the {len(data.x_train)} training "
                         f"examples; got {batch_size}.")
    if augment is not None:
        if not callable(augment):
            raise InputError(f"augment must be a function (images, key) -> images, such as "
                             f"shift_images; got {type(augment).__name__} {augment!r:.60}.")
        shape = jax.eval_shape(augment, data.x_train, key).shape  # shapes only, no compute
        if shape != data.x_train.shape:
            raise InputError(f"augment must return the images in their shape, "
                             f"{data.x_train.shape}; {getattr(augment, '__name__', 'it')} "
                             f"returned {shape}.")


def fit(params: Params, data: TrainingData, *, epochs: int = EPOCHS,
        batch_size: int = BATCH_SIZE, step_size: "float | Sequence[float] | None" = None,
        key: jax.Array,
        mode: str = "scan", verbose: bool = False, predict: Predict = batched_predict,
        augment: Augment | None = None, train_metrics: str = "during",
        optimizer: Optimizer | None = None) -> tuple[Params, History]:
    """Train ``params`` on ``data`` with SGD (or ``optimizer``), watching the validation split.

    Args:
      params: list of ``(W, b)`` from ``init_network_params`` (or ``init_cnn_params`` with
        ``predict=batched_predict_cnn``); not modified.
      data: a :class:`~nn_from_scratch.data.Dataset` (train and validation splits).
      epochs: passes over the training set (int >= 1).
      batch_size: examples per step; the shuffled remainder is dropped each epoch.
      step_size: plain SGD's learning rate (finite number > 0; default ``STEP_SIZE``, 0.2),
        or one per epoch (a list or tuple of ``epochs`` numbers), e.g.
        :func:`cosine_schedule`. Leave it out with an ``optimizer``.
      key: PRNG key; epoch ``e`` shuffles with the ``e``-th split of it, so the
        same key gives the same run in every mode.
      mode: ``"eager"``, ``"jit"`` or ``"scan"`` (see the module docstring).
      verbose: print one line per epoch.
      predict: the model, batched: the MLP's ``batched_predict`` (the default),
        or another network's, such as the CNN's ``batched_predict_cnn``.
      augment: ``None`` (the default), or a function ``(images, key) -> images`` of the
        same shape, such as :func:`~nn_from_scratch.augment.shift_images`: each epoch
        trains on ``augment(x_train, k)`` with a fresh key ``k``, so the network sees a
        new variant of every image (jitted; its time counts in the epoch's). The
        validation figures are measured on the images as they are.
      train_metrics: how the history's ``train_loss`` and ``train_accuracy`` are measured.
        ``"during"`` (the default): each step's forward pass already computes its batch's
        loss, and the accuracy comes with it for free; the epoch's figure is their average
        over the batches, as Keras and PyTorch report it. The weights move during the
        epoch, so this average lags a little behind the weights at the epoch's end (and,
        with ``augment``, it is measured on the augmented images the epoch trained on).
        ``"after"``: a second pass over the whole training split with the epoch's final
        weights, exact but costing about a third of an epoch more. Validation is measured
        after every epoch either way.
      optimizer: ``None`` (the default): plain SGD with ``step_size``, as in lessons 08-14.
        Or an :class:`~nn_from_scratch.optim.Optimizer` such as ``adamw(1e-3)``: each step
        adds ``optimizer.update``'s updates, and its state (moments, step count) is carried
        from step to step and epoch to epoch in every mode. Its learning rate, or schedule
        of the step (:func:`~nn_from_scratch.optim.warmup_cosine_schedule`), is its own:
        passing ``step_size`` as well is refused, since one of the two would be ignored.

    Returns:
      ``(params, history)``, a :class:`History`; with an optimizer, its final state is
      ``history.optimizer_state`` (to train on from there). The test split is never looked
      at: evaluate it once, at the end, with :func:`evaluate`.

    Raises:
      DivergedError: when a step's loss is NaN or inf; names the epoch and step
        and carries the history so far.
    """
    _check_fit_args(params, data, epochs, batch_size, key, mode, predict, augment,
                    train_metrics)
    _check_optimizer(optimizer, step_size)
    # (epochs,) numbers, each checked; with an optimizer, unused placeholders
    step_sizes = _epoch_step_sizes(STEP_SIZE if step_size is None else step_size, epochs)
    n, steps = len(data.x_train), len(data.x_train) // batch_size
    start = time.perf_counter()  # the one-off work before epoch 1, measured apart
    y_train = np.asarray(one_hot(data.y_train, data.num_classes))  # (n, k) on the host
    params = jax.tree.map(jnp.copy, params)  # the scan mode donates: keep the caller's arrays
    # what each step carries: the params, or with an optimizer (params, optimizer state)
    carry: Any = params if optimizer is None else (params, optimizer.init(params))
    run_epoch = _RUNNERS[mode](carry, data.x_train, y_train, batch_size, steps,
                               step_sizes[0], predict, optimizer)
    # What every epoch also runs is compiled ahead as well, so that no epoch is billed for
    # it (JAX keeps these programs: the calls below find them compiled).
    _shuffled_batches.lower(key, n, batch_size).compile()
    measured = [(data.x_val, data.y_val)]
    if train_metrics == "after":
        measured.append((data.x_train, data.y_train))
    for x, labels in measured:
        evaluate.lower(params, x, labels, predict).compile()
    if augment is not None:
        x_dev = jax.device_put(data.x_train)
        augment_jit = jit(augment).lower(x_dev, key).compile()
    compile_time = time.perf_counter() - start
    record: dict[str, list[float]] = {name: [] for name in (
        "epoch_time", "train_loss", "train_accuracy", "val_loss", "val_accuracy")}

    def history() -> History:
        return History(mode, batch_size, steps, compile_time,
                       **{name: tuple(values) for name, values in record.items()},
                       train_metrics=train_metrics,
                       optimizer_state=None if optimizer is None else carry[1])

    for epoch in range(1, epochs + 1):
        key, epoch_key = random.split(key)
        # (steps, batch); wait for the shuffle so that it is not billed to the epoch
        batches = jax.block_until_ready(batch_indices(epoch_key, n, batch_size))
        start = time.perf_counter()
        # the epoch's images: None means x_train as it is; augmented, a new variant each epoch
        x_epoch = None if augment is None else augment_jit(x_dev, random.fold_in(epoch_key, 1))
        carry, (losses, accuracies) = jax.block_until_ready(
            run_epoch(carry, batches, step_sizes[epoch - 1], x_epoch))  # each (steps,)
        params = carry if optimizer is None else carry[0]
        record["epoch_time"].append(time.perf_counter() - start)

        finite = np.isfinite(np.asarray(losses))
        if not finite.all():
            bad = int(np.argmin(finite))
            record["epoch_time"].pop()
            with_what = (f"step_size={step_sizes[epoch - 1]}. The steps overshoot: try a "
                         f"smaller step size, e.g. step_size={step_sizes[0] / 10:g}."
                         ) if optimizer is None else (
                         "the optimizer given. The steps overshoot: try a smaller learning "
                         "rate (a tenth), a warm-up (warmup_cosine_schedule) or clipping "
                         "(chain(clip_by_global_norm(1.0), ...)).")
            raise DivergedError(f"The loss became {float(losses[bad])} at epoch {epoch}, step "
                                f"{bad + 1} of {steps}, with {with_what}", history())
        splits = [("val", data.x_val, data.y_val)]
        if train_metrics == "during":  # every batch has the same size: the mean of the means
            record["train_loss"].append(float(np.mean(np.asarray(losses, np.float64))))
            record["train_accuracy"].append(float(np.mean(np.asarray(accuracies, np.float64))))
        else:
            splits.insert(0, ("train", data.x_train, data.y_train))
        for split, x, labels in splits:
            split_loss, split_acc = evaluate(params, x, labels, predict)
            record[f"{split}_loss"].append(float(split_loss))
            record[f"{split}_accuracy"].append(float(split_acc))
        if verbose:
            print(format_epoch(history(), epoch - 1), flush=True)
    return params, history()


def format_epoch(history: History, i: int) -> str:
    """One line describing epoch ``i`` (0-based) of a :class:`History`."""
    return _("epoch {epoch:3d}  {seconds:7.3f} s  train loss {loss:.4f}  train acc {train:.4f}  "
             "val acc {val:.4f}").format(epoch=i + 1, seconds=history.epoch_time[i],
                                         loss=history.train_loss[i],
                                         train=history.train_accuracy[i],
                                         val=history.val_accuracy[i])

