"""Checkers for lesson 16, a tiny GPT: characters to ids and back, a bigram table of
log-probabilities from counts, the loss at every position with ``vmap``, causal self-attention,
sampling with a temperature and a split key, and one step of attention with a KV cache.

Every check draws its sizes as well as its values with :func:`._calls.generator` (vocabularies,
lengths, widths), the same in class and fresh for each grading, and tries the ranges where the
wrong way breaks: characters the vocabulary lacks, counts of zero, logits of several hundred (a
naive log-sum-exp overflows), scores of several hundred (a naive softmax does), a temperature of
0.05 on logits of 60 (naive probabilities overflow). The references are NumPy (float64),
written out here; the sampler is judged by the frequencies of thousands of draws, far from the
threshold on every seed.
An answer that calls the library's own version (the tokenizer, the n-gram table, the library's
attention, its sampler) is refused, however it is reached: every case is probed, with
``jax.numpy`` arrays (an answer that writes ``cache.at[...]`` first fails on a NumPy array
before it reaches the library), traced rather than run where it can be. The sizes are drawn
so that a size written as a number (a mask of 8 positions, a vocabulary of 10, 6,000 rows) is
wrong in some case on every seed, and so that no two sizes of case 0 coincide (a ``(T, T)`` returned
for ``(T, d_v)`` meets the shape check).
"""
from typing import Any

import numpy as np

from ..i18n import N_, _
from . import _fixtures
from ._calls import call, fast_call, generator, prng_key, scaled
from ._compare import as_array, expect_close, expect_own_code, expect_shape, reject_known_wrong
from ._core import Mistake, exercise
from ._hints import summary

LESSON = "16_tiny_gpt"
UNKNOWN = "\ufffd"  # what decode shows for id 0, as the library's Tokenizer does
GPT_MODULES = ("nn_from_scratch.text", "nn_from_scratch.data", "nn_from_scratch.ngram",
               "nn_from_scratch.gpt", "nn_from_scratch.generate", "nn_from_scratch.attention",
               "nn_from_scratch.losses")
POOL = "\n !'(),-.:;?0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyzéü"
OUTSIDE = "\tßλж€😀"  # characters no drawn vocabulary has
SAMPLES = 3000  # about this many draws per distribution in the sampling check
SURE_COUNT = 20  # a character expected this often is drawn at least once (miss: 2e-9)
FAR = 0.07  # largest total-variation distance of SAMPLES right draws (typically 0.02)


def _own_code(student_fn: Any, args: tuple[Any, ...], what: str,
              allowed: tuple[str, ...] = (), modules: tuple[str, ...] = GPT_MODULES) -> None:
    """A Mistake if ``student_fn(*args)`` calls a function of ``modules`` (the course's
    library; Optax's losses too where an exercise asks for a loss)."""
    expect_own_code(student_fn, args, what, modules, allowed=allowed,
                    calls=library_calls_on_jax, message=_(
                        "{what} calls {name}, ready-made code (the course's library, or "
                        "another): this exercise is written with jax.numpy and jax.nn alone"))


def library_calls_on_jax(fn: Any, args: tuple[Any, ...], allowed: tuple[str, ...] = (),
                         modules: tuple[str, ...] = GPT_MODULES) -> list[str]:
    """:func:`._fixtures.library_calls` of ``modules`` (:data:`GPT_MODULES`) for ``fn(*args)``,
    every NumPy array made a ``jax.numpy`` one, as the lesson passes them (``cache.at[...]`` fails
    on a NumPy array before the library is reached, where code that needs the numbers runs on
    them)."""
    import jax.numpy as jnp
    if any(isinstance(a, str) for a in args):  # 16.1: text, and ids as NumPy gives them
        return _fixtures.library_calls(fn, args, allowed, modules)
    jax_args = tuple(jnp.asarray(a) if isinstance(a, np.ndarray) else a for a in args)
    return _fixtures.library_calls(fn, jax_args, allowed, modules)


def _log_softmax(x: Any, axis: int = -1) -> np.ndarray:
    x = np.asarray(x, np.float64)
    top = x.max(axis=axis, keepdims=True)
    return x - top - np.log(np.exp(x - top).sum(axis=axis, keepdims=True))


def _sizes(n: int, low: int, high: int, count: int) -> list[int]:
    """``count`` distinct sizes in ``[low, high)``, drawn: no two cases share a size."""
    return [int(s) for s in generator(n).choice(np.arange(low, high), count, replace=False)]


