"""Lesson 00's checkers: each accepts the reference, says "not done" to the stub, and catches
the typical mistakes with a hint that names the fix."""
import contextlib
import math
import time

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import assert_result, stub
from jax import lax

from nn_from_scratch.exercises import jax_is_numpy as check
from nn_from_scratch.exercises._calls import fresh_inputs
from nn_from_scratch.timing import time_fn


def test_sigmoid():
    assert_result(check.sigmoid(lambda x: 1 / (1 + jnp.exp(-x))), "passed")
    assert_result(check.sigmoid(lambda x: 0.5 * (jnp.tanh(x / 2) + 1)), "passed")  # the same
    assert_result(check.sigmoid(stub), "not done", "NotImplementedError")
    assert_result(check.sigmoid(lambda x: 1 / (1 + np.exp(-x))), "failed", "np.asarray",
                  "jnp.exp")
    assert_result(check.sigmoid(  # a walk: NumPy's numbers wrapped back into a jax.Array
        lambda x: jnp.asarray(1 / (1 + np.exp(-np.asarray(x))))), "failed", "not under jax.jit")
    assert_result(check.sigmoid(lambda x: 1 / (1 + math.exp(-x))), "failed", "math.exp",
                  "jnp.exp")
    assert_result(check.sigmoid(lambda x: 1 / (1 + jnp.exp(x))), "failed", "minus sign")
    assert_result(check.sigmoid(lambda x: jnp.tanh(x)), "failed", "off by")


def test_sigmoid_walk_nine():
    """A student's walk of lesson 00: JAX's own sigmoid, the form that overflows, a list, and a
    shape written as a number all passed (one shape, numbers within +-6.4)."""
    import jax.scipy.special
    for own in (jax.nn.sigmoid, lambda x: jax.nn.sigmoid(x), jax.scipy.special.expit):
        assert_result(check.sigmoid(own), "failed", "JAX's own sigmoid", "1 / (1 + jnp.exp(-x))")
    assert_result(check.sigmoid(lambda x: jnp.exp(x) / (1 + jnp.exp(x))), "failed", "NaN",
                  "overflows float32")
    assert_result(check.sigmoid(lambda x: (1 / (1 + jnp.exp(-x))).tolist()), "failed",
                  ".tolist()", "jax.Array")

    def typed_shape(x):
        y = 1 / (1 + jnp.exp(-x))
        return y.reshape(3, 4) if jnp.ndim(x) == 2 else y
    for seed in (1, 2, 3):
        with fresh_inputs(seed):
            assert check.sigmoid(typed_shape).status == "failed"
            assert_result(check.sigmoid(lambda x: 1 / (1 + jnp.exp(-x))), "passed")


def reference_set_diagonal(x, value):
    idx = jnp.arange(x.shape[0])
    return x.at[idx, idx].set(value)


def test_set_diagonal():
    assert_result(check.set_diagonal(reference_set_diagonal), "passed")
    assert_result(check.set_diagonal(stub), "not done")

    def dropped(x, value):  # the classic: .at[] returns a new array, and it is thrown away
        idx = jnp.arange(x.shape[0])
        x.at[idx, idx].set(value)
        return x
    assert_result(check.set_diagonal(dropped), "failed", "unchanged", "new array")

    def in_place(x, value):
        for i in range(x.shape[0]):
            x[i, i] = value
        return x
    assert_result(check.set_diagonal(in_place), "failed", "immutable", "x.at[i, i].set(v)")

    def rows(x, value):
        return x.at[jnp.arange(x.shape[0])].set(value)
    assert_result(check.set_diagonal(rows), "failed", "set every entry")
    assert_result(check.set_diagonal(lambda x, v: x.at[0].set(v)), "failed", "whole row")

    def fixed_three(x, value):
        idx = jnp.arange(3)
        return x.at[idx, idx].set(value)
    assert_result(check.set_diagonal(fixed_three), "failed", "only 3 of", "x.shape[0]")
    assert_result(check.set_diagonal(lambda x, v: x.at[0, 0].set(v)), "failed", "only 1 of")


