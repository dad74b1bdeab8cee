"""Checkers for lesson 04, ``jit``: honest compile times, trace counting, the ``where`` trap and
``jax.debug.print``.

They know the mistakes this lesson is about: a "compile time" read from JAX's
cache (microseconds), counting calls instead of traces, a Python ``if`` or a
NaN gradient from the branch ``jnp.where`` does not take, and a ``print`` or
an f-string that runs only while tracing.
"""
import contextlib
import functools
import io
import math
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ._core import Mistake, NotDone, call, exercise, expect_close

LESSON = "04_jit"
# A real XLA compile of even a tiny function takes milliseconds; a cache hit, microseconds.
REAL_COMPILE = 2e-3


def _pair(rows: Any, value: Any) -> tuple[float, float]:
    if not (isinstance(value, (tuple, list)) and len(value) == 2):
        raise Mistake(f"compile_vs_run[{rows!r}] should be a pair (compile_seconds, run_seconds); "
                      f"got {value!r}")
    try:
        compile_s, run_s = float(value[0]), float(value[1])
    except (TypeError, ValueError):
        raise Mistake(f"compile_vs_run[{rows!r}] should hold two numbers of seconds; got "
                      f"{value!r} (a Timing? use its .median)") from None
    if not (math.isfinite(compile_s) and math.isfinite(run_s) and compile_s > 0 and run_s > 0):
        raise Mistake(f"compile_vs_run[{rows!r}] = {value!r}: times must be positive seconds")
    return compile_s, run_s


@exercise(LESSON, 1, "compile time vs run time")
def compile_vs_run(answer: Any) -> str:
    if not isinstance(answer, dict) or len(answer) < 2:
        raise Mistake(f"expected a dict {{rows: (compile_seconds, run_seconds)}} with one entry "
                      f"per size; got {type(answer).__name__} {answer!r}")
    try:
        sizes = sorted(answer)
    except TypeError:
        raise Mistake("the keys of compile_vs_run should be the numbers of rows") from None
    times = {rows: _pair(rows, answer[rows]) for rows in sizes}
    if all(compile_s < run_s for compile_s, run_s in times.values()):
        raise Mistake("every compile time is shorter than its run time: are the pairs swapped? "
                      "Each value is (compile_seconds, run_seconds)")
    cached = [rows for rows, (compile_s, _) in times.items() if compile_s < REAL_COMPILE]
    if cached:
        shown = ", ".join(f"{format(rows, ',')} rows: {times[rows][0] * 1e6:.0f} µs"
                          for rows in cached)
        raise Mistake(f"compile times of {shown} are too short for an XLA compile: that is the "
                      f"compile cache answering, not a compile. Use timing.compile_time(norm, M), "
                      f"which clears the cache first")
    small, large = sizes[0], sizes[-1]
    ratios = {rows: compile_s / run_s for rows, (compile_s, run_s) in times.items()}
    if jax.default_backend() != "cpu":  # on a GPU these matrices may all run in the same time
        return (f"real compiles, costing {ratios[small]:,.0f} runs at {small:,} rows and "
                f"{ratios[large]:,.0f} at {large:,}")
    if times[large][1] <= times[small][1]:
        raise Mistake(f"the run time for {large:,} rows ({times[large][1] * 1e6:.0f} µs) is not "
                      f"longer than for {small:,} rows ({times[small][1] * 1e6:.0f} µs): time the "
                      f"jitted norm on each matrix with time_fn(...).median, which waits for the "
                      f"result")
    if ratios[small] <= ratios[large]:
        raise Mistake(f"compile / run is {ratios[small]:,.0f} for {small:,} rows but "
                      f"{ratios[large]:,.0f} for {large:,}: check that each compile time and "
                      f"run time belong to the same size")
    return (f"compiling costs {ratios[small]:,.0f} runs at {small:,} rows but only "
            f"{ratios[large]:,.0f} at {large:,}: it weighs most on small inputs")


def _trace_inputs() -> list[list[Any]]:
    """Two lists of inputs: new shapes, a new dtype, Python numbers, repeats that hit the cache."""
    return [
        [np.arange(3.0, dtype=np.float32), np.arange(3.0, dtype=np.float32) + 1,
         np.arange(4.0, dtype=np.float32), np.arange(3, dtype=np.int32), 2.0, 3.0,
         np.arange(3.0, dtype=np.float32) * 2],
        [np.ones(2, np.float32), np.zeros(2, np.float32)],
    ]


@functools.cache
def _reference_count(index: int) -> int:
    """How many times jit traces for _trace_inputs()[index] (computed once: compiles are slow)."""
    count = 0

    def counted(x: Any) -> Any:
        nonlocal count
        count += 1
        return x * 2

    counted_jit = jax.jit(counted)
    for x in _trace_inputs()[index]:
        counted_jit(x)
    return count