def _spread(n: int, small: tuple[int, int], large: tuple[int, int], count: int,
            avoid: tuple[int, ...] = ()) -> list[int]:
    """``count`` distinct sizes, the first from ``small``, the second from ``large`` (so that a
    size written as a number is wrong in one case on every seed), the rest from either; none
    in ``avoid`` (case 0's other sizes) for the first."""
    source = generator(n)
    first = [s for s in range(*small) if s not in avoid]
    sizes = [int(source.choice(first)), int(source.integers(*large))]
    rest = [s for s in range(small[0], large[1]) if s not in sizes]
    return sizes + [int(s) for s in source.choice(rest, count - 2, replace=False)]


# 16.1 ---------------------------------------------------------------------------------------

def _vocabulary_and_text(n: int, size: int) -> tuple[str, str]:
    """A sorted vocabulary of ``size`` characters and a text of them with 3 it lacks."""
    source = generator(n)
    chars = "".join(sorted(source.choice(list(POOL), size, replace=False)))
    text = [chars[i] for i in source.integers(0, size, int(source.integers(15, 50)))]
    for spot in source.choice(len(text), 3, replace=False):
        text[spot] = OUTSIDE[int(source.integers(len(OUTSIDE)))]
    return chars, "".join(text)


@exercise(LESSON, 1, "encode and decode")
def encode_decode(student_encode: Any, student_decode: Any) -> str:
    for number, size in enumerate(_sizes(160, 6, 40, 3)):
        chars, text = _vocabulary_and_text(161 + number, size)
        want = np.array([chars.index(c) + 1 if c in chars else 0 for c in text])
        what = _("encode(text, chars) for a text of {length} characters and a vocabulary of "
                 "{size}").format(length=len(text), size=size)
        _own_code(student_encode, (text, chars), what)
        got = call(student_encode, text, chars, what=what, hints={
            ("KeyError", "substring not found", "not in"): _(
                "{what} failed on a character the vocabulary lacks: such a character gets id 0 "
                "(for example lookup.get(c, 0))").format(what=what)})
        try:
            ids = np.asarray(got)
            whole = ids.ndim == 1 and (ids.size == 0 or np.all(ids == np.round(ids)))
        except (TypeError, ValueError):
            whole = False
        if not whole:
            raise Mistake(_("{what} returned {got}; expected ONE integer id per character, "
                            "an array of shape ({length},)").format(
                what=what, got=summary(got), length=len(text)))
        ids = expect_shape(ids, want.shape, what)
        if not np.issubdtype(ids.dtype, np.integer):
            raise Mistake(_("{what} returned ids of dtype {dtype}; ids are integers, int32 "
                            "(np.array(..., dtype=np.int32)): they index tables, embed[ids], "
                            "and a float cannot").format(what=what, dtype=ids.dtype))
        known = want > 0
        reject_known_wrong(ids, {
            N_("the ids start at 0; id 0 is kept for characters the vocabulary lacks, so "
               "chars[i] is id i + 1"): np.where(known, want - 1, ids),
            N_("ord(c) is the character's Unicode number, not its place in the vocabulary: "
               "chars[i] is id i + 1"): np.array([ord(c) for c in text]),
        }, rtol=0, atol=0)
        if not np.array_equal(ids[known], want[known]):
            raise Mistake(_("{what} gives the wrong id to a character of the vocabulary: "
                            "chars[i] is id i + 1").format(what=what))
        if not np.array_equal(ids, want):
            raise Mistake(_("{what} gives {got} to a character the vocabulary lacks; it gets "
                            "id 0").format(what=what, got=sorted(set(ids[~known].tolist()))))

        back = "".join(UNKNOWN if i == 0 else chars[i - 1] for i in want)
        what = _("decode(ids, chars) for {length} ids and a vocabulary of {size}").format(
            length=len(want), size=size)
        _own_code(student_decode, (want.astype(np.int32), chars), what)
        got = call(student_decode, want.astype(np.int32), chars, what=what, hints={
            "out of range": _("{what} failed: ids run from 0 (unknown) to len(chars); id i + 1 "
                              "is chars[i]").format(what=what)})
        if not isinstance(got, str):
            raise Mistake(_("{what} returned {got}; expected one str: join the characters, "
                            "''.join(...)").format(what=what, got=summary(got)))
        if len(got) != len(back):
            raise Mistake(_("{what} returned {got} characters for {want} ids: every id gives "
                            "one character, id 0 the placeholder '\\ufffd'").format(
                what=what, got=len(got), want=len(back)))
        if all(g == w for g, w, k in zip(got, back, known) if k) and got != back:
            raise Mistake(_("{what}: id 0 must come back as the placeholder '\\ufffd' (the "
                            "Unicode replacement character), so that an unknown character "
                            "stays visible").format(what=what))
        if got != back:
            raise Mistake(_("{what} gives the wrong characters: id i + 1 is chars[i]").format(
                what=what))
    return N_("three vocabularies and texts with characters they lack: ids i + 1, unknown 0, "
              "and back")


