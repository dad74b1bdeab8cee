"""Checkers for lesson 14, attention from scratch: the student writes attention for ONE query,
lifts it with ``vmap`` to every query and every head, and writes the mask, the layer norm, the
transformer block and its parameter count.

Each is compared with a NumPy reference (float64) on small inputs whose sizes all differ, so
that a swapped axis or a missing transpose gives another shape or other numbers; the student's
function runs under ``jit`` (``fast_call``). Each knows the usual slips: a missing or wrong
scale, the softmax over the wrong axis, keys and values mapped with the queries, the mask
applied after the softmax, ``-inf`` making NaN of a fully masked row, an unstable softmax, heads
joined without the transpose, a residual forgotten, post-norm instead of pre-norm, heads
counted as if each had the whole width.
"""
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ..i18n import N_, _
from ._calls import fast_call, generator, graded, more_when_graded
from ._compare import expect_close, expect_int, expect_shape, reject_known_wrong
from ._core import Mistake, exercise

LESSON = "14_attention_from_scratch"
_RNG = np.random.default_rng(14)  # in class: one stream, drawn in the order of the checks
EPS = 1e-5  # the layer norm's


def _source(n: int) -> np.random.Generator:
    """Where an input is drawn from: the class stream, or a grading's fresh draws."""
    return generator(n) if graded() else _RNG


def _normal(source: np.random.Generator, *shape: int, scale: float = 1.0) -> jax.Array:
    return jnp.asarray(scale * source.normal(size=shape), jnp.float32)


def _softmax(scores: Any, axis: int = -1) -> np.ndarray:
    scores = np.asarray(scores, np.float64)
    exps = np.exp(scores - scores.max(axis=axis, keepdims=True))
    return exps / exps.sum(axis=axis, keepdims=True)


def _attention(q: Any, k: Any, v: Any, scale: float | None = None, axis: int = -1) -> np.ndarray:
    """``softmax(q @ k.T * scale) @ v`` in float64, for ONE query ``(d,)`` or queries ``(T, d)``
    (``axis``: which axis of the scores the softmax runs along; ``scale``: 1 / sqrt(d))."""
    q, k, v = (np.asarray(a, np.float64) for a in (q, k, v))
    scale = 1 / np.sqrt(q.shape[-1]) if scale is None else scale
    return _softmax(q @ k.T * scale, axis) @ v


@exercise(LESSON, 1, "attention for one query")
def attention(student_fn: Any) -> str:
    for case in range(2):
        source = _source(140 + case)
        query, keys, values = (_normal(source, 4, scale=1.5), _normal(source, 6, 4, scale=1.5),
                               _normal(source, 6, 3))
        want = _attention(query, keys, values)
        what = _("attention(query, keys, values) for a query (4,), keys (6, 4) and values (6, 3)")
        got = np.asarray(fast_call(student_fn, query, keys, values, what=what, hints={
            ("dot_general requires", "matmul", "Incompatible shapes"): _(
                "{what} failed: the scores are keys @ query, (6,), one per key; the answer is "
                "weights @ values, (3,)").format(what=what)}))
        if got.shape == (4,):
            raise Mistake(_("returned shape (4,), a key's size: you averaged the keys; the "
                            "answer is the weighted average of the VALUES, weights @ values"))
        if got.shape == (6,):
            raise Mistake(_("returned shape (6,), one number per key: those are the weights; "
                            "the answer is their average of the values, weights @ values"))
        got = expect_shape(got, want.shape, what)
        q, k, v = (np.asarray(a, np.float64) for a in (query, keys, values))
        scores = k @ q
        reject_known_wrong(got, {
            N_("the scores are not scaled: divide keys @ query by sqrt(d), the size of the "
               "query (sqrt(4) = 2 here), so the softmax does not saturate"):
                _attention(q, k, v, scale=1.0),
            N_("the scores are divided by d; the scale is sqrt(d): "
               "keys @ query / jnp.sqrt(query.shape[0])"): _attention(q, k, v, scale=1 / 4),
            N_("the scores are multiplied by sqrt(d); divide by it"):
                _attention(q, k, v, scale=2.0),
            N_("the weights are the scores divided by their sum; a softmax takes exp first, "
               "exp(s) / sum(exp(s)), so that every weight is positive"):
                scores / 2 / np.sum(scores / 2) @ v,
            N_("returned the value of the best key alone (a hard lookup); attention averages "
               "ALL the values, weighted by the softmax of the scores"): v[np.argmax(scores)],
        }, rtol=1e-4, atol=1e-5, want=want)
        expect_close(got, want, what, hint=N_("softmax(keys @ query / sqrt(d)) @ values"))
    return N_("two queries against 6 keys: scaled scores, softmax, the values averaged")


