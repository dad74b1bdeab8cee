"""Lesson 14's checkers: each accepts the reference, says "not done" to the stub, and catches
the typical mistakes with a hint that names the fix."""
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import assert_result, own, stub
from jax import vmap

from nn_from_scratch import attention as lib
from nn_from_scratch import count_params, i18n
from nn_from_scratch.exercises import attention_from_scratch as check
from nn_from_scratch.model import relu
from nn_from_scratch.transformer import init_transformer_params


def scaled_attention(query, keys, values, scale=None):
    scores = keys @ query * (1 / math.sqrt(query.shape[0]) if scale is None else scale)
    return jax.nn.softmax(scores) @ values


def by_hand(query, keys, values):  # the lesson's 14.1
    scores = keys @ query / jnp.sqrt(query.shape[0])
    return jnp.exp(scores) / jnp.sum(jnp.exp(scores)) @ values


def test_attention():
    assert_result(check.attention(scaled_attention), "passed")
    # the walk's C3: a scale read from the wrong size is named as that size, not as a number
    for wrong_size, name in ((lambda k, v: v.shape[1], "size of a value"),
                             (lambda k, v: len(k), "number of keys")):
        assert_result(check.attention(lambda q, k, v, n=wrong_size: jax.nn.softmax(
            k @ q / jnp.sqrt(n(k, v))) @ v), "failed", name, "size of a query")
    # the walk's C1: a tuple of the weights and the answer is named, not NumPy's error
    assert_result(check.attention(lambda q, k, v: (jax.nn.softmax(k @ q), scaled_attention(
        q, k, v))), "failed", "tuple of 2", "one array")
    assert_result(check.attention(by_hand), "passed")
    assert_result(check.attention(own(lib.attention)), "failed", "library's attention",
                  "your own code")
    assert_result(check.attention(lambda q, k, v: lib.attention_weights(q, k) @ v), "failed",
                  "calls the library's", "attention_weights")
    assert_result(check.attention(lib.attention), "failed", "library's own attention")
    assert_result(check.attention(stub), "not done", "NotImplementedError")
    assert_result(check.attention(lambda q, k, v: scaled_attention(q, k, v, 1.0)), "failed",
                  "not scaled")
    for number in (2.0, 3.0, math.sqrt(8)):  # a size written as a number: right for one query size
        result = check.attention(lambda q, k, v, n=number: scaled_attention(q, k, v, 1 / n))
        assert result.status == "failed", result.line
        # the class stream draws the sizes, so the failing case may have d = n (the answer is
        # "divided by d" there, a hint as true of it) or any other d
        assert i18n.language() != "en" or any(hint in result.message for hint in (
            "a number written in your code", "divided by d")), result.line
    assert_result(check.attention(lambda q, k, v: scaled_attention(q, k, v, 1 / q.shape[0])),
                  "failed", "divided by d")
    assert_result(check.attention(lambda q, k, v: jax.nn.softmax(k @ q / 2) @ k), "failed",
                  "averaged the keys")
    assert_result(check.attention(lambda q, k, v: jax.nn.softmax(k @ q / 2)), "failed",
                  "those are the weights")
    assert_result(check.attention(lambda q, k, v: v[jnp.argmax(k @ q)]), "failed",
                  "hard lookup")
    assert_result(check.attention(lambda q, k, v: v[jnp.argmax(k @ q / 2)] * 1.0), "failed",
                  "hard lookup")
    assert_result(check.attention(lambda q, k, v: scaled_attention(q, k, v, math.sqrt(len(q)))),
                  "failed", "multiplied by sqrt(d)")
    assert_result(check.attention(  # the weights times the values, summed per key
        lambda q, k, v: jnp.sum(jax.nn.softmax(k @ q / jnp.sqrt(len(q)))[:, None] * v, axis=1)),
        "failed", "wrong axis", "weights @ values")
    assert_result(check.attention(lambda q, k, v: (k @ q) / jnp.sum(k @ q) @ v), "failed",
                  "exp(s) / sum(exp(s))")
    assert_result(check.attention(lambda q, k, v: scaled_attention(q, k, v) + 0.01), "failed",
                  "off by up to")


