"""Training the tiny GPT: random windows of the text, an optimizer from ``optim.py``, one
compiled program per epoch.

Why not :func:`~nn_from_scratch.train.fit`: it trains on a fixed table of examples ``(n,
features)`` with one label each, one-hot encoded. A language model's examples are windows of
ONE long text, with a target at every position; cutting the 418,000 training characters into
every window of 64 would copy the text 64 times (107 MB), and one fixed set of non-overlapping
windows would show each character at one position only. So :func:`fit_gpt` keeps the text
once, on the device, and cuts each step's windows out of it from random start positions:
``train.batch_indices`` (the same shuffle as ``fit``'s) deals the starts, each epoch a fresh
order, and :meth:`~nn_from_scratch.text_data.TextDataset.windows` cuts them inside the
compiled step. The optimizer, its state carried step to step, and the
:class:`~nn_from_scratch.train.History` it returns are ``fit``'s; "accuracy" is how often the
likeliest next character is the right one.

The validation loss is measured after each epoch on the validation text, every character
scored once and (past the text's first ``context // 2``) with at least ``context // 2``
characters before it: windows every ``context - context // 2`` characters, each scoring only
its second half, as an n-gram always has its ``n - 1``. Non-overlapping windows would score
the first character of each window with no context at all (the command line's model after
2,000 steps: 3.6 bits at position 0, 1.85 on average; 1.78 scored this way).
"""
import time
from functools import partial
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import jit, lax, random

from ._checks import InputError, check_key, check_positive_int
from .epoch import batch_indices
from .gpt import batched_predict_gpt, bits_per_char
from .i18n import _
from .optim import Optimizer, apply_updates
from .params import Params
from .text_data import TextDataset, windows
from .train import History

__all__ = ["evaluate_gpt", "fit_gpt", "format_gpt_epoch"]

EVAL_BATCH = 64  # validation windows per forward pass: bounds the memory of evaluation


def _loss_and_accuracy(params: Params, x: jax.Array, y: jax.Array
                       ) -> tuple[jax.Array, jax.Array]:
    """``(mean nats, accuracy)`` of windows ``x, y: (B, T)``, from one forward pass."""
    log_probs = batched_predict_gpt(params, x)  # (B, T, V)
    nats = -jnp.mean(jnp.take_along_axis(log_probs, y[..., None], axis=-1))
    return nats, jnp.mean(jnp.argmax(log_probs, axis=-1) == y)


@partial(jit, static_argnames=("context", "optimizer"), donate_argnums=0)
def _epoch(carry: tuple[Params, Any], ids: jax.Array, starts: jax.Array, context: int,
           optimizer: Optimizer) -> tuple[tuple[Params, Any], tuple[jax.Array, jax.Array]]:
    """One epoch: ``lax.scan`` over ``starts: (steps, B)``, one optimizer step per row."""
    def step(carry: tuple[Params, Any], batch: jax.Array) -> tuple[Any, Any]:
        params, state = carry
        x, y = windows(ids, batch, context)
        (nats, acc), grads = jax.value_and_grad(_loss_and_accuracy, has_aux=True)(params, x, y)
        updates, state = optimizer.update(grads, state, params)
        return (apply_updates(params, updates), state), (nats, acc)

    return lax.scan(step, carry, starts)


@partial(jit, static_argnames="context")
def evaluate_gpt(params: Params, ids: jax.Array, context: int) -> tuple[jax.Array, jax.Array]:
    """``(mean nats, accuracy)`` over the characters of ``ids: (n,)``, each scored once, jitted.

    Windows of ``context`` start every ``stride = context - context // 2`` characters; the
    first scores all its positions, every later one only its last ``stride``, so each scored
    character past the first ``context // 2`` has at least ``context // 2`` before it. The
    last ``(n - 1 - context) % stride`` characters are left out.
    """
    stride = context - context // 2
    if ids.shape[0] < context + 1:
        raise InputError(f"evaluate_gpt: {ids.shape[0]} ids hold no window of {context} "
                         f"characters and their next; use a smaller context.")
    count = (ids.shape[0] - 1 - context) // stride + 1
    x, y = windows(ids, jnp.arange(count) * stride, context)  # (count, T) each

    def one(xy: tuple[jax.Array, jax.Array]) -> tuple[jax.Array, jax.Array]:
        log_probs = batched_predict_gpt(params, xy[0][None])[0]  # (T, V)
        return (-jnp.take_along_axis(log_probs, xy[1][:, None], axis=-1)[:, 0],
                jnp.argmax(log_probs, axis=-1) == xy[1])

    nats, hits = lax.map(one, (x, y), batch_size=EVAL_BATCH)  # each (count, T)
    scored = (jnp.arange(context) >= context - stride) | (jnp.arange(count) == 0)[:, None]
    return (jnp.sum(nats, where=scored) / jnp.sum(scored),
            jnp.sum(hits, where=scored) / jnp.sum(scored))


