"""Checkers for lesson 07, an MLP from scratch: the student writes the network's core.

Each is compared with the library on small random networks and inputs, and
knows the usual mistakes: Python's ``max``, a reused key, probabilities instead
of log-probabilities, a ReLU on the last layer, ``in_axes`` that maps the
parameters too.
"""
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from .. import model
from ._core import Mistake, call, exercise, expect_close, expect_shape

LESSON = "07_mlp_from_scratch"
# 5 random networks of 3 and 2 layers. Inputs are made with NumPy and the shapes repeat,
# so the checks stay fast: every new shape of a JAX operation costs an XLA compile.
NETWORKS = [[8, 6, 6, 4], [8, 6, 4], [8, 6, 6, 4], [8, 6, 4], [8, 6, 6, 4]]


def _network(sizes: list[int], seed: int) -> list[tuple[jax.Array, jax.Array]]:
    """Parameters with He-sized weights (so that mistakes change the outputs), as float32."""
    rng = np.random.default_rng(seed)
    return [(jnp.asarray(rng.normal(size=(n, m)) * np.sqrt(2 / m), jnp.float32),
             jnp.asarray(0.1 * rng.normal(size=n), jnp.float32))
            for m, n in zip(sizes[:-1], sizes[1:])]


def _uniform(seed: int, shape: tuple[int, ...]) -> jax.Array:
    return jnp.asarray(np.random.default_rng(seed).uniform(size=shape), jnp.float32)


@exercise(LESSON, 1, "relu")
def relu(student_relu: Any) -> str:
    x = jnp.asarray(np.random.default_rng(0).normal(size=(3, 4)) * 3, jnp.float32)  # +, - and big
    for shape_x in (x, x[0], jnp.float32(-2.0), jnp.float32(5.0)):
        want = model.relu(shape_x)
        got = call(student_relu, shape_x, what=f"relu(x) for x of shape {tuple(shape_x.shape)}")
        got = expect_shape(got, want.shape, f"relu(x) for x of shape {tuple(shape_x.shape)}")
        negative = np.asarray(shape_x) < 0
        if np.any(got[negative] != 0):
            raise Mistake("relu must be 0 where x < 0 (e.g. relu(-2.0) = 0); use "
                          "jnp.maximum(0, x)")
        if not np.allclose(got[~negative], np.asarray(shape_x)[~negative]):
            raise Mistake("relu must return x unchanged where x > 0, however large "
                          "(relu(5.0) = 5.0); use jnp.maximum(0, x)")
    return "max(0, x) on a matrix, a vector and two scalars, shapes kept"


def _check_layer(w: Any, b: Any, m: int, n: int, what: str) -> tuple[np.ndarray, np.ndarray]:
    w = expect_shape(w, (n, m), f"W of {what}")
    b = expect_shape(b, (n,), f"b of {what}")
    if w.dtype != np.float32 or b.dtype != np.float32:
        raise Mistake(f"W and b of {what} should be float32 (jax.random.normal's default); "
                      f"got {w.dtype} and {b.dtype}")
    return w, b


@exercise(LESSON, 2, "random_layer_params")
def random_layer_params(student_fn: Any) -> str:
    m, n, key = 40, 30, jax.random.key(7)
    out = call(student_fn, m, n, key, what="random_layer_params(40, 30, key)")
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
        raise Mistake(f"random_layer_params should return a tuple (W, b); got {type(out).__name__}")
    w, b = _check_layer(out[0], out[1], m, n, "random_layer_params(40, 30, key)")
    if np.allclose(b, w.ravel()[:n]):
        raise Mistake("b repeats the first numbers of W: both were drawn with the same key. "
                      "Split it first: w_key, b_key = jax.random.split(key)")
    if not 0.008 < w.std() < 0.012:
        raise Mistake(f"W's standard deviation is {w.std():.4g}; with the default scale=1e-2 it "
                      f"should be about 0.01: multiply the normal draws by scale")
    again = call(student_fn, m, n, key, what="random_layer_params again with the same key")
    if not np.array_equal(np.asarray(again[0]), w):
        raise Mistake("the same key gave different weights: draw only from `key` (no global "
                      "random state such as np.random)")
    other = call(student_fn, m, n, jax.random.key(8), what="random_layer_params with another key")
    if np.array_equal(np.asarray(other[0]), w):
        raise Mistake("another key gave the same weights: draw from the key you are given")
    return "shapes (n, m) and (n,), scale 0.01, W and b from different subkeys"


