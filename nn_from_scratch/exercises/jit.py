"""Checkers for lesson 04, ``jit``: honest compile times, trace counting, the ``where`` trap and
``jax.debug.print``.

They know the mistakes this lesson is about: a "compile time" read from JAX's
cache (microseconds), counting calls instead of traces, a Python ``if`` or a
NaN gradient from the branch ``jnp.where`` does not take, and a ``print`` or
an f-string that runs only while tracing.
"""
import functools
import math
import re
from typing import Any

import jax
import numpy as np

from ..i18n import N_, _
from ..timing import format_seconds
from . import _fixtures
from ._calls import call, generator, graded, more_when_graded, scaled
from ._compare import as_array, expect_close
from ._core import Mistake, NotDone, exercise
from ._hints import summary, the_stubs
from ._remote import beside

LESSON = "04_jit"
# A real XLA compile of even a tiny function takes milliseconds; a cache hit, microseconds.
REAL_COMPILE = 2e-3


@exercise(LESSON, 1, "compile time and run time")
def compile_and_run(student_fn: Any) -> str:
    fn = beside(student_fn, _fixtures.Watched, _("fn ran as written, op by op: time the "
                                                 "jitted function, time_fn(jax.jit(fn), x, ...)"))
    source = generator(40)
    # Two sizes, drawn: a warm call of fn on the large x takes ten times as long as on the
    # small one or more (a call's fixed cost, fn's callback included, is ~0.2 ms), which no
    # pair of numbers written in the code can follow.
    sizes = (int(source.integers(8, 65)), int(source.integers(2 ** 21, 2 ** 22)))
    runs, fastest = [], []
    for size in sizes:
        x = np.linspace(-1.0, 1.0, size, dtype=np.float32)
        compile_s, run_s, fastest_s = _timed(student_fn, fn, x)
        runs.append(run_s)
        fastest.append(fastest_s)
    if runs[1] < 3 * runs[0]:
        raise Mistake(_("a call of fn on x of {small:,} numbers took {run_small}, and on x of "
                        "{large:,} numbers {run_large}: a call that does {ratio:,} times the "
                        "work takes about as long? Time jax.jit(fn) on the x you are given, "
                        "with time_fn").format(
                          small=sizes[0], large=sizes[1], ratio=sizes[1] // sizes[0],
                          run_small=format_seconds(runs[0]),
                          run_large=format_seconds(runs[1])))
    for run, warm in zip(runs, fastest):  # the fastest: a busy machine cannot shorten it
        if run < warm / 10:  # a time made from len(x), not measured (issue 35)
            raise Mistake(_("a call of {run}, where a warm call of jax.jit(fn) takes about "
                            "{warm} here: ten times faster than fn runs, so not a time that "
                            "was measured. Return the median of time_fn(jax.jit(fn), x, "
                            "...)").format(run=format_seconds(run), warm=format_seconds(warm)))
    return (_("a real compile ({format_seconds_compile_s}) and a warm call of the "
              "jitted function ({format_seconds_run_s})").format(
                format_seconds_compile_s=format_seconds(compile_s),
                format_seconds_run_s=format_seconds(run_s)))


