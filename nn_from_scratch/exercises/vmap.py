"""Checkers for lesson 06, vmap: the student batches functions written for one example.

Each answer is a function made with ``jax.vmap``; it is called on small NumPy
inputs whose every row (and column) differs, so that a wrong pairing shows, and
compared with a NumPy reference. The checkers know the usual mistakes: a shared
input that is mapped too (``in_axes`` without ``None``), a batch in the wrong
axis, nesting that is the wrong way round, one gradient for the whole batch
instead of one per example.
"""
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ..i18n import N_, _
from . import _fixtures
from ._calls import Hints, call, generator
from ._compare import (
    expect_close,
    expect_own_code,
    expect_shape,
    expect_vmap,
    reject_known_wrong,
)
from ._core import Mistake, exercise
from ._draws import draw_sizes

LESSON = "06_vmap"


def _normal(source: np.random.Generator, *shape: int) -> jax.Array:
    """Normal numbers of ``shape`` as a jax.Array, as the lesson's own inputs are (an answer
    that maps over indices, a[i] inside the vmap, needs JAX's arrays: walk 11)."""
    return jnp.asarray(source.normal(size=shape), jnp.float32)


def _an_array(got: Any, what: str) -> np.ndarray:
    """``got`` as an array, or a Mistake for a Python list or tuple where vmap gives an array."""
    if isinstance(got, (list, tuple)):
        raise Mistake(_("{what} returned a Python {kind}; vmap returns one array: return it "
                        "as it is, without .tolist() or a list around it").format(
                          what=what, kind=type(got).__name__))
    return np.asarray(got)


def _convolve(x: Any, w: Any) -> np.ndarray:
    """The lesson's ``convolve`` in NumPy: ``(n,)`` and ``(3,)`` -> ``(n - 2,)``."""
    x, w = np.asarray(x), np.asarray(w)
    return np.array([x[i:i + len(w)] @ w for i in range(len(x) - len(w) + 1)])


def _call_mapped(fn: Any, *args: Any, what: str, shared: str) -> Any:
    """``call``, turning vmap's complaints about mapped sizes into a hint about ``None``."""
    # vmap's own complaints, or convolve given a number (or a column) where a mapped vector
    # was cut up
    return call(fn, *args, what=what, hints={
        ("inconsistent sizes", "rank", "len(in_axes)", "unsized object",
         "contracting dimensions"):
            _("{what}: vmap could not map the inputs as asked. {shared}").format(
                what=what, shared=shared)})


def _transposed(got: np.ndarray, want: np.ndarray, what: str) -> None:
    """A Mistake for ``want.T``: the batch put in axis 1 of the output (out_axes=1)."""
    if got.shape == want.T.shape and np.allclose(got, want.T, atol=1e-4):
        raise Mistake(_("{what} returned {shape}, the transpose of the answer: the batch went "
                        "to axis 1 of the output (out_axes=1?). Leave out_axes at 0, one row "
                        "per call").format(what=what, shape=got.shape))


def _own_convolve(student_fn: Any, args: tuple[Any, ...], what: str) -> None:
    """A Mistake if the answer maps JAX's ready-made convolution (jnp.correlate, jnp.convolve,
    lax's conv), not the lesson's convolve."""
    expect_own_code(student_fn, args, what, "jax", ("correlate", "convolve",
                                                    "conv_general_dilated", "conv"),
                    calls=_fixtures.ready_made_calls, message=_(
                        "{what} maps {name}, JAX's ready-made convolution: the exercise maps the "
                        "lesson's convolve"))


# NumPy handed a traced value inside the map (np.dot on a row, a NumPy array indexed by a
# traced i): a walk's answers to 06.1 and 06.3 ended in JAX's raw error
_NUMPY_IN_VMAP: Hints = {"TracerArrayConversionError": N_(
    "NumPy cannot work on a traced value: inside jax.vmap each row (and an index i mapped over) "
    "is a tracer, so np.dot(a[i], ...) or a NumPy array indexed by it fails. Use jnp, and map "
    "over the rows themselves rather than over indices")}


