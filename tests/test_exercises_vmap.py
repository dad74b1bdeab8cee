"""Lesson 06's checkers: each accepts the reference, says "not done" to the stub, and catches
the typical mistakes with a hint that names the fix."""
import contextlib

import jax
import jax.numpy as jnp
from conftest import assert_result, stub

from nn_from_scratch.exercises import vmap as check


def convolve(x, w):  # the lesson's convolve, for ONE signal and ONE kernel of 3
    return jnp.array([jnp.dot(x[i - 1:i + 2], w) for i in range(1, len(x) - 1)])


def weighted_sum(x, w, scale):
    return scale * jnp.dot(x, w)


def example_loss(theta, x, y):
    return (jnp.dot(theta, x) - y) ** 2


per_example_grads = jax.vmap(jax.grad(example_loss), in_axes=(None, 0, 0))


def test_dot_vmap():
    assert_result(check.dot_vmap(jax.vmap(jnp.dot)), "passed")
    assert_result(check.dot_vmap(jax.jit(jax.vmap(jnp.dot, in_axes=(0, 0)))), "passed")
    assert_result(check.dot_vmap(...), "not done", "`...`")
    assert_result(check.dot_vmap(jnp.dot), "failed", "whole matrix", "in_axes=(0, 0)")
    assert_result(check.dot_vmap(jax.vmap(jnp.dot, in_axes=(None, 0))), "failed",
                  "every row of a against", "BOTH")
    assert_result(check.dot_vmap(jax.vmap(jnp.dot, in_axes=1)), "failed", "axis 1")


def test_an_array_for_a_function_is_summarised():
    """The issue's 19.5 KB message: the dot products themselves handed in, not the function."""
    products = jax.vmap(jnp.dot)(jnp.ones((1000, 100)), jnp.ones((1000, 100)))
    for checker in (check.dot_vmap, check.convolve_shared, check.zipped, check.pairwise,
                    check.per_example_grads, check.convolve_kernels, check.clipped_mean_grad):
        result = checker(products)
        assert_result(result, "failed", "expected a function", "array of shape (1000,)")
        assert len(result.line) < 200, result.line


def test_convolve_shared():
    assert_result(check.convolve_shared(jax.vmap(convolve, in_axes=(0, None))), "passed")
    assert_result(check.convolve_shared(...), "not done")
    assert_result(check.convolve_shared(stub), "not done", "NotImplementedError")
    assert_result(check.convolve_shared(jax.vmap(convolve)), "failed", "not mapped",
                  "in_axes=(0, None)")


def test_zipped():
    assert_result(check.zipped(jax.vmap(weighted_sum, in_axes=(0, 1, None))), "passed")
    assert_result(check.zipped(...), "not done")
    assert_result(check.zipped(jax.vmap(weighted_sum, in_axes=(0, 0, None))), "failed",
                  "axis 1", "(0, 1, None)")
    assert_result(check.zipped(jax.vmap(weighted_sum, in_axes=(0, 1, 0))), "failed",
                  "in_axes entry is None")
    assert_result(check.zipped(jax.vmap(weighted_sum, in_axes=(0, 1))), "failed",
                  "one entry per argument")
    # pairing row i with column 4 - i: the right kind of numbers, the wrong pairs
    assert_result(check.zipped(lambda xs, ws, s: s * jnp.einsum("ik,ki->i", xs, ws[:, ::-1])),
                  "failed", "COLUMN i")
    assert_result(check.zipped(lambda xs, ws, s: s * (xs @ ws)), "failed", "every row against")


def test_pairwise():
    right = jax.vmap(jax.vmap(jnp.dot, in_axes=(None, 0)), in_axes=(0, None))
    assert_result(check.pairwise(right), "passed")
    assert_result(check.pairwise(...), "not done")
    turned = jax.vmap(jax.vmap(jnp.dot, in_axes=(0, None)), in_axes=(None, 0))
    assert_result(check.pairwise(turned), "failed", "transpose", "OUTER")
    assert_result(check.pairwise(jax.vmap(jnp.dot)), "failed", "zip", "Nest two")


def test_per_example_grads():
    assert_result(check.per_example_grads(per_example_grads), "passed")
    assert_result(check.per_example_grads(...), "not done")
    assert_result(check.per_example_grads(jax.vmap(jax.grad(example_loss))), "failed",
                  "theta", "in_axes=(None, 0, 0)")

    def batch_grad(theta, xs, ys):  # the gradient of the mean loss: one for the whole batch
        return jax.grad(lambda t: jnp.mean(jax.vmap(example_loss, (None, 0, 0))(t, xs, ys)))(theta)
    assert_result(check.per_example_grads(batch_grad), "failed", "ONE gradient")
    assert_result(check.per_example_grads(jax.vmap(example_loss, in_axes=(None, 0, 0))),
                  "failed", "losses, not their gradients")
    wrt_x = jax.vmap(jax.grad(example_loss, argnums=1), in_axes=(None, 0, 0))
    assert_result(check.per_example_grads(wrt_x), "failed", "with respect to x")


def test_convolve_kernels():
    assert_result(check.convolve_kernels(jax.vmap(convolve, in_axes=(None, 0))), "passed")
    assert_result(check.convolve_kernels(...), "not done")
    assert_result(check.convolve_kernels(jax.vmap(convolve)), "failed", "in_axes=(None, 0)")
    assert_result(check.convolve_kernels(jax.vmap(convolve, in_axes=(0, None))), "failed")


