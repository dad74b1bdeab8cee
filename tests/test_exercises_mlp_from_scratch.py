"""Lesson 07's checkers: each accepts the reference, says "not done" to the stub, and catches
the typical mistakes with a hint that names the fix."""
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import assert_result, own, stub
from jax.scipy.special import logsumexp

from nn_from_scratch import model, params
from nn_from_scratch.exercises import mlp_from_scratch as check


def test_relu():
    assert_result(check.relu(own(model.relu)), "passed")
    assert_result(check.relu(model.relu), "failed", "library's own relu")
    assert_result(check.relu(stub), "not done", "NotImplementedError")
    assert_result(check.relu(lambda x: max(0, x)), "failed", "Python's max", "jnp.maximum")
    assert_result(check.relu(lambda x: jnp.max(0, x)), "failed", "an axis", "jnp.maximum(0, x)")
    assert_result(check.relu(np.ones(3)), "failed", "expected a function", "array of shape (3,)")
    assert_result(check.relu(jnp.abs), "failed", "0 wherever x < 0")
    assert_result(check.relu(lambda x: jnp.clip(x, 0, 1)), "failed", "unchanged wherever x > 0")
    assert_result(check.relu(lambda x: None), "failed", "forget `return`")


def inplace(x):
    x = np.asarray(x)
    x[x < 0] = 0
    return x


calls = []


def wrong_from_the_fifth_call(x):
    calls.append(1)
    return jnp.maximum(0, x) if len(calls) < 5 else x


# a student's walk of 07.1 (2026-12-01, 121 answers): each of these passed, or got a hint
# that pointed elsewhere, before the check drew zeros, large numbers, 3-D and (1, n) inputs,
# ran relu under jit and looked at the dtype
@pytest.mark.parametrize("answer, signs", [
    (lambda x: jnp.where(x == 0, 1.0, jnp.maximum(0, x)), ["where x = 0", "relu(0)"]),
    (lambda x: jnp.where(x == 0, 0.5, jnp.maximum(0, x)), ["where x = 0"]),
    (lambda x: jnp.where(jnp.abs(x) < 100, jnp.maximum(0, x), 0.0), ["however large"]),
    (lambda x: jnp.maximum(0, x).astype(jnp.complex64), ["dtype complex64", "no astype"]),
    (lambda x: jnp.maximum(0, x).astype(jnp.float16), ["dtype float16"]),
    (lambda x: x > 0, ["dtype bool"]),
    (lambda x: np.maximum(0, x), ["not under jax.jit", "jnp.maximum"]),
    (lambda x: np.maximum(0, np.asarray(x)).astype(np.float64), ["not under jax.jit"]),
    (lambda x: jnp.maximum(0, x).tolist(), ["not under jax.jit"]),
    (lambda x: float(jnp.maximum(0, x)) if jnp.ndim(x) == 0 else jnp.maximum(0, x),
     ["not under jax.jit"]),
    (lambda x: jnp.squeeze(jnp.maximum(0, x)), ["(1, ", "has shape"]),
    (lambda x: jnp.max(x, 0), ["jnp.max(a, axis)"]),
    (lambda x: jnp.maximum(0, x) if x.ndim == 0 else x, ["of shape (", "wherever x < 0"]),
    (lambda x: jnp.maximum(0, x) if x.ndim < 3 else x, ["wherever x < 0"]),
    (lambda x: jnp.maximum(0, x.reshape(x.shape[0], -1)).reshape(x.shape), ["any shape"]),
    (lambda x: jnp.maximum(0, x) @ jnp.eye(x.shape[0]), ["any shape"]),
    (inplace, ["changed in place"]),
    (wrong_from_the_fifth_call, ["wherever x < 0"]),
])
def test_relu_walk(answer, signs):
    calls.clear()
    assert_result(check.relu(answer), "failed", *signs)


@pytest.mark.parametrize("answer", [
    jax.nn.relu, jax.jit(lambda x: jnp.maximum(0.0, x)), lambda x: jnp.where(x > 0, x, 0),
    lambda x: x * (x > 0), lambda x: (x + jnp.abs(x)) / 2, lambda x: jnp.clip(x, 0),
    lambda x: jnp.where(x > 0, x, -0.0), lambda x: jax.lax.max(x, jnp.zeros_like(x)),
    lambda x: jax.vmap(lambda v: jnp.maximum(0, v))(x.ravel()).reshape(x.shape)])
def test_relu_accepts_every_right_answer(answer):
    assert_result(check.relu(answer), "passed")