@exercise(LESSON, 2, "self-attention (vmap over the queries)")
def self_attention(student_fn: Any) -> str:
    source = _source(142)
    x = _normal(source, 5, 4)
    w_q, w_k, w_v = _normal(source, 3, 4), _normal(source, 3, 4), _normal(source, 2, 4)
    q, k, v = (np.asarray(x, np.float64) @ np.asarray(w, np.float64).T for w in (w_q, w_k, w_v))
    want = _attention(q, k, v)
    what = _("self_attention(x, w_q, w_k, w_v) for x (5, 4), w_q and w_k (3, 4), w_v (2, 4)")
    got = np.asarray(fast_call(student_fn, x, w_q, w_k, w_v, what=what, hints={
        ("one value per key", "takes ONE query", "out of bounds for array of dimension 0",
         "must have ndim at least 1, but it has ndim 0"): _(
            "{what} failed inside attention, which got ONE key where it takes them all: vmap "
            "mapped the keys and values too. Map the queries only: "
            "vmap(attention, in_axes=(0, None, None))").format(what=what),
        ("dot_general requires", "matmul", "Incompatible shapes"): _(
            "{what} failed: with the course's layout, the queries of every position are "
            "x @ w_q.T, (5, 3); the keys x @ w_k.T, (5, 3); the values x @ w_v.T, (5, 2)").format(
              what=what)}))
    got = expect_shape(got, want.shape, what)
    reject_known_wrong(got, {
        N_("every position got its own value back: vmap mapped the keys and values too, so query "
           "t saw key t alone. Share them: vmap(attention, in_axes=(0, None, None))"): v,
        N_("the softmax ran down the columns (axis 0): each ROW of the scores belongs to one "
           "query and must sum to 1, jax.nn.softmax(scores, axis=-1)"): _attention(q, k, v, axis=0),
        N_("queries and keys swapped: scores[i, j] is query i against key j, q @ k.T"):
            _softmax(k @ q.T / np.sqrt(3)) @ v,
        N_("the scores are not scaled: divide by sqrt(d_k), the size of a query (3 here)"):
            _attention(q, k, v, scale=1.0),
        N_("the scores are scaled by the width of x (4); the scale is sqrt(d_k), the size of a "
           "query and a key (3 here)"): _attention(q, k, v, scale=1 / 2),
    }, rtol=1e-4, atol=1e-5, want=want)
    expect_close(got, want, what, hint=N_("q, k, v = x @ w_q.T, x @ w_k.T, x @ w_v.T; then "
                                          "vmap(attention, in_axes=(0, None, None))(q, k, v)"))
    return N_("5 positions, queries and keys of 3, values of 2: every query against all the keys")


