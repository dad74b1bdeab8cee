"""How fast does one epoch of MLP training run, and how close is that to the machine's limit?

MNIST-shaped synthetic data (60,000 x 784, 10 classes), layers [784, 512, 512, 10],
batch 128, SGD step 0.01 -- the seed tutorial's set-up. It measures:

  limit          the machine's float32 matmul rate / training FLOPs per example (3 x forward)
  no-jit         fit(mode="eager"): every jnp operation dispatched from Python (a few hundred steps)
  jit per step   fit(mode="jit"): one compiled step, batches fed from host NumPy (the seed's loop)
  jit per epoch  fit(mode="scan"): one program per epoch, lax.scan over batches kept on the device
  PyTorch eager  the same model and loop in PyTorch, if torch is installed (optional)

in INTERLEAVED ROUNDS: limit, no-jit, jit per step, jit per epoch, PyTorch, then again, ...
A shared machine's speed drifts by the second, by the minute and even by the day (129 to 411
GFLOP/s seen on the same box), so each round is short (100 steps of each variant, about 3 s
in all), every ratio is computed within one round, from work measured a second apart, and it
is reported as the median over many rounds with its range. Compile time is measured apart
(once). "epoch" below is the time for the 60,000 examples at the measured rate.

    .venv/bin/python benchmarks/epoch_speed.py              # about a minute on 2 cores
    .venv/bin/python benchmarks/epoch_speed.py --rounds 31  # steadier medians
"""
import argparse
import os
import platform
import statistics
import time

import jax
import numpy as np

from nn_from_scratch import fit, init_network_params, one_hot
from nn_from_scratch.data import synthetic_dataset
from nn_from_scratch.epoch import batch_indices
from nn_from_scratch.timing import format_seconds, forward_flops, matmul_rate

SIZES = [784, 512, 512, 10]
BATCH, STEP_SIZE = 128, 0.01
LIMIT, EAGER, JIT, SCAN, TORCH = ("limit (matmul)", "no-jit", "jit per step (seed loop)",
                                  "jit per epoch (lax.scan)", "PyTorch eager")


def fit_speed(data, mode):
    """(examples/s of one epoch, compile seconds) of ``fit`` in ``mode``."""
    params = init_network_params(SIZES, jax.random.key(1))
    _, history = fit(params, data, epochs=1, batch_size=BATCH, step_size=STEP_SIZE,
                     key=jax.random.key(2), mode=mode)
    return history.steps_per_epoch * BATCH / history.epoch_time[0], history.compile_time


class TorchEpoch:
    """The same model, loss and SGD loop in eager PyTorch, fed from the same host arrays."""

    def __init__(self, data):
        import torch

        self.torch = torch
        params = init_network_params(SIZES, jax.random.key(1))
        self.tensors = [torch.tensor(np.asarray(a), requires_grad=True)
                        for layer in params for a in layer]
        self.x, self.y = data.x_train, np.asarray(one_hot(data.y_train, 10))
        self.version, self.threads = torch.__version__, torch.get_num_threads()

    def step(self, xb, yb):
        torch, t = self.torch, self.tensors
        a = xb
        for i in range(0, len(t) - 2, 2):
            a = torch.relu(a @ t[i].T + t[i + 1])
        logits = a @ t[-2].T + t[-1]
        loss = -(torch.log_softmax(logits, dim=1) * yb).sum(1).mean()
        grads = torch.autograd.grad(loss, t)
        with torch.no_grad():
            for tensor, g in zip(t, grads):
                tensor -= STEP_SIZE * g

    def speed(self, seed):
        """Examples/s of one pass over the data."""
        batches = np.asarray(batch_indices(jax.random.key(seed), len(self.x), BATCH))
        start = time.perf_counter()
        for batch in batches:
            self.step(self.torch.from_numpy(self.x[batch]), self.torch.from_numpy(self.y[batch]))
        return batches.size / (time.perf_counter() - start)


