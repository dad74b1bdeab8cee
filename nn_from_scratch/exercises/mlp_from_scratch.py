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
from .. import params as library_params
from ..i18n import N_, _
from ._calls import call, fast_call, finish_first, generator, more_when_graded, prng_key
from ._compare import as_array, expect_close, expect_int, expect_shape, reject_known_wrong
from ._core import Mistake, exercise
from ._draws import draw_sizes, layer_sizes, network
from ._hints import LOGSUMEXP_OVERFLOWED, NETWORK_SHAPES, summary

LESSON = "07_mlp_from_scratch"


def _networks(seed: int, cases: int) -> list[list[int]]:
    """Layer sizes of ``cases`` random networks, alternately of 3 and 2 layers, drawn
    (:func:`draw_sizes` with ``generator(seed)``): the input width, the hidden widths and the
    classes take another value in each network, no two equal within one, so that a width
    written as a number is right for one network at most. The student's function runs under
    jax.jit (fast_call): one compile per network, where running it as written would compile
    each of its operations for every new shape."""
    drawn = draw_sizes(generator(seed), cases, inputs=(6, 13), hidden=(3, 10), second=(3, 10),
                       classes=(2, 9))
    return [layer_sizes(s, 2 - i % 2) for i, s in enumerate(drawn)]


def _network(sizes: list[int], seed: int) -> list[tuple[jax.Array, jax.Array]]:
    """:func:`network` (He-sized weights, float32) as JAX arrays."""
    return [(jnp.asarray(w), jnp.asarray(b)) for w, b in network(generator(seed), sizes)]


def _uniform(seed: int, shape: tuple[int, ...]) -> jax.Array:
    return jnp.asarray(generator(seed).uniform(size=shape), jnp.float32)


@exercise(LESSON, 1, "relu")
def relu(student_relu: Any) -> str:
    for shape_x in _relu_inputs():
        what = _("relu(x) for x of shape {tuple_shape_x_shape}").format(
                   tuple_shape_x_shape=tuple(shape_x.shape))
        try:  # under jit, as lesson 08 trains the network that calls it
            got = fast_call(student_relu, shape_x, what=what, hints=_RELU_HINTS, needs_jit=_(
                "{what} works as written, but not under jax.jit: NumPy (np.maximum, "
                "np.asarray), .tolist() and float() want numbers, and a traced value has none "
                "yet, so lesson 08 cannot compile a network that calls your relu. Write it "
                "with jnp alone: jnp.maximum(0, x)").format(what=what))
        except Mistake as err:
            if err.__cause__ is None or "jax.jit" in str(err):
                raise  # a hint of its own
            raise Mistake(_("{error}; relu works entry by entry, on x of any shape (a matrix, "
                            "a vector, a number): jnp.maximum(0, x) does").format(
                error=err)) from None
        _relu_values(got, np.asarray(shape_x), what)
    return N_("max(0, x) on arrays of 0 to 3 dimensions (zeros and numbers in the thousands "
              "among them), under jit, shape and dtype kept")


_RELU_HINTS: dict[str | tuple[str, ...], str] = {
    "scalar index": N_("jnp.max(a, axis) is the largest entry of ONE array (its second "
                       "argument is an axis); for max(0, x) entry by entry use jnp.maximum(0, x)"),
    "truth value": N_("Python's max(0, x) asks whether 0 < x is True for a whole array (\"the "
                      "truth value ... is ambiguous\"); use jnp.maximum(0, x), entry by entry"),
    "read-only": N_("a JAX array cannot be changed in place (x[x < 0] = 0, or on np.asarray(x)): "
                    "return a new array, jnp.maximum(0, x)")}


