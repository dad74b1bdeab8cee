"""Checkers for lesson 14, attention from scratch: the student writes attention for ONE query,
lifts it with ``vmap`` to every query and every head, and writes the mask, the layer norm, the
transformer block and its parameter count.

Each is compared with a NumPy reference (float64). Every check draws its sizes (:mod:`._draws`):
every size takes another value in each case and no two sizes of a case are equal, so that a
size written as a number, a swapped axis or a missing transpose gives another shape or other
numbers; 14.4's and 14.6's keep the lesson's ``d = H * d_k``. The mask's scores reach where an
unstable softmax overflows (in float32 and float64) and the layer norm's variances where eps
shows, so that an answer gets the same verdict on every draw. The student's function runs
under ``jit`` (``fast_call``). Each check knows the usual slips: a missing, wrong or hard-coded
scale, the softmax over the wrong axis, keys and values mapped with the queries, the mask
applied after the softmax, the largest score taken over the masked ones too, ``-inf`` making
NaN of a fully masked row, heads joined without the transpose, a residual forgotten, post-norm
instead of pre-norm, a layer norm over the whole sequence, heads counted as if each had the
whole width; and the library's own function called in disguise (the exercise wants the
student's code).
"""
import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from .. import attention as library
from ..i18n import N_, _
from . import _fixtures
from ._calls import Hints, call, fast_call, generator, more_when_graded
from ._compare import (
    as_array,
    expect_close,
    expect_int,
    expect_own_code,
    expect_shape,
    reject_known_wrong,
)
from ._core import Mistake, exercise
from ._draws import draw_sizes, extreme_scores, with_variance
from ._remote import beside

LESSON = "14_attention_from_scratch"
ATTENTION = "nn_from_scratch.attention"  # the library's code the exercises ask students to write
EPS = 1e-5  # the layer norm's
EPS_ACCEPTED = (1e-6, 2e-5)  # Flax's eps to twice PyTorch's: all right; 1e-4 is not
SMALL_VARIANCE = 0.01  # where eps shows (_draws.with_variance): 1e-4 moves the answer 0.45%
TINY_VARIANCE = 1e-6  # below eps: sqrt(var + eps) and std + eps differ 3-fold


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


def _not_ready_made(student_fn: Any, args: tuple[Any, ...], what: str,
                    names: tuple[str, ...]) -> None:
    """A Mistake if the answer calls JAX's ready-made ``names`` (``jax.nn.softmax``,
    ``jax.nn.dot_product_attention``...): right as its numbers are, the exercise wants the
    student's own code. Asked last, once the numbers are right, so that a wrong answer written
    with them hears of its mistake first."""
    expect_own_code(student_fn, args, what, "jax", names, calls=_fixtures.ready_made_calls,
                    message=_(
        "{what} calls {name}, ready-made in JAX: the exercise wants your own code"))


def _hard_coded_scale(got: np.ndarray, want: np.ndarray, q: Any, k: Any, v: Any,
                      size: str) -> None:
    """A Mistake if ``got`` is attention with the scores divided by a number other than
    sqrt(d): a size written as a number, right for one shape only (``size``: d's name)."""
    d = np.asarray(q).shape[-1]
    sizes = ((N_("the number of keys"), np.asarray(k).shape[-2]),
             (N_("the size of a value"), np.asarray(v).shape[-1]))
    for n, sign in ((d - 1, "-"), (d + 1, "+")):  # a walk: query.shape[0] - 1 was "a value's"
        if n >= 1 and np.allclose(got, _attention(q, k, v, scale=1 / math.sqrt(n)), rtol=1e-4,
                                  atol=1e-5):
            also = [_(name) for name, size in sizes if size == n]
            raise Mistake(_("the scores are divided by sqrt({n}), sqrt({size} {sign} 1){also}: "
                            "off by one, or a number written in your code? The scale is the "
                            "square root of {size} itself, the size of a query and a key, read "
                            "from the input: here sqrt({d}) = {root:.4g}").format(
                              n=n, size=size, sign=sign, d=d, root=math.sqrt(d),
                              also=_(" (or {name}, which is {n} here too)").format(
                                  name=also[0], n=n) if also else ""))
    for name, n in sizes:
        wrong = _attention(q, k, v, scale=1 / math.sqrt(n))
        if n != d and np.allclose(got, wrong, rtol=1e-4, atol=1e-5):  # a size, the wrong one
            raise Mistake(_("the scores are divided by sqrt({n}), {name}; the scale is the "
                            "square root of {size}, the size of a query and a key: here "
                            "sqrt({d}) = {root:.4g}").format(n=n, name=_(name), size=size, d=d,
                                                              root=math.sqrt(d)))
    for divisor in sorted({*(math.sqrt(n) for n in range(1, 257)), *range(1, 17)}):
        if np.isclose(divisor, math.sqrt(d)):
            continue
        wrong = _attention(q, k, v, scale=1 / divisor)
        if np.allclose(got, wrong, rtol=1e-4, atol=1e-5) and not np.allclose(
                wrong, want, rtol=1e-4, atol=1e-5):
            raise Mistake(_("the scores are divided by {divisor:.4g}, a number written in your "
                            "code; here {size} is {d}, so divide by sqrt({d}) = {root:.4g}: read "
                            "the size from the input (.shape), so that it is right for every "
                            "size").format(divisor=divisor, size=size, d=d, root=math.sqrt(d)))


