"""One step and one epoch (nn_from_scratch.epoch): the SGD update descends, jitted or not, with
its batch's figures for free; its step size is one positive finite number; an epoch's batches
are a shuffled partition; train_epoch is the same steps as one program."""
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import assert_trees_close

from nn_from_scratch import InputError, accuracy, batch_indices, loss, one_hot, train_epoch, update
from nn_from_scratch.epoch import _update_with_metrics


@pytest.fixture
def batch(digits):
    return digits.x_train[:32], one_hot(digits.y_train[:32], 10)


def test_update_descends(small_params, batch):
    x, y = batch
    new = update(small_params, x, y, 0.1)
    assert float(loss(new, x, y)) < float(loss(small_params, x, y))


def test_jitted_and_unjitted_updates_agree_and_the_metrics_come_for_free(small_params, batch):
    x, y = batch
    expected = update(small_params, x, y, 0.1)
    assert_trees_close(jax.jit(update)(small_params, x, y, 0.1), expected)
    new, (value, acc) = _update_with_metrics(small_params, x, y, 0.1)
    assert_trees_close(new, expected, rtol=1e-6, atol=0)  # the accuracy changes no gradient
    assert float(value) == pytest.approx(float(loss(small_params, x, y)), rel=1e-6)
    assert float(acc) == pytest.approx(float(accuracy(small_params, x, y)), abs=1e-7)


@pytest.mark.parametrize("step_size", [np.float32(0.5), np.float64(0.5), jnp.float32(0.5),
                                       np.array(0.5), 1, np.int64(1)])
def test_numpy_and_jax_scalars_are_step_sizes(small_params, batch, step_size):
    assert_trees_close(update(small_params, *batch, step_size),
                       update(small_params, *batch, float(step_size)))


@pytest.mark.parametrize("step_size", [0, -0.1, math.nan, math.inf])
def test_bad_step_size(small_params, batch, step_size):
    with pytest.raises(InputError, match=f"finite number greater than 0; got {step_size}"):
        update(small_params, *batch, step_size)


@pytest.mark.parametrize("step_size", [True, np.array([0.1, 0.2]), "0.1", None])
def test_step_size_that_is_not_one_number(small_params, batch, step_size):
    with pytest.raises(InputError, match="step_size must be a single number"):
        update(small_params, *batch, step_size)


def test_train_epoch_is_one_program_for_the_whole_epoch(small_params, digits):
    x, y = digits.x_train, np.asarray(one_hot(digits.y_train, 10))
    batches = batch_indices(jax.random.key(0), len(x), 128)
    expected = small_params
    for b in np.asarray(batches):
        expected = update(expected, x[b], y[b], 0.1)
    copy = jax.tree.map(jnp.copy, small_params)  # train_epoch donates what it is given
    params, (losses, accuracies) = train_epoch(copy, x, y, batches, 0.1)
    assert losses.shape == accuracies.shape == (len(batches),)
    assert_trees_close(params, expected, rtol=1e-4, atol=1e-5)


def test_batch_indices_are_a_shuffled_partition():
    idx = batch_indices(jax.random.key(0), 10, 3)
    assert idx.shape == (3, 3)
    assert len(set(np.asarray(idx).ravel())) == 9  # no repeats; one example dropped
    assert not np.array_equal(idx, batch_indices(jax.random.key(1), 10, 3))
    np.testing.assert_array_equal(idx, batch_indices(jax.random.key(0), 10, 3))


@pytest.mark.parametrize("batch_size", [0, 11])
def test_batch_size_out_of_range(batch_size):
    with pytest.raises(InputError, match=f"got {batch_size}"):
        batch_indices(jax.random.key(0), 10, batch_size)
