"""Attention from scratch: ONE query against a sequence, lifted with ``vmap`` to every query and
every head; layer normalisation of ONE vector; a pre-norm transformer block for ONE sequence.

:func:`attention` is a soft, differentiable lookup. A query is compared with every key (a dot
product, scaled by ``sqrt(d)``), the scores become weights that sum to 1 (a softmax), and the
answer is the weighted average of the values: the rows whose keys match the query best count
most. Nothing here is written for more than one query, one head or one sequence:

- every query of a sequence: ``vmap(attention, in_axes=(0, None, None))`` maps the queries and
  shares the keys and values (:func:`self_attention`);
- every head: ``vmap(self_attention, in_axes=(None, 0, 0, 0))`` shares the sequence and maps
  the heads' weights, stacked on their first axis (:func:`multi_head_attention`);
- the batch: ``vmap`` over sequences, as for every network of the course.

A *causal* mask lets query ``i`` see positions ``0..i`` only: a model of what comes next.
Weights follow the course's layout, ``W: (n_out, n_in)`` and ``y = W @ x`` for ONE vector,
so a sequence ``x: (T, d)`` is ``x @ W.T``.
"""
import math
from collections.abc import Sequence
from functools import partial

import jax
import jax.numpy as jnp
from jax import random, vmap
from jax.typing import ArrayLike

from ._checks import InputError
from .model import relu

__all__ = ["PAIRS_PER_BLOCK", "attention", "attention_weights", "block_count", "causal_mask",
           "init_block_params", "layer_norm",
           "multi_head_attention", "self_attention", "softmax", "transformer_block"]

PAIRS_PER_BLOCK = 5  # a block's parameters: norm, attention, norm, MLP in, MLP out
LAYER_NORM_EPS = 1e-5  # keeps the division finite for a vector whose entries are all equal


def softmax(scores: ArrayLike) -> jax.Array:
    """``exp(scores) / sum(exp(scores))`` for ONE vector of scores ``(T,)``, computed stably.

    Subtracting the largest score first changes nothing (it cancels) but keeps ``exp`` from
    overflowing. Scores of ``-inf`` (masked positions) get weight 0; if every score is
    ``-inf`` the weights are all 0, not NaN (``-inf - (-inf)`` would be NaN).
    """
    scores = jnp.asarray(scores)
    top = jnp.max(scores)
    top = jnp.where(jnp.isfinite(top), top, 0.0)  # a fully masked row: no NaN
    exps = jnp.exp(scores - top)  # (T,), masked positions exactly 0
    total = jnp.sum(exps)
    return exps / jnp.where(total > 0, total, 1.0)


def attention_weights(query: ArrayLike, keys: ArrayLike, mask: ArrayLike | None = None
                      ) -> jax.Array:
    """How much ONE query attends to each position: ``softmax(keys @ query / sqrt(d))``.

    Args:
      query: ``(d,)``.
      keys: ``(T, d)``, one key per position.
      mask: ``(T,)`` booleans, ``True`` where the query may look (``None``: everywhere).

    Returns:
      ``(T,)`` weights, each >= 0, summing to 1 (0 where masked).
    """
    query, keys = jnp.asarray(query), jnp.asarray(keys)
    if query.ndim != 1 or keys.ndim != 2:
        raise InputError(f"attention takes ONE query (d,) and keys (T, d); got query "
                         f"{query.shape} and keys {keys.shape}. For every query of a sequence "
                         f"use self_attention, or vmap(attention, in_axes=(0, None, None)).")
    if keys.shape[1] != query.shape[0]:
        raise InputError(f"attention compares the query with each key, so they need the same "
                         f"size d: keys {keys.shape} have {keys.shape[1]}, the query "
                         f"{query.shape} has {query.shape[0]}. Make both with the same d_k.")
    scores = keys @ query / math.sqrt(query.shape[0])  # (T,): sqrt(d) keeps them near 1
    if mask is not None:
        scores = jnp.where(mask, scores, -jnp.inf)  # masked BEFORE the softmax: weight 0
    return softmax(scores)


