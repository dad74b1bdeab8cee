import time

import jax
import jax.numpy as jnp
import pytest

from nn_from_scratch import InputError
from nn_from_scratch.timing import (
    Timing,
    compare_jit,
    compile_time,
    format_seconds,
    forward_flops,
    matmul_rate,
    time_fn,
)

pytestmark = pytest.mark.times_a_compile  # compile_time must time a real compile (conftest.py)


def test_time_fn_counts_calls_and_orders_numbers():
    calls = []
    def f(x):
        calls.append(1)
        return x * 2
    t = time_fn(f, jnp.ones(3), repeats=5, warmup=2)
    assert len(calls) == 1 + 2 + 5
    assert t.repeats == 5 and t.spread[0] <= t.median <= t.spread[1]
    assert t.first_call_overhead == pytest.approx(max(t.first - t.median, 0.0))


def test_time_fn_waits_for_the_work():
    # A function that really takes 20 ms must not be timed as faster.
    t = time_fn(lambda: time.sleep(0.02) or jnp.zeros(1), repeats=3, warmup=0)
    assert t.median >= 0.02


def test_jit_first_call_includes_compilation():
    f = jax.jit(lambda x: jnp.sin(x) @ jnp.cos(x).T)
    t = time_fn(f, jnp.ones((50, 50)), repeats=3)
    assert t.first > t.median  # tracing + compiling happened in the first call only


def test_compile_time_is_a_real_compile_even_when_cached():
    def norm(x):
        x = x - x.mean(0)
        return x / x.std(0)
    x = jnp.ones((200, 20))
    jax.jit(norm)(x).block_until_ready()  # compiled and cached
    start = time.perf_counter()
    jax.jit(norm).lower(x).compile()  # the cache answers: far less than a compile
    cached = time.perf_counter() - start
    fresh = compile_time(norm, x)
    assert fresh > 3 * cached, (fresh, cached)


def test_compare_jit_reports_both_and_a_speedup():
    def selu(x, alpha=1.67, lmbda=1.05):
        return lmbda * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)
    result = compare_jit(selu, jnp.arange(1000.0), repeats=3)
    assert result.speedup == pytest.approx(result.eager.median / result.jitted.median)
    assert "once compiled" in str(result) and result.compile > 0


def test_bad_repeats():
    with pytest.raises(InputError, match="repeats >= 1"):
        time_fn(lambda: None, repeats=0)


@pytest.mark.parametrize("seconds, text", [(2.5, "2.5 s"), (0.0123, "12.3 ms"),
                                           (4.2e-5, "42 µs"), (3e-8, "30 ns")])
def test_format_seconds(seconds, text):
    assert format_seconds(seconds) == text


def test_timing_str():
    assert "per call (median of 4" in str(Timing(1.0, 0.1, (0.09, 0.2), 4))


def test_forward_flops_counts_two_per_weight():
    assert forward_flops([784, 512, 512, 10]) == 2 * (784 * 512 + 512 * 512 + 512 * 10)


def test_matmul_rate_is_a_plausible_flop_rate():
    rate = matmul_rate(size=128, chain=4, repeats=3)
    assert 1e8 < rate < 1e15  # between 0.1 GFLOP/s and 1 PFLOP/s