@exercise(LESSON, 1, "attention for one query")
def attention(student_fn: Any) -> str:
    source = generator(140)
    for number, s in enumerate(draw_sizes(source, 3, d=(2, 9), t=(3, 9), d_v=(2, 7))):
        d, t, d_v = s["d"], s["t"], s["d_v"]
        query, keys, values = _normal(source, d), _normal(source, t, d), _normal(source, t, d_v)
        top = int(np.argmax(np.asarray(keys) @ np.asarray(query)))
        keys = keys.at[(top + 1) % t].set(keys[top])  # two best keys alike: no answer is one value
        want = _attention(query, keys, values)
        what = _("attention(query, keys, values) for a query ({d},), keys ({t}, {d}) and values "
                 "({t}, {d_v})").format(d=d, t=t, d_v=d_v)
        if number == 0:
            expect_own_code(student_fn, (query, keys, values), what, ATTENTION,
                            ("attention", "attention_weights"))
            first = (query, keys, values), what
        got = as_array(fast_call(student_fn, query, keys, values, what=what, hints={
            "out of bounds for array of dimension 0": _(
                "{what} failed: the softmax got ONE number (a sum?); it takes the scores, one "
                "per key, keys @ query, ({t},)").format(what=what, t=t),
            "value shape should be": _(
                "{what} failed in jax.nn.dot_product_attention, which is ready-made (and wants "
                "values as wide as the keys): the exercise wants your own code, "
                "softmax(keys @ query / sqrt(d)) @ values").format(what=what),
            ("dot_general requires", "matmul", "Incompatible shapes"): _(
                "{what} failed: the scores are keys @ query, ({t},), one per key; the answer is "
                "weights @ values, ({d_v},)").format(what=what, t=t, d_v=d_v)}))
        q, k, v = (np.asarray(a, np.float64) for a in (query, keys, values))
        scores = k @ q
        if got.shape == (d,):
            raise Mistake(_("returned shape ({d},), a key's size: you averaged the keys; the "
                            "answer is the weighted average of the VALUES, weights @ "
                            "values").format(d=d))
        if got.shape == (t,):
            if np.all(got >= 0) and np.isclose(np.sum(got), 1, rtol=1e-4):
                raise Mistake(_("returned shape ({t},), one number per key: those are the "
                                "weights; the answer is their average of the values, weights "
                                "@ values").format(t=t))
            raise Mistake(_("returned shape ({t},), one number per key: the sum ran over the "
                            "wrong axis. The answer sums over the KEYS, one number per "
                            "feature of a value: weights @ values, ({d_v},)").format(t=t, d_v=d_v))
        got = expect_shape(got, want.shape, what)
        if any(np.allclose(got, row, rtol=1e-4, atol=1e-5) for row in v):
            raise Mistake(_("returned the value of one key alone (a hard lookup, "
                            "values[argmax]); attention averages ALL the values, weighted by "
                            "the softmax of the scores"))
        reject_known_wrong(got, {
            N_("the scores are not scaled: divide keys @ query by sqrt(d), the size of the "
               "query, so the softmax does not saturate"): _attention(q, k, v, scale=1.0),
            N_("the scores are divided by d; the scale is sqrt(d): "
               "keys @ query / jnp.sqrt(query.shape[0])"): _attention(q, k, v, scale=1 / d),
            N_("the scores are multiplied by sqrt(d); divide by it"):
                _attention(q, k, v, scale=np.sqrt(d)),
            N_("the weights are the scores divided by their sum; a softmax takes exp first, "
               "exp(s) / sum(exp(s)), so that every weight is positive"):
                scores / np.sqrt(d) / np.sum(scores / np.sqrt(d)) @ v,
        }, rtol=1e-4, atol=1e-5, want=want)
        _hard_coded_scale(got, want, q, k, v, "d")
        expect_close(got, want, what, hint=N_("softmax(keys @ query / sqrt(d)) @ values"))
    _not_ready_made(student_fn, *first, ("dot_product_attention",))
    return N_("three queries of other sizes against other keys: scaled scores, softmax, the "
              "values averaged")


@exercise(LESSON, 2, "self-attention (vmap over the queries)")
def self_attention(student_fn: Any) -> str:
    source = generator(142)
    for number, s in enumerate(draw_sizes(source, 2, t=(3, 8), d=(2, 8), d_k=(2, 7),
                                          d_v=(2, 7))):
        t, d, d_k, d_v = s["t"], s["d"], s["d_k"], s["d_v"]
        x = _normal(source, t, d)
        w_q, w_k, w_v = (_normal(source, n, d, scale=1 / math.sqrt(d)) for n in (d_k, d_k, d_v))
        q, k, v = (np.asarray(x, np.float64) @ np.asarray(w, np.float64).T
                   for w in (w_q, w_k, w_v))
        want = _attention(q, k, v)
        what = _("self_attention(x, w_q, w_k, w_v) for x ({t}, {d}), w_q and w_k ({d_k}, {d}), "
                 "w_v ({d_v}, {d})").format(t=t, d=d, d_k=d_k, d_v=d_v)
        if number == 0:
            expect_own_code(student_fn, (x, w_q, w_k, w_v), what, ATTENTION, ("self_attention",
                                                            "multi_head_attention"))
            first = (x, w_q, w_k, w_v), what
        got = as_array(fast_call(student_fn, x, w_q, w_k, w_v, what=what, hints={
            "len(in_axes)": _("{what} failed in vmap: in_axes has one entry per argument of "
                              "attention, three: vmap(attention, in_axes=(0, None, None))").format(
                                what=what),
            "value shape should be": _(
                "{what} failed in jax.nn.dot_product_attention, which is ready-made: the "
                "exercise wants your own code, vmap(attention, in_axes=(0, None, None))").format(
                    what=what),
            (f"keys ({d_k}, {t})", f"query ({t},)", f"got ({t},) and ({d_k},)"): _(
                "{what} failed: the projections are transposed. x is (T, d) and w_q is (d_k, "
                "d), so the queries of every position are x @ w_q.T, ({t}, {d_k}), one row per "
                "position; w_q @ x.T is ({d_k}, {t}), one row per feature").format(
                  what=what, t=t, d_k=d_k),
            ("one value per key", "takes ONE query", "out of bounds for array of dimension 0",
             "must have ndim at least 1, but it has ndim 0"): _(
                "{what} failed inside attention, which got ONE key where it takes them all: vmap "
                "mapped the keys and values too. Map the queries only: "
                "vmap(attention, in_axes=(0, None, None))").format(what=what),
            ("dot_general requires", "matmul", "Incompatible shapes"): _(
                "{what} failed: with the course's layout, the queries of every position are "
                "x @ w_q.T, ({t}, {d_k}); the keys x @ w_k.T, ({t}, {d_k}); the values "
                "x @ w_v.T, ({t}, {d_v})").format(what=what, t=t, d_k=d_k, d_v=d_v)}))
        got = expect_shape(got, want.shape, what)
        reject_known_wrong(got, {
            N_("every position got its own value back: vmap mapped the keys and values too, so "
               "query t saw key t alone. Share them: vmap(attention, in_axes=(0, None, None))"):
                v,
            N_("the softmax ran down the columns (axis 0): each ROW of the scores belongs to "
               "one query and must sum to 1, jax.nn.softmax(scores, axis=-1)"):
                _attention(q, k, v, axis=0),
            N_("queries and keys swapped: scores[i, j] is query i against key j, q @ k.T"):
                _softmax(k @ q.T / np.sqrt(d_k)) @ v,
            N_("the scores are not scaled: divide by sqrt(d_k), the size of a query"):
                _attention(q, k, v, scale=1.0),
            N_("the scores are scaled by the width of x; the scale is sqrt(d_k), the size of a "
               "query and a key"): _attention(q, k, v, scale=1 / np.sqrt(d)),
        }, rtol=1e-4, atol=1e-5, want=want)
        _hard_coded_scale(got, want, q, k, v, "d_k")
        expect_close(got, want, what, hint=N_("q, k, v = x @ w_q.T, x @ w_k.T, x @ w_v.T; then "
                                              "vmap(attention, in_axes=(0, None, None))(q, k, "
                                              "v)"))
    _not_ready_made(student_fn, *first, ("dot_product_attention",))
    return N_("two sequences of other lengths and widths: every query against all the keys")