def test_self_attention():
    def by_matrices(x, w_q, w_k, w_v, axis=-1, scale=None):
        q, k, v = x @ w_q.T, x @ w_k.T, x @ w_v.T
        s = 1 / math.sqrt(q.shape[1]) if scale is None else scale
        return jax.nn.softmax(q @ k.T * s, axis=axis) @ v

    def mapped_too(x, w_q, w_k, w_v, attention=by_hand):  # query t with key t alone
        return vmap(attention)(x @ w_q.T, x @ w_k.T, x @ w_v.T)

    assert_result(check.self_attention(by_matrices), "passed")
    assert_result(check.self_attention(  # the lesson's: its attention is the library's by then
        lambda x, w_q, w_k, w_v: vmap(lib.attention, in_axes=(0, None, None))(
            x @ w_q.T, x @ w_k.T, x @ w_v.T)), "passed")
    assert_result(check.self_attention(lib.self_attention), "failed", "library's own")
    assert_result(check.self_attention(own(lib.self_attention)), "failed",
                  "calls the library's", "self_attention")
    assert_result(check.self_attention(lambda x, w_q, w_k, w_v: vmap(
        lib.attention, in_axes=(0, None, None))(w_q @ x.T, w_k @ x.T, w_v @ x.T)), "failed",
        "transposed", "x @ w_q.T")
    assert_result(check.self_attention(lambda *a: by_matrices(*a, scale=1 / 3)), "failed",
                  "a number written in your code")
    assert_result(check.self_attention(stub), "not done")
    assert_result(check.self_attention(mapped_too), "failed", "in_axes=(0, None, None)")
    def dotted(query, keys, values):  # jnp.dot takes a scalar weight: the mapped key's own value
        scores = keys @ query / jnp.sqrt(query.shape[0])
        return jnp.dot(jnp.exp(scores) / jnp.sum(jnp.exp(scores)), values)

    assert_result(check.self_attention(lambda *a: mapped_too(*a, attention=dotted)), "failed",
                  "its own value back", "in_axes=(0, None, None)")
    for attention in (lib.attention, scaled_attention):  # an error inside: one key, or none
        assert_result(check.self_attention(lambda *a, f=attention: mapped_too(*a, attention=f)),
                      "failed", "ONE key", "in_axes=(0, None, None)")
    assert_result(check.self_attention(lambda *a: by_matrices(*a, axis=0)), "failed",
                  "axis=-1")
    assert_result(check.self_attention(lambda *a: by_matrices(*a, scale=1.0)), "failed",
                  "sqrt(d_k)")
    assert_result(check.self_attention(
        lambda x, *w: by_matrices(x, *w, scale=1 / math.sqrt(x.shape[1]))), "failed",
        "width of x")
    assert_result(check.self_attention(
        lambda x, w_q, w_k, w_v: by_matrices(x, w_k, w_q, w_v)), "failed", "q @ k.T")
    assert_result(check.self_attention(lambda x, w_q, w_k, w_v: by_matrices(
        x, w_q.T, w_k.T, w_v.T)), "failed", "x @ w_q.T")


def lesson_masked_softmax(scores, mask):
    scores = jnp.where(mask, scores, -jnp.inf)
    top = jnp.max(scores)
    exps = jnp.exp(scores - jnp.where(jnp.isfinite(top), top, 0.0))
    return exps / jnp.where(jnp.sum(exps) > 0, jnp.sum(exps), 1.0)


def shifted_by(shift):
    """A masked softmax that subtracts ``shift(visible scores)`` where the largest belongs."""
    def masked_softmax(scores, mask):
        visible = jnp.where(mask, scores, jnp.nan)
        exps = jnp.where(mask, jnp.exp(scores - shift(visible)), 0.0)
        return exps / jnp.maximum(jnp.sum(exps), 1e-30)
    return masked_softmax


def numpy_unstable(scores, mask):  # float64 NumPy: still overflows beyond 710
    with np.errstate(over="ignore", invalid="ignore"):  # the overflow is the wrong answer's own
        exps = np.where(np.asarray(mask), np.exp(np.asarray(scores, np.float64)), 0.0)
        return exps / max(exps.sum(), 1e-300)


UNSTABLE = (shifted_by(lambda v: 0.0), shifted_by(jnp.nanmean), shifted_by(jnp.nanmin),
            numpy_unstable)


def max_over_all(scores, mask):  # the largest taken before the mask: hidden scores count
    exps = jnp.where(mask, jnp.exp(scores - jnp.max(scores)), 0.0)
    return exps / jnp.where(jnp.sum(exps) > 0, jnp.sum(exps), 1.0)


