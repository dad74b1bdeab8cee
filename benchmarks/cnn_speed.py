"""How fast does one CNN training epoch run: from scratch, on lax's convolution, in PyTorch?

The network and batch of ``python -m nn_from_scratch train --model cnn``: two 3x3 convolutions
(16 and 32 filters, each conv -> relu -> 2x2 max-pool), a dense layer of 128, 10 classes,
batches of 32, SGD, on the 4,000 training images of mnist-5k (125 steps an epoch; a constant
step size and no augmentation here, so that every variant does exactly the same work). The
same initial weights and the same batches for every variant:

  limit            the day's float32 matmul rate / the training FLOPs per example (3 x forward)
  from scratch     the library's batched_predict_cnn (maps kept channels last, conv_layer_hwc),
                   one epoch per program (train_epoch, lax.scan)
  from scratch CHW the same layers as lesson 13 first builds them, maps (C, H, W): conv_layer
                   and vmap(max_pool), also one epoch per program
  lax NCHW / NHWC  the same network on lax.conv_general_dilated, XLA's own convolution, in
                   either layout (and pooling written the same way), one epoch per program
  lax NCHW, step   the same, one program per step (fit's mode="jit"): on XLA's CPU backend
                   a convolution inside lax.scan's loop runs about half as fast as on its own
  PyTorch eager    torch.nn.Conv2d, max_pool2d and SGD, what a student would otherwise use,
                   on the threads PyTorch chooses (if torch is installed: it is optional),
                   on the GPU where JAX runs on one and PyTorch sees it

in INTERLEAVED ROUNDS: each round runs one epoch of every variant, one after another, so
that every ratio compares work measured seconds apart on a machine whose speed drifts. Each
variant keeps training its own weights from round to round, so after R rounds each has trained
R epochs on the same batches: the validation accuracies it prints are the sanity check that
all of them learn the same thing. Compile times are measured apart (the first call).

    .venv/bin/python benchmarks/cnn_speed.py              # about a minute on 2 cores
    .venv/bin/python benchmarks/cnn_speed.py --rounds 15  # steadier medians
"""
import argparse
import os
import platform
import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np
from epoch_speed import summarise
from jax import lax, vmap

from nn_from_scratch import evaluate, load_dataset, one_hot
from nn_from_scratch.conv import batched_predict_cnn, conv_layer, init_cnn_params, max_pool
from nn_from_scratch.epoch import _update_with_metrics, batch_indices, train_epoch
from nn_from_scratch.model import predict, relu
from nn_from_scratch.timing import format_seconds, forward_flops, matmul_rate
from nn_from_scratch.train_cli import CNN_HIDDEN, DEFAULTS

_, BATCH, STEP_SIZE, _, _ = DEFAULTS["cnn"]
LIMIT, SCRATCH, SCRATCH_CHW, LAX_NCHW, LAX_NHWC, LAX_STEP, TORCH = (
    "limit (matmul)", "from scratch", "from scratch, CHW maps", "lax NCHW", "lax NHWC",
    "lax NCHW, step", "PyTorch eager")


def _dense(params, features):
    """The dense layers on a batch of flattened maps, ``(B, C*H*W)`` in (C, H, W) order."""
    return vmap(predict, in_axes=(None, 0))(params, features)


def predict_chw(params, images):
    """Lesson 13's layers as it first builds them: (C, H, W) maps, conv_layer, vmap(max_pool)."""
    def one(image):  # (784,) -> (C, H, W) maps -> (C*H*W,)
        x = image.reshape(1, 28, 28)
        for w, b in params[:2]:
            x = vmap(max_pool)(relu(conv_layer(x, w, b)))
        return x.ravel()
    return _dense(params[2:], vmap(one)(images))


