"""Lesson 04's checkers: each accepts the reference, says "not done" to the stub, and catches
the mistakes the lesson is about (a cached "compile", counting calls, the where trap, a print
at trace time) with a hint that names the fix."""
import contextlib

import jax
import jax.numpy as jnp
import pytest
from conftest import assert_result, stub

from nn_from_scratch.exercises import jit as check
from nn_from_scratch.timing import compile_time, time_fn

# 04.1 times real compiles, and says "the compile cache answering" to one read back: no
# persistent compilation cache here (conftest.py)
pytestmark = pytest.mark.times_a_compile


def compile_and_run(fn, x):  # the reference
    return compile_time(fn, x), time_fn(jax.jit(fn), x, repeats=30).median


@pytest.mark.parametrize("answer, status, hints", [
    (compile_and_run, "passed", ("a real compile",)),
    (stub, "not done", ()),
    (lambda fn, x: compile_and_run(fn, x)[::-1], "failed", ("swapped",)),
    (lambda fn, x: (compile_time(fn, x), time_fn(fn, x).median), "failed",
     ("op by op", "jax.jit(fn)")),
    (lambda fn, x: (compile_time(fn, x, fresh=False), time_fn(jax.jit(fn), x).median), "failed",
     ("compile cache", "clears the cache")),
    (lambda fn, x: (compile_time(fn, x), time_fn(jax.jit(fn), x)), "failed", (".median",)),
    (lambda fn, x: (compile_time(fn, x), time_fn(jax.jit(fn), x, repeats=3).first), "failed",
     ("first call",)),
    (lambda fn, x: (0.03, 2e-5), "failed", ("never compiled",)),  # numbers typed in
    # a real compile, and a run time typed in, or measured on x of another size: the check
    # times two drawn sizes, and the run time must follow the work
    (lambda fn, x: (compile_time(fn, x), 2e-5), "failed", ("about as long", "x you are given")),
    (lambda fn, x: (compile_time(fn, x), time_fn(jax.jit(fn), x[:16]).median), "failed",
     ("about as long",)),
    (lambda fn, x: 0.03, "failed", ("two numbers",)),
    # issue 35: a run time made from len(x) follows the work, but is no time measured
    (lambda fn, x: (compile_time(fn, x), len(x) * 1e-10), "failed", ("ten times faster",)),
])
def test_compile_and_run(answer, status, hints):
    assert_result(check.compile_and_run(answer), status, *hints)


def counting(fn, inputs):  # the reference
    count = 0

    def counted(x):
        nonlocal count
        count += 1
        return fn(x)
    counted_jit = jax.jit(counted)
    for x in inputs:
        counted_jit(x)
    return count


def test_count_traces():
    assert_result(check.count_traces(counting), "passed")
    assert_result(check.count_traces(stub), "not done")
    assert_result(check.count_traces(lambda fn, inputs: len(inputs)), "failed", "one per call",
                  "while tracing")

    def never_calls_fn(fn, inputs):  # counts the traces of a function that ignores fn
        return counting(lambda x: x, inputs)
    assert_result(check.count_traces(never_calls_fn), "failed", "must call fn(x)")

    def new_function_per_call(fn, inputs):
        count = 0
        for x in inputs:
            def counted(v):
                nonlocal count
                count += 1
                return fn(v)
            jax.jit(counted)(x)
        return count
    assert_result(check.count_traces(new_function_per_call), "failed", "jit it once")

    def static_x(fn, inputs):  # a walk: x made static, a raw "Non-hashable" ValueError until then
        count = 0

        def counted(x):
            nonlocal count
            count += 1
            return fn(x)
        counted_jit = jax.jit(counted, static_argnums=0)
        for x in inputs:
            counted_jit(x)
        return count
    assert_result(check.count_traces(static_x), "failed", "static_argnums", "jax.jit(counted)")

    total = 0

    def global_counter(fn, inputs):
        def counted(x):
            nonlocal total
            total += 1
            return fn(x)
        counted_jit = jax.jit(counted)
        for x in inputs:
            counted_jit(x)
        return total
    assert_result(check.count_traces(global_counter), "failed", "start at 0")

    def no_nonlocal(fn, inputs):
        count = 0

        def counted(x):
            count += 1  # noqa: F823, F841 - the mistake under test: a new, unbound local
            return fn(x)
        counted_jit = jax.jit(counted)
        for x in inputs:
            counted_jit(x)
        return count
    assert_result(check.count_traces(no_nonlocal), "failed", "UnboundLocalError",
                  "nonlocal count", "one-element list")