def _relu_inputs() -> list[jax.Array]:
    """A matrix of drawn shape (with a 0 and two numbers in the thousands or more among its
    entries), its first row kept 2-D (shape (1, n): a squeeze shows), a drawn 3-D block, a
    vector and three numbers: no answer right for one shape or one range passes (a jit of the
    library's relu warmed for one shape: red team, round twenty-three)."""
    source = generator(0)
    rows, columns = draw_sizes(source, 1, rows=(2, 40), columns=(2, 40))[0].values()
    x = (source.normal(size=(rows, columns)) * 3).astype(np.float32)
    spots = source.choice(x.size, size=3, replace=False)
    x.flat[spots] = [0.0, 10 ** source.uniform(3, 6), -10 ** source.uniform(3, 6)]
    block = (source.normal(size=tuple(source.integers(2, 7, size=3))) * 3).astype(np.float32)
    return [jnp.asarray(v) for v in (x, x[:1], block, x[0], np.float32(-2.0), np.float32(5.0),
                                     np.float32(0.0))]


def _relu_values(got: Any, x: np.ndarray, what: str) -> None:
    """A :class:`Mistake` unless ``got`` is max(0, x): x's shape and dtype, 0 where x <= 0, x
    where x > 0; it names the first entry that is wrong."""
    for axis in range(x.ndim):  # jnp.max(x, 0): the largest entry down an axis
        biggest = np.max(x, axis=axis)
        if np.shape(got) == biggest.shape and np.allclose(as_array(got), biggest):
            raise Mistake(_(_RELU_HINTS["scalar index"]))
    dtype = got.dtype if isinstance(got, (np.ndarray, np.generic, jax.Array)) else None
    if dtype is not None and np.dtype(dtype) != x.dtype:
        raise Mistake(_("{what} returned numbers of dtype {dtype}; relu keeps x's dtype, "
                        "{want}: return jnp.maximum(0, x), with no astype").format(
            what=what, dtype=np.dtype(dtype).name, want=x.dtype.name))
    array = expect_shape(got, x.shape, what)
    want = np.maximum(x, 0)
    right = np.where(x > 0, np.isclose(array, want, rtol=1e-6, atol=0), array == 0)
    if np.all(right):
        return
    at = int(np.flatnonzero(~right)[0])
    x_at, got_at = float(x.flat[at]), array.flat[at]
    if x_at < 0:
        rule = N_("relu is 0 wherever x < 0: use jnp.maximum(0, x)")
    elif x_at == 0:
        rule = N_("relu(0) = max(0, 0) = 0")
    else:
        rule = N_("relu returns x unchanged wherever x > 0, however large: use jnp.maximum(0, x)")
    raise Mistake(_("{what} gives {got} where x = {x:.6g}; {rule}").format(
        what=what, got=summary(got_at), x=x_at, rule=_(rule)))


def _check_layer(layer: Any, m: int, n: int, what: str) -> tuple[np.ndarray, np.ndarray]:
    """``layer`` as NumPy ``(W, b)``, or a Mistake if it is not a pair of float32 (n, m), (n,)."""
    if not (isinstance(layer, (tuple, list)) and len(layer) == 2):
        raise Mistake(_("{what} should be a tuple (W, b); got {summary_layer}").format(
                          what=what, summary_layer=summary(layer)))
    w, b = np.asarray(layer[0]), np.asarray(layer[1])
    if w.shape == (m, n) and m != n:
        raise Mistake(_("W of {what} has shape {shape}, the transpose: W has one ROW "
                        "per output and one column per input, shape (n, m) = {value}").format(
                          what=what, shape=w.shape, value=(n, m)))
    w, b = expect_shape(w, (n, m), f"W of {what}"), expect_shape(b, (n,), f"b of {what}")
    if w.dtype != np.float32 or b.dtype != np.float32:
        raise Mistake(_("W and b of {what} should be float32 (jax.random.normal's "
                        "default); got {dtype} and {dtype2}").format(
                          what=what, dtype=w.dtype, dtype2=b.dtype))
    return w, b


def _drawn_from(array: np.ndarray, keys: dict[str, Any], scale: float = 1e-2) -> str | None:
    """The name of the key in ``keys`` whose ``scale * normal`` draws give ``array``, if any."""
    for name, key in keys.items():
        if np.allclose(array, scale * np.asarray(jax.random.normal(key, array.shape))):
            return name
    return None