@exercise(LESSON, 3, "the mask (masked_softmax)")
def masked_softmax(student_fn: Any) -> str:
    source = _source(143)
    cases = (
        (_normal(source, 7, scale=2.0), np.array([1, 0, 1, 1, 0, 1, 1], bool), "some"),
        (jnp.asarray([100.0, 120.0, 300.0, 90.0, 110.0], jnp.float32),
         np.array([1, 1, 0, 1, 1], bool), "large"),
        (_normal(source, 4), np.ones(4, bool), "none"),
        (_normal(source, 4), np.zeros(4, bool), "all"),
    )
    for scores, mask, kind in cases:
        s = np.asarray(scores, np.float64)
        want = np.where(mask, _softmax(np.where(mask, s, -np.inf)), 0.0) if mask.any() else 0 * s
        what = _("masked_softmax(scores, mask) for scores {scores} and mask {mask}").format(
            scores=np.round(s, 2).tolist(), mask=mask.astype(int).tolist())
        got = expect_shape(fast_call(student_fn, scores, jnp.asarray(mask), what=what),
                           want.shape, what)
        if np.isnan(got).any() and kind == "all":
            raise Mistake(_("{what} gave NaN: with every score -inf, the largest is -inf too and "
                            "-inf - (-inf) is NaN. A query that may see nothing gets weights "
                            "of 0: replace a largest score that is not finite by 0, and divide "
                            "by the sum only where it is > 0 (jnp.where)").format(what=what))
        if not np.isfinite(got).all():
            raise Mistake(_("{what} gave {got}: exp of a float32 above about 88 is inf, and inf "
                            "/ inf is NaN. Hide the masked scores first (-inf), then subtract "
                            "the largest score before exp (it cancels out), so that every exp "
                            "is at most 1 and the largest is exactly 1").format(
                              what=what, got=np.round(got, 3).tolist()))
        if kind == "all" and np.allclose(got, 1 / len(s), atol=1e-4):
            raise Mistake(_("{what} gave every position 1/{n}: a large negative number instead "
                            "of -inf still counts once every score has it. A query that may see "
                            "nothing gets weights of 0").format(what=what, n=len(s)))
        plain = _softmax(s)
        reject_known_wrong(got, {
            N_("the mask was applied after the softmax: the weights left no longer sum to 1. "
               "Put -inf into the masked SCORES, then take the softmax"): plain * mask,
            N_("the mask is the wrong way round: True is where the query MAY look"):
                np.where(~mask, _softmax(np.where(~mask, s, -np.inf)), 0.0) if (~mask).any()
                else np.nan,
            N_("the mask was not used: masked positions must get weight 0"): plain,
        }, rtol=1e-4, atol=1e-6, want=want)
        expect_close(got, want, what, atol=1e-6, hint=N_(
            "jnp.where(mask, scores, -jnp.inf), minus the largest, exp, divided by the sum"))
    return N_("4 masks (some hidden, large scores, none hidden, all hidden): 0 where masked, "
              "no overflow, no NaN")


def _mha(x: Any, w_qkv: Any, w_o: Any, join: str = "heads first", swap: bool = False
         ) -> np.ndarray:
    """Multi-head attention in float64; ``join``: how the heads are joined per position
    (the right way, or without the transpose, or head-major); ``swap``: keys and queries."""
    x, w_qkv, w_o = (np.asarray(a, np.float64) for a in (x, w_qkv, w_o))
    w_q, w_k, w_v = w_qkv[[1, 0, 2]] if swap else w_qkv
    heads = np.stack([_attention(x @ q.T, x @ k.T, x @ v.T) for q, k, v in zip(w_q, w_k, w_v)])
    t = x.shape[0]  # heads: (H, T, d_k)
    joined = {"heads first": heads.transpose(1, 0, 2).reshape(t, -1),
              "no transpose": heads.reshape(t, -1),
              "interleaved": heads.transpose(1, 2, 0).reshape(t, -1)}[join]
    return joined @ w_o.T


