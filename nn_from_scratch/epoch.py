"""One step of training and one epoch of steps: what :func:`~nn_from_scratch.train.fit` repeats.

- :func:`update`: the seed tutorial's SGD step, ``params - step_size * grad(loss)``;
- :func:`batch_indices`: a new shuffle of the examples every epoch, cut into full batches;
- :func:`train_epoch`: a whole epoch as ONE compiled program, ``lax.scan`` over the steps
  (lesson 09), and the same with an optimizer of :mod:`~nn_from_scratch.optim` carried along;
- :func:`evaluate`: the loss and accuracy of a whole split, jitted.

Each takes the model as its batched ``predict``, the MLP's ``batched_predict`` by default.
:mod:`~nn_from_scratch.train` runs them: an epoch three ways, epoch after epoch, with a history.
"""
from functools import partial
from typing import Any

import jax
from jax import grad, jit, lax, random
from jax.typing import ArrayLike

from ._checks import InputError, check_key, check_positive_int, check_step_size
from .losses import Predict, accuracy, loss, one_hot
from .model import batched_predict
from .optim import Optimizer, apply_updates
from .params import Params

__all__ = ["batch_indices", "evaluate", "train_epoch", "update"]


def update(params: Params, x: ArrayLike, y: ArrayLike, step_size: float,
           predict: Predict = batched_predict) -> Params:
    """The seed tutorial's SGD step: ``params - step_size * grad(loss)(params, x, y)``.

    Args:
      params: list of ``(W, b)``.
      x: ``(batch, n_in)`` images.
      y: ``(batch, n_classes)`` one-hot targets.
      step_size: learning rate (a number > 0).
      predict: the model, batched (default: the MLP's ``batched_predict``).

    Returns:
      the new list of ``(W, b)``, same shapes as ``params``.
    """
    check_step_size(step_size)
    grads = grad(loss)(params, x, y, predict)
    return [(w - step_size * dw, b - step_size * db)
            for (w, b), (dw, db) in zip(params, grads)]


def _loss_and_accuracy(params: Params, x: ArrayLike, y: ArrayLike,
                       predict: Predict = batched_predict) -> tuple[jax.Array, jax.Array]:
    """``(loss, accuracy)`` of one batch from ONE forward pass: ``y: (batch, n_classes)`` one-hot.

    ``loss`` and ``accuracy`` each call ``predict``; handing both a "model" that returns the
    log-probabilities already computed makes the second call free.
    """
    preds = predict(params, x)  # (batch, n_classes) log-probabilities, computed once

    def computed(_params: Params, _x: ArrayLike) -> jax.Array:
        return preds

    return loss(params, x, y, computed), accuracy(params, x, y, computed)


def _update_with_metrics(params: Params, x: ArrayLike, y: ArrayLike, step_size: float,
                         predict: Predict = batched_predict
                         ) -> tuple[Params, tuple[jax.Array, jax.Array]]:
    """:func:`update`, also returning the batch's ``(loss, accuracy)`` before the step.

    They cost next to nothing: ``value_and_grad`` runs the forward pass that the gradient
    needs anyway and keeps its value, and the accuracy rides along as its auxiliary output
    (``has_aux=True``: returned, not differentiated). ``fit`` averages them over the epoch.
    """
    (value, acc), grads = jax.value_and_grad(_loss_and_accuracy, has_aux=True)(
        params, x, y, predict)
    return [(w - step_size * dw, b - step_size * db)
            for (w, b), (dw, db) in zip(params, grads)], (value, acc)


def batch_indices(key: jax.Array, n: int, batch_size: int) -> jax.Array:
    """Shuffle ``range(n)`` with ``key`` and cut it into full batches.

    Args:
      key: PRNG key; a new key each epoch gives a new order.
      n: number of examples (int).
      batch_size: examples per batch (int); the last ``n % batch_size`` examples
        of the shuffled order are dropped so every batch has the same shape
        (one compiled program serves every step).

    Returns:
      ``(n // batch_size, batch_size)`` int32 indices.
    """
    check_key(key)
    check_positive_int(batch_size, "batch_size")
    if batch_size > n:
        raise InputError(
            f"batch_size must be between 1 and the number of examples ({n}); got {batch_size}.")
    return _shuffled_batches(key, n, batch_size)


