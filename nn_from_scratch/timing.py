"""Timing JAX code honestly.

Three traps, each handled here:

1. **Asynchronous dispatch**: a JAX call returns as soon as the work is queued,
   before it is done. Stopping the clock then measures the queueing. We call
   ``jax.block_until_ready`` on the result before reading the clock.
2. **Compilation**: the first call of a jitted function traces and compiles it.
   That cost is paid once, so it is reported apart from the steady state.
3. **Noise**: one run says little. We repeat and report the median and spread.
"""
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp

from . import i18n
from ._checks import InputError

__all__ = ["JitComparison", "Timing", "compare_jit", "compile_time", "format_seconds",
           "forward_flops", "matmul_rate", "time_fn"]


@dataclass(frozen=True)
class Timing:
    """Result of :func:`time_fn`; all times in seconds.

    Attributes:
      first: the first call, timed on its own (for a jitted function seen for
        the first time it includes tracing and compiling).
      median: median of the timed repeats (the steady state).
      spread: ``(fastest, slowest)`` of the timed repeats.
      repeats: how many timed repeats.
    """

    first: float
    median: float
    spread: tuple[float, float]
    repeats: int

    @property
    def first_call_overhead(self) -> float:
        """``first - median`` (0 if negative): what the first call cost beyond a warm one.

        For a jitted function that had not been compiled yet this is mostly
        tracing and compiling; for a function that had been (JAX caches
        compiled programs) or that is not jitted, it is only caches warming up.
        For a real compile time, use :func:`compile_time`.
        """
        return max(self.first - self.median, 0.0)

    def __str__(self) -> str:
        return i18n._("{median} per call (median of {repeats}, range {low}-{high}); first call "
                 "{first}").format(median=format_seconds(self.median), repeats=self.repeats,
                                   low=format_seconds(self.spread[0]),
                                   high=format_seconds(self.spread[1]),
                                   first=format_seconds(self.first))


def format_seconds(seconds: float) -> str:
    """``0.000123`` -> ``'123 µs'``: a time with a unit a person can read."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def _call(fn: Callable[..., Any], args: Sequence[Any], kwargs: dict[str, Any]) -> float:
    start = time.perf_counter()
    jax.block_until_ready(fn(*args, **kwargs))  # wait for the work, not only the dispatch
    return time.perf_counter() - start


def time_fn(fn: Callable[..., Any], *args: Any, repeats: int = 10, warmup: int = 1,
            **kwargs: Any) -> Timing:
    """Time ``fn(*args, **kwargs)``: first call apart, then warm-up, then timed repeats.

    Args:
      fn: any function returning arrays or a pytree of arrays (jitted or not).
      ``*args``, ``**kwargs``: its arguments.
      repeats: timed calls after the warm-up (int >= 1).
      warmup: untimed calls after the first one (int >= 0).

    Returns:
      a :class:`Timing`.

    Example:
      >>> t = time_fn(jax.jit(jnp.linalg.norm), x)
      >>> print(t)            # 1.2 ms per call (median of 10, ...); first call 35 ms
    """
    if repeats < 1 or warmup < 0:
        raise InputError(f"need repeats >= 1 and warmup >= 0; got repeats={repeats}, "
                         f"warmup={warmup}.")
    first = _call(fn, args, kwargs)
    for _ in range(warmup):
        _call(fn, args, kwargs)
    times = [_call(fn, args, kwargs) for _ in range(repeats)]
    return Timing(first, statistics.median(times), (min(times), max(times)), repeats)


def compile_time(fn: Callable[..., Any], *args: Any, static_argnums: int | Sequence[int] = (),
                 fresh: bool = True) -> float:
    """Seconds to trace and compile ``jax.jit(fn)`` for these arguments, without running it.

    JAX caches what it compiles, keyed by the function and the shapes and dtypes
    of its arguments: a second ``jax.jit(fn)`` of the same ``fn`` reuses the
    first one's program and "compiles" in microseconds. With ``fresh=True``
    (the default) this clears JAX's caches first (``jax.clear_caches()``), so
    the figure is a real compile; everything else compiles again on next use.
    The compile is ahead of time: ``jax.jit(fn).lower(*args).compile()``.
    """
    if fresh:
        jax.clear_caches()
    start = time.perf_counter()
    jax.jit(fn, static_argnums=static_argnums).lower(*args).compile()
    return time.perf_counter() - start


@dataclass(frozen=True)
class JitComparison:
    """Result of :func:`compare_jit`: the same function timed without and with ``jit``.

    Attributes:
      eager: :class:`Timing` of ``fn`` as written, op by op.
      jitted: :class:`Timing` of ``jax.jit(fn)``, once compiled.
      compile: seconds to compile it, from :func:`compile_time` (a real compile).
    """

    eager: Timing
    jitted: Timing
    compile: float

    @property
    def speedup(self) -> float:
        """Steady-state eager time / jitted time."""
        return self.eager.median / self.jitted.median

    def __str__(self) -> str:
        if self.speedup >= 1.15:
            verdict = i18n._("jit runs {x:.1f}x as fast once compiled").format(x=self.speedup)
        elif self.speedup <= 1 / 1.15:
            verdict = i18n._("jit runs {x:.1f}x slower here, even once compiled").format(
                x=1 / self.speedup)
        else:
            verdict = i18n._("jit runs about as fast here, once compiled")
        return i18n._("without jit: {eager}\nwith jit:    {jitted}\n{verdict}; compiling cost "
                 "{compile} once").format(eager=self.eager, jitted=self.jitted, verdict=verdict,
                                          compile=format_seconds(self.compile))


def compare_jit(fn: Callable[..., Any], *args: Any, repeats: int = 10,
                static_argnums: int | Sequence[int] = (), **kwargs: Any) -> JitComparison:
    """Time ``fn`` as written (eager, op by op) and under ``jax.jit``, on the same inputs.

    Returns:
      a :class:`JitComparison` with both timings, the compile time and the speed-up.
    """
    eager = time_fn(fn, *args, repeats=repeats, **kwargs)
    compile_seconds = compile_time(fn, *args, static_argnums=static_argnums)
    jitted = time_fn(jax.jit(fn, static_argnums=static_argnums), *args, repeats=repeats, **kwargs)
    return JitComparison(eager, jitted, compile_seconds)


def forward_flops(sizes: Sequence[int]) -> int:
    """FLOPs of one example's forward pass through dense layers ``sizes``: ``2 * sum(m * n)``.

    A multiply and an add per weight; biases and activations are too cheap to count.
    Training costs about 3 forward passes per example (forward, and a backward pass
    of twice the work), the usual convention for a roofline.
    """
    return 2 * sum(m * n for m, n in zip(sizes[:-1], sizes[1:]))


def matmul_rate(size: int = 1024, chain: int = 10, repeats: int = 5) -> float:
    """The machine's float32 matrix-multiply rate in FLOP/s: its practical limit.

    Times a jitted chain of ``chain`` dependent ``(size, size) @ (size, size)``
    products (dependent, so XLA cannot skip or merge them) and returns
    ``2 * size**3 * chain / median time``: a median, like the timings it is
    compared with, so machine noise does not favour either side.
    """
    def chained(a):
        def body(c, scale):
            return (c * scale) @ a, None  # each product needs the previous one
        return jax.lax.scan(body, a, jnp.full(chain, 1.0 / size ** 0.5, a.dtype))[0]

    a = jax.random.normal(jax.random.key(0), (size, size))
    t = time_fn(jax.jit(chained), a, repeats=repeats)
    return 2 * size ** 3 * chain / t.median
