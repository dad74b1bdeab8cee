"""Lesson 06's checkers: each accepts the reference, says "not done" to the stub, and catches
the typical mistakes with a hint that names the fix."""
import contextlib

import jax
import jax.numpy as jnp
from conftest import assert_result, stub

from nn_from_scratch.exercises import vmap as check
from nn_from_scratch.exercises._calls import fresh_inputs


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
    ("clipped_mean_grad", _clipped_eps, "norms + 0.001"),
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


def test_walk_nine_wants_vmap_where_the_exercise_says_vmap():
    """A student's walk of lesson 06: only 06.4 checked that vmap was used, so einsum, loops,
    NumPy, jnp.correlate and jax.jacobian passed 06.1-06.3, 06.5 and 06.6; one vmap around a
    matrix product, or a throw-away vmap beside einsum, passed 06.4."""
    import numpy as np

    cases = [
        ("dot_vmap", lambda a, b: jnp.einsum("bi,bi->b", a, b)),
        ("dot_vmap", lambda a, b: jnp.stack([jnp.dot(a[i], b[i]) for i in range(len(a))])),
        ("dot_vmap", lambda a, b: np.sum(np.asarray(a) * np.asarray(b), axis=1)),
        ("convolve_shared", lambda xs, w: np.stack([[np.asarray(x)[i:i + 3] @ np.asarray(w)
                                                     for i in range(len(x) - 2)] for x in xs])),
        ("zipped", lambda xs, ws, scale: scale * jnp.einsum("ij,ji->i", xs, ws)),
        ("per_example_grads", lambda t, X, Y: 2 * (X @ t - Y)[:, None] * X),
        ("convolve_kernels", lambda x, ks: np.stack([np.correlate(np.asarray(x), np.asarray(k),
                                                                  "valid") for k in ks])),
    ]
    for name, answer in cases:
        assert_result(getattr(check, name)(answer), "failed", "without jax.vmap")
    assert_result(check.per_example_grads(
        lambda t, X, Y: jax.jacobian(lambda t: (X @ t - Y) ** 2)(t)), "failed",
        "without jax.grad")

    def one_vmap(a, b):
        return jax.vmap(lambda x: b @ x)(a)

    def throw_away(a, b):
        jax.vmap(jnp.dot)(a[:1], b[:1])
        return jnp.einsum("id,jd->ij", a, b)
    for answer in (one_vmap, jax.vmap(lambda x, b: jnp.dot(b, x), in_axes=(0, None)),
                   throw_away):
        assert_result(check.pairwise(answer), "failed", "one jax.vmap", "jnp.dot")


def test_walk_nine_hints():
    """A student's walk of lesson 06: hints that named another mistake, and raw errors."""
    assert_result(check.convolve_shared(jax.vmap(convolve, in_axes=(0, None), out_axes=1)),
                  "failed", "transpose", "out_axes")
    for seed in (None, 1, 2, 3):  # its outputs are never square: the same hint every time
        with fresh_inputs(seed) if seed else contextlib.nullcontext():
            assert_result(check.convolve_kernels(
                jax.vmap(convolve, in_axes=(None, 0), out_axes=1)), "failed", "out_axes")
    assert_result(check.dot_vmap(jax.vmap(jnp.dot, in_axes=(0, 1))), "failed",
                  "in_axes=(0, 0)")
    assert_result(check.dot_vmap(jax.vmap(jnp.dot, in_axes=(0,))), "failed", "one in_axes entry")
    assert_result(check.zipped(lambda xs, ws, scale: scale * jnp.diag(xs @ ws.T)), "failed",
                  "COLUMN i of ws")
    with fresh_inputs(1):
        assert_result(check.zipped(lambda xs, ws, scale: jnp.stack(
            [weighted_sum(xs[i], ws[:, i], scale) for i in range(6)])), "failed",
            "xs.shape[0]")
    assert_result(check.per_example_grads(jax.grad(jax.vmap(example_loss, in_axes=(None, 0, 0)))),
                  "failed", "ONE number out")
    assert_result(check.per_example_grads(
        jax.vmap(jax.grad(example_loss), in_axes=(None, 0, None))), "failed", "ONE number out")
    assert_result(check.per_example_grads(
        jax.vmap(jax.grad(example_loss, argnums=2), in_axes=(None, 0, 0))), "failed",
        "with respect to y")
    assert_result(check.per_example_grads(
        jax.vmap(jax.grad(example_loss), in_axes=(None, None, 0))), "failed",
        "X and Y both are")
    assert_result(check.per_example_grads(  # no drawn n * d is a multiple of 11
        lambda t, X, Y: per_example_grads(t, X, Y).reshape(-1, 11)), "failed",
        "a size written as a number")

    def clipped_by(norms_of):
        def answer(grads, max_norm):
            n = norms_of(grads)
            return jnp.mean(grads * jnp.minimum(1.0, max_norm / n), axis=0)
        return answer
    for wrong in (lambda g: jnp.linalg.norm(g, axis=0, keepdims=True),  # the wrong axis
                  lambda g: jnp.sqrt(jnp.mean(g ** 2, axis=1, keepdims=True))):  # an RMS
        result = check.clipped_mean_grad(clipped_by(wrong))
        assert result.status == "failed" and "eps" not in result.message, result.line
    assert_result(check.clipped_mean_grad(
        clipped_by(lambda g: jnp.linalg.norm(g, axis=1, keepdims=True) + 1e-5)), "failed",
        "norms + 1e-05", "Leave it out")


