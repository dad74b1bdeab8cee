"""The library's optimizers give Optax's numbers, step after step, on the MLP's (W, b) list."""
import math

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from conftest import assert_trees_close

from nn_from_scratch import InputError, init_network_params, loss, one_hot
from nn_from_scratch.optim import (
    adam,
    adam_step,
    adamw,
    apply_updates,
    chain,
    clip_by_global_norm,
    default_mask,
    global_norm,
    momentum,
    momentum_step,
    rmsprop,
    sgd,
    warmup_cosine_schedule,
)

SIZES = [64, 32, 10]
STEPS = 300


@pytest.fixture(scope="module")
def problem(digits):
    """The MLP's params and STEPS batches of 32 real digits: (params, xs, ys)."""
    params = init_network_params(SIZES, jax.random.key(0))
    idx = np.random.default_rng(0).integers(0, len(digits.x_train), (STEPS, 32))
    ys = one_hot(digits.y_train[idx].ravel(), 10).reshape(STEPS, 32, 10)
    return params, jnp.asarray(digits.x_train[idx]), ys


def run_both(ours, theirs, problem):
    """STEPS steps of each optimizer, both fed the gradient at OUR params (so the check is of
    the update rules, not of how rounding grows); returns both final params."""
    params, xs, ys = problem

    def step(carry, batch):
        p, s, q, r = carry
        g = jax.grad(loss)(p, *batch)
        u, s = ours.update(g, s, p)
        v, r = theirs.update(g, r, q)
        return (apply_updates(p, u), s, optax.apply_updates(q, v), r), None

    carry = (params, ours.init(params), params, theirs.init(params))
    (p, _, q, _), _ = jax.jit(lambda c: jax.lax.scan(step, c, (xs, ys)))(carry)
    assert float(loss(p, xs[0], ys[0])) < float(loss(params, xs[0], ys[0]))  # it learned
    return p, q


def mask_fn(params):
    return jax.tree.map(lambda w: w.ndim >= 2, params)


SCHEDULE = (dict(peak_value=0.05, warmup_steps=30, decay_steps=250, init_value=0.001,
                 end_value=0.002))
OPTAX_SCHEDULE = optax.warmup_cosine_decay_schedule(**SCHEDULE)
PAIRS = {
    "sgd": (sgd(0.1), optax.sgd(0.1)),
    "sgd with schedule": (sgd(warmup_cosine_schedule(**SCHEDULE)), optax.sgd(OPTAX_SCHEDULE)),
    "momentum": (momentum(0.02), optax.sgd(0.02, momentum=0.9)),
    "nesterov": (momentum(0.02, 0.8, nesterov=True),
                 optax.sgd(0.02, momentum=0.8, nesterov=True)),
    "rmsprop": (rmsprop(1e-3), optax.rmsprop(1e-3)),
    "rmsprop decay": (rmsprop(3e-3, decay=0.99, eps=1e-6),
                      optax.rmsprop(3e-3, decay=0.99, eps=1e-6)),
    "adam": (adam(1e-3), optax.adam(1e-3)),
    "adam betas": (adam(2e-3, b1=0.8, b2=0.99, eps=1e-6),
                   optax.adam(2e-3, b1=0.8, b2=0.99, eps=1e-6)),
    "adam with schedule": (adam(warmup_cosine_schedule(**SCHEDULE)), optax.adam(OPTAX_SCHEDULE)),
    "adamw": (adamw(1e-3, weight_decay=0.05),
              optax.adamw(1e-3, weight_decay=0.05, mask=mask_fn)),
    "adamw mask tree": (adamw(1e-3, weight_decay=0.05, mask=[(False, True), (True, False)]),
                        optax.adamw(1e-3, weight_decay=0.05,
                                    mask=[(False, True), (True, False)])),
    "adamw callable": (adamw(1e-3, weight_decay=0.1, mask=lambda p: jax.tree.map(
        lambda _: True, p)), optax.adamw(1e-3, weight_decay=0.1)),
    "clip then adamw": (chain(clip_by_global_norm(0.5), adamw(warmup_cosine_schedule(**SCHEDULE))),
                        optax.chain(optax.clip_by_global_norm(0.5),
                                    optax.adamw(OPTAX_SCHEDULE, mask=mask_fn))),
}