def attention(query: ArrayLike, keys: ArrayLike, values: ArrayLike,
              mask: ArrayLike | None = None) -> jax.Array:
    """Scaled dot-product attention for ONE query: the values averaged with its weights.

    Args:
      query: ``(d,)``.
      keys: ``(T, d)``.
      values: ``(T, d_v)``, one value per key.
      mask: ``(T,)`` booleans, ``True`` where the query may look (``None``: everywhere).

    Returns:
      ``(d_v,)``: ``attention_weights(query, keys, mask) @ values``.
    """
    values = jnp.asarray(values)
    if values.ndim != 2 or values.shape[0] != jnp.shape(keys)[0]:
        raise InputError(f"attention needs one value per key: keys {jnp.shape(keys)}, values "
                         f"{values.shape}; values should be (T, d_v) with T = "
                         f"{jnp.shape(keys)[0]}.")
    return attention_weights(query, keys, mask) @ values


def causal_mask(length: int) -> jax.Array:
    """``(T, T)`` booleans: row ``i`` is ``True`` at positions ``0..i`` (what query ``i`` sees)."""
    positions = jnp.arange(length)
    return positions[None, :] <= positions[:, None]


def self_attention(x: ArrayLike, w_q: ArrayLike, w_k: ArrayLike, w_v: ArrayLike,
                   causal: bool = False) -> jax.Array:
    """One head of self-attention over ONE sequence: every position asks every position.

    Args:
      x: ``(T, d)``, one vector per position.
      w_q, w_k: ``(d_k, d)``: queries and keys, ``W @ x_t`` for each position ``t``.
      w_v: ``(d_v, d)``: the values.
      causal: position ``i`` sees only positions ``0..i``.

    Returns:
      ``(T, d_v)``: row ``i`` is ``attention(q_i, K, V)``, ``vmap`` over the queries.
    """
    x = jnp.asarray(x)
    if x.ndim != 2:
        raise InputError(f"self_attention takes ONE sequence (T, d); got {x.shape}. For a "
                         f"batch, vmap it over the sequences.")
    q, k, v = x @ jnp.asarray(w_q).T, x @ jnp.asarray(w_k).T, x @ jnp.asarray(w_v).T
    if causal:  # each query gets its own row of the mask: vmap maps both
        return vmap(attention, in_axes=(0, None, None, 0))(q, k, v, causal_mask(x.shape[0]))
    return vmap(attention, in_axes=(0, None, None))(q, k, v)


def multi_head_attention(x: ArrayLike, w_qkv: ArrayLike, w_o: ArrayLike,
                         causal: bool = False) -> jax.Array:
    """``H`` heads of self-attention over ONE sequence, their outputs joined and projected.

    Args:
      x: ``(T, d)``.
      w_qkv: ``(3, H, d_k, d)``: each head's query, key and value weights, stacked.
      w_o: ``(d, H * d_k)``: mixes the heads' joined outputs back to width ``d``.
      causal: as for :func:`self_attention`.

    Returns:
      ``(T, d)``.
    """
    w_q, w_k, w_v = jnp.asarray(w_qkv)  # each (H, d_k, d)
    one_head = partial(self_attention, causal=causal)  # a Python bool, not something to map
    heads = vmap(one_head, in_axes=(None, 0, 0, 0))(x, w_q, w_k, w_v)  # (H, T, d_k)
    t = heads.shape[1]  # join the heads per position: (T, H * d_k)
    return heads.transpose(1, 0, 2).reshape(t, -1) @ jnp.asarray(w_o).T