# 16.2 ---------------------------------------------------------------------------------------

@exercise(LESSON, 2, "bigram counts to log-probabilities")
def bigram_log_probs(student_fn: Any) -> str:
    alphas = scaled((1.0, 0.1, 0.5), 171)
    for number, (size, alpha) in enumerate(zip(_sizes(170, 3, 12, 3), alphas)):
        source = generator(172 + number)
        counts = source.poisson(source.uniform(0, 6, size=(size, size))).astype(np.int32)
        counts[int(source.integers(size))] = 0  # a character nothing ever followed
        counts[:, int(source.integers(size))] = 0  # one that never followed anything
        what = _("bigram_log_probs(counts, {alpha:.3g}) for counts of shape {shape}").format(
            alpha=alpha, shape=counts.shape)
        _own_code(student_fn, (counts, alpha), what)
        got = expect_shape(fast_call(student_fn, counts, alpha, what=what), counts.shape, what)
        c = counts.astype(np.float64)
        row = c.sum(axis=1, keepdims=True)
        want = np.log(c + alpha) - np.log(row + alpha * size)
        if not np.isfinite(got).all():
            raise Mistake(_("{what} has -inf or NaN: the log of a count of 0. Add alpha to "
                            "EVERY count first (smoothing), then divide each row by its "
                            "sum").format(what=what))
        reject_known_wrong(got, {
            N_("each ROW is one character's next-character distribution: divide counts + "
               "alpha by its row's sum (axis=1), not its column's"):
                np.log(c + alpha) - np.log(c.sum(axis=0, keepdims=True) + alpha * size),
            N_("returned probabilities: the table holds their logarithms, jnp.log(...)"):
                np.exp(want),
            N_("divide by the row's sum of the SMOOTHED counts, row sum + alpha * V: each row "
               "must sum to 1"): np.log(c + alpha) - np.log(np.maximum(row, 1)),
            N_("the denominator adds alpha once per row; it adds alpha for each of the V "
               "characters: sum over the row of (counts + alpha)"):
                np.log(c + alpha) - np.log(row + alpha),
            N_("divided by the count of every pair; each row is divided by its own sum"):
                np.log(c + alpha) - np.log(np.sum(c + alpha)),
            N_("the log is base 2; use the natural log (nats), jnp.log"): want / np.log(2),
        }, rtol=1e-4, atol=1e-5, want=want)
        expect_close(got, want, what, hint=N_(
            "log((counts + alpha) / (counts + alpha).sum(axis=1, keepdims=True))"))
    return N_("three vocabularies, with rows and columns of zeros: smoothed, each row a "
              "distribution, in nats")


# 16.3 ---------------------------------------------------------------------------------------