@exercise(LESSON, 3, "init_network_params")
def init_network_params(student_fn: Any) -> str:
    sizes, key = [16, 16, 16, 16], jax.random.key(3)  # same-shaped layers show a shared key
    params = call(student_fn, sizes, key, what=f"init_network_params({sizes}, key)")
    if not isinstance(params, list) or len(params) != len(sizes) - 1:
        raise Mistake(f"expected a list of {len(sizes) - 1} (W, b) tuples for {len(sizes)} layer "
                      f"sizes; got {type(params).__name__} of length {len(params)}")
    if not all(isinstance(layer, (tuple, list)) and len(layer) == 2 for layer in params):
        raise Mistake("each layer should be a tuple (W, b)")
    layers = [_check_layer(layer[0], layer[1], m, n, f"layer {i}")
              for i, (layer, m, n) in enumerate(zip(params, sizes[:-1], sizes[1:]))]
    (w0, _), (w1, _) = layers[0], layers[1]
    if np.allclose(w0, w1):
        raise Mistake("layers 0 and 1 have the same weights: every layer got the same key. "
                      "Split the key into one key per layer: keys = jax.random.split(key, n)")
    direct = 1e-2 * np.asarray(jax.random.normal(key, (sizes[1], sizes[0])))
    if any(w.shape == direct.shape and np.allclose(w, direct) for w, _ in layers):
        raise Mistake("a layer was drawn with the very key you were given, which was also "
                      "split: use only the keys from jax.random.split(key, ...)")
    if any(np.allclose(b, w.ravel()[: len(b)]) for w, b in layers):
        raise Mistake("a layer's b repeats its W: split each layer's key for W and b")
    return f"{len(sizes) - 1} layers of the right shapes, one fresh key per layer and per W and b"


@exercise(LESSON, 4, "predict")
def predict(student_predict: Any) -> str:
    for seed, sizes in enumerate(NETWORKS):
        params = _network(sizes, seed)
        image = _uniform(100 + seed, (sizes[0],))
        want = np.asarray(model.predict(params, image))
        what = f"predict(params, image) for layers {sizes}"
        got = np.asarray(call(student_predict, params, image, what=what))
        if got.shape != want.shape:
            raise Mistake(f"returned shape {got.shape} for one example of shape ({sizes[0]},); "
                          f"expected ({sizes[-1]},) — predict takes ONE example; use "
                          f"batched_predict for a batch")
        if np.allclose(got, np.exp(want), atol=1e-5):
            raise Mistake("returned probabilities (a softmax); predict returns LOG-probabilities: "
                          "logits - logsumexp(logits)")
        shift = got - want
        if np.allclose(shift, shift[0], atol=1e-5) and abs(shift[0]) > 1e-4:
            raise Mistake("returned the raw logits: subtract logsumexp(logits) to turn them into "
                          "log-probabilities")
        *hidden, (w_last, b_last) = [(np.asarray(w), np.asarray(b)) for w, b in params]
        activations = np.asarray(image)  # NumPy here: no JAX compile for a mistake's variant
        for w, b in hidden:
            activations = np.maximum(0, w @ activations + b)
        logits = np.maximum(0, w_last @ activations + b_last)  # the mistake: relu on the logits
        relu_last = logits - np.log(np.sum(np.exp(logits)))
        if np.allclose(got, relu_last, atol=1e-5) and not np.allclose(want, relu_last, atol=1e-5):
            raise Mistake("applied relu to the last layer too: the last layer's outputs are the "
                          "logits, with no relu")
        expect_close(got, want, what, hint="each layer computes relu(W @ a + b), the last one "
                                           "W @ a + b, then logits - logsumexp(logits)")
    return f"matches the reference on {len(NETWORKS)} random networks"


@exercise(LESSON, 5, "batched_predict")
def batched_predict(student_fn: Any) -> str:
    for seed, sizes in enumerate(NETWORKS[:3]):
        params = _network(sizes, seed)
        images = _uniform(200 + seed, (12, sizes[0]))
        what = f"batched_predict(params, images) for images of shape {images.shape}"
        got = call(student_fn, params, images, what=what, hints={
            ("inconsistent sizes", "vmap"): "vmap tried to map over the parameters too: they "
            "are shared by every example, so give them in_axes None: "
            "jax.vmap(predict, in_axes=(None, 0))"})
        if np.shape(got) != (12, sizes[-1]):
            raise Mistake(f"returned shape {np.shape(got)} for a batch of 12 images; expected "
                          f"(12, {sizes[-1]}): one row of log-probabilities per image")
        expect_close(got, model.batched_predict(params, images), what,
                     hint="row i must equal predict(params, images[i])")
    return "equals predict row by row on batches for 3 networks"


@exercise(LESSON, 6, "parameter count")
def parameter_count(n_params: Any) -> str:
    sizes = [784, 512, 512, 10]
    weights = sum(m * n for m, n in zip(sizes[:-1], sizes[1:]))
    biases = sum(sizes[1:])
    if n_params == weights:
        raise Mistake(f"{n_params:,} counts only the weights: every layer also has one bias "
                      f"per output")
    if n_params != weights + biases:
        raise Mistake(f"got {n_params!r}; count m * n weights plus n biases for each layer "
                      f"(m inputs, n outputs)")
    return f"{n_params:,} parameters, weights and biases"


@exercise(LESSON, 7, "why He init")
def he_ratio(ratio: Any) -> str:
    value = float(ratio)
    if not np.isfinite(value) or value <= 0:
        raise Mistake(f"got {ratio!r}; divide the He network's activation std by the normal one's")
    if value < 1:
        raise Mistake(f"got {value:.3g} < 1: the ratio is std(He) / std(normal), the other way up")
    if value < 10:
        raise Mistake(f"got {value:.3g}: with 0.01 weights the signal should fade far more than "
                      f"that over three layers; did you compare the LAST hidden layer?")
    return f"He init keeps the signal {value:.0f}x stronger in the last hidden layer"