@pytest.mark.parametrize("name", PAIRS)
def test_same_numbers_as_optax_over_hundreds_of_steps(name, problem):
    ours, theirs = PAIRS[name]
    p, q = run_both(ours, theirs, problem)
    assert_trees_close(p, q, rtol=1e-5, atol=1e-6)


def test_a_different_rule_is_told_apart(problem):  # the comparison above can fail
    p, q = run_both(adam(1e-3), optax.adam(1e-3, b1=0.85), problem)
    with pytest.raises(AssertionError):
        assert_trees_close(p, q, rtol=1e-5, atol=1e-6)


def test_schedule_equals_optax_at_every_step():
    ours, theirs = warmup_cosine_schedule(**SCHEDULE), OPTAX_SCHEDULE
    steps = jnp.arange(300)
    np.testing.assert_allclose(jax.vmap(ours)(steps), jax.vmap(theirs)(steps), rtol=1e-6,
                               atol=1e-9)
    assert float(ours(0)) == pytest.approx(0.001) and float(ours(30)) == pytest.approx(0.05)
    assert float(ours(400)) == pytest.approx(0.002)
    plain = warmup_cosine_schedule(1.0, 0, 10)  # no warm-up: the cosine from step 0
    assert [round(float(plain(s)), 6) for s in (0, 5, 10)] == [1.0, 0.5, 0.0]


def test_global_norm_is_the_length_of_all_the_numbers(small_params):
    flat = jnp.concatenate([leaf.ravel() for leaf in jax.tree.leaves(small_params)])
    assert float(global_norm(small_params)) == pytest.approx(float(jnp.linalg.norm(flat)),
                                                             rel=1e-5)
    assert float(global_norm(small_params)) == pytest.approx(float(optax.tree.norm(
        small_params)), rel=1e-6)


def test_clipping_keeps_the_direction_and_shortens_to_max_norm(small_params):
    clip = clip_by_global_norm(1.0)
    clipped, _ = clip.update(small_params, clip.init(small_params))
    assert float(global_norm(clipped)) == pytest.approx(1.0, rel=1e-5)
    w, cw = small_params[0][0], clipped[0][0]
    np.testing.assert_allclose(cw * float(global_norm(small_params)), w, rtol=1e-4, atol=1e-6)
    short = jax.tree.map(lambda x: x * 1e-3 / float(global_norm(small_params)), small_params)
    assert_trees_close(clip.update(short, ())[0], short, rtol=0, atol=0)  # shorter: untouched


def test_one_parameter_momentum_steps_grow_to_lr_over_one_minus_beta():
    v, update = jnp.zeros(()), None
    for _ in range(200):  # a steady gradient of 1
        update, v = momentum_step(jnp.ones(()), v, 0.1, 0.9)
    assert float(update) == pytest.approx(-0.1 / (1 - 0.9), rel=1e-4)


def test_one_parameter_adam_first_step_is_lr_times_the_sign():
    g = jnp.array([3.0, -1e-4, 50.0])  # any size: bias correction makes m_hat / sqrt(s_hat) = 1
    update, m, s = adam_step(g, jnp.zeros(3), jnp.zeros(3), 1, 0.01, 0.9, 0.999, 1e-8)
    np.testing.assert_allclose(update, -0.01 * jnp.sign(g), rtol=1e-3)
    np.testing.assert_allclose(m, 0.1 * g, rtol=1e-6)
    # after a quiet stretch a sudden gradient moves by up to (1 - b1) / sqrt(1 - b2) ~ 3.16 lr
    # (at step t, times the bias corrections' sqrt(1 - b2**t) / (1 - b1**t); 2.94 at t = 2000)
    m, s, t = jnp.zeros(()), jnp.zeros(()), 2000
    update, m, s = adam_step(jnp.zeros(()), m, s, t - 1, 1.0, 0.9, 0.999, 1e-8)
    update, m, s = adam_step(jnp.ones(()), m, s, t, 1.0, 0.9, 0.999, 1e-8)
    bound = (1 - 0.9) / math.sqrt(1 - 0.999) * math.sqrt(1 - 0.999**t) / (1 - 0.9**t)
    assert float(-update) == pytest.approx(bound, rel=1e-4) and 2.9 < bound < 3.17