def _masked_case(source: np.random.Generator, t: int, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """Scores (float32) and a mask ``(t,)`` for one case of 14.3. ``"some"``: a few hidden;
    ``"large"`` and ``"small"``: the visible scores beyond what exp holds (above 750, or all
    below -750), the hidden ones below them; ``"hidden above"``: a hidden score far above every
    visible one; ``"none"``, ``"all"``: nothing hidden, everything hidden."""
    scores = 2.0 * source.normal(size=t)
    mask = np.ones(t, bool)
    hidden = source.permutation(t)[:int(source.integers(1, t - 3))]
    if kind in ("some", "large", "small", "hidden above"):
        mask[hidden] = False
    if kind in ("large", "small"):
        visible = extreme_scores(source, int(mask.sum()), near=2, high=kind == "large")
        scores[mask] = visible
        scores[~mask] = visible.max() - source.uniform(100.0, 3000.0, size=len(hidden))
    if kind == "hidden above":
        scores[~mask] = scores[mask].max() + source.uniform(1500.0, 2500.0, size=len(hidden))
    if kind == "all":
        mask[:] = False
    return scores.astype(np.float32), mask


MASK_CASES = ("some", "large", "hidden above", "small", "none", "all")


def _masked_gradient(student_fn: Any, scores: np.ndarray, mask: np.ndarray, hints: Hints,
                     what: str, source: np.random.Generator) -> None:
    """A Mistake if the gradient of a weighted sum of the student's weights with respect to the
    scores is NaN or wrong (stop_gradient), for an answer that JAX can differentiate (one
    written with NumPy or a Python `if` has no gradient to check: its numbers are right)."""
    weights = source.normal(size=len(scores)).astype(np.float32)
    args = (jnp.asarray(scores), jnp.asarray(mask))
    try:
        got = as_array(call(beside(student_fn, jax.jit, beside(
            student_fn, jax.grad, beside(student_fn, _fixtures.weighted, student_fn, weights))),
            *args, hints=hints, what=_("the gradient of sum(weights * masked_softmax(scores, "
                                       "mask)) for {what}").format(what=what)))
    except Mistake as err:
        if isinstance(err.__cause__, (jax.errors.TracerArrayConversionError,
                                      jax.errors.TracerBoolConversionError,
                                      jax.errors.ConcretizationTypeError)):
            return  # NumPy or a Python `if`: right numbers, and no gradient at all
        raise
    if not np.isfinite(got).all():
        raise Mistake(_(
            "{what}: the weights are right, but their gradient with respect to the scores is "
            "NaN, and training would take it. jnp.where computes both its branches, and the one "
            "it drops still meets inf or 0 / 0 on the way back (exp of a hidden score far above "
            "the rest, or a sum of 0 divided by). Make each operation's input harmless first: "
            "hide the scores before exp, jnp.where(mask, scores, -jnp.inf), and divide by "
            "jnp.where(total > 0, total, 1.0)").format(what=what))
    want = np.asarray(jax.grad(lambda s: jnp.sum(  # the library's softmax, hidden first
        library.softmax(jnp.where(args[1], s, -jnp.inf)) * weights))(args[0]))
    if not np.allclose(got, want, rtol=1e-3, atol=1e-5):
        raise Mistake(_("{what}: the weights are right, but not their gradient with respect to "
                        "the scores (off by up to {off:.2g}): a jax.lax.stop_gradient, or a "
                        "value computed outside JAX? Training follows the gradient of exactly "
                        "the weights you return").format(
                          what=what, off=float(np.max(np.abs(got - want)))))


@exercise(LESSON, 3, "the mask (masked_softmax)")
def masked_softmax(student_fn: Any) -> str:
    source = generator(143)
    for kind, s in zip(MASK_CASES, draw_sizes(source, len(MASK_CASES), t=(6, 13))):
        scores, mask = _masked_case(source, s["t"], kind)
        s64 = scores.astype(np.float64)
        want = (np.where(mask, _softmax(np.where(mask, s64, -np.inf)), 0.0) if mask.any()
                else 0 * s64)
        what = _("masked_softmax(scores, mask) for scores {scores} and mask {mask}").format(
            scores=np.round(s64, 2).tolist(), mask=mask.astype(int).tolist())
        if kind == "some":
            expect_own_code(student_fn, (jnp.asarray(scores), jnp.asarray(mask)), what, ATTENTION,
                            ("softmax", "attention_weights", "attention"))
            first = (jnp.asarray(scores), jnp.asarray(mask)), what
        hints: Hints = {
            ("Incompatible shapes", "broadcast"): _(
                "{what} failed on shapes: a size written as a number? The weights have one "
                "entry per score, whatever their number: jnp.zeros_like(scores)").format(
                    what=what),
            ("zero-size array", "NonConcreteBooleanIndex", "boolean indices"): _(
                "{what} failed: scores[mask] keeps only the visible scores (none, when all are "
                "hidden), and jit refuses an index whose size depends on values. Keep every "
                "position: jnp.where(mask, scores, -jnp.inf)").format(what=what)}
        got = expect_shape(fast_call(student_fn, jnp.asarray(scores), jnp.asarray(mask),
                                     what=what, hints=hints), want.shape, what)
        if got.dtype == bool:
            raise Mistake(_("{what} returned True and False: that is the mask; return the "
                            "weights, the softmax of the scores with the hidden ones set to "
                            "-inf first (jnp.where(mask, scores, -jnp.inf))").format(what=what))
        got = got.astype(np.float64)
        if np.isnan(got).any() and kind == "all":
            raise Mistake(_("{what} gave NaN: with every score -inf, the largest is -inf too and "
                            "-inf - (-inf) is NaN. A query that may see nothing gets weights "
                            "of 0: replace a largest score that is not finite by 0, and divide "
                            "by the sum only where it is > 0 (jnp.where)").format(what=what))
        if kind == "hidden above" and (not np.isfinite(got).all() or got[mask].sum() < 0.5):
            raise Mistake(_("{what} gave {got}: the largest score was taken over ALL the "
                            "scores, hidden ones included (or the softmax ran before the mask "
                            "and was divided again by the visible sum). A hidden score far "
                            "above the visible ones then makes every visible exp 0. Hide the "
                            "masked scores first (-inf), then take the largest of what is "
                            "left").format(what=what, got=np.round(got, 3).tolist()))
        if not np.isfinite(got).all():
            raise Mistake(_("{what} gave {got}: exp of a float32 above about 88 is inf (of a "
                            "float64, above 710), and exp of one below about -104 is 0, so inf "
                            "/ inf or 0 / 0 is NaN. Hide the masked scores first (-inf), then "
                            "subtract the LARGEST score before exp (not the mean or the "
                            "smallest: it cancels out), so that every exp is at most 1 and the "
                            "largest is exactly 1").format(what=what,
                                                             got=np.round(got, 3).tolist()))
        if kind == "all" and np.allclose(got, 1 / len(s64), atol=1e-4):
            raise Mistake(_("{what} gave every position 1/{n}: a large negative number instead "
                            "of -inf still counts once every score has it. A query that may see "
                            "nothing gets weights of 0").format(what=what, n=len(s64)))
        plain = _softmax(s64)
        reject_known_wrong(got, {
            N_("the mask was applied after the softmax: the weights left no longer sum to 1. "
               "Put -inf into the masked SCORES, then take the softmax"): plain * mask,
            N_("the mask is the wrong way round: True is where the query MAY look"):
                np.where(~mask, _softmax(np.where(~mask, s64, -np.inf)), 0.0) if (~mask).any()
                else np.nan,
            N_("the mask was not used: masked positions must get weight 0"): plain,
        }, rtol=1e-4, atol=1e-6, want=want)
        expect_close(got, want, what, atol=1e-6, hint=N_(
            "jnp.where(mask, scores, -jnp.inf), minus the largest, exp, divided by the sum"))
        if kind in ("hidden above", "all", "some"):  # where NaN hides in a branch dropped
            _masked_gradient(student_fn, scores, mask, hints, what, source)
    _not_ready_made(student_fn, *first, ("softmax", "log_softmax", "logsumexp",
                                         "dot_product_attention"))
    return N_("6 masks (some hidden; visible scores beyond what exp holds, above and below; a "
              "hidden score far above; none hidden; all hidden): 0 where masked, no overflow, "
              "no NaN, in the weights or their gradient")


def _mha(x: Any, w_qkv: Any, w_o: Any, join: str = "heads first", swap: bool = False,
         project: str = "w_o.T") -> np.ndarray:
    """Multi-head attention in float64; ``join``: how the heads are joined per position
    (the right way, or without the transpose, or head-major); ``swap``: keys and queries;
    ``project``: ``"w_o.T"``, or ``"w_o"`` (not transposed), or ``"none"``."""
    x, w_qkv, w_o = (np.asarray(a, np.float64) for a in (x, w_qkv, w_o))
    w_q, w_k, w_v = w_qkv[[1, 0, 2]] if swap else w_qkv
    heads = np.stack([_attention(x @ q.T, x @ k.T, x @ v.T) for q, k, v in zip(w_q, w_k, w_v)])
    t = x.shape[0]  # heads: (H, T, d_k)
    joined = {"heads first": heads.transpose(1, 0, 2).reshape(t, -1),
              "no transpose": heads.reshape(t, -1),
              "interleaved": heads.transpose(1, 2, 0).reshape(t, -1)}[join]
    return {"w_o.T": lambda: joined @ w_o.T, "w_o": lambda: joined @ w_o,
            "none": lambda: joined}[project]()


def _heads_sizes(source: np.random.Generator, cases: int, mlp: bool = False
                 ) -> list[dict[str, int]]:
    """Sizes with the lesson's d = heads * d_k (added as ``"d"``), unequal to every other;
    ``mlp``: and an MLP's width ``"m"``."""
    def keep(s: dict[str, int]) -> bool:
        return s["heads"] * s["d_k"] not in {s["t"], s.get("m")}

    drawn = (draw_sizes(source, cases, heads=(2, 4), d_k=(2, 5), t=(3, 8), m=(3, 12), keep=keep)
             if mlp else draw_sizes(source, cases, heads=(2, 4), d_k=(2, 5), t=(3, 8), keep=keep))
    return [{**s, "d": s["heads"] * s["d_k"]} for s in drawn]


@exercise(LESSON, 4, "multi-head attention (vmap over the heads)")
def multi_head_attention(student_fn: Any) -> str:
    source = generator(144)
    for number, s in enumerate(_heads_sizes(source, 2)):
        t, heads, d_k, d = s["t"], s["heads"], s["d_k"], s["d"]
        x = _normal(source, t, d)
        w_qkv = _normal(source, 3, heads, d_k, d, scale=1 / math.sqrt(d))
        w_o = _normal(source, d, d, scale=1 / math.sqrt(d))
        want = _mha(x, w_qkv, w_o)
        what = _("multi_head_attention(x, w_qkv, w_o) for x ({t}, {d}), w_qkv (3, {h}, {d_k}, "
                 "{d}) ({h} heads of size {d_k}) and w_o ({d}, {d})").format(
                   t=t, d=d, h=heads, d_k=d_k)
        if number == 0:
            expect_own_code(student_fn, (x, w_qkv, w_o), what, ATTENTION, ("multi_head_attention",))
            first = (x, w_qkv, w_o), what
        got = as_array(fast_call(student_fn, x, w_qkv, w_o, what=what, hints={
            ("inconsistent sizes", "vmap got"): _(
                "{what} failed in vmap: it mapped the sequence too ({t} positions against {h} "
                "heads). Every head sees the WHOLE sequence: vmap(self_attention, "
                "in_axes=(None, 0, 0, 0))").format(what=what, t=t, h=heads),
            ("positional argument", "values to unpack"): _(
                "{what} failed unpacking w_qkv: it is (3, H, d_k, d), the queries', keys' and "
                "values' weights first, then the heads. w_q, w_k, w_v = w_qkv gives three "
                "(H, d_k, d); head h's are w_q[h], w_k[h], w_v[h], and vmap over the heads "
                "needs no loop").format(what=what),
            ("dot_general requires", "matmul", "Incompatible shapes"): _(
                "{what} failed multiplying. With the course's (n_out, n_in) weights, head h's "
                "queries, keys and values are x @ w_q[h].T and so on, ({t}, {d_k}) each, and "
                "its scores q @ k.T; the heads give ({h}, {t}, {d_k}), ({t}, {d}) joined per "
                "position, and w_o is ({d}, {d}), so the output is joined @ w_o.T").format(
                    what=what, h=heads, t=t, d_k=d_k, d=d),
            ("cannot reshape", "reshape total size"): _(
                "{what} failed in a reshape: the heads give ({h}, {t}, {d_k}), and joined per "
                "position they are ({t}, {d}). A size written as a number is right for one "
                "shape only: read them from the input, .transpose(1, 0, 2).reshape(x.shape[0], "
                "-1)").format(what=what, h=heads, t=t, d_k=d_k, d=d)}))
        if got.shape in ((t, d_k), (heads, t, d_k)):
            raise Mistake(_("returned {shape}: the heads are JOINED side by side for every "
                            "position, (T, H * d_k), not summed, averaged or left stacked").format(
                              shape=got.shape))
        got = expect_shape(got, want.shape, what)
        reject_known_wrong(got, {
            N_("the heads were joined without the transpose: heads.reshape(T, -1) puts head "
               "0's first positions in row 0. Make it (T, H, d_k) first: heads.transpose(1, 0, "
               "2)"): _mha(x, w_qkv, w_o, join="no transpose"),
            N_("the heads' numbers are interleaved: for each position put head 0's d_k numbers "
               "first, then head 1's: heads.transpose(1, 0, 2).reshape(T, -1)"):
                _mha(x, w_qkv, w_o, join="interleaved"),
            N_("queries and keys swapped: w_qkv[0] holds the queries' weights, w_qkv[1] the "
               "keys', w_qkv[2] the values'"): _mha(x, w_qkv, w_o, swap=True),
            N_("the heads are joined, but not mixed back by w_o: multiply by it, joined @ "
               "w_o.T"): _mha(x, w_qkv, w_o, project="none"),
            N_("w_o is (d, H * d_k), the course's (n_out, n_in): the output is joined @ w_o.T, "
               "not joined @ w_o"): _mha(x, w_qkv, w_o, project="w_o"),
        }, rtol=1e-4, atol=1e-5, want=want)
        expect_close(got, want, what, hint=N_(
            "vmap(self_attention, in_axes=(None, 0, 0, 0))(x, *w_qkv), then "
            ".transpose(1, 0, 2).reshape(T, -1) @ w_o.T"))
    _not_ready_made(student_fn, *first, ("dot_product_attention",))
    return N_("two sequences, other heads of other sizes (d = H * d_k): mapped over the stacked "
              "weights, joined, projected")


def _layer_norm(x: Any, gamma: Any, beta: Any, eps: float = EPS, ddof: int = 0,
                root: bool = True, centre: bool = True, count: int | None = None) -> np.ndarray:
    """Layer norm of ONE vector in float64; ``count``: the mean and variance divide by that
    number instead of ``x``'s size (a width written as a number)."""
    x = np.asarray(x, np.float64)
    n = len(x) if count is None else count
    mean = np.sum(x) / n
    spread = np.sum((x - mean) ** 2) / (n - ddof) + eps
    return ((x - mean if centre else x) / (np.sqrt(spread) if root else spread)
            * np.asarray(gamma, np.float64) + np.asarray(beta, np.float64))


def _eps_used(got: np.ndarray, x: Any, gamma: Any, beta: Any) -> float:
    """The eps that a layer norm returning ``got`` for ``x`` used, from its most spread entry."""
    x64 = np.asarray(x, np.float64)
    i = int(np.argmax(np.abs(x64 - x64.mean())))
    normed = (got[i] - float(beta[i])) / float(gamma[i])
    return float(((x64[i] - x64.mean()) / normed) ** 2 - x64.var()) if normed else math.inf


def _exact_constant(source: np.random.Generator, d: int) -> float:
    """A value whose d copies have, in float32, jnp.mean exactly that value and jnp.var 0:
    the rounding of a mean (x - mean about 1e-7) divided by sqrt(1e-6) would be an error."""
    for value in source.permutation(np.arange(1, 33)) / 4 * source.choice([-1, 1]):
        x = jnp.full(d, value, jnp.float32)
        if float(jnp.mean(x)) == value and float(jnp.var(x)) == 0.0:
            return float(value)
    return 0.0  # x - mean is 0 whatever the rounding


def _far_from_zero(source: np.random.Generator, d: int) -> np.ndarray:
    """A vector ``(d,)`` of variance 1 and a mean between 250 and 350 (float32)."""
    return with_variance(source, d, 1.0, source.uniform(250.0, 350.0))


@exercise(LESSON, 5, "layer_norm")
def layer_norm(student_fn: Any) -> str:
    source = generator(145)
    for kind, s in zip(("spread", "small variance", "constant", "tiny variance", "large mean"),
                       draw_sizes(source, 5, d=(3, 12))):
        d = s["d"]
        gamma = jnp.asarray(source.uniform(0.5, 1.5, size=d), jnp.float32)
        beta = jnp.asarray(source.uniform(-0.5, 0.5, size=d), jnp.float32)
        if kind == "spread":  # a variance near 9: hides eps
            drawn = 3.0 * source.normal(size=d) + 2.0
        elif kind == "small variance":
            drawn = with_variance(source, d, SMALL_VARIANCE, source.uniform(-1, 1))
        elif kind == "tiny variance":  # below eps: eps added outside the root shows
            drawn = with_variance(source, d, TINY_VARIANCE)  # centred: float32 resolves it
        elif kind == "large mean":  # jnp.mean(x * x) - mean ** 2 cancels away float32's digits
            drawn = _far_from_zero(source, d)
        else:
            drawn = np.full(d, _exact_constant(source, d))
        x = jnp.asarray(drawn, jnp.float32)
        want = _layer_norm(x, gamma, beta)
        what = _("layer_norm(x, gamma, beta) for x {x}").format(
            x=np.round(np.asarray(x, np.float64), 3).tolist())
        if kind == "spread":
            expect_own_code(student_fn, (x, gamma, beta), what, ATTENTION, ("layer_norm",))
            first = (x, gamma, beta), what
        got = expect_shape(fast_call(student_fn, x, gamma, beta, what=what, hints={
            ("out of bounds for array of dimension 1", "tuple index out of range"): _(
                "{what} failed: layer norm takes ONE vector x ({d},), and its mean and variance "
                "are over its {d} numbers: jnp.mean(x), jnp.var(x), no axis. A sequence (T, d) "
                "is normalised position by position with vmap (exercise 14.6)").format(
                  what=what, d=d)}), want.shape, what).astype(np.float64)
        if np.isnan(got).any():
            raise Mistake(_("{what} gave NaN: every entry of x is the same, so the variance is "
                            "0 and (x - mean) / sqrt(var) is 0 / 0. Add eps = 1e-5 to the "
                            "variance under the square root").format(what=what))
        if kind == "large mean":  # right on the others: float32's rounding of x - mean is
            # ~3e-5 here, and eps cannot show. One x of this kind lets one answer in ten of
            # mean(x * x) - mean ** 2 through, its roundings cancelling by chance: six of them
            # (one compile, their width alike) let one in a million
            for more in range(6):
                if more:
                    x = jnp.asarray(_far_from_zero(source, d), jnp.float32)
                    want = _layer_norm(x, gamma, beta)
                    what = _("layer_norm(x, gamma, beta) for x {x}").format(
                        x=np.round(np.asarray(x, np.float64), 3).tolist())
                    got = expect_shape(fast_call(student_fn, x, gamma, beta, what=what),
                                       want.shape, what).astype(np.float64)
                if not np.allclose(got, want, rtol=1e-4, atol=2e-4):
                    raise Mistake(_(
                        "{what}: this x has a mean near {mean:.0f} and a variance of 1, and your "
                        "answer is off by up to {off:.2g}. A variance computed as mean(x * x) - "
                        "mean ** 2 (jax.nn.standardize computes it so too) subtracts two numbers "
                        "near {square:.0f} that float32 holds to a few hundredths: compute it "
                        "from x - mean, jnp.var(x) or jnp.mean((x - mean) ** 2)").format(
                          what=what, mean=float(np.mean(np.asarray(x, np.float64))),
                          off=float(np.max(np.abs(got - want))),
                          square=float(np.mean(np.asarray(x, np.float64)) ** 2)))
            continue
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
            # (where the variance is far above eps: below it, d * var + eps is an eps allowed)
            N_("the variance is the MEAN of the squared deviations, not their sum: "
               "jnp.var(x), or jnp.mean((x - mean) ** 2)"):  # a sum: divided by d - (d - 1)
                _layer_norm(x, gamma, beta, ddof=d - 1) if kind in ("spread", "small variance")
                else np.nan,
        }, rtol=1e-4, atol=1e-5, want=want)
        if kind == "tiny variance":  # std + eps is sqrt(var + eps'), eps' about 2e-8 here
            x64 = np.asarray(x, np.float64)
            reject_known_wrong(got, {
                N_("eps was added to the standard deviation, outside the square root; it goes "
                   "under it, with the variance: jnp.sqrt(jnp.var(x) + 1e-5)"):
                    _layer_norm(x, gamma, beta, eps=float((x64.std() + EPS) ** 2 - x64.var()))},
                rtol=1e-4, atol=1e-5, want=want)
        for n in range(2, 65):
            wrong = _layer_norm(x, gamma, beta, count=n)
            if np.allclose(got, wrong, rtol=1e-4, atol=1e-5) and not np.allclose(
                    wrong, want, rtol=1e-4, atol=1e-5):
                raise Mistake(_("{what}: the mean and variance divide by {n}, a number written "
                                "in your code; this x has {d} numbers. Use jnp.mean(x) and "
                                "jnp.var(x), right for every width").format(what=what, n=n, d=d))
        low, high = (_layer_norm(x, gamma, beta, eps=e) for e in EPS_ACCEPTED)
        slack = 1e-4 * np.abs(want) + 1e-5  # float32's rounding, beside eps's band
        if np.all((got >= np.minimum(low, high) - slack)
                  & (got <= np.maximum(low, high) + slack)):
            continue
        # no eps at all reads as a tiny eps of either sign, float32's rounding: say eps = 0
        used = max(_eps_used(got, x, gamma, beta), 0.0)
        if np.isfinite(used) and np.allclose(got, _layer_norm(x, gamma, beta, eps=used), rtol=1e-4,
                                    atol=1e-5):
            raise Mistake(_("{what}: your answer is a layer norm with eps = {eps:.1g} (this x "
                            "has a variance of {var:.3g}). Add eps = 1e-5 to the variance "
                            "(anything from 1e-6 to 2e-5 passes)").format(
                              what=what, var=float(np.var(np.asarray(x, np.float64))), eps=used))
        expect_close(got, want, what, hint=N_(
            "(x - jnp.mean(x)) / jnp.sqrt(jnp.var(x) + 1e-5) * gamma + beta"))
    _not_ready_made(student_fn, *first, ("standardize", "normalize"))
    return N_("vectors of five widths, two with variances of 0.01 and 1e-6 (where eps "
              "shows), a constant one and one far from 0: mean 0, variance 1, then * gamma + "
              "beta; no NaN")


