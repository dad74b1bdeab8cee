"""Checkers for lesson 13, a CNN from scratch: the student writes the convolution for one image
and lifts it with ``vmap``.

Each is compared with a NumPy reference on small images made with NumPy, and the student's
function runs under ``jit`` (``fast_call``): one compile per check, none for the reference.
Each knows the usual mistakes: a flipped kernel, an output one pixel too small or
too large, channels not summed, ``in_axes`` that maps what should be shared, mean instead of
max pooling, probabilities instead of log-probabilities, a parameter count without biases.
"""
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ..i18n import N_, _
from ._calls import fast_call, generator, graded
from ._compare import expect_close, expect_shape, reject_known_wrong
from ._core import Mistake, exercise

LESSON = "13_cnn_from_scratch"
_RNG = np.random.default_rng(13)  # in class: one stream, drawn in the order of the checks


def _source(n: int) -> np.random.Generator:
    """Where an input is drawn from: the class stream, or a grading's fresh draws."""
    return generator(n) if graded() else _RNG


def _normal(*shape: int, source: np.random.Generator | None = None) -> jax.Array:
    return jnp.asarray((source or _RNG).normal(size=shape), jnp.float32)


def _made(source: np.random.Generator) -> dict[str, Any]:
    """An image that is not square and kernels that are not symmetric, so that a flipped or
    transposed kernel and a swapped axis all give other numbers (NumPy, few shapes)."""
    return {"image": _normal(5, 7, source=source),  # (H, W): no side a multiple of a kernel's
            "kernels": [_normal(3, 3, source=source), _normal(2, 3, source=source)],
            "channels": _normal(3, 5, 6, source=source),  # (C_in, H, W)
            "filters": _normal(4, 3, 3, 3, source=source),  # (C_out, C_in, kh, kw): C_out != C_in
            "biases": _normal(4, source=source),
            "batch": _normal(2, 3, 5, 6, source=source)}  # (B, C_in, H, W)


_IN_CLASS = _made(_RNG)  # made once; a grading draws its own


def _inputs() -> dict[str, Any]:
    return _made(generator(130)) if graded() else _IN_CLASS


def _window_sums(image: Any, kernel: Any, oh: int, ow: int) -> np.ndarray:
    """``out[i, j] = sum(image[i:i+kh, j:j+kw] * kernel)`` for the first oh x ow windows (NumPy)."""
    image, kernel = np.asarray(image, np.float64), np.asarray(kernel, np.float64)
    kh, kw = kernel.shape
    return np.array([[np.sum(image[i:i + kh, j:j + kw] * kernel) for j in range(ow)]
                     for i in range(oh)])


def _conv(image: Any, kernel: Any) -> np.ndarray:
    """The reference convolution of ONE image ``(H, W)`` and ONE kernel: every window."""
    (h, w), (kh, kw) = np.shape(image), np.shape(kernel)
    return _window_sums(image, kernel, h - kh + 1, w - kw + 1)


def _layer(image: Any, w: Any, b: Any) -> np.ndarray:
    """The reference layer: ``(C_in, H, W)`` through ``w: (C_out, C_in, kh, kw)`` -> maps + b."""
    image, w = np.asarray(image), np.asarray(w)
    return np.stack([sum(_conv(image[c], w[o, c]) for c in range(len(image))) + np.asarray(b)[o]
                     for o in range(len(w))])


def _pool(x: Any) -> np.ndarray:
    x = np.asarray(x)
    h, w = x.shape[0] // 2, x.shape[1] // 2
    return x[:2 * h, :2 * w].reshape(h, 2, w, 2).max(axis=(1, 3))


@exercise(LESSON, 1, "conv2d for one image")
def conv2d(student_conv2d: Any) -> str:
    inputs = _inputs()
    for kernel in inputs["kernels"]:
        image, k = np.asarray(inputs["image"]), np.asarray(kernel)
        want = _conv(image, k)
        what = _("conv2d(image, kernel) for an image {image_shape} and a kernel "
                 "{k_shape}").format(image_shape=image.shape, k_shape=k.shape)
        got = np.asarray(fast_call(student_conv2d, inputs["image"], kernel, what=what))
        (h, w), (kh, kw) = image.shape, k.shape
        if got.shape in ((h - kh, w - kw), (h - kh + 2, w - kw + 2)):
            raise Mistake(_("{what} has shape {shape}; expected {shape2}: a {kh}-row "
                            "kernel fits in {h} - {kh} + 1 places down the image (its "
                            "top-left corner can sit on rows 0 to H - kh), and the same "
                            "across").format(
                              what=what, shape=got.shape, shape2=want.shape, kh=kh, h=h))
        got = expect_shape(got, want.shape, what)
        reject_known_wrong(got, {
            N_("you flipped the kernel: that is convolution in the mathematician's sense; deep "
               "learning's 'convolution' slides the kernel as it is (a cross-correlation)"):
                _window_sums(image, k[::-1, ::-1], *want.shape),
            N_("you used the kernel transposed: kernel[a, b] multiplies image[i + a, j + b] (a "
               "down, b across)"): _window_sums(image, k.T, *want.shape) if k.shape[0] == k.shape[1]
            else np.nan,
        }, rtol=1e-4, atol=1e-4, want=want)
        expect_close(got, want, what, hint=_("out[i, j] is the window image[i:i+kh, j:j+kw] "
                                             "times the kernel, summed"))
    return N_("one image, two kernels (3x3 and 2x3): every window dotted with the kernel")