def renormalised(scores, mask):  # the softmax first, then the mask, then divided again
    weights = jax.nn.softmax(scores) * mask
    return weights / jnp.where(jnp.sum(weights) > 0, jnp.sum(weights), 1.0)


MAX_OVER_ALL = (max_over_all, renormalised)


def test_masked_softmax():
    # the walk's C8: the mask itself handed back is named
    assert_result(check.masked_softmax(lambda scores, mask: mask), "failed", "that is the mask")
    def naive(scores, mask):  # -inf, then jax's softmax: NaN when nothing may be seen
        return jax.nn.softmax(jnp.where(mask, scores, -jnp.inf))

    assert_result(check.masked_softmax(lesson_masked_softmax), "passed")
    assert_result(check.masked_softmax(stub), "not done")
    assert_result(check.masked_softmax(lambda s, m: lib.softmax(jnp.where(m, s, -jnp.inf))),
                  "failed", "library's softmax", "your own code")
    assert_result(check.masked_softmax(naive), "failed", "-inf - (-inf) is NaN")
    for answer in UNSTABLE:
        assert_result(check.masked_softmax(answer), "failed", "LARGEST")
    for answer in MAX_OVER_ALL:
        assert_result(check.masked_softmax(answer), "failed", "hidden ones included")
    assert_result(check.masked_softmax(
        lambda s, m: jax.nn.softmax(jnp.where(m, s, -1e9))), "failed", "every position 1/")
    assert_result(check.masked_softmax(lambda s, m: jax.nn.softmax(s) * m), "failed",
                  "after the softmax")
    assert_result(check.masked_softmax(lambda s, m: jax.nn.softmax(jnp.where(m, -jnp.inf, s))),
                  "failed", "wrong way round")
    assert_result(check.masked_softmax(lambda s, m: jax.nn.softmax(s)), "failed", "not used")


def heads(x, w_qkv):
    return vmap(lib.self_attention, in_axes=(None, 0, 0, 0))(x, *w_qkv)  # (H, T, d_k)


def lesson_mha(x, w_qkv, w_o):
    return heads(x, w_qkv).transpose(1, 0, 2).reshape(x.shape[0], -1) @ w_o.T


def test_multi_head_attention():

    assert_result(check.multi_head_attention(lesson_mha), "passed")
    assert_result(check.multi_head_attention(  # the natural reshape: d = H * d_k
        lambda x, w, w_o: heads(x, w).transpose(1, 0, 2).reshape(*x.shape) @ w_o.T), "passed")
    assert_result(check.multi_head_attention(lib.multi_head_attention), "failed",
                  "library's own")
    # the walk's C4: a reshape to a size written as a number gets a hint, not the raw error
    assert_result(check.multi_head_attention(
        lambda x, w, w_o: heads(x, w).transpose(1, 0, 2).reshape(  # H = 4, written
            x.shape[0], 4 * w.shape[2]) @ w_o.T), "failed",
        "failed in a reshape", "x.shape[0]")
    assert_result(check.multi_head_attention(own(lib.multi_head_attention)), "failed",
                  "calls the library's", "multi_head_attention")
    assert_result(check.multi_head_attention(  # one head per item of w_qkv: *w gives H matrices
        lambda x, w, w_o: jnp.concatenate([lib.self_attention(x, *ws) for ws in w], 1) @ w_o.T),
        "failed")
    assert_result(check.multi_head_attention(
        lambda x, w, w_o: heads(x, w).transpose(1, 0, 2).reshape(x.shape[0], -1) @ w_o), "failed",
        "not joined @ w_o")
    assert_result(check.multi_head_attention(stub), "not done")
    assert_result(check.multi_head_attention(
        lambda x, w, w_o: heads(x, w).reshape(x.shape[0], -1) @ w_o.T), "failed",
        "transpose(1, 0, 2)")
    assert_result(check.multi_head_attention(
        lambda x, w, w_o: heads(x, w).transpose(1, 2, 0).reshape(x.shape[0], -1) @ w_o.T),
        "failed", "interleaved")
    assert_result(check.multi_head_attention(
        lambda x, w, w_o: heads(x, w).transpose(1, 0, 2).reshape(x.shape[0], -1)), "failed",
        "mixed back", "joined @ w_o.T")
    assert_result(check.multi_head_attention(lambda x, w, w_o: heads(x, w).sum(0)), "failed",
                  "(T, H * d_k)")
    assert_result(check.multi_head_attention(
        lambda x, w, w_o: vmap(lib.self_attention)(x, *w)), "failed",
        "in_axes=(None, 0, 0, 0)")
    assert_result(check.multi_head_attention(
        lambda x, w, w_o: lesson_mha(x, w[jnp.array([1, 0, 2])], w_o)), "failed",
        "w_qkv[0]")