@exercise(LESSON, 4, "multi-head attention (vmap over the heads)")
def multi_head_attention(student_fn: Any) -> str:
    source = _source(144)
    x, w_qkv, w_o = _normal(source, 5, 6), _normal(source, 3, 2, 2, 6), _normal(source, 6, 4)
    want = _mha(x, w_qkv, w_o)
    what = _("multi_head_attention(x, w_qkv, w_o) for x (5, 6), w_qkv (3, 2, 2, 6) (2 heads of "
             "size 2) and w_o (6, 4)")
    got = np.asarray(fast_call(student_fn, x, w_qkv, w_o, what=what, hints={
        ("inconsistent sizes", "vmap got"): _(
            "{what} failed in vmap: it mapped the sequence too (5 positions against 2 heads). "
            "Every head sees the WHOLE sequence: vmap(self_attention, in_axes=(None, 0, 0, 0))"
        ).format(what=what),
        ("dot_general requires", "matmul", "Incompatible shapes"): _(
            "{what} failed multiplying: the heads give (2, 5, 2); joined per position that is "
            "(5, 4), and w_o is (6, 4), so the output is joined @ w_o.T").format(what=what)}))
    if got.shape == (5, 4):
        raise Mistake(_("returned (5, 4): the heads joined, but not mixed back to the width of "
                        "x; multiply by w_o: joined @ w_o.T"))
    if got.shape in ((5, 2), (2, 5, 2)):
        raise Mistake(_("returned {shape}: the heads are JOINED side by side for every "
                        "position, (T, H * d_k), not summed, averaged or left stacked").format(
                          shape=got.shape))
    got = expect_shape(got, want.shape, what)
    reject_known_wrong(got, {
        N_("the heads were joined without the transpose: heads.reshape(T, -1) puts head 0's "
           "first positions in row 0. Make it (T, H, d_k) first: heads.transpose(1, 0, 2)"):
            _mha(x, w_qkv, w_o, join="no transpose"),
        N_("the heads' numbers are interleaved: for each position put head 0's d_k numbers "
           "first, then head 1's: heads.transpose(1, 0, 2).reshape(T, -1)"):
            _mha(x, w_qkv, w_o, join="interleaved"),
        N_("queries and keys swapped: w_qkv[0] holds the queries' weights, w_qkv[1] the "
           "keys', w_qkv[2] the values'"): _mha(x, w_qkv, w_o, swap=True),
    }, rtol=1e-4, atol=1e-5, want=want)
    expect_close(got, want, what, hint=N_(
        "vmap(self_attention, in_axes=(None, 0, 0, 0))(x, *w_qkv), then "
        ".transpose(1, 0, 2).reshape(T, -1) @ w_o.T"))
    return N_("2 heads on 5 positions: mapped over the stacked weights, joined, projected")


def _layer_norm(x: Any, gamma: Any, beta: Any, eps: float = EPS, ddof: int = 0,
                root: bool = True, centre: bool = True) -> np.ndarray:
    x = np.asarray(x, np.float64)
    spread = np.var(x, ddof=ddof) + eps
    return ((x - np.mean(x) if centre else x) / (np.sqrt(spread) if root else spread)
            * np.asarray(gamma, np.float64) + np.asarray(beta, np.float64))


@exercise(LESSON, 5, "layer_norm")
def layer_norm(student_fn: Any) -> str:
    source = _source(145)
    gamma, beta = _normal(source, 8, scale=0.5) + 1.0, _normal(source, 8, scale=0.5)
    for x in (_normal(source, 8, scale=3.0) + 2.0, jnp.full(8, 0.5, jnp.float32)):
        want = _layer_norm(x, gamma, beta)
        what = _("layer_norm(x, gamma, beta) for x {x}").format(
            x=np.round(np.asarray(x, np.float64), 2).tolist())
        got = expect_shape(fast_call(student_fn, x, gamma, beta, what=what), want.shape, what)
        if np.isnan(got).any():
            raise Mistake(_("{what} gave NaN: every entry of x is the same, so the variance is "
                            "0 and (x - mean) / sqrt(var) is 0 / 0. Add eps = 1e-5 to the "
                            "variance under the square root").format(what=what))
        reject_known_wrong(got, {
            N_("divided by the variance; divide by the standard deviation, "
               "jnp.sqrt(jnp.var(x) + 1e-5)"): _layer_norm(x, gamma, beta, root=False),
            N_("the variance of the d numbers divides by d (jnp.var), not d - 1"):
                _layer_norm(x, gamma, beta, ddof=1),
            N_("gamma and beta are swapped: gamma multiplies, beta is added"):
                _layer_norm(x, beta, gamma),
            N_("gamma and beta are missing: after normalising, * gamma + beta"):
                _layer_norm(x, 1.0, 0.0),
            N_("the mean was not subtracted: (x - jnp.mean(x)) / ..."):
                _layer_norm(x, gamma, beta, centre=False),
        }, rtol=1e-4, atol=1e-5, want=want)
        expect_close(got, want, what, hint=N_(
            "(x - jnp.mean(x)) / jnp.sqrt(jnp.var(x) + 1e-5) * gamma + beta"))
    return N_("a vector and a constant one: mean 0, variance 1, then * gamma + beta; no NaN")


