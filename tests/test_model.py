import jax
import jax.numpy as jnp
import numpy as np
import pytest

from nn_from_scratch.model import batched_predict, predict, relu


def test_relu():
    np.testing.assert_array_equal(relu(jnp.array([-2.0, 0.0, 3.0])), [0.0, 0.0, 3.0])


def test_predict_returns_log_probabilities(small_params):
    x = jax.random.uniform(jax.random.key(1), (64,))
    out = predict(small_params, x)
    assert out.shape == (10,)
    assert float(jnp.sum(jnp.exp(out))) == pytest.approx(1.0, abs=1e-5)
    assert bool(jnp.all(out <= 0))


def test_log_softmax_is_stable_for_huge_logits():
    params = [(jnp.eye(3) * 1e4, jnp.zeros(3))]
    out = predict(params, jnp.array([1.0, 0.0, 0.0]))
    assert bool(jnp.all(jnp.isfinite(out)))
    assert float(out[0]) == pytest.approx(0.0)


def test_vmap_equals_python_loop(small_params):
    xs = jax.random.uniform(jax.random.key(2), (7, 64))
    looped = jnp.stack([predict(small_params, x) for x in xs])
    np.testing.assert_allclose(batched_predict(small_params, xs), looped, rtol=1e-5, atol=1e-6)


def test_jit_matches_eager(small_params):
    xs = jax.random.uniform(jax.random.key(2), (5, 64))
    np.testing.assert_allclose(jax.jit(batched_predict)(small_params, xs),
                               batched_predict(small_params, xs), rtol=1e-5, atol=1e-6)


def test_predict_on_a_batch_points_to_batched_predict(small_params):
    with pytest.raises(ValueError,
                       match=r"ONE example of shape \(64,\); got \(128, 64\).*batched_predict"):
        predict(small_params, jnp.zeros((128, 64)))


def test_batched_predict_on_one_example_points_to_predict(small_params):
    with pytest.raises(ValueError, match=r"batch of shape \(batch, 64\); got \(64,\).*predict"):
        batched_predict(small_params, jnp.zeros(64))


def test_wrong_width_names_both_sizes(small_params):
    with pytest.raises(ValueError, match=r"expects 64 input features but the data has 784"):
        batched_predict(small_params, jnp.zeros((3, 784)))
