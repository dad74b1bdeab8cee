"""Checkers for lesson 05, JAX's sharp bits: each exercise meets one of them head on.

Out-of-bounds indices that clamp instead of failing, shapes that change and
recompile, Python loops that unroll into huge programs, float64 that is off,
and ``exp`` overflowing float32 into infinities and NaN gradients. The
checkers try the student's function on NumPy inputs, under ``jit`` where it
matters, and recognise the usual half-fixes.
"""
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ..i18n import N_, _
from . import _fixtures
from ._calls import call, generator, jittered, nudged
from ._compare import as_array, expect_close, expect_shape
from ._core import Mistake, exercise
from ._draws import draw_sizes
from ._hints import summary
from ._remote import beside, same_object, transformed

LESSON = "05_sharp_bits"
# Indices into 4 rows: in range, one past the end, negative (from the end), below -4, far out.
INDICES = np.array([0, 3, 4, -1, -4, -5, 100], np.int32)


def _rows(table: Any, idx: np.ndarray, out_of_range: str) -> np.ndarray:
    """table[idx] row by row, with out-of-range rows NaN ("fill") or clamped ("clamp")."""
    table, n, rows = np.asarray(table), len(table), []
    for i in idx.tolist():
        j = i + n if i < 0 else i
        if 0 <= j < n:
            rows.append(table[j])
        elif out_of_range == "clamp":
            rows.append(table[min(max(j, 0), n - 1)])
        else:
            rows.append(np.full(table.shape[1:], np.nan, table.dtype))
    return np.stack(rows)


@exercise(LESSON, 1, "lookup that shows out-of-bounds indices")
def lookup(student_fn: Any) -> str:
    table = jnp.asarray(jittered(np.arange(12, dtype=np.float32).reshape(4, 3), 70, 0.4))
    # and a table of a drawn size, its indices at its own ends: a bound typed in (idx < 4) fails
    draw = generator(71)
    n, d = int(draw.integers(5, 10)), int(draw.integers(2, 6))
    other = jnp.asarray(draw.normal(size=(n, d)).astype(np.float32))
    ends = np.array([0, n - 1, n, -1, -n, -n - 1, 4, -4, 3 * n], np.int32)
    for t, indices in ((table, INDICES), (table[:, 0], INDICES), (other, ends)):
        want = _rows(t, indices, "fill")
        what = _("lookup(table, idx) for a table of shape {t_shape} and idx = {tolist}").format(
                   t_shape=t.shape, tolist=indices.tolist())
        got = as_array(call(student_fn, t, indices, what=what))
        if t.ndim == 2 and got.shape == (len(indices),):
            raise Mistake(_("{what} has shape {shape}, one number per index: jnp.take "
                            "flattens the table unless you pass axis=0").format(
                              what=what, shape=got.shape))
        got = expect_shape(got, want.shape, what)
        if np.allclose(got, _rows(t, indices, "clamp")):
            raise Mistake("out-of-bounds indices were clamped to the first or last row, as "
                          "table[idx] does; ask for NaN instead: "
                          "table.at[idx].get(mode='fill', fill_value=jnp.nan)")
        negative = (indices < 0) & (indices >= -len(t))
        if np.all(np.isnan(got[negative])):
            raise Mistake("indices -1 to -n are in range, counting from the end as in NumPy "
                          "(-1 is the last row); only indices >= n or < -n are out of range")
        if not np.allclose(got, want, equal_nan=True):
            wrong = [i for i, row_ok in zip(indices.tolist(), np.all(np.isclose(
                got, want, equal_nan=True).reshape(len(indices), -1), axis=1)) if not row_ok]
            raise Mistake(_("{what} is wrong at indices {wrong}: rows of table in "
                            "range, NaN for an index >= n or < -n").format(
                              what=what, wrong=wrong))
    jitted = np.asarray(transformed(student_fn, jax.jit)(table, INDICES))
    if not np.allclose(jitted, _rows(table, INDICES, "fill"), equal_nan=True):
        raise Mistake("jax.jit(lookup) gives other rows than lookup: no Python `if` or NumPy "
                      "on the indices; let the indexing's mode handle them")
    return N_("rows in range, NaN for indices past either end, under jit too")


@exercise(LESSON, 2, "pad a batch to a fixed size")
def pad_batch(student_fn: Any) -> str:
    rng = generator(0)
    # Two fixed sizes and row widths, each with batches of other sizes: one program per shape.
    for group in draw_sizes(rng, 2, size=(6, 10), width=(2, 5)):
        _padded_group(student_fn, rng, group["size"], group["width"])
    return N_("same shapes for every batch size, so one compiled program serves them all")


