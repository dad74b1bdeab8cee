"""Lesson 13's checkers: each accepts the reference, says "not done" to the stub, and catches
the typical mistakes with a hint that names the fix."""
import jax
import jax.numpy as jnp
from conftest import assert_result, own, stub
from jax.scipy.special import logsumexp

from nn_from_scratch import conv
from nn_from_scratch.exercises import cnn_from_scratch as check


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


def test_all_filters():
    assert_result(check.all_filters(jax.vmap(conv.conv2d_channels, in_axes=(None, 0))), "passed")
    assert_result(check.all_filters(...), "not done")
    for wrong in (jax.vmap(conv.conv2d_channels), jax.vmap(conv.conv2d_channels, in_axes=(0, 0))):
        assert_result(check.all_filters(wrong), "failed", "None", "in_axes=(None, 0)")
    assert_result(check.all_filters(lambda image, w: conv.conv2d_channels(image, w[0])),
                  "failed", "shape (3, 4)", "(4, 3, 4)")


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
        "failed", "same w and b")


def test_max_pool():
    assert_result(check.max_pool(own(conv.max_pool)), "passed")
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
                  "shape (1, 4) for ONE image")


def test_conv_param_count():
    assert_result(check.conv_param_count(lambda c_in, c_out, k: c_out * (c_in * k * k + 1)),
                  "passed")
    assert_result(check.conv_param_count(stub), "not done")
    assert_result(check.conv_param_count(lambda c_in, c_out, k: c_out * c_in * k * k), "failed",
                  "only the weights", "bias")
    assert_result(check.conv_param_count(lambda c_in, c_out, k: c_out * (c_in * k + 1)), "failed",
                  "k * k weights")
    assert_result(check.conv_param_count(lambda c_in, c_out, k: 28 * 28 * c_out), "failed",
                  "image size plays no part")
