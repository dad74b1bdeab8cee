"""One-hot targets, the cross-entropy loss and accuracy, for any network.

``loss`` and ``accuracy`` take the model as its batched predict function, a
``predict(params, images) -> (batch, n_classes)`` log-probabilities: the MLP's
``batched_predict`` by default, the CNN's ``batched_predict_cnn`` in lesson 13.
"""
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
from jax.typing import ArrayLike

from ._checks import InputTypeError
from .model import batched_predict
from .params import Params

__all__ = ["Predict", "accuracy", "loss", "one_hot"]

Predict = Callable[[Any, ArrayLike], jax.Array]
"""A model's batched predict: ``(params, images: (batch, ...)) -> (batch, n_classes)``."""


def one_hot(labels: ArrayLike, k: int, dtype: Any = jnp.float32) -> jax.Array:
    """One-hot encode integer labels.

    Args:
      labels: ``(batch,)`` integers in ``[0, k)``.
      k: number of classes (int).

    Returns:
      ``(batch, k)`` array with a 1 in column ``labels[i]`` of row ``i``.

    Example:
      >>> one_hot(jnp.array([0, 2]), 3)
      Array([[1., 0., 0.],
             [0., 0., 1.]], dtype=float32)
    """
    labels = jnp.asarray(labels)
    if not jnp.issubdtype(labels.dtype, jnp.integer):
        raise InputTypeError(
            f"one_hot takes integer class labels; got dtype {labels.dtype}. "
            f"Convert with labels.astype(int) if they hold whole numbers."
        )
    return jnp.array(labels[:, None] == jnp.arange(k), dtype)


def loss(params: Params, images: ArrayLike, targets: ArrayLike,
         predict: Predict = batched_predict) -> jax.Array:
    """Mean cross-entropy over the batch.

    Args:
      params: list of ``(W, b)``.
      images: ``(batch, n_in)``.
      targets: ``(batch, n_classes)`` one-hot.
      predict: the model, batched (default: the MLP's ``batched_predict``).

    Returns:
      scalar ``-mean_i sum_c targets[i, c] * log p(c | images[i])``.

    The seed tutorial writes ``-jnp.mean(preds * targets)``, which averages over
    the classes too and so is this loss divided by ``n_classes`` (10 for MNIST).
    The minimum is in the same place, but its gradients are 10× smaller, so the
    same step size trains 10× more slowly.
    """
    preds = predict(params, images)  # (batch, n_classes) log-probabilities
    return -jnp.mean(jnp.sum(preds * targets, axis=1))


def accuracy(params: Params, images: ArrayLike, targets: ArrayLike,
             predict: Predict = batched_predict) -> jax.Array:
    """Fraction of images whose most likely class is the target class.

    Args:
      params: list of ``(W, b)``.
      images: ``(batch, n_in)``.
      targets: ``(batch, n_classes)`` one-hot, or ``(batch,)`` integer labels.
      predict: the model, batched (default: the MLP's ``batched_predict``).

    Returns:
      scalar in ``[0, 1]``.
    """
    target_class = jnp.argmax(targets, axis=1) if jnp.ndim(targets) == 2 else targets
    predicted_class = jnp.argmax(predict(params, images), axis=1)
    return jnp.mean(predicted_class == target_class)
