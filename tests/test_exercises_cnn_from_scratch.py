"""Lesson 13's checkers: each accepts the reference, says "not done" to the stub, and catches
the typical mistakes with a hint that names the fix."""
import contextlib

import jax
import jax.numpy as jnp
import numpy as np
from conftest import assert_result, own, stub
from jax.scipy.special import logsumexp

from nn_from_scratch import conv
from nn_from_scratch.exercises import cnn_from_scratch as check
from nn_from_scratch.exercises._calls import fresh_inputs


def by_windows(image, kernel, rows, cols):
    """A convolution written window by window, with the output size as a parameter."""
    kh, kw = kernel.shape
    return jnp.array([[jnp.sum(image[i:i + kh, j:j + kw] * kernel) for j in range(cols)]
                      for i in range(rows)])


def test_conv2d():
    assert_result(check.conv2d(own(conv.conv2d)), "passed")
    assert_result(check.conv2d(conv.conv2d), "failed", "library's own conv2d")
    assert_result(check.conv2d(stub), "not done", "NotImplementedError")

    def windows(image, kernel):
        return by_windows(image, kernel, image.shape[0] - kernel.shape[0] + 1,
                          image.shape[1] - kernel.shape[1] + 1)
    assert_result(check.conv2d(windows), "passed")
    assert_result(check.conv2d(lambda image, kernel: conv.conv2d(image, kernel[::-1, ::-1])),
                  "failed", "flipped the kernel", "cross-correlation")
    for extra in (0, 2):  # one window too few, one too many
        def off_by_one(image, kernel, extra=extra):
            return by_windows(jnp.pad(image, 1), kernel, image.shape[0] - kernel.shape[0] + extra,
                              image.shape[1] - kernel.shape[1] + extra)
        assert_result(check.conv2d(off_by_one), "failed", "5 - 3 + 1 places")
    assert_result(check.conv2d(lambda image, kernel: conv.conv2d(image, kernel) + 1), "failed",
                  "off by up to", "summed")
    assert_result(check.conv2d(lambda image, kernel: conv.conv2d(image, kernel.T)), "failed",
                  "kernel transposed", "a down, b across")

    def numpy_loop(image, kernel):  # fine as written (the lesson says so), not under jit
        kh, kw = kernel.shape
        out = np.zeros((image.shape[0] - kh + 1, image.shape[1] - kw + 1))
        for i in range(out.shape[0]):
            for j in range(out.shape[1]):
                out[i, j] = jnp.sum(image[i:i + kh, j:j + kw] * kernel)
        return out
    assert_result(check.conv2d(numpy_loop), "passed")


def test_conv2d_channels():
    assert_result(check.conv2d_channels(own(conv.conv2d_channels)), "passed")
    assert_result(check.conv2d_channels(conv.conv2d_channels), "failed",
                  "library's own conv2d_channels")
    assert_result(check.conv2d_channels(
        lambda image, kernels: jnp.sum(jax.vmap(conv.conv2d)(image, kernels), axis=0)), "passed")
    assert_result(check.conv2d_channels(stub), "not done")
    assert_result(check.conv2d_channels(jax.vmap(conv.conv2d)), "failed", "one map per channel",
                  "jnp.sum")
    assert_result(check.conv2d_channels(
        lambda image, kernels: jnp.mean(jax.vmap(conv.conv2d)(image, kernels), axis=0)),
        "failed", "mean", "not mean")
    assert_result(check.conv2d_channels(lambda image, kernels: conv.conv2d(image[0], kernels[0])),
                  "failed", "only the first channel")
    for in_axes in ((0, None), (None, 0)):  # one of the two shared: each raises inside conv2d
        assert_result(check.conv2d_channels(lambda image, kernels, in_axes=in_axes: jnp.sum(
            jax.vmap(conv.conv2d, in_axes=in_axes)(image, kernels), axis=0)), "failed",
            "channel c of the image with kernel c", "in_axes=0")