PER_POSITION = vmap(lib.layer_norm, in_axes=(0, None, None))


def block_of(x, block, residuals=(True, True), post_norm=False, norm=PER_POSITION,
             w1_transposed=True):
    (g1, b1), (w_qkv, w_o), (g2, b2), (w1, c1), (w2, c2) = block
    w1 = w1.T if w1_transposed else w1
    if post_norm:
        x = norm(x + lib.multi_head_attention(x, w_qkv, w_o), g1, b1)
        return norm(x + relu(x @ w1 + c1) @ w2.T + c2, g2, b2)
    x = x * residuals[0] + lib.multi_head_attention(norm(x, g1, b1), w_qkv, w_o)
    return x * residuals[1] + relu(norm(x, g2, b2) @ w1 + c1) @ w2.T + c2


def norm(x, gamma, beta, eps=1e-5, ddof=0):
    return (x - jnp.mean(x)) / jnp.sqrt(jnp.var(x, ddof=ddof) + eps) * gamma + beta


def hard_coded_width(x, gamma, beta):  # right for the one width of the old check
    mean = jnp.sum(x) / 8
    return (x - mean) / jnp.sqrt(jnp.sum((x - mean) ** 2) / 8 + 1e-5) * gamma + beta


def eps_outside_the_root(x, gamma, beta):
    return (x - jnp.mean(x)) / (jnp.std(x) + 1e-5) * gamma + beta


def test_layer_norm():

    assert_result(check.layer_norm(norm), "passed")
    for eps in (1e-6, 2e-5):  # Flax's and twice PyTorch's: right too
        assert_result(check.layer_norm(lambda x, g, b, e=eps: norm(x, g, b, eps=e)), "passed")
    assert_result(check.layer_norm(lib.layer_norm), "failed", "library's own")
    assert_result(check.layer_norm(own(lib.layer_norm)), "failed", "calls the library's",
                  "layer_norm")
    for eps in (1e-4, 1e-3):  # hidden by a variance near 9; not by one of 0.01
        assert_result(check.layer_norm(lambda x, g, b, e=eps: norm(x, g, b, eps=e)), "failed",
                      f"eps = {eps:.1g}")
    assert_result(check.layer_norm(  # batch-style: the mean of each row
        lambda x, g, b: (x - jnp.mean(x, axis=1)) / jnp.sqrt(jnp.var(x, axis=1) + 1e-5) * g + b),
        "failed", "ONE vector")
    assert_result(check.layer_norm(hard_coded_width), "failed", "divide by 8",
                  "a number written in your code")
    assert_result(check.layer_norm(stub), "not done")
    assert_result(check.layer_norm(lambda x, g, b: norm(x, g, b, eps=0.0)), "failed",
                  "eps = 1e-5")
    assert_result(check.layer_norm(lambda x, g, b: norm(x, g, b, ddof=1)), "failed", "d - 1")
    assert_result(check.layer_norm(lambda x, g, b: norm(x, b, g)), "failed", "swapped")
    assert_result(check.layer_norm(lambda x, g, b: norm(x, 1.0, 0.0)), "failed",
                  "* gamma + beta")
    assert_result(check.layer_norm(
        lambda x, g, b: (x - jnp.mean(x)) / (jnp.var(x) + 1e-5) * g + b), "failed",
        "standard deviation")
    assert_result(check.layer_norm(lambda x, g, b: x / jnp.sqrt(jnp.var(x) + 1e-5) * g + b),
                  "failed", "mean was not subtracted")
    # the walk's e06: eps outside the root, like eps = 2e-6 at a variance of 0.01, 3-fold off
    # at a variance of 1e-6
    assert_result(check.layer_norm(eps_outside_the_root), "failed", "outside the square root",
                  "jnp.sqrt(jnp.var(x) + 1e-5)")


