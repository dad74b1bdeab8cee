"""Lesson 15's checkers: each accepts the reference, says "not done" to the stub, and catches
the typical mistakes with a hint that names the fix. The checkers' NumPy references are also
checked against Optax itself."""
import functools

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from conftest import assert_result, stub

from nn_from_scratch import loss, optim
from nn_from_scratch.exercises import where_next as check
from nn_from_scratch.exercises._calls import fresh_inputs


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

    def own_optimizer(params, opt_state, x, y, tx):  # the check's first optimizer, typed in
        return reference_step(params, opt_state, x, y, optax.sgd(0.1, momentum=0.9))
    assert_result(check.optax_step(own_optimizer), "failed", "the tx it is given",
                  "optax.sgd(0.03, momentum=0.5)")


def momentum_update(grad, velocity, learning_rate, beta):
    velocity = beta * velocity + grad
    return -learning_rate * velocity, velocity


def test_momentum_update():
    assert_result(check.momentum_update(momentum_update), "passed", "beta * velocity + grad")
    assert_result(check.momentum_update(stub), "not done")
    assert_result(check.momentum_update(lambda g, v, lr, b: momentum_update(g, v, lr, b)[::-1]),
                  "failed", "other order")
    assert_result(check.momentum_update(
        lambda g, v, lr, b: momentum_update((1 - b) * g, v, lr, b)), "failed", "Adam's moving")
    assert_result(check.momentum_update(lambda g, v, lr, b: (-lr * (v + b * g), v + b * g)),
                  "failed", "beta multiplies the old velocity")
    assert_result(check.momentum_update(lambda g, v, lr, b: (-lr * g, v)), "failed",
                  "returned unchanged")
    assert_result(check.momentum_update(
        lambda g, v, lr, b: (lr * (b * v + g), b * v + g)), "failed", "uphill")
    assert_result(check.momentum_update(lambda g, v, lr, b: (-lr * g, b * v + g)), "failed",
                  "ignores the velocity")
    assert_result(check.momentum_update(lambda g, v, lr, b: (-lr * v, b * v + g)), "failed",
                  "OLD velocity")
    # a learning rate or beta typed in as a number fails the other cases
    assert_result(check.momentum_update(lambda g, v, lr, b: momentum_update(g, v, 0.1, b)),
                  "failed", "learning_rate * velocity")
    assert_result(check.momentum_update(lambda g, v, lr, b: momentum_update(g, v, lr, 0.9)),
                  "failed", "beta * velocity + grad")
    assert_result(check.momentum_update(lambda g, v, lr, b: -lr * (b * v + g)), "failed",
                  "(update, velocity)")


def by_name(grad, velocity, learning_rate, beta):
    return getattr(optim, "momentum" + "_step")(grad, velocity, learning_rate, beta)


def optax_momentum(grad, velocity, learning_rate, beta):
    tx = optax.sgd(learning_rate, momentum=beta)
    state = (optax.TraceState(trace=velocity), *tx.init(grad)[1:])
    update, state = tx.update(grad, state)
    return update, state[0].trace


@pytest.mark.parametrize("ready_made, name", [
    (lambda g, v, lr, b: optim.momentum_step(g, v, lr, b), "momentum_step"),
    (functools.partial(optim.momentum_step), "momentum_step"),
    (by_name, "momentum_step"),
    (jax.jit(optim.momentum_step), "momentum_step"),
    (optax_momentum, "optax.sgd")])
def test_momentum_update_refuses_ready_made(ready_made, name):
    """The library's step or Optax's, however it is wrapped, is not the student's own."""
    assert_result(check.momentum_update(ready_made), "failed", name, "jax.numpy")


def adam_update(grad, m, v, t, learning_rate, b1=0.9, b2=0.999, eps=1e-8):
    m = b1 * m + (1 - b1) * grad
    v = b2 * v + (1 - b2) * grad ** 2
    m_hat, v_hat = m / (1 - b1 ** t), v / (1 - b2 ** t)
    return -learning_rate * m_hat / (jnp.sqrt(v_hat) + eps), m, v


def adam_variant(correct=True, root=True, eps_inside=False, corrected_state=False, sign=-1,
                 square=True):
    def adam(grad, m, v, t, learning_rate, b1=0.9, b2=0.999, eps=1e-8):
        m = b1 * m + (1 - b1) * grad
        v = b2 * v + (1 - b2) * (grad ** 2 if square else jnp.abs(grad))
        m_hat, v_hat = (m / (1 - b1 ** t), v / (1 - b2 ** t)) if correct else (m, v)
        scale = (jnp.sqrt(v_hat + eps) if eps_inside else
                 (jnp.sqrt(v_hat) if root else v_hat) + eps)
        update = sign * learning_rate * m_hat / scale
        return (update, m_hat, v_hat) if corrected_state else (update, m, v)
    return adam


