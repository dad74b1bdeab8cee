"""Checkers for lesson 13, a CNN from scratch: the student writes the convolution for one image
and lifts it with ``vmap``.

Each is compared with a NumPy reference on small images made with NumPy, and the student's
function runs under ``jit`` (``fast_call``): one compile per check, none for the reference.
Each knows the usual mistakes: a flipped kernel, an output one pixel too small or
too large, channels not summed, ``in_axes`` that maps what should be shared, mean instead of
max pooling, maps flattened in the wrong order, probabilities instead of log-probabilities, a
parameter count without biases, padding counted once, a gradient without the flip, a matrix
with its pixels numbered column by column.
"""
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ..i18n import N_, _
from ._calls import fast_call, generator, graded, library_name, more_when_graded
from ._compare import (
    as_array,
    expect_close,
    expect_int,
    expect_own_code,
    expect_shape,
    reject_known_wrong,
)
from ._core import Mistake, exercise
from ._draws import draw_sizes
from ._hints import LOGSUMEXP_OVERFLOWED

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
    other = draw_sizes(source, 1, h=(6, 9), w=(8, 11))[0]  # a second image, of other sizes
    return {"image": _normal(5, 7, source=source),  # (H, W): no side a multiple of a kernel's
            "image2": _normal(other["h"], other["w"], source=source),
            "kernels": [_normal(3, 3, source=source), _normal(2, 3, source=source)],
            "channels": _normal(3, 5, 6, source=source),  # (C_in, H, W)
            "filters": _normal(4, 3, 3, 3, source=source),  # (C_out, C_in, kh, kw): C_out != C_in
            "biases": _normal(4, source=source),
            "batch": _normal(2, 3, 5, 6, source=source),  # (B, C_in, H, W)
            "layers": [_layer_case(source, **sizes) for sizes in draw_sizes(  # drawn: 13.2-13.4
                source, 1, c_in=(2, 5), c_out=(2, 6), b=(2, 5), h=(5, 9), w=(6, 10),
                keep=lambda s: s["c_in"] != 3 and s["c_out"] != 4 and s["b"] != 2)]}


def _layer_case(source: np.random.Generator, c_in: int, c_out: int, b: int, h: int,
                w: int) -> dict[str, Any]:
    """A case of 13.2-13.4 of drawn sizes: channels, filters (3x3), biases and a batch."""
    return {"channels": _normal(c_in, h, w, source=source),
            "filters": _normal(c_out, c_in, 3, 3, source=source),
            "biases": _normal(c_out, source=source),
            "batch": _normal(b, c_in, h, w, source=source)}


def _layer_cases(inputs: dict[str, Any]) -> list[dict[str, Any]]:
    """13.2-13.4's cases: the written one, then one of drawn sizes (a size written as a
    number, range(3), fails)."""
    return [{key: inputs[key] for key in ("channels", "filters", "biases", "batch")},
            *inputs["layers"]]


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
    for given, kernel in zip((inputs["image"], inputs["image2"]), inputs["kernels"]):
        image, k = np.asarray(given), np.asarray(kernel)
        want = _conv(image, k)
        what = _("conv2d(image, kernel) for an image {image_shape} and a kernel "
                 "{k_shape}").format(image_shape=image.shape, k_shape=k.shape)
        got = as_array(fast_call(student_conv2d, given, kernel, what=what))
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
    return N_("two images of other sizes, two kernels (3x3 and 2x3): every window dotted with "
              "the kernel")


