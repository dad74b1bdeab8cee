"""Lesson 16's checkers: each accepts the reference, says "not done" to the stub, and catches
the wrong answers students write, with a hint that names the fix; the sampler's verdict does
not depend on the draw."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import assert_result, stub
from jax import random, vmap

from nn_from_scratch.exercises import tiny_gpt as check
from nn_from_scratch.exercises._calls import fresh_inputs

UNKNOWN = "\ufffd"


def encode(text, chars):
    lookup = {c: i + 1 for i, c in enumerate(chars)}
    return np.array([lookup.get(c, 0) for c in text], dtype=np.int32)


def decode(ids, chars):
    return "".join((UNKNOWN + chars)[i] for i in ids)


def test_encode_decode():
    assert_result(check.encode_decode(encode, decode), "passed", "unknown 0")
    assert_result(check.encode_decode(stub, decode), "not done")
    assert_result(check.encode_decode(encode, stub), "not done")
    assert_result(check.encode_decode(
        lambda text, chars: np.array([chars.find(c) for c in text]), decode), "failed", "i + 1")
    assert_result(check.encode_decode(
        lambda text, chars: np.array([chars.index(c) + 1 for c in text]), decode), "failed",
        "id 0")
    assert_result(check.encode_decode(
        lambda text, chars: [{c: i + 1 for i, c in enumerate(chars)}[c] for c in text], decode),
        "failed", "id 0")
    assert_result(check.encode_decode(
        lambda text, chars: np.array([ord(c) for c in text]), decode), "failed", "ord(c)")
    assert_result(check.encode_decode(
        lambda text, chars: np.array([chars.find(c) + 1 for c in text]), decode), "passed")
    assert_result(check.encode_decode(
        lambda text, chars: np.array([chars.find(c) + 1 if c in chars else -1 for c in text]),
        decode), "failed", "id 0")
    assert_result(check.encode_decode(lambda text, chars: "".join(text), decode), "failed",
                  "integer id")
    assert_result(check.encode_decode(
        encode, lambda ids, chars: "".join(chars[i - 1] for i in ids if i > 0)), "failed",
        "\\ufffd")
    assert_result(check.encode_decode(
        encode, lambda ids, chars: "".join("?" if i == 0 else chars[i - 1] for i in ids)),
        "failed", "replacement character")
    assert_result(check.encode_decode(
        encode, lambda ids, chars: "".join((UNKNOWN + chars)[i - 1] for i in ids)), "failed",
        "chars[i]")
    assert_result(check.encode_decode(
        encode, lambda ids, chars: [(UNKNOWN + chars)[i] for i in ids]), "failed", "join")


def test_encode_decode_refuses_the_library():
    tokenizer = pytest.importorskip("nn_from_scratch.text")

    def library(text, chars):
        return tokenizer.Tokenizer(chars).encode(text)
    assert_result(check.encode_decode(library, decode), "failed", "nn_from_scratch.text")


def bigram_log_probs(counts, alpha):
    smoothed = counts + alpha
    return jnp.log(smoothed) - jnp.log(jnp.sum(smoothed, axis=1, keepdims=True))


def test_bigram_log_probs():
    assert_result(check.bigram_log_probs(bigram_log_probs), "passed", "in nats")
    assert_result(check.bigram_log_probs(stub), "not done")
    assert_result(check.bigram_log_probs(
        lambda c, a: jnp.log(c) - jnp.log(jnp.sum(c, axis=1, keepdims=True))), "failed",
        "-inf")
    assert_result(check.bigram_log_probs(
        lambda c, a: jnp.log(c + a) - jnp.log(jnp.sum(c + a, axis=0, keepdims=True))),
        "failed", "axis=1")
    assert_result(check.bigram_log_probs(
        lambda c, a: (c + a) / jnp.sum(c + a, axis=1, keepdims=True)), "failed", "jnp.log")
    assert_result(check.bigram_log_probs(
        lambda c, a: jnp.log(c + a) - jnp.log(jnp.sum(c, axis=1, keepdims=True) + a)),
        "failed", "each of the V")
    assert_result(check.bigram_log_probs(
        lambda c, a: jnp.log(c + a) - jnp.log(jnp.sum(c + a))), "failed", "its own sum")
    assert_result(check.bigram_log_probs(
        lambda c, a: jnp.log2(c + a) - jnp.log2(jnp.sum(c + a, axis=1, keepdims=True))),
        "failed", "natural log")
    assert_result(check.bigram_log_probs(
        lambda c, a: jnp.log(c + a) - jnp.log(jnp.maximum(jnp.sum(c, axis=1, keepdims=True), 1))),
        "failed", "alpha * V")
    assert_result(check.bigram_log_probs(lambda c, a: bigram_log_probs(c, 1.0)), "failed")


def position_losses(logits, targets):
    def one(logits_t, target):
        return jax.nn.logsumexp(logits_t) - logits_t[target]
    return vmap(vmap(one))(logits, targets)


def test_position_losses():
    assert_result(check.position_losses(position_losses), "passed", "no overflow")
    assert_result(check.position_losses(stub), "not done")
    assert_result(check.position_losses(lambda lg, t: jnp.mean(position_losses(lg, t))),
                  "failed", "EVERY position")
    assert_result(check.position_losses(lambda lg, t: -position_losses(lg, t)), "failed",
                  "MINUS")
    assert_result(check.position_losses(
        lambda lg, t: -jnp.take_along_axis(lg, t[..., None], -1)[..., 0]), "failed",
        "logsumexp(logits)")
    assert_result(check.position_losses(lambda lg, t: position_losses(lg, t) / jnp.log(2)),
                  "failed", "nats")
    assert_result(check.position_losses(
        lambda lg, t: vmap(vmap(lambda x, y: jnp.log(jnp.sum(jnp.exp(x))) - x[y]))(lg, t)),
        "failed", "overflow")
    assert_result(check.position_losses(
        lambda lg, t: vmap(vmap(lambda x, y: -jnp.log(jax.nn.softmax(x)[y])))(lg, t)),
        "failed", "log space")
    assert_result(check.position_losses(
        lambda lg, t: vmap(lambda x, y: jax.nn.logsumexp(x) - x[y])(lg, t)), "failed",
        "vmap twice")
    assert_result(check.position_losses(lambda lg, t: position_losses(lg[:, :-1], t[:, 1:])),
                  "failed", "targets[t]")
    assert_result(check.position_losses(
        lambda lg, t: jnp.take_along_axis(-jax.nn.log_softmax(lg), t[..., None], -1)[..., 0]),
        "passed")


def causal_attention(x, w_q, w_k, w_v, *, mask="causal", scale=None, axis=-1):
    q, k, v = x @ w_q.T, x @ w_k.T, x @ w_v.T
    scores = q @ k.T / (jnp.sqrt(q.shape[1]) if scale is None else scale)
    t = x.shape[0]
    i, j = jnp.arange(t)[:, None], jnp.arange(t)[None, :]
    seen = {"causal": j <= i, "future": j >= i, "strict": j < i, "none": j >= 0}.get(mask, j <= i)
    if mask == "after":
        return jax.nn.softmax(scores, axis=axis) * seen @ v
    if mask == "zero":
        return jax.nn.softmax(jnp.where(seen, scores, 0.0), axis=axis) @ v
    if mask == "naive":
        exps = jnp.exp(jnp.where(seen, scores, -jnp.inf))
        return exps / exps.sum(axis=-1, keepdims=True) @ v
    return jax.nn.softmax(jnp.where(seen, scores, -jnp.inf), axis=axis) @ v


@pytest.mark.parametrize("mistake, hint", [
    ({"mask": "none"}, "sees the future"), ({"mask": "future"}, "wrong way round"),
    ({"mask": "strict"}, "ITSELF"), ({"mask": "after"}, "after the softmax"),
    ({"mask": "zero"}, "-inf"), ({"mask": "naive"}, "several hundred"),
    ({"scale": 1.0}, "not scaled"), ({"axis": 0}, "ROW")])
def test_causal_attention_mistakes(mistake, hint):
    assert_result(check.causal_attention(
        lambda x, q, k, v: causal_attention(x, q, k, v, **mistake)), "failed", hint)


def test_causal_attention():
    assert_result(check.causal_attention(causal_attention), "passed", "never the future")
    assert_result(check.causal_attention(stub), "not done")
    assert_result(check.causal_attention(
        lambda x, q, k, v: causal_attention(x, q, k, v, scale=jnp.sqrt(x.shape[1]))), "failed",
        "sqrt(d_k)")
    assert_result(check.causal_attention(lambda x, q, k, v: causal_attention(x, q, v, k)),
                  "failed")
    assert_result(check.causal_attention(  # a very negative number instead of -inf: right too
        lambda x, q, k, v: jax.nn.softmax(jnp.where(
            jnp.tril(jnp.ones((len(x), len(x)), bool)),
            (x @ q.T) @ (x @ k.T).T / jnp.sqrt(q.shape[0]), -1e9)) @ (x @ v.T)), "passed")


def test_causal_attention_refuses_the_library():
    from nn_from_scratch.attention import self_attention
    assert_result(check.causal_attention(
        lambda x, q, k, v: self_attention(x, q, k, v, causal=True)), "failed",
        "nn_from_scratch.attention.self_attention")


def sample_chars(key, log_probs, temperature):
    keys = random.split(key, log_probs.shape[0])
    return vmap(lambda k, lp: random.categorical(k, lp / temperature))(keys, log_probs)


def test_sample_chars():
    assert_result(check.sample_chars(sample_chars), "passed", "0.05")
    assert_result(check.sample_chars(stub), "not done")
    assert_result(check.sample_chars(  # one call for every row: a draw of its own for each
        lambda key, lp, t: random.categorical(key, lp / t)), "passed")
    assert_result(check.sample_chars(
        lambda key, lp, t: vmap(lambda r: random.categorical(key, r / t))(lp)), "failed",
        "split")
    assert_result(check.sample_chars(lambda key, lp, t: jnp.argmax(lp, axis=1)), "failed",
                  "greedy")
    assert_result(check.sample_chars(lambda key, lp, t: sample_chars(key, lp * t, 1.0)),
                  "failed", "divides them")
    assert_result(check.sample_chars(lambda key, lp, t: sample_chars(key, lp, 1.0)), "failed",
                  "temperature was not used")
    assert_result(check.sample_chars(lambda key, lp, t: sample_chars(key, jnp.exp(lp / t), 1.0)),
                  "failed", "LOG-probabilities")
    assert_result(check.sample_chars(
        lambda key, lp, t: sample_chars(random.key(0), lp, t)), "failed", "another key")

    def naive(key, lp, t):
        p = jnp.exp(lp / t)
        p = p / p.sum(axis=1, keepdims=True)
        keys = random.split(key, lp.shape[0])
        return vmap(lambda k, pr: random.choice(k, lp.shape[1], p=pr))(keys, p)
    assert_result(check.sample_chars(naive), "failed", "overflows")

    def numpy_draws(key, lp, t):
        p = np.exp(np.asarray(lp, np.float64) / t)
        p /= p.sum(axis=1, keepdims=True)
        return np.array([np.random.choice(len(row), p=row) for row in p])
    assert_result(check.sample_chars(numpy_draws), "failed", "same key")


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_sample_chars_same_verdict_on_every_draw(seed):
    with fresh_inputs(seed):
        assert check.sample_chars(sample_chars).passed
        assert not check.sample_chars(lambda key, lp, t: sample_chars(key, lp, 1.0)).passed
        assert not check.sample_chars(lambda key, lp, t: sample_chars(key, lp * t, 1.0)).passed


def cached_step(q, k, v, cache_k, cache_v, position, *, seen="causal", write=True, scale=None):
    if write:
        cache_k, cache_v = cache_k.at[position].set(k), cache_v.at[position].set(v)
    rows = jnp.arange(cache_k.shape[0])
    mask = {"causal": rows <= position, "before": rows < position, "all": rows >= 0}[seen]
    scores = cache_k @ q / (jnp.sqrt(q.shape[0]) if scale is None else scale)
    out = jax.nn.softmax(jnp.where(mask, scores, -jnp.inf)) @ cache_v
    return out, cache_k, cache_v


def test_cached_step():
    assert_result(check.cached_step(cached_step), "passed", "under jit")
    assert_result(check.cached_step(stub), "not done")
    assert_result(check.cached_step(lambda *a: cached_step(*a, seen="all")), "failed", "stale")
    assert_result(check.cached_step(lambda *a: cached_step(*a, seen="before")), "failed",
                  "itself")
    assert_result(check.cached_step(lambda *a: cached_step(*a, write=False)), "failed",
                  "unchanged")
    assert_result(check.cached_step(lambda *a: cached_step(*a, scale=1.0)), "failed",
                  "not scaled")
    assert_result(check.cached_step(lambda *a: cached_step(*a)[0]), "failed",
                  "(output, cache_k, cache_v)")

    def old_caches(q, k, v, cache_k, cache_v, position):
        out = cached_step(q, k, v, cache_k, cache_v, position, write=False)[0]
        return out, cache_k.at[position].set(k), cache_v.at[position].set(v)
    assert_result(check.cached_step(old_caches), "failed", "OLD caches")

    def off_by_one(q, k, v, cache_k, cache_v, position):
        return cached_step(q, k, v, cache_k, cache_v, position + 1)
    assert_result(check.cached_step(off_by_one), "failed", "row")

    def sliced(q, k, v, cache_k, cache_v, position):
        cache_k, cache_v = cache_k.at[position].set(k), cache_v.at[position].set(v)
        scores = cache_k[:position + 1] @ q / jnp.sqrt(q.shape[0])
        return jax.nn.softmax(scores) @ cache_v[:position + 1], cache_k, cache_v
    assert_result(check.cached_step(sliced), "failed", "outside jit")

    def naive(q, k, v, cache_k, cache_v, position):
        cache_k, cache_v = cache_k.at[position].set(k), cache_v.at[position].set(v)
        exps = jnp.where(jnp.arange(len(cache_k)) <= position,
                         jnp.exp(cache_k @ q / jnp.sqrt(q.shape[0])), 0)
        return exps / exps.sum() @ cache_v, cache_k, cache_v
    assert_result(check.cached_step(naive), "failed", "overflows")


# A student's walk of the checks (issue 39's lesson): each answer as the student wrote it, the
# verdict it must get in class and in every grading, and a word of the hint it must show.
# The first group passed wrongly before (in class, or in some gradings only).
WALK_HEAD = ("import math\nimport jax\nimport jax.numpy as jnp\nimport numpy as np\n"
             "from jax import random, vmap\nUNKNOWN = '\\ufffd'\n"
             "def decode(ids, chars):\n    return ''.join((UNKNOWN + chars)[i] for i in ids)\n")
WALK = {  # id: (checker, the answer's code, passes?, a word of the hint)
    "e16 float ids": ("encode_decode", """