@exercise(LESSON, 3, "the loss at every position (vmap)")
def position_losses(student_fn: Any) -> str:
    batches, lengths = _sizes(180, 2, 6, 3), _sizes(181, 3, 10, 3)
    vocabs = _spread(182, (5, 11), (11, 24), 3, avoid=(batches[0], lengths[0]))
    for number, shape in enumerate(zip(batches, lengths, vocabs)):
        source = generator(183 + number)
        logits = 2 * source.normal(size=shape)
        targets = source.integers(0, shape[2], size=shape[:2])
        if number == 2:  # logits of hundreds, and targets 200 below the best: exp overflows
            logits = 300 + 60 * source.normal(size=shape)
            logits[0, 0, targets[0, 0]] = logits[0, 0].max() - 200
        logits = logits.astype(np.float32)
        what = _("position_losses(logits, targets) for logits {shape} (batch, positions, "
                 "vocabulary)").format(shape=shape)
        _own_code(student_fn, (logits, targets), what, modules=(*GPT_MODULES, "optax"))
        got = fast_call(student_fn, logits, targets.astype(np.int32), what=what, hints={
            ("ncompatible shapes", "cannot reshape", "broadcast"): _(
                "{what} failed on its shapes: read B, T and V from logits.shape (a size "
                "written as a number fits one vocabulary only)").format(what=what)})
        lp = _log_softmax(logits)
        want = -np.take_along_axis(lp, targets[..., None], axis=-1)[..., 0]
        if np.shape(got) == ():
            raise Mistake(_("{what} returned one number; return the loss at EVERY position, "
                            "shape {want} (the lesson takes the mean afterwards)").format(
                what=what, want=want.shape))
        if np.ndim(got) == 2 and np.shape(got)[1] == shape[1] - 1:
            raise Mistake(_("the targets are already the next characters (y is x shifted by "
                            "one): position t's loss uses targets[t], not targets[t + 1]"))
        if np.ndim(got) != 2:
            raise Mistake(_("{what} returned shape {got}; expected {want}: vmap twice, over "
                            "the sequences and over the positions, a function of ONE position "
                            "(logits (V,), target) -> a number").format(
                what=what, got=np.shape(got), want=want.shape))
        got = expect_shape(got, want.shape, what)
        if not np.isfinite(got).all():
            raise Mistake(_("{what} has inf or NaN for logits of about 300: exp overflows "
                            "(or a probability of 0 has log -inf). Stay in log space: "
                            "logsumexp(logits) - logits[target], with the largest logit "
                            "subtracted first (jax.nn.logsumexp does)").format(what=what))
        eps = np.exp(-float(np.max(got)))  # a floor eps on p caps the loss at -log(eps)
        if not np.allclose(got, want, rtol=1e-4, atol=1e-3) and any(
                np.allclose(got, capped, rtol=1e-3, atol=1e-2) for capped in (
                    np.minimum(want, -np.log(eps)), -np.log(np.exp(-want) + eps))):
            raise Mistake(_("{what} caps the loss at {cap:.3g}: a probability clipped (or an "
                            "eps added) before the log, so a target far below the best costs "
                            "-log(eps), not its true loss of up to {want:.0f} nats. Stay in "
                            "log space: logsumexp(logits) - logits[target]").format(
                what=what, cap=float(np.max(got)), want=float(want.max())))
        picked = np.take_along_axis(logits.astype(np.float64), targets[..., None], -1)[..., 0]
        rolled = -np.take_along_axis(lp, np.roll(targets, -1, axis=1)[..., None], -1)[..., 0]
        reject_known_wrong(got, {
            N_("the targets are already the next characters (y is x shifted by one): position "
               "t's loss uses targets[t], not targets[t + 1]"): rolled,
            N_("the loss is MINUS the log-probability of the target: it is >= 0, and 0 only "
               "for a sure right answer"): -want,
            N_("the loss needs the log-softmax: logsumexp(logits) - logits[target], not "
               "-logits[target] alone"): -picked,
            N_("the log is base 2; the loss is in nats (natural log): bits per character come "
               "later, dividing by log(2)"): want / np.log(2),
            N_("the loss takes the TARGET's log-probability, not the most likely "
               "character's"): -lp.max(axis=-1),
        }, rtol=1e-4, atol=1e-4, want=want)
        expect_close(got, want, what, atol=1e-3, hint=N_(
            "-log_softmax(logits)[target] at every position: logsumexp(logits) - "
            "logits[target]"))
    return N_("three batches of sequences, logits of about 300 among them: -log p(target) at "
              "every position, no overflow")


# 16.4 ---------------------------------------------------------------------------------------

def _causal(x: Any, w_q: Any, w_k: Any, w_v: Any, scale: float | None = None,
            mask: str = "causal", axis: int = -1) -> np.ndarray:
    """Causal self-attention in float64, and its typical slips (``mask``: "causal", "none",
    "future", "after", "zero"; ``scale``; the softmax's ``axis``)."""
    x, w_q, w_k, w_v = (np.asarray(a, np.float64) for a in (x, w_q, w_k, w_v))
    q, k, v = x @ w_q.T, x @ w_k.T, x @ w_v.T
    t = len(x)
    scores = q @ k.T * (1 / np.sqrt(q.shape[1]) if scale is None else scale)
    below = np.tril(np.ones((t, t), bool))
    if mask == "zero":
        return np.exp(_log_softmax(np.where(below, scores, 0.0), axis)) @ v
    if mask == "after":
        return np.exp(_log_softmax(scores, axis)) * below @ v
    seen = {"causal": below, "none": np.ones((t, t), bool), "future": below.T}[mask]
    return np.exp(_log_softmax(np.where(seen, scores, -np.inf), axis)) @ v


