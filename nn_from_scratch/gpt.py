"""A tiny GPT: a character-level language model for ONE sequence, batched with ``vmap``.

Given characters ``t_0 .. t_{T-1}`` (as ids), :func:`predict_gpt` returns, at every position
``i``, the log-probabilities of the character that comes next, ``t_{i+1}``. It is lesson
14's transformer with three changes: tokens are looked up in an embedding table instead of
patches projected; every block is *causal* (position ``i`` sees ``0..i`` only, so it cannot
peek at the answer); and the output is one distribution per position, not one per sequence::

    x = E[tokens] + P[:T]                    (T, d): what the token is, plus where it is
    x = transformer_block(x, causal=True)    depth times (attention.py, reused)
    x = layer_norm(x)                        each position
    log_probs = log_softmax(x @ W_out.T + b_out)    (T, V)

Parameters are a list of pairs, as for every network of the course (so ``optim.py`` and
``adamw``'s default mask apply unchanged): ``(E: (V, d), P: (context, d))``; five pairs per
block; the final layer norm's ``(gamma, beta)``; the output ``(W_out: (V, d), b_out: (V,))``.

The output projection is NOT tied to the embedding (GPT-2 ties them: ``W_out = E``). With
characters the vocabulary is tiny, so tying saves 13,312 of 826,216 numbers (V = 104, d = 128),
while an untied output is free to score the next character in its own way (and keep a bias
for its overall frequency); and each matrix keeps one job, easier to read and to check. Tying
pays off with subword vocabularies of 50,000 tokens, where the embedding is most of the model.

Training minimises :func:`gpt_loss`, the mean next-character cross-entropy in nats;
:func:`bits_per_char` converts to the unit compression and the n-gram baselines use
(``ngram.py``). An untrained model's loss is about ``ln V`` (every character equally likely).
"""
import math

import jax
import jax.numpy as jnp
from jax import random, vmap
from jax.typing import ArrayLike

from ._checks import InputError, check_key, check_positive_int
from .attention import (
    PAIRS_PER_BLOCK,
    block_count,
    init_block_params,
    layer_norm,
    transformer_block,
)
from .params import Params

__all__ = ["PAIRS_PER_BLOCK", "batched_predict_gpt", "bits_per_char", "gpt_depth", "gpt_loss",
           "init_gpt_params", "predict_gpt"]



def gpt_depth(params: Params) -> int:
    """The number of transformer blocks in ``params`` (``3 + 5 * depth`` pairs)."""
    return block_count(params, "a GPT's", "init_gpt_params")


def predict_gpt(params: Params, tokens: ArrayLike) -> jax.Array:
    """Log-probabilities of the next character at every position of ONE sequence.

    Args:
      params: from :func:`init_gpt_params`.
      tokens: ``(T,)`` int ids, ``1 <= T <= context``.

    Returns:
      ``(T, V)``: row ``i`` is ``log p(next character | tokens[0..i])``; it does not depend
      on ``tokens[i+1:]`` (the blocks are causal).
    """
    depth = gpt_depth(params)
    (embed, positions), *rest = params
    tokens = jnp.asarray(tokens)
    if tokens.ndim != 1 or not jnp.issubdtype(tokens.dtype, jnp.integer):
        hint = ("Use batched_predict_gpt for a batch (B, T)." if tokens.ndim == 2 else
                "Encode text with a Tokenizer: tokenizer.encode(text).")
        raise InputError(f"predict_gpt takes ONE sequence of integer token ids (T,); got shape "
                         f"{tokens.shape}, dtype {tokens.dtype}. {hint}")
    if not 1 <= tokens.shape[0] <= positions.shape[0]:
        raise InputError(f"predict_gpt: this GPT has {positions.shape[0]} positions (its "
                         f"context); got {tokens.shape[0]} tokens. Keep the last "
                         f"{positions.shape[0]}: tokens[-{positions.shape[0]}:].")
    x = embed[tokens] + positions[:tokens.shape[0]]  # (T, d)
    for i in range(depth):
        x = transformer_block(x, rest[PAIRS_PER_BLOCK * i:PAIRS_PER_BLOCK * (i + 1)],
                              causal=True)
    (gamma, beta), (w_out, b_out) = rest[-2:]
    x = vmap(layer_norm, in_axes=(0, None, None))(x, gamma, beta)
    return jax.nn.log_softmax(x @ w_out.T + b_out, axis=-1)  # (T, V)