def test_set_diagonal_walk_nine():
    """A student's walk of lesson 00: a fixed 7 passed every draw (.at[] drops indices out of
    bounds, and n was at most 7); jnp.eye, fill_diagonal and NumPy's passed; an off-by-one, the
    other diagonal and .add were told the wrong mistake."""
    def fixed(size):
        def set_diagonal(x, value):
            idx = jnp.arange(size)
            return x.at[idx, idx].set(value)
        return set_diagonal
    for seed in (None, 1, 2, 3):
        with fresh_inputs(seed) if seed else contextlib.nullcontext():
            for size in (5, 7, 10):
                assert check.set_diagonal(fixed(size)).status == "failed"
            assert_result(check.set_diagonal(reference_set_diagonal), "passed")
    assert_result(check.set_diagonal(
        lambda x, v: jnp.where(jnp.eye(x.shape[0], dtype=bool), v, x)), "failed", "jax.eye",
        "x.at[idx, idx].set(value)")
    assert_result(check.set_diagonal(lambda x, v: jnp.fill_diagonal(x, v, inplace=False)),
                  "failed", "fill_diagonal", "not a ready-made diagonal")

    def numpy_fill(x, value):
        y = np.array(x)
        np.fill_diagonal(y, value)
        return y
    assert_result(check.set_diagonal(numpy_fill), "failed", "NumPy array", "x.at[idx, idx]")

    def off_by_one(x, value):
        idx = jnp.arange(1, x.shape[0])
        return x.at[idx, idx].set(value)
    assert_result(check.set_diagonal(off_by_one), "failed", "entry 0 was missed", "off by one")

    def anti(x, value):
        idx = jnp.arange(x.shape[0])
        return x.at[idx, x.shape[0] - 1 - idx].set(value)
    assert_result(check.set_diagonal(anti), "failed", "other diagonal", "(i, n - 1 - i)")

    def added(x, value):
        idx = jnp.arange(x.shape[0])
        return x.at[idx, idx].add(value)
    assert_result(check.set_diagonal(added), "failed", ".set(value), not .add(value)")

    def loop(x, value):  # right: a loop of .at[i, i].set
        for i in range(x.shape[0]):
            x = x.at[i, i].set(value)
        return x
    assert_result(check.set_diagonal(loop), "passed")


def blocking_timer(fn, *args):
    start = time.perf_counter()
    jax.block_until_ready(fn(*args))
    return time.perf_counter() - start


def test_wall_time():
    assert_result(check.wall_time(blocking_timer), "passed", "waited")

    def method_timer(fn, *args):
        start = time.perf_counter()
        fn(*args).block_until_ready()
        return time.perf_counter() - start
    assert_result(check.wall_time(method_timer), "passed")
    assert_result(check.wall_time(stub), "not done")

    def naive(fn, *args):  # stops the clock at dispatch
        start = time.perf_counter()
        fn(*args)
        return time.perf_counter() - start
    assert_result(check.wall_time(naive), "failed", "RETURNED", "block_until_ready")

    def blocks_too_late(fn, *args):
        start = time.perf_counter()
        out = fn(*args)
        seconds = time.perf_counter() - start
        out.block_until_ready()
        return seconds
    assert_result(check.wall_time(blocks_too_late), "failed", "before its work was done")
    assert_result(check.wall_time(lambda fn, *a: 1e3 * blocking_timer(fn, *a)), "failed",
                  "not milliseconds")
    assert_result(check.wall_time(lambda fn, *a: 0.1), "failed", "no work")
    assert_result(check.wall_time(lambda fn, *a: (fn(*a).block_until_ready(),
                                                  time.perf_counter())[1]), "failed",
                  "reading of the clock", "- start")
    assert_result(check.wall_time(lambda fn, *a: "0.1 s"), "failed", "number of seconds")


def test_wall_time_walk_nine():
    """A student's walk of lesson 00: timing two or three calls passed (the bound was 5x the
    work), fn() without its arguments passed when graded, the library's time_fn passed behind a
    def; a negative time and the CPU clock were told to wait for the result."""
    def calls(k):
        def wall_time(fn, *args):
            start = time.perf_counter()
            for _ in range(k):
                jax.block_until_ready(fn(*args))
            return time.perf_counter() - start
        return wall_time
    for seed in (None, 1, 2):
        with fresh_inputs(seed) if seed else contextlib.nullcontext():
            for k in (2, 3):
                assert_result(check.wall_time(calls(k)), "failed", "ONE call")

            def without_args(fn, *args):
                start = time.perf_counter()
                jax.block_until_ready(fn())
                return time.perf_counter() - start
            assert_result(check.wall_time(without_args), "failed", "without its arguments",
                          "fn(*args)")
            assert_result(check.wall_time(
                lambda fn, *args: time_fn(fn, *args, repeats=1).median), "failed", "time_fn",
                "time.perf_counter()")
            assert_result(check.wall_time(blocking_timer), "passed")

    def negative(fn, *args):
        start = time.perf_counter()
        jax.block_until_ready(fn(*args))
        return start - time.perf_counter()
    assert_result(check.wall_time(negative), "failed", "negative", "end - start")

    def cpu_clock(fn, *args):
        start = time.process_time()
        jax.block_until_ready(fn(*args))
        return time.process_time() - start
    assert_result(check.wall_time(cpu_clock), "failed", "time.process_time()")