def _timed(student_fn: Any, fn: Any, x: np.ndarray) -> tuple[float, float, float]:
    """The student's (compile_seconds, run_seconds) for ``fn`` on ``x``, each checked, and
    the fastest of the check's own warm calls."""
    fn.compile_once(x)  # compiled already: only a cleared cache compiles anew
    what = _("compile_and_run(fn, x) for x of {size:,} numbers").format(size=len(x))
    got = call(student_fn, fn, x, what=what)
    try:
        compile_s, run_s = (float(t) for t in got)
    except (TypeError, ValueError):
        raise Mistake(_("{what} should return two numbers of seconds, (compile_seconds, "
                        "run_seconds); got {summary_got} (a Timing? use its .median)").format(
                          what=what, summary_got=summary(got))) from None
    if not (math.isfinite(compile_s) and math.isfinite(run_s) and compile_s > 0 and run_s > 0):
        raise Mistake(_("{what} returned ({compile_s:.3g}, {run_s:.3g}): times are "
                        "positive seconds").format(
                          what=what, compile_s=compile_s, run_s=run_s))
    traced = fn.traces  # before warm_seconds, which may trace fn itself
    warm, fastest = fn.warm_seconds(x)  # where the student's code ran, as it did
    slow_call = max(30 * warm, 5e-4)  # slower than this, a "call" is a first call or a total
    if compile_s < run_s and compile_s <= slow_call:
        raise Mistake(_("a compile of {format_seconds_compile_s} is shorter than a call "
                        "of {format_seconds_run_s}: are the two swapped? Return "
                        "(compile_seconds, run_seconds)").format(
                          format_seconds_compile_s=format_seconds(compile_s),
                          format_seconds_run_s=format_seconds(run_s)))
    if compile_s < REAL_COMPILE:
        raise Mistake(_("a compile time of {format_seconds_compile_s} is too short for "
                        "an XLA compile: that is the compile cache answering (fn had "
                        "been compiled before). Use compile_time(fn, x), which clears "
                        "the cache first").format(
                          format_seconds_compile_s=format_seconds(compile_s)))
    if not traced:
        raise Mistake("fn was never traced, so never compiled: a number typed in, or the "
                      "compile cache answering (compile_time(fn, x, fresh=False)). Measure the "
                      "compile of this fn with compile_time(fn, x), which clears the cache "
                      "first, and time jax.jit(fn) with time_fn")
    if run_s > slow_call:
        raise Mistake(_("a call of {format_seconds_run_s}, where a warm call of "
                        "jax.jit(fn) takes about {format_seconds_warm}: that is the "
                        "first call, or a total. Return the median of "
                        "time_fn(jax.jit(fn), x, ...)").format(
                          format_seconds_run_s=format_seconds(run_s),
                          format_seconds_warm=format_seconds(warm)))
    return compile_s, run_s, fastest


def _trace_inputs() -> list[list[Any]]:
    """Two lists of inputs: new shapes, a new dtype, Python numbers, repeats that hit the cache."""
    return [
        [np.arange(3.0, dtype=np.float32), np.arange(3.0, dtype=np.float32) + 1,
         np.arange(4.0, dtype=np.float32), np.arange(3, dtype=np.int32), 2.0, 3.0,
         np.arange(3.0, dtype=np.float32) * 2],
        [np.ones(2, np.float32), np.zeros(2, np.float32)],
    ]


def _drawn_inputs(draw: np.random.Generator) -> list[Any]:
    """3-8 inputs for a grading, from a pool of arrays of two shapes and two dtypes and a
    Python number: new shapes, new dtypes and repeats in an order of the draw's."""
    pool = [np.arange(float(n), dtype=np.float32) for n in draw.integers(2, 6, size=2)] + [
        np.arange(int(draw.integers(2, 6)), dtype=np.int32), float(draw.integers(1, 9))]
    return [pool[int(i)] for i in draw.integers(0, len(pool), size=int(draw.integers(3, 9)))]


def _count(inputs: list[Any]) -> int:
    """How many times jit traces for ``inputs``, counted here, in the grader's process."""
    count = 0

    def counted(x: Any) -> Any:
        nonlocal count
        count += 1
        return x * 2

    counted_jit = jax.jit(counted)
    for x in inputs:
        counted_jit(x)
    return count


@functools.cache
def _reference_count(index: int) -> int:
    """:func:`_count` of ``_trace_inputs()[index]``, once (compiles are slow)."""
    return _count(_trace_inputs()[index])


