"""Checkers for lesson 06, vmap: the student batches functions written for one example.

Each answer is a function made with ``jax.vmap``; it is called on small NumPy
inputs whose every row (and column) differs, so that a wrong pairing shows, and
compared with a NumPy reference. The checkers know the usual mistakes: a shared
input that is mapped too (``in_axes`` without ``None``), a batch in the wrong
axis, nesting that is the wrong way round, one gradient for the whole batch
instead of one per example.
"""
from typing import Any

import numpy as np

from ..i18n import N_, _
from ._calls import call, generator, jittered
from ._compare import expect_close, expect_shape, reject_known_wrong
from ._core import Mistake, exercise

LESSON = "06_vmap"


def _normal(seed: int, shape: tuple[int, ...]) -> np.ndarray:
    return generator(seed).normal(size=shape).astype(np.float32)


def _convolve(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The lesson's ``convolve`` in NumPy: ``(n,)`` and ``(3,)`` -> ``(n - 2,)``."""
    return np.array([x[i:i + len(w)] @ w for i in range(len(x) - len(w) + 1)])


def _call_mapped(fn: Any, *args: Any, what: str, shared: str) -> Any:
    """``call``, turning vmap's complaints about mapped sizes into a hint about ``None``."""
    # vmap's own complaints, or convolve given a number where a mapped vector was cut up
    return call(fn, *args, what=what, hints={
        ("inconsistent sizes", "rank", "len(in_axes)", "unsized object"):
            _("{what}: vmap could not map the inputs as asked. {shared}").format(
                what=what, shared=shared)})


@exercise(LESSON, 1, "dot_vmap")
def dot_vmap(student_fn: Any) -> str:
    a, b = _normal(0, (6, 4)), _normal(1, (6, 4))  # (6, 4) batches with different rows
    what = _("dot_vmap(a, b) for a, b of shape (6, 4)")
    got = call(student_fn, a, b, what=what, hints={
        ("contracting dimensions", "dot_general"): N_("jnp.dot was given a whole (6, 4) matrix, "
                                                      "and two of those do not multiply: vmap "
                                                      "it over axis 0 of both inputs, "
                                                      "jax.vmap(jnp.dot, in_axes=(0, 0)), so "
                                                      "that every call gets one row of each")})
    got = np.asarray(got)
    if got.shape == (6, 6):
        raise Mistake("returned shape (6, 6): every row of a against every row of b. Map BOTH "
                      "inputs over axis 0 (in_axes=(0, 0), the default) so that call i pairs "
                      "row i of a with row i of b only")
    if got.shape == (4,):
        raise Mistake("returned shape (4,): it mapped over axis 1, the columns; the rows are "
                      "axis 0 (in_axes=(0, 0), the default)")
    expect_close(got, np.einsum("bi,bi->b", a, b), what, atol=1e-4,
                 hint=_("out[i] must be jnp.dot(a[i], b[i])"))
    return N_("(batch,) dot products of matching rows, as einsum('bi,bi->b', a, b)")


@exercise(LESSON, 2, "convolve_shared")
def convolve_shared(student_fn: Any) -> str:
    xs, w = _normal(2, (4, 7)), _normal(3, (3,))  # 4 signals, ONE kernel
    what = _("convolve_shared(xs, w) for xs (4, 7) and w (3,)")
    got = _call_mapped(student_fn, xs, w, what=what,
                       shared=_("The kernel is shared by every signal, so it is not mapped: "
                                "in_axes=(0, None)"))
    want = np.stack([_convolve(x, w) for x in xs])
    got = np.asarray(got)
    if got.shape != want.shape:
        raise Mistake(_("{what} returned shape {shape}; expected {shape2}, one row per "
                        "signal: map the signals over axis 0 and pass the kernel whole "
                        "(in_axes=(0, None))").format(
                          what=what, shape=got.shape, shape2=want.shape))
    expect_close(got, want, what, atol=1e-4, hint=_("row i must be convolve(xs[i], w)"))
    return N_("every signal convolved with the one shared kernel (in_axes=(0, None))")


@exercise(LESSON, 3, "zipped")
def zipped(student_fn: Any) -> str:
    xs, ws = _normal(4, (5, 3)), _normal(5, (3, 5))  # batch in the rows of xs, columns of ws
    every_pair = xs @ ws  # [i, j]: row i with column j
    for scale in (2.5, -1.0):
        what = _("zipped(xs, ws, {scale}) for xs (5, 3) and ws (3, 5)").format(scale=scale)
        got = call(student_fn, xs, ws, scale, what=what, hints={
            "len(in_axes)": N_("in_axes needs one entry per argument of weighted_sum: three, "
                               "e.g. (0, 1, None)"),
            "rank": N_("the scale is one number shared by every call, so it cannot be mapped: "
                       "its in_axes entry is None"),
            "inconsistent sizes": N_("ws keeps its batch in axis 1 (its columns), so its "
                                     "in_axes entry is 1: in_axes=(0, 1, None)")})
        got = np.asarray(got)
        if got.shape == (5, 5):
            raise Mistake("returned shape (5, 5), every row against every column; zipping pairs "
                          "row i of xs with column i of ws only: one vmap, in_axes=(0, 1, None)")
        if got.shape != (5,):
            raise Mistake(_("{what} returned shape {shape}; expected (5,), one number "
                            "per pair: the batch is axis 0 of xs (its rows) and axis 1 "
                            "of ws (its columns), so in_axes=(0, 1, None)").format(
                              what=what, shape=got.shape))
        want = scale * np.diag(every_pair)
        if not np.allclose(got, want, atol=1e-4):
            if np.allclose(np.sort(got), np.sort(want), atol=1e-4):
                raise Mistake("the right numbers in the wrong order: element i must pair row i "
                              "of xs with column i of ws")
            if np.allclose(got, np.diag(every_pair), atol=1e-4):
                raise Mistake("the scale was not applied: pass it to weighted_sum as the third "
                              "argument (in_axes None)")
            raise Mistake(_("{what} gives {round_got}, expected {round_want}: call i "
                            "must pair row i of xs with COLUMN i of ws (in_axes=(0, 1, "
                            "None))").format(
                              what=what, round_got=np.round(got, 3), round_want=np.round(want, 3)))
    return N_("row i of xs zipped with column i of ws, the scale shared")


@exercise(LESSON, 4, "pairwise")
def pairwise(student_fn: Any) -> str:
    a, b = _normal(6, (5, 4)), _normal(7, (7, 4))
    what = _("pairwise(a, b) for a (5, 4) and b (7, 4)")
    got = call(student_fn, a, b, what=what, hints={
        "inconsistent sizes": N_("vmap tried to zip a's 5 rows with b's 7: one vmap over both "
                                 "inputs pairs row i with row i only. Nest two: the inner one "
                                 "maps b (in_axes=(None, 0)), the outer one maps a (in_axes=(0, "
                                 "None))")})
    got = np.asarray(got)
    want = a @ b.T
    if got.shape == (7, 5) and np.allclose(got, want.T, atol=1e-4):
        raise Mistake("returned (7, 5), the transpose: the OUTER vmap must map the rows of a "
                      "(in_axes=(0, None)) and the inner one the rows of b (in_axes=(None, 0))")
    if got.shape != (5, 7):
        raise Mistake(_("{what} returned shape {shape}; expected (5, 7), one row per "
                        "row of a and one column per row of b: nest two vmaps").format(
                          what=what, shape=got.shape))
    expect_close(got, want, what, atol=1e-4, hint=_("entry [i, j] must be jnp.dot(a[i], b[j])"))
    return N_("(n, m) dot products of every row of a with every row of b, by nested vmap")


def _linear_grads(theta: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Per-example gradients of (theta . x - y)**2 with respect to theta: (n, 3)."""
    return 2 * (x @ theta - y)[:, None] * x


def _examples() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """theta (3,), and 8 examples: X (8, 3), Y (8,)."""
    theta = jittered(np.array([0.5, -1.0, 2.0], np.float32), 12, 0.2)
    return theta, _normal(8, (8, 3)), jittered(np.linspace(-2.0, 3.0, 8).astype(np.float32),
                                                13, 0.2)


@exercise(LESSON, 5, "per_example_grads")
def per_example_grads(student_fn: Any) -> str:
    what = _("per_example_grads(theta, X, Y) for 8 examples")
    theta, x8, y8 = _examples()
    got = _call_mapped(student_fn, theta, x8, y8, what=what,
                       shared=_("theta is the same for every example, so it is not mapped: "
                                "in_axes=(None, 0, 0)"))
    got = np.asarray(got)
    want = _linear_grads(theta, x8, y8)
    if got.shape == (3,):
        raise Mistake("returned ONE gradient (3,) for 8 examples, the gradient of the batch's "
                      "loss; vmap the gradient of ONE example's loss instead: "
                      "jax.vmap(jax.grad(example_loss), in_axes=(None, 0, 0))")
    if got.shape == (8,):
        raise Mistake("returned (8,), one number per example: the losses, not their gradients. "
                      "vmap jax.grad(example_loss), not example_loss")
    got = expect_shape(got, want.shape, what)
    residual = (x8 @ theta - y8)[:, None]
    if np.allclose(got, 2 * residual * theta, atol=1e-4):
        raise Mistake("that is the gradient with respect to x; the model's parameters are "
                      "theta, the first argument, which jax.grad differentiates by default "
                      "(no argnums)")
    expect_close(got, want, what, atol=1e-4,
                 hint=_("row i must be jax.grad(example_loss)(theta, X[i], Y[i])"))
    return N_("one gradient per example, (n, 3), by vmap(grad(example_loss))")


@exercise(LESSON, 6, "convolve_kernels")
def convolve_kernels(student_fn: Any) -> str:
    x, kernels = _normal(9, (7,)), _normal(10, (4, 3))  # ONE signal, 4 kernels
    what = _("convolve_kernels(x, kernels) for x (7,) and kernels (4, 3)")
    got = _call_mapped(student_fn, x, kernels, what=what,
                       shared=_("The signal is shared by every kernel, so it is not mapped: "
                                "in_axes=(None, 0)"))
    want = np.stack([_convolve(x, k) for k in kernels])
    got = np.asarray(got)
    if got.shape != want.shape:
        raise Mistake(_("{what} returned shape {shape}; expected {shape2}, one row per "
                        "kernel: share the signal and map the kernels (in_axes=(None, "
                        "0))").format(what=what, shape=got.shape, shape2=want.shape))
    expect_close(got, want, what, atol=1e-4, hint=_("row j must be convolve(x, kernels[j])"))
    return N_("one signal convolved with each kernel (in_axes=(None, 0))")


@exercise(LESSON, 7, "clipped_mean_grad")
def clipped_mean_grad(student_fn: Any) -> str:
    # 8 gradients of 3 numbers: 3 shorter than max_norm = 2, 5 longer, and so is their mean;
    # 5 of 4 numbers: norms 0.9 to 1.9 around max_norm = 1.5, their mean's 0.67
    lengths = np.array([[1.0], [2.0], [0.5], [1.0], [1.5]], np.float32)
    for grads, max_norm in ((_linear_grads(*_examples()), 2.0),
                            (_normal(11, (5, 4)) * lengths, 1.5)):
        d = grads.shape[1]
        what = _("clipped_mean_grad(grads, {max_norm:.3g}) for grads of shape "
                 "{grads_shape}").format(max_norm=max_norm, grads_shape=grads.shape)
        got = call(student_fn, grads, max_norm, what=what)
        got = expect_shape(got, (d,), what)
        norms = np.linalg.norm(grads, axis=1)
        want = np.mean(grads * np.minimum(1.0, max_norm / norms)[:, None], axis=0)
        mean = grads.mean(axis=0)
        wrong = {
            _("no gradient was clipped: scale each row longer than max_norm down to max_norm "
              "(multiply it by max_norm / its norm)"): mean,
            _("every row was scaled to norm max_norm, the short ones stretched too; only those "
              "LONGER than max_norm shrink: multiply by jnp.minimum(1, max_norm / norm)"):
                np.mean(grads * (max_norm / norms)[:, None], axis=0),
            _("the mean gradient was clipped; DP-SGD clips each EXAMPLE's gradient first, then "
              "takes the mean"): mean * min(1.0, max_norm / float(np.linalg.norm(mean))),
            _("each component was clipped to [-max_norm, max_norm]; clip the NORM of each row "
              "instead, scaling the whole vector"):
                np.clip(grads, -max_norm, max_norm).mean(axis=0),
            _("that is the sum over the examples; take the mean (jnp.mean(..., axis=0))"):
                np.sum(grads * np.minimum(1.0, max_norm / norms)[:, None], axis=0),
        }
        reject_known_wrong(got, wrong, atol=1e-4, want=want)
        expect_close(got, want, what, atol=1e-4,
                     hint=_("the mean over rows of g_i * min(1, max_norm / |g_i|)"))
    return N_("each example's gradient clipped to max_norm, then averaged")