@exercise(LESSON, 4, "causal self-attention")
def causal_attention(student_fn: Any) -> str:
    widths, heads, values = _sizes(191, 3, 9, 3), _sizes(192, 2, 7, 3), _sizes(193, 2, 7, 3)
    lengths = _spread(190, (4, 9), (9, 17), 3, avoid=(widths[0], heads[0], values[0]))
    for number, (t, d, d_k, d_v) in enumerate(zip(lengths, widths, heads, values)):
        source = generator(194 + number)
        big = 12.0 if number == 2 else 1.0  # scores of hundreds: a naive softmax overflows
        x = (big * source.normal(size=(t, d))).astype(np.float32)
        w_q, w_k = (source.normal(size=(d_k, d)).astype(np.float32) for _unused in range(2))
        w_v = source.normal(size=(d_v, d)).astype(np.float32)
        what = _("causal_attention(x, w_q, w_k, w_v) for x {x}, w_q and w_k {w}, w_v "
                 "{v}").format(x=x.shape, w=w_q.shape, v=w_v.shape)
        _own_code(student_fn, (x, w_q, w_k, w_v), what, ("softmax",))
        got = fast_call(student_fn, x, w_q, w_k, w_v, what=what, hints={
            ("dot_general requires", "matmul"): _(
                "{what} failed: with the course's layout q = x @ w_q.T, k = x @ w_k.T, "
                "v = x @ w_v.T; the scores q @ k.T are (T, T)").format(what=what),
            ("ncompatible shapes", "broadcast"): _(
                "{what} failed on its shapes: the mask must be (T, T) for T = x.shape[0], "
                "here {t} (a size written as a number fits one length only), and the scores "
                "q @ k.T with q = x @ w_q.T, k = x @ w_k.T").format(what=what, t=t)})
        want = _causal(x, w_q, w_k, w_v)
        got = expect_shape(got, want.shape, what)
        if np.isnan(got[0]).any() and np.isfinite(got[1:]).all():
            raise Mistake(_("query 0 sees nothing and gets NaN: position i sees positions "
                            "0..i, ITSELF included (j <= i, jnp.tril with its diagonal)"))
        if not np.isfinite(got).all():
            raise Mistake(_("{what} has inf or NaN for scores of several hundred: subtract "
                            "each row's largest score before exp (jax.nn.softmax does), and "
                            "mask with -inf BEFORE the softmax").format(what=what))
        reject_known_wrong(got, {
            N_("the model sees the future: no mask. Query i may see positions 0..i only: "
               "scores where j > i become -inf before the softmax"):
                _causal(x, w_q, w_k, w_v, mask="none"),
            N_("the mask is the wrong way round: it shows query i the positions AFTER it. "
               "Keep j <= i (the lower triangle, jnp.tril)"): _causal(x, w_q, w_k, w_v,
                                                                      mask="future"),
            N_("the mask came after the softmax: the weights left no longer sum to 1. Put "
               "-inf into the hidden SCORES, then take the softmax"):
                _causal(x, w_q, w_k, w_v, mask="after"),
            N_("hidden scores set to a number (0, -100) still count when the real scores are "
               "far below it, as scores of several hundred are (exp(0) = 1): set them to -inf"):
                _causal(x, w_q, w_k, w_v, mask="zero"),
            N_("the scores are not scaled: divide q @ k.T by sqrt(d_k), the size of a query"):
                _causal(x, w_q, w_k, w_v, scale=1.0),
            N_("the scale is sqrt(d_k), the size of a query and a key, not sqrt(d), the width "
               "of x"): _causal(x, w_q, w_k, w_v, scale=1 / np.sqrt(d)),
            N_("the softmax ran down the columns: each ROW of the scores is one query's and "
               "must sum to 1, axis=-1"): _causal(x, w_q, w_k, w_v, axis=0),
        }, rtol=1e-4, atol=1e-4, want=want)
        expect_close(got, want, what, atol=1e-4, hint=N_(
            "softmax(where(j <= i, q @ k.T / sqrt(d_k), -inf), axis=-1) @ v"))
    return N_("three sequences, scores of hundreds among them: each position sees itself and "
              "the past, never the future")


# 16.5 ---------------------------------------------------------------------------------------

def _distance(ids: np.ndarray, groups: np.ndarray, probs: np.ndarray) -> float:
    """The largest total-variation distance between each group's draws and its distribution."""
    return max(0.5 * float(np.abs(np.bincount(ids[groups == g], minlength=len(p))[:len(p)]
                                  / np.sum(groups == g) - p).sum())
               for g, p in enumerate(probs))


