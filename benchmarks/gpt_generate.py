"""Writing text with the tiny GPT, with and without the KV cache: characters per second.

Both ways write the same text from the same key (``nn_from_scratch.generate``): with the
cache, each character costs one position (plus, every ``context // 2`` characters, a rebuild
of the cache when the window slides); without it, the whole window (up to ``context``
positions) is run again for every character. The model is the command line's
(``train --model gpt``: 4 blocks of 4 heads, width 96, context 64, 104 tokens), untrained:
the time does not depend on the weights. Each way is first called once to compile its
programs (the step, and the rebuild), timed apart; then the rounds are INTERLEAVED (each way
once per round) and each figure is the median over the rounds. ``generate`` returns a NumPy
array, built from every step's token, so each timed call has finished its work when it
returns (no ``block_until_ready`` needed).

    .venv/bin/python benchmarks/gpt_generate.py              # about a minute on 2 cores
    .venv/bin/python benchmarks/gpt_generate.py --chars 1000 --rounds 7
"""
import argparse
import os
import platform
import statistics
import time

import jax
import numpy as np

from nn_from_scratch.generate import generate
from nn_from_scratch.gpt import init_gpt_params
from nn_from_scratch.gpt_cli import GPT

VOCAB = 104  # the Python 3.11 documentation's 103 characters, and 1 for unknown


def timed(params: list, cache: bool, chars: int, seed: int) -> tuple[float, np.ndarray]:
    start = time.perf_counter()
    text = generate(params, jax.random.key(seed), np.array([1]), chars, use_cache=cache)
    return time.perf_counter() - start, text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--chars", type=int, default=400, help="characters per timed call")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds")
    parser.add_argument("--context", type=int, default=GPT["context"])
    args = parser.parse_args()
    shape = {**GPT, "context": args.context}
    params = init_gpt_params(jax.random.key(0), VOCAB, **shape)
    ways = {"KV cache": True, "whole window": False}
    print(f"{platform.machine()}, {os.cpu_count()} CPUs, load average "
          f"{', '.join(f'{x:.1f}' for x in os.getloadavg())}; JAX {jax.__version__} on "
          f"{jax.devices()[0].platform.upper()}; GPT {shape}, {args.chars} characters a call, "
          f"{args.rounds} interleaved rounds.")
    # the first call compiles every program a way uses: long enough to slide the window once
    first = {name: timed(params, cache, args.context + 2, 0)[0] for name, cache in ways.items()}
    seconds: dict[str, list[float]] = {name: [] for name in ways}
    texts = {}
    for r in range(args.rounds):
        for name, cache in ways.items():
            elapsed, texts[name] = timed(params, cache, args.chars, r + 1)
            seconds[name].append(elapsed)
        assert np.array_equal(*texts.values()), f"round {r + 1}: the two ways wrote different text"
    speed = {name: args.chars / statistics.median(times) for name, times in seconds.items()}
    print(f"{'':14}{'chars/s (median)':>18}{'first call (compile + run)':>30}")
    for name in ways:
        print(f"{name:14}{speed[name]:18.0f}{first[name]:28.2f} s")
    print(f"The cache writes {speed['KV cache'] / speed['whole window']:.1f}x as many "
          f"characters per second (the same text).")


if __name__ == "__main__":
    main()