@exercise(LESSON, 2, "count traces")
def count_traces(student_fn: Any) -> str:
    written = _trace_inputs()  # and, when graded, lists drawn for this grading
    for index, inputs in enumerate(more_when_graded(tuple(written), 42, _drawn_inputs, 2)):
        want = _reference_count(index) if index < len(written) else _count(inputs)
        what = _("count_traces(fn, inputs) for {len_inputs} inputs").format(len_inputs=len(inputs))
        fn = beside(student_fn, _fixtures.Watched,  # a new fn each time: an empty cache
                    _("fn was called outside jax.jit: call it only inside the jitted function, "
                      "whose traces you count"))
        got = call(student_fn, fn, inputs, what=what, hints={
            "UnboundLocalError": _("{what} raised UnboundLocalError: `count += 1` "
                                   "inside the nested function makes count a new local "
                                   "variable of it. Declare `nonlocal count` in the "
                                   "nested function, or keep the count in a one-element "
                                   "list (counter = [0]; counter[0] += 1)").format(
                                     what=what),
            ("Non-hashable static arguments", "static_argnums"): _(
                "{what}: static_argnums made x a static argument, and an array cannot be one "
                "(jit would trace anew for every value). Leave x traced: "
                "jax.jit(counted) alone").format(what=what)})
        if not isinstance(got, (int, np.integer)):
            raise Mistake(_("{what} returned {summary_got}; return the count, an int").format(
                              what=what, summary_got=summary(got)))
        if got == len(inputs) and want < len(inputs):
            raise Mistake(_("{what} returned {got}, one per call: count inside the "
                            "function that jax.jit wraps (a Python side effect runs "
                            "only while tracing), and jit it once, before the loop").format(
                              what=what, got=got))
        if got > want:
            raise Mistake(_("{what} returned {got}; the answer is {want}. Did the count "
                            "start at 0? Keep the counter inside count_traces, so every "
                            "call starts afresh").format(what=what, got=got, want=want))
        if got != want and fn.traces >= want:  # a student's walk: count - 1, distinct shapes
            raise Mistake(_("{what} returned {got}, but fn was traced {traces} times: count "
                            "the traces themselves, one at each (a Python side effect in the "
                            "function jax.jit wraps), from 0, not the shapes you think trace "
                            "again").format(what=what, got=got, traces=fn.traces))
        if got != want:
            raise Mistake(_("{what} returned {got}; the answer is {want}. Call the "
                            "jitted function on every input, in order").format(
                              what=what, got=got, want=want))
        if fn.traces < want:
            raise Mistake(_("fn was traced {traces} times, for {want} traces: the "
                            "jitted function must call fn(x) (and return what it "
                            "returns)").format(traces=fn.traces, want=want))
    return N_("counts traces, not calls: a new shape, a new dtype or the first Python number "
              "traces again")


def _reference_clip(g: np.ndarray, limit: float) -> tuple[np.ndarray, np.ndarray]:
    """clip_norm(g, limit) and the gradient of its sum, worked out by hand, in float64."""
    g = g.astype(np.float64)
    n = np.linalg.norm(g)
    if n <= limit:
        return g, np.ones_like(g)
    return g * limit / n, limit / n * (1 - g * g.sum() / n ** 2)


# (what, g, limit): norms far and just either side of the limit, for three limits; g = 0 at
# two limits (a norm taken as 1 at 0, then min(1, limit / norm), is right at limit 1 only);
# and g of other shapes, a matrix among them (a norm along one axis is right for a vector
# only: a student's walk)
_CLIP_CASES = [(N_("a long g"), [3.0, 4.0, 0.0], 1.0), (N_("a short g"), [0.3, -0.4, 0.1], 1.0),
               ("g = 0", [0.0, 0.0, 0.0], 1.0), (N_("g of norm 2.6"), [2.4, 1.0, 0.0], 3.0),
               (N_("g of norm 4"), [2.4, -3.2, 0.0], 3.0),
               (N_("g of norm 0.6"), [0.0, 0.36, -0.48], 0.5),
               ("g = 0", [0.0, 0.0, 0.0, 0.0, 0.0], 0.5),
               (N_("a long g of 5"), [0.5, -1.5, 2.0, 0.0, 1.0], 2.0),
               (N_("a long matrix g"), [[1.2, -0.8, 0.0], [0.4, 2.0, -1.1]], 1.0)]


