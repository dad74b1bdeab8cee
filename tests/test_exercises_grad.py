"""Lesson 02's checkers: each accepts the reference, says "not done" to the stub, and catches
the typical mistakes with a hint that names the fix."""
import jax
import jax.numpy as jnp
import pytest
from conftest import assert_result, stub

from nn_from_scratch.exercises import grad as check


def g(x):
    return x ** 3 + 2 * x


def test_derivatives_at():
    dg = jax.grad(g)
    d2g = jax.grad(dg)
    assert_result(check.derivatives_at(lambda x: (dg(x), d2g(x), jax.grad(d2g)(x))), "passed",
                  "14, 12 and 6")
    assert_result(check.derivatives_at(stub), "not done")
    assert_result(check.derivatives_at(lambda x: (g(x), dg(x), d2g(x))), "failed",
                  "one step too early")
    assert_result(check.derivatives_at(lambda x: (14.0, 12.0, 6.0)), "failed", "instead of typing")
    assert_result(check.derivatives_at(lambda x: (dg(x), d2g(x))), "failed", "3 numbers; got 2")
    assert_result(check.derivatives_at(lambda x: (dg(x), dg(x), dg(x))), "failed",
                  "jax.grad(jax.grad(g))")


def test_grad_sum_tanh():
    assert_result(check.grad_sum_tanh(jax.grad(lambda v: jnp.sum(jnp.tanh(v)))), "passed")
    assert_result(check.grad_sum_tanh(stub), "not done")
    assert_result(check.grad_sum_tanh(jax.grad(jnp.tanh)), "failed", "ONE number out",
                  "jnp.sum")
    assert_result(check.grad_sum_tanh(jnp.tanh), "failed", "tanh(x) itself")
    assert_result(check.grad_sum_tanh(lambda v: 1 - jnp.tanh(v)), "failed", "1 - tanh(x)**2")
    assert_result(check.grad_sum_tanh(lambda v: jnp.sum(1 - jnp.tanh(v) ** 2)), "failed",
                  "x's shape")


def reference_sgd_step(params, grads, step_size):
    return jax.tree.map(lambda p, g: p - step_size * g, params, grads)


def test_sgd_step():
    assert_result(check.sgd_step(reference_sgd_step), "passed")
    assert_result(check.sgd_step(stub), "not done")
    assert_result(check.sgd_step(lambda p, g, s: jax.tree.map(lambda a, b: a + s * b, p, g)),
                  "failed", "UP the gradient")
    assert_result(check.sgd_step(lambda p, g, s: jax.tree.map(lambda a, b: a - b, p, g)),
                  "failed", "step_size")

    def dict_only(params, grads, step_size):  # works for the line's dict, not for a network
        return {k: params[k] - step_size * grads[k] for k in params}
    assert_result(check.sgd_step(dict_only), "failed", "list of (W, b) raised TypeError",
                  "jax.tree.map")

    def zipped(params, grads, step_size):  # the classic: arithmetic on containers
        return [p - step_size * g for p, g in zip(params, grads)]
    assert_result(check.sgd_step(zipped), "failed", "do not reach the arrays", "jax.tree.map")

    def flattened(params, grads, step_size):
        return [p - step_size * g for p, g in zip(jax.tree.leaves(params), jax.tree.leaves(grads))]
    assert_result(check.sgd_step(flattened), "failed", "same structure")


def test_central_difference():
    assert_result(check.central_difference(lambda f, x, h: (f(x + h) - f(x - h)) / (2 * h)),
                  "passed")
    assert_result(check.central_difference(stub), "not done")
    assert_result(check.central_difference(lambda f, x, h: (f(x + h) - f(x)) / h), "failed",
                  "one-sided")
    assert_result(check.central_difference(lambda f, x, h: (f(x) - f(x - h)) / h), "failed",
                  "one-sided")
    assert_result(check.central_difference(lambda f, x, h: (f(x + h) - f(x - h)) / h), "failed",
                  "2 * h")
    assert_result(check.central_difference(lambda f, x, h: (f(x + h) - f(x - h)) / 2 * h),
                  "failed", "expected")


def f2(p):
    return p[0] ** 2 * p[1] + p[1] ** 3


def test_hessian_at():
    assert_result(check.hessian_at(jax.hessian(f2)), "passed")
    assert_result(check.hessian_at(jax.jacfwd(jax.jacrev(f2))), "passed")
    assert_result(check.hessian_at(stub), "not done")
    assert_result(check.hessian_at(jax.grad(f2)), "failed", "the gradient", "jax.hessian")
    assert_result(check.hessian_at(lambda p: jnp.array([[4.0, 2.0], [2.0, 12.0]])), "failed",
                  "instead of typing")
    assert_result(check.hessian_at(lambda p: jax.hessian(f2)(p) / 2), "failed", "[[2y, 2x]")


DIVERGING = [4.5, 3.0, 11.7, 47.0, 190.4, 770.9, 3121.9, 12644.0, 51209.5, 207404.5]


@pytest.mark.parametrize("losses, status, hint", [
    (DIVERGING, "passed", "every step overshoots"),
    (jnp.array(DIVERGING), "passed", ""),
    ([*DIVERGING[:-1], float("inf")], "passed", "past float32's range"),
    (..., "not done", ""),
    ([4.5, 3.7, 3.1, 2.5, 2.1, 1.8, 1.5, 1.3, 1.1, 0.9], "failed", "converges; use 1.5"),
    ([4.5, 0.9, 0.8, 0.8, 0.8, 0.8, 0.8, 0.8, 0.9, 0.9], "failed", "converges"),
    ([4.5, 5.0, 5.5, 6.0, 6.5], "failed", "should explode"),
    (207404.5, "failed", "a list of numbers"),
    ("diverges", "failed", "expected a list of losses"),
])
def test_big_step_losses(losses, status, hint):
    assert_result(check.big_step_losses(losses), status, hint)