def predict_lax_nchw(params, images):
    """The same network on XLA's convolution, images (B, C, H, W) and kernels OIHW."""
    x = images.reshape(-1, 1, 28, 28)
    for w, b in params[:2]:
        x = relu(lax.conv_general_dilated(x, w, (1, 1), "VALID") + b[:, None, None])
        n, c, h, wd = x.shape
        x = x[:, :, :h // 2 * 2, :wd // 2 * 2].reshape(n, c, h // 2, 2, wd // 2, 2).max((3, 5))
    return _dense(params[2:], x.reshape(len(x), -1))


def predict_lax_nhwc(params, images):
    """The same network on XLA's convolution with the channels last: NHWC images, HWIO kernels."""
    x = images.reshape(-1, 28, 28, 1)
    for w, b in params[:2]:
        x = relu(lax.conv_general_dilated(x, w.transpose(2, 3, 1, 0), (1, 1), "VALID",
                                          dimension_numbers=("NHWC", "HWIO", "NHWC")) + b)
        x = vmap(max_pool)(x)  # (B, H, W, C) -> (B, H // 2, W // 2, C)
    return _dense(params[2:], x.transpose(0, 3, 1, 2).reshape(len(x), -1))


MODELS = {SCRATCH: batched_predict_cnn, SCRATCH_CHW: predict_chw,
          LAX_NCHW: predict_lax_nchw, LAX_NHWC: predict_lax_nhwc}


def cnn_forward_flops(params, side=28):
    """FLOPs of one image's forward pass: 2 per multiply-add of each convolution and dense layer."""
    flops = 0
    for w, _ in params[:2]:
        c_out, c_in, k, _ = w.shape
        side -= k - 1  # "valid": the output side
        flops += 2 * side * side * c_out * c_in * k * k
        side //= 2  # pooling
    return flops + forward_flops([params[2][0].shape[1], *[w.shape[0] for w, _ in params[2:]]])


class JaxVariant:
    """One model trained a whole epoch per call by the library's ``train_epoch``."""

    def __init__(self, model, params, x, y):
        self.model, self.x, self.y = model, x, y
        self.reset(params)
        start = time.perf_counter()
        zeros = jnp.zeros((len(x) // BATCH, BATCH), jnp.int32)
        self.epoch = train_epoch.lower(self.params, x, y, zeros, STEP_SIZE,
                                       predict=model).compile()
        self.compile_time = time.perf_counter() - start

    def reset(self, params):
        """Start again from ``params``."""
        self.params = jax.tree.map(jnp.copy, params)  # train_epoch donates its parameters

    def run(self, batches):
        """Seconds for one epoch on ``batches``; the weights move on."""
        start = time.perf_counter()
        self.params, _ = jax.block_until_ready(
            self.epoch(self.params, self.x, self.y, batches, STEP_SIZE))
        return time.perf_counter() - start

    def val_accuracy(self, data):
        return float(evaluate(self.params, data.x_val, data.y_val, self.model)[1])


class JitStepVariant(JaxVariant):
    """One model trained by one compiled program per step, fed batch by batch from Python."""

    def __init__(self, model, params, x, y):
        self.model, self.x, self.y = model, x, y
        self.reset(params)
        start = time.perf_counter()
        self.step = jax.jit(_update_with_metrics, donate_argnums=0, static_argnames="predict"
                            ).lower(self.params, x[:BATCH], y[:BATCH], STEP_SIZE,
                                    predict=model).compile()
        self.compile_time = time.perf_counter() - start

    def run(self, batches):
        start = time.perf_counter()
        for batch in batches:  # (BATCH,) indices, on the device
            self.params, _ = self.step(self.params, self.x[batch], self.y[batch], STEP_SIZE)
        jax.block_until_ready(self.params)
        return time.perf_counter() - start


class TorchVariant:
    """The same network, initial weights, batches and SGD in eager PyTorch."""

    def __init__(self, params, data):
        import torch

        self.torch, nn = torch, torch.nn
        on_gpu = jax.default_backend() == "gpu" and torch.cuda.is_available()
        self.device = torch.device("cuda" if on_gpu else "cpu")  # where JAX runs
        self.layers = [layer.to(self.device) for layer in (
            nn.Conv2d(1, 16, 3), nn.Conv2d(16, 32, 3), nn.Linear(800, 128), nn.Linear(128, 10))]
        self.reset(params)
        weights = [p for layer in self.layers for p in layer.parameters()]
        self.optimizer = torch.optim.SGD(weights, lr=STEP_SIZE)
        self.x = torch.from_numpy(np.asarray(data.x_train).reshape(-1, 1, 28, 28)).to(self.device)
        self.y = torch.from_numpy(np.asarray(data.y_train, np.int64)).to(self.device)
        self.threads = torch.get_num_threads()

    def reset(self, params):
        """Start again from ``params`` (the JAX list of (W, b), in the same layouts)."""
        with self.torch.no_grad():
            for layer, (w, b) in zip(self.layers, params):
                layer.weight.copy_(self.torch.from_numpy(np.array(w)).to(self.device))
                layer.bias.copy_(self.torch.from_numpy(np.array(b)).to(self.device))

    def forward(self, x):
        functional, (conv1, conv2, dense1, dense2) = self.torch.nn.functional, self.layers
        x = functional.max_pool2d(self.torch.relu(conv1(x)), 2)
        x = functional.max_pool2d(self.torch.relu(conv2(x)), 2)  # (B, 32, 5, 5)
        return functional.log_softmax(dense2(self.torch.relu(dense1(x.flatten(1)))), dim=1)

    def run(self, batches):
        start = time.perf_counter()
        for rows in self.torch.from_numpy(np.asarray(batches, np.int64)).to(self.device):
            loss = self.torch.nn.functional.nll_loss(self.forward(self.x[rows]), self.y[rows])
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
        if self.device.type == "cuda":
            self.torch.cuda.synchronize()  # the GPU's queue done, as block_until_ready
        return time.perf_counter() - start

    def val_accuracy(self, data):
        with self.torch.no_grad():
            images = self.torch.from_numpy(np.asarray(data.x_val).reshape(-1, 1, 28, 28))
            scores = self.forward(images.to(self.device)).cpu()
        return float((scores.argmax(1).numpy() == np.asarray(data.y_val)).mean())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7,
                        help="interleaved rounds, one epoch of every variant each")
    parser.add_argument("--no-torch", action="store_true", help="leave PyTorch out")
    args = parser.parse_args()

    device = jax.devices()[0]
    load_before = os.getloadavg()[0]
    print(f"Machine: {platform.machine()}, {os.cpu_count()} CPU cores, load {load_before:.1f}; "
          f"JAX {jax.__version__} on {device.platform.upper()} ({device.device_kind})",
          flush=True)
    data = load_dataset("mnist-5k")
    params = init_cnn_params(jax.random.key(0), hidden=CNN_HIDDEN)
    x, y = jax.device_put(data.x_train), jax.device_put(one_hot(data.y_train, 10))
    flops = 3 * cnn_forward_flops(params)
    examples = len(x) // BATCH * BATCH

    variants = {name: JaxVariant(model, params, x, y) for name, model in MODELS.items()}
    variants[LAX_STEP] = JitStepVariant(predict_lax_nchw, params, x, y)
    if not args.no_torch:
        try:
            variants[TORCH] = TorchVariant(params, data)
        except ImportError:
            print("PyTorch is not installed: leaving it out (pip install torch to compare).")
    for variant in variants.values():  # warm-up: one epoch each, then back to the start
        variant.run(batch_indices(jax.random.key(99), len(x), BATCH))
        variant.reset(params)

    speeds = {name: [] for name in (LIMIT, *variants)}  # examples per second, per round
    for r in range(args.rounds):
        batches = jax.block_until_ready(batch_indices(jax.random.key(r), len(x), BATCH))
        speeds[LIMIT].append(matmul_rate(repeats=3) / flops)
        for name, variant in variants.items():
            speeds[name].append(examples / variant.run(batches))
        print(f"round {r + 1}/{args.rounds}: " + ", ".join(
            f"{name} {values[-1]:,.0f}/s" for name, values in speeds.items()), flush=True)

    load_after = os.getloadavg()[0]
    rate = statistics.median(speeds[LIMIT]) * flops
    print(f"\nLoad {load_before:.1f} before, {load_after:.1f} after. Limit: float32 matmul "
          f"{rate / 1e9:.0f} GFLOP/s (median of {args.rounds} rounds); training = 3 x forward "
          f"= {flops / 1e6:.2f} MFLOP per image. {examples:,} images an epoch, batches of "
          f"{BATCH}.\n")
    if TORCH in variants:
        torch_variant = variants[TORCH]
        print(f"PyTorch {torch_variant.torch.__version__} on "
              f"{torch_variant.device.type.upper()}, {torch_variant.threads} CPU threads; "
              f"XLA on {os.cpu_count()} cores.")
    print(f"{'variant':24s} {'images/s':>9s} {'epoch: median (range)':>26s} {'compile':>9s} "
          f"{'of limit':>9s} {f'val acc, {args.rounds} epochs':>20s}")
    for name, values in speeds.items():
        epochs = [examples / v for v in values]
        variant = variants.get(name)
        compile_text = (format_seconds(variant.compile_time)
                        if isinstance(variant, JaxVariant) else "-")
        accuracy = f"{variant.val_accuracy(data):.4f}" if variant else "-"
        of_limit = statistics.median(v / limit for v, limit in zip(values, speeds[LIMIT]))
        print(f"{name:24s} {statistics.median(values):9,.0f} "
              f"{format_seconds(statistics.median(epochs)):>9s} ({format_seconds(min(epochs))}-"
              f"{format_seconds(max(epochs))}) {compile_text:>9s} {of_limit:9.2f} {accuracy:>20s}")

    def ratio(a, b):
        return summarise([p / q for p, q in zip(speeds[a], speeds[b])])
    best_lax = max((LAX_NCHW, LAX_NHWC, LAX_STEP),
                   key=lambda name: statistics.median(speeds[name]))
    print(f"\nSpeed ratios within rounds, median (range) over {args.rounds}:")
    print(f"  from scratch / {best_lax:13s} = {ratio(SCRATCH, best_lax)}   (target >= 0.8; "
          f"the fastest lax)")
    if TORCH in speeds:
        print(f"  from scratch / PyTorch eager = {ratio(SCRATCH, TORCH)}   (target >= 1.0)")
    print(f"  from scratch / its CHW maps  = {ratio(SCRATCH, SCRATCH_CHW)}   (the layout's gain)")
    print(f"  from scratch / limit         = {ratio(SCRATCH, LIMIT)}")


if __name__ == "__main__":
    main()
