import math
import re
from dataclasses import dataclass

import jax
import numpy as np
import pytest
from conftest import assert_trees_close

from nn_from_scratch import (
    DivergedError,
    History,
    InputError,
    accuracy,
    batch_indices,
    evaluate,
    fit,
    init_network_params,
    loss,
    one_hot,
    update,
)
from nn_from_scratch.augment import shift_images
from nn_from_scratch.train import cosine_schedule

SIZES = [64, 32, 10]


@pytest.mark.parametrize("step_size", [0, -0.1, math.nan, math.inf])
def test_bad_step_size(small_params, step_size, digits):
    with pytest.raises(InputError, match="finite number greater than 0"):
        fit(small_params, digits, epochs=1, step_size=step_size, key=jax.random.key(0))


@pytest.mark.parametrize("kwargs, message", [
    (dict(epochs=True), "epochs must be a whole number >= 1; got bool True"),
    (dict(epochs=0), "epochs must be a whole number >= 1; got 0"),
    (dict(epochs=2.0), "epochs must be a whole number"),
    (dict(batch_size=32.5), "batch_size must be a whole number"),
    (dict(batch_size=0), "batch_size must be a whole number >= 1; got 0"),
    (dict(batch_size=5000), "between 1 and the 1257 training examples; got 5000"),
    (dict(mode="fast"), "mode must be one of 'eager', 'jit', 'scan'; got 'fast'"),
    (dict(train_metrics="exact"), "train_metrics must be one of 'during', 'after'; got 'exact'"),
    (dict(key=0), "key must be a JAX PRNG key"),
    (dict(step_size=[0.1, 0.1]), "step_size has 2 step sizes, one per epoch, but epochs=1"),
    (dict(step_size=[-0.1]), "step_size[0] must be a finite number greater than 0; got -0.1"),
    (dict(augment="shift"), "augment must be a function (images, key) -> images"),
    (dict(augment=lambda x, key: x[:10]), "augment must return the images in their shape"),
])
def test_fit_refuses_bad_arguments_before_any_work(small_params, digits, kwargs, message):
    with pytest.raises(InputError, match=re.escape(message)):
        fit(small_params, digits, **{"epochs": 1, "key": jax.random.key(0), **kwargs})


def run(digits, seed, mode="scan", epochs=2, init_seed=0):
    params = init_network_params(SIZES, jax.random.key(init_seed), init="he")
    return fit(params, digits, epochs=epochs, batch_size=64, step_size=0.1,
               key=jax.random.key(seed), mode=mode)


def test_same_seed_same_run_different_seed_different_run(digits):
    (p1, h1), (p2, h2), (p3, h3) = run(digits, 0), run(digits, 0), run(digits, 1)
    for a, b in zip(jax.tree.leaves(p1), jax.tree.leaves(p2)):
        np.testing.assert_array_equal(a, b)
    for name in ("train_loss", "train_accuracy", "val_loss", "val_accuracy"):
        assert getattr(h1, name) == getattr(h2, name)
    assert h1.train_loss != h3.train_loss
    assert not np.array_equal(p1[0][0], p3[0][0])


def test_all_three_modes_give_the_same_parameters_and_history(digits):
    results = {mode: run(digits, 0, mode=mode) for mode in ("eager", "jit", "scan")}
    eager = results["eager"][1]
    for mode in ("jit", "scan"):
        history = results[mode][1]
        assert_trees_close(results[mode][0], results["eager"][0], rtol=1e-4, atol=1e-5)
        # a different program may round differently: allow one image's worth of accuracy
        np.testing.assert_allclose(history.val_accuracy, eager.val_accuracy, atol=1 / 180 + 1e-6)
        np.testing.assert_allclose(history.train_accuracy, eager.train_accuracy,
                                   atol=1 / (64 * history.steps_per_epoch) + 1e-6)
        np.testing.assert_allclose(history.train_loss, eager.train_loss, rtol=1e-4)
        np.testing.assert_allclose(history.val_loss, eager.val_loss, rtol=1e-4)
        assert history.train_metrics == eager.train_metrics == "during"
    assert all(history.compile_time > 0.0 for _, history in results.values())


def test_cosine_schedule_falls_from_the_step_size_towards_zero():
    steps = cosine_schedule(0.1, 4)
    np.testing.assert_allclose(steps, [0.1, 0.1 * (1 + math.cos(math.pi / 4)) / 2, 0.05,
                                       0.1 * (1 + math.cos(3 * math.pi / 4)) / 2])
    assert all(a > b > 0 for a, b in zip(steps, steps[1:]))
    with pytest.raises(InputError, match="step_size must be a finite number greater than 0"):
        cosine_schedule(0.0, 4)