def layer(m, n, key, scale=1e-2, w=lambda key, shape: jax.random.normal(key, shape),
          b=lambda key, shape, scale: scale * jax.random.normal(key, shape), w_from=0, b_from=1):
    """random_layer_params with one part changed: how W and b are drawn, which key each takes."""
    keys = [*jax.random.split(key), key]
    return scale * w(keys[w_from], (n, m)), b(keys[b_from], (n,), scale)


def test_random_layer_params():
    assert_result(check.random_layer_params(own(params.random_layer_params)), "passed")
    assert_result(check.random_layer_params(layer), "passed")
    assert_result(check.random_layer_params(partial(layer, w_from=1, b_from=0)), "passed")
    assert_result(check.random_layer_params(stub), "not done")
    assert_result(check.random_layer_params(partial(layer, w_from=0, b_from=0)), "failed",
                  "same key", "split")
    for w_from, b_from in ((2, 1), (0, 2)):  # W or b drawn from the key that was also split
        assert_result(check.random_layer_params(partial(layer, w_from=w_from, b_from=b_from)),
                      "failed", "`key` itself")
    for wrong_b in (lambda k, shape, scale: scale / jax.random.normal(k, shape),  # 07.2 in #15
                    lambda k, shape, scale: scale + jax.random.normal(k, shape),
                    lambda k, shape, scale: jax.random.normal(k, shape)):
        assert_result(check.random_layer_params(partial(layer, b=wrong_b)), "failed",
                      "standard deviation", "multiply")
    assert_result(check.random_layer_params(partial(
        layer, b=lambda k, shape, scale: 1e-2 * jax.random.normal(k, shape))), "failed",
        "50 times")
    assert_result(check.random_layer_params(partial(layer, w=jax.random.uniform)), "failed",
                  "uniform", "normal")

    def transposed(m, n, key, scale=1e-2):
        return layer(n, m, key, scale)[0], layer(m, n, key, scale)[1]
    assert_result(check.random_layer_params(transposed), "failed", "shape (24, 50)", "transpose")
    assert_result(check.random_layer_params(lambda m, n, k, scale=1e-2: layer(m, n, k, scale)[0]),
                  "failed", "tuple (W, b)")


def network(sizes, key, make=params.random_layer_params, swap=False):
    keys = jax.random.split(key, len(sizes) - 1)
    pairs = zip(sizes[1:], sizes[:-1]) if swap else zip(sizes[:-1], sizes[1:])
    return [make(m, n, k) for (m, n), k in zip(pairs, keys)]


def test_init_network_params():
    assert_result(check.init_network_params(own(params.init_network_params)), "passed")
    assert_result(check.init_network_params(network), "passed")
    assert_result(check.init_network_params(stub), "not done")

    def same_key_every_layer(sizes, key):
        return [params.random_layer_params(m, n, key) for m, n in zip(sizes[:-1], sizes[1:])]
    assert_result(check.init_network_params(same_key_every_layer), "failed", "same key",
                  "one key per layer")
    assert_result(check.init_network_params(lambda s, k: network(s, k)[:-1]), "failed",
                  "list of 2")
    assert_result(check.init_network_params(lambda s, k: network(s, k, swap=True)), "failed",
                  "transpose")  # 07.3 in #15: m and n swapped

    def chained(sizes, key):  # other keys than the exercise asks for
        layers = []
        for m, n in zip(sizes[:-1], sizes[1:]):
            key, sub = jax.random.split(key)
            layers.append(params.random_layer_params(m, n, sub))
        return layers
    assert_result(check.init_network_params(chained), "failed", "the i-th pair")


def notebook_init(body):
    """init_network_params as a notebook defines it: random_layer_params is a global there."""
    namespace = {"jax": jax, "random_layer_params": params.random_layer_params}
    exec("def init_network_params(sizes, key):\n    keys = jax.random.split(key, len(sizes) - 1)\n"
         f"    return {body}\n", namespace)
    return namespace


def test_init_network_params_as_the_lesson_calls_it():
    pairs = "zip(sizes[:-1], sizes[1:], keys)"
    right = notebook_init(f"[random_layer_params(m, n, k) for m, n, k in {pairs}]")
    assert_result(check.init_network_params(right["init_network_params"]), "passed")
    assert right["random_layer_params"] is params.random_layer_params  # put back after the check
    for body, hint in [
        (f"[random_layer_params(m, n, key) for m, n, k in {pairs}]", "same key"),
        (f"[random_layer_params(n, m, k) for m, n, k in {pairs}]", "transpose"),
        ("[random_layer_params(m, n, k) for m, n, k in zip(sizes[:-1], sizes[1:], keys[::-1])]",
         "the i-th pair"),
        (f"[random_layer_params(m, n, k) for m, n, k in {pairs}][::-1]", "layer 0"),
        (f"[random_layer_params(m, n, k) for m, n, k in {pairs}][:1]", "list of 2")]:
        assert_result(check.init_network_params(notebook_init(body)["init_network_params"]),
                      "failed", hint)


