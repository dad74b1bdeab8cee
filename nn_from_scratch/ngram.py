"""Counting instead of learning: n-gram models of text, the baselines a GPT has to beat.

An n-gram model predicts the next character from the ``n - 1`` before it by counting, in the
training text, how often each character followed that context. Add-``alpha`` smoothing adds
``alpha`` to every count, so a character never seen after a context keeps a small probability
instead of zero (a zero would make the validation loss infinite)::

    p(c | context) = (count(context, c) + alpha) / (count(context) + alpha * V)

``n = 1`` (unigram) ignores the context: the characters' frequencies. ``n = 2`` (bigram) is
the model that lesson 16 also trains as one ``(V, V)`` matrix of logits: trained well, its loss
comes down to the counts' (:func:`ngram_log_probs` with ``n = 2``). On Python 3.11's
documentation the best add-alpha model is the 4-gram (:func:`best_ngram`, each n at its best
alpha: 2.13 bits per character, against the unigram's 4.67, the bigram's 3.34, the 5-gram's
2.21 and the 6-gram's 2.49). Not because most longer contexts are rare (at n = 5, 7 % of the
validation contexts never occur in the training text), but because add-alpha has no fallback:
after a context seen twice, its estimate is mostly noise.

*Back-off* gives it one (:func:`backoff_bits_per_char`): the n-gram's counts are added to
``k`` pseudo-counts spread as the (n-1)-gram predicts, recursively down to the uniform
distribution::

    p_n(c | h) = (count(h, c) + k * p_{n-1}(c | h minus its oldest character)) / (count(h) + k)

A context seen often is trusted; a rare one leans on its shorter self. With ``k`` chosen on
the validation split (:func:`best_backoff`), every longer context tried helps: the 4-gram 2.04,
the 6-gram 1.83, the 8-gram 1.80 bits per character, level with the command line's GPT
(1.83-1.86). Kneser-Ney smoothing, the classic refinement, does better still.

Losses are in the GPT's units: mean cross-entropy in nats per character, and bits per
character (``nats / ln 2``), on the same validation ids.
"""
import numpy as np

from ._checks import InputError, check_positive_int

__all__ = ["ALPHAS", "BACKOFF_KS", "MAX_TABLE", "backoff_bits_per_char", "best_backoff",
           "best_ngram", "count_ngrams", "ngram_bits_per_char", "ngram_log_probs"]

MAX_TABLE = 10_000_000  # entries of a dense (V,) * n table: 80 MB of int64 (a V=104 trigram: 1.1M)
ALPHAS = (1.0, 0.1, 0.01, 0.001)  # the add-alpha smoothings best_ngram tries
BACKOFF_KS = (1.0, 3.0, 10.0, 30.0, 100.0)  # the back-off pseudo-counts best_backoff tries


def _check_ids(ids: np.ndarray, vocab_size: int, name: str) -> np.ndarray:
    ids = np.asarray(ids)
    if ids.ndim != 1 or not np.issubdtype(ids.dtype, np.integer):
        raise InputError(f"{name} must be ONE sequence of integer token ids (n,); got shape "
                         f"{ids.shape}, dtype {ids.dtype}. Encode the text with a Tokenizer.")
    if ids.size and (ids.min() < 0 or ids.max() >= vocab_size):
        raise InputError(f"{name} holds ids {int(ids.min())}..{int(ids.max())}, outside the "
                         f"vocabulary 0..{vocab_size - 1}: pass vocab_size=tokenizer.vocab_size.")
    return ids.astype(np.int64)


def _count_in(known: np.ndarray, asked: np.ndarray) -> np.ndarray:
    """How often each of the codes ``asked`` occurs among the codes ``known``."""
    known = np.sort(known)
    return np.searchsorted(known, asked, "right") - np.searchsorted(known, asked, "left")


def _check_splits(train_ids: np.ndarray, val_ids: np.ndarray, n: int, vocab_size: int,
                  name: str) -> tuple[np.ndarray, np.ndarray]:
    check_positive_int(n, "n")
    check_positive_int(vocab_size, "vocab_size")
    train = _check_ids(train_ids, vocab_size, "train_ids")
    val = _check_ids(val_ids, vocab_size, "val_ids")
    if len(train) < n or len(val) < n:
        raise InputError(f"{name}: both splits need at least n={n} ids; got "
                         f"{len(train)} and {len(val)}.")
    return train, val