def test_the_delay_handed_back_earns_nothing_when_graded():
    """Issue 35: 00.3 drew no inputs when graded, and the work's delay was wall_time's own
    argument: returning it, never timing anything, passed. When graded the delay is drawn and
    is no argument."""
    from nn_from_scratch.exercises._calls import fresh_inputs

    def hands_back(fn, *args):
        return args[0] if args else 0.1
    for seed in (1, 2):
        with fresh_inputs(seed):
            assert check.wall_time(hands_back).status == "failed"
            assert_result(check.wall_time(blocking_timer), "passed", "waited")


def add_speedup(n, timer):
    a_np, a_jnp = np.ones(n, np.float32), jnp.ones(n)
    return timer(np.add, a_np, a_np) / timer(jnp.add, a_jnp, a_jnp)


def speedup_with(numpy_ones=lambda n: np.ones(n, np.float32), jax_ones=jnp.ones,
                 ratio=lambda t_np, t_jnp: t_np / t_jnp):
    def wrong(n, timer):
        a_np, a_jnp = numpy_ones(n), jax_ones(n)
        return ratio(timer(np.add, a_np, a_np), timer(jnp.add, a_jnp, a_jnp))
    return wrong


@pytest.mark.parametrize("answer, status, hints", [
    (add_speedup, "passed", ["NumPy's time / JAX's time"]),
    (stub, "not done", []),
    # the case: the two times multiplied
    (speedup_with(ratio=lambda t_np, t_jnp: t_np * t_jnp), "failed", ["multiplied", "DIVIDED"]),
    (speedup_with(ratio=lambda t_np, t_jnp: t_jnp / t_np), "failed", ["upside down"]),
    (speedup_with(ratio=lambda t_np, t_jnp: t_np - t_jnp), "failed", ["subtracted"]),
    (speedup_with(ratio=lambda t_np, t_jnp: t_np), "failed", ["one of the two times"]),
    (speedup_with(numpy_ones=np.ones), "failed", ["float64", "np.ones(n, np.float32)"]),
    (speedup_with(numpy_ones=lambda n: np.zeros(n, np.float32)), "failed", ["n ones"]),
    (speedup_with(jax_ones=lambda n: np.ones(n, np.float32)), "failed", ["copying"]),
    (speedup_with(jax_ones=lambda n: jnp.ones(1000)), "failed", ["for n = 100", "n ones"]),
    (lambda n, timer: 1.5, "failed", ["never called the timer"]),
    (lambda n, timer: timer(np.add, np.ones(n, np.float32), np.ones(n, np.float32)), "failed",
     ["never timed jnp.add"]),
    (lambda n, timer: timer(n, np.add) / timer(n, jnp.add), "failed", ["function first"]),
    (lambda n, timer: add_speedup(n, lambda fn, *a: timer(fn, *a).median), "failed",
     ["no .median"]),
    (lambda n, timer: (add_speedup(n, timer), "1.5x")[1], "failed", ["a ratio"]),
])
def test_add_speedup(answer, status, hints):
    assert_result(check.add_speedup(answer), status, *hints)


def test_add_with_lax():
    assert_result(check.add_with_lax(
        lambda i, f: lax.add(lax.convert_element_type(i, jnp.float32), f)), "passed")
    assert_result(check.add_with_lax(lambda i, f: lax.add(i.astype(jnp.float32), f)), "passed")
    assert_result(check.add_with_lax(stub), "not done")
    assert_result(check.add_with_lax(lax.add), "failed", "ONE dtype", "convert_element_type")
    assert_result(check.add_with_lax(lambda i, f: lax.add(i, f.astype(jnp.int32))), "failed",
                  "lost their fractions")
    assert_result(check.add_with_lax(lambda i, f: lax.sub(i.astype(jnp.float32), f)), "failed",
                  "off by")


def test_add_with_lax_walk_nine():
    """A student's walk of lesson 00: the ints were always jnp.arange(4), so an answer that
    ignored them passed; jnp.add, i + f and NumPy passed; float16 was told to convert."""
    for seed in (None, 1, 2):
        with fresh_inputs(seed) if seed else contextlib.nullcontext():
            assert_result(check.add_with_lax(
                lambda i, f: lax.add(jnp.arange(len(f), dtype=jnp.float32), f)), "failed",
                "jnp.arange(n) + f")
            assert_result(check.add_with_lax(lambda i, f: lax.add(jnp.arange(4.0), f)),
                          "failed", "a size written as a number")
            for ready_made in (jnp.add, lambda i, f: jnp.add(i, f), lambda i, f: i + f,
                               lambda i, f: np.add(np.asarray(i, np.float32), np.asarray(f))):
                assert_result(check.add_with_lax(ready_made), "failed", "never calls lax.add")
            assert_result(check.add_with_lax(
                lambda i, f: lax.add(lax.convert_element_type(i, jnp.float32), f)), "passed")
    assert_result(check.add_with_lax(
        lambda i, f: lax.add(lax.convert_element_type(i, jnp.float16), f)), "failed",
        "ONE dtype", "float32")