def _block(x: Any, block: Any, attention_residual: bool = True, mlp_residual: bool = True,
           post_norm: bool = False, relu: bool = True, second_norm: str = "own",
           residual_of: str = "x", whole: bool = False, mlp_of_input: bool = False,
           second_bias: bool = True) -> np.ndarray:
    """A pre-norm block in float64; the options make its typical wrong versions (``whole``: the
    layer norm over the whole (T, d) x at once, not position by position; ``mlp_of_input``:
    the MLP reads the norm of the x that came in, not of x after attention)."""
    (g1, b1), (w_qkv, w_o), (g2, b2), (w1, c1), (w2, c2) = [
        tuple(np.asarray(a, np.float64) for a in pair) for pair in block]
    x = np.asarray(x, np.float64)
    if second_norm == "first":
        g2, b2 = g1, b1

    def norm(v: np.ndarray, g: np.ndarray, b: np.ndarray) -> np.ndarray:
        if whole:
            return (v - v.mean()) / np.sqrt(v.var() + EPS) * g + b
        return np.stack([_layer_norm(row, g, b) for row in v])

    def mlp(h: np.ndarray) -> np.ndarray:
        hidden = h @ w1.T + c1
        return (np.maximum(hidden, 0) if relu else hidden) @ w2.T + c2 * second_bias

    if post_norm:
        x = norm(x + _mha(x, w_qkv, w_o), g1, b1)
        return norm(x + mlp(x), g2, b2)
    h = norm(x, g1, b1)
    came_in = x
    x = (h if residual_of == "normed" else x) * attention_residual + _mha(h, w_qkv, w_o)
    h = norm(came_in if mlp_of_input else x, g2, b2) if second_norm != "none" else x
    return (h if residual_of == "normed" else x) * mlp_residual + mlp(h)