@exercise(LESSON, 1, "dot_vmap")
def dot_vmap(student_fn: Any) -> str:
    source = generator(0)
    # batches with different rows, the second of 10 or more (a[:8] typed in fails)
    drawn = draw_sizes(source, 2, n=(3, 8), d=(2, 8))
    for s in (drawn[0], {**drawn[1], "n": drawn[1]["n"] + 7}):
        n, d = s["n"], s["d"]
        a, b = _normal(source, n, d), _normal(source, n, d)
        what = _("dot_vmap(a, b) for a, b of shape {shape}").format(shape=(n, d))
        got = call(student_fn, a, b, what=what, hints={
            ("contracting dimensions", "dot_general"): N_(
                "jnp.dot was given a whole matrix, and two of those do not multiply: vmap "
                "it over axis 0 of both inputs, jax.vmap(jnp.dot, in_axes=(0, 0)), so that "
                "every call gets one row of each"),
            ("inconsistent sizes", "len(in_axes)"): _(
                "{what}: vmap could not map the inputs as asked: both are mapped over their "
                "rows, axis 0, with one in_axes entry per argument: in_axes=(0, 0), the "
                "default").format(what=what), **_NUMPY_IN_VMAP})
        got = _an_array(got, what)
        if got.shape == (n, n):
            raise Mistake(_("returned shape {shape}: every row of a against every row of b. "
                            "Map BOTH inputs over axis 0 (in_axes=(0, 0), the default) so "
                            "that call i pairs row i of a with row i of b only").format(
                              shape=got.shape))
        if got.shape == (d,):
            raise Mistake(_("returned shape {shape}: it mapped over axis 1, the columns; the "
                            "rows are axis 0 (in_axes=(0, 0), the default)").format(
                              shape=got.shape))
        got = expect_shape(got, (n,), what)
        expect_close(got, np.einsum("bi,bi->b", a, b), what, atol=1e-4,
                     hint=_("out[i] must be jnp.dot(a[i], b[i])"))
    expect_vmap(student_fn, (a, b), what, "jax.vmap(jnp.dot)")
    return N_("(batch,) dot products of matching rows, as einsum('bi,bi->b', a, b)")


@exercise(LESSON, 2, "convolve_shared")
def convolve_shared(student_fn: Any) -> str:
    source = generator(2)
    # signals, ONE kernel; the second signals 10 or more long (xs[:, :6] typed in fails)
    drawn = draw_sizes(source, 2, batch=(4, 8), length=(4, 9))
    for s in (drawn[0], {**drawn[1], "length": drawn[1]["length"] + 6}):
        xs, w = _normal(source, s["batch"], s["length"]), _normal(source, 3)
        what = _("convolve_shared(xs, w) for xs {shape} and w (3,)").format(shape=xs.shape)
        got = _call_mapped(student_fn, xs, w, what=what,
                           shared=_("The kernel is shared by every signal, so it is not "
                                    "mapped: in_axes=(0, None)"))
        want = np.stack([_convolve(x, w) for x in xs])
        got = _an_array(got, what)
        _transposed(got, want, what)
        if got.shape != want.shape:
            raise Mistake(_("{what} returned shape {shape}; expected {shape2}, one row per "
                            "signal: map the signals over axis 0 and pass the kernel whole "
                            "(in_axes=(0, None))").format(
                              what=what, shape=got.shape, shape2=want.shape))
        expect_close(got, want, what, atol=1e-4, hint=_("row i must be convolve(xs[i], w)"))
    expect_vmap(student_fn, (xs, w), what, "jax.vmap(convolve, in_axes=(0, None))")
    _own_convolve(student_fn, (xs, w), what)
    return N_("every signal convolved with the one shared kernel (in_axes=(0, None))")


