import jax
import jax.numpy as jnp
import numpy as np
import pytest

from nn_from_scratch.params import (
    check_key,
    count_params,
    init_network_params,
    layer_scale,
    random_layer_params,
)


def test_shapes_follow_sizes():
    params = init_network_params([784, 512, 512, 10], jax.random.key(0))
    assert [(w.shape, b.shape) for w, b in params] == [
        ((512, 784), (512,)), ((512, 512), (512,)), ((10, 512), (10,))]
    assert count_params(params) == 784 * 512 + 512 + 512 * 512 + 512 + 512 * 10 + 10


@pytest.mark.parametrize("make_key", [jax.random.key, jax.random.PRNGKey])
def test_both_key_styles_work_and_agree(make_key):
    params = init_network_params([6, 4, 3], make_key(1))
    ref = init_network_params([6, 4, 3], jax.random.key(1))
    for (w, b), (rw, rb) in zip(params, ref):
        np.testing.assert_array_equal(w, rw)
        np.testing.assert_array_equal(b, rb)


def test_same_seed_same_params_different_seed_different():
    a = init_network_params([8, 5, 3], jax.random.key(0))
    b = init_network_params([8, 5, 3], jax.random.key(0))
    c = init_network_params([8, 5, 3], jax.random.key(1))
    assert all(jnp.array_equal(x, y) for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b)))
    assert not jnp.array_equal(a[0][0], c[0][0])


def test_no_key_reused_between_layers_or_w_and_b():
    # Same-shaped layers: if a key were reused, their draws would be identical.
    params = init_network_params([16, 16, 16, 16], jax.random.key(0))
    (w0, b0), (w1, b1), (w2, b2) = params
    assert not jnp.array_equal(w0, w1) and not jnp.array_equal(w1, w2)
    assert not jnp.array_equal(b0, b1)
    w, b = random_layer_params(4, 4, jax.random.key(3))
    assert not jnp.allclose(w[0], b)  # W and b come from different subkeys


@pytest.mark.parametrize("init, expected", [
    ("normal", lambda m, n: 1e-2), ("he", lambda m, n: np.sqrt(2 / m)),
    ("glorot", lambda m, n: np.sqrt(2 / (m + n)))])
def test_init_scales(init, expected):
    params = init_network_params([1000, 800, 10], jax.random.key(0), init=init)
    for (w, _), (m, n) in zip(params, [(1000, 800), (800, 10)]):
        assert float(jnp.std(w)) == pytest.approx(expected(m, n), rel=0.05)
        assert layer_scale(m, n, init) == pytest.approx(expected(m, n))


def test_he_init_keeps_relu_activations_alive():
    # Why scaled init matters: with 0.01 the signal all but vanishes after 3 layers.
    x = jax.random.normal(jax.random.key(9), (784,))
    def last_hidden(params):
        a = x
        for w, b in params[:-1]:
            a = jnp.maximum(0, w @ a + b)
        return float(jnp.std(a))
    sizes = [784, 512, 512, 512, 10]
    assert last_hidden(init_network_params(sizes, jax.random.key(0), "he")) > 0.3
    # With 0.01 the signal fades to the size of the biases, 50x smaller:
    assert last_hidden(init_network_params(sizes, jax.random.key(0), "normal")) < 0.02


@pytest.mark.parametrize("bad", [0, 42, np.array([1, 2, 3], np.uint32), jnp.zeros(2), "key"])
def test_non_keys_are_refused_clearly(bad):
    with pytest.raises(TypeError, match=r"must be a JAX PRNG key.*jax\.random\.key\(seed\)"):
        init_network_params([3, 2], bad)


def test_batch_of_keys_is_not_one_key():
    with pytest.raises(TypeError, match="shape \\(2,\\)"):
        check_key(jax.random.split(jax.random.key(0)))


@pytest.mark.parametrize("sizes", [[784], [784, 0, 10], [784, 2.5, 10], []])
def test_bad_sizes(sizes):
    with pytest.raises(ValueError, match="at least two positive integers"):
        init_network_params(sizes, jax.random.key(0))


def test_unknown_init():
    with pytest.raises(ValueError, match="init must be one of"):
        init_network_params([3, 2], jax.random.key(0), init="xavier")
