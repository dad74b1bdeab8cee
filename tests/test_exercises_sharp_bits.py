"""Lesson 05's checkers: each accepts the reference, says "not done" to the stub, and catches
the half-fixes of each sharp bit with a hint that names the whole fix."""
import contextlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import assert_result, stub
from jax import lax

from nn_from_scratch.exercises import sharp_bits as check
from nn_from_scratch.exercises._calls import fresh_inputs


def lookup(table, idx):
    return table.at[idx].get(mode="fill", fill_value=jnp.nan)


def test_lookup():
    assert_result(check.lookup(lookup), "passed")
    assert_result(check.lookup(jax.jit(lookup)), "passed")
    assert_result(check.lookup(lambda table, idx: jnp.take(table, idx, axis=0)), "passed")
    assert_result(check.lookup(stub), "not done")
    assert_result(check.lookup(lambda table, idx: table[idx]), "failed", "clamped", "mode='fill'")
    assert_result(check.lookup(lambda table, idx: jnp.take(table, idx)), "failed", "axis=0")

    def negatives_out(table, idx):
        inside = (idx >= 0) & (idx < len(table))
        rows = table[jnp.clip(idx, 0, len(table) - 1)]
        return jnp.where(inside.reshape(-1, *[1] * (table.ndim - 1)), rows, jnp.nan)
    assert_result(check.lookup(negatives_out), "failed", "count", "from the end")

    def only_too_large(table, idx):
        rows = table[idx]
        return jnp.where((idx < len(table)).reshape(-1, *[1] * (table.ndim - 1)), rows, jnp.nan)
    assert_result(check.lookup(only_too_large), "failed", "wrong at indices [-5]")


def pad_batch(x, size):
    n = x.shape[0]
    padded = jnp.concatenate([x, jnp.zeros((size - n, *x.shape[1:]), x.dtype)])
    return padded, jnp.arange(size) < n


def test_pad_batch():
    assert_result(check.pad_batch(pad_batch), "passed")
    assert_result(check.pad_batch(stub), "not done")
    assert_result(check.pad_batch(lambda x, size: (x, jnp.ones(len(x), bool))), "failed",
                  "has shape", "expected")
    assert_result(check.pad_batch(  # a row width written as a number: right for one width
        lambda x, size: pad_batch(x[:, :2], size) if x.shape[1] >= 2 else pad_batch(x, size)),
        "failed")

    def pad_by_size(x, size):
        padded = jnp.concatenate([x, jnp.zeros((size, x.shape[1]))])
        return padded, jnp.arange(len(x) + size) < len(x)
    assert_result(check.pad_batch(pad_by_size), "failed", "pad TO")

    def inverted(x, size):
        padded, mask = pad_batch(x, size)
        return padded, ~mask
    assert_result(check.pad_batch(inverted), "failed", "inverted")

    def at_the_front(x, size):
        n = x.shape[0]
        return (jnp.concatenate([jnp.zeros((size - n, x.shape[1]), x.dtype), x]),
                jnp.arange(size) >= size - n)
    assert_result(check.pad_batch(at_the_front), "failed", "pad at the end")

    def mask_dtype_varies(x, size):  # bool for some sizes, float for others: two programs
        padded, mask = pad_batch(x, size)
        return padded, mask if len(x) < 5 else mask.astype(jnp.float32)
    assert_result(check.pad_batch(mask_dtype_varies), "failed", "traced 2 times")


def ema(xs, decay):
    def step(m, x):
        m = decay * m + (1 - decay) * x
        return m, m
    return lax.scan(step, jnp.zeros((), xs.dtype), xs)[1]


def ema_python_loop(xs, decay):
    m, out = 0.0, []
    for x in xs:
        m = decay * m + (1 - decay) * x
        out.append(m)
    return jnp.stack(out)