def test_init_network_params_blames_an_unfinished_random_layer_params():
    namespace = {"jax": jax}
    exec("def random_layer_params(m, n, key, scale=1e-2):\n    raise NotImplementedError\n"
         "def init_network_params(sizes, key):\n"
         "    keys = jax.random.split(key, len(sizes) - 1)\n"
         "    return [random_layer_params(m, n, k) for m, n, k in "
         "zip(sizes[:-1], sizes[1:], keys)]\n", namespace)
    assert_result(check.init_network_params(namespace["init_network_params"]), "not done",
                  "finish 07.2")


def reference_parts(p, image):
    *hidden, (w, b) = p
    a = image
    for wh, bh in hidden:
        a = model.relu(wh @ a + bh)
    return a, w @ a + b


def test_predict():
    assert_result(check.predict(own(model.predict)), "passed", "random networks")
    assert_result(check.predict(stub), "not done")

    def softmax(p, image):
        logits = reference_parts(p, image)[1]
        return jnp.exp(logits - logsumexp(logits))
    assert_result(check.predict(softmax), "failed", "probabilities", "LOG-probabilities")
    assert_result(check.predict(lambda p, image: reference_parts(p, image)[1]), "failed",
                  "raw logits", "logsumexp")

    def log_of_sum(p, image):  # 07.4 in #15: not the raw logits
        logits = reference_parts(p, image)[1]
        return logits - jnp.log(jnp.sum(logits))
    assert_result(check.predict(log_of_sum), "failed", "logsumexp(logits)")
    assert "raw logits" not in check.predict(log_of_sum).message

    def log_of_sum_of_squares(p, image):  # a normaliser that is never nan
        logits = reference_parts(p, image)[1]
        return logits - jnp.log(jnp.sum(logits ** 2))
    assert_result(check.predict(log_of_sum_of_squares), "failed", "wrong normaliser",
                  "logsumexp(logits)")

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
    assert_result(check.predict(transposed), "failed", "a W transposed")


def test_batched_predict():
    assert_result(check.batched_predict(jax.vmap(model.predict, in_axes=(None, 0))), "passed")
    assert_result(check.batched_predict(model.batched_predict), "failed", "library's own")
    assert_result(check.batched_predict(...), "not done", "`...`")
    for wrong in (jax.vmap(model.predict, in_axes=(0, 0)), jax.vmap(model.predict)):
        assert_result(check.batched_predict(wrong), "failed", "in_axes", "None")
    assert_result(check.batched_predict(lambda p, xs: model.predict(p, xs[0])), "failed",
                  "returned shape (", "for a batch of")
    typed = lambda p, xs: jnp.stack([model.predict(p, xs[i]) for i in range(12)])  # noqa: E731
    assert_result(check.batched_predict(typed), "failed")  # the lesson's batch of 12, typed


def test_every_network_of_a_check_has_other_widths():
    """Issue 36: 07.4, 07.5 and 07.7 used the widths 8, 6, 4 in every network, so a width
    written as a number passed; each size now takes another value in every network."""
    from nn_from_scratch.exercises import mlp_from_scratch as checker
    for cases in (2, 3, 5):
        networks = checker._networks(74, cases)
        assert [len(sizes) for sizes in networks] == [4, 3, 4, 3, 4][:cases]
        for column in (0, 1, -1):
            assert len({sizes[column] for sizes in networks}) == cases, networks
        assert all(len(set(sizes)) == len(sizes) for sizes in networks), networks


def test_parameter_count():
    def count(sizes):
        return sum(m * n + n for m, n in zip(sizes[:-1], sizes[1:]))
    assert_result(check.parameter_count(count), "passed")
    assert_result(check.parameter_count(stub), "not done")
    assert_result(check.parameter_count(...), "not done")
    assert_result(check.parameter_count(lambda sizes: 669_706), "failed", "[3, 7, 2]")
    assert_result(check.parameter_count(lambda s: sum(m * n for m, n in zip(s[:-1], s[1:]))),
                  "failed", "only the weights")
    assert_result(check.parameter_count(lambda s: sum(m * n + m for m, n in zip(s[:-1], s[1:]))),
                  "failed", "per INPUT")
    assert_result(check.parameter_count(lambda s: 3), "failed", "m * n weights plus n biases")
    assert_result(check.parameter_count(lambda s: float(count(s)) + 0.5), "failed", "an int")
    assert_result(check.parameter_count(669_706), "failed", "expected a function")


