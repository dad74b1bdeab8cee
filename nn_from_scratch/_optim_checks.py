"""Checks of what the optimizers are given, with errors for people (see :mod:`._checks`).

They run when an optimizer is made or traced, never per number: tree structures and shapes
are known at trace time, so under ``jit`` they cost nothing per step.
"""
import math
from typing import Any

import jax

from ._checks import InputError, InputTypeError, _as_real_scalar, check_step_size


def _structure(tree: Any) -> Any:
    """The tree's structure (a ``PyTreeDef``: comparable with ``==``, printable)."""
    return jax.tree.structure(tree)


def check_learning_rate(learning_rate: Any) -> None:
    """A number > 0, or a schedule whose value at step 0 is a finite number >= 0."""
    if not callable(learning_rate):
        check_step_size(learning_rate, "learning_rate")
        return
    value = _as_real_scalar(learning_rate(0), "learning_rate(0)", "0.001")
    if value is not None and not (math.isfinite(value) and value >= 0):
        raise InputError(f"the learning_rate schedule gives {value} at step 0; it must give "
                         f"finite numbers >= 0, e.g. warmup_cosine_schedule(1e-3, 100, 1000).")


def check_decay(value: Any, name: str) -> None:
    """A decay rate of a running mean (``beta``, ``b1``, ``b2``): a number in [0, 1)."""
    number = _as_real_scalar(value, name, "0.9")
    if number is not None and not 0 <= number < 1:
        raise InputError(f"{name} must be in [0, 1), the share of the running mean kept each "
                         f"step; got {value}. Typical: 0.9 (b2: 0.999).")


def _shapes(tree: Any) -> str:
    leaves = jax.tree.leaves(tree)
    shown = ", ".join(str(tuple(getattr(leaf, "shape", ()))) for leaf in leaves[:6])
    more = f", ... ({len(leaves)} in all)" if len(leaves) > 6 else ""
    return f"{len(leaves)} leaves shaped [{shown}{more}]"


def check_same_tree(tree: Any, name: str, reference: Any, reference_name: str,
                    params: Any = None) -> None:
    """Refuse ``tree`` unless it has the structure and leaf shapes of ``reference`` (and of
    ``params`` when given): grads of other parameters, or a state made for other ones."""
    for other, other_name in ((reference, reference_name), (params, "params")):
        if other is None:
            continue
        same = _structure(tree) == _structure(other) and all(
            getattr(a, "shape", ()) == getattr(b, "shape", ())
            for a, b in zip(jax.tree.leaves(tree), jax.tree.leaves(other)))
        if not same:
            raise InputError(
                f"{name} and {other_name} do not match: {name} has {_shapes(tree)}, "
                f"{other_name} has {_shapes(other)}. Take the grads of the params you train "
                f"(grad(loss)(params, ...)) and make the state from them (init(params)).")


def check_mask(mask: Any, params: Any) -> Any:
    """AdamW's mask: a pytree of bools shaped like ``params``; returned with Python bools."""
    if _structure(mask) != _structure(params):
        raise InputError(
            f"adamw's mask must have the structure of the params, one bool per array: the "
            f"params are {_structure(params)}, the mask is {_structure(mask)}. "
            f"Build it with jax.tree.map(lambda p: p.ndim >= 2, params), or pass that function.")
    leaves = jax.tree.leaves(mask)
    if not all(isinstance(leaf, bool) or jax.numpy.issubdtype(getattr(leaf, "dtype", float),
                                                               jax.numpy.bool_)
               for leaf in leaves):
        raise InputTypeError(f"adamw's mask must hold True or False for each array; got "
                             f"{[type(leaf).__name__ for leaf in leaves][:6]}.")
    return jax.tree.map(bool, mask)


def check_optimizers(optimizers: tuple) -> None:
    """``chain``'s arguments: one or more optimizers (objects with ``init`` and ``update``)."""
    if not optimizers:
        raise InputError("chain needs at least one optimizer, e.g. chain(clip_by_global_norm("
                         "1.0), adam(1e-3)).")
    for i, opt in enumerate(optimizers):
        if not (callable(getattr(opt, "init", None)) and callable(getattr(opt, "update", None))):
            raise InputTypeError(f"chain's argument {i} is {type(opt).__name__} {opt!r:.60}, "
                                 f"not an optimizer; give optimizers such as adam(1e-3), not "
                                 f"the function adam itself or a learning rate.")