@exercise(LESSON, 3, "clip_norm without NaN gradients")
def clip_norm(student_fn: Any) -> str:
    cases = [(_(name), np.array(g, np.float32) * scaled((1.0,), 40 + i, 0.05)[0], limit)
             for i, (name, g, limit) in enumerate(_CLIP_CASES)]  # norms stay either side
    for (name, g, limit), (_name, shown, _limit) in zip(cases, _CLIP_CASES):
        what = _("clip_norm(g, {limit}) for {name}, {shown}").format(
            limit=limit, name=name, shown=shown)
        got = as_array(call(student_fn, g, limit, what=what))
        want, _grad = _reference_clip(g, limit)
        if np.allclose(got, np.clip(g, -limit, limit)) and not np.allclose(want, g):
            raise Mistake("clip the norm of the whole vector, not each element: g * limit / "
                          "norm(g) when norm(g) > limit")
        if np.linalg.norm(g) <= limit and not np.allclose(got, g, atol=1e-6):
            raise Mistake(_("{what} changed g, whose norm is below the limit: leave it "
                            "unchanged (compare the squared norm with limit ** 2)").format(
                              what=what))
        if np.linalg.norm(g) > limit and np.allclose(got, g, atol=1e-6):
            raise Mistake(_("{what} left g unchanged, but its norm is above the limit: "
                            "scale it down (compare the squared norm with limit ** 2)").format(
                              what=what))
        expect_close(got, want, what, hint=_("scale g to norm `limit` only when it is longer"))
    # one compiled program for every case: under jit (no Python `if`), and with its gradient
    gradient = beside(student_fn, jax.jit, beside(student_fn, jax.grad, beside(
        student_fn, _fixtures.summed, student_fn)))
    for name, g, limit in cases:
        what = _("the gradient of sum(clip_norm(g, {limit})) at {name}").format(
                   limit=limit, name=name)
        try:
            got = np.asarray(gradient(g, limit))
        except jax.errors.TracerBoolConversionError:
            raise Mistake("jax.jit(clip_norm) fails: no Python `if` on a traced value; pick with "
                          "jnp.where") from None
        except Exception as err:
            raise Mistake(_("{what} raised {name}: {str_err}").format(
                              what=what, name=type(err).__name__, str_err=str(err)[:120])) from err
        if not np.all(np.isfinite(got)):
            raise Mistake(_("{what} is {tolist}: jnp.where computed the branch it did "
                            "not pick, and its infinite derivative times 0 is NaN. Both "
                            "the division by the norm and the norm itself (a sqrt, even "
                            "jnp.linalg.norm) are infinite at 0: use the double where "
                            "on the squared norm, sqrt(jnp.where(too_long, squared, "
                            "1.0)), before any sqrt").format(
                              what=what, tolist=got.tolist()))
        expect_close(got, _reference_clip(g, limit)[1], what)
    return N_("right values for three limits and three shapes, works under jit, finite and "
              "right gradients at g = 0 too")


@exercise(LESSON, 4, "jax.debug.print")
def debug_print(student_fn: Any) -> str:
    # two lengths, so that x printed entry by entry (x[0], x[1], x[2]) fails; when graded, both
    # longer than 3 (under jit an index past the end is clamped: x[2] of 2 entries is x[1])
    first = np.array([1.5, 2.5, 3.5], np.float32)
    second = np.array([7.25, 8.25, 9.25, 10.25, 11.25], np.float32)
    if graded():  # values and lengths drawn for this grading, each printed as written (an odd
        lengths = generator(46).choice(np.arange(4, 9), size=2, replace=False)  # number of
        first, second = (((2 * generator(44 + i).integers(-40, 40, size=int(n)) + 1) / 4)
                         .astype(np.float32) for i, n in enumerate(lengths))  # quarters)
    if not callable(student_fn):
        raise Mistake(_("expected the function double_and_show; got {name}").format(
                          name=type(student_fn).__name__))
    try:  # traced afresh, whatever ran before; what it printed, where it ran
        results, printed = beside(student_fn, _fixtures.printed_under_jit, student_fn, first,
                                  second)
    except NotDone:
        raise
    except Exception as err:
        if the_stubs(err):
            raise
        raise Mistake(_("double_and_show(x) raised {name}: {str_err}").format(
                          name=type(err).__name__, str_err=str(err)[:150])) from err
    expect_close(results[0], 2 * first, f"double_and_show({first.tolist()})",
                 hint="return 2 * x")
    # every value of both x's among the numbers printed (a student's walk: x[0] alone, or
    # x + 10, whose "11.5" held the "1.5" looked for, passed)
    numbers = [float(n) for n in re.findall(r"-?\d+(?:\.\d*)?(?:e[-+]?\d+)?", printed)]
    if all(any(np.allclose(numbers[i:i + len(x)], x) for i in range(len(numbers) - len(x) + 1))
           for x in (first, second)):  # each x's values, in x's order (not x[::-1], sort)
        return N_("prints x on every call, with its values, from the compiled program")
    if "Trace" in printed:  # Traced<...> in older JAX, JitTracer(...) today
        raise Mistake("it printed a tracer: print(...) and f-strings run while tracing, once; "
                      "use jax.debug.print('x = {x}', x=x), which formats at run time")
    if not printed.strip():
        raise Mistake("nothing was printed: call jax.debug.print('x = {x}', x=x) inside the "
                      "function")
    raise Mistake(_("printed {summary_strip} for the calls with x = {first} and {second}: "
                    "print x itself, on every call").format(
                      summary_strip=summary(printed.strip()), first=first.tolist(),
                      second=second.tolist()))