def _padded_group(student_fn: Any, rng: np.random.Generator, size: int, width: int) -> None:
    """05.2's cases for one fixed size and row width: batches of 3 sizes, one trace."""
    traces = 0

    @jax.jit
    def masked_mean(padded: jax.Array, mask: jax.Array) -> jax.Array:
        nonlocal traces
        traces += 1  # runs once per compiled shape
        weights = mask.astype(padded.dtype)
        return jnp.sum(padded * weights[:, None], axis=0) / jnp.sum(weights)

    for n in (size // 2 - 1, size - 2, size):
        x = rng.normal(size=(n, width)).astype(np.float32)
        what = _("pad_batch(x, {size}) for x of shape {x_shape}").format(size=size, x_shape=x.shape)
        out = call(student_fn, x, size, what=what)
        if not (isinstance(out, (tuple, list)) and len(out) == 2):
            raise Mistake(_("{what} should return a pair (padded, mask); got {name}").format(
                              what=what, name=type(out).__name__))
        padded, mask = np.asarray(out[0]), np.asarray(out[1])
        if padded.shape == (n + size, width):
            raise Mistake(_("{what} has {n} rows: pad TO {size} rows, adding {size} - n").format(
                              what=what, n=n + size, size=size))
        padded = expect_shape(padded, (size, width), _("padded from {what}").format(what=what))
        mask = expect_shape(mask, (size,), _("mask from {what}").format(what=what))
        if not np.all((mask == 0) | (mask == 1)):
            raise Mistake(_("the mask should be True for real rows and False for "
                            "padding; got {tolist}").format(tolist=mask.tolist()))
        mask = mask.astype(bool)
        if n < size and np.array_equal(mask, np.arange(size) >= n):
            raise Mistake("the mask is inverted: True marks the n real rows, False the padding")
        if not np.array_equal(mask, np.arange(size) < n):
            raise Mistake(_("mask {tolist} for {n} real rows: the real rows come first, "
                            "then the padding (pad at the end)").format(
                              tolist=mask.astype(int).tolist(), n=n))
        if not np.array_equal(padded[:n], x):
            raise Mistake(_("the first {n} rows of padded should be x itself (pad at "
                            "the end)").format(n=n))
        if np.any(padded[n:] != 0):
            raise Mistake("the padding rows should be zeros")
        expect_close(masked_mean(out[0], out[1]), x.mean(axis=0), _("the masked mean"))
    if traces != 1:
        raise Mistake(_("a jitted function of (padded, mask) was traced {traces} times "
                        "for 3 batch sizes: give every output the same shape and dtype").format(
                          traces=traces))


def _ema_reference(xs: np.ndarray, decay: float) -> np.ndarray:
    m, out = 0.0, []
    for x in xs.astype(np.float64):
        m = decay * m + (1 - decay) * x
        out.append(m)
    return np.array(out)


@exercise(LESSON, 3, "a loop with lax.scan")
def ema(student_fn: Any) -> str:
    draw = generator(1)
    long_xs = draw.normal(size=100).astype(np.float32)
    # two lengths and decays: a length (or a decay) written as a number fails
    for n, decay in ((40, 0.9), (int(draw.integers(12, 31)), 0.75)):
        xs = long_xs[:n]
        what = _("ema(xs, {decay}) for xs of shape ({n},)").format(decay=decay, n=n)
        got = as_array(call(student_fn, xs, decay, what=what))
        want = _ema_reference(xs, decay)
        if got.shape == ():
            raise Mistake(_("{what} returned one number: return the average after EVERY "
                            "step, the second output of lax.scan (the ys)").format(
                              what=what))
        got = expect_shape(got, want.shape, what)
        if np.allclose(got, _ema_reference(xs, 1 - decay), atol=1e-5):
            raise Mistake("decay and 1 - decay are swapped: m = decay * m + (1 - decay) * x "
                          "keeps most of the old average")
        expect_close(got, want, what, hint=_("start from m = 0; after each x, m = decay * m + "
                                             "(1 - decay) * x, and output m"))
    decay = 0.9
    sizes = {}
    for n in (10, 100):
        try:
            sizes[n] = beside(student_fn, _fixtures.traced_size, student_fn, long_xs[:n], decay)
        except Exception as err:
            raise Mistake(_("jax.make_jaxpr(ema) raised {name}: {str_err}; ema must "
                            "work on traced arrays (lax.scan, no float() or NumPy "
                            "inside)").format(
                              name=type(err).__name__, str_err=str(err)[:120])) from err
    if sizes[100] > sizes[10]:
        raise Mistake(_("the traced program has {sizes} operations for 10 steps and "
                        "{sizes2} for 100: a Python loop was unrolled. Use lax.scan, "
                        "whose program has the same size for any length").format(
                          sizes=sizes[10], sizes2=sizes[100]))
    return (_("right averages, and a traced program of the same size for 10 and 100 "
              "steps ({sizes} operation{value})").format(
                sizes=sizes[100], value='s' if sizes[100] != 1 else ''))


# Lists whose spread is tiny next to their size: float32 loses it, float64 keeps it.
_VARIANCE_INPUTS = ([1e8 + 1, 1e8 + 2, 1e8 + 3], [1e9 + 0.25, 1e9 - 0.5, 1e9 + 1.0, 1e9],
                    [3.0, -1.0, 2.5, 0.125])


@exercise(LESSON, 4, "variance in float64")
def variance64(student_fn: Any) -> str:
    for index, written in enumerate(_VARIANCE_INPUTS):
        xs = list(nudged(tuple(written), 71 + index))
        what = f"variance64({xs})"
        value = call(student_fn, list(xs), what=what, hints={
            "requires ndarray": N_("jnp.var takes an array, not a list: make one with "
                                   "jnp.array(xs), inside the `with jax.enable_x64(True):` block")})
        if isinstance(value, (np.ndarray, np.generic)) and not isinstance(value, jax.Array):
            raise Mistake("that is a NumPy value: compute it with jnp.var, inside "
                          "`with jax.enable_x64(True):`")
        if isinstance(value, jax.Array) and value.dtype != jnp.float64:
            raise Mistake(_("{what} is a JAX array of dtype {dtype}: create the array "
                            "INSIDE `with jax.enable_x64(True):`; an array made outside "
                            "stays float32").format(what=what, dtype=value.dtype))
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise Mistake(_("{what} should be one number, the variance; got "
                            "{summary_value}").format(
                              what=what, summary_value=summary(value))) from None
        want = float(np.var(np.array(xs, np.float64)))
        if want > 0.1 and abs(number) < 1e-3 * want:
            raise Mistake(_("{what} = {number:.3g}, float32's answer: near 1e8, float32 "
                            "numbers are 8 apart, so 1e8 + 1, + 2 and + 3 all become "
                            "1e8. Make the array and compute inside `with "
                            "jax.enable_x64(True):`").format(what=what, number=number))
        if np.isclose(number, float(np.var(np.array(xs, np.float64), ddof=1)), rtol=1e-9):
            raise Mistake(_("{what} = {number:.6g}, the sample variance (ddof=1); use "
                            "jnp.var's default, the mean of the squared deviations").format(
                              what=what, number=number))
        if not np.isclose(number, want, rtol=1e-9):
            raise Mistake(_("{what} = {number!r}; expected jnp.var of these numbers in "
                            "float64, {want!r}").format(
                              what=what, number=number, want=want))
    return N_("float64 variances of three lists, two of which float32 says are 0")


@exercise(LESSON, 5, "softplus that neither overflows nor NaNs")
def softplus(student_fn: Any) -> str:
    xs = np.array(nudged((-100.0, -20.0, -1.0, 0.0, 1.0, 20.0, 100.0), 74), np.float32)
    if same_object(student_fn, jax.nn.softplus):
        raise Mistake("that is jax.nn.softplus itself: write your own")
    got = as_array(call(student_fn, xs,
                          what=_("softplus(x) for x = {values}").format(values=xs.tolist())))
    got = expect_shape(got, xs.shape, "softplus(x)")
    if not np.all(np.isfinite(got)):
        raise Mistake(_("softplus(x) = {tolist}: exp(100) overflows float32 (its "
                        "largest value is about 3.4e38, exp(88.7)). Rewrite it so that "
                        "exp only sees numbers <= 0: log(1 + exp(x)) = max(x, 0) + "
                        "log1p(exp(-|x|))").format(tolist=got.tolist()))
    expect_close(got, np.logaddexp(0.0, xs.astype(np.float64)), "softplus(x)", rtol=1e-5,
                 atol=1e-6, hint=_("softplus(x) = log(1 + exp(x))"))
    xs = xs[xs != 0]  # at exactly 0, max(x, 0) and |x| have kinks: the lesson shows it apart
    try:
        grads = np.asarray(transformed(student_fn, jax.grad, jax.vmap, jax.jit)(xs))  # 1 compile
    except Exception as err:
        raise Mistake(_("jax.grad(softplus) raised {name}: {str_err}").format(
                          name=type(err).__name__, str_err=str(err)[:120])) from err
    if not np.all(np.isfinite(grads)):
        raise Mistake(_("the gradient is {tolist}: NaN where exp overflowed. If you "
                        "used jnp.where, this is lesson 04's trap: the branch not taken "
                        "still computes exp(x) = inf, and inf * 0 = NaN. Use max(x, 0) "
                        "+ log1p(exp(-|x|)), which never overflows").format(
                          tolist=grads.tolist()))
    expect_close(grads, 1 / (1 + np.exp(-xs.astype(np.float64))), _("the gradient of softplus"),
                 rtol=1e-5, atol=1e-6, hint=_("it should be sigmoid(x)"))
    return N_("finite, right values from -100 to 100, gradients sigmoid(x) away from 0")
