"""The hand-written attention against ``jax.nn.dot_product_attention``, at several lengths.

Self-attention of ONE head over a batch of sequences, ``d_k = 64``, three ways, all under
``jit``, on the same queries, keys and values:

  ONE query, vmapped  nn_from_scratch.attention.attention for one query, vmap over the queries
                      and the batch (what lesson 14 writes; XLA sees the same matrix products)
  matrices            softmax(Q K^T / sqrt(d)) V written with jnp on whole matrices
  jax.nn              jax.nn.dot_product_attention (JAX's own; on a GPU it may call cuDNN)

each forward, and forward + backward (a training step's work), with and without the causal
mask. Attention compares every position with every other: its time and memory grow as the
square of the length T, which the table shows by time per sequence against T. Rounds are
INTERLEAVED (every way once per round) and each figure is the median over the rounds, with
the ratio to jax.nn taken within each round; compile time is apart (the first call).

    .venv/bin/python benchmarks/attention_speed.py              # about a minute on 2 cores
    .venv/bin/python benchmarks/attention_speed.py --rounds 11  # steadier medians
"""
import argparse
import math
import os
import platform
import statistics

import jax
import jax.numpy as jnp
import numpy as np
from conv_speed import compiled, interleaved  # measured as the convolution's benchmark
from jax import vmap

from nn_from_scratch.attention import attention, causal_mask
from nn_from_scratch.timing import format_seconds

D_K = 64
LENGTHS = (49, 128, 256, 512, 1024)
TOKENS = 8192  # batch = TOKENS // T sequences: the same number of positions at every length


def one_query_vmapped(q, k, v, causal):
    """(B, T, d) each -> (B, T, d): attention for ONE query, vmap over queries, then batch."""
    t = q.shape[1]
    if causal:
        per_sequence = vmap(attention, in_axes=(0, None, None, 0))
        return vmap(per_sequence, in_axes=(0, 0, 0, None))(q, k, v, causal_mask(t))
    return vmap(vmap(attention, in_axes=(0, None, None)))(q, k, v)


def matrices(q, k, v, causal):
    scores = jnp.einsum("btd,bsd->bts", q, k) / math.sqrt(q.shape[-1])  # (B, T, T)
    if causal:
        scores = jnp.where(causal_mask(q.shape[1]), scores, -jnp.inf)
    return jnp.einsum("bts,bsd->btd", jax.nn.softmax(scores, axis=-1), v)


def jax_nn(q, k, v, causal):
    # (B, T, N, H): one head
    out = jax.nn.dot_product_attention(q[:, :, None], k[:, :, None], v[:, :, None],
                                       is_causal=causal)
    return out[:, :, 0]


WAYS = {"ONE query, vmapped": one_query_vmapped, "matrices": matrices, "jax.nn": jax_nn}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds")
    parser.add_argument("--calls", type=int, default=3, help="calls per way per round")
    parser.add_argument("--lengths", type=int, nargs="+", default=list(LENGTHS))
    args = parser.parse_args()
    if not hasattr(jax.nn, "dot_product_attention"):
        raise SystemExit(f"JAX {jax.__version__} has no jax.nn.dot_product_attention")
    print(f"JAX {jax.__version__}, {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} cores, {jax.devices()[0].platform.upper()}, load "
          f"{os.getloadavg()[0]:.2f}; d_k {D_K}, {TOKENS} positions per call "
          f"(batch = {TOKENS} // T); {args.rounds} rounds of the fastest of {args.calls} calls")
    print(f"\n{'T':>5s} {'mask':6s} {'way':19s} {'work':19s} {'per sequence':>12s} "
          f"{'range':>19s} {'x jax.nn':>9s} {'first call':>11s}")
    rng = np.random.default_rng(0)
    tolerance = 1e-4 if jax.default_backend() == "cpu" else 3e-2  # TF32 on a GPU
    for t in args.lengths:
        batch = max(TOKENS // t, 1)
        q, k, v = (jnp.asarray(rng.normal(size=(batch, t, D_K)), jnp.float32) for _ in range(3))
        for causal in (False, True):
            reference = jax_nn(q, k, v, causal)
            ways = {}
            for name, way in WAYS.items():
                ways[name, "forward"] = lambda q, k, v, way=way, causal=causal: way(q, k, v, causal)
                ways[name, "forward + backward"] = jax.grad(
                    lambda q, k, v, way=way, causal=causal: jnp.sum(way(q, k, v, causal) ** 2),
                    argnums=(0, 1, 2))
            variants, compiles = compiled(ways, (q, k, v), reference, tolerance, f" at T = {t}")
            times = {key: [seconds / batch for seconds in values] for key, values in
                     interleaved(variants, (q, k, v), args.rounds, args.calls).items()}
            for (name, kind), values in times.items():
                theirs = times["jax.nn", kind]
                ratio = statistics.median(a / b for a, b in zip(values, theirs))
                print(f"{t:5d} {'causal' if causal else 'none':6s} {name:19s} {kind:19s} "
                      f"{format_seconds(statistics.median(values)):>12s} "
                      f"{format_seconds(min(values)):>9s}-{format_seconds(max(values)):<9s} "
                      f"{ratio:9.2f} {format_seconds(compiles[name, kind]):>11s}")


if __name__ == "__main__":
    main()