@exercise(LESSON, 2, "count traces")
def count_traces(student_fn: Any) -> str:
    for index, inputs in enumerate(_trace_inputs()):
        want = _reference_count(index)
        what = f"count_traces(fn, inputs) for {len(inputs)} inputs"
        # a new fn each time: an empty cache
        got = call(student_fn, lambda x: x * 2, inputs, what=what, hints={
            "UnboundLocalError": f"{what} raised UnboundLocalError: `count += 1` inside the "
            f"nested function makes count a new local variable of it. Declare `nonlocal count` "
            f"in the nested function, or keep the count in a one-element list "
            f"(counter = [0]; counter[0] += 1)"})
        if not isinstance(got, (int, np.integer)):
            raise Mistake(f"{what} returned {type(got).__name__} {got!r}; return the count, an int")
        if got == len(inputs) and want < len(inputs):
            raise Mistake(f"{what} returned {got}, one per call: count inside the function that "
                          f"jax.jit wraps (a Python side effect runs only while tracing), and jit "
                          f"it once, before the loop")
        if got > want:
            raise Mistake(f"{what} returned {got}; the answer is {want}. Did the count start at 0? "
                          f"Keep the counter inside count_traces, so every call starts afresh")
        if got != want:
            raise Mistake(f"{what} returned {got}; the answer is {want}. Call the jitted function "
                          f"on every input, in order")
    return "counts traces, not calls: new shapes, dtypes and Python numbers trace again"


def _reference_clip(g: Any, limit: float) -> jax.Array:
    squared = jnp.sum(g * g)
    too_long = squared > limit ** 2
    n = jnp.sqrt(jnp.where(too_long, squared, 1.0))
    return jnp.where(too_long, g * (limit / n), g)


@exercise(LESSON, 3, "clip_norm without NaN gradients")
def clip_norm(student_fn: Any) -> str:
    limit = 1.0
    cases = {"a long g": np.array([3.0, 4.0, 0.0], np.float32),
             "a short g": np.array([0.3, -0.4, 0.1], np.float32),
             "g = 0": np.zeros(3, np.float32)}
    for name, g in cases.items():
        what = f"clip_norm(g, {limit}) for {name}, {g.tolist()}"
        got = np.asarray(call(student_fn, g, limit, what=what))
        want = np.asarray(_reference_clip(g, limit))
        if name == "a long g" and np.allclose(got, np.clip(g, -limit, limit)):
            raise Mistake("clip the norm of the whole vector, not each element: g * limit / "
                          "norm(g) when norm(g) > limit")
        if name == "a short g" and not np.allclose(got, g, atol=1e-6):
            raise Mistake(f"{what} changed g, whose norm is below the limit: leave it unchanged")
        expect_close(got, want, what, hint="scale g to norm `limit` only when it is longer")
    try:
        jitted = np.asarray(jax.jit(student_fn)(cases["a long g"], limit))
    except jax.errors.TracerBoolConversionError:
        raise Mistake("jax.jit(clip_norm) fails: no Python `if` on a traced value; pick with "
                      "jnp.where") from None
    expect_close(jitted, _reference_clip(cases["a long g"], limit), "jax.jit(clip_norm)")
    for name, g in cases.items():
        what = f"the gradient of sum(clip_norm(g, {limit})) at {name}"
        try:
            got = np.asarray(jax.grad(lambda v: jnp.sum(student_fn(v, limit)))(g))
        except Exception as err:
            raise Mistake(f"{what} raised {type(err).__name__}: {str(err)[:120]}") from err
        if not np.all(np.isfinite(got)):
            raise Mistake(f"{what} is {got.tolist()}: jnp.where computed the branch it did not "
                          f"pick, and its infinite derivative times 0 is NaN. Both the division "
                          f"by the norm and the norm itself (a sqrt, even jnp.linalg.norm) are "
                          f"infinite at 0: use the double where on the squared norm, "
                          f"sqrt(jnp.where(too_long, squared, 1.0)), before any sqrt")
        want = jax.grad(lambda v: jnp.sum(_reference_clip(v, limit)))(g)
        expect_close(got, want, what)
    return "right values, works under jit, finite and right gradients at g = 0 too"


def _printed(fn: Callable[..., Any], *inputs: np.ndarray) -> tuple[list[Any], str]:
    """fn's results on each input, and what it printed meanwhile, jax.debug.print included."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        results = [fn(x) for x in inputs]
        jax.block_until_ready(results)
        jax.effects_barrier()  # jax.debug.print runs asynchronously: wait for it
    return results, out.getvalue()


@exercise(LESSON, 4, "jax.debug.print")
def debug_print(student_fn: Any) -> str:
    first, second = np.array([1.5, 2.5, 3.5], np.float32), np.array([7.25, 8.25, 9.25], np.float32)
    if not callable(student_fn):
        raise Mistake(f"expected the function double_and_show; got {type(student_fn).__name__}")
    fresh = jax.jit(lambda x: student_fn(x))  # traced afresh here, whatever ran before
    try:
        results, printed = _printed(fresh, first, second)
    except (NotImplementedError, NotDone):
        raise
    except Exception as err:
        raise Mistake(f"double_and_show(x) raised {type(err).__name__}: {str(err)[:150]}") from err
    expect_close(results[0], 2 * first, "double_and_show([1.5, 2.5, 3.5])",
                 hint="return 2 * x")
    if "1.5" in printed and "7.25" in printed:
        return "prints x on every call, with its values, from the compiled program"
    if "Trace" in printed:  # Traced<...> in older JAX, JitTracer(...) today
        raise Mistake("it printed a tracer: print(...) and f-strings run while tracing, once; "
                      "use jax.debug.print('x = {x}', x=x), which formats at run time")
    if not printed.strip():
        raise Mistake("nothing was printed: call jax.debug.print('x = {x}', x=x) inside the "
                      "function")
    raise Mistake(f"printed {printed.strip()!r} for the calls with x = [1.5, 2.5, 3.5] and "
                  f"[7.25, 8.25, 9.25]: print x itself, on every call")
