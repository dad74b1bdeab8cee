"""How fast does one epoch of MLP training run, and how close is that to the machine's limit?

MNIST-shaped synthetic data (60,000 x 784, 10 classes), layers [784, 512, 512, 10],
batch 128, SGD step 0.01 -- the seed tutorial's set-up. In one run it measures:

  no-jit         fit(mode="eager"): every jnp operation dispatched from Python (a few hundred steps)
  jit per step   fit(mode="jit"): one compiled step, batches fed from host NumPy (the seed's loop)
  jit per epoch  fit(mode="scan"): one program per epoch, lax.scan over batches kept on the device
  roofline       the machine's float32 matmul rate / FLOPs per example (3 x forward)
  PyTorch eager  the same model and loop in PyTorch, if torch is installed (optional)

    .venv/bin/python benchmarks/epoch_speed.py            # under a minute on 2 cores
    .venv/bin/python benchmarks/epoch_speed.py --epochs 10 # more repeats, steadier figures

Compile time is reported apart; epoch times are medians over the timed epochs.
"""
import argparse
import os
import platform
import statistics
import time

import jax
import numpy as np

from nn_from_scratch import fit, init_network_params, one_hot
from nn_from_scratch.data import batch_indices, synthetic_dataset
from nn_from_scratch.timing import format_seconds, forward_flops, matmul_rate

SIZES = [784, 512, 512, 10]
BATCH, STEP_SIZE = 128, 0.01


def bench_fit(data, mode, epochs):
    """(examples/s from the median epoch, compile seconds) of ``fit`` in ``mode``."""
    params = init_network_params(SIZES, jax.random.key(1))
    _, history = fit(params, data, epochs=epochs, batch_size=BATCH, step_size=STEP_SIZE,
                     key=jax.random.key(2), mode=mode)
    examples = history["steps_per_epoch"] * BATCH
    return examples / statistics.median(history["epoch_time"]), history["compile_time"]


def bench_torch(data, epochs):
    """Examples/s of the same model, loss and SGD loop in eager PyTorch (median epoch)."""
    import torch

    params = init_network_params(SIZES, jax.random.key(1))
    tensors = [torch.tensor(np.asarray(a), requires_grad=True) for layer in params for a in layer]
    x, y = data.x_train, np.asarray(one_hot(data.y_train, 10))

    def step(xb, yb):
        a = xb
        for i in range(0, len(tensors) - 2, 2):
            a = torch.relu(a @ tensors[i].T + tensors[i + 1])
        logits = a @ tensors[-2].T + tensors[-1]
        loss = -(torch.log_softmax(logits, dim=1) * yb).sum(1).mean()
        grads = torch.autograd.grad(loss, tensors)
        with torch.no_grad():
            for t, g in zip(tensors, grads):
                t -= STEP_SIZE * g

    times = []
    for epoch in range(epochs + 1):  # epoch 0 warms up
        idx = np.asarray(batch_indices(jax.random.key(epoch), len(x), BATCH))
        start = time.perf_counter()
        for batch in idx:
            step(torch.from_numpy(x[batch]), torch.from_numpy(y[batch]))
        times.append(time.perf_counter() - start)
    return idx.size / statistics.median(times[1:]), torch.__version__, torch.get_num_threads()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=5, help="timed epochs per variant")
    parser.add_argument("--eager-steps", type=int, default=200, help="no-jit steps per epoch")
    args = parser.parse_args()

    device = jax.devices()[0]
    print(f"Machine: {platform.machine()}, {os.cpu_count()} CPU cores, JAX {jax.__version__} "
          f"on {device.platform.upper()} ({device.device_kind})", flush=True)
    data = synthetic_dataset(jax.random.key(0))
    # no-jit is ~10x slower: time a few hundred steps of it, not whole epochs.
    small = synthetic_dataset(jax.random.key(0), n_train=args.eager_steps * BATCH, n_test=1000)
    flops_per_example = 3 * forward_flops(SIZES)

    rate_before = matmul_rate()
    rows = {}
    for name, mode, d in (("no-jit", "eager", small), ("jit per step (seed loop)", "jit", data),
                          ("jit per epoch (lax.scan)", "scan", data)):
        print(f"measuring {name} ...", flush=True)
        rows[name] = bench_fit(d, mode, args.epochs)
    torch_name = None
    try:
        print("measuring PyTorch eager ...", flush=True)
        speed, version, threads = bench_torch(data, args.epochs)
        torch_name = f"PyTorch {version} eager"
        rows[torch_name] = (speed, None)
    except ImportError:
        print("PyTorch is not installed: skipping it (pip install torch to compare).")
    # The limit is measured before and after the variants, so slow drift of a shared
    # machine's speed during the run affects both sides alike.
    rate = (rate_before + matmul_rate()) / 2
    roofline = rate / flops_per_example

    print(f"\nMatmul roofline: {rate / 1e9:.0f} GFLOP/s (float32 1024x1024 products, median, "
          f"mean of before and after); "
          f"training FLOPs per example = 3 x forward = {flops_per_example / 1e6:.2f} MFLOP "
          f"-> at most {roofline:,.0f} examples/s.")
    print(f"(JAX's backward pass skips layer 1's input gradient, so the real work is "
          f"{(flops_per_example - 2 * 784 * 512) / flops_per_example:.2f} x that count.)\n")
    print(f"{'variant':28s} {'examples/s':>11s} {'epoch':>9s} {'compile':>9s} "
          f"{'of roofline':>11s} {'vs no-jit':>9s}")
    epoch_examples = (len(data.x_train) // BATCH) * BATCH
    base = rows["no-jit"][0]
    for name, (speed, compile_s) in [*rows.items(), ("roofline (matmul limit)", (roofline, None))]:
        compile_text = format_seconds(compile_s) if compile_s else "-"
        print(f"{name:28s} {speed:11,.0f} {format_seconds(epoch_examples / speed):>9s} "
              f"{compile_text:>9s} {speed / roofline:11.2f} {speed / base:8.1f}x")

    speed = {name: s for name, (s, _) in rows.items()}
    step, epoch = speed["jit per step (seed loop)"], speed["jit per epoch (lax.scan)"]
    print(f"\nRatios: jit per epoch / jit per step = {epoch / step:.2f}")
    if torch_name:
        print(f"        jit per step / PyTorch eager = {step / speed[torch_name]:.2f}, "
              f"jit per epoch / PyTorch eager = {epoch / speed[torch_name]:.2f} "
              f"(PyTorch on {threads} threads)")


if __name__ == "__main__":
    main()
