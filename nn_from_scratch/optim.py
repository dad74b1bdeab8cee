"""Optimizers from scratch: SGD, momentum, RMSProp, Adam and AdamW as pure functions.

Each optimizer is a pair of pure functions over pytrees, the shape Optax uses:

- ``init(params) -> state``: the optimizer's memory (moments, a step count), a pytree;
- ``update(grads, state, params=None) -> (updates, state)``: what to ADD to the
  parameters, and the new memory. :func:`apply_updates` adds them.

The maths is written for ONE parameter (``*_step``: ``g`` a gradient, ``p`` the parameter,
arrays of any shape), then lifted to the whole list of ``(W, b)`` leaf by leaf. With
``t`` the step (1, 2, ...) and ``lr`` the learning rate (a number, or a schedule of the step)::

    sgd       u = -lr g
    momentum  v = g + beta v;  u = -lr v              (nesterov: u = -lr (g + beta v))
    rmsprop   s = decay s + (1 - decay) g^2;  u = -lr g / sqrt(s + eps)
    adam      m = b1 m + (1 - b1) g;  s = b2 s + (1 - b2) g^2
              u = -lr m_hat / (sqrt(s_hat) + eps),  m_hat = m / (1 - b1^t), s_hat = s / (1 - b2^t)
    adamw     u = adam's u - lr * weight_decay * p    (decoupled: the decay skips m and s)

Every one gives the same numbers as its Optax namesake (``tests/test_optim.py``), except that
``adamw`` by default decays matrices only, where ``optax.adamw`` without a mask decays every
parameter.

    >>> opt = adam(1e-3)
    >>> state = opt.init(params)
    >>> updates, state = opt.update(grads, state, params)
    >>> params = apply_updates(params, updates)
"""
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from . import _optim_checks as checks
from ._checks import check_step_size
from .schedules import Schedule, learning_rate_at, warmup_cosine_schedule

__all__ = ["Optimizer", "adam", "adam_step", "adamw", "apply_updates", "chain",
           "clip_by_global_norm", "default_mask", "global_norm", "momentum", "momentum_step",
           "rmsprop", "rmsprop_step", "sgd", "warmup_cosine_schedule"]

Params = Any  # a pytree of arrays, e.g. the MLP's list of (W, b)
Updates = Any  # a pytree shaped like the params: what to add to them
State = Any  # a pytree: what an optimizer remembers between steps


class Optimizer(NamedTuple):
    """An optimizer as two pure functions (like ``optax.GradientTransformation``).

    ``init(params) -> state``; ``update(grads, state, params=None) -> (updates, state)``.
    """

    init: Callable[[Params], State]
    update: Callable[..., tuple[Updates, State]]


class AdamState(NamedTuple):
    """Adam's memory: the step ``count`` (int32, ``()``), and ``mu`` (m) and ``nu`` (s),
    each a pytree shaped like the params. SGD keeps only ``count``; momentum keeps its
    velocity in ``mu``; RMSProp its mean square in ``nu``."""

    count: jax.Array  # type: ignore[assignment]  # Optax's name; shadows tuple.count
    mu: Params = None
    nu: Params = None


def apply_updates(params: Params, updates: Updates) -> Params:
    """``params + updates``, leaf by leaf (``optax.apply_updates``)."""
    checks.check_same_tree(updates, "updates", params, "params")
    return jax.tree.map(lambda p, u: (p + u).astype(p.dtype), params, updates)


def global_norm(tree: Any) -> jax.Array:
    """``sqrt(sum of x**2 over every number in every leaf)``: the length of the whole tree,
    seen as one long vector. Returns a ``()`` array."""
    return jnp.sqrt(sum(jnp.sum(jnp.square(leaf)) for leaf in jax.tree.leaves(tree)))


# ---- ONE parameter: each line a formula (g: gradient, p: parameter, any shape) ----