def encode(text, chars):
    return np.array([chars.index(c) + 1 if c in chars else 0 for c in text], dtype=np.float32)
""", False, "int32"),
    "b22 library from the 2nd call": ("bigram_log_probs", """
from nn_from_scratch import ngram as _ng
_calls = [0]
def bigram_log_probs(counts, alpha):
    _calls[0] += 1
    if _calls[0] > 1:
        return _ng.ngram_log_probs(counts, alpha)
    s = counts + alpha
    return jnp.log(s) - jnp.log(jnp.sum(s, axis=1, keepdims=True))
""", False, "nn_from_scratch.ngram"),
    "b23 library when V < 9": ("bigram_log_probs", """
from nn_from_scratch import ngram as _ng
def bigram_log_probs(counts, alpha):
    if counts.shape[0] < 9:
        return _ng.ngram_log_probs(counts, alpha)
    s = counts + alpha
    return jnp.log(s) - jnp.log(jnp.sum(s, axis=1, keepdims=True))
""", False, "nn_from_scratch.ngram"),
    "p11 V = 10 written": ("position_losses", """
def position_losses(logits, targets):
    oh = jax.nn.one_hot(targets, 10)
    lp = jax.nn.log_softmax(logits)
    return -jnp.sum(oh[..., :logits.shape[-1]] * lp, -1)