def test_ema():
    assert_result(check.ema(ema), "passed")
    assert_result(check.ema(jax.jit(ema, static_argnums=1)), "passed")
    assert_result(check.ema(stub), "not done")
    assert_result(check.ema(ema_python_loop), "failed", "unrolled", "lax.scan")
    assert_result(check.ema(lambda xs, decay: ema(xs, decay)[-1]), "failed", "EVERY step")
    assert_result(check.ema(lambda xs, decay: ema(xs, 1 - decay)), "failed", "swapped")
    assert_result(check.ema(lambda xs, decay: jnp.cumsum(xs) / jnp.arange(1, len(xs) + 1)),
                  "failed", "m = decay * m")

    def numpy_inside(xs, decay):
        return np.asarray(ema(xs, decay))
    assert_result(check.ema(numpy_inside), "failed", "traced arrays")


def variance64(xs):
    with jax.enable_x64(True):
        return jnp.var(jnp.array(xs))


def test_variance64():
    assert_result(check.variance64(variance64), "passed")
    assert_result(check.variance64(lambda xs: float(variance64(xs))), "passed")
    assert_result(check.variance64(stub), "not done")
    assert_result(check.variance64(lambda xs: 2 / 3), "failed", "expected")  # the answer typed in
    assert_result(check.variance64(lambda xs: jnp.var(jnp.array(xs))), "failed", "float32",
                  "INSIDE")
    assert_result(check.variance64(lambda xs: float(jnp.var(jnp.array(xs)))), "failed",
                  "float32's answer")
    assert_result(check.variance64(lambda xs: np.var(xs)), "failed", "NumPy")

    def sample(xs):
        with jax.enable_x64(True):
            return jnp.var(jnp.array(xs), ddof=1)
    assert_result(check.variance64(sample), "failed", "ddof=1")

    def of_the_list(xs):
        with jax.enable_x64(True):
            return jnp.var(xs)
    assert_result(check.variance64(of_the_list), "failed", "not a list", "jnp.array(xs)")

    def std(xs):
        with jax.enable_x64(True):
            return jnp.std(jnp.array(xs))
    assert_result(check.variance64(std), "failed", "expected")


def softplus(x):
    return jnp.maximum(x, 0) + jnp.log1p(jnp.exp(-jnp.abs(x)))


@pytest.mark.parametrize("wrong, hints", [
    (lambda x: jnp.log(1 + jnp.exp(x)), ("overflows", "log1p")),
    (lambda x: jnp.where(x > 20, x, jnp.log1p(jnp.exp(x))), ("NaN", "lesson 04's trap")),
    (lambda x: jnp.log1p(jnp.exp(-jnp.abs(x))), ("log(1 + exp(x))",)),
    (jax.nn.softplus, ("write your own",)),
])
def test_softplus_mistakes(wrong, hints):
    assert_result(check.softplus(wrong), "failed", *hints)


def test_softplus():
    assert_result(check.softplus(softplus), "passed")
    assert_result(check.softplus(lambda x: jnp.logaddexp(0.0, x)), "passed")
    assert_result(check.softplus(stub), "not done")


def test_audit_a_size_written_as_a_number_fails():
    """The fixed-shapes audit: lookup's table always had 4 rows (a bound typed as idx < 4
    passed), ema's values were checked at one length (a scan over 40 steps passed)."""
    def bound_typed(table, idx):
        inside = (idx < 4) & (idx >= -4)
        return jnp.where(inside.reshape(-1, *[1] * (table.ndim - 1)),
                         table[jnp.where(idx < 0, idx + 4, idx) % 4], jnp.nan)

    def forty_steps(xs, decay):
        def step(m, i):
            m = decay * m + (1 - decay) * xs[i]
            return m, m
        return jax.lax.scan(step, 0.0, jnp.arange(40))[1]
    for seed in (None, 1, 2, 3):
        with fresh_inputs(seed) if seed else contextlib.nullcontext():
            assert check.lookup(bound_typed).status == "failed"
            assert check.ema(forty_steps).status == "failed"