def test_transformer_block():
    assert_result(check.transformer_block(block_of), "passed")
    assert_result(check.transformer_block(lib.transformer_block), "failed", "library's own")
    assert_result(check.transformer_block(own(lib.transformer_block)), "failed",
                  "calls the library's", "transformer_block")
    assert_result(check.transformer_block(lambda x, b: block_of(x, b, norm=lib.layer_norm)),
                  "failed", "ONE vector", "vmap(layer_norm, in_axes=(0, None, None))")
    assert_result(check.transformer_block(lambda x, b: block_of(x, b, norm=vmap(lib.layer_norm))),
                  "failed", "gamma and beta too", "in_axes=(0, None, None)")
    assert_result(check.transformer_block(lambda x, b: block_of(x, b, w1_transposed=False)),
                  "failed", "h @ w1.T + c1")
    assert_result(check.transformer_block(stub), "not done")

    def mlp_of_input(x, block):  # the walk's C7: the MLP reads the norm of the x that came in
        (g1, b1), (w_qkv, w_o), (g2, b2), (w1, c1), (w2, c2) = block
        after = x + lib.multi_head_attention(PER_POSITION(x, g1, b1), w_qkv, w_o)
        return after + relu(PER_POSITION(x, g2, b2) @ w1.T + c1) @ w2.T + c2
    assert_result(check.transformer_block(mlp_of_input), "failed", "AFTER the attention")

    def no_second_bias(x, block):  # the walk's C7: c2 dropped
        (g1, b1), (w_qkv, w_o), (g2, b2), (w1, c1), (w2, c2) = block
        x = x + lib.multi_head_attention(PER_POSITION(x, g1, b1), w_qkv, w_o)
        return x + relu(PER_POSITION(x, g2, b2) @ w1.T + c1) @ w2.T
    assert_result(check.transformer_block(no_second_bias), "failed", "+ c2")
    assert_result(check.transformer_block(lambda x, b: block_of(x, b, (False, True))),
                  "failed", "attention's residual")
    assert_result(check.transformer_block(lambda x, b: block_of(x, b, (True, False))),
                  "failed", "MLP's residual")
    assert_result(check.transformer_block(lambda x, b: block_of(x, b, post_norm=True)),
                  "failed", "post-norm")
    assert_result(check.transformer_block(lambda x, b: block_of(x, [b[0], b[1], b[0], *b[3:]])),
                  "failed", "block[2]")
    assert_result(check.transformer_block(lambda x, b: block_of(x, b) + 0.01), "failed",
                  "off by up to")


def count(n, p, d, heads, depth, m, classes):
    return count_params(init_transformer_params(
        jax.random.PRNGKey(0), image_shape=(int(math.isqrt(n)) * int(math.isqrt(p)),) * 2,
        patch_size=int(math.isqrt(p)), width=d, heads=heads, depth=depth, mlp_width=m,
        num_classes=classes))