""", False, "logits.shape"),
    "c06 mask of 8 written": ("causal_attention", """
def causal_attention(x, w_q, w_k, w_v):
    q, k, v = x @ w_q.T, x @ w_k.T, x @ w_v.T
    s = q @ k.T / jnp.sqrt(q.shape[1])
    seen = jnp.tril(jnp.ones((8, 8), bool))[:x.shape[0], :x.shape[0]]
    return jax.nn.softmax(jnp.where(seen, s, -jnp.inf), -1) @ v
""", False, "x.shape[0]"),
    "s22 6000 keys written": ("sample_chars", """
def sample_chars(key, logits, temperature):
    keys = random.split(key, 6000)
    return vmap(lambda k, r: random.categorical(k, r / temperature))(keys, logits)
""", False, "logits.shape[0]"),
    "s26 V = 7 written": ("sample_chars", """
def sample_chars(key, logits, temperature):
    return random.categorical(key, logits[:, :7] / temperature, axis=-1)
""", False, "left out"),
    "s14 top-(V-1)": ("sample_chars", """
def sample_chars(key, logits, temperature):
    kth = jnp.sort(logits, -1)[:, 1:2]
    l = jnp.where(logits >= kth, logits, -jnp.inf)
    return random.categorical(key, l / temperature, axis=-1)