@exercise(LESSON, 2, "random_layer_params")
def random_layer_params(student_fn: Any) -> str:
    m, n, key = 24, 50, prng_key(7)  # m != n: a transposed W shows
    what = f"random_layer_params({m}, {n}, key)"
    w, b = _check_layer(call(student_fn, m, n, key, what=what), m, n, what)
    if np.all(w >= 0) or np.all(b >= 0):
        raise Mistake("every draw is >= 0: jax.random.uniform draws from [0, 1); draw from "
                      "jax.random.normal, centred on 0")
    w_key, b_key = jax.random.split(key)
    keys = {"key": key, "w_key": w_key, "b_key": b_key}
    w_from, b_from = _drawn_from(w, keys), _drawn_from(b, keys)
    if w_from == "key" or b_from == "key":
        raise Mistake(_("{value} was drawn with `key` itself, which you also split: a "
                        "key is used once, so draw W and b from the two new keys, "
                        "w_key, b_key = jax.random.split(key)").format(
                          value='W' if w_from == 'key' else 'b'))
    if (w_from is not None and w_from == b_from) or np.allclose(b, w.ravel()[:n]):
        raise Mistake("b repeats the first numbers of W: both were drawn with the same key. "
                      "Split it first: w_key, b_key = jax.random.split(key)")
    for name, array in (("W", w), ("b", b)):
        if not 0.006 < array.std() < 0.015:
            raise Mistake(_("{name}'s standard deviation is {std:.3g}; with the default "
                            "scale=1e-2 it should be about 0.01: multiply the normal "
                            "draws by scale, W and b alike").format(
                              name=name, std=array.std()))
    big = f"random_layer_params({m}, {n}, key, scale=0.5)"
    w_big, b_big = _check_layer(call(student_fn, m, n, key, 0.5, what=big), m, n, big)
    if not (np.allclose(w_big, 50 * w, rtol=1e-4) and np.allclose(b_big, 50 * b, rtol=1e-4)):
        raise Mistake(_("with scale=0.5 and the same key, W and b should be exactly 50 "
                        "times those with scale=0.01: return scale * normal draws, for "
                        "W and b alike (got {summary_b_big} for b)").format(
                          summary_b_big=summary(b_big)))
    again = call(student_fn, m, n, key, what=_("random_layer_params again with the same key"))
    if not np.array_equal(np.asarray(again[0]), w):
        raise Mistake("the same key gave different weights: draw only from `key` (no global "
                      "random state such as np.random)")
    other = call(student_fn, m, n, prng_key(8),
                 what=_("random_layer_params with another key"))
    if np.array_equal(np.asarray(other[0]), w):
        raise Mistake("another key gave the same weights: draw from the key you are given")
    # a layer of drawn sizes: a shape written as a number, (50, 24), fails
    sizes = draw_sizes(generator(72), 1, m=(3, 40), n=(3, 40),
                       keep=lambda s: s["m"] not in (24, 50) and s["n"] not in (24, 50))[0]
    drawn = f"random_layer_params({sizes['m']}, {sizes['n']}, key)"
    _check_layer(call(student_fn, sizes["m"], sizes["n"], key, what=drawn), sizes["m"],
                 sizes["n"], drawn)
    return N_("shapes (n, m) and (n,), scale * normal draws, W and b from different subkeys")


def _recorded(student_fn: Any, sizes: list[int], key: Any, what: str) -> tuple[Any, list] | None:
    """Run ``student_fn(sizes, key)`` with its ``random_layer_params`` replaced, for the call,
    by one that only records its ``(m, n, key)`` and returns W and b full of the call's
    number (1, 2, ...): no random draws, so nothing to compile. ``None`` when the student's
    function does not call a global ``random_layer_params``."""
    names = getattr(student_fn, "__globals__", None)
    if not isinstance(names, dict) or not callable(names.get("random_layer_params")):
        return None
    calls: list[tuple[Any, Any, Any]] = []

    def recorder(m: Any, n: Any, layer_key: Any, *rest: Any, **options: Any) -> tuple:
        calls.append((m, n, layer_key))
        return np.full((n, m), len(calls), np.float32), np.full((n,), len(calls), np.float32)

    real, names["random_layer_params"] = names["random_layer_params"], recorder
    try:
        got = call(student_fn, sizes, key, what=what)
    finally:
        names["random_layer_params"] = real
    return (got, calls) if calls else None