@exercise(LESSON, 3, "zipped")
def zipped(student_fn: Any) -> str:
    source = generator(4)
    # a negative scale other than -1: abs(scale) is neither the scale nor no scale at all
    for s, scale in zip(draw_sizes(source, 2, n=(3, 8), d=(2, 7)), (2.5, -1.5)):
        n, d = s["n"], s["d"]
        xs, ws = _normal(source, n, d), _normal(source, d, n)  # batch: rows of xs, columns of ws
        every_pair = xs @ ws  # [i, j]: row i with column j
        what = _("zipped(xs, ws, {scale}) for xs {xs_shape} and ws {ws_shape}").format(
            scale=scale, xs_shape=xs.shape, ws_shape=ws.shape)
        got = call(student_fn, xs, ws, scale, what=what, hints={
            "len(in_axes)": N_("in_axes needs one entry per argument of weighted_sum: three, "
                               "e.g. (0, 1, None)"),
            "rank": N_("the scale is one number shared by every call, so it cannot be mapped: "
                       "its in_axes entry is None"),
            "inconsistent sizes": N_("ws keeps its batch in axis 1 (its columns), so its "
                                     "in_axes entry is 1: in_axes=(0, 1, None)"),
            ("matmul", "core dimension", "contracting dimensions"): N_(
                "xs is (n, d) and ws (d, n): row i of xs goes with COLUMN i of ws, one "
                "weighted_sum per pair: jax.vmap(weighted_sum, in_axes=(0, 1, None))"),
            "out of bounds": N_("an index out of bounds: a size written as a number? The batch "
                                "is xs.shape[0], whatever it is; vmap needs no index at all"),
            **_NUMPY_IN_VMAP})
        got = _an_array(got, what)
        if got.shape == (n, n):
            raise Mistake(_("returned shape {shape}, every row against every column; zipping "
                            "pairs row i of xs with column i of ws only: one vmap, "
                            "in_axes=(0, 1, None)").format(shape=got.shape))
        if got.shape != (n,):
            raise Mistake(_("{what} returned shape {shape}; expected {shape2}, one number "
                            "per pair: the batch is axis 0 of xs (its rows) and axis 1 "
                            "of ws (its columns), so in_axes=(0, 1, None), and its size is "
                            "xs.shape[0], never a number written in (JAX clamps an index "
                            "past the end: no error tells you)").format(
                              what=what, shape=got.shape, shape2=(n,)))
        want = scale * np.diag(every_pair)
        if not np.allclose(got, want, atol=1e-4):
            if np.allclose(np.sort(got), np.sort(want), atol=1e-4):
                raise Mistake("the right numbers in the wrong order: element i must pair row i "
                              "of xs with column i of ws")
            if np.allclose(got, np.diag(every_pair), atol=1e-4):
                raise Mistake("the scale was not applied: pass it to weighted_sum as the third "
                              "argument (in_axes None)")
            if np.allclose(got, -want, atol=1e-4):
                raise Mistake(_("with the scale {scale} the sign is lost: multiply by the "
                                "scale as it is, negative too (no abs)").format(scale=scale))
            raise Mistake(_("{what} gives {round_got}, expected {round_want}: call i "
                            "must pair row i of xs with COLUMN i of ws (in_axes=(0, 1, "
                            "None))").format(
                              what=what, round_got=np.round(got, 3), round_want=np.round(want, 3)))
    expect_vmap(student_fn, (xs, ws, scale), what,
                "jax.vmap(weighted_sum, in_axes=(0, 1, None))")
    return N_("row i of xs zipped with column i of ws, the scale shared")


@exercise(LESSON, 4, "pairwise")
def pairwise(student_fn: Any) -> str:
    source = generator(6)
    for s in draw_sizes(source, 2, n=(3, 8), m=(3, 9), d=(2, 7)):
        a, b = _normal(source, s["n"], s["d"]), _normal(source, s["m"], s["d"])
        what = _("pairwise(a, b) for a {a_shape} and b {b_shape}").format(
            a_shape=a.shape, b_shape=b.shape)
        got = call(student_fn, a, b, what=what, hints={
            "at least one non-None": N_("a vmap with every in_axes None maps nothing: the "
                                        "inner vmap maps b (in_axes=(None, 0)), the outer one "
                                        "maps a (in_axes=(0, None))"),
            "inconsistent sizes": N_("vmap tried to zip the rows of a with those of b: one "
                                     "vmap over both inputs pairs row i with row i only. Nest "
                                     "two: the inner one maps b (in_axes=(None, 0)), the outer "
                                     "one maps a (in_axes=(0, None))")})
        got = _an_array(got, what)
        want = a @ b.T
        if got.shape == want.T.shape and np.allclose(got, want.T, atol=1e-4):
            raise Mistake(_("returned {shape}, the transpose: the OUTER vmap must map the rows "
                            "of a (in_axes=(0, None)) and the inner one the rows of b "
                            "(in_axes=(None, 0))").format(shape=got.shape))
        if got.shape != want.shape:
            raise Mistake(_("{what} returned shape {shape}; expected {shape2}, one row per "
                            "row of a and one column per row of b: nest two vmaps").format(
                              what=what, shape=got.shape, shape2=want.shape))
        expect_close(got, want, what, atol=1e-4,
                     hint=_("entry [i, j] must be jnp.dot(a[i], b[j])"))
    expect_vmap(student_fn, (a, b), what, _("nest two vmaps of jnp.dot, the inner one over b, "
                                            "the outer one over a"), vmaps=2)
    return N_("(n, m) dot products of every row of a with every row of b, by nested vmap")