""", False, "left out"),
    "k10 mask of 8 written": ("cached_step", """
def cached_step(q, k, v, cache_k, cache_v, position):
    cache_k, cache_v = cache_k.at[position].set(k), cache_v.at[position].set(v)
    seen = (jnp.arange(8) <= position)[:cache_k.shape[0]]
    seen = jnp.concatenate([seen, jnp.zeros(cache_k.shape[0] - seen.shape[0], bool)])
    s = jnp.where(seen, cache_k @ q / jnp.sqrt(q.shape[0]), -jnp.inf)
    return jax.nn.softmax(s) @ cache_v, cache_k, cache_v
""", False, "position included"),
    "k12 library weights after .at": ("cached_step", """
from nn_from_scratch.attention import attention_weights as _aw
def cached_step(q, k, v, cache_k, cache_v, position):
    cache_k, cache_v = cache_k.at[position].set(k), cache_v.at[position].set(v)
    seen = jnp.arange(cache_k.shape[0]) <= position
    return _aw(q, cache_k, seen) @ cache_v, cache_k, cache_v
""", False, "course's library"),
    "k18 library attention after .at": ("cached_step", """
from nn_from_scratch import attention as _att
def cached_step(q, k, v, cache_k, cache_v, position):
    cache_k, cache_v = cache_k.at[position].set(k), cache_v.at[position].set(v)
    seen = jnp.arange(cache_k.shape[0]) <= position
    return _att.attention(q, cache_k, cache_v, seen), cache_k, cache_v