def _key_bits(key: Any) -> np.ndarray:
    return np.asarray(jax.random.key_data(key) if jax.dtypes.issubdtype(
        getattr(key, "dtype", None), jax.dtypes.prng_key) else key)


@exercise(LESSON, 3, "init_network_params")
def init_network_params(student_fn: Any) -> str:
    finish_first(student_fn, "random_layer_params", random_layer_params)
    # m != n shows m and n swapped; a second network of another depth, its sizes drawn, shows a
    # number of layers written as a number
    deeper = draw_sizes(generator(4), 1, a=(2, 30), b=(2, 30), c=(2, 30), d=(2, 30))[0]
    _init_one(student_fn, [24, 50, 50], prng_key(3))
    return _init_one(student_fn, list(deeper.values()), prng_key(4))


def _init_one(student_fn: Any, sizes: list[int], key: Any) -> str:
    """07.3's check for one list of sizes: its passing line, or a Mistake."""
    what = f"init_network_params({sizes}, key)"
    recorded = _recorded(student_fn, sizes, key, what)
    got = recorded[0] if recorded else call(student_fn, sizes, key, what=what)
    if not isinstance(got, list) or len(got) != len(sizes) - 1:
        raise Mistake(_("expected a list of {len_sizes} (W, b) tuples for {len_sizes2} "
                        "layer sizes, one per pair of consecutive sizes; got "
                        "{summary_got}").format(
                          len_sizes=len(sizes) - 1, len_sizes2=len(sizes),
                          summary_got=summary(got)))
    layers = [_check_layer(layer, m, n, _("layer {i}").format(i=i))
              for i, (layer, m, n) in enumerate(zip(got, sizes[:-1], sizes[1:]))]
    keys = jax.random.split(key, len(sizes) - 1)
    same_key = (_("every layer got the same key: split the key into one key per layer, "
                  "keys = jax.random.split(key, len(sizes) - 1)"))
    in_order = (_("layer i should be random_layer_params(m, n, keys[i]) for the i-th pair of "
                  "consecutive sizes, with keys = jax.random.split(key, len(sizes) - 1)"))
    passed = (_("{len_sizes_1} layers of the right shapes, layer i from the i-th of "
                "the split keys").format(len_sizes_1=len(sizes) - 1))
    if recorded:  # the lesson's way: check what was passed to random_layer_params, in order
        used = [_key_bits(layer_key) for _unused, _unused, layer_key in recorded[1]]
        if len(used) > 1 and all(np.array_equal(bits, _key_bits(key)) for bits in used):
            raise Mistake(same_key)
        if not all(np.all(w == i + 1) for i, (w, _unused) in enumerate(layers)) or not all(
                np.array_equal(bits, want) for bits, want in zip(used, _key_bits(keys))):
            raise Mistake(in_order)
        return passed
    # random_layer_params reached otherwise (e.g. as a module's attribute): compare the draws
    make = library_params.random_layer_params

    def same(layer_keys: Any) -> bool:
        return all(np.allclose(a, np.asarray(c)) for layer, m, n, k in zip(
            layers, sizes[:-1], sizes[1:], layer_keys) for a, c in zip(layer, make(m, n, k)))

    if same(keys):
        return passed
    if same([key] * (len(sizes) - 1)):
        raise Mistake(same_key)
    raise Mistake(in_order)


def _logits(params: Any, x: Any, last_relu: bool = False) -> np.ndarray:
    """The last layer's outputs in NumPy (no JAX compile) for ONE example or a batch."""
    *hidden, (w_last, b_last) = [(np.asarray(w), np.asarray(b)) for w, b in params]
    a = np.asarray(x)
    for w, b in hidden:
        a = np.maximum(0, a @ w.T + b)
    logits = a @ w_last.T + b_last
    return np.maximum(0, logits) if last_relu else logits