def test_walk_ten_typed_sizes_fail_on_every_draw():
    """A third walk: a[:8] in 06.1 and xs[:, :6] in 06.2 passed when every drawn size was
    smaller."""
    for seed in (None, 1, 2, 3, 4, 5):
        with fresh_inputs(seed) if seed else contextlib.nullcontext():
            assert check.dot_vmap(lambda a, b: jax.vmap(jnp.dot)(a[:8], b[:8])).status == "failed"
            assert check.convolve_shared(lambda xs, w: jax.vmap(
                convolve, in_axes=(0, None))(xs[:, :6], w)).status == "failed"


def test_walk_ten_pairwise_mapping_nothing_gets_a_hint():
    assert_result(check.pairwise(jax.vmap(jax.vmap(jnp.dot, in_axes=(None, 0)),
                                          in_axes=(None, None))), "failed", "maps nothing")


def test_walk_ten_ready_made_convolution_and_clipping():
    """A third walk: jnp.correlate mapped by vmap passed 06.2 and 06.6; Optax's and the
    library's clip_by_global_norm passed 06.7."""
    import optax

    from nn_from_scratch import optim
    correlate = jax.vmap(lambda x, w: jnp.correlate(x, w, mode="valid"), in_axes=(0, None))
    assert_result(check.convolve_shared(correlate), "failed", "ready-made convolution")
    assert_result(check.convolve_kernels(jax.vmap(
        lambda x, k: jnp.correlate(x, k, mode="valid"), in_axes=(None, 0))), "failed",
        "ready-made convolution")
    for library in (optax, optim):
        def clipped(grads, max_norm, library=library):
            t = library.clip_by_global_norm(max_norm)
            return jnp.mean(jnp.stack([t.update(g, t.init(g))[0] for g in grads]), axis=0)
        assert_result(check.clipped_mean_grad(clipped), "failed", "ready-made clipping")


def test_walk_hints_squared_norm_abs_scale_and_numpy_in_the_map():
    """Walk 9b's answers that got a generic or raw message: a squared norm in 06.7, abs(scale)
    in 06.3 (with a scale of -1 it read as "the scale was not applied"), and NumPy on a traced
    row or index in 06.1 and 06.3 (JAX's raw TracerArrayConversionError)."""
    import numpy as np

    def squared(g, m):
        return jnp.mean(jax.vmap(lambda row: row * jnp.minimum(1.0, m / jnp.sum(row ** 2)))(g),
                        axis=0)
    assert_result(check.clipped_mean_grad(squared), "failed", "SQUARED norms")
    assert_result(check.zipped(lambda xs, ws, s: jax.vmap(weighted_sum, in_axes=(0, 1, None))(
        xs, ws, abs(s))), "failed", "sign is lost", "no abs")
    assert_result(check.dot_vmap(lambda a, b: jax.vmap(lambda i: np.dot(a[i], b[i]))(
        jnp.arange(len(a)))), "failed", "NumPy cannot work on a traced value")
    assert_result(check.zipped(lambda xs, ws, s: jax.vmap(lambda x, w: np.dot(x, w) * s,
                                                          in_axes=(0, 1))(xs, ws)), "failed",
                  "NumPy cannot work on a traced value")


