"""The tiny GPT's training step, from scratch in JAX, beside the same model in plain PyTorch.

    .venv/bin/python benchmarks/gpt_vs_pytorch.py [--rounds 5] [--steps 20]

The model and batches are nanoGPT's CPU recipe (the README of karpathy/nanoGPT: 4 layers, 4
heads, width 128, context 64, batch 12; "about 3 minutes" for 2,000 iterations, validation loss
1.88 on Shakespeare): ``nn_from_scratch.gpt`` (lesson 16), and ``TorchGPT`` below, the same
architecture written the plain way in PyTorch (pre-norm blocks, ReLU MLP of 4 * width, learned
positions, an untied output layer, layer norm eps 1e-5), both trained with AdamW at the same
settings on the same random windows. One step = forward, backward and the AdamW update.

Ways, timed in interleaved rounds (each round times every way once, so the machine's swings hit
them alike): JAX ``jit`` (the course's step; and the same model batched with ``einsum``, the
usual way in JAX, :func:`batched_loss`), PyTorch eager (with its default threads, and with
one: OpenMP threads that spin can lose on a busy machine), and ``torch.compile`` where it
works here. Each figure is the median over rounds of the mean step time of ``--steps`` steps,
after warm-up steps that are not timed (JAX's compile and torch.compile's are reported apart).
Beside each: the fraction of the machine's matmul limit it reaches, that limit measured in the
same run as a large float32 matrix product in JAX (2 * n^3 operations per product), and the
step's operations counted as nanoGPT's ``estimate_mfu`` does (6 per parameter per token, plus
attention's 12 * layers * width * context per token).

PyTorch is not a dependency of the project: install it in a separate environment and run this
with that environment's Python, which must also see this package (``pip install -e .`` there,
or PYTHONPATH=.). Without torch the script says so and times JAX alone.
"""
import argparse
import os
import platform
import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np

from nn_from_scratch import optim
from nn_from_scratch.gpt import gpt_loss, init_gpt_params

LAYERS, HEADS, WIDTH, CONTEXT, BATCH, VOCAB = 4, 4, 128, 64, 12, 104  # nanoGPT's CPU recipe
LEARNING_RATE, WEIGHT_DECAY, BETAS = 1e-3, 0.1, (0.9, 0.99)


def matmul_limit(n: int = 1024, repeats: int = 20) -> float:
    """Float32 operations per second of a large matrix product in JAX, here (best of repeats)."""
    a = jax.random.normal(jax.random.key(0), (n, n))
    product = jax.jit(lambda a: a @ a)
    product(a).block_until_ready()
    best = min(_seconds(lambda: product(a).block_until_ready()) for _ in range(repeats))
    return 2 * n ** 3 / best