def _block(x: Any, block: Any, attention_residual: bool = True, mlp_residual: bool = True,
           post_norm: bool = False, relu: bool = True, second_norm: str = "own",
           residual_of: str = "x") -> np.ndarray:
    """A pre-norm block in float64; the options make its typical wrong versions."""
    (g1, b1), (w_qkv, w_o), (g2, b2), (w1, c1), (w2, c2) = [
        tuple(np.asarray(a, np.float64) for a in pair) for pair in block]
    x = np.asarray(x, np.float64)
    if second_norm == "first":
        g2, b2 = g1, b1

    def norm(v: np.ndarray, g: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.stack([_layer_norm(row, g, b) for row in v])

    def mlp(h: np.ndarray) -> np.ndarray:
        hidden = h @ w1.T + c1
        return (np.maximum(hidden, 0) if relu else hidden) @ w2.T + c2

    if post_norm:
        x = norm(x + _mha(x, w_qkv, w_o), g1, b1)
        return norm(x + mlp(x), g2, b2)
    h = norm(x, g1, b1)
    x = (h if residual_of == "normed" else x) * attention_residual + _mha(h, w_qkv, w_o)
    h = norm(x, g2, b2) if second_norm != "none" else x
    return (h if residual_of == "normed" else x) * mlp_residual + mlp(h)


@exercise(LESSON, 6, "transformer_block (the residuals)")
def transformer_block(student_fn: Any) -> str:
    source = _source(146)
    x = _normal(source, 5, 8)
    block = [(_normal(source, 8, scale=0.3) + 1, _normal(source, 8, scale=0.3)),
             (_normal(source, 3, 2, 4, 8, scale=0.5), _normal(source, 8, 8, scale=0.3)),
             (_normal(source, 8, scale=0.3) + 1, _normal(source, 8, scale=0.3)),
             (_normal(source, 6, 8, scale=0.5), _normal(source, 6, scale=0.3)),
             (_normal(source, 8, 6, scale=0.5), _normal(source, 8, scale=0.3))]
    want = _block(x, block)
    what = _("transformer_block(x, block) for x (5, 8), 2 heads of 4 and an MLP of 6")
    got = expect_shape(fast_call(student_fn, x, block, what=what, hints={
        ("values to unpack",): _("{what} failed unpacking: block is five pairs, "
                                 "(g1, b1), (w_qkv, w_o), (g2, b2), (w1, c1), (w2, c2)").format(
                                   what=what)}), want.shape, what)
    reject_known_wrong(got, {
        N_("the attention's residual is missing: x = x + multi_head_attention(norm(x), ...)"):
            _block(x, block, attention_residual=False),
        N_("the MLP's residual is missing: return x + mlp(norm(x))"):
            _block(x, block, mlp_residual=False),
        N_("both residuals are missing: each part's output is ADDED to x"):
            _block(x, block, attention_residual=False, mlp_residual=False),
        N_("this is post-norm (normalising after each addition); the block is pre-norm: "
           "x + attention(norm(x)), then x + mlp(norm(x))"): _block(x, block, post_norm=True),
        N_("the ReLU between the MLP's two layers is missing"): _block(x, block, relu=False),
        N_("the second layer norm used the first one's gamma and beta; it has its own, "
           "block[2]"): _block(x, block, second_norm="first"),
        N_("the MLP's input is not normalised: x + mlp(norm(x, g2, b2))"):
            _block(x, block, second_norm="none"),
        N_("the residuals add the normalised x; add the output to x itself, as it came in"):
            _block(x, block, residual_of="normed"),
    }, rtol=1e-4, atol=1e-4, want=want)
    expect_close(got, want, what, rtol=1e-4, atol=1e-4, hint=N_(
        "x = x + multi_head_attention(norm(x, g1, b1), w_qkv, w_o); then "
        "x + relu(norm(x, g2, b2) @ w1.T + c1) @ w2.T + c2"))
    return N_("5 positions of 8: attention and the MLP, each on the normalised x, each added")


@exercise(LESSON, 7, "parameters of the transformer")
def count_transformer_params(student_fn: Any) -> str:
    cases = more_when_graded(
        ((16, 49, 64, 4, 2, 128, 10), (49, 16, 32, 2, 1, 64, 10), (4, 9, 12, 3, 3, 20, 5)), 147,
        lambda draw: (int(draw.integers(2, 65)), int(draw.integers(4, 65)),
                      4 * int(draw.integers(2, 17)), 4, int(draw.integers(1, 5)),
                      int(draw.integers(8, 129)), int(draw.integers(2, 20))))
    for n, p, d, heads, depth, m, classes in cases:
        block = 2 * d + 4 * d * d + 2 * d + 2 * m * d + m + d
        want = p * d + n * d + depth * block + 2 * d + classes * (d + 1)
        what = f"count_transformer_params({n}, {p}, {d}, {heads}, {depth}, {m}, {classes})"
        got = expect_int(fast_call(student_fn, n, p, d, heads, depth, m, classes, what=what,
                                   static_argnums=tuple(range(7))), what,
                         N_("expected a whole number of parameters"))
        norms = (2 * depth + 1) * 2 * d
        wrong = {
            want + depth * (heads - 1) * 4 * d * d: _(
                "each head has the whole width d: its queries, keys and values are d / heads "
                "wide, so the heads together have 3 * d * d weights, however many there are"),
            want + depth * (heads - 1) * 3 * d * d: _(
                "each head's queries, keys and values are d / heads wide, not d: together "
                "3 * d * d weights, however many heads"),
            want - n * d: _("the position vectors are missing: one of width d per patch"),
            want - n * d + d: _("the embedding has one position vector per patch, (patches, d), "
                                "not one bias (d,)"),
            want - norms: _("the layer norms are missing: gamma and beta (d each) for two norms "
                            "per block and the last one"),
            want - 2 * d: _("the last layer norm (before the mean) has a gamma and a beta too"),
            want - depth * d * d: _("w_o is missing: (d, heads * d_k) = d * d per block"),
            want - depth * (m + d): _("the MLP's biases are missing: m and d per block"),
            want - classes: _("the classifier's bias is missing: one per class"),
            want - (depth - 1) * block: _("count the blocks' parameters depth times"),
        }
        if got != want and got in wrong:
            raise Mistake(_("{what} = {got}: {hint}").format(what=what, got=got, hint=wrong[got]))
        if got != want:
            raise Mistake(_("{what} = {got}; count the embedding (patch_pixels * d) and the "
                            "positions (patches * d); per block two norms (2 d each), w_qkv "
                            "and w_o (4 d * d), the MLP (m * d + m, d * m + d); the last norm "
                            "(2 d) and the classifier (classes * (d + 1))").format(
                              what=what, got=got))
    return N_("the count of init_transformer_params for 3 shapes; the heads add nothing")
