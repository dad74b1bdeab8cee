"""One epoch of each model with the library's Adam against ``optax.adam``, interleaved.

The same model, the same batches and the same starting parameters, in the same process: one
epoch of ``fit``'s scan path (``lax.scan`` over the steps, everything under ``jit``) for the
MLP, the CNN and the transformer of ``train``, each on mnist-5k at ``train``'s batch size,
once with ``nn_from_scratch.optim.adam(1e-3)`` and once with ``optax.adam(1e-3)`` (each from
a fresh state). Both must give the same update for the same gradient (to float32 rounding)
before any time counts. Rounds are INTERLEAVED (each optimizer once per round, after a warm-up call,
each call waited for with block_until_ready) and the figure is the median over the rounds,
with the library's time over Optax's taken within each round; compile time is apart (the
first call). The issue's bar: the library within 5 % of Optax, or faster. Plain SGD's epoch
(``fit``'s default, ``train_epoch``) runs beside them, to show what Adam's moments cost.

    .venv/bin/python benchmarks/optimizer_speed.py              # a minute or two on 2 cores
    .venv/bin/python benchmarks/optimizer_speed.py --rounds 9   # steadier medians
"""
import argparse
import os
import platform
import statistics
from types import SimpleNamespace

import jax
import numpy as np
import optax
from conv_speed import compiled, interleaved  # measured as the convolution's benchmark

from nn_from_scratch import load_dataset, loss, one_hot
from nn_from_scratch.epoch import _optimizer_epoch, batch_indices, train_epoch
from nn_from_scratch.optim import adam
from nn_from_scratch.timing import format_seconds
from nn_from_scratch.train_cli import DEFAULTS, build_model

OPTIMIZERS = {"library adam": adam(1e-3), "optax.adam": optax.adam(1e-3)}


def one_epoch(optimizer, predict):
    """``(params, x, y, batches) -> params`` after one epoch from a fresh optimizer state."""
    def epoch(params, x, y, batches):
        carry = (params, optimizer.init(params))
        (params, _), _ = _optimizer_epoch(carry, x, y, batches, 0.0, predict, optimizer)
        return params
    return epoch


def sgd_epoch(predict):
    """The same epoch with plain SGD, ``fit``'s default (``train_epoch``): what Adam adds."""
    def epoch(params, x, y, batches):
        return train_epoch(params, x, y, batches, 0.1, predict)[0]
    return epoch


def same_first_step(params, x, y, predict):
    """Both optimizers' updates for the same gradient agree to float32 rounding.

    Only one step is compared: over a whole epoch the two runs drift apart (up to ~1e-3 in the
    transformer), because Adam turns the rounding noise of a near-zero gradient into a step of
    about ``lr`` either way. tests/test_optim.py checks 300 steps fed the same gradients."""
    grads = jax.grad(loss)(params, x, y, predict)
    ours, theirs = (opt.update(grads, opt.init(params), params)[0]
                    for opt in OPTIMIZERS.values())
    for a, b in zip(jax.tree.leaves(ours), jax.tree.leaves(theirs)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds")
    parser.add_argument("--calls", type=int, default=1, help="epochs per optimizer per round")
    parser.add_argument("--models", nargs="+", default=list(DEFAULTS))
    args = parser.parse_args()
    data = load_dataset("mnist-5k")
    x, y = jax.device_put(data.x_train), one_hot(data.y_train, data.num_classes)
    print(f"JAX {jax.__version__}, Optax {optax.__version__}, {platform.machine()}, "
          f"{os.cpu_count()} cores, {jax.devices()[0].platform.upper()}, load average "
          f"{os.getloadavg()[0]:.1f}; {args.rounds} rounds of the fastest of {args.calls} "
          f"epoch(s) each")
    print(f"\n{'model':12s} {'optimizer':13s} {'epoch median':>12s} {'range':>19s} "
          f"{'x optax (median)':>16s} {'first call':>11s}")
    for model in args.models:
        batch_size = DEFAULTS[model][1]
        params, predict, _ = build_model(SimpleNamespace(model=model, layers=None, init="he"),
                                         data, jax.random.key(0))
        batches = batch_indices(jax.random.key(1), len(data.x_train), batch_size)
        ways = {(name, "epoch"): one_epoch(opt, predict) for name, opt in OPTIMIZERS.items()}
        ways["plain SGD", "epoch"] = sgd_epoch(predict)
        variants, compiles = compiled(ways, (params, x, y, batches), None, None)
        same_first_step(params, x[batches[0]], y[batches[0]], predict)
        times = interleaved(variants, (params, x, y, batches), args.rounds, args.calls)
        for (name, kind), values in times.items():
            ratio = statistics.median(
                t / r for t, r in zip(values, times["optax.adam", kind]))
            print(f"{model:12s} {name:13s} {format_seconds(statistics.median(values)):>12s} "
                  f"{format_seconds(min(values)):>9s}-{format_seconds(max(values)):<9s} "
                  f"{ratio:16.3f} {format_seconds(compiles[name, kind]):>11s}")


if __name__ == "__main__":
    main()