@exercise(LESSON, 2, "channels (vmap and sum)")
def conv2d_channels(student_fn: Any) -> str:
    for case in _layer_cases(_inputs()):
        channels, filters = case["channels"], case["filters"]
        c_in = channels.shape[0]
        per_channel = np.stack([_conv(channels[c], filters[0][c]) for c in range(c_in)])
        want = per_channel.sum(0)
        what = _("conv2d_channels(image, kernels) for an image {image} and kernels "
                 "{kernels}").format(image=tuple(channels.shape),
                                     kernels=tuple(filters[0].shape))
        pairs = _("vmap pairs channel c of the image with kernel c: map both on axis 0 "
                  "(in_axes=0, vmap's default), then sum the maps")
        got = as_array(fast_call(student_fn, channels, filters[0], what=what, hints={
            ("positional argument", "values to unpack", "inconsistent sizes",
             "dot_general requires"): pairs,
            "out of bounds": _("{what} failed: an index out of bounds, a number of channels "
                               "written as a number? This image has {c_in}: "
                               "image.shape[0], or vmap, which needs no count").format(
                                 what=what, c_in=c_in)}))
        if got.shape == (c_in, *want.shape):
            raise Mistake(_("returned {shape}: one map per channel. A filter SUMS its "
                            "channels' maps into one: jnp.sum(..., axis=0)").format(
                              shape=got.shape))
        got = expect_shape(got, want.shape, what)
        reject_known_wrong(got, {
            N_("returned the mean of the channels' maps; a filter adds them up (jnp.sum, not "
               "mean)"): per_channel.mean(0),
            N_("used only the first channel: vmap conv2d over every channel and sum the maps"):
                per_channel[0],
        }, rtol=1e-4, atol=1e-4, want=want)
        expect_close(got, want, what, hint=_("channel c goes with kernel c: "
                                             "jnp.sum(jax.vmap(conv2d)(image, kernels), "
                                             "axis=0)"))
    return N_("images of two channel counts, each channel with its own kernel, summed into one "
              "map")


def _vmapped(student_fn: Any, args: tuple[Any, ...], want: np.ndarray, what: str,
             mapped_too: str, hint: str, lifts: tuple[str, str], swapped: str,
             wrong: dict[str, Any] | None = None) -> None:
    """A vmapped answer gives ``want``. The hints: vmap's "inconsistent sizes" means
    ``mapped_too``; ``lifts = (name, message)``: the library's function ``name`` handed in
    as it is, not lifted, gets ``message``; an error from inside it (too many values to
    unpack, a wrong number of arguments) means the in_axes map what they should share,
    ``swapped``; ``wrong``: typical wrong answers and their hints."""
    if library_name(student_fn) == lifts[0]:
        raise Mistake(lifts[1])
    got = fast_call(student_fn, *args, what=what, hints={
        ("inconsistent sizes", "vmap got"): mapped_too,
        ("values to unpack", "positional argument", "dot_general requires",
         "Incompatible shapes"): swapped})
    reject_known_wrong(np.asarray(got), wrong or {}, rtol=1e-4, atol=1e-4, want=want)
    expect_close(got, want, what, hint=hint)


@exercise(LESSON, 3, "every filter (in_axes)")
def all_filters(student_fn: Any) -> str:
    for case in _layer_cases(_inputs()):
        channels, filters = case["channels"], case["filters"]
        c_out, c_in = filters.shape[:2]
        _vmapped(student_fn, (channels, filters), _layer(channels, filters, np.zeros(c_out)),
                 _("all_filters(image, w) for an image {image} and w {w}").format(
                     image=tuple(channels.shape), w=tuple(filters.shape)),
                 _("vmap mapped the image too ({c_in} channels against {c_out} filters): every "
                   "filter sees the WHOLE image, so its in_axes entry is None: "
                   "jax.vmap(conv2d_channels, in_axes=(None, 0))").format(c_in=c_in,
                                                                          c_out=c_out),
                 _("map over the filters (axis 0 of w) and share the image: in_axes=(None, 0)"),
                 ("conv2d_channels", _("this is conv2d_channels itself, which makes ONE "
                                       "filter's map: lift it to every filter with "
                                       "jax.vmap(conv2d_channels, in_axes=(None, 0))")),
                 _("in_axes=(0, None) maps the image and shares the filters: the other way "
                   "round. Every filter sees the WHOLE image (None), and the filters are mapped "
                   "(0): in_axes=(None, 0)"))
    return N_("filters on images of two sizes: the image shared, the filters mapped")