def test_adam_update():
    assert_result(check.adam_update(adam_update), "passed", "bias-corrected")
    assert_result(check.adam_update(stub), "not done")
    assert_result(check.adam_update(adam_variant(correct=False)), "failed", "bias correction")
    assert_result(check.adam_update(adam_variant(root=False)), "failed", "square ROOT")
    assert_result(check.adam_update(adam_variant(eps_inside=True)), "failed", "eps goes outside")
    assert_result(check.adam_update(adam_variant(corrected_state=True)), "failed",
                  "not the bias-corrected")
    assert_result(check.adam_update(adam_variant(sign=1)), "failed", "uphill")
    assert_result(check.adam_update(adam_variant(square=False)), "failed", "SQUARED")

    def swapped(grad, m, v, t, learning_rate, b1=0.9, b2=0.999, eps=1e-8):
        return adam_update(grad, m, v, t, learning_rate, b2, b1, eps)
    assert_result(check.adam_update(swapped), "failed", "swapped")

    def no_defaults(grad, m, v, t, learning_rate, b1, b2, eps):
        return adam_update(grad, m, v, t, learning_rate, b1, b2, eps)
    assert_result(check.adam_update(no_defaults), "failed", "b1=0.9")

    def fixed_eps(grad, m, v, t, learning_rate, b1=0.9, b2=0.999, eps=1e-8):
        return adam_update(grad, m, v, t, learning_rate, b1, b2)
    assert_result(check.adam_update(fixed_eps), "failed", "m_hat / (sqrt(v_hat) + eps)")

    def library(grad, m, v, t, learning_rate, b1=0.9, b2=0.999, eps=1e-8):
        return optim.adam_step(grad, m, v, t, learning_rate, b1, b2, eps)
    assert_result(check.adam_update(library), "failed", "nn_from_scratch.optim.adam_step")

    def optax_adam(grad, m, v, t, learning_rate, b1=0.9, b2=0.999, eps=1e-8):
        state = optax.ScaleByAdamState(count=jnp.asarray(t - 1, jnp.int32), mu=m, nu=v)
        update, state = optax.scale_by_adam(b1, b2, eps).update(grad, state)
        return -learning_rate * update, state.mu, state.nu
    assert_result(check.adam_update(optax_adam), "failed", "optax.scale_by_adam")


def adamw_update(grad, param, m, v, t, learning_rate, weight_decay, b1=0.9, b2=0.999,
                 eps=1e-8):
    update, m, v = adam_update(grad, m, v, t, learning_rate, b1, b2, eps)
    return update - learning_rate * weight_decay * param, m, v


def test_adamw_update():
    assert_result(check.adamw_update(adamw_update), "passed", "weight_decay * param")
    assert_result(check.adamw_update(stub), "not done")

    def l2(grad, param, m, v, t, lr, wd, b1=0.9, b2=0.999, eps=1e-8):
        return adam_update(grad + wd * param, m, v, t, lr, b1, b2, eps)
    assert_result(check.adamw_update(l2), "failed", "L2 in the gradient")

    def unscaled(grad, param, m, v, t, lr, wd, b1=0.9, b2=0.999, eps=1e-8):
        update, m, v = adam_update(grad, m, v, t, lr, b1, b2, eps)
        return update - wd * param, m, v
    assert_result(check.adamw_update(unscaled), "failed", "scaled by the learning rate")

    def added(grad, param, m, v, t, lr, wd, b1=0.9, b2=0.999, eps=1e-8):
        update, m, v = adam_update(grad, m, v, t, lr, b1, b2, eps)
        return update + lr * wd * param, m, v
    assert_result(check.adamw_update(added), "failed", "towards 0")

    def no_decay(grad, param, m, v, t, lr, wd, b1=0.9, b2=0.999, eps=1e-8):
        return adam_update(grad, m, v, t, lr, b1, b2, eps)
    assert_result(check.adamw_update(no_decay), "failed", "weight decay is missing")

    def decayed_moments(grad, param, m, v, t, lr, wd, b1=0.9, b2=0.999, eps=1e-8):
        update, _, _ = adam_update(grad, m, v, t, lr, b1, b2, eps)
        _, m, v = adam_update(grad + wd * param, m, v, t, lr, b1, b2, eps)
        return update - lr * wd * param, m, v
    assert_result(check.adamw_update(decayed_moments), "failed", "never enters")

    def optax_adamw(grad, param, m, v, t, lr, wd, b1=0.9, b2=0.999, eps=1e-8):
        tx = optax.adamw(lr, b1, b2, eps, weight_decay=wd)
        state = (optax.ScaleByAdamState(count=jnp.asarray(t - 1, jnp.int32), mu=m, nu=v),
                 *tx.init(param)[1:])
        update, state = tx.update(grad, state, param)
        return update, state[0].mu, state[0].nu
    assert_result(check.adamw_update(optax_adamw), "failed", "optax.adamw")

    # The lesson's own adam_update calls the library's adam_step after 15.2: that is allowed.
    def on_adam_step(grad, param, m, v, t, lr, wd, b1=0.9, b2=0.999, eps=1e-8):
        update, m, v = optim.adam_step(grad, m, v, t, lr, b1, b2, eps)
        return update - lr * wd * param, m, v
    assert_result(check.adamw_update(on_adam_step), "passed")