@exercise(LESSON, 2, "channels (vmap and sum)")
def conv2d_channels(student_fn: Any) -> str:
    inputs = _inputs()
    channels, filters = inputs["channels"], inputs["filters"]
    per_channel = np.stack([_conv(channels[c], filters[0][c]) for c in range(3)])
    want = per_channel.sum(0)
    what = _("conv2d_channels(image, kernels) for an image (3, 5, 6) and kernels (3, 3, 3)")
    got = np.asarray(fast_call(student_fn, channels, filters[0], what=what))
    if got.shape == (3, *want.shape):
        raise Mistake(_("returned {shape}: one map per channel. A filter SUMS its "
                        "channels' maps into one: jnp.sum(..., axis=0)").format(
                          shape=got.shape))
    got = expect_shape(got, want.shape, what)
    reject_known_wrong(got, {
        N_("returned the mean of the channels' maps; a filter adds them up (jnp.sum, not mean)"):
            per_channel.mean(0),
        N_("used only the first channel: vmap conv2d over every channel and sum the maps"):
            per_channel[0],
    }, rtol=1e-4, atol=1e-4, want=want)
    expect_close(got, want, what, hint=_("channel c goes with kernel c: "
                                         "jnp.sum(jax.vmap(conv2d)(image, kernels), axis=0)"))
    return N_("3 channels, each with its own kernel, summed into one map")


def _vmapped(student_fn: Any, args: tuple[Any, ...], want: np.ndarray, what: str,
             mapped_too: str, hint: str) -> None:
    """A vmapped answer gives ``want``; vmap's "inconsistent sizes" means ``mapped_too``."""
    got = fast_call(student_fn, *args, what=what,
                    hints={("inconsistent sizes", "vmap got"): mapped_too})
    expect_close(got, want, what, hint=hint)


@exercise(LESSON, 3, "every filter (in_axes)")
def all_filters(student_fn: Any) -> str:
    inputs = _inputs()
    channels, filters = inputs["channels"], inputs["filters"]
    _vmapped(student_fn, (channels, filters), _layer(channels, filters, np.zeros(4)),
             _("all_filters(image, w) for an image (3, 5, 6) and w (4, 3, 3, 3)"),
             _("vmap mapped the image too (3 channels against 4 filters): every filter sees the "
               "WHOLE image, so its in_axes entry is None: "
               "jax.vmap(conv2d_channels, in_axes=(None, 0))"),
             _("map over the filters (axis 0 of w) and share the image: in_axes=(None, 0)"))
    return N_("4 filters on one 3-channel image: the image shared, the filters mapped")


@exercise(LESSON, 4, "the batch (in_axes)")
def batched_conv(student_fn: Any) -> str:
    inputs = _inputs()
    batch, filters, biases = inputs["batch"], inputs["filters"], inputs["biases"]
    _vmapped(student_fn, (batch, filters, biases),
             np.stack([_layer(image, filters, biases) for image in batch]),
             _("batched_conv(images, w, b) for images (2, 3, 5, 6), w (4, 3, 3, 3), b (4,)"),
             _("vmap mapped the weights too (2 images against 4 filters): the weights are shared "
               "by every image, so their in_axes are None: "
               "jax.vmap(conv_layer, in_axes=(0, None, None))"),
             _("image i of the batch through conv_layer with the same w and b"))
    return N_("a batch of 2 images, weights shared: the numbers of lax.conv_general_dilated")