def test_count_transformer_params():
    def formula(n, p, d, heads, depth, m, classes, heads_wide=False, positions=True):
        attention = (4 * heads if heads_wide else 4) * d * d
        block = 4 * d + attention + 2 * m * d + m + d
        return p * d + (n * d if positions else d) + depth * block + 2 * d + classes * (d + 1)

    for case in ((16, 49, 64, 4, 2, 128, 10), (4, 9, 12, 3, 3, 20, 5)):  # the library agrees
        assert formula(*case) == count(*case)
    assert_result(check.count_transformer_params(formula), "passed")
    assert_result(check.count_transformer_params(stub), "not done")
    assert_result(check.count_transformer_params(
        lambda *a: formula(*a, heads_wide=True)), "failed", "d / heads")
    assert_result(check.count_transformer_params(
        lambda *a: formula(*a, positions=False)), "failed", "one position vector per patch")
    assert_result(check.count_transformer_params(lambda *a: formula(*a) - 2 * a[2]), "failed",
                  "last layer norm")
    assert_result(check.count_transformer_params(lambda *a: formula(*a) + 1), "failed",
                  "classifier")
    assert_result(check.count_transformer_params(lambda *a: float(formula(*a)) + 0.5), "failed",
                  "whole number")
    # the walk's C6: the MLP's first bias counted as d, not m: in the first case that is
    # 2 d short, as if the last norm were missing, but not in the others; the hint must not
    # name a mistake from one case's numbers
    def first_bias_of_d(n, p, d, heads, depth, m, classes):
        return formula(n, p, d, heads, depth, m, classes) - depth * (m - d)
    result = check.count_transformer_params(first_bias_of_d)
    assert_result(result, "failed", "count the embedding")
    assert "last layer norm" not in result.message, result.message
    # the walk's C2: a str, which jit refuses, is named, not a raw JAX error
    assert_result(check.count_transformer_params(lambda *a: str(formula(*a))), "failed",
                  "returned '", "whole number")
    # a student's walk: the library's network built and counted (right in class, whose
    # images are square)
    def library_count(patches, patch_pixels, width, heads, depth, mlp_width, classes):
        size = round(math.sqrt(patch_pixels))
        side = round(math.sqrt(patches)) * size
        return count_params(init_transformer_params(
            jax.random.key(0), (side, side), size, width, heads, depth, mlp_width, classes))
    assert_result(check.count_transformer_params(library_count), "failed",
                  "init_transformer_params")
    # the walk's C9: the positions written for 16 patches, the depth written as 2: named
    assert_result(check.count_transformer_params(
        lambda n, p, d, heads, depth, m, classes: formula(16, p, d, heads, depth, m, classes)),
        "failed", "patches is written as a number", "(16 in every case)")
    assert_result(check.count_transformer_params(
        lambda n, p, d, heads, depth, m, classes: formula(n, p, d, heads, 2, m, classes)),
        "failed", "depth is written as a number")


def test_a_table_of_the_written_cases_earns_nothing_when_graded():
    """The checker's source is no secret: a student could answer 14.7 with a table of the cases
    it tries, or 14.1 with the answers it saw in class. In a grading, cases and inputs drawn
    for that grading are used, and only the honest answer still passes."""
    from nn_from_scratch.exercises._calls import fresh_inputs
    counts = {case: count(*case) for case in ((16, 49, 64, 4, 2, 128, 10),  # the check's
                                              (49, 16, 32, 2, 1, 64, 10), (4, 9, 12, 3, 3, 20, 5))}
    seen = []  # the answers 14.1's check accepted in class, replayed whatever the inputs

    def recorder(query, keys, values):
        seen.append(by_hand(query, keys, values))
        return seen[-1]
    assert check.attention(recorder).status == "passed"
    replayed = iter(seen * 4)
    for seed in (1, 2, 3):
        with fresh_inputs(seed):
            assert check.count_transformer_params(lambda *a: counts[a]).status == "failed"
            assert check.attention(lambda q, k, v: next(replayed)).status == "failed"
            assert_result(check.count_transformer_params(
                lambda n, p, d, h, depth, m, c: p * d + n * d + depth * (4 * d * d + 2 * m * d
                                                                     + 5 * d + m)
                + 2 * d + c * (d + 1)), "passed")
            assert_result(check.attention(by_hand), "passed")


@pytest.mark.in_class_only
def test_an_answer_gets_the_same_verdict_on_every_draw():
    """The student walk's answers that passed on some draws (a size written as a number, an
    unstable softmax, an eps of 1e-3) fail on every one, and right answers pass on every one.
    Once, in class (conftest.py): the grader's wrapper would fix the seed."""
    from nn_from_scratch.exercises._calls import fresh_inputs

    verdicts = {
        check.attention: {"passed": [by_hand], "failed": [
            lambda q, k, v: scaled_attention(q, k, v, 1 / 2.0),
            lambda q, k, v: v[jnp.argmax(k @ q)]]},
        check.self_attention: {"passed": [lambda x, w_q, w_k, w_v: vmap(
            lib.attention, in_axes=(0, None, None))(x @ w_q.T, x @ w_k.T, x @ w_v.T)], "failed": [
            lambda x, w_q, w_k, w_v: jax.nn.softmax((x @ w_q.T) @ (x @ w_k.T).T / 2.0) @ (
                x @ w_v.T)]},
        check.masked_softmax: {"passed": [lesson_masked_softmax],
                               "failed": [*UNSTABLE, *MAX_OVER_ALL]},
        check.multi_head_attention: {"passed": [
            lambda x, w, w_o: heads(x, w).transpose(1, 0, 2).reshape(*x.shape) @ w_o.T],
            "failed": []},
        check.layer_norm: {"passed": [lambda x, g, b, e=eps: norm(x, g, b, eps=e)
                                      for eps in (1e-6, 1e-5, 2e-5)],
                           "failed": [hard_coded_width, eps_outside_the_root,
                                      *(lambda x, g, b, e=eps: norm(x, g, b, eps=e)
                                        for eps in (1e-4, 1e-3))]},
    }
    for seed in range(6):
        with fresh_inputs(seed):
            for checker, answers in verdicts.items():
                for status, functions in answers.items():
                    for answer in functions:
                        assert checker(answer).status == status, (seed, checker(answer).line)