def _log_softmax(logits: np.ndarray) -> np.ndarray:
    top = logits.max(axis=-1, keepdims=True)
    return logits - top - np.log(np.sum(np.exp(logits - top), axis=-1, keepdims=True))


@exercise(LESSON, 4, "predict")
def predict(student_predict: Any) -> str:
    networks = _networks(74, 5)
    for seed, sizes in enumerate(networks):
        params = _network(sizes, seed)
        if seed == len(networks) - 1:  # logits near 100: exp overflows float32 (above 88)
            params[-1] = (params[-1][0], params[-1][1] + 100.0)
        image = _uniform(100 + seed, (sizes[0],))
        logits = _logits(params, image)
        want = _log_softmax(logits)
        what = _("predict(params, image) for layers {sizes}").format(sizes=sizes)
        got = as_array(fast_call(student_predict, params, image, what=what,
                                 hints=NETWORK_SHAPES))
        if got.shape == want.shape and np.all(np.isneginf(got)):
            raise Mistake(LOGSUMEXP_OVERFLOWED)
        if got.shape != want.shape:
            raise Mistake(_("returned shape {shape} for one example of shape "
                            "({sizes},); expected ({sizes2},) — predict takes ONE "
                            "example; use batched_predict for a batch").format(
                              shape=got.shape, sizes=sizes[0], sizes2=sizes[-1]))
        if np.allclose(got, np.exp(want), atol=1e-5):
            raise Mistake("returned probabilities (a softmax); predict returns LOG-probabilities: "
                          "logits - logsumexp(logits)")
        if np.allclose(got, logits, atol=1e-5):
            raise Mistake("returned the raw logits: subtract logsumexp(logits) to turn them into "
                          "log-probabilities")
        if np.any(np.isnan(got)):
            raise Mistake("returned nan: a log of a negative number? The logits can be negative, "
                          "and so can their sum; subtract logsumexp(logits), log Σ exp(logits)")
        shift = got - want
        if np.allclose(shift, shift[0], atol=1e-5) and abs(shift[0]) > 1e-4:
            raise Mistake(_("the log-probabilities are all off by the same {value:.3g}: "
                            "the wrong normaliser was subtracted. Subtract "
                            "logsumexp(logits) = log Σ exp(logits), so that their exp "
                            "sums to 1").format(value=-shift[0]))
        relu_last = _log_softmax(_logits(params, image, last_relu=True))
        if np.allclose(got, relu_last, atol=1e-5) and not np.allclose(want, relu_last, atol=1e-5):
            raise Mistake("applied relu to the last layer too: the last layer's outputs are the "
                          "logits, with no relu")
        expect_close(got, want, what, hint=_("each layer computes relu(W @ a + b), the last one "
                                             "W @ a + b, then logits - logsumexp(logits)"))
    return _("matches the reference on {len_NETWORKS} random networks").format(
               len_NETWORKS=len(networks))


@exercise(LESSON, 5, "batched_predict")
def batched_predict(student_fn: Any) -> str:
    batches = [s["batch"] for s in draw_sizes(generator(75), 3, batch=(5, 16))]
    for seed, (sizes, batch) in enumerate(zip(_networks(76, 3), batches)):
        params = _network(sizes, seed)
        images = _uniform(200 + seed, (batch, sizes[0]))
        what = _("batched_predict(params, images) for images of shape {images_shape}").format(
                   images_shape=images.shape)
        got = fast_call(student_fn, params, images, what=what, hints={
            ("inconsistent sizes", "vmap"): N_("vmap tried to map over the parameters too: they "
                                               "are shared by every example, so give them "
                                               "in_axes None: jax.vmap(predict, in_axes=(None, "
                                               "0))"), **NETWORK_SHAPES})
        if np.shape(got) != (batch, sizes[-1]):
            raise Mistake(_("returned shape {shape_got} for a batch of {batch} images; "
                            "expected ({batch}, {sizes}): one row of log-probabilities per "
                            "image").format(shape_got=np.shape(got), batch=batch,
                                            sizes=sizes[-1]))
        expect_close(got, _log_softmax(_logits(params, images)), what,
                     hint=_("row i must equal predict(params, images[i])"))
    return N_("equals predict row by row on a batch of images, for 3 networks")


