"""Lesson 15's checkers: each accepts the reference, says "not done" to the stub, and catches
the typical mistakes with a hint that names the fix. The checkers' NumPy references are also
checked against Optax itself."""
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from conftest import assert_result, stub

from nn_from_scratch import loss
from nn_from_scratch.exercises import where_next as check


def reference_step(params, opt_state, x, y, tx):
    value, grads = jax.value_and_grad(loss)(params, x, y)
    updates, opt_state = tx.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, value


def test_optax_step():
    assert_result(check.optax_step(reference_step), "passed", "step 1 equals our update")
    assert_result(check.optax_step(stub), "not done")

    def subtracts_updates(params, opt_state, x, y, tx):
        value, grads = jax.value_and_grad(loss)(params, x, y)
        updates, opt_state = tx.update(grads, opt_state, params)
        return jax.tree.map(lambda p, u: p - u, params, updates), opt_state, value
    assert_result(check.optax_step(subtracts_updates), "failed", "uphill", "ADD them")

    def applies_grads(params, opt_state, x, y, tx):
        value, grads = jax.value_and_grad(loss)(params, x, y)
        return optax.apply_updates(params, grads), opt_state, value
    assert_result(check.optax_step(applies_grads), "failed", "raw gradients", "tx.update")

    def old_state(params, opt_state, x, y, tx):
        new_params, _, value = reference_step(params, opt_state, x, y, tx)
        return new_params, opt_state, value
    assert_result(check.optax_step(old_state), "failed", "opt_state came back unchanged")

    def fresh_state(params, opt_state, x, y, tx):  # starts the optimizer again at every step
        return reference_step(params, tx.init(params), x, y, tx)
    assert_result(check.optax_step(fresh_state), "failed", "second step does not follow")

    assert_result(check.optax_step(jax.jit(reference_step)), "failed", "static")
    assert_result(check.optax_step(jax.jit(reference_step, static_argnames="tx")), "passed")

    def two_values(params, opt_state, x, y, tx):
        return reference_step(params, opt_state, x, y, tx)[:2]
    assert_result(check.optax_step(two_values), "failed", "(params, opt_state, loss_value)")

    def loss_after(params, opt_state, x, y, tx):
        new_params, opt_state, _ = reference_step(params, opt_state, x, y, tx)
        return new_params, opt_state, loss(new_params, x, y)
    assert_result(check.optax_step(loss_after), "failed", "returned loss value", "value_and_grad")


def momentum_reference(learning_rate, beta=0.9):
    def init(params):
        return jax.tree.map(jnp.zeros_like, params)

    def update(grads, velocity, params=None):
        velocity = jax.tree.map(lambda v, g: beta * v + g, velocity, grads)
        return jax.tree.map(lambda v: -learning_rate * v, velocity), velocity
    return optax.GradientTransformation(init, update)


def make_momentum(init_fn, velocity_fn, updates_fn, new_state=True):
    """Variants of momentum: init_fn(params), velocity_fn(v, g, beta), updates_fn(v, lr)."""
    def momentum(learning_rate, beta=0.9):
        def update(grads, velocity, params=None):
            new = jax.tree.map(lambda v, g: velocity_fn(v, g, beta), velocity, grads)
            updates = jax.tree.map(lambda v: updates_fn(v, learning_rate), new)
            return updates, new if new_state else velocity
        return optax.GradientTransformation(init_fn, update)
    return momentum


def zeros(params):
    return jax.tree.map(jnp.zeros_like, params)


def heavy_ball(v, g, beta):
    return beta * v + g


def descend(v, learning_rate):
    return -learning_rate * v


def test_momentum():
    assert_result(check.momentum(momentum_reference), "passed", "optax.sgd")
    assert_result(check.momentum(lambda lr, beta=0.9: optax.sgd(lr, momentum=beta)), "passed")
    assert_result(check.momentum(stub), "not done")
    # a learning rate written in as a number fails the second setting
    assert_result(check.momentum(make_momentum(zeros, lambda v, g, b: b * v + 0.1 * g,
                                               lambda v, lr: -v)), "failed", "learning_rate=0.3")
    assert_result(check.momentum(make_momentum(zeros, heavy_ball, lambda v, lr: lr * v)),
                  "failed", "uphill", "-learning_rate")
    assert_result(check.momentum(make_momentum(zeros, lambda v, g, b: b * v + (1 - b) * g,
                                               descend)), "failed", "Adam's moving average")
    assert_result(check.momentum(make_momentum(zeros, heavy_ball, descend, new_state=False)),
                  "failed", "step 2 ignored the earlier gradients")
    assert_result(check.momentum(make_momentum(lambda p: p, heavy_ball, descend)),
                  "failed", "start at zero")
    assert_result(check.momentum(lambda lr, beta=0.9: (zeros, None)), "failed",
                  "optax.GradientTransformation(init, update)")

    def no_params(learning_rate, beta=0.9):
        tx = momentum_reference(learning_rate, beta)
        return optax.GradientTransformation(tx.init, lambda g, s: tx.update(g, s))
    assert_result(check.momentum(no_params), "failed", "params=None")


def test_momentum_default_beta():
    def wrong_default(learning_rate, beta=1.8):
        return momentum_reference(learning_rate, beta)
    assert_result(check.momentum(wrong_default), "failed", "default beta=0.9")


def test_momentum_learning_rate_folded_in_passes():
    def folded(learning_rate, beta=0.9):  # v = beta v + lr g; updates = -v: the same steps
        return make_momentum(zeros, lambda v, g, b: b * v + learning_rate * g,
                             lambda v, lr: -v)(learning_rate, beta)
    assert_result(check.momentum(folded), "passed")