@exercise(LESSON, 4, "the batch (in_axes)")
def batched_conv(student_fn: Any) -> str:
    for case in _layer_cases(_inputs()):
        batch, filters, biases = case["batch"], case["filters"], case["biases"]
        want = np.stack([_layer(image, filters, biases) for image in batch])
        _vmapped(student_fn, (batch, filters, biases), want,
                 _("batched_conv(images, w, b) for images {images}, w {w}, b {b}").format(
                     images=tuple(batch.shape), w=tuple(filters.shape), b=tuple(biases.shape)),
                 _("vmap mapped the weights too ({images} images against {filters} filters): "
                   "the weights are shared by every image, so their in_axes are None: "
                   "jax.vmap(conv_layer, in_axes=(0, None, None))").format(
                     images=batch.shape[0], filters=filters.shape[0]),
                 _("image i of the batch through conv_layer with the same w and b"),
                 ("conv_layer", _("this is conv_layer itself, for ONE image: lift it to the "
                                  "batch with jax.vmap(conv_layer, in_axes=(0, None, None))")),
                 _("batched_conv(images, w, b) maps the images (0) and shares w and b (None): "
                   "jax.vmap(conv_layer, in_axes=(0, None, None)), three entries for its three "
                   "arguments"),
                 {N_("the biases are missing: map conv_layer, which adds b[o] to every pixel of "
                     "map o, not all_filters"): want - np.asarray(biases)[None, :, None, None]})
    return N_("batches of two sizes, weights shared: the numbers of lax.conv_general_dilated")


@exercise(LESSON, 5, "max_pool")
def max_pool(student_fn: Any) -> str:
    source = generator(150)
    # drawn halves: an even map, an odd one (its last row and column are dropped), a mixed one
    halves = draw_sizes(source, 3, h=(2, 6), w=(2, 6))
    shapes = [(2 * halves[0]["h"], 2 * halves[0]["w"]),
              (2 * halves[1]["h"] + 1, 2 * halves[1]["w"] + 1),
              (2 * halves[2]["h"], 2 * halves[2]["w"] + 1)]
    for shape in shapes:
        x = np.asarray(_normal(*shape, source=source))
        want = _pool(x)
        what = _("max_pool(x) for x of shape {shape}").format(shape=shape)
        odd = shape[0] % 2 or shape[1] % 2
        got = as_array(fast_call(student_fn, jnp.asarray(x), what=what, hints={
            ("reshape", "cannot reshape"): _("{what} failed to reshape: with an odd "
                                             "size, drop the last row or column first, "
                                             "x[:H // 2 * 2, :W // 2 * 2]").format(
                                               what=what) if odd else
            _("{what} failed to reshape, on a map whose sides are both even: a size written "
              "as a number, or one side's size used for both? Reshape with the map's own, "
              "H, W = x.shape: (H // 2, 2, W // 2, 2)").format(what=what),
            ("Incompatible shapes", "broadcast"): _(
                "{what} failed: with an odd size, x[0::2] has one more row (or column) than "
                "x[1::2], so they do not line up; drop the last row and column first, "
                "x[:H // 2 * 2, :W // 2 * 2]").format(what=what)}))
        if got.shape == (shape[0] - 1, shape[1] - 1):
            raise Mistake(_("returned {shape} for {shape2}: the 2x2 blocks must not "
                            "overlap (a stride of 2), so the output is (H // 2, W // 2)").format(
                              shape=got.shape, shape2=shape))
        h, w = want.shape
        side = min(h, w)
        if h != w and got.shape == (side, side) and np.allclose(got, want[:side, :side]):
            raise Mistake(_("returned {shape} for {shape2}: the pools of a square corner "
                            "only, as if the map were square (one side's size used for "
                            "both?). Take each from its own axis, H, W = x.shape").format(
                              shape=got.shape, shape2=shape))
        if got.shape != want.shape and got.shape in ((2, 2), (h, w, 2), (h, 2, w), (2, w),
                                                      (h, 2)):
            raise Mistake(_("returned {shape} for {shape2}: the max was taken over the wrong "
                            "axes. Of the blocks (H // 2, 2, W // 2, 2), axes 1 and 3 run "
                            "inside a block: jnp.max(blocks, axis=(1, 3))").format(
                              shape=got.shape, shape2=shape))
        got = expect_shape(got, want.shape, what)
        blocks = x[:2 * h, :2 * w].reshape(h, 2, w, 2)
        scrambled = x[:2 * h, :2 * w].reshape(h, w, 2, 2).max(axis=(2, 3))
        reject_known_wrong(got, {
            N_("took the mean of each block; max-pooling keeps the LARGEST value"):
                blocks.mean(axis=(1, 3)),
            N_("the blocks are not 2x2 squares of neighbouring pixels: reshape to (H // 2, 2, W "
               "// 2, 2) and take the max over axes 1 and 3"): scrambled,
        }, rtol=1e-5, atol=1e-6, want=want)
        expect_close(got, want, what, hint=_("the largest value of each non-overlapping 2x2 block"))
    expect_own_code(student_fn, (jnp.asarray(x),), what, ("nn_from_scratch.conv", "jax"),
                    ("max_pool", "reduce_window"), message=_(
                        "{what} calls {name}: the exercise wants your own code (reshape into "
                        "2x2 blocks, then the max), not ready-made code"))
    return N_("2x2 blocks, the largest of each, on even, odd and mixed sizes")


