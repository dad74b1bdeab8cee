import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from nn_from_scratch import DivergedError, fit, init_network_params, loss, one_hot, update
from conftest import assert_trees_close
from nn_from_scratch.train import jit_sgd_step, sgd_step

SIZES = [64, 32, 10]


@pytest.fixture
def batch(digits):
    return digits.x_train[:32], one_hot(digits.y_train[:32], 10)


def test_update_descends(small_params, batch):
    x, y = batch
    new = update(small_params, x, y, 0.1)
    assert float(loss(new, x, y)) < float(loss(small_params, x, y))


def test_jitted_and_unjitted_updates_agree(small_params, batch):
    x, y = batch
    assert_trees_close(jax.jit(update)(small_params, x, y, 0.1), update(small_params, x, y, 0.1))
    (p1, l1), (p2, l2) = jit_sgd_step(small_params, x, y, 0.1), sgd_step(small_params, x, y, 0.1)
    assert_trees_close(p1, p2)
    assert float(l1) == pytest.approx(float(l2), rel=1e-5)
    assert_trees_close(p2, update(small_params, x, y, 0.1), rtol=1e-6, atol=0)  # loss or not


@pytest.mark.parametrize("step_size", [0, -0.1, math.nan, math.inf])
def test_bad_step_size(small_params, batch, step_size, digits):
    with pytest.raises(ValueError, match=f"finite number greater than 0; got {step_size}"):
        update(small_params, *batch, step_size)
    with pytest.raises(ValueError, match="finite number greater than 0"):
        fit(small_params, digits, epochs=1, step_size=step_size, key=jax.random.key(0))


def run(digits, seed, mode="scan", epochs=2, init_seed=0):
    params = init_network_params(SIZES, jax.random.key(init_seed), init="he")
    return fit(params, digits, epochs=epochs, batch_size=64, step_size=0.1,
               key=jax.random.key(seed), mode=mode)


def test_same_seed_same_run_different_seed_different_run(digits):
    (p1, h1), (p2, h2), (p3, h3) = run(digits, 0), run(digits, 0), run(digits, 1)
    for a, b in zip(jax.tree.leaves(p1), jax.tree.leaves(p2)):
        np.testing.assert_array_equal(a, b)
    for name in ("train_loss", "train_accuracy", "test_loss", "test_accuracy"):
        assert h1[name] == h2[name]
    assert h1["train_loss"] != h3["train_loss"]
    assert not np.array_equal(p1[0][0], p3[0][0])


def test_all_three_modes_give_the_same_parameters(digits):
    results = {mode: run(digits, 0, mode=mode) for mode in ("eager", "jit", "scan")}
    for mode in ("jit", "scan"):
        assert_trees_close(results[mode][0], results["eager"][0], rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(results[mode][1]["test_accuracy"],
                                   results["eager"][1]["test_accuracy"], atol=1 / 360 + 1e-6)
    assert results["eager"][1]["compile_time"] == 0.0
    assert results["jit"][1]["compile_time"] > 0.0 or results["scan"][1]["compile_time"] > 0.0


def test_history_has_one_entry_per_epoch(digits):
    _, history = run(digits, 0, epochs=3)
    for name in ("epoch_time", "train_loss", "train_accuracy", "test_loss", "test_accuracy"):
        assert len(history[name]) == 3
    assert history["steps_per_epoch"] == 1437 // 64 and history["mode"] == "scan"
    assert history["train_loss"][-1] < history["train_loss"][0]


def test_fit_leaves_the_callers_params_usable(digits):
    params = init_network_params(SIZES, jax.random.key(0))
    before = np.asarray(params[0][0]).copy()
    fit(params, digits, epochs=1, key=jax.random.key(0), mode="scan")  # donates its own copy
    np.testing.assert_array_equal(params[0][0], before)


def test_defaults_reach_95_percent_on_digits(digits):
    params = init_network_params([64, 512, 512, 10], jax.random.key(0), init="he")
    _, history = fit(params, digits, key=jax.random.key(1))
    assert history["test_accuracy"][-1] >= 0.95


def test_divergence_names_epoch_and_step(digits):
    params = init_network_params([64, 512, 512, 10], jax.random.key(0), init="he")
    with pytest.raises(DivergedError, match=r"loss became (nan|inf) at epoch 1, step \d+ of 11, "
                                            r"with step_size=100\..*smaller step size, "
                                            r"e\.g\. step_size=10"):
        fit(params, digits, epochs=3, step_size=100.0, key=jax.random.key(0))


def test_layer_sizes_that_do_not_match_the_data(digits):
    params = init_network_params([784, 512, 10], jax.random.key(0))
    with pytest.raises(ValueError, match=r"Layer sizes \[784, 512, 10\] do not match the digits "
                                         r"data: it has 64 pixels.*\[64, 512, 10\]"):
        fit(params, digits, epochs=1, key=jax.random.key(0))


def test_fit_refuses_a_seed_instead_of_a_key(small_params, digits):
    with pytest.raises(TypeError, match="must be a JAX PRNG key"):
        fit(small_params, digits, epochs=1, key=0)


def test_unknown_mode(small_params, digits):
    with pytest.raises(ValueError, match="mode must be one of"):
        fit(small_params, digits, epochs=1, key=jax.random.key(0), mode="fast")