def test_walk_ten():
    """A third walk: ready-made code handed to jax.tree.map or jnp.vectorize was not seen (JAX
    called it, not the student); lax.add mapped by vmap was told it was never called;
    x.at[jnp.diag_indices(n)] was refused as ready-made."""
    import jax.scipy.stats
    for answer in (lambda x: jax.tree.map(jax.nn.sigmoid, x), jnp.vectorize(jax.nn.sigmoid),
                   lambda x: jnp.exp(jax.nn.log_sigmoid(x)),
                   lambda x: jnp.exp(-jax.nn.softplus(-x)),
                   lambda x: jax.scipy.stats.logistic.cdf(x)):
        assert_result(check.sigmoid(answer), "failed", "JAX's own sigmoid")
    for answer in (lambda x, v: jnp.where(jax.tree.map(jnp.eye, x.shape[0]) > 0, v, x),
                   lambda x, v: jnp.where(np.eye(x.shape[0]) > 0, v, x),
                   lambda x, v: jnp.where(jnp.diag(jnp.ones(x.shape[0])) > 0, v, x)):
        assert_result(check.set_diagonal(answer), "failed", "not a ready-made diagonal")
    assert_result(check.set_diagonal(lambda x, v: x.at[jnp.diag_indices(x.shape[0])].set(v)),
                  "passed")
    for answer in (lambda i, f: jax.vmap(lax.add)(i.astype(jnp.float32), f),
                   lambda i, f: jax.tree.map(lax.add, i.astype(jnp.float32), f)):
        assert_result(check.add_with_lax(answer), "passed")


def test_walk_ten_two_calls_fail_on_every_draw():
    """A third walk: two calls timed together passed whenever the drawn work took under
    100 ms (the bound was 1.5x + 50 ms)."""
    def two_calls(fn, *args):
        start = time.perf_counter()
        jax.block_until_ready(fn(*args))
        jax.block_until_ready(fn(*args))
        return time.perf_counter() - start
    for seed in range(1, 6):
        with fresh_inputs(seed):
            assert check.wall_time(two_calls).status == "failed"


def test_set_diagonal_a_size_typed_past_the_second_draw_and_two_slips():
    """Sizes typed above 00.2's second draw (11-24) passed, as .at[] drops indices out of
    bounds; a third size past 100 refuses them. A transposed result and .multiply get hints."""
    def typed(size):
        return lambda x, value: x.at[jnp.arange(size), jnp.arange(size)].set(value)
    for size in (25, 50, 100, 160, 200, 1000):  # walk 11: 160, 200, the lesson's 1000
        assert_result(check.set_diagonal(typed(size)), "failed")

    def transposed(x, value):
        idx = jnp.arange(x.shape[0])
        return x.T.at[idx, idx].set(value)
    assert_result(check.set_diagonal(transposed), "failed", "transpose", "no .T")

    def multiplied(x, value):
        idx = jnp.arange(x.shape[0])
        return x.at[idx, idx].multiply(value)
    assert_result(check.set_diagonal(multiplied), "failed", ".multiply(value)")


def test_add_with_lax_thrown_away_earns_nothing():
    """Walk 10: 00.5 asked only that lax.add ran, so one run and thrown away beside i + f
    passed; the check now makes lax.add's inputs NaN, and a clean answer did not use it."""
    def beside_plus(i, f):
        lax.add(i.astype(jnp.float32), f)  # thrown away
        return i + f
    assert_result(check.add_with_lax(beside_plus), "failed", "lax.add")
    assert_result(check.add_with_lax(jax.vmap(
        lambda i, f: lax.add(i.astype(jnp.float32), f))), "passed")


def test_add_with_lax_walk_twelve():
    """Walk 12: nan_to_num around lax.add was refused (NaN made of its inputs was masked), and
    lax.add times 0 beside i + f passed; the inputs are now changed finitely."""
    assert_result(check.add_with_lax(
        lambda i, f: jnp.nan_to_num(lax.add(i.astype(jnp.float32), f))), "passed")
    assert_result(check.add_with_lax(
        lambda i, f: i + f + 0 * lax.add(i.astype(jnp.float32), f)), "failed", "lax.add")


def test_add_with_lax_on_python_numbers():
    """Walk 13: lax.add on Python floats was told it never calls lax.add (their change left
    Python numbers alone)."""
    assert_result(check.add_with_lax(lambda i, f: jnp.array(
        [lax.add(float(a), float(b)) for a, b in zip(i, f)], jnp.float32)), "passed")