def summarise(values):
    """``median (min-max)`` of a list of ratios."""
    return f"{statistics.median(values):5.2f} ({min(values):.2f}-{max(values):.2f})"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15, help="interleaved measurement rounds")
    parser.add_argument("--steps", type=int, default=100, help="steps per variant per round")
    parser.add_argument("--eager-steps", type=int, default=30, help="no-jit steps per round")
    args = parser.parse_args()

    device = jax.devices()[0]
    print(f"Machine: {platform.machine()}, {os.cpu_count()} CPU cores, JAX {jax.__version__} "
          f"on {device.platform.upper()} ({device.device_kind})", flush=True)
    data = synthetic_dataset(jax.random.key(0), n_train=args.steps * BATCH, n_test=1_000)
    small = synthetic_dataset(jax.random.key(0), n_train=args.eager_steps * BATCH, n_test=1_000)
    flops_per_example = 3 * forward_flops(SIZES)

    # Warm-up: compile everything once, and report those compile times apart.
    compile_times = {JIT: fit_speed(data, "jit")[1], SCAN: fit_speed(data, "scan")[1]}
    fit_speed(small, "eager")
    try:
        torch_epoch = TorchEpoch(data)
        torch_epoch.speed(0)
    except ImportError:
        torch_epoch = None
        print("PyTorch is not installed: skipping it (pip install torch to compare).")

    speeds = {name: [] for name in (LIMIT, EAGER, JIT, SCAN, TORCH)}
    for r in range(args.rounds):
        speeds[LIMIT].append(matmul_rate(repeats=5) / flops_per_example)
        speeds[EAGER].append(fit_speed(small, "eager")[0])
        speeds[JIT].append(fit_speed(data, "jit")[0])
        speeds[SCAN].append(fit_speed(data, "scan")[0])
        if torch_epoch:
            speeds[TORCH].append(torch_epoch.speed(r + 1))
        print(f"round {r + 1}/{args.rounds}: " + ", ".join(
            f"{name.split(' (')[0]} {values[-1]:,.0f}/s" for name, values in speeds.items()
            if values), flush=True)
    if not torch_epoch:
        del speeds[TORCH]

    epoch_examples = 60_000
    limit_rate = statistics.median(speeds[LIMIT]) * flops_per_example
    print(f"\nLimit: float32 matmul {limit_rate / 1e9:.0f} GFLOP/s (median of {args.rounds} "
          f"rounds, 1024x1024 products); training = 3 x forward = "
          f"{flops_per_example / 1e6:.2f} MFLOP per example.")
    print(f"(JAX's backward pass skips layer 1's input gradient, so the real work is "
          f"{(flops_per_example - 2 * 784 * 512) / flops_per_example:.2f} x that count.)\n")
    print(f"{'variant':26s} {'examples/s':>11s} {'epoch':>9s} {'compile':>9s} "
          f"{'of limit: median (range)':>26s}")
    for name, values in speeds.items():
        median = statistics.median(values)
        label = f"{name} {torch_epoch.version}" if name == TORCH else name
        compile_text = format_seconds(compile_times[name]) if name in compile_times else "-"
        ratios = [v / limit for v, limit in zip(values, speeds[LIMIT])]  # within each round
        print(f"{label:26s} {median:11,.0f} {format_seconds(epoch_examples / median):>9s} "
              f"{compile_text:>9s} {summarise(ratios):>26s}")

    def ratio(a, b):
        return summarise([x / y for x, y in zip(speeds[a], speeds[b])])
    print(f"\nRatios within rounds, median (range) over {args.rounds}:")
    print(f"  jit per epoch / limit        = {ratio(SCAN, LIMIT)}   (target >= 0.90)")
    print(f"  jit per epoch / jit per step = {ratio(SCAN, JIT)}")
    if torch_epoch:
        print(f"  jit per step / PyTorch eager = {ratio(JIT, TORCH)}   (target >= 1; PyTorch on "
              f"{torch_epoch.threads} threads)")
        print(f"  jit per epoch / PyTorch eager = {ratio(SCAN, TORCH)}")


if __name__ == "__main__":
    main()