def test_a_table_of_the_written_networks_earns_nothing_when_graded():
    """Issue 35: 07.6 drew no inputs when graded, so a table of its three networks passed."""
    from nn_from_scratch.exercises._calls import fresh_inputs

    def count(sizes):
        return sum(m * n + n for m, n in zip(sizes[:-1], sizes[1:]))
    table = {tuple(s): count(s) for s in ([784, 512, 512, 10], [3, 7, 2], [6, 4, 4, 9, 5])}
    for seed in (1, 2, 3):
        with fresh_inputs(seed):
            assert check.parameter_count(lambda s: table[tuple(s)]).status == "failed"
            assert_result(check.parameter_count(count), "passed")


def hidden_std(p, image, layers=slice(None, -1), square=False, activation=model.relu):
    a = image
    for w, b in p[layers]:
        a = activation(w @ a + b)
    return jnp.var(a) if square else jnp.std(a)


def test_last_hidden_std():
    assert_result(check.last_hidden_std(hidden_std), "passed")
    assert_result(check.last_hidden_std(lambda p, x: float(hidden_std(p, x))), "passed")
    assert_result(check.last_hidden_std(stub), "not done")
    assert_result(check.last_hidden_std(lambda p, x: 1000.0), "failed", "expected")  # 07.7, #15
    assert_result(check.last_hidden_std(lambda p, x: hidden_std(p, x, square=True)), "failed",
                  "variance")
    assert_result(check.last_hidden_std(lambda p, x: hidden_std(p, x, slice(None))), "failed",
                  "last layer too")
    assert_result(check.last_hidden_std(lambda p, x: hidden_std(p, x, activation=lambda z: z)),
                  "failed", "no relu")
    assert_result(check.last_hidden_std(lambda p, x: hidden_std(p, x, slice(0, 1))), "failed",
                  "first hidden layer")
    assert_result(check.last_hidden_std(lambda p, x: jnp.std(x)), "failed", "expected")


def test_predict_refuses_a_logsumexp_that_overflows():
    def naive(params, image):  # log(sum(exp)): inf once a logit passes 88 in float32
        *hidden, (w, b) = params
        for w_h, b_h in hidden:
            image = jnp.maximum(0, w_h @ image + b_h)
        logits = w @ image + b
        return logits - jnp.log(jnp.sum(jnp.exp(logits)))
    assert_result(check.predict(naive), "failed", "returned -inf", "logsumexp")


def test_init_network_params_refuses_a_depth_written_as_a_number():
    def three_sizes(sizes, key):  # len(sizes) written as 3: right for the first network only
        keys = jax.random.split(key, 2)
        return [params.random_layer_params(m, n, k)
                for m, n, k in zip(sizes[:-1], sizes[1:], keys)]
    assert_result(check.init_network_params(three_sizes), "failed", "expected a list of")


def test_audit_random_layer_params_of_other_sizes():
    """The fixed-shapes audit: one layer (24, 50) was checked, so (50, 24) typed in passed."""
    def typed(m, n, key, scale=1e-2):
        w_key, b_key = jax.random.split(key)
        return (scale * jax.random.normal(w_key, (50, 24)),
                scale * jax.random.normal(b_key, (50,)))
    assert_result(check.random_layer_params(typed), "failed")


def test_layers_named_one_by_one_get_a_hint():
    """Walk 11: an answer that unpacks the lesson's layers by name ended in Python's raw
    "values to unpack"; the networks' depth is drawn, and the hint says to loop."""
    def three_layers(params, image):
        (w1, b1), (w2, b2), (w3, b3) = params
        h = model.relu(w2 @ model.relu(w1 @ image + b1) + b2)
        logits = w3 @ h + b3
        return logits - logsumexp(logits)
    assert_result(check.predict(three_layers), "failed", "for w, b in params")


def test_shapes_that_do_not_fit_get_a_hint():
    """Walk 11: a layer skipped, W transposed, a width or 10 classes written in ended in JAX's
    raw dot_general or broadcasting error."""
    def lessons_two_hidden(params, image):  # params[:2], the lesson's two hidden layers
        a = image
        for w, b in params[:2]:
            a = model.relu(w @ a + b)
        w, b = params[-1]
        logits = w @ a + b
        return logits - logsumexp(logits)
    assert_result(check.predict(lessons_two_hidden), "failed", "a layer skipped")
    assert_result(check.predict(lambda p, image: model.predict(p, image.reshape(784))),
                  "failed", "written as a number")
    assert_result(check.predict(lambda p, image: model.predict(p, image) * jnp.ones(10)),
                  "failed", "a size written as a number")