@exercise(LESSON, 5, "max_pool")
def max_pool(student_fn: Any) -> str:
    for number, shape in enumerate(((6, 8), (7, 9))):  # even, and odd: the last row and
        x = np.asarray(_normal(*shape, source=_source(150 + number)))  # column are dropped
        want = _pool(x)
        what = _("max_pool(x) for x of shape {shape}").format(shape=shape)
        got = np.asarray(fast_call(student_fn, jnp.asarray(x), what=what, hints={
            ("reshape", "cannot reshape"): _("{what} failed to reshape: with an odd "
                                             "size, drop the last row or column first, "
                                             "x[:H // 2 * 2, :W // 2 * 2]").format(
                                               what=what)}))
        if got.shape == (shape[0] - 1, shape[1] - 1):
            raise Mistake(_("returned {shape} for {shape2}: the 2x2 blocks must not "
                            "overlap (a stride of 2), so the output is (H // 2, W // 2)").format(
                              shape=got.shape, shape2=shape))
        got = expect_shape(got, want.shape, what)
        h, w = want.shape
        blocks = x[:2 * h, :2 * w].reshape(h, 2, w, 2)
        scrambled = x[:2 * h, :2 * w].reshape(h, w, 2, 2).max(axis=(2, 3))
        reject_known_wrong(got, {
            N_("took the mean of each block; max-pooling keeps the LARGEST value"):
                blocks.mean(axis=(1, 3)),
            N_("the blocks are not 2x2 squares of neighbouring pixels: reshape to (H // 2, 2, W "
               "// 2, 2) and take the max over axes 1 and 3"): scrambled,
        }, rtol=1e-5, atol=1e-6, want=want)
        expect_close(got, want, what, hint=_("the largest value of each non-overlapping 2x2 block"))
    return N_("2x2 blocks, the largest of each, on an even and an odd size")


def _tiny_cnn(seed: int) -> list[tuple[jax.Array, jax.Array]]:
    """Two 3x3 convolutions (2 and 3 filters) and a dense layer, for 10x10 images, He-scaled:
    10 -> conv 8 -> pool 4 -> conv 2 -> pool 1, so the dense layer takes 3 features."""
    draw = generator(seed)
    shapes = [(2, 1, 3, 3), (3, 2, 3, 3), (4, 3)]
    return [(jnp.asarray(draw.normal(size=s) * np.sqrt(2 / np.prod(s[1:])), jnp.float32),
             jnp.asarray(0.1 * draw.normal(size=s[0]), jnp.float32)) for s in shapes]


def _predict(params: list[tuple[jax.Array, jax.Array]], image: Any) -> np.ndarray:
    """``predict_cnn`` in NumPy: conv, relu and pool per convolution; dense; log-softmax."""
    *convs, (w, b) = [(np.asarray(w), np.asarray(b)) for w, b in params]
    x = np.asarray(image)
    for w_conv, b_conv in convs:
        x = np.stack([_pool(m) for m in np.maximum(0, _layer(x, w_conv, b_conv))])
    logits = w @ x.ravel() + b
    return logits - np.log(np.sum(np.exp(logits - logits.max()))) - logits.max()


@exercise(LESSON, 6, "predict_cnn")
def predict_cnn(student_fn: Any) -> str:
    for seed in range(2):
        params = _tiny_cnn(seed)
        image = jnp.asarray(_source(160 + seed).uniform(size=(1, 10, 10)), jnp.float32)
        want = _predict(params, image)
        what = _("predict_cnn(params, image) for an image (1, 10, 10)")
        got = np.asarray(fast_call(student_fn, params, image, what=what))
        if got.shape != want.shape:
            raise Mistake(_("returned shape {shape} for ONE image; expected {shape2}: "
                            "one log-probability per class").format(
                              shape=got.shape, shape2=want.shape))
        reject_known_wrong(got, {
            N_("returned probabilities (a softmax); predict_cnn returns LOG-probabilities, as "
               "predict does: logits - logsumexp(logits)"): np.exp(want),
        }, rtol=1e-4, atol=1e-5, want=want)
        shift = got - want
        if np.allclose(shift, shift[0], atol=1e-5) and abs(shift[0]) > 1e-4:
            raise Mistake("returned the raw logits: subtract logsumexp(logits)")
        expect_close(got, want, what, hint=_("each convolution: conv_layer, relu, then "
                                             "vmap(max_pool); then flatten and the dense layer(s)"))
    return N_("matches the reference on 2 random CNNs")


@exercise(LESSON, 7, "parameters of a conv layer")
def conv_param_count(student_fn: Any) -> str:
    for c_in, c_out, k in ((1, 8, 3), (8, 16, 3), (3, 5, 5)):
        want = c_out * (c_in * k * k + 1)
        what = f"conv_param_count({c_in}, {c_out}, {k})"
        got = fast_call(student_fn, c_in, c_out, k, what=what, static_argnums=(0, 1, 2))
        if got == c_out * c_in * k * k:
            raise Mistake(_("{what} = {got} counts only the weights: each filter has "
                            "one bias too").format(what=what, got=got))
        if got == c_out * (c_in * k + 1) or got == c_out * c_in * k + c_out:
            raise Mistake(_("{what} = {got}: a kernel is k x k, so k * k weights per "
                            "channel").format(what=what, got=got))
        if got != want:
            raise Mistake(_("{what} = {got!r}; a filter has c_in kernels of k x k "
                            "weights and one bias, and there are c_out filters. The "
                            "image size plays no part").format(what=what, got=got))
    return N_("c_out * (c_in * k * k + 1), whatever the image size")
