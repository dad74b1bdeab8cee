"""Checkers for lesson 00, JAX is NumPy: the course's first exercises.

They know the slips of someone coming from NumPy: ``np.exp`` where ``jnp.exp`` was
meant (the result silently becomes a NumPy array), an ``.at[...].set`` whose new
array is dropped, a clock stopped when a JAX call *returns* rather than when its
work is done, a speed-up upside down, floats cast to int to please ``lax.add``.
"""
import time
from typing import Any

import jax.numpy as jnp
import numpy as np

from ._core import Mistake, call, exercise, expect_close, expect_shape

LESSON = "00_jax_is_numpy"
# Inputs made with NumPy, few shapes: every new shape of a JAX operation costs a compile.
_X = np.linspace(-6, 6, 12, dtype=np.float32).reshape(3, 4)
DELAY = 0.1  # seconds of "work" behind the fake JAX call that wall_time must wait for
ADD_SIZES = [10 ** e for e in range(2, 8)]


def _sigmoid(x: Any) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


@exercise(LESSON, 1, "sigmoid with jnp")
def sigmoid(student_sigmoid: Any) -> str:
    for x in (_X, _X[1], np.float32(0.0)):
        what = f"sigmoid(x) for x of shape {np.shape(x)}"
        got = call(student_sigmoid, jnp.asarray(x), what=what, hints={
            ("to Python scalars", "must be real number"): "math.exp takes ONE number; jnp.exp "
            "works elementwise on a whole array: 1 / (1 + jnp.exp(-x))"})
        if isinstance(got, np.ndarray):
            raise Mistake("returned a NumPy array: a NumPy function such as np.exp turned the JAX "
                          "array into a NumPy one. Use jnp.exp: grad and jit (lessons 02 and 04) "
                          "can only follow jnp")
        got = expect_shape(got, np.shape(x), what)
        if np.allclose(got, 1 / (1 + np.exp(x)), atol=1e-6) and x.ndim:
            raise Mistake("sigmoid(6) should be close to 1 and sigmoid(-6) close to 0; yours is "
                          "the other way round: 1 / (1 + jnp.exp(-x)), with a minus sign")
        expect_close(got, _sigmoid(x), what, hint="sigmoid(x) = 1 / (1 + exp(-x)), elementwise")
    return "1 / (1 + exp(-x)) on a matrix, a vector and a scalar, as a jax.Array"


@exercise(LESSON, 2, "set the diagonal with .at")
def set_diagonal(student_fn: Any) -> str:
    rng = np.random.default_rng(1)
    for n, value in ((3, 1.0), (5, -2.0)):
        x = rng.normal(size=(n, n)).astype(np.float32)
        what = f"set_diagonal(x, {value}) for x of shape ({n}, {n})"
        got = call(student_fn, jnp.asarray(x), value, what=what, hints={
            "immutable": "JAX arrays are immutable, so x[i, i] = v fails: use "
                         "x.at[i, i].set(v), which returns a NEW array"})
        got = expect_shape(got, (n, n), what)
        want = x.copy()
        np.fill_diagonal(want, value)
        if np.array_equal(got, x):
            raise Mistake("returned x unchanged: x.at[...].set(v) does not change x, it returns a "
                          "new array. Keep it (y = x.at[...].set(v)) and return y")
        off = ~np.eye(n, dtype=bool)
        if not np.allclose(got[off], x[off]):
            if np.allclose(got, value):
                raise Mistake("set every entry: index only the diagonal, the entries (i, i): "
                              "idx = jnp.arange(n); x.at[idx, idx].set(v)")
            raise Mistake("changed entries off the diagonal: x.at[i] is the whole row i. Index "
                          "with two arrays, x.at[idx, idx] with idx = jnp.arange(n), to reach only "
                          "the entries (i, i)")
        diagonal = np.diag(got)
        if not np.allclose(diagonal, value):
            done = int(np.sum(np.isclose(diagonal, value)))
            hint = (f"only {done} of {n} diagonal entries are {value}: take n from x "
                    f"(x.shape[0]), not a fixed 3" if 0 < done < n else
                    f"the diagonal should be all {value} (the value argument)")
            raise Mistake(f"for a {n}x{n} x, {hint}")
    return "a new array with its diagonal set, the rest untouched, for 3x3 and 5x5"


class _InFlight:
    """Stands in for a JAX array whose work finishes a while after the call returned."""

    def __init__(self, delay: float) -> None:
        self._ready_at = time.perf_counter() + delay

    def block_until_ready(self) -> "_InFlight":
        time.sleep(max(0.0, self._ready_at - time.perf_counter()))
        return self

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        self.block_until_ready()  # converting to NumPy waits too, as with a real jax.Array
        return np.zeros(2, dtype)

    def __repr__(self) -> str:
        return "Array([0., 0.], dtype=float32)"


