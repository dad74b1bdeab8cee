import jax
import jax.numpy as jnp
import numpy as np
import pytest

from nn_from_scratch.gradcheck import check_grad
from nn_from_scratch.losses import accuracy, loss, one_hot


def test_one_hot_by_hand():
    np.testing.assert_array_equal(one_hot(jnp.array([0, 2, 1]), 3),
                                  [[1, 0, 0], [0, 0, 1], [0, 1, 0]])
    assert one_hot(jnp.array([3]), 5).dtype == jnp.float32


def test_one_hot_refuses_float_labels():
    with pytest.raises(TypeError, match="integer class labels; got dtype float32"):
        one_hot(jnp.array([0.0, 1.0]), 2)


def test_loss_is_mean_cross_entropy():
    # One layer with W = 0 and b = log p gives predict = log p for every input.
    p = jnp.array([0.7, 0.2, 0.1])
    params = [(jnp.zeros((3, 4)), jnp.log(p))]
    x = jnp.zeros((2, 4))
    y = one_hot(jnp.array([0, 2]), 3)
    expected = -(np.log(0.7) + np.log(0.1)) / 2
    assert float(loss(params, x, y)) == pytest.approx(expected, rel=1e-6)
    # The seed tutorial's -mean(preds * targets) is this divided by the number of classes.
    seed_style = -jnp.mean(jnp.log(p)[None, :] * y)
    assert float(seed_style) == pytest.approx(expected / 3, rel=1e-6)


def test_accuracy_by_hand():
    # logits pick class argmax(b): always class 1 here.
    params = [(jnp.zeros((3, 2)), jnp.array([0.0, 5.0, 0.0]))]
    x = jnp.zeros((4, 2))
    labels = jnp.array([1, 1, 0, 2])
    assert float(accuracy(params, x, labels)) == pytest.approx(0.5)
    assert float(accuracy(params, x, one_hot(labels, 3))) == pytest.approx(0.5)


def test_grad_of_loss_matches_finite_differences(small_params, digits):
    x, y = digits.x_train[:16], one_hot(digits.y_train[:16], 10)
    err = check_grad(lambda p: loss(p, x, y), small_params, jax.random.key(0))
    assert err < 1e-6