def test_adamw_update_as_new_param_minus_param():
    """The update found as (the new param) - param, in float32: right to the rounding that
    param can hold, on every draw (on some it was off by 8e-8 and refused)."""
    def difference(grad, param, m, v, t, lr, wd, b1=0.9, b2=0.999, eps=1e-8):
        update, m, v = adam_update(grad, m, v, t, lr, b1, b2, eps)
        return (param * (1 - lr * wd) + update) - param, m, v
    for seed in (1, 2, 3, 4):
        with fresh_inputs(seed):
            assert_result(check.adamw_update(difference), "passed")


def test_adamw_update_says_finish_adam_first():
    namespace = {"adam_update": stub}
    exec("def adamw_update(grad, param, m, v, t, lr, wd, b1=0.9, b2=0.999, eps=1e-8):\n"
         "    update, m, v = adam_update(grad, m, v, t, lr, b1, b2, eps)\n"
         "    return update - lr * wd * param, m, v\n", namespace)
    assert_result(check.adamw_update(namespace["adamw_update"]), "not done", "15.2")
    namespace["adam_update"] = adam_variant(correct=False)
    assert_result(check.adamw_update(namespace["adamw_update"]), "failed", "15.2")


def test_adamw_update_after_the_lessons_adam_update():
    """After 15.2 the lesson redefines adam_update to call the library's adam_step: 15.3's
    check still passes the student's adamw_update on it (no "fix 15.2 first")."""
    namespace = {"adam_step": optim.adam_step}
    exec("def adam_update(grad, m, v, t, learning_rate, b1=0.9, b2=0.999, eps=1e-8):\n"
         "    return adam_step(grad, m, v, t, learning_rate, b1, b2, eps)\n"
         "def adamw_update(grad, param, m, v, t, lr, wd, b1=0.9, b2=0.999, eps=1e-8):\n"
         "    update, m, v = adam_update(grad, m, v, t, lr, b1, b2, eps)\n"
         "    return update - lr * wd * param, m, v\n", namespace)
    assert_result(check.adamw_update(namespace["adamw_update"]), "passed")
    # 15.2 itself still asks for the student's own formula
    assert_result(check.adam_update(namespace["adam_update"]), "failed", "adam_step")


def test_adam_references_are_optax():
    """The checkers' NumPy Adam and AdamW give Optax's updates, step after step."""
    rng = np.random.default_rng(0)
    param = rng.normal(size=(3, 4)).astype(np.float32)
    for tx, wd in ((optax.adam(0.01, 0.8, 0.99, 1e-3), 0.0),
                   (optax.adamw(0.01, 0.8, 0.99, 1e-3, weight_decay=0.3), 0.3)):
        state = tx.init(param)
        m = v = np.zeros((3, 4))
        for t in range(1, 6):
            grad = rng.normal(size=(3, 4)).astype(np.float32)
            want, state = tx.update(grad, state, param)
            adam, m, v = check._adam(grad.astype(np.float64), m, v, t, 0.01, 0.8, 0.99, 1e-3)
            np.testing.assert_allclose(adam - 0.01 * wd * param, want, rtol=1e-4, atol=1e-7)


def clip(grads, max_norm):
    norm = jnp.sqrt(sum(jnp.sum(g ** 2) for g in jax.tree.leaves(grads)))
    return jax.tree.map(lambda g: g * jnp.minimum(1.0, max_norm / norm), grads)


def norm(grads):
    return jnp.sqrt(sum(jnp.sum(g ** 2) for g in jax.tree.leaves(grads)))


