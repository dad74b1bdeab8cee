"""The hand-written convolution against ``lax.conv_general_dilated``, on the same batch.

The CNN of lesson 13 (and ``train --model cnn``): filters (16, 32), 3x3, stride 1, "valid".
Each of its two convolutional layers, on a batch of 128 inputs of that layer's shape, three
ways, all under ``jit``:

  vmap, then sum   conv2d for ONE channel, vmapped over the channels, the maps summed: XLA
                   gets a dot with a batch dimension over channels, inner length 9
  library (im2col) nn_from_scratch.conv: the patches of every channel side by side, ONE dot
                   product per window (inner length C_in * 9), vmapped over filters and batch
  lax              lax.conv_general_dilated: XLA's own convolution instruction

each forward, and forward + backward (the gradient of a sum with respect to input and
weights, what training pays). In INTERLEAVED ROUNDS, every way once per round, reported as the
median over the rounds with the range, and as a ratio to lax within each round: a shared
machine's speed drifts from second to second. Compile time is apart (the first call).

    .venv/bin/python benchmarks/conv_speed.py              # about half a minute on 2 cores
    .venv/bin/python benchmarks/conv_speed.py --rounds 21  # steadier medians
"""
import argparse
import os
import platform
import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax, vmap

from nn_from_scratch.conv import batched_conv_layer, conv2d
from nn_from_scratch.timing import format_seconds

BATCH = 128
LAYERS = {"layer 1: 1 -> 16 channels, 28x28": (1, 16, 28),
          "layer 2: 16 -> 32 channels, 13x13": (16, 32, 13)}


def vmap_then_sum(image, kernels):
    """One filter on a (C_in, H, W) image: each channel with its kernel, the maps summed."""
    return jnp.sum(vmap(conv2d)(image, kernels), axis=0)


def by_vmap_and_sum(x, w, b):
    layer = vmap(vmap_then_sum, in_axes=(None, 0))  # every filter, the image shared
    return vmap(lambda image: layer(image, w) + b[:, None, None])(x)


def by_lax(x, w, b):
    return lax.conv_general_dilated(x, w, (1, 1), "VALID") + b[:, None, None]


WAYS = {"vmap, then sum": by_vmap_and_sum, "library (im2col)": batched_conv_layer,
        "lax.conv_general_dilated": by_lax}


def forward_and_backward(conv):
    """The gradient of sum(conv(x, w, b)) with respect to x and w: a training step's work."""
    return jax.grad(lambda x, w, b: jnp.sum(conv(x, w, b)), argnums=(0, 1))


def fastest_of(fn, args, calls):
    """The fastest of ``calls`` warm calls, each waited for with block_until_ready."""
    best = float("inf")
    for _ in range(calls):
        start = time.perf_counter()
        jax.block_until_ready(fn(*args))
        best = min(best, time.perf_counter() - start)
    return best


def compiled(ways, args, reference, tolerance, what=""):
    """Each way ``{(name, kind): fn}`` jitted, its first call timed apart (trace + compile),
    and each forward checked against ``reference``: (the jitted ways, their first calls)."""
    variants, compiles = {}, {}
    for (name, kind), fn in ways.items():
        jitted = jax.jit(fn)
        start = time.perf_counter()
        out = jax.block_until_ready(jitted(*args))  # the first call: trace + compile
        compiles[name, kind] = time.perf_counter() - start
        if kind == "forward":
            assert np.allclose(out, reference, rtol=tolerance, atol=tolerance), (
                f"{name} computes other numbers{what}")
        variants[name, kind] = jitted
    return variants, compiles


def interleaved(variants, args, rounds, calls):
    """Each way's fastest of ``calls`` per round, over ``rounds`` rounds in which every way runs
    once, so that the machine's swings fall on all of them alike."""
    times = {key: [] for key in variants}
    for _ in range(rounds):
        for key, fn in variants.items():
            times[key].append(fastest_of(fn, args, calls))
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=9, help="interleaved rounds")
    parser.add_argument("--calls", type=int, default=5, help="calls per way per round")
    args = parser.parse_args()
    print(f"JAX {jax.__version__}, {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} cores, {jax.devices()[0].platform.upper()}; batch {BATCH}, "
          f"{args.rounds} rounds of the fastest of {args.calls} calls")
    rng = np.random.default_rng(0)
    # A GPU multiplies float32 matrices in TF32 by default (about 3 significant digits), and
    # the three ways round differently: compare loosely there.
    tolerance = 1e-3 if jax.default_backend() == "cpu" else 3e-2
    for layer, (c_in, c_out, size) in LAYERS.items():
        x = jnp.asarray(rng.normal(size=(BATCH, c_in, size, size)), jnp.float32)
        w = jnp.asarray(rng.normal(size=(c_out, c_in, 3, 3)) / (3 * c_in ** 0.5), jnp.float32)
        b = jnp.zeros(c_out)
        reference = by_lax(x, w, b)
        ways = {}
        for name, conv in WAYS.items():
            ways[name, "forward"] = conv
            ways[name, "forward + backward"] = forward_and_backward(conv)
        variants, compiles = compiled(ways, (x, w, b), reference, tolerance)
        times = interleaved(variants, (x, w, b), args.rounds, args.calls)
        print(f"\n{layer}")
        print(f"{'':26s} {'':19s} {'median':>9s} {'range':>19s} {'x lax (median)':>15s} "
              f"{'first call':>11s}")
        for (name, kind), values in times.items():
            lax_times = times["lax.conv_general_dilated", kind]
            ratio = statistics.median(t / r for t, r in zip(values, lax_times))
            print(f"{name:26s} {kind:19s} {format_seconds(statistics.median(values)):>9s} "
                  f"{format_seconds(min(values)):>9s}-{format_seconds(max(values)):<9s} "
                  f"{ratio:15.1f} {format_seconds(compiles[name, kind]):>11s}")


if __name__ == "__main__":
    main()