def _map_sizes(s: dict[str, int], convs: int) -> list[tuple[int, int, int]]:
    """The maps' shapes ``(C, H, W)`` of a tiny CNN of sizes ``s`` (:func:`_tiny_cnns`): the
    image's, then each convolution's pooled output."""
    shapes = [(1, s["h"], s["w"])]
    for filters in (s["f1"], s["f2"])[:convs]:
        _c, h, w = shapes[-1]
        shapes.append((filters, (h - s["kh"] + 1) // 2, (w - s["kw"] + 1) // 2))
    return shapes


def _tiny_cnns() -> list[tuple[list[tuple[jax.Array, jax.Array]], tuple[int, int, int]]]:
    """13.6's two networks, ``(params, image shape (1, H, W))``, He-scaled: two convolutions
    then a dense layer, and one convolution then a dense layer (an answer written for the
    lesson's two fails), every size drawn (:func:`draw_sizes`): the image's sides (never
    equal), the kernels' (kh, kw), the filters and the classes, each another in the second
    network, the last maps at least 2 x 2, so that the order they are flattened in shows."""
    def big_enough(s: dict[str, int]) -> bool:
        return s["h"] != s["w"] and min(min(_map_sizes(s, 2)[-1][1:]),
                                        min(_map_sizes(s, 1)[-1][1:])) >= 2
    networks = []
    for seed, s in enumerate(draw_sizes(generator(161), 2, h=(11, 20), w=(11, 20), kh=(2, 4),
                                        kw=(2, 4), f1=(2, 4), f2=(2, 5), classes=(3, 8),
                                        apart=False, keep=big_enough)):
        maps = _map_sizes(s, 2 - seed)
        draw = generator(seed)
        shapes = [(c_out, c_in, s["kh"], s["kw"]) for (c_in, *_hw), (c_out, *_ohw) in zip(
            maps[:-1], maps[1:])] + [(s["classes"], int(np.prod(maps[-1])))]
        networks.append(([(jnp.asarray(draw.normal(size=shape) * np.sqrt(
            2 / np.prod(shape[1:])), jnp.float32), jnp.asarray(
            0.3 * draw.normal(size=shape[0]), jnp.float32)) for shape in shapes], maps[0]))
    return networks


def _log_softmax(logits: np.ndarray) -> np.ndarray:
    top = logits.max()
    return logits - np.log(np.sum(np.exp(logits - top))) - top


def _predict_maps(params: list[tuple[jax.Array, jax.Array]], image: Any,
                  conv_bias: bool = True) -> np.ndarray:
    """The maps ``(C, H, W)`` that ``predict_cnn`` flattens, in NumPy: conv, relu and pool
    per convolution (``params[:-1]``)."""
    x = np.asarray(image)
    for w_conv, b_conv in [(np.asarray(w), np.asarray(b)) for w, b in params[:-1]]:
        maps = np.maximum(0, _layer(x, w_conv, b_conv if conv_bias else 0 * b_conv))
        x = np.stack([_pool(m) for m in maps])
    return x


def _predict(params: list[tuple[jax.Array, jax.Array]], image: Any, flatten: str = "CHW",
             conv_bias: bool = True, dense_bias: bool = True,
             last_relu: bool = False) -> np.ndarray:
    """``predict_cnn`` in NumPy: conv, relu and pool per convolution; dense; log-softmax. The
    options make its typical wrong versions (flattened (H, W, C), a bias left out, ...)."""
    w, b = (np.asarray(a) for a in params[-1])
    x = _predict_maps(params, image, conv_bias)
    features = x.ravel() if flatten == "CHW" else x.transpose(1, 2, 0).ravel()
    logits = w @ features + (b if dense_bias else 0)
    return _log_softmax(np.maximum(0, logits) if last_relu else logits)


@exercise(LESSON, 6, "predict_cnn")
def predict_cnn(student_fn: Any) -> str:
    for seed, (params, shape) in enumerate(_tiny_cnns()):
        if seed == 1:  # logits near 100: log(sum(exp(logits))) overflows float32 (above 88)
            params[-1] = (params[-1][0], params[-1][1] + 100.0)
        image = jnp.asarray(_source(160 + seed).uniform(size=shape), jnp.float32)
        want = _predict(params, image)
        convs = len(params) - 1
        what = _("predict_cnn(params, image) for an image {shape} and {convs} "
                 "convolution(s)").format(shape=shape, convs=convs)
        c, h, w = np.shape(_predict_maps(params, image))
        got = as_array(fast_call(student_fn, params, image, what=what, hints={
            ("dot_general requires", "matmul", "Incompatible shapes", "cannot reshape"): _(
                "{what} failed where the maps meet the dense layer, which takes {c} maps of "
                "{h} x {w} = {features} features here: did you run every convolution in "
                "params[:-1] (not a number of them written in), with each kernel's own size "
                "(w.shape, not a 3 written in), pool after EVERY one, and flatten the maps "
                "with x.ravel()?").format(what=what, c=c, h=h, w=w,
                                                           features=c * h * w),
            ("values to unpack",): _(
                "{what}: params holds {convs} convolution(s) here, then ONE dense layer; "
                "unpack them as *convs, (w, b) = params and loop over convs, rather than "
                "name a number of layers").format(what=what, convs=convs)}))
        if got.shape == want.shape and np.all(np.isneginf(got)):
            raise Mistake(LOGSUMEXP_OVERFLOWED)
        if got.shape != want.shape:
            raise Mistake(_("returned shape {shape} for ONE image; expected {shape2}: "
                            "one log-probability per class").format(
                              shape=got.shape, shape2=want.shape))
        reject_known_wrong(got, {
            N_("returned probabilities (a softmax); predict_cnn returns LOG-probabilities, as "
               "predict does: logits - logsumexp(logits)"): np.exp(want),
            N_("flattened the maps in (H, W, C) order: the dense layer reads the (C, H, W) "
               "maps one after another, x.ravel()"): _predict(params, image, flatten="HWC"),
            N_("the convolutions' biases are missing: conv_layer adds b[o] to map o"):
                _predict(params, image, conv_bias=False),
            N_("the dense layer's bias is missing: logits = w @ x.ravel() + b"):
                _predict(params, image, dense_bias=False),
            N_("a relu after the last layer: the scores go into the log-softmax as they are, "
               "negative ones too"): _predict(params, image, last_relu=True),
        }, rtol=1e-4, atol=1e-5, want=want)
        shift = got - want
        if np.allclose(shift, shift[0], atol=1e-5) and abs(shift[0]) > 1e-4:
            raise Mistake(_("returned the raw logits: subtract logsumexp(logits)"))
        expect_close(got, want, what, hint=_("each convolution: conv_layer, relu, then "
                                             "vmap(max_pool); then flatten and the dense layer(s)"))
    return N_("matches the reference on 2 random CNNs")


@exercise(LESSON, 7, "parameters of a conv layer")
def conv_param_count(student_fn: Any) -> str:
    for c_in, c_out, k in more_when_graded(
            ((1, 8, 3), (8, 16, 3), (3, 5, 5)), 170,
            lambda draw: (int(draw.integers(1, 17)), int(draw.integers(1, 65)),
                          int(draw.integers(2, 8)))):  # k >= 2: k and k * k differ
        want = c_out * (c_in * k * k + 1)
        what = f"conv_param_count({c_in}, {c_out}, {k})"
        got = expect_int(fast_call(student_fn, c_in, c_out, k, what=what,
                                   static_argnums=(0, 1, 2)), what,
                         N_("expected a whole number: c_out * (c_in * k * k + 1)"))
        if got == c_out * c_in * k * k:
            raise Mistake(_("{what} = {got} counts only the weights: each filter has "
                            "one bias too").format(what=what, got=got))
        if got == c_out * (c_in * k + 1) or got == c_out * c_in * k + c_out:
            raise Mistake(_("{what} = {got}: a kernel is k x k, so k * k weights per "
                            "channel").format(what=what, got=got))
        if got != want:
            raise Mistake(_("{what} = {got}; a filter has c_in kernels of k x k "
                            "weights and one bias, and there are c_out filters. The "
                            "image size plays no part").format(what=what, got=got))
    return N_("c_out * (c_in * k * k + 1), whatever the image size")


# ---- the second edition's exercises: output sizes, im2col, the backward pass, the dense matrix


_POSITIONS = N_("(W - F + 2P) // S + 1 positions along a side")


@exercise(LESSON, 8, "output size with padding and stride")
def output_size(student_fn: Any) -> str:
    cases = more_when_graded(
        ((28, 3, 0, 1), (28, 3, 1, 1), (7, 3, 0, 2), (32, 5, 2, 2), (10, 4, 0, 3), (13, 3, 1, 2)),
        180, lambda draw: (int(draw.integers(8, 41)), int(draw.integers(1, 8)),
                           int(draw.integers(0, 4)), int(draw.integers(1, 5))))
    for size, f, p, s in cases:
        want = (size - f + 2 * p) // s + 1
        what = f"output_size({size}, {f}, {p}, {s})"
        got = fast_call(student_fn, size, f, p, s, what=what, static_argnums=(0, 1, 2, 3))
        got = expect_int(got, what, N_("expected a whole number of positions: use // so that a "
                                       "window that would stick out past the edge is dropped"))
        if got == want:
            continue
        known = {
            (size - f + 2 * p) // s: N_("the kernel's first position counts too: add 1"),
            (size - f + p) // s + 1: N_("padding adds P pixels on EACH side: 2 * P"),
            size - f + 2 * p + 1: N_("each step moves the window S pixels: divide by the stride"),
            -(-(size - f + 2 * p) // s) + 1: N_("round down, not up: a window that would stick "
                                                "out past the edge is dropped (//)"),
        }
        raise Mistake(_("{what} = {got}; expected {want}: {hint}").format(
            what=what, got=got, want=want,
            hint=_(known.get(got, _POSITIONS))))
    return N_("(W - F + 2P) // S + 1 on every size, padding and stride tried")


def _im2col(image: Any, kh: int, kw: int) -> np.ndarray:
    """The reference: one row per window (row by row), its numbers channel by channel."""
    image = np.asarray(image, np.float64)
    c, h, w = image.shape
    oh, ow = h - kh + 1, w - kw + 1
    return np.array([image[:, i:i + kh, j:j + kw].ravel() for i in range(oh) for j in range(ow)])


@exercise(LESSON, 9, "im2col")
def im2col(student_fn: Any) -> str:
    source = generator(190)
    # (C_in, H, W) and the window: no size equal to another's, nor to the output's oh and ow
    for s in draw_sizes(source, 2, c=(2, 5), h=(6, 11), w=(6, 12), kh=(2, 4), kw=(2, 5),
                        keep=lambda s: len({*s.values(), s["h"] - s["kh"] + 1,
                                            s["w"] - s["kw"] + 1}) == 7):
        _im2col_case(student_fn, _normal(s["c"], s["h"], s["w"], source=source), s["kh"],
                     s["kw"])
    return N_("one row per window, channel by channel: the matrix that makes a layer one product")


def _im2col_case(student_fn: Any, image: Any, kh: int, kw: int) -> None:
    want = _im2col(image, kh, kw)  # (oh * ow, C * kh * kw)
    what = _("im2col(image, {kh}, {kw}) for an image {shape}").format(
        kh=kh, kw=kw, shape=tuple(image.shape))
    got = as_array(fast_call(student_fn, image, kh, kw, what=what, static_argnums=(1, 2),
                             hints={("same shape", "out of bounds", "cannot reshape"): _(
                                 "{what} failed: the windows are oh = H - kh + 1 rows by "
                                 "ow = W - kw + 1 columns of the image, H and W its own "
                                 "(they differ here; C, H, W = image.shape), and kh goes with "
                                 "H, kw with W (not swapped)").format(what=what)}))
    if got.shape == want.shape[::-1]:
        raise Mistake(_("returned {shape}: one COLUMN per window; im2col makes one ROW per "
                        "window, ({rows}, {cols}), so that it multiplies "
                        "w.reshape(C_out, -1).T").format(
                          shape=got.shape, rows=want.shape[0], cols=want.shape[1]))
    channels, height, width = image.shape
    if got.shape == ((height - kw + 1) * (width - kh + 1), want.shape[1]) != want.shape:
        raise Mistake(_("returned {shape}: as many rows as windows of {kw} by {kh}, kh and kw "
                        "swapped. A window is kh rows by kw columns, image[:, i:i+kh, "
                        "j:j+kw]: ({rows}, {cols})").format(
                          shape=got.shape, kh=kh, kw=kw, rows=want.shape[0],
                          cols=want.shape[1]))
    got = expect_shape(got, want.shape, what)
    oh, ow = height - kh + 1, width - kw + 1
    windows = np.asarray(image, np.float64)  # (C, H, W)
    by_position = np.array([[windows[c, i:i + kh, j:j + kw].ravel() for c in range(channels)]
                            for i in range(oh) for j in range(ow)])  # (oh*ow, C, kh*kw)
    reject_known_wrong(got, {
        N_("the columns are in the wrong order: a row must follow w.reshape(C_out, -1), all of "
           "channel 0's window first, then channel 1's, ...; yours runs over the channels "
           "fastest"): by_position.transpose(0, 2, 1).reshape(oh * ow, -1),
        N_("the rows and columns are scrambled: reshaping (C, oh, ow, kh*kw) straight to "
           "(oh*ow, C*kh*kw) mixes windows; move the channel axis next to the window's numbers "
           "first, (oh, ow, C, kh*kw), then reshape"):
            by_position.transpose(1, 0, 2).reshape(oh * ow, -1),
    }, rtol=1e-5, atol=1e-6, want=want)
    expect_close(got, want, what, hint=_("row i * ow + j is the window at (i, j), "
                                         "image[:, i:i+kh, j:j+kw].ravel()"))
    expect_own_code(student_fn, (image, kh, kw), what, "jax",
                    ("conv_general_dilated_patches",), message=_(
                        "{what} calls {name}: the exercise wants your own code (a row per "
                        "window, image[:, i:i+kh, j:j+kw].ravel()), not ready-made code"))


def _input_grad(grad_out: Any, kernel: Any) -> np.ndarray:
    """The reference: each output's gradient sent back to the pixels of its window."""
    grad_out, kernel = np.asarray(grad_out, np.float64), np.asarray(kernel, np.float64)
    (oh, ow), (kh, kw) = grad_out.shape, kernel.shape
    grad = np.zeros((oh + kh - 1, ow + kw - 1))
    for i in range(oh):
        for j in range(ow):
            grad[i:i + kh, j:j + kw] += grad_out[i, j] * kernel
    return grad


@exercise(LESSON, 10, "the gradient with respect to the image")
def conv2d_input_grad(student_fn: Any) -> str:
    source = generator(200)
    # kh - 1 and kw - 1 differ, and neither is 1: a padding of the wrong side or of 1 shows
    # and grad_out larger than the kernel both ways, as a layer's are (convolve2d's "full"
    # mode, a right answer, wants one input the larger in every dimension)
    for s in draw_sizes(source, 2, oh=(5, 9), ow=(5, 10), kh=(3, 4), kw=(3, 4),
                        keep=lambda s: s["oh"] > s["kh"] and s["ow"] > s["kw"]):
        grad_out = _normal(s["oh"], s["ow"], source=source)
        kernel = _normal(s["kh"], s["kw"], source=source)
        want = _input_grad(grad_out, kernel)  # (oh + kh - 1, ow + kw - 1)
        what = _("conv2d_input_grad(grad_out, kernel) for grad_out {shape} and a kernel "
                 "{shape2}").format(shape=(s["oh"], s["ow"]), shape2=(s["kh"], s["kw"]))
        got = as_array(fast_call(student_fn, grad_out, kernel, what=what))
        kh, kw = s["kh"], s["kw"]
        if got.shape == (s["oh"] + 2 * kh - kw - 1, s["ow"] + 2 * kw - kh - 1):
            raise Mistake(_("returned shape {shape}: a convolution with kernel.T, the kernel "
                            "TRANSPOSED ({kw}, {kh}); the gradient needs it FLIPPED, "
                            "kernel[::-1, ::-1], of the kernel's own shape").format(
                                shape=got.shape, kw=kw, kh=kh))
        if got.shape != want.shape:
            raise Mistake(_("returned shape {shape}; the gradient has the image's shape, "
                            "{shape2}: pad grad_out with kh - 1 rows and kw - 1 columns on each "
                            "side, then convolve").format(shape=got.shape, shape2=want.shape))
        padded = np.pad(np.asarray(grad_out, np.float64), ((s["kh"] - 1, s["kh"] - 1),
                                                           (s["kw"] - 1, s["kw"] - 1)))
        reject_known_wrong(got, {
            N_("you did not flip the kernel: the gradient is a convolution with "
               "kernel[::-1, ::-1]"): _window_sums(padded, np.asarray(kernel), *want.shape),
        }, rtol=1e-4, atol=1e-4, want=want)
        expect_close(got, want, what, hint=_("pixel (y, x) gets grad_out[i, j] * kernel[y - i, "
                                             "x - j] from every window (i, j) that covers it"))
    return N_("a full convolution with the flipped kernel: jax.vjp's numbers")


def _dense_matrix(kernel: Any, h: int, w: int) -> np.ndarray:
    """The reference: row i * ow + j holds the kernel at the pixels of window (i, j)."""
    kernel = np.asarray(kernel, np.float64)
    kh, kw = kernel.shape
    oh, ow = h - kh + 1, w - kw + 1
    m = np.zeros((oh * ow, h * w))
    for i in range(oh):
        for j in range(ow):
            for a in range(kh):
                m[i * ow + j, (i + a) * w + j:(i + a) * w + j + kw] = kernel[a]
    return m


@exercise(LESSON, 11, "a convolution as a dense matrix")
def conv_matrix(student_fn: Any) -> str:
    source = generator(210)
    # no side, nor an output side, equal to another size
    for s in draw_sizes(source, 2, kh=(2, 4), kw=(2, 5), h=(5, 10), w=(5, 11),
                        keep=lambda s: len({*s.values(), s["h"] - s["kh"] + 1,
                                            s["w"] - s["kw"] + 1}) == 6):
        kernel, h, w = _normal(s["kh"], s["kw"], source=source), s["h"], s["w"]
        want = _dense_matrix(kernel, h, w)  # (oh * ow, h * w)
        what = _("conv_matrix(kernel, {h}, {w}) for a kernel {shape}").format(
            h=h, w=w, shape=(s["kh"], s["kw"]))
        got = as_array(fast_call(student_fn, kernel, h, w, what=what, static_argnums=(1, 2),
                                 hints={("out of bounds", "index"): _(
                                     "{what} failed with an index past the matrix: row "
                                     "i * ow + j, column (i + a) * w + (j + b), where oh = h - "
                                     "kh + 1 and ow = w - kw + 1 (h and w differ here, and so "
                                     "do kh and kw)").format(what=what)}))
        if got.shape == want.shape[::-1]:
            raise Mistake(_("returned {shape}, the transpose: M @ image.ravel() must give the "
                            "output, so M has one row per output pixel, {shape2}").format(
                              shape=got.shape, shape2=want.shape))
        got = expect_shape(got, want.shape, what)
        by_columns = want.reshape(-1, h, w).transpose(0, 2, 1).reshape(-1, h * w)  # x*H+y
        reject_known_wrong(got, {
            N_("you flipped the kernel: row (i, j) holds kernel[a, b] at pixel (i + a, j + b)"):
                _dense_matrix(np.asarray(kernel)[::-1, ::-1], h, w),
            N_("the pixels are numbered column by column: image.ravel() goes row by row, so "
               "pixel (y, x) is column y * W + x"): by_columns,
        }, rtol=1e-5, atol=1e-6, want=want)
        expect_close(got, want, what, hint=_("M @ image.ravel() == conv2d(image, kernel)"
                                             ".ravel() for every image: row i * ow + j is "
                                             "window (i, j)"))
    return N_("the convolution's matrix: sparse, every row the same kernel")
