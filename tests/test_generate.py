"""Sampling and the KV cache: one cached step equals the full recomputation, the same key
writes the same text with or without the cache (past the context too), temperature and top-k
do what they say, clear errors."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from nn_from_scratch import InputError
from nn_from_scratch.generate import generate, init_kv_cache, predict_gpt_step, sample_next
from nn_from_scratch.gpt import init_gpt_params, predict_gpt

V, T = 13, 8


@pytest.fixture(scope="module")
def tiny():
    return init_gpt_params(jax.random.key(0), V, context=T, width=16, heads=2, depth=2)


def test_each_cached_step_is_the_last_row_of_the_whole_prefix(tiny):
    tokens = jax.random.randint(jax.random.key(1), (T,), 0, V)
    full = predict_gpt(tiny, tokens)
    cache = init_kv_cache(tiny, T)
    assert len(cache) == 2 and cache[0][0].shape == (2, T, 8)  # (H, context, d_k) per block
    step = jax.jit(predict_gpt_step)  # the position traced: one program for every step
    for i in range(T):  # row i of the whole window is the prefix's last (causality, test_gpt)
        log_probs, cache = step(tiny, cache, tokens[i], i)
        np.testing.assert_allclose(log_probs, full[i], atol=1e-5)


def test_the_same_key_writes_the_same_text_with_or_without_the_cache(tiny):
    key, prompt = jax.random.key(2), np.array([1, 2, 3])
    text = generate(tiny, key, prompt, 3 * T)  # slides past the context twice
    assert text.shape == (3 + 3 * T,) and text.dtype == np.int32
    np.testing.assert_array_equal(text[:3], prompt)
    np.testing.assert_array_equal(generate(tiny, key, prompt, 3 * T), text)
    np.testing.assert_array_equal(generate(tiny, key, prompt, 3 * T, use_cache=False), text)
    assert not np.array_equal(generate(tiny, jax.random.key(3), prompt, 3 * T), text)
    long_prompt = np.arange(2 * T) % V  # longer than the context: its end is kept
    assert generate(tiny, key, long_prompt, 2).shape == (2 * T + 2,)
    assert generate(tiny, key, prompt, 0).tolist() == prompt.tolist()


def test_top_k_1_is_the_likeliest_and_top_k_keeps_only_k():
    log_probs = jnp.log(jnp.array([0.1, 0.5, 0.15, 0.25]))
    keys = jax.random.split(jax.random.key(0), 400)
    draws = np.array([int(sample_next(k, log_probs, top_k=2)) for k in keys[:200]])
    assert set(draws) == {1, 3}
    assert {int(sample_next(k, log_probs, top_k=1)) for k in keys[:20]} == {1}
    assert int(sample_next(keys[0], log_probs)) in range(4)


def test_temperature_sharpens_below_1_and_flattens_above():
    log_probs = jnp.log(jnp.array([0.1, 0.6, 0.3]))
    keys = jax.random.split(jax.random.key(1), 300)

    def share_of_likeliest(temperature):
        draw = jax.vmap(lambda k: sample_next(k, log_probs, temperature))(keys)
        return float(jnp.mean(draw == 1))

    cold, warm, hot = share_of_likeliest(0.3), share_of_likeliest(1.0), share_of_likeliest(5.0)
    assert cold > 0.9 and 0.5 < warm < 0.7 and hot < 0.45, (cold, warm, hot)


@pytest.mark.parametrize("call, match", [
    (lambda p: sample_next(jax.random.key(0), jnp.zeros(3), temperature=0), "top_k=1"),
    (lambda p: sample_next(jax.random.key(0), jnp.zeros(3), temperature=-1.0), "above 0"),
    (lambda p: sample_next(jax.random.key(0), jnp.zeros(3), top_k=4), "at most 3"),
    (lambda p: sample_next(jax.random.key(0), jnp.zeros((2, 3))), "ONE row"),
    (lambda p: sample_next(0, jnp.zeros(3)), "PRNG key"),
    (lambda p: generate(p, jax.random.key(0), [], 3), "non-empty"),
    (lambda p: generate(p, jax.random.key(0), [V], 3), "0..12"),
    (lambda p: generate(p, jax.random.key(0), [1], 3, temperature=0.0), "above 0"),
    (lambda p: init_kv_cache(p, T + 1), "more than the model's 8"),
])
def test_bad_input_is_refused_with_the_fix(tiny, call, match):
    with pytest.raises(InputError, match=match):
        call(tiny)