def test_walk_nine_ready_made_jax_earns_nothing():
    """A second walk of lesson 14: JAX's own softmax, logsumexp, dot_product_attention and
    standardize, behind the student's def, passed 14.3-14.5 in class and graded."""
    def where_softmax(scores, mask):
        return jax.nn.softmax(scores, where=mask)

    def guarded(scores, mask):
        w = jax.nn.softmax(jnp.where(mask, scores, -jnp.inf))
        return jnp.where(mask.any(), w, 0.0)

    def by_logsumexp(scores, mask):
        s = jnp.where(mask, scores, -jnp.inf)
        return jnp.where(mask, jnp.exp(s - jax.scipy.special.logsumexp(s)), 0.0)
    for answer in (where_softmax, guarded, by_logsumexp):
        assert_result(check.masked_softmax(answer), "failed", "ready-made in JAX")

    def jax_heads(x, w_qkv, w_o):
        q, k, v = jnp.einsum("td,shkd->sthk", x, w_qkv)
        out = jax.nn.dot_product_attention(q[None], k[None], v[None])[0]
        return out.reshape(x.shape[0], -1) @ w_o.T
    assert_result(check.multi_head_attention(jax_heads), "failed", "dot_product_attention",
                  "ready-made in JAX")
    # (JAX's standardize is one-pass, mean(x * x) - mean ** 2: the large mean fails it first)
    assert_result(check.layer_norm(
        lambda x, gamma, beta: jax.nn.standardize(x, epsilon=1e-5) * gamma + beta), "failed")
    assert_result(check.attention(lambda q, k, v: jax.nn.dot_product_attention(
        q[None, None], k[None], v[None])[0, 0]), "failed", "ready-made")


def test_walk_nine_nan_gradient_and_one_pass_variance():
    """A second walk of lesson 14: exp of the unhidden scores inside jnp.where has the right
    weights and a NaN gradient; a one-pass variance passed with no large mean to break it."""
    def exp_in_where(scores, mask):
        top = jnp.max(jnp.where(mask, scores, -jnp.inf))
        e = jnp.where(mask, jnp.exp(scores - top), 0.0)
        total = e.sum()
        return jnp.where(total > 0, e / jnp.where(total > 0, total, 1.0), 0.0)
    assert_result(check.masked_softmax(exp_in_where), "failed", "gradient", "NaN")

    def one_pass(x, gamma, beta):
        mean = jnp.mean(x)
        return (x - mean) / jnp.sqrt(jnp.mean(x * x) - mean * mean + 1e-5) * gamma + beta
    assert_result(check.layer_norm(one_pass), "failed", "mean(x * x) - mean ** 2")

    def summed_variance(x, gamma, beta):
        mean = jnp.mean(x)
        return (x - mean) / jnp.sqrt(jnp.sum((x - mean) ** 2) + 1e-5) * gamma + beta
    assert_result(check.layer_norm(summed_variance), "failed", "MEAN of the squared deviations")