def fit_gpt(params: Params, data: TextDataset, *, optimizer: Optimizer, key: jax.Array,
            epochs: int, steps_per_epoch: int, batch_size: int,
            verbose: bool = False) -> tuple[Params, History]:
    """Train a GPT on ``data``'s training text, measuring validation after every epoch.

    Args:
      params: from :func:`~nn_from_scratch.gpt.init_gpt_params`; not modified.
      data: a :class:`~nn_from_scratch.text_data.TextDataset`.
      optimizer: e.g. ``adamw(warmup_cosine_schedule(1e-3, 100, 2000))`` from ``optim.py``;
        a schedule counts steps over all the epochs.
      key: PRNG key; epoch ``e`` deals its windows with the ``e``-th split of it.
      epochs, steps_per_epoch: how long (an epoch here is a number of steps, not a pass).
      batch_size: windows per step; the window's length is the model's context.
      verbose: print one line per epoch (:func:`format_gpt_epoch`).

    Returns:
      ``(params, history)``: a :class:`~nn_from_scratch.train.History` whose losses are
      in nats (``bits_per_char`` converts) and ``optimizer_state`` the optimizer's last.
    """
    check_key(key)
    for value, name in ((epochs, "epochs"), (steps_per_epoch, "steps_per_epoch"),
                        (batch_size, "batch_size")):
        check_positive_int(value, name)
    context = params[0][1].shape[0]  # the position embedding's rows
    if data.tokenizer.vocab_size != params[-1][1].shape[0]:
        raise InputError(f"fit_gpt: the model has {params[-1][1].shape[0]} outputs but the "
                         f"text's tokenizer {data.tokenizer.vocab_size} tokens; make it with "
                         f"init_gpt_params(key, data.tokenizer.vocab_size).")
    n_starts = len(data.train_ids) - context  # a window and the character after it fit
    start = time.perf_counter()
    train_ids, val_ids = jax.device_put(data.train_ids), jax.device_put(data.val_ids)
    carry = (jax.tree.map(jnp.copy, params), optimizer.init(params))  # _epoch donates it
    starts = jnp.zeros((steps_per_epoch, batch_size), jnp.int32)
    run_epoch = _epoch.lower(carry, train_ids, starts, context, optimizer).compile()
    evaluate_gpt.lower(params, val_ids, context).compile()
    compile_time = time.perf_counter() - start
    record: dict[str, list[float]] = {name: [] for name in (
        "epoch_time", "train_loss", "train_accuracy", "val_loss", "val_accuracy")}
    for epoch in range(epochs):
        key, epoch_key = random.split(key)
        starts = batch_indices(epoch_key, n_starts, batch_size)[:steps_per_epoch]
        if starts.shape[0] < steps_per_epoch:
            raise InputError(f"fit_gpt: {steps_per_epoch} steps of {batch_size} windows need "
                             f"more distinct starts than the text's {n_starts}.")
        start = time.perf_counter()
        carry, (nats, acc) = jax.block_until_ready(run_epoch(carry, train_ids, starts))
        record["epoch_time"].append(time.perf_counter() - start)
        if not np.isfinite(np.asarray(nats)).all():
            raise InputError(f"fit_gpt: the loss became NaN or infinite in epoch {epoch + 1}; "
                             f"try a smaller learning rate or a longer warm-up.")
        val_nats, val_acc = evaluate_gpt(carry[0], val_ids, context)
        for name, value in (("train_loss", nats), ("train_accuracy", acc),
                            ("val_loss", val_nats), ("val_accuracy", val_acc)):
            record[name].append(float(jnp.mean(value)))
        history = History("scan", batch_size, steps_per_epoch, compile_time,
                          **{name: tuple(values) for name, values in record.items()},
                          train_metrics="during", optimizer_state=carry[1])
        if verbose:
            print(format_gpt_epoch(history, epoch), flush=True)
    return carry[0], history


def format_gpt_epoch(history: History, i: int) -> str:
    """One line for epoch ``i`` (0-based) of :func:`fit_gpt`'s history."""
    return _("epoch {epoch:3d}  {seconds:6.2f} s  train loss {loss:.4f} nats  validation "
             "{val:.4f} nats = {bits:.3f} bits/char, next-character accuracy {acc:.3f}").format(
                 epoch=i + 1, seconds=history.epoch_time[i], loss=history.train_loss[i],
                 val=history.val_loss[i], bits=float(bits_per_char(history.val_loss[i])),
                 acc=history.val_accuracy[i])