@exercise(LESSON, 6, "parameter count")
def parameter_count(student_fn: Any) -> str:
    for sizes in more_when_graded(  # a table of the written networks earns nothing graded
            ([784, 512, 512, 10], [3, 7, 2], [6, 4, 4, 9, 5]), 76,
            lambda draw: [int(n) for n in draw.integers(1, 1000, size=draw.integers(2, 6))]):
        weights = sum(m * n for m, n in zip(sizes[:-1], sizes[1:]))
        what = f"n_params({sizes})"
        got = call(student_fn, list(sizes), what=what)
        got = expect_int(got, what, _("return a count, an int"))
        if got == weights + sum(sizes[1:]):
            continue
        reject_known_wrong(got, {
            _("{what} = {got:,} counts only the weights: every layer also has one bias "
              "per output").format(what=what, got=got): weights,
            _("{what} = {got:,} gives each layer one bias per INPUT; a layer has one "
              "bias per output, n").format(what=what, got=got): weights + sum(sizes[:-1]),
            _("{what} = {got:,} counts one layer too many: the layers are the PAIRS of "
              "consecutive sizes, zip(sizes[:-1], sizes[1:])").format(
                what=what, got=got): weights + sum(sizes[1:]) + sizes[0],
        })
        raise Mistake(_("{what} = {summary_got}; count m * n weights plus n biases for "
                        "each layer (m inputs, n outputs)").format(
                          what=what, summary_got=summary(got)))
    return N_("m * n weights plus n biases per layer, on 3 networks")


def _last_hidden_std(params: list[tuple[jax.Array, jax.Array]], image: jax.Array,
                     layers: slice = slice(None, -1), activation: Any = model.relu) -> float:
    a = np.asarray(image)
    for w, b in params[layers]:
        a = np.asarray(activation(np.asarray(w) @ a + np.asarray(b)))
    return float(np.std(a))


@exercise(LESSON, 7, "why He init")
def last_hidden_std(student_fn: Any) -> str:
    for seed, sizes in enumerate(_networks(77, 2)):
        params = _network(sizes, seed)
        image = _uniform(100 + seed, (sizes[0],))
        what = _("last_hidden_std(params, image) for layers {sizes}").format(sizes=sizes)
        got = fast_call(student_fn, params, image, what=what, hints=NETWORK_SHAPES)
        if np.ndim(got) != 0:
            raise Mistake(_("{what} returned {summary_got}; return one number, the "
                            "standard deviation of the last hidden layer's activations "
                            "(jnp.std)").format(what=what, summary_got=summary(got)))
        value, want = float(got), _last_hidden_std(params, image)
        if np.isclose(value, want, rtol=1e-4):
            continue
        reject_known_wrong(value, {
            N_("that is the variance; return the standard deviation, jnp.std"): want ** 2,
            N_("that ran through the last layer too: the hidden layers are params[:-1]"):
                _last_hidden_std(params, image, slice(None)),
            N_("that has no relu: each hidden layer computes relu(W @ a + b)"):
                _last_hidden_std(params, image, activation=lambda z: z),
            N_("that is the std of the first hidden layer; run through every hidden layer, "
               "params[:-1]"): _last_hidden_std(params, image, slice(0, 1)),
        }, rtol=1e-4, want=want)
        raise Mistake(_("{what} gave {value:.4g}; expected {want:.4g}: a = relu(W @ a + "
                        "b) for each (W, b) in params[:-1], then jnp.std(a)").format(
                          what=what, value=value, want=want))
    return N_("the std of the last hidden layer's activations, on 2 networks")