def _queued_work(delay: float) -> _InFlight:
    """Like a JAX call: returns at once, with a result that is ready ``delay`` seconds later."""
    return _InFlight(delay)


def _seconds(value: Any, what: str) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        raise Mistake(f"{what} should return a number of seconds; got "
                      f"{type(value).__name__}") from None


@exercise(LESSON, 3, "time a call with block_until_ready")
def wall_time(student_fn: Any) -> str:
    what = "wall_time(fn, 0.1) for an fn whose work takes 0.1 s"
    seconds = _seconds(call(student_fn, _queued_work, DELAY, what=what), what)
    if seconds > 20:
        raise Mistake(f"got {seconds:.3g} for a call that takes 0.1 s: return seconds, not "
                      f"milliseconds")
    if seconds < 0.5 * DELAY:
        raise Mistake(f"measured {seconds * 1e3:.2g} ms for a call whose work takes 100 ms: the "
                      f"clock stopped when fn RETURNED, before its work was done. Wait for the "
                      f"result before reading the clock: jax.block_until_ready(fn(*args))")
    if seconds > 3 * DELAY:
        raise Mistake(f"measured {seconds:.2f} s for one call whose work takes 0.1 s: time ONE "
                      f"call of fn(*args)")
    what_quick = "wall_time(fn, 0.0) for an fn with no work"
    quick = _seconds(call(student_fn, _queued_work, 0.0, what=what_quick), what_quick)
    if not 0 <= quick < 0.5 * DELAY:
        raise Mistake(f"measured {quick:.3g} s for a call with no work: return the time of "
                      f"fn(*args), measured with time.perf_counter()")
    return f"measured {seconds * 1e3:.0f} ms for 100 ms of queued work: you waited for it"


@exercise(LESSON, 4, "JAX vs NumPy add, by size")
def add_speedups(speedups: Any) -> str:
    if not isinstance(speedups, dict):
        raise Mistake(f"expected a dict {{size: speed-up}}, e.g. {{100: 0.2, 1000: 0.3, ...}}; "
                      f"got {type(speedups).__name__}")
    missing = [n for n in ADD_SIZES if n not in speedups]
    if missing:
        raise Mistake(f"no speed-up for sizes {missing}: time every n in ADD_SIZES, 10**2 to "
                      f"10**7")
    try:
        values = {n: float(speedups[n]) for n in ADD_SIZES}
    except (TypeError, ValueError):
        raise Mistake("each speed-up should be one number, NumPy's time / JAX's time; got "
                      f"{speedups[ADD_SIZES[0]]!r} for n = 100") from None
    bad = {n: v for n, v in values.items() if not (np.isfinite(v) and v > 0)}
    if bad:
        raise Mistake(f"speed-ups must be positive numbers (NumPy's time / JAX's time); got {bad}")
    if values[100] > 1:
        raise Mistake(f"speedups[100] = {values[100]:.3g} says JAX adds 100 numbers faster than "
                      f"NumPy; no machine we know does (a JAX call costs microseconds before any "
                      f"work). Is the ratio upside down? speed-up = NumPy's time / JAX's time")
    best = max(values, key=lambda n: values[n])
    return (f"NumPy wins on 100 numbers ({values[100]:.2f}x); JAX's best of these sizes is "
            f"{values[best]:.2f}x, at n = {best:,}")


@exercise(LESSON, 5, "lax.add with mixed types")
def add_with_lax(student_fn: Any) -> str:
    ints = jnp.arange(4)  # int32
    floats = jnp.asarray(np.array([0.5, 1.5, -2.25, 10.75], np.float32))
    what = "add_with_lax(jnp.arange(4), floats)"
    got = call(student_fn, ints, floats, what=what, hints={
        "same dtypes": "lax.add refuses int32 + float32, as you saw: convert the ints first, "
                       "lax.convert_element_type(i, jnp.float32)"})
    got = expect_shape(got, (4,), what)
    if np.issubdtype(got.dtype, np.integer):
        raise Mistake(f"got {got.dtype} {got.tolist()}: the floats were cast to int and lost "
                      f"their fractions (0.5 became 0). Convert the ints to float32 instead")
    if got.dtype != np.float32:
        raise Mistake(f"got dtype {got.dtype}; int32 + float32 should give float32, as jnp.add "
                      f"does")
    expect_close(got, np.arange(4) + np.asarray(floats), what,
                 hint="convert the ints to float32, then lax.add")
    return "int32 + float32 -> float32, with the conversion written out"