def _codes(ids: np.ndarray, n: int, vocab_size: int) -> np.ndarray:
    """Each run of ``n`` ids as one integer in base ``V``: ``(len(ids) - n + 1,)`` int64."""
    if vocab_size ** n > np.iinfo(np.int64).max:
        raise InputError(f"n={n} with a vocabulary of {vocab_size}: a run of n ids does not fit "
                         f"in one 64-bit code ({vocab_size}^{n}); use a smaller n.")
    codes = np.zeros(len(ids) - n + 1, np.int64)
    for i in range(n):  # the oldest character is the most significant digit
        codes = codes * vocab_size + ids[i:len(ids) - n + 1 + i]
    return codes


def count_ngrams(ids: np.ndarray, n: int, vocab_size: int) -> np.ndarray:
    """How often each run of ``n`` characters occurs in ``ids``.

    Args:
      ids: ``(N,)`` int token ids.
      n: the run's length (1: unigram, 2: bigram, ...).
      vocab_size: ``V``.

    Returns:
      ``(V,) * n`` int64 counts: ``counts[a, b]`` is how often ``b`` followed ``a`` (n = 2).
      Dense, so at most :data:`MAX_TABLE` entries; longer n-grams are scored by
      :func:`ngram_bits_per_char` without a table.
    """
    check_positive_int(n, "n")
    check_positive_int(vocab_size, "vocab_size")
    ids = _check_ids(ids, vocab_size, "ids")
    if vocab_size ** n > MAX_TABLE:
        raise InputError(f"count_ngrams: a dense table of {vocab_size}^{n} = "
                         f"{vocab_size ** n:,} counts is too big (over {MAX_TABLE:,}); use a "
                         f"smaller n, or ngram_bits_per_char, which counts only what occurs.")
    if len(ids) < n:
        raise InputError(f"count_ngrams: {len(ids)} ids hold no run of {n}.")
    counts = np.bincount(_codes(ids, n, vocab_size), minlength=vocab_size ** n)
    return counts.reshape((vocab_size,) * n)


def ngram_log_probs(counts: np.ndarray, alpha: float = 1.0) -> np.ndarray:
    """Add-``alpha`` smoothed ``log p(last | the others)`` from :func:`count_ngrams`' table.

    Returns:
      float32, the shape of ``counts``; along the last axis each row's probabilities sum to 1.
    """
    if not alpha > 0:
        raise InputError(f"alpha must be above 0 (add-alpha smoothing; 0 would give unseen "
                         f"characters probability 0 and an infinite loss); got {alpha}.")
    smoothed = np.asarray(counts, np.float64) + alpha
    return np.log(smoothed / smoothed.sum(axis=-1, keepdims=True)).astype(np.float32)


def ngram_bits_per_char(train_ids: np.ndarray, val_ids: np.ndarray, n: int, vocab_size: int,
                        alpha: float = 1.0) -> float:
    """Bits per character of the add-``alpha`` n-gram counted on ``train_ids``, on ``val_ids``.

    Every validation character from the ``n``-th on is scored, given the ``n - 1`` before it.
    Only the n-grams that occur are counted (sorted codes and ``np.searchsorted``), so any
    ``n`` fits in memory.

    Args:
      train_ids, val_ids: ``(N,)`` int token ids of the two splits.
      n: the n-gram's length (>= 1).
      vocab_size: ``V``.
      alpha: the smoothing, > 0.

    Returns:
      the mean of ``-log2 p(c | context)`` over the validation characters.
    """
    if not alpha > 0:
        raise InputError(f"alpha must be above 0; got {alpha}.")
    train, val = _check_splits(train_ids, val_ids, n, vocab_size, "ngram_bits_per_char")
    [(whole, context)] = _counts(train, val, n, vocab_size, lowest=n)
    p = (whole + alpha) / (context + alpha * vocab_size)
    return float(-np.mean(np.log2(p)))


