"""Check ``jax.grad`` against finite differences, the way minitorch and micrograd do.

The central difference ``(f(x + h) - f(x - h)) / 2h`` has error O(h²), but in
float32 the subtraction loses about half the digits for small ``h``. So the
check runs in float64 (``jax.enable_x64``), where ``h = 1e-6`` is accurate to
about 1e-9.
"""
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.flatten_util import ravel_pytree

from ._checks import check_key, check_positive_int

__all__ = ["check_grad", "numerical_grad"]


def _to64(tree: Any) -> Any:
    return jax.tree.map(lambda a: jnp.asarray(a, jnp.float64), tree)


def numerical_grad(f: Callable[[jax.Array], Any], x: Any, eps: float = 1e-6) -> np.ndarray:
    """Central-difference gradient of scalar ``f`` at ``x``, every coordinate, in float64.

    Args:
      f: function from an array ``x`` (any shape) to a scalar.
      x: the point, any shape; small (``2 * x.size`` evaluations of ``f``).
      eps: step ``h``.

    Returns:
      NumPy float64 array, same shape as ``x``.
    """
    with jax.enable_x64(True):
        x = np.asarray(x, np.float64)
        g = np.zeros_like(x)
        for i in np.ndindex(x.shape):
            step = np.zeros_like(x)
            step[i] = eps
            g[i] = (float(f(jnp.asarray(x + step))) - float(f(jnp.asarray(x - step)))) / (2 * eps)
        return g


def check_grad(f: Callable[[Any], Any], params: Any, key: jax.Array, num_directions: int = 5,
               eps: float = 1e-6) -> float:
    """Compare ``jax.grad(f)`` with finite differences along random directions.

    For a random unit direction ``v`` (a pytree shaped like ``params``) the
    directional derivative ``grad(f)(p) · v`` must equal
    ``(f(p + eps v) - f(p - eps v)) / 2 eps``. One direction checks every
    parameter at once, so this scales to a whole network.

    Args:
      f: scalar function of a pytree ``params`` (e.g. ``lambda p: loss(p, x, y)``).
      params: pytree of float arrays, e.g. a list of ``(W, b)``.
      key: PRNG key for the directions.
      num_directions: how many random directions (int >= 1).
      eps: finite-difference step, in float64.

    Returns:
      the largest relative error ``|analytic - numeric| / max(|analytic|, |numeric|, 1e-12)``
      over the directions (float). Below about 1e-6 means the gradient is right.
    """
    check_key(key)
    check_positive_int(num_directions, "num_directions")
    with jax.enable_x64(True):
        # One flat float64 vector for all parameters: the directions are drawn and combined
        # in NumPy, so the check costs a few compiles, not a few per leaf and direction.
        flat, unravel = ravel_pytree(_to64(params))  # flat: (n_params,)
        analytic_grad = np.asarray(ravel_pytree(jax.grad(f)(unravel(flat)))[0])
        point = np.asarray(flat)
        worst = 0.0
        for k in jax.random.split(key, num_directions):
            v = np.asarray(jax.random.normal(k, point.shape, jnp.float64))
            v = v / np.linalg.norm(v)  # a random unit direction through every parameter
            analytic = float(analytic_grad @ v)
            plus, minus = (unravel(jnp.asarray(point + sign * eps * v)) for sign in (1, -1))
            numeric = (float(f(plus)) - float(f(minus))) / (2 * eps)
            worst = max(worst, abs(analytic - numeric) / max(abs(analytic), abs(numeric), 1e-12))
        return worst