""", False, "course's library"),
    "k23 library by getattr after .at": ("cached_step", """
import nn_from_scratch.attention as _a
def cached_step(q, k, v, cache_k, cache_v, position):
    cache_k, cache_v = cache_k.at[position].set(k), cache_v.at[position].set(v)
    w = getattr(_a, "attention_weights")(q, cache_k, jnp.arange(cache_k.shape[0]) <= position)
    return w @ cache_v, cache_k, cache_v
""", False, "course's library"),
    "k14 mask -100": ("cached_step", """
def cached_step(q, k, v, cache_k, cache_v, position):
    cache_k, cache_v = cache_k.at[position].set(k), cache_v.at[position].set(v)
    seen = jnp.arange(cache_k.shape[0]) <= position
    s = jnp.where(seen, cache_k @ q / jnp.sqrt(q.shape[0]), -100.0)
    return jax.nn.softmax(s) @ cache_v, cache_k, cache_v
""", False, "finite score"),
    "k22 mask -30": ("cached_step", """
def cached_step(q, k, v, cache_k, cache_v, position):
    cache_k, cache_v = cache_k.at[position].set(k), cache_v.at[position].set(v)
    seen = jnp.arange(cache_k.shape[0]) <= position
    s = jnp.where(seen, cache_k @ q / jnp.sqrt(q.shape[0]), -30.0)
    return jax.nn.softmax(s) @ cache_v, cache_k, cache_v
""", False, "finite score"),
}
WALK_HINTS = {  # refused before too, with a hint that named the wrong thing or nothing
    "c20 mask -100": ("causal_attention", """
def causal_attention(x, w_q, w_k, w_v):
    q, k, v = x @ w_q.T, x @ w_k.T, x @ w_v.T
    s = q @ k.T / jnp.sqrt(q.shape[1])
    seen = jnp.tril(jnp.ones((x.shape[0], x.shape[0]), bool))
    return jax.nn.softmax(jnp.where(seen, s, -100.0), -1) @ v
