"""Lesson 02's checkers: each accepts the reference, says "not done" to the stub, and catches
the typical mistakes with a hint that names the fix."""
import jax
import jax.numpy as jnp
import pytest
from conftest import assert_result, stub

from nn_from_scratch.exercises import grad as check


def g(x):
    return x ** 3 + 2 * x


def notebook(source):
    """The names ``source`` defines as a notebook's cell does: in one namespace, __main__."""
    namespace = {"jax": jax, "jnp": jnp, "__name__": "__main__"}
    exec(source, namespace)
    return namespace


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
    # a student's walk (A16): the right numbers from formulas typed in
    assert_result(check.derivatives_at(lambda x: (3 * x ** 2 + 2, 6 * x, 6.0)), "failed",
                  "reads neither g nor jax.grad", "not from formulas typed in")
    typed = notebook("def derivatives_at(x):\n    return 3 * jnp.square(x) + 2, 6 * x, 6.0")
    assert_result(check.derivatives_at(typed["derivatives_at"]), "failed", "typed in")
    # derivatives made before, in the cell, and read as globals: g's, so right
    made = notebook("g = lambda x: x ** 3 + 2 * x\ndg = jax.grad(g)\nd2g = jax.grad(dg)\n"
                    "d3g = jax.grad(d2g)\n\ndef derivatives_at(x):\n"
                    "    return dg(x), d2g(x), d3g(x)")
    assert_result(check.derivatives_at(made["derivatives_at"]), "passed")


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
                  "failed", "/ (2 * h)")  # the walk's C12: the bare numbers before


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


def descent_losses(loss_and_grads, theta, step_size, steps):  # the reference
    losses = []
    for _ in range(steps):
        value, grads = loss_and_grads(theta)
        theta = jax.tree.map(lambda p, g: p - step_size * g, theta, grads)
        losses.append(value)
    return losses


def dict_only(loss_and_grads, theta, step_size, steps):  # the line's dict, as in the lesson
    losses = []
    for _ in range(steps):
        value, grads = loss_and_grads(theta)
        theta = {name: theta[name] - step_size * grads[name] for name in theta}
        losses.append(float(value))
    return losses


PRINTED = [4.5, 3.0, 11.7, 47.0, 190.4, 770.9, 3121.9, 12644.0, 51209.5, 207404.5]


@pytest.mark.parametrize("fn, status, hints", [
    (descent_losses, "passed", ("recorded losses", "overshoots")),
    (stub, "not done", ()),
    (lambda f, t, s, n: descent_losses(f, t, -s, n), "failed", ("UP the gradient",)),
    (lambda f, t, s, n: descent_losses(f, t, 1.5, n), "failed", ("use step_size",)),
    (lambda f, t, s, n: descent_losses(f, t, 1.0, n), "failed", ("whole gradient",)),
    (lambda f, t, s, n: descent_losses(f, t, s, n + 1)[1:], "failed", ("after its step",)),
    (lambda f, t, s, n: descent_losses(f, t, s, n)[-1], "failed", ("list of losses",)),
    (lambda f, t, s, n: PRINTED, "failed", ("returned 10 losses",)),  # the lesson's, typed in
    (lambda f, t, s, n: PRINTED[:n], "failed", ("is off by",)),
    (lambda f, t, s, n: descent_losses(f, {"w": 0.0, "b": 0.0}, s, n), "failed", ("is off by",)),
    # any pytree: the check's third bowl is a tuple
    (dict_only, "failed", ("tuple of 2 items", "jax.tree.map")),
])
def test_descent_losses(fn, status, hints):
    assert_result(check.descent_losses(fn), status, *hints)


# The student walk's answers (walk1, issue 36): a step size written as 0.1, the library's own
# step and difference, a float16 Hessian, a number of steps capped at 6. Each fails on every
# seed, in class and graded, and the right answers pass.
def _capped_at_six(loss_and_grads, theta, step_size, steps):
    return descent_losses(loss_and_grads, theta, step_size, min(steps, 6))


def _library_step(params, grads, step_size):
    from nn_from_scratch.optim import apply_updates
    return apply_updates(params, jax.tree.map(lambda g: -step_size * g, grads))


def _library_difference(f, x, h):
    from nn_from_scratch import gradcheck
    return float(gradcheck.numerical_grad(f, x, h))


def _hessian16(p):
    x, y = p
    return jnp.array([[2 * y, 2 * x], [2 * x, 6 * y]], dtype=jnp.float16)


WALK_WRONG = [  # (checker, answer, a piece of its hint)
    ("sgd_step", lambda params, grads, step_size: jax.tree.map(
        lambda p, g: p - 0.1 * g, params, grads), "stepped by 0.1"),
    ("sgd_step", _library_step, "apply_updates"),
    ("central_difference", _library_difference, "numerical_grad"),
    ("hessian_at", _hessian16, "float16"),
    ("descent_losses", _capped_at_six, "returned 6 losses"),
]

WALK_RIGHT = [
    ("sgd_step", reference_sgd_step),
    ("central_difference", lambda f, x, h: (f(x + h) - f(x - h)) / (2 * h)),
    ("hessian_at", jax.hessian(f2)),
    ("descent_losses", descent_losses),
]


@pytest.mark.parametrize("seed", [None, 1, 2, 3, 11, 22])
def test_the_walks_answers_get_one_verdict_on_every_seed(seed):
    import contextlib

    from nn_from_scratch.exercises._calls import fresh_inputs

    with fresh_inputs(seed) if seed is not None else contextlib.nullcontext():
        for name, answer, hint in WALK_WRONG:
            assert_result(getattr(check, name)(answer), "failed", hint)
        for name, answer in WALK_RIGHT:
            assert_result(getattr(check, name)(answer), "passed")


def test_central_difference_names_an_h_written_as_a_number():
    """The walk's C12: it got the bare numbers."""
    assert_result(check.central_difference(
        lambda f, x, h: (f(x + 1e-3) - f(x - 1e-3)) / (2 * 1e-3)), "failed", "h = 0.001")


def test_an_int_of_x_gets_a_hint_not_jaxs_error():
    """A student's walk: int(x) before jax.grad ended in JAX's 'grad requires real- or
    complex-valued inputs'."""
    def rounded(x):
        x = int(x)
        dg = jax.grad(g)
        return dg(x), jax.grad(dg)(x), jax.grad(jax.grad(dg))(x)
    assert_result(check.derivatives_at(rounded), "failed", "no int(x)")


def test_formulas_for_some_derivatives_and_g_for_others_fail():
    """A second walk: g' from jax.grad, g'' and g''' typed in; and formulas beside `_ = g`."""
    partly = notebook("def g(x):\n    return x ** 3 + 2 * x\n\ndef derivatives_at(x):\n"
                      "    return jax.grad(g)(x), 6 * x, 6.0")
    beside_g = notebook("def g(x):\n    return x ** 3 + 2 * x\n\ndef derivatives_at(x):\n"
                        "    _ = g\n    return 3 * x ** 2 + 2, 6 * x, 6.0")
    for answer in (partly, beside_g):
        assert_result(check.derivatives_at(answer["derivatives_at"]), "failed",
                      "with another g in its place")