def test_clip_by_global_norm():
    assert_result(check.clip_by_global_norm(clip), "passed", "min(1, max_norm / global norm)")
    assert_result(check.clip_by_global_norm(
        lambda g, m: optax.clip_by_global_norm(m).update(g, None)[0]), "failed",
        "optax.clip_by_global_norm", "jax.numpy")
    assert_result(check.clip_by_global_norm(
        lambda g, m: optim.clip_by_global_norm(m).update(g, None)[0]), "failed",
        "nn_from_scratch.optim.clip_by_global_norm")
    assert_result(check.clip_by_global_norm(
        lambda g, m: jax.tree.map(lambda x: x * jnp.minimum(1.0, m / optim.global_norm(g)), g)),
        "failed", "nn_from_scratch.optim.global_norm")
    assert_result(check.clip_by_global_norm(stub), "not done")
    assert_result(check.clip_by_global_norm(
        lambda g, m: jax.tree.map(lambda x: x * jnp.minimum(1.0, m / jnp.linalg.norm(x)), g)),
        "failed", "on its own")
    assert_result(check.clip_by_global_norm(
        lambda g, m: jax.tree.map(lambda x: x * m / norm(g), g)),
        "failed", "already at most max_norm")
    assert_result(check.clip_by_global_norm(
        lambda g, m: jax.tree.map(lambda x: x * jnp.minimum(1.0, m / norm(g) ** 2),
                                  g)), "failed", "not their sum")
    assert_result(check.clip_by_global_norm(
        lambda g, m: jax.tree.map(lambda x: jnp.clip(x, -m, m), g)), "failed", "direction")
    assert_result(check.clip_by_global_norm(
        lambda g, m: jax.tree.map(lambda x: x * jnp.maximum(1.0, norm(g) / m), g)),
        "failed", "upside down")
    assert_result(check.clip_by_global_norm(
        lambda g, m: [clip(layer, m) for layer in g]), "failed", "min(1, max_norm / global")
    assert_result(check.clip_by_global_norm(lambda g, m: jax.tree.leaves(clip(g, m))),
                  "failed", "list of (W, b)")


@pytest.mark.parametrize("peak, warmup, decay, init, end", check.SCHEDULES)
def test_warmup_cosine_reference_is_optax(peak, warmup, decay, init, end):
    init, end = init or 0.0, end or 0.0
    steps = np.arange(60)
    want = optax.warmup_cosine_decay_schedule(init, peak, warmup, decay, end)(jnp.asarray(steps))
    np.testing.assert_allclose(check._warmup_cosine_reference(steps, peak, warmup, decay, init,
                                                              end),
                               np.asarray(want), rtol=1e-5, atol=1e-9)


def schedule(step, peak_value, warmup_steps, decay_steps, init_value=0.0, end_value=0.0, *,
             start=None, length=None, clip=True, half=True):
    """The reference, and its typical mistakes: where the cosine starts, its length, no clip,
    cos instead of 0.5 * (1 + cos)."""
    start = warmup_steps if start is None else start
    length = decay_steps - warmup_steps if length is None else length
    progress = (step - start) / length
    progress = jnp.clip(progress, 0.0, 1.0) if clip else progress
    cosine = 0.5 * (1 + jnp.cos(jnp.pi * progress)) if half else jnp.cos(jnp.pi * progress)
    warmup = init_value + (peak_value - init_value) * step / warmup_steps
    return jnp.where(step < warmup_steps, warmup, end_value + (peak_value - end_value) * cosine)


def variant(**mistake):
    return lambda s, p, w, d, i=0.0, e=0.0: schedule(s, p, w, d, i, e, **mistake)