@partial(jit, static_argnums=(1, 2))
def _shuffled_batches(key: jax.Array, n: int, batch_size: int) -> jax.Array:
    """:func:`batch_indices`' work, compiled once per ``(n, batch_size)``: the permutation is a
    few dozen operations, which run op by op would cost ~10 ms an epoch in dispatches."""
    steps = n // batch_size
    perm = random.permutation(key, n)  # (n,)
    return perm[: steps * batch_size].reshape(steps, batch_size)


@partial(jit, donate_argnums=0, static_argnames="predict")
def train_epoch(params: Params, x: jax.Array, y: jax.Array, batches: jax.Array,
                step_size: float, predict: Predict = batched_predict
                ) -> tuple[Params, tuple[jax.Array, jax.Array]]:
    """A whole epoch as ONE compiled program: ``lax.scan`` runs one SGD step per batch.

    Args:
      params: list of ``(W, b)``; donated: XLA writes the new parameters into
        their memory, so do not use the arrays you pass in afterwards.
      x: ``(n, n_in)`` all training images, already on the device.
      y: ``(n, n_classes)`` their one-hot targets.
      batches: ``(steps, batch)`` indices from :func:`batch_indices`.
      step_size: learning rate.
      predict: the model, batched (static: one program per model).

    Returns:
      ``(params, (losses, accuracies))``, each ``(steps,)``: every batch's loss and accuracy,
      measured by the forward pass of its own step, before that step's update.
    """
    def step(p, batch):  # batch: (batch,) indices
        return _update_with_metrics(p, x[batch], y[batch], step_size, predict)

    # unroll=2: two steps per loop iteration give XLA room to overlap them (~3% faster on CPU).
    return lax.scan(step, params, batches, unroll=2)


Carry = tuple[Params, Any]  # (params, optimizer state): what an optimizer's step carries


def _optimizer_step(carry: Carry, x: ArrayLike, y: ArrayLike, step_size: Any,
                    predict: Predict, optimizer: Optimizer
                    ) -> tuple[Carry, tuple[jax.Array, jax.Array]]:
    """:func:`_update_with_metrics` with an :class:`~nn_from_scratch.optim.Optimizer`: the
    gradient goes through ``optimizer.update``, whose state is carried with the params.
    ``step_size`` is not used (the learning rate is the optimizer's own)."""
    params, state = carry
    (value, acc), grads = jax.value_and_grad(_loss_and_accuracy, has_aux=True)(
        params, x, y, predict)
    updates, state = optimizer.update(grads, state, params)
    return (apply_updates(params, updates), state), (value, acc)


@partial(jit, donate_argnums=0, static_argnames=("predict", "optimizer"))
def _optimizer_epoch(carry: Carry, x: jax.Array, y: jax.Array, batches: jax.Array,
                     step_size: Any, predict: Predict, optimizer: Optimizer
                     ) -> tuple[Carry, tuple[jax.Array, jax.Array]]:
    """:func:`train_epoch` with an optimizer: ``lax.scan`` carries ``(params, state)``."""
    def step(c, batch):  # batch: (batch,) indices
        return _optimizer_step(c, x[batch], y[batch], step_size, predict, optimizer)

    return lax.scan(step, carry, batches, unroll=2)


@partial(jit, static_argnames="predict")
def evaluate(params: Params, x: ArrayLike, labels: ArrayLike,
             predict: Predict = batched_predict) -> tuple[jax.Array, jax.Array]:
    """``(mean loss, accuracy)`` on ``x: (n, n_in)`` with integer ``labels: (n,)``, jitted.

    ``predict`` is the model, batched (default: the MLP's ``batched_predict``).
    """
    targets = one_hot(labels, params[-1][1].shape[0])
    return loss(params, x, targets, predict), accuracy(params, x, labels, predict)