@exercise(LESSON, 5, "sampling with a temperature and a split key")
def sample_chars(student_fn: Any) -> str:
    temperatures = (*scaled((0.4, 2.5), 201), 0.05)
    for number, (size, temperature) in enumerate(zip(_spread(200, (4, 8), (8, 16), 3),
                                                     temperatures)):
        source = generator(202 + number)
        spread = 1.0 if number == 1 else 3.0  # case 1: every character likely enough to be seen
        logits = spread * np.sort(source.normal(size=(3, size)))[:, source.permutation(size)]
        log_probs = _log_softmax(logits)
        # at 0.05, logits of about 60 become about 1200: their exp overflows
        shift = 60.0 if number == 2 else 0.0
        per_row = SAMPLES + int(source.integers(1, 400))  # a number of rows no answer can know
        groups = source.permutation(np.repeat(np.arange(3), per_row))
        rows = (log_probs + shift)[groups].astype(np.float32)  # (3 * SAMPLES, V)
        what = _("sample_chars(key, logits, {t:.3g}) for logits {shape}").format(
            t=temperature, shape=rows.shape)
        key = prng_key(203 + number)
        _own_code(student_fn, (key, rows[:2], temperature), what)
        got = fast_call(student_fn, key, rows, temperature, what=what, hints={
            ("inconsistent sizes",): _(
                "{what} failed: as many keys as rows, split into logits.shape[0] (a number of "
                "rows written as a number fits one call only)").format(what=what)})
        ids = expect_shape(got, (len(rows),), what)
        if not np.issubdtype(ids.dtype, np.integer) or ids.min() < 0 or ids.max() >= size:
            raise Mistake(_("{what} returned {got}; expected one character id (0 to {top}) per "
                            "row: jax.random.categorical(key, logits / temperature)").format(
                what=what, got=summary(got), top=size - 1))
        ids = ids.astype(np.int64)
        want = np.exp(_log_softmax(log_probs / temperature))
        best = log_probs.argmax(axis=1)[groups]
        counts = np.stack([np.bincount(ids[groups == g], minlength=size) for g in range(3)])
        missing = np.argwhere((counts == 0) & (want * per_row >= SURE_COUNT))  # (group, id)
        if number < 2 and want.max(axis=1).min() < 0.99 and all(
                len(set(ids[groups == g].tolist())) == 1 for g in range(3)):
            flat = [as_array(fast_call(student_fn, prng_key(205 + i), rows, 5.0, what=what))
                    for i in range(3)]  # at 5.0 a reused key rarely lands on the best thrice
            if all(np.array_equal(f, best) for f in (ids, *flat)):
                raise Mistake(_("always the most likely character (argmax): that is greedy "
                                "decoding, not sampling. Draw with jax.random.categorical(key, "
                                "logits / temperature)"))
            raise Mistake(_("every row with the same distribution drew the same character: "
                            "one key was used for every row. Split it, one key per row "
                            "(jax.random.split(key, n)), or draw all rows in one call"))
        if number == 0:
            again = as_array(fast_call(student_fn, key, rows, temperature, what=what))
            if not np.array_equal(again, ids):
                raise Mistake(_("the same key gave other characters: draw every random number "
                                "from the key you are given (no np.random, no key of your "
                                "own), so that a run can be repeated"))
            other = as_array(fast_call(student_fn, prng_key(209), rows, temperature,
                                         what=what))
            if np.array_equal(other, ids):
                raise Mistake(_("another key gave the very same characters: sample with the key "
                                "you are given"))
        top_k = _("{what}: character {c} of row kind {g} has probability {p:.3f} and was never "
                  "drawn in {n} draws. Draw from the whole softmax(logits / temperature): no "
                  "top-k here, no character left out").format(
            what=what, c=int(missing[0][1]) if len(missing) else 0,
            g=int(missing[0][0]) if len(missing) else 0,
            p=float(want[tuple(missing[0])]) if len(missing) else 0.0, n=per_row)
        if _distance(ids, groups, want) <= FAR:
            if len(missing):
                raise Mistake(top_k)
            continue
        for hint, wrong in (
                (N_("the temperature multiplies the logits; it divides them: logits / "
                    "temperature (below 1 sharper, above 1 flatter)"),
                 log_probs * temperature),
                (N_("the temperature was not used: draw from logits / temperature"),
                 log_probs),
                (N_("jax.random.categorical takes LOG-probabilities (logits), not "
                    "probabilities: hand it logits / temperature itself"),
                 np.exp(log_probs / temperature)),
                (N_("jax.random.categorical takes LOG-probabilities (logits), not "
                    "probabilities: hand it logits / temperature itself"),
                 np.exp(_log_softmax(log_probs / temperature)))):
            near = np.exp(_log_softmax(wrong))
            if _distance(ids, groups, near) <= FAR < 0.5 * np.abs(near - want).sum(axis=1).max():
                raise Mistake(hint)
        if number == 2:
            raise Mistake(_("{what} draws from the wrong distribution at temperature 0.05: "
                            "logits / 0.05 reach about 1200 and their exp overflows. Stay in "
                            "log space: jax.random.categorical(key, logits / "
                            "temperature)").format(what=what))
        if len(missing):
            raise Mistake(top_k)
        raise Mistake(_("{what}: the characters drawn do not follow softmax(logits / "
                        "temperature) (total-variation distance {far:.2f} over {n} draws per "
                        "row)").format(what=what, far=_distance(ids, groups, want), n=SAMPLES))
    return N_("temperatures 0.4, 2.5 and 0.05, thousands of draws each: the frequencies of "
              "softmax(logits / T), no character left out, a key of their own per row, the "
              "same for the same key")