def test_the_written_counts_looked_up_earn_nothing_when_graded():
    """Issue 35: 04.2 drew no inputs when graded: an answer that traces fn and returns the
    counts of the two written input lists, looked up by length, passed every grading."""
    from nn_from_scratch.exercises._calls import fresh_inputs

    def table(fn, inputs):
        jitted = jax.jit(fn)
        for x in inputs:
            jitted(x)
        return {7: 4, 2: 1}.get(len(inputs), 1)
    for seed in (1, 2, 3):
        with fresh_inputs(seed):
            assert check.count_traces(table).status == "failed"
            assert_result(check.count_traces(counting), "passed")


def clip_reference(g, limit, threshold=None):
    squared = jnp.sum(g * g)
    too_long = squared > (limit ** 2 if threshold is None else threshold)
    n = jnp.sqrt(jnp.where(too_long, squared, 1.0))
    return jnp.where(too_long, g * (limit / n), g)


def clip_old(g, limit):  # the old lesson's solution: NaN gradient at g = 0
    n = jnp.linalg.norm(g)
    return jnp.where(n > limit, g * limit / n, g)


def clip_half_fixed(g, limit):  # safe division, but the norm's own sqrt is still at 0
    n = jnp.linalg.norm(g)
    safe_n = jnp.where(n > limit, n, 1.0)
    return jnp.where(n > limit, g * limit / safe_n, g)


def clip_python_if(g, limit):
    n = jnp.linalg.norm(g)
    if n > limit:
        return g * limit / n
    return g


@pytest.mark.parametrize("wrong, hints", [
    (clip_old, ("NaN", "double where", "squared norm")),
    (clip_half_fixed, ("NaN", "jnp.linalg.norm")),
    (clip_python_if, ("no Python `if`", "jnp.where")),
    (lambda g, limit: jnp.clip(g, -limit, limit), ("not each element",)),
    (lambda g, limit: g * limit / jnp.maximum(jnp.linalg.norm(g), 1e-12), ("unchanged",)),
    # the threshold is limit ** 2, the squared limit: the survivors, and two more
    (lambda g, limit: clip_reference(g, limit, threshold=limit * 2), ("changed g", "limit ** 2")),
    (lambda g, limit: clip_reference(g, limit, threshold=limit ** 3), ("left g unchanged",)),
    (lambda g, limit: clip_reference(g, limit, threshold=limit), ("changed g",)),
    (lambda g, limit: clip_reference(g, limit, threshold=2.0), ("changed g",)),
])
def test_clip_norm_mistakes(wrong, hints):
    assert_result(check.clip_norm(wrong), "failed", *hints)


def test_clip_norm():
    assert_result(check.clip_norm(clip_reference), "passed")
    assert_result(check.clip_norm(jax.jit(clip_reference)), "passed")
    assert_result(check.clip_norm(stub), "not done")


def test_debug_print(capsys):
    def shows(x):
        jax.debug.print("x = {x}", x=x)
        return 2 * x
    assert_result(check.debug_print(jax.jit(shows)), "passed")
    assert capsys.readouterr().out == "", "the check prints nothing itself"
    assert_result(check.debug_print(jax.jit(stub)), "not done")

    def python_print(x):
        print("x =", x)
        return 2 * x
    assert_result(check.debug_print(python_print), "failed", "tracer", "jax.debug.print")

    def f_string(x):
        jax.debug.print(f"x = {x}")
        return 2 * x
    assert_result(check.debug_print(f_string), "failed", "tracer", "f-strings")
    assert_result(check.debug_print(lambda x: 2 * x), "failed", "nothing was printed")

    def shows_a_lot(x):  # prints something else, at length: quoted in one short line
        jax.debug.print("{y}", y=jnp.full(500, 42.0) + 0 * x[0])
        return 2 * x
    result = check.debug_print(shows_a_lot)
    assert_result(result, "failed", "print x itself")
    assert len(result.line) < 250, result.line
    assert_result(check.debug_print(lambda x: x), "failed", "return 2 * x")