""", False, "-100"),
    "c18 the weights returned": ("causal_attention", """
def causal_attention(x, w_q, w_k, w_v):
    q, k, v = x @ w_q.T, x @ w_k.T, x @ w_v.T
    s = q @ k.T / jnp.sqrt(q.shape[1])
    seen = jnp.tril(jnp.ones((x.shape[0], x.shape[0]), bool))
    return jax.nn.softmax(jnp.where(seen, s, -jnp.inf), -1)
""", False, "has shape"),
    "s03 one key for every row": ("sample_chars", """
def sample_chars(key, logits, temperature):
    return vmap(lambda r: random.categorical(key, r / temperature))(logits)
""", False, "one key was used"),
    "s07 probabilities to categorical": ("sample_chars", """
def sample_chars(key, logits, temperature):
    return random.categorical(key, jax.nn.softmax(logits / temperature, -1), axis=-1)
""", False, "LOG-probabilities"),
    "p06 targets rolled by one": ("position_losses", """
def position_losses(logits, targets):
    lp = jax.nn.log_softmax(logits)
    t = jnp.roll(targets, -1, axis=1)
    return -jnp.take_along_axis(lp, t[..., None], -1)[..., 0]
""", False, "targets[t]"),
    "e12 a list of ids (right)": ("encode_decode", """
def encode(text, chars):
    return [chars.index(c) + 1 if c in chars else 0 for c in text]
""", True, None),
    "b11 Python loops (right)": ("bigram_log_probs", """
def bigram_log_probs(counts, alpha):
    V = len(counts)
    out = [[0.0] * V for _ in range(V)]
    for a in range(V):
        tot = sum(float(counts[a][b]) + alpha for b in range(V))
        for b in range(V):
            out[a][b] = math.log((float(counts[a][b]) + alpha) / tot)
    return np.array(out)
""", True, None),
    "c12 a loop over the queries (right)": ("causal_attention", """
def causal_attention(x, w_q, w_k, w_v):
    q, k, v = x @ w_q.T, x @ w_k.T, x @ w_v.T
    rows = []
    for i in range(x.shape[0]):
        sc = k[:i + 1] @ q[i] / jnp.sqrt(q.shape[1])
        rows.append(jax.nn.softmax(sc) @ v[:i + 1])
    return jnp.stack(rows)
""", True, None),
    "s12 NumPy seeded from the key (right)": ("sample_chars", """