def test_all_filters():
    assert_result(check.all_filters(jax.vmap(conv.conv2d_channels, in_axes=(None, 0))), "passed")
    assert_result(check.all_filters(...), "not done")
    for wrong in (jax.vmap(conv.conv2d_channels), jax.vmap(conv.conv2d_channels, in_axes=(0, 0))):
        assert_result(check.all_filters(wrong), "failed", "None", "in_axes=(None, 0)")
    assert_result(check.all_filters(lambda image, w: conv.conv2d_channels(image, w[0])),
                  "failed", "shape (3, 4)", "(4, 3, 4)")
    assert_result(check.all_filters(conv.conv2d_channels), "failed",
                  "conv2d_channels itself", "jax.vmap(conv2d_channels, in_axes=(None, 0))")
    assert_result(check.all_filters(jax.vmap(conv.conv2d_channels, in_axes=(0, None))), "failed",
                  "the other way round", "in_axes=(None, 0)")


def test_batched_conv():
    assert_result(check.batched_conv(jax.vmap(conv.conv_layer, in_axes=(0, None, None))),
                  "passed")
    assert_result(check.batched_conv(own(conv.batched_conv_layer)), "passed")
    assert_result(check.batched_conv(...), "not done")
    assert_result(check.batched_conv(jax.vmap(conv.conv_layer)), "failed",
                  "in_axes=(0, None, None)")
    assert_result(check.batched_conv(lambda x, w, b: conv.conv_layer(x[0], w, b)), "failed",
                  "shape (4, 3, 4)")
    assert_result(check.batched_conv(
        lambda x, w, b: jax.vmap(conv.conv_layer, in_axes=(0, None, None))(x, w, 0 * b)),
        "failed", "biases are missing", "not all_filters")
    assert_result(check.batched_conv(
        lambda x, w, b: jax.vmap(conv.conv_layer, in_axes=(0, None, None))(x, w, 2 * b)),
        "failed", "same w and b")
    assert_result(check.batched_conv(conv.conv_layer), "failed", "conv_layer itself",
                  "in_axes=(0, None, None)")
    assert_result(check.batched_conv(jax.vmap(conv.conv_layer, in_axes=(None, 0, 0))), "failed",
                  "in_axes=(0, None, None)", "three entries")
    all_filters = jax.vmap(conv.conv2d_channels, in_axes=(None, 0))
    assert_result(check.batched_conv(jax.vmap(all_filters, in_axes=(0, None))), "failed",
                  "in_axes=(0, None, None)", "three entries")