def test_the_written_values_printed_as_constants_earn_nothing_when_graded():
    """Issue 35: 04.4 drew no inputs when graded: a function that printed the two written
    arrays as constants, whatever x was, passed every grading."""
    from nn_from_scratch.exercises._calls import fresh_inputs

    def constant(x):
        jax.debug.print("[1.5 2.5 3.5] [7.25 8.25 9.25]")
        return 2 * x

    def shows(x):
        jax.debug.print("x = {x}", x=x)
        return 2 * x
    for seed in (1, 2, 3):
        with fresh_inputs(seed):
            assert check.debug_print(jax.jit(constant)).status == "failed"
            assert_result(check.debug_print(jax.jit(shows)), "passed")


def test_clip_norm_on_other_shapes_and_at_zero_with_another_limit():
    """A student's walk: a norm along axis 0 (right for a vector only) and a norm taken as 1
    at g = 0 followed by min(1, limit / norm) (a gradient of limit at 0, right for limit 1
    only) passed, since every g was a vector of 3 and g = 0 came with limit 1."""
    def along_axis_0(g, limit):
        squared = jnp.sum(g * g, axis=0)
        too_long = squared > limit ** 2
        return jnp.where(too_long, g * (limit / jnp.sqrt(jnp.where(too_long, squared, 1.0))), g)

    def min_of_one(g, limit):
        squared = jnp.sum(g * g)
        norm = jnp.sqrt(jnp.where(squared == 0, 1.0, squared))
        return g * jnp.minimum(1.0, limit / norm)
    for wrong in (along_axis_0, min_of_one):
        assert check.clip_norm(wrong).status == "failed", wrong.__name__


def test_debug_print_of_three_entries_fails_on_another_length():
    """The fixed-shapes audit: x always had 3 entries, so printing x[0], x[1], x[2] passed."""
    from nn_from_scratch.exercises._calls import fresh_inputs

    def three_entries(x):
        jax.debug.print("{} {} {}", x[0], x[1], x[2])
        return 2 * x
    for seed in (None, 1, 2, 3):
        with fresh_inputs(seed) if seed else contextlib.nullcontext():
            assert check.debug_print(three_entries).status == "failed"


def test_debug_print_wants_every_value_of_x():
    """A student's walk: printing x[0] alone, or x + 10 (whose 11.5 held the 1.5 the check
    looked for), passed."""
    def first_only(x):
        jax.debug.print("{}", x[0])
        return 2 * x

    def plus_ten(x):
        jax.debug.print("x = {x}", x=x + 10)
        return 2 * x
    for wrong in (first_only, plus_ten):
        assert_result(check.debug_print(wrong), "failed", "print x itself")


def test_a_count_off_by_one_or_of_shapes_is_told_to_count_the_traces():
    """A student's walk: count - 1, and len(set(shapes)), were told to call the jitted
    function on every input, which they did."""
    def one_less(fn, inputs):
        return counting(fn, inputs) - 1

    def distinct_shapes(fn, inputs):
        jitted = jax.jit(fn)
        for x in inputs:
            jitted(x)
        return len({jnp.shape(x) for x in inputs})
    for wrong in (one_less, distinct_shapes):
        assert_result(check.count_traces(wrong), "failed", "count the traces themselves")


def test_debug_print_wants_x_in_its_own_order():
    """A second walk: x printed reversed or sorted passed."""
    def reversed_x(x):
        jax.debug.print("{}", x[::-1])
        return 2 * x
    assert_result(check.debug_print(reversed_x), "failed", "print x itself")