batched_predict_gpt = vmap(predict_gpt, in_axes=(None, 0))
batched_predict_gpt.__doc__ = """``predict_gpt`` for a batch: ``(B, T)`` ids -> ``(B, T, V)``
log-probabilities, ``vmap(predict_gpt, in_axes=(None, 0))``."""


def gpt_loss(params: Params, x: ArrayLike, y: ArrayLike) -> jax.Array:
    """Mean next-character cross-entropy, in nats.

    Args:
      params: from :func:`init_gpt_params`.
      x: ``(B, T)`` int ids, the windows.
      y: ``(B, T)`` int ids, the targets: ``y[b, i]`` is the character after ``x[b, i]``.

    Returns:
      scalar ``-mean over b, i of log p(y[b, i] | x[b, 0..i])``.
    """
    x, y = jnp.asarray(x), jnp.asarray(y)
    if x.ndim != 2 or x.shape != y.shape:
        raise InputError(f"gpt_loss takes windows x (B, T) and their next characters y of the "
                         f"same shape; got x {x.shape} and y {y.shape}. Make them with "
                         f"TextDataset.windows(starts, context).")
    log_probs = batched_predict_gpt(params, x)  # (B, T, V)
    picked = jnp.take_along_axis(log_probs, y[..., None], axis=-1)  # (B, T, 1)
    return -jnp.mean(picked)


def bits_per_char(nats: ArrayLike) -> jax.Array:
    """A loss in nats as bits per character: ``nats / ln 2`` (the average number of yes/no
    questions the model needs to name the next character)."""
    return jnp.asarray(nats) / math.log(2)


def init_gpt_params(key: jax.Array, vocab_size: int, context: int = 64, width: int = 128,
                    heads: int = 4, depth: int = 4, mlp_width: int | None = None) -> Params:
    """Parameters of a tiny GPT, as a list of pairs (see the module docstring).

    The blocks are lesson 14's (:func:`~nn_from_scratch.attention.init_block_params`); the
    token and position embeddings are both drawn with scale 1, so that the first layer norm
    sees where a character is as clearly as which it is (with the position at 0.02, as in
    GPT-2 and lesson 14's patches, training stalled at the bigram's loss for hundreds of
    steps); the output weights with ``0.1 / sqrt(d)``, so that the
    first predictions are nearly uniform and the untrained loss is about ``ln V``.

    Args:
      key: a PRNG key.
      vocab_size: ``V``, ``tokenizer.vocab_size``.
      context: ``T``, the most characters the model sees (the position embedding's rows).
      width: ``d``, a multiple of ``heads``.
      heads: attention heads per block.
      depth: transformer blocks.
      mlp_width: hidden units of each block's MLP (default ``4 * width``, as in GPT-2).
    """
    check_key(key)
    for value, name in ((vocab_size, "vocab_size"), (context, "context"), (width, "width"),
                        (heads, "heads"), (depth, "depth")):
        check_positive_int(value, name)
    mlp_width = check_positive_int(4 * width if mlp_width is None else mlp_width, "mlp_width")
    if width % heads:
        raise InputError(f"init_gpt_params: width {width} must be a multiple of heads {heads} "
                         f"(each head gets width // heads); e.g. width={heads * 32}.")
    keys = iter(random.split(key, 3 + 4 * depth))
    params = [(random.normal(next(keys), (vocab_size, width)),
               random.normal(next(keys), (context, width)))]
    for _ in range(depth):  # four keys per block
        params += init_block_params([next(keys) for _ in range(4)], width, heads, mlp_width,
                                    depth)
    w_out = random.normal(next(keys), (vocab_size, width)) * 0.1 / math.sqrt(width)
    return params + [(jnp.ones(width), jnp.zeros(width)), (w_out, jnp.zeros(vocab_size))]