def test_max_pool():
    def max_pool(x):  # the lesson's answer, as a student writes it
        h, w = x.shape[0] // 2, x.shape[1] // 2
        return x[:2 * h, :2 * w].reshape(h, 2, w, 2).max(axis=(1, 3))
    assert_result(check.max_pool(max_pool), "passed")
    assert_result(check.max_pool(conv.max_pool), "failed", "library's own max_pool")
    assert_result(check.max_pool(stub), "not done")

    def mean_pool(x):
        h, w = x.shape[0] // 2, x.shape[1] // 2
        return x[:2 * h, :2 * w].reshape(h, 2, w, 2).mean(axis=(1, 3))
    assert_result(check.max_pool(mean_pool), "failed", "mean", "LARGEST")

    def scrambled(x):
        h, w = x.shape[0] // 2, x.shape[1] // 2
        return x[:2 * h, :2 * w].reshape(h, w, 2, 2).max(axis=(2, 3))
    assert_result(check.max_pool(scrambled), "failed", "(H // 2, 2, W // 2, 2)")

    def no_crop(x):
        return x.reshape(x.shape[0] // 2, 2, x.shape[1] // 2, 2).max(axis=(1, 3))
    assert_result(check.max_pool(no_crop), "failed", "drop the last row or column")

    def overlapping(x):  # stride 1
        return jnp.maximum(jnp.maximum(x[:-1, :-1], x[1:, :-1]), jnp.maximum(x[:-1, 1:], x[1:, 1:]))
    assert_result(check.max_pool(overlapping), "failed", "must not overlap", "stride of 2")

    def strided_uncropped(x):  # right for even sizes; with an odd one the slices differ
        return jnp.maximum(jnp.maximum(x[0::2, 0::2], x[0::2, 1::2]),
                           jnp.maximum(x[1::2, 0::2], x[1::2, 1::2]))
    assert_result(check.max_pool(strided_uncropped), "failed", "x[1::2]",
                  "x[:H // 2 * 2, :W // 2 * 2]")
    for axes in ((0, 2), (1,), (3,)):
        def wrong_axes(x, axes=axes):
            h, w = x.shape[0] // 2, x.shape[1] // 2
            return x[:2 * h, :2 * w].reshape(h, 2, w, 2).max(axis=axes)
        assert_result(check.max_pool(wrong_axes), "failed", "wrong axes", "axis=(1, 3)")

    def square_only(x):  # a second walk: both sides from the rows, right for square maps only
        h = w = x.shape[0] // 2
        return x[:2 * h, :2 * w].reshape(h, 2, w, 2).max(axis=(1, 3))
    assert_result(check.max_pool(square_only), "failed", "one side's size used for both",
                  "H, W = x.shape")  # on a wider map, its square corner pooled; on a taller
    for seed in (1, 2, 3, 4):      # one, the reshape fails: each told the same, its own way
        with fresh_inputs(seed):
            assert_result(check.max_pool(square_only), "failed", "one side's size used for both")


def test_predict_cnn():
    assert_result(check.predict_cnn(own(conv.predict_cnn)), "passed")
    assert_result(check.predict_cnn(conv.predict_cnn), "failed", "library's own predict_cnn")
    assert_result(check.predict_cnn(stub), "not done")
    assert_result(check.predict_cnn(lambda p, image: jnp.exp(conv.predict_cnn(p, image))),
                  "failed", "probabilities", "LOG-probabilities")
    assert_result(check.predict_cnn(lambda p, image: conv.predict_cnn(p, image) + 3.0),
                  "failed", "raw logits", "logsumexp")

    def no_relu(params, image):
        x = image
        for w, b in params[:-1]:
            x = jax.vmap(conv.max_pool)(conv.conv_layer(x, w, b))
        w, b = params[-1]
        logits = w @ x.ravel() + b
        return logits - logsumexp(logits)
    assert_result(check.predict_cnn(no_relu), "failed", "conv_layer, relu")
    assert_result(check.predict_cnn(lambda p, image: conv.predict_cnn(p, image)[None]), "failed",
                  "for ONE image")

    def predict_with(params, image, flatten=lambda x: x.ravel(), conv_bias=1.0, dense_bias=1.0,
                     pool=True, last=lambda z: z):
        x = image
        for w, b in params[:-1]:
            x = jax.nn.relu(conv.conv_layer(x, w, conv_bias * b))
            x = jax.vmap(conv.max_pool)(x) if pool else x
        w, b = params[-1]
        logits = last(w @ flatten(x) + dense_bias * b)
        return logits - logsumexp(logits)
    assert_result(check.predict_cnn(predict_with), "passed")
    assert_result(check.predict_cnn(
        lambda p, image: predict_with(p, image, flatten=lambda x: x.transpose(1, 2, 0).ravel())),
        "failed", "(H, W, C) order", "x.ravel()")
    assert_result(check.predict_cnn(lambda p, image: predict_with(p, image, conv_bias=0.0)),
                  "failed", "convolutions' biases are missing")
    assert_result(check.predict_cnn(lambda p, image: predict_with(p, image, dense_bias=0.0)),
                  "failed", "dense layer's bias is missing")
    assert_result(check.predict_cnn(lambda p, image: predict_with(p, image, last=jax.nn.relu)),
                  "failed", "a relu after the last layer")
    assert_result(check.predict_cnn(lambda p, image: predict_with(p, image, pool=False)),
                  "failed", "pool after EVERY one", "features here")

    def two_convolutions(params, image):  # the lesson's network: two convolutions, written in
        (w1, b1), (w2, b2), (w, b) = params
        x = jax.vmap(conv.max_pool)(jax.nn.relu(conv.conv_layer(image, w1, b1)))
        x = jax.vmap(conv.max_pool)(jax.nn.relu(conv.conv_layer(x, w2, b2)))
        logits = w @ x.ravel() + b
        return logits - logsumexp(logits)
    assert_result(check.predict_cnn(two_convolutions), "failed", "*convs, (w, b) = params")


def test_predict_cnn_draws_its_networks():
    """The audit of issue 36: both of 13.6's networks took a 14 x 14 image, 3 x 3 kernels and
    the same filters, so an answer written for those sizes passed."""
    (first, first_shape), (second, second_shape) = check._tiny_cnns()
    assert len(first) == 3 and len(second) == 2
    assert first_shape[1] != first_shape[2] and first_shape != second_shape
    assert first[0][0].shape[2:] != second[0][0].shape[2:] and first[-1][0].shape[0] != second[
        -1][0].shape[0]


def test_conv_param_count():
    assert_result(check.conv_param_count(lambda c_in, c_out, k: c_out * (c_in * k * k + 1)),
                  "passed")
    assert_result(check.conv_param_count(stub), "not done")
    assert_result(check.conv_param_count(lambda c_in, c_out, k: c_out * c_in * k * k), "failed",
                  "only the weights", "bias")
    assert_result(check.conv_param_count(lambda c_in, c_out, k: c_out * (c_in * k + 1)), "failed",
                  "k * k weights")
    assert_result(check.conv_param_count(lambda c_in, c_out, k: 28 * 28 * c_out), "failed",
                  "= 6272", "image size plays no part")
    assert_result(check.conv_param_count(lambda c_in, c_out, k: jnp.asarray(28 * 28 * c_out)),
                  "failed", "= 6272")  # a number, never Array(6272, dtype=int32, ...)
    assert_result(check.conv_param_count(lambda c_in, c_out, k: c_out * (c_in * k * k + 1) / 3),
                  "failed", "whole number")


def test_output_size():
    assert_result(check.output_size(lambda w, f, p, s: (w - f + 2 * p) // s + 1), "passed")
    assert_result(check.output_size(stub), "not done")
    assert_result(check.output_size(lambda w, f, p, s: (w - f + 2 * p) // s), "failed",
                  "= 25", "expected 26", "add 1")
    assert_result(check.output_size(lambda w, f, p, s: (w - f + p) // s + 1), "failed",
                  "(28, 3, 1, 1) = 27", "EACH side")
    assert_result(check.output_size(lambda w, f, p, s: w - f + 2 * p + 1), "failed",
                  "(7, 3, 0, 2) = 5", "divide by the stride")
    assert_result(check.output_size(lambda w, f, p, s: -(-(w - f + 2 * p) // s) + 1), "failed",
                  "round down")
    assert_result(check.output_size(lambda w, f, p, s: (w - f + 2 * p) / s + 1), "failed",
                  "16.5", "//")  # a number in the message, never Array(16.5, ...)


def im2col(image, kh, kw):
    c, h, w = image.shape
    oh, ow = h - kh + 1, w - kw + 1
    patches = jax.vmap(conv.image_patches, in_axes=(0, None, None))(image, kh, kw)  # (C,oh,ow,k)
    return patches.transpose(1, 2, 0, 3).reshape(oh * ow, c * kh * kw)


def test_im2col():
    assert_result(check.im2col(im2col), "passed")
    assert_result(check.im2col(stub), "not done")
    assert_result(check.im2col(lambda image, kh, kw: im2col(image, kh, kw).T), "failed",
                  "one ROW per window")

    def unmoved(image, kh, kw):  # (C, oh, ow, k) reshaped as it is
        windows = (image.shape[1] - kh + 1) * (image.shape[2] - kw + 1)
        return jax.vmap(conv.image_patches, in_axes=(0, None, None))(image, kh, kw).reshape(
            windows, -1)
    assert_result(check.im2col(unmoved), "failed", "(oh, ow, C, kh*kw)")

    def channels_fastest(image, kh, kw):  # each window's numbers as (kh*kw, C): channels last
        windows = (image.shape[1] - kh + 1) * (image.shape[2] - kw + 1)
        return conv.image_patches(jnp.moveaxis(image, 0, -1), kh, kw).reshape(windows, -1)
    assert_result(check.im2col(channels_fastest), "failed", "w.reshape(C_out, -1)")
    assert_result(check.im2col(lambda image, kh, kw: im2col(image, kh, kw) * 1.01), "failed",
                  "image[:, i:i+kh, j:j+kw].ravel()")

    def swapped_window(image, kh, kw):  # a second walk: kh and kw swapped in the slice
        c, h, w = image.shape
        return jnp.stack([image[:, i:i + kw, j:j + kh].ravel()
                          for i in range(h - kw + 1) for j in range(w - kh + 1)])
    assert_result(check.im2col(swapped_window), "failed", "kh and kw swapped", "image[:, i:i+kh")

    def swapped_in_the_call(image, kh, kw):  # ... and in image_patches' call: its reshape fails
        c, h, w = image.shape
        p = jax.vmap(conv.image_patches, in_axes=(0, None, None))(image, kw, kh)
        return p.transpose(1, 2, 0, 3).reshape((h - kh + 1) * (w - kw + 1), c * kh * kw)
    assert_result(check.im2col(swapped_in_the_call), "failed", "kh goes with H")


def conv2d_input_grad(grad_out, kernel):
    kh, kw = kernel.shape
    return conv.conv2d(jnp.pad(grad_out, ((kh - 1, kh - 1), (kw - 1, kw - 1))), kernel[::-1, ::-1])


def test_conv2d_input_grad():
    assert_result(check.conv2d_input_grad(conv2d_input_grad), "passed")

    def by_vjp(grad_out, kernel):  # what the lesson checks it against: JAX's own backward pass
        image = jnp.zeros((grad_out.shape[0] + kernel.shape[0] - 1,
                           grad_out.shape[1] + kernel.shape[1] - 1))
        return jax.vjp(lambda x: conv.conv2d(x, kernel), image)[1](grad_out)[0]
    assert_result(check.conv2d_input_grad(by_vjp), "passed")
    assert_result(check.conv2d_input_grad(stub), "not done")
    assert_result(check.conv2d_input_grad(lambda g, k: conv2d_input_grad(g, k[::-1, ::-1])),
                  "failed", "did not flip", "kernel[::-1, ::-1]")
    assert_result(check.conv2d_input_grad(lambda g, k: conv.conv2d(jnp.pad(g, 1), k[::-1, ::-1])),
                  "failed", "the image's shape", "kh - 1 rows")
    assert_result(check.conv2d_input_grad(lambda g, k: conv.conv2d(g, k[::-1, ::-1])), "failed",
                  "the image's shape")


def conv_matrix(kernel, h, w):
    oh, ow = h - kernel.shape[0] + 1, w - kernel.shape[1] + 1
    one_pixel_images = jnp.eye(h * w).reshape(h * w, h, w)  # column k of M: the image of pixel k
    return jax.vmap(conv.conv2d, in_axes=(0, None))(one_pixel_images, kernel).reshape(
        h * w, oh * ow).T


def test_conv_matrix():
    assert_result(check.conv_matrix(conv_matrix), "passed")
    assert_result(check.conv_matrix(stub), "not done")
    assert_result(check.conv_matrix(lambda k, h, w: conv_matrix(k, h, w).T), "failed",
                  "the transpose", "one row per output pixel")
    assert_result(check.conv_matrix(lambda k, h, w: conv_matrix(k[::-1, ::-1], h, w)), "failed",
                  "flipped the kernel")

    def by_columns(kernel, h, w):  # pixel (y, x) numbered x * H + y
        m = conv_matrix(kernel, h, w)
        return m.reshape(-1, h, w).transpose(0, 2, 1).reshape(-1, h * w)
    assert_result(check.conv_matrix(by_columns), "failed", "column by column", "y * W + x")
    assert_result(check.conv_matrix(lambda k, h, w: conv_matrix(k, h, w) + 0.5), "failed",
                  "conv2d(image, kernel).ravel()")


def test_a_table_of_the_written_cases_earns_nothing_when_graded():
    """The checker's source is no secret: a student could answer 13.7 and 13.8 with a table of
    the cases it tries. In class that passes (it is the student's own loss); in a grading,
    cases drawn for that grading are added, and only the honest answer still passes."""
    from nn_from_scratch.exercises._calls import fresh_inputs
    sizes = {(28, 3, 0, 1): 26, (28, 3, 1, 1): 28, (7, 3, 0, 2): 3, (32, 5, 2, 2): 16,
             (10, 4, 0, 3): 3, (13, 3, 1, 2): 7}
    counts = {(1, 8, 3): 80, (8, 16, 3): 1168, (3, 5, 5): 380}
    for seed in (1, 2, 3):
        with fresh_inputs(seed):
            assert check.output_size(lambda w, f, p, s: sizes[(w, f, p, s)]).status == "failed"
            assert check.conv_param_count(lambda *a: counts[a]).status == "failed"
            assert_result(check.output_size(lambda w, f, p, s: (w - f + 2 * p) // s + 1),
                          "passed")
            assert_result(check.conv_param_count(lambda c_in, c_out, k: c_out * (c_in * k * k + 1)),
                          "passed")


def test_the_walks_answers_to_the_checks_that_draw_their_shapes():
    """A student's walk of 13.5, 13.9, 13.10 and 13.11 once they drew their shapes: a right
    answer through SciPy's convolve2d, and hints for the raw errors and the misnamed ones."""
    from jax.scipy.signal import convolve2d, correlate2d

    def typed_pool(x):  # the seed's 28 x 28 map, halved, written as numbers
        return x.reshape(14, 2, 14, 2).max(axis=(1, 3))
    assert_result(check.max_pool(typed_pool), "failed", "a size written as a number",
                  "H, W = x.shape")
    assert_result(check.max_pool(lambda x: conv.max_pool(x)), "failed", "not ready-made code")
    assert_result(check.conv2d_input_grad(lambda g, k: convolve2d(g, k, mode="full")),
                  "passed")
    assert_result(check.conv2d_input_grad(lambda g, k: correlate2d(g, k, mode="full")),
                  "failed", "did not flip")

    def square_windows(image, kh, kw):  # ow taken for oh: windows past the image's side
        oh = image.shape[1] - kh + 1
        return jnp.stack([image[:, i:i + kh, j:j + kw].ravel() for i in range(oh)
                          for j in range(oh)])
    result = check.im2col(square_windows)
    assert result.status == "failed" and "raised" not in result.message, result.line

    def square_matrix(kernel, h, w):  # h used for both sides
        kh, kw = kernel.shape
        oh = h - kh + 1
        m = np.zeros((oh * oh, h * h))
        for i in range(oh):
            for j in range(oh):
                for a in range(kh):
                    for b in range(kw):
                        m[i * oh + j, (i + a) * h + j + b] = kernel[a, b]
        return jnp.asarray(m)
    result = check.conv_matrix(square_matrix)
    assert result.status == "failed" and "raised" not in result.message, result.line


def test_the_second_walks_answers_to_lesson_13():
    """A second walk: a transposed kernel in 13.10 was told about the padding; JAX's
    reduce_window and conv_general_dilated_patches answered 13.5 and 13.9."""
    def transposed(g, k):
        kh, kw = k.shape
        return conv.conv2d(jnp.pad(g, ((kh - 1, kh - 1), (kw - 1, kw - 1))), k.T)
    assert_result(check.conv2d_input_grad(transposed), "failed", "TRANSPOSED", "FLIPPED")
    assert_result(check.max_pool(lambda x: jax.lax.reduce_window(
        x, -jnp.inf, jax.lax.max, (2, 2), (2, 2), "VALID")), "failed", "not ready-made code")
    assert_result(check.im2col(lambda image, kh, kw: jax.lax.conv_general_dilated_patches(
        image[None], (kh, kw), (1, 1), "VALID")[0].reshape(image.shape[0] * kh * kw, -1).T),
        "failed", "not ready-made code")


def test_audit_13_2_to_13_4_take_a_second_size():
    """The fixed-shapes audit: 13.2-13.4 had one case each (3 channels, 4 filters, 2 images):
    range(3), or filters and images counted by hand, passed."""
    def three_channels(image, kernels):
        return sum(conv.conv2d(image[c], kernels[c]) for c in range(3))

    def four_filters(image, w):
        return jnp.stack([sum(conv.conv2d(image[c], w[o, c]) for c in range(image.shape[0]))
                          for o in range(4)])

    def two_images(images, w, b):
        return jnp.stack([conv.conv_layer(images[i], w, b) for i in range(2)])
    for seed in (None, 1, 2):
        with fresh_inputs(seed) if seed else contextlib.nullcontext():
            assert check.conv2d_channels(three_channels).status == "failed"
            assert check.all_filters(four_filters).status == "failed"
            assert check.batched_conv(two_images).status == "failed"


def test_predict_cnn_names_an_overflowing_log_softmax():
    """Walk 11: logits - log(sum(exp(logits))) on 13.6's logits near 100 was told "returned
    the raw logits"; it gets 07.4's hint, -inf and logsumexp."""
    def naive(params, image):
        x = image
        for w, b in params[:-1]:
            x = jax.vmap(conv.max_pool)(jax.nn.relu(conv.conv_layer(x, w, b)))
        w, b = params[-1]
        logits = w @ x.ravel() + b
        return logits - jnp.log(jnp.sum(jnp.exp(logits)))
    assert_result(check.predict_cnn(naive), "failed", "returned -inf", "logsumexp")
