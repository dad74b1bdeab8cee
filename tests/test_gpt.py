"""The tiny GPT: ONE sequence in, (T, V) log-probabilities out, the batch by vmap, causal (a
later character never changes an earlier prediction), an untrained loss of about ln V, a
gradient that matches finite differences, clear errors."""
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from nn_from_scratch import InputError, count_params
from nn_from_scratch.gpt import (
    batched_predict_gpt,
    bits_per_char,
    gpt_depth,
    gpt_loss,
    init_gpt_params,
    predict_gpt,
)
from nn_from_scratch.gradcheck import check_grad

V, T = 11, 8


@pytest.fixture(scope="module")
def tiny():
    return init_gpt_params(jax.random.key(0), V, context=T, width=16, heads=2, depth=2)


@pytest.fixture(scope="module")
def tokens():
    return jax.random.randint(jax.random.key(1), (3, T), 0, V)


def test_shapes_and_log_probabilities(tiny, tokens):
    out = predict_gpt(tiny, tokens[0])
    assert out.shape == (T, V)
    np.testing.assert_allclose(jnp.exp(out).sum(axis=1), 1, rtol=1e-5)
    assert predict_gpt(tiny, tokens[0, :3]).shape == (3, V)  # shorter than the context
    assert gpt_depth(tiny) == 2 and len(tiny) == 3 + 5 * 2
    assert tiny[0][0].shape == (V, 16) and tiny[0][1].shape == (T, 16)
    assert tiny[-1][0].shape == (V, 16)  # untied: its own output matrix
    assert count_params(init_gpt_params(jax.random.key(0), 104)) == 826_216


def test_the_batch_is_vmap_of_one_sequence(tiny, tokens):
    batched = batched_predict_gpt(tiny, tokens)
    assert batched.shape == (3, T, V)
    np.testing.assert_allclose(batched[2], predict_gpt(tiny, tokens[2]), atol=1e-5)


def test_a_later_token_never_changes_an_earlier_prediction(tiny, tokens):
    before = predict_gpt(tiny, tokens[0])
    changed = predict_gpt(tiny, tokens[0].at[5].set((tokens[0, 5] + 1) % V))
    np.testing.assert_array_equal(before[:5], changed[:5])
    assert float(jnp.max(jnp.abs(before[5:] - changed[5:]))) > 1e-4


def test_an_untrained_model_is_about_uniform(tokens):
    params = init_gpt_params(jax.random.key(3), V, context=T, width=32, heads=4, depth=2)
    nats = gpt_loss(params, tokens, jnp.roll(tokens, -1, axis=1))
    assert float(nats) == pytest.approx(math.log(V), abs=0.05)
    assert float(bits_per_char(math.log(V))) == pytest.approx(math.log2(V))


def test_the_gradient_matches_finite_differences(tokens):
    one_block = init_gpt_params(jax.random.key(5), V, context=T, width=8, heads=2, depth=1)
    error = check_grad(lambda p: gpt_loss(p, tokens, jnp.roll(tokens, -1, axis=1)), one_block,
                       jax.random.key(4), num_directions=2)
    assert error < 1e-6, error


@pytest.mark.parametrize("call, match", [
    (lambda p, x: predict_gpt(p, x), "Use batched_predict_gpt"),
    (lambda p, x: predict_gpt(p, jnp.arange(T + 1)), "8 positions"),
    (lambda p, x: predict_gpt(p, jnp.ones(3)), "integer token ids"),
    (lambda p, x: predict_gpt(p[:-1], x[0]), "3 \\+ 5 \\* depth"),
    (lambda p, x: gpt_loss(p, x, x[:, :-1]), "same shape"),
    (lambda p, x: init_gpt_params(jax.random.key(0), V, width=10, heads=4), "multiple of heads"),
    (lambda p, x: init_gpt_params(0, V), "PRNG key"),
])
def test_bad_input_is_refused_with_the_fix(tiny, tokens, call, match):
    with pytest.raises(InputError, match=match):
        call(tiny, tokens)