def test_warmup_cosine():
    assert_result(check.warmup_cosine(schedule), "passed", "under jit")
    assert_result(check.warmup_cosine(
        lambda s, p, w, d, i=0.0, e=0.0: optax.warmup_cosine_decay_schedule(i, p, w, d, e)(s)),
        "failed", "optax.warmup_cosine_decay_schedule", "jax.numpy")
    assert_result(check.warmup_cosine(
        lambda s, p, w, d, i=0.0, e=0.0: optim.warmup_cosine_schedule(p, w, d, i, e)(s)),
        "failed", "nn_from_scratch.schedules.warmup_cosine_schedule")
    assert_result(check.warmup_cosine(stub), "not done")
    assert_result(check.warmup_cosine(...), "not done")

    def python_if(step, peak_value, warmup_steps, decay_steps, init_value=0.0, end_value=0.0):
        if step < warmup_steps:
            return peak_value * step / warmup_steps
        return schedule(step, peak_value, warmup_steps, decay_steps)
    assert_result(check.warmup_cosine(python_if), "failed", "jnp.where", "lesson 04")

    def numpy_cos(step, peak_value, warmup_steps, decay_steps, init_value=0.0, end_value=0.0):
        return peak_value * np.cos(step)
    assert_result(check.warmup_cosine(numpy_cos), "failed", "traced step count")

    assert_result(check.warmup_cosine(variant(clip=False)), "failed", "rises again", "clip")
    assert_result(check.warmup_cosine(variant(half=False)), "failed", "below end_value",
                  "0.5 * (1 + cos")
    assert_result(check.warmup_cosine(lambda s, p, w, d, i=0.0, e=0.0: schedule(
        s, p, w, d, i, e, start=0, length=d)), "failed", "cosine starts where the warm-up ends")
    assert_result(check.warmup_cosine(lambda s, p, w, d, i=0.0, e=0.0: schedule(
        s, p, w, d, i, e, length=d)), "failed", "decay_steps counts the warm-up too")

    def late_warmup(step, peak_value, warmup_steps, decay_steps, init_value=0.0, end_value=0.0):
        return jnp.where(step < warmup_steps, peak_value * (step + 1) / warmup_steps,
                         schedule(step, peak_value, warmup_steps, decay_steps, init_value,
                                  end_value))
    assert_result(check.warmup_cosine(late_warmup), "failed", "rise linearly from init_value")
    # init_value and end_value ignored: the settings that give them fail
    assert_result(check.warmup_cosine(lambda s, p, w, d, i=0.0, e=0.0: schedule(s, p, w, d)),
                  "failed", "init_value")
    assert_result(check.warmup_cosine(lambda s, p, w, d, i=0.0, e=0.0: schedule(s, p, w, d, i)),
                  "failed", "end_value")
    assert_result(check.warmup_cosine(lambda s, p, w, d: schedule(s, p, w, d)), "failed",
                  "positional argument")


def test_optax_step_draws_its_network_and_batch():
    """The audit of issue 36: 15.6's three calls shared one network (8, 6, 4) and a batch of 5,
    so a step written for those sizes passed; the last call now takes another problem, and
    both problems' sizes are drawn."""
    import contextlib

    from nn_from_scratch.exercises._calls import fresh_inputs

    def five_examples(params, opt_state, x, y, tx):  # the check's old batch, typed
        return reference_step(params, opt_state, x[:5], y[:5], tx)

    def eight_inputs(params, opt_state, x, y, tx):
        return reference_step(params, opt_state, x.reshape(-1, 8), y, tx)
    for seed in (None, 1, 2):
        with fresh_inputs(seed) if seed else contextlib.nullcontext():
            assert check.optax_step(five_examples).status == "failed"
            assert check.optax_step(eight_inputs).status == "failed"
            assert check.optax_step(reference_step).status == "passed"
            (params, x, _y), (other, other_x, _other_y) = check._problems()
            assert params[0][0].shape != other[0][0].shape and len(x) != len(other_x)


def test_optax_step_as_the_lesson_writes_it_with_float():
    """Walk 11: the lesson's step returns float(value); under the check's jit that raised
    JAX's raw ConcretizationTypeError. A step jit objects to now runs as written."""
    def with_float(params, opt_state, x, y, tx):
        new, opt_state, value = reference_step(params, opt_state, x, y, tx)
        return new, opt_state, float(value)
    assert_result(check.optax_step(with_float), "passed")


def test_two_layers_unpacked_fail_with_a_hint():
    """Walk 11: 15.6's problems had one depth, so a loss that unpacks two layers passed."""
    def two_layers(params, opt_state, x, y, tx):
        def own_loss(q):
            (w1, b1), (w2, b2) = q
            logits = jax.nn.relu(x @ w1.T + b1) @ w2.T + b2
            return -jnp.mean(jnp.sum(y * jax.nn.log_softmax(logits), axis=-1))
        value, grads = jax.value_and_grad(own_loss)(params)
        updates, opt_state = tx.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, value
    assert_result(check.optax_step(two_layers), "failed", "for w, b in params")


def test_a_batch_written_as_a_number_is_not_called_an_optimizer_of_its_own():
    """Walk 11: x[:6] passed the first problem (a batch of 6) and failed the second, told
    "not an optimizer of your own"; it is told the sizes differ. (The batch is typed as the
    first problem's, whatever the draw made it.)"""
    typed = []

    def first_batch_typed(params, opt_state, x, y, tx):  # the mean as a sum / the batch typed
        typed.append(typed[0] if typed else x.shape[0])
        value, grads = jax.value_and_grad(
            lambda p: loss(p, x, y) * x.shape[0] / typed[0])(params)
        updates, opt_state = tx.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, value
    assert_result(check.optax_step(first_batch_typed), "failed", "size written as a number")