def layer_norm(x: ArrayLike, gamma: ArrayLike, beta: ArrayLike) -> jax.Array:
    """ONE vector ``(d,)`` scaled to mean 0 and variance 1, then ``* gamma + beta`` (learned)."""
    x = jnp.asarray(x)
    mean, var = jnp.mean(x), jnp.var(x)
    return (x - mean) / jnp.sqrt(var + LAYER_NORM_EPS) * gamma + beta


def transformer_block(x: ArrayLike, block: list, causal: bool = False) -> jax.Array:
    """A pre-norm transformer block for ONE sequence: attention, then an MLP, each added back.

    ``x + attention(norm(x))``, then ``x + mlp(norm(x))``: the residual connections carry
    ``x`` past each part unchanged, so the gradient always has a direct path to the first
    layers. Normalising each part's input (pre-norm), not the sum, leaves that path clean; a
    pre-norm model then needs one last layer norm before its output layer.

    Args:
      x: ``(T, d)``.
      block: five pairs: ``(gamma, beta)`` of the first layer norm; ``(w_qkv, w_o)`` of the
        attention; ``(gamma, beta)`` of the second; ``(W1: (m, d), b1: (m,))`` and
        ``(W2: (d, m), b2: (d,))`` of the MLP, applied to every position alike.
      causal: as for :func:`self_attention`.

    Returns:
      ``(T, d)``.
    """
    (g1, b1), (w_qkv, w_o), (g2, b2), (w1, c1), (w2, c2) = block
    norm = vmap(layer_norm, in_axes=(0, None, None))  # every position, the same gamma, beta
    x = x + multi_head_attention(norm(jnp.asarray(x), g1, b1), w_qkv, w_o, causal)
    hidden = relu(norm(x, g2, b2) @ w1.T + c1)  # (T, m)
    return x + hidden @ w2.T + c2


def block_count(params: Sequence, model: str, maker: str) -> int:
    """How many transformer blocks a model's ``params`` hold: one pair in, five per block, two
    out (``3 + 5 * depth`` pairs). ``model`` and ``maker`` name the model and the function that
    makes its parameters, for the error."""
    blocks, extra = divmod(len(params) - 3, PAIRS_PER_BLOCK)
    if extra or blocks < 0:
        raise InputError(f"{model} params are 3 + {PAIRS_PER_BLOCK} * depth pairs; got "
                         f"{len(params)}. Make them with {maker}.")
    return blocks


def init_block_params(keys: Sequence[jax.Array], width: int, heads: int, mlp_width: int,
                      depth: int) -> list:
    """The five pairs of ONE :func:`transformer_block`, drawn with four keys.

    Attention weights have scale ``1 / sqrt(width)``; the MLP's first layer is He-scaled;
    the output weights of the attention and of the MLP are also scaled by ``1 / sqrt(2 *
    depth)`` (GPT-2's scheme: the ``2 * depth`` additions to the residual stream then add up
    to about the variance of one, however deep); layer norms start as ``gamma = 1, beta = 0``.

    Args:
      keys: four PRNG keys (attention in, attention out, MLP in, MLP out).
      width: ``d``, a multiple of ``heads``.
      heads: ``H``, each of size ``d // H``.
      mlp_width: ``m``, the MLP's hidden units.
      depth: the number of blocks in the whole network (it scales the output weights).
    """
    d, d_k, small = width, width // heads, 1 / math.sqrt(2 * depth)
    k_qkv, k_o, k_1, k_2 = keys
    ones, zeros = jnp.ones(d), jnp.zeros(d)
    w_qkv = random.normal(k_qkv, (3, heads, d_k, d)) / math.sqrt(d)
    w_o = random.normal(k_o, (d, d)) * small / math.sqrt(d)
    w1 = random.normal(k_1, (mlp_width, d)) * math.sqrt(2 / d)
    w2 = random.normal(k_2, (d, mlp_width)) * small * math.sqrt(2 / mlp_width)
    return [(ones, zeros), (w_qkv, w_o), (ones, zeros), (w1, jnp.zeros(mlp_width)), (w2, zeros)]
