"""Parameters of a multi-layer perceptron, made from PRNG keys.

The parameters are a plain list of ``(W, b)`` tuples, one per layer, exactly as in
the JAX MNIST tutorial: ``W`` has shape ``(n_out, n_in)`` and ``b`` has shape
``(n_out,)``, so one layer computes ``W @ x + b`` for one example ``x: (n_in,)``.

Randomness in JAX is explicit: every random draw takes a key, and a key is used
once. To draw several things we ``split`` the key first (lesson 01).
"""
import math
import numbers

import jax
import jax.numpy as jnp
from jax import random

INITS = ("normal", "he", "glorot")


def check_key(key, name="key"):
    """Raise a ``TypeError`` unless ``key`` is a JAX PRNG key.

    Accepts both styles: a typed key from ``jax.random.key(0)`` (shape ``()``,
    dtype ``key<fry>``) and a legacy raw key from ``jax.random.PRNGKey(0)``
    (shape ``(2,)``, dtype ``uint32``). Anything else, such as a plain integer
    seed, is refused with the fix spelled out.
    """
    dtype = getattr(key, "dtype", None)
    shape = getattr(key, "shape", None)
    if dtype is not None and jax.dtypes.issubdtype(dtype, jax.dtypes.prng_key):
        if shape == ():
            return key
    elif dtype == jnp.uint32 and shape == (2,):
        return key
    got = f"{type(key).__name__}" + (f" with shape {shape} and dtype {dtype}" if dtype is not None else f" {key!r}")
    raise TypeError(
        f"{name} must be a JAX PRNG key; got {got}. "
        f"Make one with jax.random.key(seed) (or the older jax.random.PRNGKey(seed)), "
        f"and use jax.random.split(key) to get fresh keys instead of reusing one."
    )


def random_layer_params(m, n, key, scale=1e-2):
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


def layer_scale(m, n, init="normal"):
    """Standard deviation of a layer's weights for an init scheme.

    - ``"normal"``: 0.01 for every layer, as in the seed tutorial. Simple, but the
      signal shrinks by about ``0.01 * sqrt(m)`` per layer, so deep or wide nets
      start with tiny outputs and tiny gradients and learn slowly.
    - ``"he"``: ``sqrt(2 / m)`` (He et al. 2015). It keeps the variance of ReLU
      activations about constant from layer to layer, so training starts fast.
    - ``"glorot"``: ``sqrt(2 / (m + n))`` (Glorot & Bengio 2010), the same idea
      for activations that are symmetric around zero (tanh).
    """
    if init == "normal":
        return 1e-2
    if init == "he":
        return math.sqrt(2.0 / m)
    if init == "glorot":
        return math.sqrt(2.0 / (m + n))
    raise ValueError(f"init must be one of {INITS}; got {init!r}.")


def init_network_params(sizes, key, init="normal"):
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
    sizes = list(sizes)
    if len(sizes) < 2 or not all(
        isinstance(s, numbers.Integral) and not isinstance(s, bool) and s > 0 for s in sizes
    ):
        raise ValueError(
            f"sizes must list at least two positive integers (inputs, ..., outputs); got {sizes}. "
            f"Example: [784, 512, 512, 10]."
        )
    sizes = [int(s) for s in sizes]
    scales = [layer_scale(m, n, init) for m, n in zip(sizes[:-1], sizes[1:])]
    keys = random.split(key, len(sizes) - 1)  # one fresh key per layer
    return [
        random_layer_params(m, n, k, scale)
        for m, n, k, scale in zip(sizes[:-1], sizes[1:], keys, scales)
    ]


def count_params(params):
    """Total number of scalars in a parameter pytree (int)."""
    return sum(leaf.size for leaf in jax.tree.leaves(params))