def momentum_step(g, v, lr, beta, nesterov=False):
    """``(update, v)``: the velocity ``v = g + beta v`` (a running sum of gradients) and the
    step ``-lr v``, or with ``nesterov`` the look-ahead ``-lr (g + beta v)``."""
    v = g + beta * v
    return -lr * (g + beta * v if nesterov else v), v


def rmsprop_step(g, s, lr, decay, eps):
    """``(update, s)``: ``s`` the running mean of ``g**2``; each coordinate's step divided by
    its own root mean square, so steep and flat directions move alike."""
    s = decay * s + (1 - decay) * g**2
    return -lr * g / jnp.sqrt(s + eps), s


def adam_step(g, m, s, t, lr, b1, b2, eps):
    """``(update, m, s)``: momentum's mean ``m`` and RMSProp's ``s``, both corrected for
    starting at zero (``1 - b**t``, ``t`` = 1, 2, ...)."""
    m = b1 * m + (1 - b1) * g
    s = b2 * s + (1 - b2) * g**2
    m_hat, s_hat = m / (1 - b1**t), s / (1 - b2**t)
    return -lr * m_hat / (jnp.sqrt(s_hat) + eps), m, s


def _per_leaf(step: Callable[..., tuple], *trees: Any) -> tuple[Any, ...]:
    """Run ``step`` on every leaf of ``trees`` (same structure) and regroup its outputs:
    ``(tree of first outputs, tree of second outputs, ...)``, each shaped like ``trees[0]``."""
    treedef = jax.tree.structure(trees[0])
    results = [step(*leaves) for leaves in zip(*(jax.tree.leaves(t) for t in trees))]
    return tuple(jax.tree.unflatten(treedef, list(column)) for column in zip(*results))


def _zeros(params: Params) -> Params:
    return jax.tree.map(jnp.zeros_like, params)


def _start(params: Params, *moments: str) -> AdamState:
    """A fresh state: step 0, and zeros shaped like ``params`` for each named moment."""
    return AdamState(jnp.zeros([], jnp.int32), **{name: _zeros(params) for name in moments})


# ---- the pytree: each optimizer maps its one-parameter step over the leaves ----

def sgd(learning_rate: "float | Schedule") -> Optimizer:
    """Plain SGD: ``u = -lr g``. ``learning_rate``: a number > 0 or ``schedule(step)``."""
    checks.check_learning_rate(learning_rate)

    def update(grads, state, params=None):
        checks.check_same_tree(grads, "grads", params, "params")
        lr = learning_rate_at(learning_rate, state.count)
        return jax.tree.map(lambda g: -lr * g, grads), AdamState(state.count + 1)
    return Optimizer(lambda params: _start(params), update)


def momentum(learning_rate: "float | Schedule", beta: float = 0.9,
             nesterov: bool = False) -> Optimizer:
    """Heavy-ball momentum (``optax.sgd(lr, momentum=beta, nesterov=...)``): with a steady
    gradient the step grows to ``lr / (1 - beta)``, 10x ``lr`` at ``beta = 0.9``."""
    checks.check_learning_rate(learning_rate)
    checks.check_decay(beta, "beta")

    def update(grads, state, params=None):
        checks.check_same_tree(grads, "grads", state.mu, "the state's velocity", params)
        lr = learning_rate_at(learning_rate, state.count)
        updates, v = _per_leaf(lambda g, v: momentum_step(g, v, lr, beta, nesterov),
                               grads, state.mu)
        return updates, AdamState(state.count + 1, mu=v)
    return Optimizer(lambda params: _start(params, "mu"), update)


def rmsprop(learning_rate: "float | Schedule", decay: float = 0.9,
            eps: float = 1e-8) -> Optimizer:
    """RMSProp (``optax.rmsprop``, ``eps`` inside the square root as there)."""
    checks.check_learning_rate(learning_rate)
    checks.check_decay(decay, "decay")

    def update(grads, state, params=None):
        checks.check_same_tree(grads, "grads", state.nu, "the state's mean square", params)
        lr = learning_rate_at(learning_rate, state.count)
        updates, s = _per_leaf(lambda g, s: rmsprop_step(g, s, lr, decay, eps),
                               grads, state.nu)
        return updates, AdamState(state.count + 1, nu=s)
    return Optimizer(lambda params: _start(params, "nu"), update)