def _linear_grads(theta: Any, x: Any, y: Any) -> np.ndarray:
    """Per-example gradients of (theta . x - y)**2 with respect to theta: (n, 3)."""
    theta, x, y = np.asarray(theta), np.asarray(x), np.asarray(y)
    return 2 * (x @ theta - y)[:, None] * x


def _examples(source: np.random.Generator, n: int, d: int
              ) -> tuple[jax.Array, jax.Array, jax.Array]:
    """theta (d,), and n examples: X (n, d), Y (n,), as jax.Arrays (an answer that maps over
    indices, Y[i] inside the vmap, needs JAX's arrays: walk 12)."""
    theta = source.uniform(-2.0, 2.0, size=d).astype(np.float32)
    return (jnp.asarray(theta), _normal(source, n, d),
            jnp.asarray(source.uniform(-2.0, 3.0, size=n), jnp.float32))


@exercise(LESSON, 5, "per_example_grads")
def per_example_grads(student_fn: Any) -> str:
    source = generator(8)
    for s in draw_sizes(source, 2, n=(4, 10), d=(2, 6)):
        n = s["n"]
        what = _("per_example_grads(theta, X, Y) for {n} examples").format(n=n)
        theta, xs, ys = _examples(source, n, s["d"])
        got = call(student_fn, theta, xs, ys, what=what, hints={
            ("inconsistent sizes", "rank", "len(in_axes)", "unsized object",
             "contracting dimensions"): _(
                "{what}: vmap could not map the inputs as asked. theta is the same for every "
                "example, so it is not mapped, and X and Y both are, over their rows: "
                "in_axes=(None, 0, 0)").format(what=what),
            "scalar-output": _(
                "{what}: jax.grad takes a function with ONE number out, and got one number per "
                "example. Take the grad of ONE example's loss, then vmap that over X and Y: "
                "jax.vmap(jax.grad(example_loss), in_axes=(None, 0, 0))").format(what=what),
            "cannot reshape": _(
                "{what} failed to reshape: a size written as a number? Each gradient has "
                "theta's shape, whatever its length; vmap stacks them with no reshape").format(
                    what=what)})
        got = _an_array(got, what)
        want = _linear_grads(theta, xs, ys)
        if got.shape == theta.shape:
            raise Mistake(_("returned ONE gradient {shape} for {n} examples, the gradient of "
                            "the batch's loss; vmap the gradient of ONE example's loss "
                            "instead: jax.vmap(jax.grad(example_loss), in_axes=(None, 0, "
                            "0))").format(shape=got.shape, n=n))
        if got.shape == (n,) and np.allclose(got, -2 * (xs @ theta - ys), atol=1e-4):
            raise Mistake(_("returned {shape}: the gradient with respect to y (argnums=2); the "
                            "model's parameters are theta, the first argument, which jax.grad "
                            "differentiates by default").format(shape=got.shape))
        if got.shape == (n,):
            raise Mistake(_("returned {shape}, one number per example: the losses, not their "
                            "gradients. vmap jax.grad(example_loss), not example_loss").format(
                              shape=got.shape))
        got = expect_shape(got, want.shape, what)
        residual = (xs @ theta - ys)[:, None]
        if np.allclose(got, 2 * residual * theta, atol=1e-4):
            raise Mistake("that is the gradient with respect to x; the model's parameters are "
                          "theta, the first argument, which jax.grad differentiates by default "
                          "(no argnums)")
        expect_close(got, want, what, atol=1e-4,
                     hint=_("row i must be jax.grad(example_loss)(theta, X[i], Y[i])"))
    expect_vmap(student_fn, (theta, xs, ys), what,
                "jax.vmap(jax.grad(example_loss), in_axes=(None, 0, 0))", grad=True)
    return N_("one gradient per example, (n, 3), by vmap(grad(example_loss))")