# 16.6 ---------------------------------------------------------------------------------------

def _step(q: Any, keys: np.ndarray, values: np.ndarray, position: int, seen: str = "causal",
          scale: float | None = None, hidden: float = -np.inf) -> np.ndarray:
    """Attention of ONE query over a cache whose rows ``0..position`` are filled, in float64
    (``seen``: "causal", "all" the cache's rows, "before" the position alone, "next" the row
    after it too; ``hidden``: the score given to the rows not seen)."""
    q = np.asarray(q, np.float64)
    scores = keys @ q * (1 / np.sqrt(len(q)) if scale is None else scale)
    rows = np.arange(len(keys))
    mask = {"causal": rows <= position, "all": rows >= 0, "before": rows < position,
            "next": rows <= position + 1}[seen]
    if not mask.any():
        return np.full(values.shape[1], np.nan)
    return np.exp(_log_softmax(np.where(mask, scores, hidden))) @ values


@exercise(LESSON, 6, "one KV-cache step")
def cached_step(student_fn: Any) -> str:
    # case 0: more than 8 positions, ordinary scores; case 1: scores of hundreds (a naive
    # softmax overflows); case 2: every real score about -300, far below a finite mask
    lengths = (int(generator(210).integers(9, 15)), *_sizes(214, 5, 10, 2))
    heads, values = _sizes(211, 2, 7, 3), _sizes(212, 2, 7, 3)
    for number, (t_max, d_k, d_v) in enumerate(zip(lengths, heads, values)):
        source = generator(213 + number if number < 2 else 215)
        big = 12.0 if number == 1 else 1.0
        q, k = (big * source.normal(size=(t_max, d_k))).astype(np.float32), \
            (big * source.normal(size=(t_max, d_k))).astype(np.float32)
        if number == 2:  # q . k / sqrt(d_k) between about -330 and -270 for every key
            along = source.normal(size=d_k)
            along /= np.linalg.norm(along)
            k = (20 * source.uniform(0.9, 1.1, size=(t_max, 1)) * along
                 + 0.1 * source.normal(size=(t_max, d_k))).astype(np.float32)
            q = np.tile(-15 * np.sqrt(d_k) * along, (t_max, 1)).astype(np.float32)
        v = source.normal(size=(t_max, d_v)).astype(np.float32)
        # what a cache holds before a step: rows 0..p-1 written, then stale numbers
        stale_k = (5 * source.normal(size=(t_max, d_k))).astype(np.float32)
        stale_v = (5 * source.normal(size=(t_max, d_v))).astype(np.float32)
        for position in range(t_max):
            cache_k = np.concatenate([k[:position], stale_k[position:]])
            cache_v = np.concatenate([v[:position], stale_v[position:]])
            what = _("cached_step(q, k, v, cache_k, cache_v, {p}) with caches of {t} "
                     "positions, keys of {d_k}, values of {d_v}").format(
                p=position, t=t_max, d_k=d_k, d_v=d_v)
            args = (q[position], k[position], v[position], cache_k, cache_v, position)
            if position == 0:
                _own_code(student_fn, args, what, ("softmax",))
            outside_jit = _("{what} works only outside jit: a slice cache[:position + 1] has a "
                            "length that changes with position, so the step would compile "
                            "again for every character. Keep the cache whole and mask the rows "
                            "after position (jnp.arange(T) <= position)").format(what=what)
            out = fast_call(student_fn, *args, what=what, needs_jit=outside_jit,
                            # JAX 0.10 says "must be static integers", 0.12 "must have static"
                            hints={"must be static": outside_jit,
                                   "must have static": outside_jit,
                                   # run as written after jit refused it, on NumPy caches
                                   "has no attribute 'at'": outside_jit})
            if not (isinstance(out, (tuple, list)) and len(out) == 3):
                raise Mistake(_("{what} should return (output, cache_k, cache_v); got "
                                "{got}").format(what=what, got=summary(out)))
            new_k = expect_shape(out[1], cache_k.shape, _("the cache_k it returns"))
            new_v = expect_shape(out[2], cache_v.shape, _("the cache_v it returns"))
            filled_k = np.concatenate([k[:position + 1], stale_k[position + 1:]])
            filled_v = np.concatenate([v[:position + 1], stale_v[position + 1:]])
            if np.array_equal(new_k, cache_k) and np.array_equal(new_v, cache_v):
                raise Mistake(_("the caches came back unchanged: write the new key and value "
                                "into row `position` (cache.at[position].set(k)) and return "
                                "the new caches, or the next step will not see this "
                                "character"))
            if not (np.array_equal(new_k, filled_k) and np.array_equal(new_v, filled_v)):
                raise Mistake(_("{what}: the caches returned should be the old ones with row "
                                "{p} set to the new key and value, the rest unchanged").format(
                    what=what, p=position))
            got = expect_shape(out[0], (d_v,), what)
            want = _step(q[position], filled_k, filled_v, position)
            if not np.isfinite(got).all() and number == 0:  # ordinary scores: no overflow
                raise Mistake(_("{what} gave {got}: position {p} sees itself too (rows 0 to "
                                "{p}, <=); with every row hidden, the softmax divides 0 by "
                                "0").format(what=what, got=np.round(got, 3).tolist(),
                                            p=position))
            if not np.isfinite(got).all():
                raise Mistake(_("{what} gave {got}: exp of scores of hundreds overflows, "
                                "and of scores of -300 underflows to 0 (then 0 / 0), unless "
                                "the largest SEEN score is subtracted first. Mask before the "
                                "softmax, -inf for the rows after position (rows 0 to {p}, "
                                "<=), and let jax.nn.softmax subtract the largest").format(
                    what=what, got=np.round(got, 3).tolist(), p=position))
            stale = filled_v[position + 1:].astype(np.float64)
            finite = [_step(q[position], filled_k, filled_v, position, hidden=c)
                      for c in (-10.0, -30.0, -50.0, -100.0, -1e3, -1e4)]
            if len(stale) and not np.allclose(got, want, atol=1e-3) and any(
                    np.allclose(got, f, atol=1e-3) for f in finite) or number == 2 and len(
                    stale) and np.allclose(got, stale.mean(axis=0), atol=1e-3):
                raise Mistake(_("{what}: the rows after position got all the weight. They are "
                                "hidden with a finite score, and every real score here is "
                                "about -300, below it: mask them with -inf "
                                "(jnp.where(seen, scores, -jnp.inf))").format(what=what))
            itself = N_("the step leaves out the new character itself: rows 0 to position, "
                        "position included (<=)")
            if position == 0 and np.allclose(got, filled_v.astype(np.float64).mean(axis=0),
                                             atol=1e-4) and not np.allclose(got, want, atol=1e-4):
                raise Mistake(_(itself))  # < position hides every row alike: a plain mean
            reject_known_wrong(got, {
                N_("the step also attends to row position + 1, not written yet (a stale "
                   "row): rows 0 to position (<= position, not <= position + 1)"):
                    _step(q[position], filled_k, filled_v, position, seen="next"),
                N_("the step attends to every row of the cache, stale ones included: mask "
                   "the rows after position with -inf (jnp.arange(T) <= position)"):
                    _step(q[position], filled_k, filled_v, position, seen="all"),
                itself: _step(q[position], filled_k, filled_v, position, seen="before"),
                N_("the step attends with the OLD caches: write the new key and value first, "
                   "then attend"): _step(q[position], cache_k, cache_v, position),
                N_("the scores are not scaled: divide by sqrt(d_k), as the full model does"):
                    _step(q[position], filled_k, filled_v, position, scale=1.0),
            }, rtol=1e-4, atol=1e-4, want=want)
            expect_close(got, want, _("the output of {what}").format(what=what), atol=1e-4,
                         hint=N_("the full causal attention's row `position`: write row "
                                 "`position` of both caches, then softmax over rows 0.."
                                 "position of cache_k @ q / sqrt(d_k), times cache_v"))
    return N_("every position of three caches with stale rows, scores of hundreds and of "
              "-300 among them: each step equals the full recomputation's row, under jit")