def test_one_step_size_per_epoch_is_used_epoch_by_epoch(digits):
    params = init_network_params(SIZES, jax.random.key(0), init="he")
    two, _ = fit(params, digits, epochs=2, batch_size=64, step_size=[0.1, 0.02],
                 key=jax.random.key(3))
    one, _ = fit(params, digits, epochs=1, batch_size=64, step_size=0.1, key=jax.random.key(3))
    # fit's second epoch: the key that remains after the first epoch's split
    by_hand, _ = fit(one, digits, epochs=1, batch_size=64, step_size=0.02,
                     key=jax.random.split(jax.random.key(3))[0])
    assert_trees_close(two, by_hand, rtol=1e-5, atol=1e-6)
    constant, _ = fit(params, digits, epochs=2, batch_size=64, step_size=0.1,
                      key=jax.random.key(3))
    assert not np.allclose(constant[0][0], two[0][0])  # the second step size did something


def test_augment_trains_on_new_images_each_epoch_and_measures_on_the_real_ones(digits):
    params = init_network_params(SIZES, jax.random.key(0), init="he")
    plain, history = fit(params, digits, epochs=2, batch_size=64, key=jax.random.key(0))
    same, same_history = fit(params, digits, epochs=2, batch_size=64, key=jax.random.key(0),
                             augment=lambda x, key: x)  # no change: the very same run
    assert_trees_close(same, plain, rtol=1e-6, atol=1e-7)
    assert same_history.val_accuracy == history.val_accuracy
    shifted, shifted_history = fit(params, digits, epochs=2, batch_size=64,
                                   key=jax.random.key(0), augment=shift_images)
    assert not np.allclose(shifted[0][0], plain[0][0])
    assert shifted_history.compile_time > 0 and len(shifted_history.val_accuracy) == 2
    results = {mode: fit(params, digits, epochs=2, batch_size=64, key=jax.random.key(0),
                         mode=mode, augment=shift_images)[0] for mode in ("jit", "scan")}
    assert_trees_close(results["jit"], results["scan"], rtol=1e-4, atol=1e-5)


def test_history_is_frozen_with_one_entry_per_epoch_on_the_validation_split(digits):
    params, history = run(digits, 0, epochs=3)
    assert isinstance(history, History) and history.epochs == 3
    for name in ("epoch_time", "train_loss", "train_accuracy", "val_loss", "val_accuracy"):
        assert isinstance(getattr(history, name), tuple) and len(getattr(history, name)) == 3
    assert history.steps_per_epoch == 1257 // 64 and history.mode == "scan"
    assert history.train_loss[-1] < history.train_loss[0]
    val_loss, val_accuracy = evaluate(params, digits.x_val, digits.y_val)
    assert history.val_accuracy[-1] == pytest.approx(float(val_accuracy))
    assert history.val_loss[-1] == pytest.approx(float(val_loss), rel=1e-5)
    with pytest.raises(AttributeError):
        history.mode = "jit"  # frozen


@dataclass(frozen=True)
class TinyData:
    """Ten images of four pixels in three classes: small enough to follow by hand."""

    x_train: np.ndarray
    y_train: np.ndarray
    x_val: np.ndarray
    y_val: np.ndarray
    num_classes: int = 3
    name: str = "tiny"


@pytest.mark.parametrize("mode", ["eager", "jit", "scan"])
def test_train_figures_are_the_epochs_batch_figures_averaged(mode):
    rng = np.random.default_rng(0)
    data = TinyData(rng.normal(size=(10, 4)).astype(np.float32), rng.integers(0, 3, 10),
                    rng.normal(size=(6, 4)).astype(np.float32), rng.integers(0, 3, 6))
    params = init_network_params([4, 5, 3], jax.random.key(0), init="he")
    _, history = fit(params, data, epochs=2, batch_size=3, step_size=0.5,
                     key=jax.random.key(7), mode=mode)
    # by hand: fit's shuffles, and each batch's loss and accuracy before its own step
    key, by_hand, targets = jax.random.key(7), params, one_hot(data.y_train, 3)
    for epoch in range(2):
        key, epoch_key = jax.random.split(key)
        losses, accuracies = [], []
        for batch in np.asarray(batch_indices(epoch_key, 10, 3)):  # 3 batches, 1 image left out
            x, y = data.x_train[batch], targets[batch]
            losses.append(float(loss(by_hand, x, y)))
            accuracies.append(float(accuracy(by_hand, x, y)))
            by_hand = update(by_hand, x, y, 0.5)
        assert history.train_loss[epoch] == pytest.approx(np.mean(losses), rel=1e-5)
        assert history.train_accuracy[epoch] == pytest.approx(np.mean(accuracies), abs=1e-6)
    val_loss, val_accuracy = evaluate(by_hand, data.x_val, data.y_val)
    assert history.val_loss[-1] == pytest.approx(float(val_loss), rel=1e-5)
    assert history.val_accuracy[-1] == pytest.approx(float(val_accuracy))
    assert len(set(accuracies)) > 1  # the batches differ: an average, not one batch's figure