@exercise(LESSON, 6, "convolve_kernels")
def convolve_kernels(student_fn: Any) -> str:
    source = generator(9)
    # ONE signal, kernels; never a square output (length - 2 kernels), where out_axes=1 hides
    for s in draw_sizes(source, 2, length=(5, 10), kernels=(4, 8),
                        keep=lambda s: s["length"] - 2 != s["kernels"]):
        x, kernels = _normal(source, s["length"]), _normal(source, s["kernels"], 3)
        what = _("convolve_kernels(x, kernels) for x {x_shape} and kernels {k_shape}").format(
            x_shape=x.shape, k_shape=kernels.shape)
        got = _call_mapped(student_fn, x, kernels, what=what,
                           shared=_("The signal is shared by every kernel, so it is not "
                                    "mapped: in_axes=(None, 0)"))
        want = np.stack([_convolve(x, k) for k in kernels])
        got = _an_array(got, what)
        _transposed(got, want, what)
        if got.shape != want.shape:
            raise Mistake(_("{what} returned shape {shape}; expected {shape2}, one row per "
                            "kernel: share the signal and map the kernels (in_axes=(None, "
                            "0))").format(what=what, shape=got.shape, shape2=want.shape))
        expect_close(got, want, what, atol=1e-4,
                     hint=_("row j must be convolve(x, kernels[j])"))
    expect_vmap(student_fn, (x, kernels), what, "jax.vmap(convolve, in_axes=(None, 0))")
    _own_convolve(student_fn, (x, kernels), what)
    return N_("one signal convolved with each kernel (in_axes=(None, 0))")


def _gradients(source: np.random.Generator, n: int, d: int, max_norm: float) -> np.ndarray:
    """n gradients (n, d) of norms 0.5 to 2.5 times max_norm (some clipped, some not), near
    one direction, so that their mean is longer than max_norm too."""
    direction = source.normal(size=d)
    rows = direction / np.linalg.norm(direction) + 0.3 * source.normal(size=(n, d)) / np.sqrt(d)
    norms = max_norm * source.permutation(np.linspace(0.5, 2.5, n))
    return (rows * (norms / np.linalg.norm(rows, axis=1))[:, None]).astype(np.float32)


@exercise(LESSON, 7, "clipped_mean_grad")
def clipped_mean_grad(student_fn: Any) -> str:
    # the second max_norm is small: an eps added to the norms (norms + 1e-3) shows at any
    # draw; the first is not, so that squared norms (all tiny there: nothing clipped) are named
    source = generator(11)
    for s, max_norm in zip(draw_sizes(source, 3, n=(3, 9), d=(2, 6)), (2.0, 0.01, 1.5)):
        grads = _gradients(source, s["n"], s["d"], max_norm)
        atol = 1e-4 * max_norm
        what = _("clipped_mean_grad(grads, {max_norm:.3g}) for grads of shape "
                 "{grads_shape}").format(max_norm=max_norm, grads_shape=grads.shape)
        got = call(student_fn, grads, max_norm, what=what)
        got = expect_shape(got, (s["d"],), what)
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
            _("the rows were scaled by their SQUARED norms: a norm is the square root of the "
              "sum of squares, jnp.linalg.norm(g) or jnp.sqrt(jnp.sum(g ** 2))"):
                np.mean(grads * np.minimum(1.0, max_norm / norms ** 2)[:, None], axis=0),
        }
        reject_known_wrong(got, wrong, atol=atol, want=want)
        if max_norm < 0.1:  # once: the lesson's clipping written out, not a library's
            expect_own_code(student_fn, (grads, max_norm), what, _fixtures.OPTIMIZER_MODULES,
                            message=_("{what} calls {name}, a ready-made clipping: the "
                                      "exercise is the clipping written out, each row times "
                                      "jnp.minimum(1, max_norm / its norm)"))
        # a guard added to the norms (it shows where max_norm is small): the eps that fits best
        guarded = {eps: np.mean(grads * np.minimum(1.0, max_norm / (norms + eps))[:, None],
                                axis=0) for eps in np.logspace(-9, -1, 33)}
        nearest = min(guarded, key=lambda e: float(np.max(np.abs(got - guarded[e]))))
        eps = float(nearest) if np.allclose(got, guarded[nearest], atol=atol) else None
        expect_close(got, want, what, atol=atol,
                     hint=_("the mean over rows of g_i * min(1, max_norm / |g_i|)")
                     if eps is None else
                     _("the mean over rows of g_i * min(1, max_norm / |g_i|), with the norms "
                       "themselves: an eps added to them (norms + {eps:g}) is {share:.1%} of "
                       "this max_norm. Leave it out: a row of zeros has norm 0, and "
                       "min(1, max_norm / 0) is min(1, inf) = 1, no NaN").format(
                         eps=eps, share=eps / max_norm))
    return N_("each example's gradient clipped to max_norm, then averaged")
