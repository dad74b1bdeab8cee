"""How a check finds the library's own code in an answer (``_fixtures.library_calls``): the
answer runs under Python's profiler on its inputs' shapes (``jax.eval_shape``), and on their
numbers where that cannot show everything. Red team, round nine: each answer below had the
library compute its result and earned the point, or (the honest ones) lost it; each is kept
beside the honest answer that must still pass, in class (in Chinese) and graded (in English)."""
import functools

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from conftest import assert_result

from nn_from_scratch import attention as lib
from nn_from_scratch import optim
from nn_from_scratch.exercises import attention_from_scratch as attention_check
from nn_from_scratch.exercises import tiny_gpt as gpt_check
from nn_from_scratch.exercises import where_next as optimizer_check


def attention(query, keys, values):  # the honest 14.1
    return jax.nn.softmax(keys @ query / jnp.sqrt(query.shape[0])) @ values


def traced_or_library(query, keys, values):
    """Something else while its inputs are traced; the library on numbers (a plain call, once
    jit refuses the string)."""
    if isinstance(query, jax.core.Tracer):
        return "traced"
    return lib.attention(query, keys, values)


def swallowed(query, keys, values):
    try:  # needs numbers: raises while traced, and the answer hides it
        float(query[0])
    except Exception:  # noqa: BLE001
        return "not yet"
    return lib.attention(query, keys, values)


def called_back(query, keys, values):
    """The library inside a callback: a run on shapes never calls it."""
    out = jax.ShapeDtypeStruct((values.shape[1],), values.dtype)
    return jax.pure_callback(lambda q, k, v: lib.attention(q, k, v), out, query, keys, values)


class Lazy:
    """Numbers only when the check converts it: its ``__array__`` calls the library."""

    def __init__(self, compute, *args):
        self.compute, self.args = compute, args

    def __array__(self, dtype=None, copy=None):
        return np.asarray(self.compute(*self.args), dtype=dtype)

    def __float__(self):
        return float(np.asarray(self))


@pytest.mark.parametrize("answer", [traced_or_library, swallowed, called_back],
                         ids=["another value when traced", "an error swallowed", "a callback"])
def test_the_library_computing_the_result_unseen_is_found(answer):
    assert_result(attention_check.attention(answer), "failed", "library's attention")
    assert_result(attention_check.attention(attention), "passed")


def test_a_result_that_becomes_numbers_only_when_converted_earns_nothing():
    result = attention_check.attention(lambda q, k, v: Lazy(lib.attention, q, k, v))
    assert result.status == "failed", result.line
    momentum = optimizer_check.momentum_update(
        lambda grad, velocity, lr, beta: Lazy(optim.momentum_step, grad, velocity, lr, beta))
    assert momentum.status == "failed", momentum.line


def test_optax_inside_a_callback_is_found():
    def clip_by_global_norm(grads, max_norm):
        shapes = jax.tree.map(lambda g: jax.ShapeDtypeStruct(g.shape, g.dtype), grads)

        def host(g, n):
            clip = optax.clip_by_global_norm(float(n))
            out, _ = clip.update(g, clip.init(g))
            return jax.tree.map(lambda a, b: a.astype(b.dtype), out, g)
        return jax.pure_callback(host, shapes, grads, max_norm)
    assert_result(optimizer_check.clip_by_global_norm(clip_by_global_norm), "failed", "optax")


def test_a_mask_kept_between_calls_is_no_trace_of_the_run_on_shapes():
    """Honest: 16.4 with its causal mask cached per length. The run on shapes kept a traced
    mask in the cache, and the judged run read it: a raw UnexpectedTracerError."""
    @functools.cache
    def causal_mask(t):
        return jnp.tril(jnp.ones((t, t), dtype=bool))

    def causal_attention(x, w_q, w_k, w_v):
        q, k, v = x @ w_q.T, x @ w_k.T, x @ w_v.T
        scores = q @ k.T / jnp.sqrt(q.shape[-1])
        scores = jnp.where(causal_mask(x.shape[0]), scores, -jnp.inf)
        return jax.nn.softmax(scores, axis=-1) @ v
    assert_result(gpt_check.causal_attention(causal_attention), "passed")