@exercise(LESSON, 6, "transformer_block (the residuals)")
def transformer_block(student_fn: Any) -> str:
    source = generator(146)
    for number, s in enumerate(_heads_sizes(source, 2, mlp=True)):
        t, heads, d_k, d, m = s["t"], s["heads"], s["d_k"], s["d"], s["m"]
        x = _normal(source, t, d)
        block = [(_normal(source, d, scale=0.3) + 1, _normal(source, d, scale=0.3)),
                 (_normal(source, 3, heads, d_k, d, scale=1.4 / math.sqrt(d)),
                  _normal(source, d, d, scale=0.85 / math.sqrt(d))),
                 (_normal(source, d, scale=0.3) + 1, _normal(source, d, scale=0.3)),
                 (_normal(source, m, d, scale=1.4 / math.sqrt(d)), _normal(source, m, scale=0.3)),
                 (_normal(source, d, m, scale=1.4 / math.sqrt(m)), _normal(source, d, scale=0.3))]
        want = _block(x, block)
        what = _("transformer_block(x, block) for x ({t}, {d}), {h} heads of {d_k} and an MLP "
                 "of {m}").format(t=t, d=d, h=heads, d_k=d_k, m=m)
        if number == 0:
            expect_own_code(student_fn, (x, block), what, ATTENTION, ("transformer_block",))
        got = expect_shape(fast_call(student_fn, x, block, what=what, hints={
            ("values to unpack",): _("{what} failed unpacking: block is five pairs, "
                                     "(g1, b1), (w_qkv, w_o), (g2, b2), (w1, c1), (w2, c2)").format(
                                       what=what),
            ("add got incompatible shapes",): _(
                "{what} failed adding: block is five pairs, (g1, b1), (w_qkv, w_o), (g2, b2), "
                "(w1, c1), (w2, c2), each layer's weight beside its own bias: c1 ({m},) goes "
                "with w1 ({m}, {d})").format(what=what, m=m, d=d),
            "at least one non-None": _(
                "{what} failed in vmap: nothing was mapped. Map the positions of x, share gamma "
                "and beta: vmap(layer_norm, in_axes=(0, None, None))").format(what=what),
            ("cannot reshape", "reshape total size"): _(
                "{what} failed in a reshape: a size written as a number is right for one shape "
                "only; here x is ({t}, {d}): read sizes from the input, x.shape").format(
                    what=what, t=t, d=d),
            ("inconsistent sizes", "vmap got"): _(
                "{what} failed in vmap: vmap(layer_norm) maps every argument on its axis 0, "
                "gamma and beta too ({d} numbers against {t} positions). Every position shares "
                "them: vmap(layer_norm, in_axes=(0, None, None))").format(what=what, d=d, t=t),
            ("dot_general requires", "matmul", "Incompatible shapes"): _(
                "{what} failed multiplying: the course's weights are (n_out, n_in), w1 ({m}, "
                "{d}) and w2 ({d}, {m}), so the MLP of h ({t}, {d}) is relu(h @ w1.T + c1) @ "
                "w2.T + c2").format(what=what, m=m, d=d, t=t)}), want.shape, what)
        reject_known_wrong(got, {
            N_("layer_norm normalises ONE vector: on the whole (T, d) x it takes one mean and "
               "one variance over every position. Normalise each position: "
               "vmap(layer_norm, in_axes=(0, None, None))(x, gamma, beta)"):
                _block(x, block, whole=True),
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
            N_("the MLP normalised the x that came in; it reads x AFTER the attention's "
               "residual: x = x + attention(...), then x + mlp(norm(x, g2, b2))"):
                _block(x, block, mlp_of_input=True),
            N_("the MLP's second bias is missing: ... @ w2.T + c2"):
                _block(x, block, second_bias=False),
        }, rtol=1e-4, atol=1e-4, want=want)
        expect_close(got, want, what, rtol=1e-4, atol=1e-4, hint=N_(
            "with norm = vmap(layer_norm, in_axes=(0, None, None)): x = x + "
            "multi_head_attention(norm(x, g1, b1), w_qkv, w_o); then x + relu(norm(x, g2, b2) "
            "@ w1.T + c1) @ w2.T + c2"))
    return N_("two sequences of other lengths, widths, heads and MLPs: attention and the MLP, "
              "each on the normalised x, each added")