def test_train_metrics_after_is_a_second_pass_with_the_final_weights(digits):
    params = init_network_params(SIZES, jax.random.key(0), init="he")
    kwargs = dict(epochs=2, batch_size=64, step_size=0.1, key=jax.random.key(0))
    trained, after = fit(params, digits, train_metrics="after", **kwargs)
    same, during = fit(params, digits, **kwargs)
    assert_trees_close(same, trained, rtol=0, atol=0)  # how it measures changes no step
    assert (after.train_metrics, during.train_metrics) == ("after", "during")
    train_loss, train_accuracy = evaluate(trained, digits.x_train, digits.y_train)
    assert after.train_loss[-1] == pytest.approx(float(train_loss), rel=1e-5)
    assert after.train_accuracy[-1] == pytest.approx(float(train_accuracy))
    assert after.val_accuracy == during.val_accuracy
    # the average over an epoch lags behind the weights at its end: a higher loss
    assert during.train_loss[0] > after.train_loss[0]


def test_fit_leaves_the_callers_params_usable(digits):
    params = init_network_params(SIZES, jax.random.key(0))
    before = np.asarray(params[0][0]).copy()
    fit(params, digits, epochs=1, key=jax.random.key(0), mode="scan")  # donates its own copy
    np.testing.assert_array_equal(params[0][0], before)


def test_defaults_reach_90_percent_on_real_mnist_5k():
    from nn_from_scratch import load_dataset
    data = load_dataset("mnist-5k")
    params = init_network_params([784, 512, 512, 10], jax.random.key(0), init="he")
    params, history = fit(params, data, key=jax.random.key(1))
    assert history.val_accuracy[-1] >= 0.90
    assert float(evaluate(params, data.x_test, data.y_test)[1]) >= 0.90


def test_divergence_names_epoch_and_step_and_keeps_the_history(digits):
    params = init_network_params([64, 512, 512, 10], jax.random.key(0), init="he")
    with pytest.raises(DivergedError, match=r"loss became (nan|inf) at epoch \d, step \d+ of 9, "
                                            r"with step_size=100\..*smaller step size, "
                                            r"e\.g\. step_size=10") as error:
        fit(params, digits, epochs=3, step_size=100.0, key=jax.random.key(0))
    assert isinstance(error.value.history, History)


def test_layer_sizes_that_do_not_match_the_data(digits):
    params = init_network_params([784, 512, 10], jax.random.key(0))
    with pytest.raises(InputError, match=r"Layer sizes \[784, 512, 10\] do not match the digits "
                                         r"data: it has 64 pixels.*\[64, 512, 10\]"):
        fit(params, digits, epochs=1, key=jax.random.key(0))


# ---- fit with an optimizer (nn_from_scratch.optim) ----

def _fit_digits(digits, mode="scan", epochs=2, **kwargs):
    params = init_network_params(SIZES, jax.random.key(0), init="he")
    return fit(params, digits, epochs=epochs, batch_size=64, key=jax.random.key(1), mode=mode,
               **kwargs)


def test_fit_with_sgd_optimizer_is_plain_sgd(digits):
    from nn_from_scratch.optim import sgd
    plain, _ = _fit_digits(digits, step_size=0.1)
    with_optimizer, history = _fit_digits(digits, optimizer=sgd(0.1))
    assert_trees_close(with_optimizer, plain, rtol=1e-5, atol=1e-6)
    assert history.optimizer_state is not None


def test_fit_carries_the_optimizer_state_in_every_mode(digits):
    import optax

    from nn_from_scratch.optim import adam
    steps = len(digits.x_train) // 64
    results = {}
    for mode in MODES_FOR_OPTIMIZER:
        results[mode] = _fit_digits(digits, mode=mode, optimizer=adam(1e-2))
        assert int(results[mode][1].optimizer_state.count) == 2 * steps  # across both epochs
    for mode in MODES_FOR_OPTIMIZER[1:]:
        assert_trees_close(results[mode][0], results["scan"][0], rtol=1e-4, atol=1e-5)
    theirs, _ = _fit_digits(digits, optimizer=optax.adam(1e-2))  # Optax's, through the same fit
    assert_trees_close(results["scan"][0], theirs, rtol=1e-4, atol=1e-5)
    history = results["scan"][1]
    assert history.val_accuracy[-1] > 0.8 and history.train_loss[1] < history.train_loss[0]


MODES_FOR_OPTIMIZER = ("scan", "jit", "eager")


def test_fit_refuses_a_step_size_beside_an_optimizer(digits):
    from nn_from_scratch.optim import adamw
    with pytest.raises(InputError, match="both step_size=0.1 and an optimizer") as info:
        _fit_digits(digits, step_size=0.1, optimizer=adamw(1e-3))
    assert "adamw(1e-3)" in str(info.value)
    with pytest.raises(InputError, match="step_size=\\(0.1, 0.05\\)"):
        _fit_digits(digits, step_size=(0.1, 0.05), optimizer=adamw(1e-3))
    with pytest.raises(InputError, match="optimizer must be an Optimizer.*got str 'adam'"):
        _fit_digits(digits, optimizer="adam")
