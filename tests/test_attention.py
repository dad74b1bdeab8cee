"""Attention written for ONE query equals the matrix formula (and JAX's own), masks what it
should before the softmax, and the blocks keep their shapes and their residuals."""
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from nn_from_scratch import InputError
from nn_from_scratch.attention import (
    attention,
    attention_weights,
    causal_mask,
    layer_norm,
    multi_head_attention,
    self_attention,
    softmax,
    transformer_block,
)

rng = np.random.default_rng(0)


def normal(*shape):
    return jnp.asarray(rng.normal(size=shape), jnp.float32)


def reference(q, k, v, causal=False):
    """The textbook matrix form for a whole sequence: softmax(Q K^T / sqrt(d)) V, in NumPy."""
    q, k, v = (np.asarray(a, np.float64) for a in (q, k, v))
    scores = q @ k.T / math.sqrt(q.shape[1])  # (T, T)
    if causal:
        scores = np.where(np.tril(np.ones_like(scores, bool)), scores, -np.inf)
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    return (weights / weights.sum(axis=1, keepdims=True)) @ v


def test_one_query_is_the_weighted_average_of_the_values():
    q, k, v = normal(8), normal(5, 8), normal(5, 3)
    weights = attention_weights(q, k)
    assert weights.shape == (5,) and float(weights.sum()) == pytest.approx(1.0, abs=1e-6)
    np.testing.assert_allclose(attention(q, k, v), weights @ v, rtol=1e-6)
    np.testing.assert_allclose(attention(q, k, v), reference(q[None], k, v)[0], rtol=1e-5,
                               atol=1e-6)


@pytest.mark.parametrize("causal", [False, True])
def test_vmap_over_the_queries_is_the_matrix_formula(causal):
    x, w_q, w_k, w_v = normal(7, 16), normal(8, 16), normal(8, 16), normal(4, 16)
    got = self_attention(x, w_q, w_k, w_v, causal=causal)
    want = reference(x @ w_q.T, x @ w_k.T, x @ w_v.T, causal)
    assert got.shape == (7, 4)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


@pytest.mark.skipif(not hasattr(jax.nn, "dot_product_attention"),
                    reason="jax.nn.dot_product_attention is not in this JAX")
@pytest.mark.parametrize("causal", [False, True])
def test_the_same_numbers_as_jax_dot_product_attention(causal):
    x, w_q, w_k, w_v = normal(9, 16), normal(8, 16), normal(8, 16), normal(8, 16)
    q, k, v = (x @ w.T for w in (w_q, w_k, w_v))  # (T, d) each
    theirs = jax.nn.dot_product_attention(q[None, :, None], k[None, :, None], v[None, :, None],
                                          is_causal=causal)[0, :, 0]  # (B, T, N, H) layout
    np.testing.assert_allclose(self_attention(x, w_q, w_k, w_v, causal), theirs, rtol=1e-4,
                               atol=1e-5)


def test_the_causal_mask_hides_the_future_from_every_position():
    mask = causal_mask(4)
    assert mask.tolist() == [[True, False, False, False], [True, True, False, False],
                             [True, True, True, False], [True, True, True, True]]
    x, w = normal(6, 8), [normal(8, 8) for _ in range(3)]
    # output i must not depend on inputs after i: its gradient with respect to them is 0
    jacobian = jax.jacobian(lambda x: self_attention(x, *w, causal=True).sum(axis=1))(x)
    for i in range(6):
        assert np.all(np.asarray(jacobian[i, i + 1:]) == 0), f"position {i} sees the future"
        assert np.any(np.asarray(jacobian[i, :i + 1]) != 0)


def test_a_masked_position_gets_weight_zero_and_a_fully_masked_row_no_nan():
    q, k = normal(4), normal(5, 4)
    weights = attention_weights(q, k, jnp.array([True, False, True, False, False]))
    assert weights[1] == 0 and weights[3] == 0 and float(weights.sum()) == pytest.approx(1.0)
    none = jnp.zeros(5, bool)
    assert np.all(np.asarray(attention_weights(q, k, none)) == 0)
    grads = jax.grad(lambda q: attention(q, k, normal(5, 2), none).sum())(q)
    assert np.all(np.isfinite(np.asarray(grads)))
    assert np.all(np.isfinite(np.asarray(softmax(jnp.array([1e4, -1e4, 0.0])))))


def test_heads_are_vmap_over_stacked_weights_joined_then_projected():
    x, w_qkv, w_o = normal(5, 12), normal(3, 3, 4, 12), normal(12, 12)
    got = multi_head_attention(x, w_qkv, w_o)
    heads = [self_attention(x, w_qkv[0, h], w_qkv[1, h], w_qkv[2, h]) for h in range(3)]
    np.testing.assert_allclose(got, jnp.concatenate(heads, axis=1) @ w_o.T, rtol=1e-5,
                               atol=1e-5)


def test_layer_norm_of_one_vector():
    x = normal(10) * 5 + 3
    y = layer_norm(x, jnp.ones(10), jnp.zeros(10))
    assert float(jnp.mean(y)) == pytest.approx(0, abs=1e-5)
    assert float(jnp.var(y)) == pytest.approx(1, abs=1e-3)
    np.testing.assert_allclose(layer_norm(x, 2 * jnp.ones(10), jnp.ones(10)), 2 * y + 1,
                               rtol=1e-5)
    assert np.all(np.isfinite(np.asarray(layer_norm(jnp.ones(4), jnp.ones(4), jnp.zeros(4)))))


def _block(d=8, m=16, heads=2, zero_out=False):
    scale = 0.0 if zero_out else 1.0
    return [(jnp.ones(d), jnp.zeros(d)), (normal(3, heads, d // heads, d), scale * normal(d, d)),
            (jnp.ones(d), jnp.zeros(d)), (normal(m, d), jnp.zeros(m)),
            (scale * normal(d, m), jnp.zeros(d))]


def test_a_block_keeps_the_shape_and_its_residuals_carry_x_through():
    x = normal(6, 8)
    assert transformer_block(x, _block()).shape == (6, 8)
    # with both parts' outputs zero, only the residual paths are left: the identity
    np.testing.assert_allclose(transformer_block(x, _block(zero_out=True)), x, rtol=1e-6)


def test_one_sequence_functions_refuse_a_batch_with_a_clear_error():
    with pytest.raises(InputError, match=r"ONE query \(d,\).*got query \(2, 8\).*vmap"):
        attention(normal(2, 8), normal(5, 8), normal(5, 3))
    with pytest.raises(InputError, match=r"same size d: keys \(5, 8\) have 8, the query \(6,\)"):
        attention(normal(6), normal(5, 8), normal(5, 3))
    with pytest.raises(InputError, match=r"one value per key: keys \(5, 8\), values \(4, 3\)"):
        attention(normal(8), normal(5, 8), normal(4, 3))
    with pytest.raises(InputError, match=r"ONE sequence \(T, d\); got \(2, 6, 8\)"):
        self_attention(normal(2, 6, 8), normal(4, 8), normal(4, 8), normal(4, 8))
