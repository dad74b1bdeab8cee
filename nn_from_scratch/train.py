"""Training: the SGD ``update``, one epoch three ways, and ``fit`` with a history.

The three ways to run an epoch give the same parameters (up to float rounding)
and differ only in how much Python sits between the steps (lessons 06 and 07):

- ``"eager"``: every jnp operation is dispatched one by one from Python;
- ``"jit"``: one compiled program per step, batches fed from host NumPy (the
  seed tutorial's loop);
- ``"scan"``: one compiled program per epoch; the data stays on the device and
  ``lax.scan`` runs the steps, with the old parameters' memory donated.
"""
import math
import time

import jax
import jax.numpy as jnp
import numpy as np
from jax import grad, jit, lax, random, value_and_grad
from tqdm import tqdm

from .data import batch_indices
from .losses import accuracy, loss, one_hot
from .params import check_key

MODES = ("eager", "jit", "scan")
# Defaults that reach about 0.97 test accuracy on the bundled digits with He init
# (measured over 5 seeds: 0.967-0.978) and that suit MNIST too.
EPOCHS, BATCH_SIZE, STEP_SIZE = 30, 128, 0.2


class DivergedError(ValueError):
    """The loss became NaN or infinite during training."""


def check_step_size(step_size):
    """Raise ``ValueError`` unless ``step_size`` is a finite number > 0 (Python numbers only)."""
    if isinstance(step_size, (int, float)) and not (math.isfinite(step_size) and step_size > 0):
        raise ValueError(
            f"step_size must be a finite number greater than 0; got {step_size}. "
            f"Typical values are 0.01 to 0.5, e.g. step_size=0.1."
        )


def apply_gradients(params, grads, step_size):
    """Plain SGD: ``W - step_size * dW`` and ``b - step_size * db`` for every layer."""
    return [(w - step_size * dw, b - step_size * db) for (w, b), (dw, db) in zip(params, grads)]


def sgd_step(params, x, y, step_size):
    """One step of stochastic gradient descent, also returning the batch loss.

    Args:
      params: list of ``(W, b)``.
      x: ``(batch, n_in)`` images.
      y: ``(batch, n_classes)`` one-hot targets.
      step_size: learning rate (float).

    Returns:
      ``(new_params, loss_value)``. ``value_and_grad`` gives the loss for free:
      the forward pass is needed for the gradient anyway.
    """
    value, grads = value_and_grad(loss)(params, x, y)
    return apply_gradients(params, grads, step_size), value


def update(params, x, y, step_size):
    """The seed tutorial's update: ``params - step_size * grad(loss)(params, x, y)``.

    Args:
      params: list of ``(W, b)``.
      x: ``(batch, n_in)`` images.
      y: ``(batch, n_classes)`` one-hot targets.
      step_size: learning rate (float > 0).

    Returns:
      the new list of ``(W, b)``, same shapes as ``params``.
    """
    check_step_size(step_size)
    grads = grad(loss)(params, x, y)
    return apply_gradients(params, grads, step_size)


def _scan_epoch(params, x, y, idx, step_size):
    """All steps of an epoch in one program. ``x: (n, n_in)``, ``y: (n, k)``, ``idx: (steps, batch)``."""
    def body(p, batch_idx):  # batch_idx: (batch,)
        return sgd_step(p, x[batch_idx], y[batch_idx], step_size)

    # unroll=2: two steps per loop iteration give XLA room to overlap them (~3% faster on CPU).
    return lax.scan(body, params, idx, unroll=2)  # -> (params, losses: (steps,))


# Donating params lets XLA write the new parameters into the old ones' memory.
train_epoch_scan = jit(_scan_epoch, donate_argnums=0)
jit_sgd_step = jit(sgd_step)


@jit
def evaluate(params, x, labels):
    """``(mean loss, accuracy)`` on ``x: (n, n_in)`` with integer ``labels: (n,)``, jitted."""
    targets = one_hot(labels, params[-1][1].shape[0])
    return loss(params, x, targets), accuracy(params, x, labels)


def _check_fit_args(params, data, epochs, batch_size, step_size, key, mode):
    check_step_size(step_size)
    check_key(key)
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}; got {mode!r}.")
    if not (isinstance(epochs, int) and epochs >= 1):
        raise ValueError(f"epochs must be a whole number >= 1; got {epochs!r}.")
    sizes = [params[0][0].shape[1]] + [b.shape[0] for _, b in params]
    if sizes[0] != data.num_features or sizes[-1] != data.num_classes:
        raise ValueError(
            f"Layer sizes {sizes} do not match the {data.name} data: it has "
            f"{data.num_features} pixels per image and {data.num_classes} classes, so the "
            f"sizes must start with {data.num_features} and end with {data.num_classes}, "
            f"e.g. {[data.num_features, *sizes[1:-1], data.num_classes]}."
        )
    if not 0 < batch_size <= len(data.x_train):
        raise ValueError(
            f"batch_size must be between 1 and the {len(data.x_train)} training examples; "
            f"got {batch_size}."
        )


