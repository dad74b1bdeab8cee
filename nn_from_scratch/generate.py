"""Writing text with a GPT: sample ONE next character, append it, repeat; and the KV cache.

:func:`sample_next` draws one character from the model's log-probabilities, divided by a
*temperature* first (below 1 sharpens the distribution towards the likeliest characters,
above 1 flattens it) and, with ``top_k``, restricted to the ``k`` likeliest. :func:`generate`
repeats it ``n`` times, splitting its key once per step (lesson 01's rule: a key is used once,
so every step draws afresh and the same key always gives the same text).

The KV cache. Predicting character ``t + 1`` with :func:`~nn_from_scratch.gpt.predict_gpt`
runs the whole prefix through the model again, though positions ``0..t-1`` have not changed:
their keys and values, in every block, are the ones computed at the step before (the blocks
are causal, so nothing later changes them). :func:`predict_gpt_step` keeps them in a cache,
``(K, V)`` of shape ``(H, context, d_k)`` per block, and computes ONE position: its query,
key and value, the key and value written into the cache at ``position``, attention of the
query over the cached ``0..position``, then the block's MLP. A step then costs one position,
not ``t``; the result equals the last row of ``predict_gpt`` on the whole prefix, to float32
rounding (``tests/test_generate.py``). The cached path is the only place where
``transformer_block``'s steps are written out again, for one position, since the block itself
never hands out its keys and values; it calls the same ``attention`` and ``layer_norm``.

Past the context. The position embedding has ``context`` rows, so the model never sees more
than ``context`` characters. When the text outgrows the window, the window slides: it jumps
forward to keep the last ``context // 2`` characters, and the cache is rebuilt from them (its
keys were computed at their old positions, so it cannot simply be rolled). The model then
sees between ``context // 2`` and ``context`` characters, and one rebuild every ``context //
2`` steps keeps a step's average cost about two positions. ``use_cache=False`` slides the
same window and recomputes it whole at every step, so both ways write the same text.
"""
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax import jit, lax, random, vmap
from jax.typing import ArrayLike

from ._checks import InputError, check_key, check_positive_int
from .attention import attention, layer_norm
from .gpt import PAIRS_PER_BLOCK, gpt_depth, predict_gpt
from .model import relu
from .params import Params

__all__ = ["KVCache", "generate", "init_kv_cache", "predict_gpt_step", "sample_next"]

KVCache = list[tuple[jax.Array, jax.Array]]  # per block: (keys, values), each (H, context, d_k)


def _check_temperature(temperature: float) -> None:
    try:
        value = float(temperature)
    except jax.errors.ConcretizationTypeError:  # traced inside jit: checked before
        return
    if not value > 0 or not np.isfinite(value):
        raise InputError(f"temperature must be a finite number above 0; got {temperature}. "
                         f"The log-probabilities are divided by it: 1 samples the model as it "
                         f"is, 0.5 is more careful, 1.5 more adventurous. For the likeliest "
                         f"character every time (greedy), use top_k=1.")


def sample_next(key: jax.Array, log_probs: ArrayLike, temperature: float = 1.0,
                top_k: int | None = None) -> jax.Array:
    """Draw ONE next character from ``softmax(log_probs / temperature)``.

    Args:
      key: a PRNG key, used once.
      log_probs: ``(V,)``, one row of :func:`~nn_from_scratch.gpt.predict_gpt`.
      temperature: > 0. Below 1 favours the likeliest characters, above 1 evens them out.
      top_k: keep only the ``k`` likeliest characters (ties with the ``k``-th are kept);
        ``None`` keeps all; ``1`` always picks the likeliest.

    Returns:
      a ``()`` int32 array, the id drawn.
    """
    check_key(key)
    _check_temperature(temperature)
    log_probs = jnp.asarray(log_probs)
    if log_probs.ndim != 1:
        raise InputError(f"sample_next draws ONE character from ONE row of log-probabilities "
                         f"(V,); got {log_probs.shape}. Take the last row: log_probs[-1].")
    logits = log_probs / temperature
    if top_k is not None:
        check_positive_int(top_k, "top_k")
        if top_k > logits.shape[0]:
            raise InputError(f"top_k={top_k} is more than the {logits.shape[0]} characters of "
                             f"the vocabulary; use at most {logits.shape[0]}, or None for all.")
        kth = lax.top_k(logits, top_k)[0][-1]  # the k-th largest
        logits = jnp.where(logits >= kth, logits, -jnp.inf)
    return random.categorical(key, logits).astype(jnp.int32)


def init_kv_cache(params: Params, context: int) -> KVCache:
    """An empty cache for ``context`` positions: per block, zeros ``(H, context, d_k)`` for the
    keys and the same for the values (``H`` and ``d_k`` read from ``params``)."""
    check_positive_int(context, "context")
    if context > params[0][1].shape[0]:
        raise InputError(f"init_kv_cache: context {context} is more than the model's "
                         f"{params[0][1].shape[0]} positions.")
    _, heads, d_k, _ = params[2][0].shape  # the first block's w_qkv: (3, H, d_k, d)
    zeros = jnp.zeros((heads, context, d_k))
    return [(zeros, zeros) for _ in range(gpt_depth(params))]