def test_a_vmap_run_and_thrown_away_earns_nothing():
    """Walk 10: 06 counted the vmaps (and 06.5 the grads) an answer RAN, so a vmap run and
    thrown away beside einsum passed; the check now makes each call's inputs NaN in turn, and
    one whose poisoning leaves the answer clean is not used."""
    def beside_einsum(a, b):
        jax.vmap(jnp.dot)(a, b)
        return jnp.einsum("bi,bi->b", a, b)
    assert_result(check.dot_vmap(beside_einsum), "failed", "runs jax.vmap", "not what it returns")

    def over_indices(a, b):  # right: a vmap over indices (no float input), its result returned
        a, b = jnp.asarray(a), jnp.asarray(b)
        return jax.vmap(lambda i: jnp.dot(a[i], b[i]))(jnp.arange(a.shape[0]))
    assert_result(check.dot_vmap(over_indices), "passed")
    assert_result(check.dot_vmap(jax.vmap(jnp.dot)), "passed")


def test_a_grad_run_and_thrown_away_earns_nothing():
    """06.5 wants vmap of grad: a grad run and thrown away beside a formula worked out by hand
    (the gradient of the squared error, 2 (w . x - y) x) earns nothing."""
    def by_hand(w, xs, ys):
        jax.vmap(jax.grad(example_loss), in_axes=(None, 0, 0))(w, xs, ys)  # thrown away
        return jax.vmap(lambda x, y: 2 * (jnp.dot(w, x) - y) * x)(xs, ys)
    assert_result(check.per_example_grads(by_hand), "failed", "runs jax.grad",
                  "not what it returns")


def test_walk_twelve_used_means_the_result_changes():
    """Walk 12: the first "used" test made a call's inputs NaN and looked for NaN in the
    result, so right answers that mask NaN were refused and a vmap added times 0 passed; the
    check now changes the inputs finitely and asks whether the result changes at all."""
    vmapped = jax.vmap(jnp.dot)
    for right in (lambda a, b: jnp.nan_to_num(vmapped(a, b)),
                  lambda a, b: (lambda v: jnp.where(jnp.isfinite(v), v, 0.0))(vmapped(a, b)),
                  lambda a, b: jnp.fmax(vmapped(a, b), -jnp.inf)):
        assert_result(check.dot_vmap(right), "passed")
    assert_result(check.per_example_grads(lambda t, xs, ys: jnp.nan_to_num(per_example_grads(
        t, xs, ys))), "passed")
    assert_result(check.per_example_grads(lambda t, xs, ys: jax.vmap(  # over indices
        lambda i: jax.grad(example_loss)(t, xs[i], ys[i]))(jnp.arange(xs.shape[0]))), "passed")

    def einsum(a, b):
        return jnp.einsum("bi,bi->b", a, b)
    for wrong in (lambda a, b: einsum(a, b) + 0 * vmapped(a, b),
                  lambda a, b: einsum(a, b) + vmapped(a, b) - vmapped(a, b),
                  lambda a, b: jnp.where(jnp.isnan(vmapped(a, b)), vmapped(a, b), einsum(a, b)),
                  lambda a, b: [jax.vmap(lambda i: i * 2)(jnp.arange(3)), einsum(a, b)][1],
                  lambda a, b: [[vmapped(a, b) for _unused in range(9)], einsum(a, b)][1]):
        assert_result(check.dot_vmap(wrong), "failed", "not what it returns")


def test_walk_thirteen_keyword_inputs_no_inputs_float_flags_and_wrapping_indices():
    """Walk 13: the check changed only a vmap's positional inputs, left a vmap with no inputs
    (axis_size) nothing to change, kept float flags of 0 and 1 on their sides of 0.5, and moved
    wrapping indices (i + 1) onto the same set: right answers refused, each kept here."""
    from jax import lax
    assert_result(check.dot_vmap(lambda a, b: jax.vmap(lambda x, y: jnp.dot(x, y))(x=a, y=b)),
                  "passed")
    assert_result(check.dot_vmap(lambda a, b: jax.vmap(
        lambda: jnp.dot(a[lax.axis_index("i")], b[lax.axis_index("i")]), axis_name="i",
        axis_size=a.shape[0])()), "passed")

    def wrapping(a, b):
        n = a.shape[0]
        ids, vals = jax.vmap(lambda i: (i % n, jnp.dot(a[i % n], b[i % n])))(jnp.arange(n))
        return jnp.zeros(n).at[ids].set(vals)
    assert_result(check.dot_vmap(wrapping), "passed")
    assert_result(check.per_example_grads(lambda t, xs, ys: jax.vmap(
        lambda x, y: jax.grad(example_loss)(t, x, y))(x=xs, y=ys)), "passed")