@pytest.mark.parametrize("peak, warmup, decay", check.SCHEDULES)
def test_warmup_cosine_reference_is_optax(peak, warmup, decay):
    steps = np.arange(60)
    want = optax.warmup_cosine_decay_schedule(0.0, peak, warmup, decay)(jnp.asarray(steps))
    np.testing.assert_allclose(check._warmup_cosine_reference(steps, peak, warmup, decay),
                               np.asarray(want), rtol=1e-5, atol=1e-9)


def schedule(step, peak_value, warmup_steps, decay_steps, *, start=None, length=None,
             clip=True, half=True):
    """The reference, and its typical mistakes: where the cosine starts, its length, no clip,
    cos instead of 0.5 * (1 + cos)."""
    start = warmup_steps if start is None else start
    length = decay_steps - warmup_steps if length is None else length
    progress = (step - start) / length
    progress = jnp.clip(progress, 0.0, 1.0) if clip else progress
    cosine = 0.5 * (1 + jnp.cos(jnp.pi * progress)) if half else jnp.cos(jnp.pi * progress)
    return jnp.where(step < warmup_steps, peak_value * step / warmup_steps, peak_value * cosine)


def test_warmup_cosine():
    assert_result(check.warmup_cosine(schedule), "passed", "under jit")
    assert_result(check.warmup_cosine(
        lambda s, p, w, d: optax.warmup_cosine_decay_schedule(0.0, p, w, d)(s)), "passed")
    assert_result(check.warmup_cosine(stub), "not done")
    assert_result(check.warmup_cosine(...), "not done")

    def python_if(step, peak_value, warmup_steps, decay_steps):
        if step < warmup_steps:
            return peak_value * step / warmup_steps
        return schedule(step, peak_value, warmup_steps, decay_steps)
    assert_result(check.warmup_cosine(python_if), "failed", "jnp.where", "lesson 04")

    def numpy_cos(step, peak_value, warmup_steps, decay_steps):
        return peak_value * np.cos(step)
    assert_result(check.warmup_cosine(numpy_cos), "failed", "traced step count")

    assert_result(check.warmup_cosine(lambda s, p, w, d: schedule(s, p, w, d, clip=False)),
                  "failed", "rises again", "clip")
    assert_result(check.warmup_cosine(lambda s, p, w, d: schedule(s, p, w, d, half=False)),
                  "failed", "negative", "0.5 * (1 + cos")
    assert_result(check.warmup_cosine(lambda s, p, w, d: schedule(s, p, w, d, start=0,
                                                                  length=d)),
                  "failed", "cosine starts where the warmup ends")
    assert_result(check.warmup_cosine(lambda s, p, w, d: schedule(s, p, w, d, length=d)),
                  "failed", "decay_steps counts the warmup too")

    def late_warmup(step, peak_value, warmup_steps, decay_steps):  # off by one step
        return jnp.where(step < warmup_steps, peak_value * (step + 1) / warmup_steps,
                         schedule(step, peak_value, warmup_steps, decay_steps))
    assert_result(check.warmup_cosine(late_warmup), "failed", "rise linearly from 0")


def step_sizes(tree):
    return np.concatenate([np.abs(np.ravel(leaf)) for leaf in jax.tree.leaves(tree)])


def reference_ratio(tx, params, grads):
    updates, _ = tx.update(grads, tx.init(params), params)
    return step_sizes(updates).mean() / step_sizes(params).mean()


def test_first_step_ratio():
    assert_result(check.first_step_ratio(reference_ratio), "passed", "AdamW")
    assert_result(check.first_step_ratio(stub), "not done")
    assert_result(check.first_step_ratio(lambda tx, p, g: 4.0), "failed",
                  "optax.sgd(0.2)")  # a number typed in fails
    assert_result(check.first_step_ratio(
        lambda tx, p, g: step_sizes(g).mean() / step_sizes(p).mean()), "failed",
        "not the step", "tx.update")
    assert_result(check.first_step_ratio(lambda tx, p, g: 1 / reference_ratio(tx, p, g)),
                  "failed", "upside down")

    def signed(tx, params, grads):
        updates, _ = tx.update(grads, tx.init(params), params)
        mean = [np.mean(np.concatenate([np.ravel(a) for a in jax.tree.leaves(t)]))
                for t in (updates, params)]
        return mean[0] / mean[1]
    assert_result(check.first_step_ratio(signed), "failed", "never negative", "jnp.abs")

    def weights_only(tx, params, grads):
        updates, _ = tx.update(grads, tx.init(params), params)
        return (step_sizes([w for w, _ in updates]).mean()
                / step_sizes([w for w, _ in params]).mean())
    assert_result(check.first_step_ratio(weights_only), "failed", "the b's as well")

    def no_params(tx, params, grads):
        updates, _ = tx.update(grads, tx.init(params))
        return step_sizes(updates).mean() / step_sizes(params).mean()
    assert_result(check.first_step_ratio(no_params), "failed", "AdamW", "needs them")

    def always_adam(tx, params, grads):
        return reference_ratio(optax.adam(0.2), params, grads)
    assert_result(check.first_step_ratio(always_adam), "failed", "optax.sgd(0.2)")

    def per_leaf(tx, params, grads):
        updates, _ = tx.update(grads, tx.init(params), params)
        return [np.abs(u).mean() / np.abs(p).mean()
                for u, p in zip(jax.tree.leaves(updates), jax.tree.leaves(params))]
    assert_result(check.first_step_ratio(per_leaf), "failed", "list of 2 items", "one number")
