"""The multi-layer perceptron: ``relu``, ``predict`` for ONE example, and its batched form.

``predict`` is written for a single example, the way the maths is written on
paper; ``vmap`` turns it into a function of a batch without touching the code.
"""
import jax
import jax.numpy as jnp
import numpy as np
from jax import vmap
from jax.scipy.special import logsumexp
from jax.typing import ArrayLike

from ._checks import InputError
from .params import Params

__all__ = ["batched_predict", "predict", "relu"]


def relu(x: ArrayLike) -> jax.Array:
    """Rectified linear unit, ``max(0, x)`` elementwise. ``x``: any shape."""
    return jnp.maximum(0, x)


def _check_input(params: Params, x: ArrayLike, expected_ndim: int, fn_name: str) -> None:
    """Clear errors for the two mistakes everyone makes: batch vs one example, wrong width."""
    n_in = params[0][0].shape[1]  # W of the first layer: (n_out, n_in)
    shape = np.shape(x)
    if len(shape) != expected_ndim:
        if expected_ndim == 1:
            hint = "Use batched_predict for a batch, or pass one row such as x[0]."
            want = f"ONE example of shape ({n_in},)"
        else:
            hint = "Use predict for one example, or add a batch axis with x[None, :]."
            want = f"a batch of shape (batch, {n_in})"
        raise InputError(f"{fn_name} takes {want}; got {shape}. {hint}")
    if shape[-1] != n_in:
        raise InputError(
            f"{fn_name}: the first layer expects {n_in} input features but the data has "
            f"{shape[-1]} (got shape {shape}). The first entry of the layer sizes "
            f"must equal the number of pixels per image, e.g. sizes=[{shape[-1]}, 512, 512, 10]."
        )


def predict(params: Params, image: ArrayLike) -> jax.Array:
    """Log-probabilities of each class for ONE flattened image.

    Args:
      params: list of ``(W, b)`` with ``W: (n_out, n_in)``, ``b: (n_out,)``.
      image: ``(n_in,)``, e.g. ``(784,)`` for a 28×28 MNIST digit.

    Returns:
      ``(n_classes,)`` log-probabilities: ``logits - logsumexp(logits)``, the
      log-softmax, computed stably (no ``exp`` of large numbers).

    Example:
      >>> predict(params, x_train[0]).shape
      (10,)
    """
    _check_input(params, image, 1, "predict")
    activations = image  # (n_in,)
    for w, b in params[:-1]:
        outputs = jnp.dot(w, activations) + b  # (n_out,)
        activations = relu(outputs)
    final_w, final_b = params[-1]
    logits = jnp.dot(final_w, activations) + final_b  # (n_classes,)
    return logits - logsumexp(logits)


# vmap maps predict over axis 0 of the images and shares (None) the params.
_vmapped_predict = vmap(predict, in_axes=(None, 0))


def batched_predict(params: Params, images: ArrayLike) -> jax.Array:
    """``predict`` for a batch: ``vmap(predict, in_axes=(None, 0))``.

    Args:
      params: list of ``(W, b)`` as for :func:`predict`.
      images: ``(batch, n_in)``.

    Returns:
      ``(batch, n_classes)`` log-probabilities, row ``i`` equal to
      ``predict(params, images[i])``.
    """
    _check_input(params, images, 2, "batched_predict")
    return _vmapped_predict(params, images)