def test_walk_nine_hints():
    """A second walk of lesson 14: raw errors, and hints that named another mistake."""
    assert_result(check.attention(
        lambda q, k, v: jax.nn.softmax(jnp.sum(k @ q) / jnp.sqrt(q.shape[0])) @ v), "failed",
        "ONE number")
    assert_result(check.attention(lambda q, k, v: scaled_attention(
        q, k, v, scale=1 / math.sqrt(q.shape[0] + 1))), "failed", "off by one")
    assert check.attention(lambda q, k, v: scaled_attention(  # d - 1 may be 1: "not scaled"
        q, k, v, scale=1 / math.sqrt(q.shape[0] - 1))).status == "failed"
    assert_result(check.self_attention(
        lambda x, w_q, w_k, w_v: vmap(lib.attention, in_axes=(0, None))(
            x @ w_q.T, x @ w_k.T, x @ w_v.T)), "failed", "three")
    assert_result(check.masked_softmax(
        lambda s, m: jnp.where(m, lesson_masked_softmax(s, m), jnp.zeros(20))), "failed",
        "jnp.zeros_like(scores)")

    def boolean_index(scores, mask):
        top = jnp.max(scores[mask])
        e = jnp.where(mask, jnp.exp(scores - top), 0.0)
        return e / e.sum()
    assert_result(check.masked_softmax(boolean_index), "failed", "scores[mask]")
    assert_result(check.multi_head_attention(  # x @ w without the transpose, in the heads
        lambda x, w_qkv, w_o: vmap(lambda q, k, v: lib.attention_weights(x @ q, x @ k) @ (
            x @ v.T), in_axes=(0, 0, 0))(*w_qkv)), "failed", "x @ w_q[h].T")

    def pairs_swapped(x, block):
        (g1, b1), (w_qkv, w_o), (g2, b2), (w1, w2), (c1, c2) = block
        return block_of(x, [(g1, b1), (w_qkv, w_o), (g2, b2), (w1, c1), (w2, c2)])
    assert_result(check.transformer_block(pairs_swapped), "failed", "each layer's weight")

    def nothing_mapped(x, block):
        return block_of(x, block, norm=vmap(lib.layer_norm, in_axes=(None, None, None)))
    assert_result(check.transformer_block(nothing_mapped), "failed", "nothing was mapped")


def test_walk_ten_masked_softmax_by_numpy_or_a_loop_passes():
    """A third walk: 14.3's gradient check refused right answers written with NumPy or a
    Python loop (raw TracerArrayConversionError); they have no gradient to check."""
    def with_numpy(scores, mask):
        s, m = np.asarray(scores, np.float64), np.asarray(mask)
        if not m.any():
            return np.zeros_like(s)
        top = s[m].max()
        e = np.where(m, np.exp(np.where(m, s - top, 0.0)), 0.0)
        return e / e.sum()

    def with_a_loop(scores, mask):
        visible = [float(s) for s, m in zip(scores, mask) if bool(m)]
        if not visible:
            return jnp.zeros(scores.shape[0])
        top = max(visible)
        exps = [math.exp(float(s) - top) if bool(m) else 0.0 for s, m in zip(scores, mask)]
        return jnp.array([e / sum(exps) for e in exps])
    for answer in (with_numpy, with_a_loop):
        assert_result(check.masked_softmax(answer), "passed")

    def total_stopped(scores, mask):  # the right numbers, a wrong gradient
        s = jnp.where(mask, scores, -jnp.inf)
        top = jnp.max(s)
        exps = jnp.exp(s - jnp.where(jnp.isfinite(top), top, 0.0))
        total = jnp.sum(exps)
        return exps / jax.lax.stop_gradient(jnp.where(total > 0, total, 1.0))

    def all_stopped(scores, mask):
        return jax.lax.stop_gradient(lesson_masked_softmax(scores, mask))
    for answer in (total_stopped, all_stopped):
        assert_result(check.masked_softmax(answer), "failed", "not their gradient")


def test_walk_ten_ready_made_through_jax_itself():
    """A third walk: JAX's softmax handed to jax.tree.map or vmap was called by JAX, not by the
    student, and passed."""
    from functools import partial
    for answer in (lambda s, m: jax.tree.map(partial(jax.nn.softmax, where=m), s),
                   lambda s, m: jnp.where(m.any(), vmap(jax.nn.softmax)(
                       jnp.where(m, s, -jnp.inf)[None])[0], 0.0)):
        assert_result(check.masked_softmax(answer), "failed", "ready-made in JAX")


def test_one_pass_variance_fails_on_every_draw():
    """The suite's own run: one x of a large mean let a one-pass variance through on one draw
    in ten (its roundings cancelling by chance); six such x's, on every draw tried."""
    from nn_from_scratch.exercises._calls import fresh_inputs

    def one_pass(x, gamma, beta):
        mean = jnp.mean(x)
        return (x - mean) / jnp.sqrt(jnp.mean(x * x) - mean * mean + 1e-5) * gamma + beta
    for seed in range(1, 31):
        with fresh_inputs(seed):
            assert check.layer_norm(one_pass).status == "failed"
