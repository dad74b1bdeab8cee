"""The count-based baselines: counts, smoothed log-probabilities, bits per character computed
without a table that agree with the table, the best n on the real text, clear errors."""
import math

import numpy as np
import pytest

from nn_from_scratch import InputError
from nn_from_scratch.ngram import (
    backoff_bits_per_char,
    best_backoff,
    best_ngram,
    count_ngrams,
    ngram_bits_per_char,
    ngram_log_probs,
)

IDS = np.array([1, 2, 1, 2, 3, 1, 2, 1])


def test_counts_are_how_often_each_run_occurs():
    bigrams = count_ngrams(IDS, 2, 4)
    assert bigrams.shape == (4, 4) and bigrams.sum() == len(IDS) - 1
    assert bigrams[1, 2] == 3 and bigrams[2, 1] == 2 and bigrams[2, 3] == 1
    np.testing.assert_array_equal(count_ngrams(IDS, 1, 4), [0, 4, 3, 1])
    assert count_ngrams(IDS, 3, 4)[1, 2, 1] == 2


def test_smoothed_rows_are_distributions():
    log_p = ngram_log_probs(count_ngrams(IDS, 2, 4), alpha=0.5)
    np.testing.assert_allclose(np.exp(log_p).sum(axis=1), 1, rtol=1e-6)
    assert log_p[1, 2] == pytest.approx(math.log((3 + 0.5) / (3 + 2)))


@pytest.mark.parametrize("n", [1, 2, 3])
def test_bits_per_char_agrees_with_the_table(n):
    rng = np.random.default_rng(0)
    train, val = rng.integers(0, 5, 300), rng.integers(0, 5, 50)
    log_p = ngram_log_probs(count_ngrams(train, n, 5), alpha=0.3)
    runs = np.lib.stride_tricks.sliding_window_view(val, n)  # (len - n + 1, n)
    expected = -np.mean(log_p[tuple(runs.T)]) / math.log(2)
    assert ngram_bits_per_char(train, val, n, 5, alpha=0.3) == pytest.approx(expected, rel=1e-5)


def test_a_trained_bigram_matrix_reaches_the_counts_loss():
    """The bigram as one trained (V, V) matrix of logits: its best loss is the counts'."""
    import jax
    import jax.numpy as jnp

    from nn_from_scratch.optim import adam, apply_updates
    ids = np.random.default_rng(1).choice(5, 2000, p=[0.1, 0.2, 0.3, 0.25, 0.15])
    ids[1::3] = (ids[::3][:len(ids[1::3])] + 1) % 5  # some structure to learn

    def nats(logits):
        return -jnp.mean(jax.nn.log_softmax(logits[ids[:-1]])[jnp.arange(len(ids) - 1),
                                                               ids[1:]])
    optimizer, logits = adam(0.1), jnp.zeros((5, 5))

    @jax.jit
    def step(logits, state):
        updates, state = optimizer.update(jax.grad(nats)(logits), state, logits)
        return apply_updates(logits, updates), state

    state = optimizer.init(logits)
    for _ in range(300):
        logits, state = step(logits, state)
    counted = ngram_bits_per_char(ids, ids, 2, 5, alpha=1e-9)  # the counts, unsmoothed
    assert float(nats(logits)) / math.log(2) == pytest.approx(counted, abs=2e-3)


def test_on_the_python_docs_longer_contexts_help_until_the_4_gram():
    from nn_from_scratch.text_data import load_text
    docs = load_text()
    scores = best_ngram(docs.train_ids, docs.val_ids, docs.tokenizer.vocab_size)
    bits = {n: value for n, (value, _) in scores.items()}
    assert bits[1] > bits[2] > bits[3] > bits[4] < bits[5] < bits[6], bits
    assert 1.9 < bits[4] < 2.4, bits


def _backoff_by_hand(train, val, n, vocab_size, k):
    """The recursion written out, one character and one order at a time (the reviewer's s5)."""
    train, val = [tuple(ids) for ids in (train, val)]

    def occurs(run, within):
        return sum(within[i:i + len(run)] == run for i in range(len(within) - len(run) + 1))
    total = 0.0
    for i in range(n - 1, len(val)):
        p = 1 / vocab_size
        for m in range(1, n + 1):
            context = val[i - m + 1:i]
            seen = occurs(context, train[:-1]) if m > 1 else len(train)
            p = (occurs(context + (val[i],), train) + k * p) / (seen + k)
        total -= math.log2(p)
    return total / (len(val) - n + 1)


@pytest.mark.parametrize("n, k", [(1, 2.0), (2, 0.5), (3, 3.0), (4, 10.0)])
def test_backoff_is_the_recursion_written_out(n, k):
    rng = np.random.default_rng(n)
    train, val = rng.integers(0, 4, 200), rng.integers(0, 4, 40)
    assert backoff_bits_per_char(train, val, n, 4, k) == pytest.approx(
        _backoff_by_hand(train, val, n, 4, k), rel=1e-9)


def test_backoff_of_the_unigram_is_add_k_over_v():
    """n = 1 borrows k counts spread evenly: add-alpha with alpha = k / V."""
    rng = np.random.default_rng(2)
    train, val = rng.integers(0, 6, 300), rng.integers(0, 6, 60)
    assert backoff_bits_per_char(train, val, 1, 6, 3.0) == pytest.approx(
        ngram_bits_per_char(train, val, 1, 6, alpha=0.5), rel=1e-9)


def test_on_the_python_docs_backoff_keeps_helping_where_add_alpha_stops():
    """Lesson 16's honest story: add-alpha's best is the 4-gram; back-off improves at every n
    tried and beats it by far, so the 4-gram's limit was the smoothing's, not the counts'."""
    from nn_from_scratch.text_data import load_text
    docs = load_text()
    backoff = {n: bits for n, (bits, _) in best_backoff(docs.train_ids, docs.val_ids,
                                                        docs.tokenizer.vocab_size).items()}
    assert all(backoff[n + 1] < backoff[n] for n in range(1, 8)), backoff
    add_alpha = ngram_bits_per_char(docs.train_ids, docs.val_ids, 4,
                                    docs.tokenizer.vocab_size, alpha=0.01)
    assert backoff[8] < add_alpha - 0.25 and 1.6 < backoff[8] < 2.0, (backoff, add_alpha)


@pytest.mark.parametrize("call, match", [
    (lambda: count_ngrams(IDS, 5, 104), "too big"),
    (lambda: count_ngrams(IDS, 2, 3), "outside the vocabulary"),
    (lambda: count_ngrams(IDS.reshape(2, 4), 2, 4), "ONE sequence"),
    (lambda: ngram_log_probs(np.ones((2, 2)), alpha=0), "above 0"),
    (lambda: ngram_bits_per_char(IDS, IDS[:1], 2, 4), "at least n=2"),
    (lambda: backoff_bits_per_char(IDS, IDS, 2, 4, k=0), "k must be a number above 0"),
    (lambda: backoff_bits_per_char(IDS, IDS[:2], 3, 4), "at least n=3"),
    (lambda: backoff_bits_per_char(np.tile(IDS, 2), np.tile(IDS, 2), 10, 104),
     "does not fit in one 64-bit code"),
    (lambda: best_backoff(IDS, IDS, 4, ks=()), "ks must be numbers above 0"),
])
def test_bad_input_is_refused_with_the_fix(call, match):
    with pytest.raises(InputError, match=match):
        call()