def _seconds(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def step_operations(params_count: int) -> float:
    """Operations of one training step, as nanoGPT's estimate_mfu counts them."""
    per_token = 6 * params_count + 12 * LAYERS * WIDTH * CONTEXT
    return per_token * BATCH * CONTEXT


def batched_loss(params, x, y):
    """The course's GPT (the same parameters and numbers as ``gpt_loss``) written the usual way
    in JAX, batched from the start with ``einsum``, not for ONE sequence lifted by ``vmap``: it
    tells whether a gap to PyTorch is the course's way of writing or XLA's."""
    (embed, positions), *rest = params
    batch, length = x.shape

    def norm(h, gamma, beta):
        centred = h - h.mean(-1, keepdims=True)
        return centred / jnp.sqrt((centred ** 2).mean(-1, keepdims=True) + 1e-5) * gamma + beta

    h = embed[x] + positions[:length]
    mask = jnp.tril(jnp.ones((length, length), bool))
    for i in range(LAYERS):
        (g1, b1), (w_qkv, w_o), (g2, b2), (w1, c1), (w2, c2) = rest[5 * i:5 * i + 5]
        q, k, v = jnp.einsum("btd,shkd->sbhtk", norm(h, g1, b1), w_qkv)  # w_qkv (3, H, d_k, d)
        scores = jnp.where(mask, jnp.einsum("bhtk,bhuk->bhtu", q, k) / jnp.sqrt(q.shape[-1]),
                           -jnp.inf)
        heads = jnp.einsum("bhtu,bhuk->bthk", jax.nn.softmax(scores, -1), v)
        h = h + heads.reshape(batch, length, WIDTH) @ w_o.T
        h = h + jax.nn.relu(norm(h, g2, b2) @ w1.T + c1) @ w2.T + c2
    (gamma, beta), (w_out, b_out) = rest[-2:]
    log_probs = jax.nn.log_softmax(norm(h, gamma, beta) @ w_out.T + b_out, -1)
    return -jnp.mean(jnp.take_along_axis(log_probs, y[..., None], -1))


def jax_way(batches: np.ndarray, loss_fn=gpt_loss):
    """(compile seconds, run(steps) -> seconds per step, parameter count) for the JAX step."""
    params = init_gpt_params(jax.random.key(0), VOCAB, context=CONTEXT, width=WIDTH,
                             heads=HEADS, depth=LAYERS)
    opt = optim.adamw(LEARNING_RATE, b1=BETAS[0], b2=BETAS[1], weight_decay=WEIGHT_DECAY)
    x, y = jnp.asarray(batches[0, :, :-1]), jnp.asarray(batches[0, :, 1:])
    assert abs(float(loss_fn(params, x, y)) - float(gpt_loss(params, x, y))) < 1e-5

    @jax.jit
    def step(params, state, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        updates, state = opt.update(grads, state, params)
        return optim.apply_updates(params, updates), state, loss

    data = jnp.asarray(batches)
    carry = [params, opt.init(params)]
    start = time.perf_counter()
    compiled = step.lower(*carry, data[0, :, :-1], data[0, :, 1:]).compile()
    compile_s = time.perf_counter() - start

    def run(steps: int) -> float:
        start = time.perf_counter()
        for i in range(steps):
            x = data[i % len(data)]
            carry[0], carry[1], loss = compiled(carry[0], carry[1], x[:, :-1], x[:, 1:])
        loss.block_until_ready()
        return (time.perf_counter() - start) / steps

    count = sum(int(np.prod(leaf.shape)) for leaf in jax.tree.leaves(params))
    return compile_s, run, count


def torch_ways(batches: np.ndarray):
    """{name: (compile seconds, run)} for PyTorch eager (with its default threads and with
    one) and torch.compile (if it works), on the
    GPU when JAX runs on one (so that both sides use the same kind of device)."""
    import torch
    from torch import nn

    device = "cuda" if jax.devices()[0].platform == "gpu" and torch.cuda.is_available() else "cpu"

    def synchronize() -> None:
        if device == "cuda":
            torch.cuda.synchronize()

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm1, self.norm2 = nn.LayerNorm(WIDTH), nn.LayerNorm(WIDTH)
            self.qkv = nn.Linear(WIDTH, 3 * WIDTH, bias=False)
            self.out = nn.Linear(WIDTH, WIDTH, bias=False)
            self.mlp = nn.Sequential(nn.Linear(WIDTH, 4 * WIDTH), nn.ReLU(),
                                     nn.Linear(4 * WIDTH, WIDTH))

        def forward(self, x):
            b, t, d = x.shape
            q, k, v = self.qkv(self.norm1(x)).split(d, dim=2)
            q, k, v = (z.view(b, t, HEADS, d // HEADS).transpose(1, 2) for z in (q, k, v))
            scores = (q @ k.transpose(-2, -1)) / (d // HEADS) ** 0.5
            mask = torch.ones(t, t, dtype=torch.bool, device=x.device).tril()
            weights = scores.masked_fill(~mask, float("-inf")).softmax(dim=-1)
            x = x + self.out((weights @ v).transpose(1, 2).reshape(b, t, d))
            return x + self.mlp(self.norm2(x))

    class TorchGPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed, self.positions = nn.Embedding(VOCAB, WIDTH), nn.Embedding(CONTEXT, WIDTH)
            self.blocks = nn.Sequential(*[Block() for _ in range(LAYERS)])
            self.norm, self.head = nn.LayerNorm(WIDTH), nn.Linear(WIDTH, VOCAB)

        def forward(self, x, y):
            h = self.embed(x) + self.positions(torch.arange(x.shape[1], device=x.device))
            logits = self.head(self.norm(self.blocks(h)))
            return nn.functional.cross_entropy(logits.reshape(-1, VOCAB), y.reshape(-1))

    data = torch.from_numpy(batches.astype(np.int64)).to(device)
    ways = {}
    threads = torch.get_num_threads()
    for name in ("PyTorch eager", "PyTorch eager, 1 thread", "torch.compile"):
        torch.manual_seed(0)
        # OpenMP's threads spin while they wait: on a busy 2-core machine one thread can win
        torch.set_num_threads(1 if "1 thread" in name else threads)
        model = TorchGPT().to(device)
        opt = torch.optim.AdamW(model.parameters(), lr=LEARNING_RATE, betas=BETAS,
                                weight_decay=WEIGHT_DECAY)
        forward = torch.compile(model) if name == "torch.compile" else model

        def step(i, forward=forward, opt=opt):
            x = data[i % len(data)]
            loss = forward(x[:, :-1], x[:, 1:])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            return loss

        try:
            start = time.perf_counter()
            step(0)
            synchronize()
            compile_s = time.perf_counter() - start
        except Exception as err:  # torch.compile needs a C compiler and more
            print(f"{name}: not timed ({type(err).__name__}: {str(err)[:120]})")
            continue

        def run(steps: int, step=step, n: int = 1 if "1 thread" in name else threads) -> float:
            torch.set_num_threads(n)
            start = time.perf_counter()
            for i in range(steps):
                step(i)
            synchronize()
            return (time.perf_counter() - start) / steps

        ways[name] = (compile_s, run)
    return ways


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=20, help="timed steps per way and round")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    batches = rng.integers(1, VOCAB, size=(8, BATCH, CONTEXT + 1))  # windows and their next
    compile_s, run, count = jax_way(batches)
    ways = {"JAX jit (from scratch)": (compile_s, run),
            "JAX jit, batched einsum": jax_way(batches, batched_loss)[:2]}
    try:
        import torch
        ways.update(torch_ways(batches))
        about_torch = f"PyTorch {torch.__version__} ({torch.get_num_threads()} threads)"
    except ImportError:
        about_torch = "PyTorch not installed: JAX alone"
    limit = matmul_limit()
    for _, run in ways.values():
        run(3)  # warm-up, untimed
    times: dict[str, list[float]] = {name: [] for name in ways}
    for _ in range(args.rounds):
        for name, (_, run) in ways.items():
            times[name].append(run(args.steps))
    operations = step_operations(count)
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, load "
          f"{os.getloadavg()[0]:.1f} at the end; JAX {jax.__version__} on "
          f"{jax.devices()[0].platform}; {about_torch}")
    print(f"model: {LAYERS} layers, {HEADS} heads, width {WIDTH}, context {CONTEXT}, batch "
          f"{BATCH}: {count:,} parameters, {operations / 1e9:.2f} G operations a step; matmul "
          f"limit here {limit / 1e9:.1f} G operations/s")
    eager = statistics.median(times["PyTorch eager"]) if "PyTorch eager" in times else None
    print(f"{'way':24s} {'compile':>9s} {'ms/step':>9s} {'steps/s':>8s} {'of limit':>9s} "
          f"{'vs eager':>9s}")
    for name, (compile_s, _) in ways.items():
        per_step = statistics.median(times[name])
        ratio = f"{eager / per_step:8.2f}x" if eager else "      n/a"
        print(f"{name:24s} {compile_s:8.2f}s {per_step * 1e3:9.2f} {1 / per_step:8.1f} "
              f"{operations / per_step / limit:8.1%} {ratio}")
    print("nanoGPT's own CPU recipe (its README): 2,000 iterations in about 3 minutes, "
          f"about {3 * 60 / 2000 * 1e3:.0f} ms a step (PyTorch, its machine), validation loss "
          "1.88 on Shakespeare")


if __name__ == "__main__":
    main()