def fit(params, data, *, epochs=EPOCHS, batch_size=BATCH_SIZE, step_size=STEP_SIZE, key,
        mode="scan", verbose=False, progress=False):
    """Train ``params`` on ``data`` with SGD and record what happened.

    Args:
      params: list of ``(W, b)`` from ``init_network_params``; not modified.
      data: a :class:`~nn_from_scratch.data.Dataset`.
      epochs: passes over the training set (int >= 1).
      batch_size: examples per step; the shuffled remainder is dropped each epoch.
      step_size: learning rate (finite float > 0).
      key: PRNG key; epoch ``e`` shuffles with the ``e``-th split of it, so the
        same key gives the same run in every mode.
      mode: ``"eager"``, ``"jit"`` or ``"scan"`` (see the module docstring).
      verbose: print one line per epoch.
      progress: show a tqdm progress bar over the epochs.

    Returns:
      ``(params, history)``; ``history`` maps ``"epoch_time"`` (seconds of
      training per epoch, compile time excluded), ``"train_loss"``,
      ``"train_accuracy"``, ``"test_loss"``, ``"test_accuracy"`` to per-epoch
      lists, and ``"compile_time"`` (seconds, 0.0 in eager mode), ``"mode"``,
      ``"steps_per_epoch"``, ``"batch_size"`` to single values.

    Raises:
      DivergedError: when a step's loss is NaN or inf; names the epoch and step.
    """
    _check_fit_args(params, data, epochs, batch_size, step_size, key, mode)
    n, k = len(data.x_train), data.num_classes
    y_train = np.asarray(one_hot(data.y_train, k))  # (n, k) on the host
    steps = n // batch_size
    history = {"epoch_time": [], "train_loss": [], "train_accuracy": [], "test_loss": [],
               "test_accuracy": [], "compile_time": 0.0, "mode": mode,
               "steps_per_epoch": steps, "batch_size": batch_size}

    # Compile ahead of time (lower + compile) so compile time is measured apart.
    start = time.perf_counter()
    if mode == "scan":
        params = jax.tree.map(jnp.copy, params)  # donation must not eat the caller's arrays
        x_dev, y_dev = jax.device_put(data.x_train), jax.device_put(y_train)
        example_idx = jnp.zeros((steps, batch_size), jnp.int32)
        epoch_fn = train_epoch_scan.lower(params, x_dev, y_dev, example_idx, step_size).compile()
    elif mode == "jit":
        step_fn = jit_sgd_step.lower(params, data.x_train[:batch_size], y_train[:batch_size],
                                     step_size).compile()
    else:
        step_fn = sgd_step
    if mode != "eager":
        history["compile_time"] = time.perf_counter() - start

    epochs_iter = tqdm(range(1, epochs + 1), desc="training", unit="epoch", disable=not progress)
    for epoch in epochs_iter:
        key, epoch_key = random.split(key)
        # (steps, batch); wait for the shuffle so that it is not billed to the epoch
        idx = jax.block_until_ready(batch_indices(epoch_key, n, batch_size))
        start = time.perf_counter()
        if mode == "scan":
            params, losses = epoch_fn(params, x_dev, y_dev, idx, step_size)
        else:
            losses = []
            for batch_idx in np.asarray(idx):
                params, value = step_fn(params, data.x_train[batch_idx], y_train[batch_idx],
                                        step_size)
                losses.append(value)
            losses = jnp.stack(losses)
        jax.block_until_ready(params)
        history["epoch_time"].append(time.perf_counter() - start)

        finite = np.isfinite(np.asarray(losses))
        if not finite.all():
            bad = int(np.argmin(finite))
            raise DivergedError(
                f"The loss became {float(losses[bad])} at epoch {epoch}, step {bad + 1} of "
                f"{steps}, with step_size={step_size}. The steps overshoot: try a smaller "
                f"step size, e.g. step_size={step_size / 10:g}."
            )
        for split, x, labels in (("train", data.x_train, data.y_train),
                                 ("test", data.x_test, data.y_test)):
            split_loss, split_acc = evaluate(params, x, labels)
            history[f"{split}_loss"].append(float(split_loss))
            history[f"{split}_accuracy"].append(float(split_acc))
        epochs_iter.set_postfix(test_acc=f"{history['test_accuracy'][-1]:.4f}")
        if verbose:
            tqdm.write(format_epoch(history, epoch - 1))
    return params, history


def format_epoch(history, i):
    """One line describing epoch ``i`` (0-based) of a ``fit`` history."""
    return (f"epoch {i + 1:3d}  {history['epoch_time'][i]:7.3f} s  "
            f"loss {history['train_loss'][i]:.4f}  "
            f"train acc {history['train_accuracy'][i]:.4f}  "
            f"test acc {history['test_accuracy'][i]:.4f}")
