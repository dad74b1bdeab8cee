"""Parameters of a multi-layer perceptron, made from PRNG keys.

The parameters are a plain list of ``(W, b)`` tuples, one per layer, exactly as in
the JAX MNIST tutorial: ``W`` has shape ``(n_out, n_in)`` and ``b`` has shape
``(n_out,)``, so one layer computes ``W @ x + b`` for one example ``x: (n_in,)``.

Randomness in JAX is explicit: every random draw takes a key, and a key is used
once. To draw several things we ``split`` the key first (lesson 01).
"""
import math
from collections.abc import Sequence
from typing import TypeAlias

import jax
from jax import random

from ._checks import InputError, check_choice, check_key, check_positive_int

__all__ = ["INITS", "Params", "count_params", "init_network_params", "layer_scale",
           "random_layer_params"]

Params: TypeAlias = list[tuple[jax.Array, jax.Array]]
"""A network's parameters: one ``(W: (n_out, n_in), b: (n_out,))`` tuple per layer."""

INITS = ("normal", "he", "glorot")


def random_layer_params(m: int, n: int, key: jax.Array,
                        scale: float = 1e-2) -> tuple[jax.Array, jax.Array]:
    """Random weights and biases for one dense layer from ``m`` inputs to ``n`` outputs.

    Args:
      m: number of inputs (int).
      n: number of outputs (int).
      key: a PRNG key; it is split in two so W and b get independent draws.
      scale: standard deviation of the normal draws (float).

    Returns:
      ``(W, b)`` with ``W: (n, m)`` and ``b: (n,)``, both float32.

    Example:
      >>> W, b = random_layer_params(784, 512, jax.random.key(0))
      >>> W.shape, b.shape
      ((512, 784), (512,))
    """
    check_key(key)
    w_key, b_key = random.split(key)
    return scale * random.normal(w_key, (n, m)), scale * random.normal(b_key, (n,))


def layer_scale(m: int, n: int, init: str = "normal") -> float:
    """Standard deviation of a layer's weights for an init scheme.

    - ``"normal"``: 0.01 for every layer, as in the seed tutorial. Simple, but the
      signal shrinks by about ``0.01 * sqrt(m)`` per layer, so deep or wide nets
      start with tiny outputs and tiny gradients and learn slowly.
    - ``"he"``: ``sqrt(2 / m)`` (He et al. 2015). It keeps the variance of ReLU
      activations about constant from layer to layer, so training starts fast.
    - ``"glorot"``: ``sqrt(2 / (m + n))`` (Glorot & Bengio 2010), the same idea
      for activations that are symmetric around zero (tanh).
    """
    check_choice(init, "init", INITS)
    if init == "he":
        return math.sqrt(2.0 / m)
    if init == "glorot":
        return math.sqrt(2.0 / (m + n))
    return 1e-2


def init_network_params(sizes: Sequence[int], key: jax.Array, init: str = "normal") -> Params:
    """Initialise all layers of an MLP with layer widths ``sizes``.

    Args:
      sizes: layer widths, input first, e.g. ``[784, 512, 512, 10]``.
      key: a PRNG key; split into one key per layer, so no key is used twice.
      init: ``"normal"`` (scale 0.01, the seed tutorial), ``"he"`` or
        ``"glorot"``; see :func:`layer_scale` for why the scale matters.

    Returns:
      A list of ``len(sizes) - 1`` tuples ``(W, b)``; layer ``i`` has
      ``W: (sizes[i+1], sizes[i])`` and ``b: (sizes[i+1],)``.

    Example:
      >>> params = init_network_params([784, 512, 512, 10], jax.random.key(0))
      >>> [W.shape for W, b in params]
      [(512, 784), (512, 512), (10, 512)]
    """
    check_key(key)
    given = list(sizes)
    try:
        sizes = [check_positive_int(s, "a layer size") for s in given]
    except InputError:
        sizes = []
    if len(sizes) < 2:
        raise InputError(
            f"sizes must list at least two positive integers (inputs, ..., outputs); got "
            f"{given}. Example: [784, 512, 512, 10].")
    scales = [layer_scale(m, n, init) for m, n in zip(sizes[:-1], sizes[1:])]
    keys = random.split(key, len(sizes) - 1)  # one fresh key per layer
    return [
        random_layer_params(m, n, k, scale)
        for m, n, k, scale in zip(sizes[:-1], sizes[1:], keys, scales)
    ]


def count_params(params: Params) -> int:
    """Total number of scalars in a parameter pytree (int)."""
    return sum(leaf.size for leaf in jax.tree.leaves(params))
