"""Learning-rate schedules: the learning rate as a function of the step, ``schedule(step)``.

An optimizer of :mod:`~nn_from_scratch.optim` takes a number or a schedule; it calls the
schedule with its own step count (0 at the first update), under ``jit`` as well, so a
schedule uses ``jnp``, not ``math``.
"""
from collections.abc import Callable

import jax
import jax.numpy as jnp
from jax.typing import ArrayLike

from ._checks import check_positive_int, check_step_size

__all__ = ["Schedule", "learning_rate_at", "warmup_cosine_schedule"]

Schedule = Callable[[ArrayLike], ArrayLike]  # step (int, from 0) -> learning rate


def learning_rate_at(learning_rate: "float | Schedule", step: ArrayLike) -> ArrayLike:
    """The learning rate for ``step``: the number itself, or ``learning_rate(step)``."""
    return learning_rate(step) if callable(learning_rate) else learning_rate


def warmup_cosine_schedule(peak_value: float, warmup_steps: int, decay_steps: int,
                           init_value: float = 0.0, end_value: float = 0.0) -> Schedule:
    """Warm up, then fall along a cosine (``optax.warmup_cosine_decay_schedule``).

    For ``step`` 0 .. ``warmup_steps``: a straight line from ``init_value`` up to
    ``peak_value`` (Adam's first steps rest on moments of a few batches; small steps while
    they settle keep a transformer from diverging). Then, over the remaining
    ``decay_steps - warmup_steps`` steps (``decay_steps`` counts the warm-up):

        end_value + (peak_value - end_value) * (1 + cos(pi * k / (decay_steps - warmup_steps))) / 2

    with ``k = step - warmup_steps``, and ``end_value`` from then on.

    >>> lr = warmup_cosine_schedule(1e-3, warmup_steps=100, decay_steps=1000)
    >>> float(lr(0)), float(lr(100)), float(lr(1000))
    (0.0, 0.001, 0.0)
    """
    check_step_size(peak_value, "peak_value")
    check_positive_int(warmup_steps, "warmup_steps", minimum=0)
    check_positive_int(decay_steps, "decay_steps", minimum=warmup_steps + 1)
    for value, name in ((init_value, "init_value"), (end_value, "end_value")):
        if value != 0.0:
            check_step_size(value, name)
    decay_span = decay_steps - warmup_steps
    alpha = end_value / peak_value  # where the cosine ends, as a fraction of the peak

    def schedule(step: ArrayLike) -> jax.Array:
        step = jnp.asarray(step)
        warm = init_value + (peak_value - init_value) * step / max(warmup_steps, 1)
        k = jnp.minimum(jnp.asarray(step, jnp.float32) - warmup_steps, decay_span)
        cosine = peak_value * ((1 - alpha) * 0.5 * (1 + jnp.cos(jnp.pi * k / decay_span)) + alpha)
        return jnp.where(step < warmup_steps, warm, cosine)
    return schedule
