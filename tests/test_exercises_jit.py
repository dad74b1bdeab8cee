"""Lesson 04's checkers: each accepts the reference, says "not done" to the stub, and catches
the mistakes the lesson is about (a cached "compile", counting calls, the where trap, a print
at trace time) with a hint that names the fix."""
import jax
import jax.numpy as jnp
import pytest
from conftest import assert_result, stub

from nn_from_scratch.exercises import jit as check

HONEST = {100: (0.030, 20e-6), 1_000: (0.032, 120e-6), 10_000: (0.035, 1.5e-3)}


def test_compile_vs_run():
    assert_result(check.compile_vs_run(HONEST), "passed", "weighs most on small inputs")
    assert_result(check.compile_vs_run(...), "not done")
    cached = {100: (0.030, 20e-6), 1_000: (300e-6, 120e-6), 10_000: (250e-6, 1.5e-3)}
    assert_result(check.compile_vs_run(cached), "failed", "compile cache", "compile_time")
    swapped = {rows: (run, comp) for rows, (comp, run) in HONEST.items()}
    assert_result(check.compile_vs_run(swapped), "failed", "swapped")
    not_waiting = {rows: (comp, 15e-6) for rows, (comp, _) in HONEST.items()}
    assert_result(check.compile_vs_run(not_waiting), "failed", "not longer", "time_fn")
    assert_result(check.compile_vs_run({100: 0.03, 1000: 0.03}), "failed", "a pair")
    assert_result(check.compile_vs_run([0.03, 0.03]), "failed", "expected a dict")


def test_compile_vs_run_on_a_gpu(monkeypatch):
    """A GPU runs all three matrices in about the same time: only the compiles are judged."""
    monkeypatch.setattr(check.jax, "default_backend", lambda: "gpu")
    flat = {rows: (comp, 15e-6) for rows, (comp, _) in HONEST.items()}
    assert_result(check.compile_vs_run(flat), "passed", "real compiles")
    cached = {rows: (100e-6, 15e-6) for rows in HONEST}
    assert_result(check.compile_vs_run(cached), "failed", "compile cache")


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


def clip_reference(g, limit):
    squared = jnp.sum(g * g)
    too_long = squared > limit ** 2
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
    assert_result(check.debug_print(lambda x: x), "failed", "return 2 * x")