def _counts(train: np.ndarray, val: np.ndarray, n: int, vocab_size: int, lowest: int = 1
            ) -> list[tuple[np.ndarray, np.ndarray]]:
    """For m = lowest..n: ``(count(h, c), count(h))`` in ``train`` of every validation character
    ``c`` from the ``n``-th on and its ``m - 1`` characters before, ``h``; each ``(len(val) - n
    + 1,)``. A context counts as one when something follows it within the training text."""
    scored = len(val) - n + 1
    out = []
    for m in range(lowest, n + 1):
        whole = _count_in(_codes(train, m, vocab_size), _codes(val, m, vocab_size)[-scored:])
        if m == 1:
            context = np.full(scored, len(train))
        else:
            context = _count_in(_codes(train[:-1], m - 1, vocab_size),
                                _codes(val[:-1], m - 1, vocab_size)[-scored:])
        out.append((whole, context))
    return out


def _backoff_bits(counts: list[tuple[np.ndarray, np.ndarray]], vocab_size: int, k: float
                  ) -> float:
    p = np.full(len(counts[0][0]), 1 / vocab_size)
    for whole, context in counts:  # from the unigram up: each order leans on the one below
        p = (whole + k * p) / (context + k)
    return float(-np.mean(np.log2(p)))


def backoff_bits_per_char(train_ids: np.ndarray, val_ids: np.ndarray, n: int, vocab_size: int,
                          k: float = 10.0) -> float:
    """Bits per character of the n-gram with back-off, counted on ``train_ids``, on ``val_ids``.

    ``p_n(c | h) = (count(h, c) + k * p_{n-1}(c | h')) / (count(h) + k)``, where ``h'`` is ``h``
    without its oldest character, down to ``p_0 = 1 / V``: a context seen ``count(h)`` times
    has that many real observations and ``k`` borrowed from the shorter context. The same
    characters are scored as by :func:`ngram_bits_per_char` (from the ``n``-th on).

    Args:
      train_ids, val_ids: ``(N,)`` int token ids of the two splits.
      n: the longest run counted (>= 1; 1 is add-``k/V`` smoothing of the unigram).
      vocab_size: ``V``.
      k: the pseudo-counts each order borrows from the one below, > 0.

    Returns:
      the mean of ``-log2 p_n(c | context)`` over the validation characters.
    """
    if not (isinstance(k, (int, float)) and k > 0):
        raise InputError(f"k must be a number above 0 (the pseudo-counts borrowed from the "
                         f"shorter context); got {k!r}. Try 10, or best_backoff to choose it.")
    train, val = _check_splits(train_ids, val_ids, n, vocab_size, "backoff_bits_per_char")
    return _backoff_bits(_counts(train, val, n, vocab_size), vocab_size, k)


def best_backoff(train_ids: np.ndarray, val_ids: np.ndarray, vocab_size: int,
                 orders: range = range(1, 9), ks: tuple[float, ...] = BACKOFF_KS
                 ) -> dict[int, tuple[float, float]]:
    """Every ``n`` in ``orders`` with back-off at its best ``k``: ``{n: (bits per char, k)}``.

    ``k`` is chosen on the validation split, as :func:`best_ngram` chooses alpha. Counts once
    per ``n`` for all the ``ks``.
    """
    if not ks or not all(isinstance(k, (int, float)) and k > 0 for k in ks):
        raise InputError(f"ks must be numbers above 0, at least one; got {ks!r}.")
    scores = {}
    for n in orders:
        train, val = _check_splits(train_ids, val_ids, n, vocab_size, "best_backoff")
        counts = _counts(train, val, n, vocab_size)
        scores[n] = min((_backoff_bits(counts, vocab_size, k), k) for k in ks)
    return scores


def best_ngram(train_ids: np.ndarray, val_ids: np.ndarray, vocab_size: int,
               orders: range = range(1, 7), alphas: tuple[float, ...] = ALPHAS
               ) -> dict[int, tuple[float, float]]:
    """Every ``n`` in ``orders`` with its best smoothing: ``{n: (bits per char, alpha)}``.

    The smoothing is chosen on the validation split itself, which flatters the n-grams a
    little: a baseline that a GPT beats is then beaten fairly. ``min`` of the values is the
    best n-gram.
    """
    return {n: min((ngram_bits_per_char(train_ids, val_ids, n, vocab_size, a), a)
                   for a in alphas) for n in orders}