def predict_gpt_step(params: Params, cache: KVCache, token: ArrayLike, position: ArrayLike
                     ) -> tuple[jax.Array, KVCache]:
    """ONE position of :func:`~nn_from_scratch.gpt.predict_gpt`, the earlier ones cached.

    Args:
      params: from :func:`~nn_from_scratch.gpt.init_gpt_params`.
      cache: from :func:`init_kv_cache` (or the previous step), holding positions
        ``0 .. position - 1``.
      token: ``()`` int, the character at ``position``.
      position: ``()`` int, ``0 <= position < context``; may be traced under ``jit``.

    Returns:
      ``(log_probs (V,), cache)``: the next character's log-probabilities, equal to
      ``predict_gpt(params, prefix)[-1]`` for the prefix of ``position + 1`` tokens, and the
      cache with this position's keys and values written in.
    """
    (embed, positions), *rest = params
    x = embed[token] + positions[position]  # (d,)
    new_cache = []
    for i, (keys, values) in enumerate(cache):
        (g1, b1), (w_qkv, w_o), (g2, b2), (w1, c1), (w2, c2) = \
            rest[PAIRS_PER_BLOCK * i:PAIRS_PER_BLOCK * (i + 1)]
        q, k, v = jnp.einsum("shkd,d->shk", w_qkv, layer_norm(x, g1, b1))  # each (H, d_k)
        keys, values = keys.at[:, position].set(k), values.at[:, position].set(v)
        seen = jnp.arange(keys.shape[1]) <= position  # causal: 0..position
        heads = vmap(attention, in_axes=(0, 0, 0, None))(q, keys, values, seen)  # (H, d_k)
        x = x + w_o @ heads.reshape(-1)
        x = x + w2 @ relu(w1 @ layer_norm(x, g2, b2) + c1) + c2
        new_cache.append((keys, values))
    (gamma, beta), (w_out, b_out) = rest[-2:]
    return jax.nn.log_softmax(w_out @ layer_norm(x, gamma, beta) + b_out), new_cache


@partial(jit, static_argnames="top_k")
def _cached_step(params: Params, cache: KVCache, token: jax.Array, position: jax.Array,
                 key: jax.Array, temperature: float, top_k: int | None
                 ) -> tuple[jax.Array, KVCache]:
    log_probs, cache = predict_gpt_step(params, cache, token, position)
    return sample_next(key, log_probs, temperature, top_k), cache


@jit
def _prefill(params: Params, cache: KVCache, window: jax.Array, length: jax.Array) -> KVCache:
    """The cache of ``window[:length]``, one position after another (in one program)."""
    def feed(i: jax.Array, c: KVCache) -> KVCache:
        return predict_gpt_step(params, c, window[i], i)[1]
    return lax.fori_loop(0, length, feed, cache)


@partial(jit, static_argnames="top_k")
def _full_step(params: Params, window: jax.Array, position: jax.Array, key: jax.Array,
               temperature: float, top_k: int | None) -> jax.Array:
    """Without a cache: the whole window (padded to ``context``) again, read at ``position``
    (the padding after it is never seen: the blocks are causal)."""
    return sample_next(key, predict_gpt(params, window)[position], temperature, top_k)


def generate(params: Params, key: jax.Array, prompt_ids: ArrayLike, n: int,
             temperature: float = 1.0, top_k: int | None = None,
             use_cache: bool = True) -> np.ndarray:
    """Continue ``prompt_ids`` by ``n`` characters, sampled one at a time.

    Args:
      params: from :func:`~nn_from_scratch.gpt.init_gpt_params`.
      key: a PRNG key, split once per step; the same key gives the same text.
      prompt_ids: ``(P,)`` int ids, at least one (``tokenizer.encode("\\n")`` to start
        from nothing).
      n: characters to add (>= 0).
      temperature, top_k: as for :func:`sample_next`.
      use_cache: the KV cache (one position per step) or the whole window every step.

    Returns:
      ``(P + n,)`` int32: the prompt and what was added.
    """
    check_key(key)
    n = check_positive_int(n, "n", minimum=0)
    _check_temperature(temperature)
    prompt = np.asarray(prompt_ids)
    vocab_size, context = params[-1][1].shape[0], params[0][1].shape[0]
    if prompt.ndim != 1 or prompt.size == 0 or not np.issubdtype(prompt.dtype, np.integer):
        raise InputError(f"generate needs a prompt: ONE non-empty sequence of integer ids "
                         f"(P,); got shape {prompt.shape}, dtype {prompt.dtype}. Start from "
                         f"tokenizer.encode('\\n') to write from nothing.")
    if prompt.min() < 0 or prompt.max() >= vocab_size:
        raise InputError(f"generate: the prompt's ids must be 0..{vocab_size - 1}, this "
                         f"model's vocabulary; got {prompt.min()}..{prompt.max()}.")
    if top_k is not None:
        check_positive_int(top_k, "top_k")
    ids = [int(i) for i in prompt]
    keep = max(context // 2, 1)  # what a slide keeps
    start = 0 if len(ids) <= context else len(ids) - keep
    cache = None

    def padded(tokens: list[int]) -> jax.Array:
        return jnp.asarray(tokens + [0] * (context - len(tokens)), jnp.int32)

    for _ in range(n):
        key, subkey = random.split(key)
        position = len(ids) - 1 - start  # the last character's place in the window
        if not use_cache:
            token = _full_step(params, padded(ids[start:]), position, subkey, temperature,
                               top_k)
        else:
            if cache is None:  # (re)built from the window but its last character
                cache = _prefill(params, init_kv_cache(params, context), padded(ids[start:-1]),
                                 position)
            token, cache = _cached_step(params, cache, ids[-1], position, subkey, temperature,
                                        top_k)
        ids.append(int(token))
        if len(ids) - start > context:  # the window is full: slide it
            start, cache = len(ids) - keep, None
    return np.asarray(ids, np.int32)