def adam(learning_rate: "float | Schedule", b1: float = 0.9, b2: float = 0.999,
         eps: float = 1e-8) -> Optimizer:
    """Adam with bias correction (``optax.adam``). A step is about ``lr`` per coordinate,
    about ``(1 - b1) / sqrt(1 - b2)`` ~ 3.16 ``lr`` after one sudden large gradient, and more
    when gradients keep growing."""
    return adamw(learning_rate, b1, b2, eps, weight_decay=0.0)


def default_mask(params: Params) -> Any:
    """AdamW's default: decay the matrices (``ndim >= 2``), not biases or norm scales."""
    return jax.tree.map(lambda p: jnp.ndim(p) >= 2, params)


def adamw(learning_rate: "float | Schedule", b1: float = 0.9, b2: float = 0.999,
          eps: float = 1e-8, weight_decay: float = 1e-4,
          mask: "Any | Callable[[Params], Any] | None" = None) -> Optimizer:
    """AdamW (``optax.adamw``): Adam, plus ``-lr * weight_decay * p`` on every parameter
    where ``mask`` is True. The decay is *decoupled*: it skips Adam's moments, so unlike
    L2 in the loss it is not divided by ``sqrt(s_hat)``. ``mask``: a pytree of bools shaped
    like the params, or ``mask(params)`` giving one; default :func:`default_mask`."""
    checks.check_learning_rate(learning_rate)
    checks.check_decay(b1, "b1")
    checks.check_decay(b2, "b2")
    if weight_decay != 0.0:
        check_step_size(weight_decay, "weight_decay")
    mask_of = mask if callable(mask) else (lambda params: mask)
    mask_of = default_mask if mask is None else mask_of

    def update(grads, state, params=None):
        checks.check_same_tree(grads, "grads", state.mu, "the state's moments", params)
        lr = learning_rate_at(learning_rate, state.count)
        updates, m, s = _per_leaf(
            lambda g, m, s: adam_step(g, m, s, state.count + 1, lr, b1, b2, eps),
            grads, state.mu, state.nu)
        if weight_decay:
            if params is None:
                raise TypeError("adamw's update needs the params to decay them: call "
                                "update(grads, state, params).")
            decays = checks.check_mask(mask_of(params), params)
            updates = jax.tree.map(lambda u, p, d: u - lr * weight_decay * p if d else u,
                                   updates, params, decays)
        return updates, AdamState(state.count + 1, mu=m, nu=s)
    return Optimizer(lambda params: _start(params, "mu", "nu"), update)


def clip_by_global_norm(max_norm: float) -> Optimizer:
    """Scale the whole gradient down to length ``max_norm`` when it is longer (no state):
    ``g * max_norm / global_norm(g)``, the direction kept. Put it first in :func:`chain`."""
    check_step_size(max_norm, "max_norm")

    def update(grads, state, params=None):
        norm = global_norm(grads)
        return jax.tree.map(lambda g: jnp.where(norm < max_norm, g, g / norm * max_norm),
                            grads), state
    return Optimizer(lambda params: (), update)


def chain(*optimizers: Optimizer) -> Optimizer:
    """One optimizer that runs ``optimizers`` in turn, each on the updates of the one
    before (``optax.chain``): ``chain(clip_by_global_norm(1.0), adamw(1e-3))``."""
    checks.check_optimizers(optimizers)

    def init(params):
        return tuple(opt.init(params) for opt in optimizers)

    def update(grads, state, params=None):
        new_state = []
        for opt, opt_state in zip(optimizers, state, strict=True):
            grads, opt_state = opt.update(grads, opt_state, params)
            new_state.append(opt_state)
        return grads, tuple(new_state)
    return Optimizer(init, update)