@exercise(LESSON, 7, "parameters of the transformer")
def count_transformer_params(student_fn: Any) -> str:
    cases = more_when_graded(
        ((16, 49, 64, 4, 2, 128, 10), (49, 16, 32, 2, 1, 64, 10), (4, 9, 12, 3, 3, 20, 5)), 147,
        lambda draw: (int(draw.integers(2, 65)), int(draw.integers(4, 65)),
                      4 * int(draw.integers(2, 17)), 4, int(draw.integers(1, 5)),
                      int(draw.integers(8, 129)), int(draw.integers(2, 20))))
    def block_params(d: int, m: int) -> int:  # two norms, w_qkv and w_o, the MLP
        return 2 * d + 4 * d * d + 2 * d + 2 * m * d + m + d

    def count(case: tuple[int, ...]) -> int:
        n, p, d, heads, depth, m, classes = case
        return p * d + n * d + depth * block_params(d, m) + 2 * d + classes * (d + 1)

    names = ("patches", "patch_pixels", "width", "heads", "depth", "mlp_width", "classes")
    # an argument written as a number: the count the first case's value gives in every case
    frozen = {_("{name} is written as a number: the answer does not change with it ({value} "
                "in every case); use the argument").format(name=names[i], value=cases[0][i]): i
              for i in range(len(names)) if names[i] != "heads"}  # heads add nothing: ignored
    answers = []  # (what, got, want, {hint: what that mistake gives}) for every case
    for case in cases:
        n, p, d, heads, depth, m, classes = case
        block = block_params(d, m)
        want = count(tuple(case))
        what = f"count_transformer_params({n}, {p}, {d}, {heads}, {depth}, {m}, {classes})"
        got = expect_int(fast_call(student_fn, n, p, d, heads, depth, m, classes, what=what,
                                   static_argnums=tuple(range(7))), what,
                         N_("expected a whole number of parameters"))
        norms = (2 * depth + 1) * 2 * d
        answers.append((what, got, want, {
            N_("each head has the whole width d: its queries, keys and values are d / heads "
               "wide, so the heads together have 3 * d * d weights, however many there are"):
                want + depth * (heads - 1) * 4 * d * d,
            N_("each head's queries, keys and values are d / heads wide, not d: together "
               "3 * d * d weights, however many heads"): want + depth * (heads - 1) * 3 * d * d,
            N_("the position vectors are missing: one of width d per patch"): want - n * d,
            N_("the embedding has one position vector per patch, (patches, d), not one bias "
               "(d,)"): want - n * d + d,
            N_("the layer norms are missing: gamma and beta (d each) for two norms per block "
               "and the last one"): want - norms,
            N_("the last layer norm (before the mean) has a gamma and a beta too"): want - 2 * d,
            N_("w_o is missing: (d, heads * d_k) = d * d per block"): want - depth * d * d,
            N_("the MLP's biases are missing: m and d per block"): want - depth * (m + d),
            N_("the classifier's bias is missing: one per class"): want - classes,
            N_("count the blocks' parameters depth times"): want - (depth - 1) * block,
            **{hint: count((*case[:i], cases[0][i], *case[i + 1:])) for hint, i in frozen.items()},
        }))
    # right in class by building the library's network and counting it? (a student's walk:
    # the class's images are square, so the library's model fits every case)
    expect_own_code(student_fn, tuple(cases[0]), answers[0][0], "nn_from_scratch.transformer",
                    ("init_transformer_params",))
    wrong = [answer for answer in answers if answer[1] != answer[2]]
    if wrong:
        what, got, _want, mistakes = wrong[0]
        # a mistake is named only if it gives the answer's count in EVERY case, not by a
        # coincidence of one case's numbers
        for hint in mistakes:
            if all(answer[1] == answer[3][hint] for answer in answers):
                raise Mistake(_("{what} = {got}: {hint}").format(what=what, got=got,
                                                                 hint=_(hint)))
        raise Mistake(_("{what} = {got}; count the embedding (patch_pixels * d) and the "
                        "positions (patches * d); per block two norms (2 d each), w_qkv "
                        "and w_o (4 d * d), the MLP (m * d + m, d * m + d); the last norm "
                        "(2 d) and the classifier (classes * (d + 1))").format(
                          what=what, got=got))
    return N_("the count of init_transformer_params for 3 shapes; the heads add nothing")