def sample_chars(key, logits, temperature):
    seed = int(jax.random.randint(key, (), 0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    l = np.asarray(logits, np.float64) / temperature
    p = np.exp(l - l.max(-1, keepdims=True)); p /= p.sum(-1, keepdims=True)
    return np.array([rng.choice(len(r), p=r) for r in p])
""", True, None),
    "k20 the library's softmax, allowed (right)": ("cached_step", """
from nn_from_scratch.attention import softmax as _sm
def cached_step(q, k, v, cache_k, cache_v, position):
    cache_k, cache_v = cache_k.at[position].set(k), cache_v.at[position].set(v)
    s = jnp.where(jnp.arange(cache_k.shape[0]) <= position,
                  cache_k @ q / jnp.sqrt(q.shape[0]), -jnp.inf)
    return _sm(s) @ cache_v, cache_k, cache_v
""", True, None),
    "k21 dynamic_update_slice (right)": ("cached_step", """
def cached_step(q, k, v, cache_k, cache_v, position):
    cache_k = jax.lax.dynamic_update_slice(cache_k, k[None].astype(cache_k.dtype), (position, 0))
    cache_v = jax.lax.dynamic_update_slice(cache_v, v[None].astype(cache_v.dtype), (position, 0))
    s = jnp.where(jnp.arange(cache_k.shape[0]) <= position,
                  cache_k @ q / jnp.sqrt(q.shape[0]), -jnp.inf)
    return jax.nn.softmax(s) @ cache_v, cache_k, cache_v
""", True, None),
    "k04 mask < position, -1e9": ("cached_step", """
def cached_step(q, k, v, cache_k, cache_v, position):
    cache_k, cache_v = cache_k.at[position].set(k), cache_v.at[position].set(v)
    seen = jnp.arange(cache_k.shape[0]) < position
    s = jnp.where(seen, cache_k @ q / jnp.sqrt(q.shape[0]), -1e9)
    return jax.nn.softmax(s) @ cache_v, cache_k, cache_v
""", False, "itself"),
    "k17 mask <= position + 1": ("cached_step", """
def cached_step(q, k, v, cache_k, cache_v, position):
    cache_k, cache_v = cache_k.at[position].set(k), cache_v.at[position].set(v)
    seen = jnp.arange(cache_k.shape[0]) <= position + 1
    s = jnp.where(seen, cache_k @ q / jnp.sqrt(q.shape[0]), -jnp.inf)
    return jax.nn.softmax(s) @ cache_v, cache_k, cache_v
""", False, "position + 1"),
    "p16 probability clipped at 1e-9": ("position_losses", """
def position_losses(logits, targets):
    p = jnp.clip(jax.nn.softmax(logits, axis=-1), 1e-9, 1.0)
    return -jnp.log(jnp.take_along_axis(p, targets[..., None], -1)[..., 0])
""", False, "caps the loss"),
    "p16b eps added before the log": ("position_losses", """
def position_losses(logits, targets):
    p = jax.nn.softmax(logits, axis=-1)
    return -jnp.log(jnp.take_along_axis(p, targets[..., None], -1)[..., 0] + 1e-7)
""", False, "caps the loss"),
    "p30 Optax's loss": ("position_losses", """
import optax
def position_losses(logits, targets):
    return optax.softmax_cross_entropy_with_integer_labels(logits, targets)
""", False, "optax"),
    "k30 int(position), a Python loop": ("cached_step", """
def cached_step(q, k, v, cache_k, cache_v, position):
    cache_k, cache_v = cache_k.at[position].set(k), cache_v.at[position].set(v)
    s = cache_k @ q / jnp.sqrt(q.shape[0])
    s = jnp.array([s[i] if i <= int(position) else -jnp.inf for i in range(cache_k.shape[0])])
    return jax.nn.softmax(s) @ cache_v, cache_k, cache_v
""", False, "works only outside jit"),
    "k31 masked after the softmax, renormalised": ("cached_step", """
def cached_step(q, k, v, cache_k, cache_v, position):
    cache_k, cache_v = cache_k.at[position].set(k), cache_v.at[position].set(v)
    seen = jnp.arange(cache_k.shape[0]) <= position
    weights = jax.nn.softmax(cache_k @ q / jnp.sqrt(q.shape[0])) * seen
    return (weights / weights.sum()) @ cache_v, cache_k, cache_v
""", False, "underflows"),
    "p21 lesson 08's one_hot": ("position_losses", """
from nn_from_scratch.losses import one_hot
def position_losses(logits, targets):
    lp = jax.nn.log_softmax(logits)
    return -jnp.sum(one_hot(targets, logits.shape[-1]) * lp, -1)
""", False, "course's library"),
}
WALK_SEEDS = [None, 11, 222, 3333, 44444, 555555]  # None: in class; the others: gradings


def _walk_result(checker, code, seed):
    namespace = {}
    exec(WALK_HEAD + code, namespace)  # noqa: S102 - the walk's answer, as a student wrote it
    answer = {"encode_decode": lambda: (namespace["encode"], namespace["decode"])}.get(
        checker, lambda: (namespace[checker],))()
    if seed is None:
        return getattr(check, checker)(*answer)
    with fresh_inputs(seed):
        return getattr(check, checker)(*answer)


@pytest.mark.parametrize("seed", WALK_SEEDS)
@pytest.mark.parametrize("answer", WALK)
def test_the_walks_wrong_answers_fail_on_every_seed(answer, seed):
    checker, code, passes, hint = WALK[answer]
    result = _walk_result(checker, code, seed)
    assert_result(result, "failed", hint)


@pytest.mark.parametrize("seed", [None, 11])
@pytest.mark.parametrize("answer", WALK_HINTS)
def test_the_walks_other_answers_get_their_verdict_and_hint(answer, seed):
    checker, code, passes, hint = WALK_HINTS[answer]
    result = _walk_result(checker, code, seed)
    assert_result(result, "passed" if passes else "failed", *([hint] if hint else []))
