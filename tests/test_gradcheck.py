import jax
import jax.numpy as jnp
import numpy as np
import pytest

from nn_from_scratch.gradcheck import check_grad, numerical_grad


def test_numerical_grad_of_cubic():
    # d/dx (x^3 + 2x) = 3x^2 + 2 = 14 at x = 2
    g = numerical_grad(lambda x: jnp.sum(x ** 3 + 2 * x), np.array([2.0, -1.0]))
    np.testing.assert_allclose(g, [14.0, 5.0], rtol=1e-8)


def test_numerical_grad_matches_jax_grad():
    def f(x):
        return jnp.sum(jnp.tanh(x) * x)
    x = np.random.default_rng(0).normal(size=(3, 2))
    np.testing.assert_allclose(numerical_grad(f, x), jax.grad(f)(jnp.asarray(x)), rtol=1e-5)


def test_check_grad_passes_for_true_gradients():
    params = [(jnp.ones((2, 3)), jnp.zeros(2))]
    def f(p):
        return jnp.sum(jnp.sin(p[0][0])) + jnp.sum(p[0][1] ** 2)
    assert check_grad(f, params, jax.random.key(0)) < 1e-7


def test_check_grad_catches_a_wrong_gradient():
    @jax.custom_vjp
    def square(x):
        return x ** 2
    square.defvjp(lambda x: (x ** 2, x), lambda x, g: (g * x,))  # wrong: should be 2x
    err = check_grad(lambda p: jnp.sum(square(p)), jnp.array([1.0, 2.0]), jax.random.key(0))
    assert err > 0.1


def test_check_grad_refuses_a_seed():
    with pytest.raises(TypeError, match="PRNG key"):
        check_grad(jnp.sum, jnp.ones(2), 0)
