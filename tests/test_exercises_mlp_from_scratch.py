"""Lesson 07's checkers: each accepts the reference, says "not done" to the stub, and catches
the typical mistakes with a hint that names the fix."""
import jax
import jax.numpy as jnp
import pytest
from conftest import assert_result, stub
from jax.scipy.special import logsumexp

from nn_from_scratch import model, params
from nn_from_scratch.exercises import mlp_from_scratch as check


def test_relu():
    assert_result(check.relu(model.relu), "passed")
    assert_result(check.relu(stub), "not done", "NotImplementedError")
    assert_result(check.relu(lambda x: max(0, x)), "failed", "raised", "truth value")
    assert_result(check.relu(jnp.abs), "failed", "0 where x < 0")
    assert_result(check.relu(lambda x: jnp.clip(x, 0, 1)), "failed", "unchanged where x > 0")
    assert_result(check.relu(lambda x: None), "failed", "forget `return`")


def test_random_layer_params():
    assert_result(check.random_layer_params(params.random_layer_params), "passed")
    assert_result(check.random_layer_params(stub), "not done")

    def one_key(m, n, key, scale=1e-2):  # the classic: W and b from the same key
        return scale * jax.random.normal(key, (n, m)), scale * jax.random.normal(key, (n,))
    assert_result(check.random_layer_params(one_key), "failed", "same key", "split")

    def transposed(m, n, key, scale=1e-2):
        w_key, b_key = jax.random.split(key)
        return scale * jax.random.normal(w_key, (m, n)), scale * jax.random.normal(b_key, (n,))
    assert_result(check.random_layer_params(transposed), "failed", "shape (40, 30)", "(30, 40)")

    def unscaled(m, n, key, scale=1e-2):
        w_key, b_key = jax.random.split(key)
        return jax.random.normal(w_key, (n, m)), jax.random.normal(b_key, (n,))
    assert_result(check.random_layer_params(unscaled), "failed", "multiply", "scale")


def test_init_network_params():
    assert_result(check.init_network_params(params.init_network_params), "passed")
    assert_result(check.init_network_params(stub), "not done")

    def same_key_every_layer(sizes, key):
        return [params.random_layer_params(m, n, key) for m, n in zip(sizes[:-1], sizes[1:])]
    assert_result(check.init_network_params(same_key_every_layer), "failed", "same key",
                  "one key per layer")

    def one_layer_short(sizes, key):
        return params.init_network_params(sizes, key)[:-1]
    assert_result(check.init_network_params(one_layer_short), "failed", "list of 3")


def reference_parts(p, image):
    *hidden, (w, b) = p
    a = image
    for wh, bh in hidden:
        a = model.relu(wh @ a + bh)
    return a, w @ a + b


def test_predict():
    assert_result(check.predict(model.predict), "passed", "5 random networks")
    assert_result(check.predict(stub), "not done")

    def softmax(p, image):
        logits = reference_parts(p, image)[1]
        return jnp.exp(logits - logsumexp(logits))
    assert_result(check.predict(softmax), "failed", "probabilities", "LOG-probabilities")
    assert_result(check.predict(lambda p, image: reference_parts(p, image)[1]), "failed",
                  "raw logits", "logsumexp")

    def relu_on_last(p, image):
        logits = model.relu(reference_parts(p, image)[1])
        return logits - logsumexp(logits)
    assert_result(check.predict(relu_on_last), "failed", "relu to the last layer")
    assert_result(check.predict(lambda p, image: jnp.zeros((128, 10))), "failed",
                  "returned shape (128, 10) for one example", "use batched_predict")

    def transposed(p, image):
        a = image
        for w, b in p:
            a = jnp.dot(a, w) + b
        return a
    assert_result(check.predict(transposed), "failed", "raised")


def test_batched_predict():
    assert_result(check.batched_predict(model.batched_predict), "passed")
    assert_result(check.batched_predict(...), "not done", "`...`")
    for wrong in (jax.vmap(model.predict, in_axes=(0, 0)), jax.vmap(model.predict)):
        assert_result(check.batched_predict(wrong), "failed", "in_axes", "None")
    assert_result(check.batched_predict(lambda p, xs: model.predict(p, xs[0])), "failed",
                  "returned shape (4,) for a batch of 12")


def test_parameter_count():
    assert_result(check.parameter_count(669_706), "passed")
    assert_result(check.parameter_count(...), "not done")
    assert_result(check.parameter_count(668_672), "failed", "only the weights")
    assert_result(check.parameter_count(3), "failed", "m * n weights plus n biases")


@pytest.mark.parametrize("ratio, status, hint", [
    (25.0, "passed", ""), (..., "not done", ""), (0.04, "failed", "other way up"),
    (2.0, "failed", "LAST hidden layer"), (float("nan"), "failed", "divide")])
def test_he_ratio(ratio, status, hint):
    assert_result(check.he_ratio(ratio), status, hint)