def test_default_mask_decays_matrices_only(small_params):
    assert jax.tree.leaves(default_mask(small_params)) == [True, False] * len(small_params)


def test_state_is_a_pytree_and_update_jits(small_params):
    opt = chain(clip_by_global_norm(1.0), adamw(1e-3))
    state = opt.init(small_params)
    n = len(small_params) * 2
    assert len(jax.tree.leaves(state)) == 1 + 2 * n  # adam's count, mu and nu; clip has none
    updates, state = jax.jit(opt.update)(small_params, state, small_params)
    assert int(state[1].count) == 1
    assert jax.tree.structure(updates) == jax.tree.structure(small_params)


@pytest.mark.parametrize("bad, words", [
    (-0.1, "greater than 0; got -0.1"), (float("nan"), "got nan"), (0.0, "greater than 0"),
    ("0.1", "single number"), (lambda step: -1.0 + 0 * step, "gives -1.0 at step 0"),
])
def test_a_bad_learning_rate_is_refused_when_made(bad, words):
    for make in (sgd, momentum, rmsprop, adam, adamw):
        with pytest.raises(InputError, match="learning_rate") as info:
            make(bad)
        assert words in str(info.value)


def test_bad_betas_and_decays_are_refused():
    with pytest.raises(InputError, match=r"beta must be in \[0, 1\).*; got 1.0"):
        momentum(0.1, beta=1.0)
    with pytest.raises(InputError, match="b2 must be in"):
        adam(1e-3, b2=-0.5)
    with pytest.raises(InputError, match="weight_decay"):
        adamw(1e-3, weight_decay=-1.0)
    with pytest.raises(InputError, match="max_norm"):
        clip_by_global_norm(0.0)
    with pytest.raises(InputError, match="decay_steps"):
        warmup_cosine_schedule(1e-3, warmup_steps=100, decay_steps=100)


def test_grads_of_other_params_are_refused_naming_both(small_params):
    opt = adam(1e-3)
    state = opt.init(small_params)
    with pytest.raises(InputError, match=r"grads and the state's moments do not match") as info:
        opt.update(small_params[:1], state, small_params)
    assert "2 leaves shaped [(32, 64), (32,)]" in str(info.value)
    assert "init(params)" in str(info.value)
    other = init_network_params([64, 16, 10], jax.random.key(1))
    with pytest.raises(InputError, match="do not match"):
        momentum(0.1).update(other, momentum(0.1).init(small_params))
    with pytest.raises(InputError, match="grads and params do not match"):
        sgd(0.1).update(other, sgd(0.1).init(small_params), small_params)
    with pytest.raises(InputError, match="updates and params do not match"):
        apply_updates(small_params, other)


def test_a_mask_of_the_wrong_structure_is_refused(small_params):
    opt = adamw(1e-3, mask=[True, False])
    with pytest.raises(InputError, match="mask must have the structure of the params"):
        opt.update(small_params, opt.init(small_params), small_params)
    opt = adamw(1e-3, mask=lambda p: jax.tree.map(lambda w: 1.0, p))
    with pytest.raises(InputError, match="True or False"):
        opt.update(small_params, opt.init(small_params), small_params)
    with pytest.raises(TypeError, match="needs the params"):
        adamw(1e-3).update(small_params, adamw(1e-3).init(small_params))


def test_chain_refuses_what_is_not_an_optimizer():
    with pytest.raises(InputError, match="not an optimizer"):
        chain(adam)
    with pytest.raises(InputError, match="at least one"):
        chain()