def clipped(grads, max_norm, scale_all=False, clip_mean=False):  # the reference, and mistakes
    norms = jnp.linalg.norm(grads, axis=1, keepdims=True)
    if clip_mean:
        m = grads.mean(0)
        return m * jnp.minimum(1.0, max_norm / jnp.linalg.norm(m))
    factor = max_norm / norms if scale_all else jnp.minimum(1.0, max_norm / norms)
    return jnp.mean(grads * factor, axis=0)


def test_clipped_mean_grad():
    assert_result(check.clipped_mean_grad(clipped), "passed")
    assert_result(check.clipped_mean_grad(stub), "not done")
    assert_result(check.clipped_mean_grad(lambda g, m: g.mean(0)), "failed",
                  "no gradient was clipped")
    assert_result(check.clipped_mean_grad(lambda *a: clipped(*a, scale_all=True)), "failed",
                  "short ones stretched")
    assert_result(check.clipped_mean_grad(lambda *a: clipped(*a, clip_mean=True)), "failed",
                  "mean gradient was clipped")
    assert_result(check.clipped_mean_grad(lambda g, m: jnp.clip(g, -m, m).mean(0)), "failed",
                  "each component")
    assert_result(check.clipped_mean_grad(lambda g, m: len(g) * clipped(g, m)), "failed", "sum")
    # the norms of the columns (axis 0), not of each example's gradient
    assert_result(check.clipped_mean_grad(
        lambda g, m: jnp.mean(g * jnp.minimum(1.0, m / jnp.linalg.norm(g, axis=0)), axis=0)),
        "failed", "is off by")


# The student walk's answers (walk1, issue 36): sizes written as numbers, the forbidden
# a @ b.T, a list for an array, an eps in the norms. Each gets the same verdict on every seed.
def _shared_convolve(xs, w):
    return jnp.stack([convolve(xs[i], w) for i in range(4)])


def _pairwise_loops(a, b):
    return jnp.array([[jnp.dot(a[i], b[j]) for j in range(7)] for i in range(5)])


def _clipped_eps(grads, max_norm):
    norms = jnp.linalg.norm(grads, axis=1, keepdims=True)
    return jnp.mean(grads * jnp.minimum(1.0, max_norm / (norms + 1e-3)), axis=0)


WALK_WRONG = [  # (checker, answer, a piece of its hint)
    ("dot_vmap", lambda a, b: jnp.array([jnp.dot(a[i], b[i]) for i in range(6)]), ""),
    ("dot_vmap", lambda a, b: jnp.diag(a @ b.T).tolist(), "Python list"),
    ("convolve_shared", _shared_convolve, ""),
    ("convolve_shared", lambda xs, w: jnp.stack([jnp.dot(xs[:, i:i + 3], w)
                                                  for i in range(5)]).T, ""),
    ("zipped", lambda xs, ws, scale: jnp.array([weighted_sum(xs[i], ws[:, i], scale)
                                                 for i in range(5)]), ""),
    ("pairwise", _pairwise_loops, ""),
    ("pairwise", lambda a, b: a @ b.T, "without jax.vmap"),
    ("pairwise", lambda a, b: jnp.matmul(a, b.T), "without jax.vmap"),
    ("per_example_grads", lambda theta, xs, ys: jnp.stack(
        [jax.grad(example_loss)(theta, xs[i], ys[i]) for i in range(8)]), ""),
    ("convolve_kernels", lambda x, kernels: jnp.stack([convolve(x, kernels[j])
                                                        for j in range(4)]), ""),
    ("convolve_kernels", lambda x, kernels: jnp.stack([jnp.dot(kernels, x[i:i + 3])
                                                        for i in range(5)]).T, ""),
    ("clipped_mean_grad", _clipped_eps, "norms + 1e-3"),
]

WALK_RIGHT = [
    ("dot_vmap", jax.vmap(jnp.dot)),
    ("convolve_shared", jax.vmap(convolve, in_axes=(0, None))),
    ("zipped", jax.vmap(weighted_sum, in_axes=(0, 1, None))),
    ("pairwise", jax.jit(jax.vmap(jax.vmap(jnp.dot, in_axes=(None, 0)), in_axes=(0, None)))),
    ("per_example_grads", per_example_grads),
    ("convolve_kernels", jax.vmap(convolve, in_axes=(None, 0))),
    ("clipped_mean_grad", clipped),
]


def test_the_walks_answers_get_one_verdict_on_every_seed():
    from nn_from_scratch.exercises._calls import fresh_inputs

    for seed in (None, 1, 2, 3, 7, 22):
        with fresh_inputs(seed) if seed is not None else contextlib.nullcontext():
            for name, answer, hint in WALK_WRONG:
                assert_result(getattr(check, name)(answer), "failed", hint)
            for name, answer in WALK_RIGHT:
                assert_result(getattr(check, name)(answer), "passed")


def test_pairwise_by_nested_vmap_only_is_said_of_vmap():
    result = check.pairwise(jax.vmap(jax.vmap(jnp.dot, in_axes=(None, 0)), in_axes=(0, None)))
    assert_result(result, "passed", "nested vmap")




def test_a_kernel_mapped_over_its_columns_gets_the_in_axes_hint():
    """The walk's C10: in_axes=(None, 1) ended in JAX's raw dot_general error."""
    assert_result(check.convolve_kernels(jax.vmap(convolve, in_axes=(None, 1))), "failed",
                  "in_axes=(None, 0)")
