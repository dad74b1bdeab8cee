"""The hand-written convolution equals lax.conv_general_dilated (values and gradients), and the
CNN built on it predicts, checks its input and trains with the one training loop."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import assert_trees_close
from jax import lax

from nn_from_scratch import InputError, count_params, evaluate, fit
from nn_from_scratch.conv import (
    batched_conv_layer,
    batched_predict_cnn,
    conv2d,
    conv2d_channels,
    conv_layer,
    conv_layer_hwc,
    conv_output_size,
    image_patches,
    init_cnn_params,
    max_pool,
    predict_cnn,
)
from nn_from_scratch.gradcheck import check_grad
from nn_from_scratch.losses import loss

rng = np.random.default_rng(0)


def normal(*shape):
    return jnp.asarray(rng.normal(size=shape), jnp.float32)


def lax_conv(x, w, b):
    """The reference: NCHW images, OIHW kernels, stride 1, no padding."""
    return lax.conv_general_dilated(x, w, (1, 1), "VALID") + b[:, None, None]


def test_conv2d_is_the_window_dotted_with_the_kernel_unflipped():
    image = jnp.arange(12.0).reshape(3, 4)
    kernel = jnp.array([[1.0, 0.0], [0.0, 0.0]])  # picks each window's top-left pixel
    np.testing.assert_array_equal(conv2d(image, kernel), image[:2, :3])
    kernel = jnp.array([[0.0, 0.0], [0.0, 1.0]])  # ... and its bottom-right one
    np.testing.assert_array_equal(conv2d(image, kernel), image[1:, 1:])
    out = conv2d(image, jnp.ones((3, 4)))  # a kernel as large as the image: one window
    assert out.shape == (1, 1) and float(out[0, 0]) == float(image.sum())


@pytest.mark.parametrize("image_shape, kernel_shape", [
    ((6, 7), (3, 3)), ((6, 7), (2, 3)), ((5, 5), (1, 1)), ((8, 5), (5, 2))])
def test_conv2d_equals_lax_on_one_image(image_shape, kernel_shape):
    image, kernel = normal(*image_shape), normal(*kernel_shape)
    want = lax_conv(image[None, None], kernel[None, None], jnp.zeros(1))[0, 0]
    assert conv2d(image, kernel).shape == (conv_output_size(image_shape[0], kernel_shape[0]),
                                           conv_output_size(image_shape[1], kernel_shape[1]))
    np.testing.assert_allclose(conv2d(image, kernel), want, rtol=1e-5, atol=1e-5)


def test_channels_are_summed():
    image, kernels = normal(3, 6, 6), normal(3, 3, 3)
    want = sum(conv2d(image[c], kernels[c]) for c in range(3))
    np.testing.assert_allclose(conv2d_channels(image, kernels), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("batch, c_in, c_out, size, k", [
    (2, 1, 4, 9, 3), (3, 3, 2, 7, 2), (1, 2, 5, 6, 5)])
def test_conv_layer_equals_lax_values_and_gradients(batch, c_in, c_out, size, k):
    x, w, b = normal(batch, c_in, size, size + 1), normal(c_out, c_in, k, k), normal(c_out)
    np.testing.assert_allclose(batched_conv_layer(x, w, b), lax_conv(x, w, b),
                               rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(conv_layer(x[0], w, b), lax_conv(x[:1], w, b)[0],
                               rtol=1e-4, atol=1e-4)
    weights = normal(batch, c_out, size - k + 1, size - k + 2)  # a loss that uses every output

    def grads(conv):
        return jax.grad(lambda x, w, b: jnp.sum(weights * jnp.tanh(conv(x, w, b))),
                        argnums=(0, 1, 2))(x, w, b)
    assert_trees_close(grads(batched_conv_layer), grads(lax_conv), rtol=1e-4, atol=1e-4)


def test_max_pool_keeps_the_largest_of_each_block_and_drops_a_ragged_edge():
    x = jnp.array([[1.0, 2.0, 5.0, 0.0, 9.0],
                   [3.0, -1.0, 4.0, 6.0, 9.0],
                   [0.0, 0.0, -2.0, -3.0, 9.0]])
    np.testing.assert_array_equal(max_pool(x), [[3.0, 6.0]])
    np.testing.assert_array_equal(max_pool(x, 3), [[5.0]])
    window = lax.reduce_window(x, -jnp.inf, lax.max, (2, 2), (2, 2), "VALID")
    np.testing.assert_array_equal(max_pool(x), window)


@pytest.mark.parametrize("c_in, c_out, k", [(1, 4, 3), (3, 2, 2), (2, 5, 5)])
def test_conv_layer_hwc_is_conv_layer_with_the_channels_last(c_in, c_out, k):
    image, w, b = normal(9, 8, c_in), normal(c_out, c_in, k, k), normal(c_out)
    assert image_patches(image, k, k).shape == (10 - k, 9 - k, k * k, c_in)
    want = conv_layer(image.transpose(2, 0, 1), w, b).transpose(1, 2, 0)  # (oh, ow, C_out)
    np.testing.assert_allclose(conv_layer_hwc(image, w, b), want, rtol=1e-5, atol=1e-5)
    weights = normal(*want.shape)

    def grads(conv):
        return jax.grad(lambda x, w, b: jnp.sum(weights * jnp.tanh(conv(x, w, b))),
                        argnums=(0, 1, 2))(image, w, b)

    def chw_then_hwc(x, w, b):
        return conv_layer(x.transpose(2, 0, 1), w, b).transpose(1, 2, 0)
    assert_trees_close(grads(conv_layer_hwc), grads(chw_then_hwc), rtol=1e-4, atol=1e-4)


def test_max_pool_pools_each_channel_of_a_channels_last_stack():
    maps = normal(3, 7, 5)  # (C, H, W)
    np.testing.assert_array_equal(max_pool(maps.transpose(1, 2, 0)),
                                  jax.vmap(max_pool)(maps).transpose(1, 2, 0))
    assert max_pool(maps.transpose(1, 2, 0)).shape == (3, 2, 3)


@pytest.fixture(scope="module")
def cnn():
    return init_cnn_params(jax.random.key(0), channels=(8, 16), hidden=(12,))


def test_init_cnn_params_shapes_scale_and_keys(cnn):
    shapes = [(w.shape, b.shape) for w, b in cnn]
    assert shapes == [((8, 1, 3, 3), (8,)), ((16, 8, 3, 3), (16,)), ((12, 400), (12,)),
                      ((10, 12), (10,))]
    assert count_params(cnn) == 8 * 10 + 16 * 73 + 12 * 401 + 10 * 13
    assert float(jnp.std(cnn[1][0])) == pytest.approx(np.sqrt(2 / 72), rel=0.15)  # He: fan-in 72
    again = init_cnn_params(jax.random.key(0), channels=(8, 16), hidden=(12,))
    assert_trees_close(cnn, again, rtol=0, atol=0)
    other = init_cnn_params(jax.random.key(1), channels=(8, 16), hidden=(12,))
    assert not np.allclose(cnn[0][0], other[0][0])
    three = init_cnn_params(jax.random.key(0), image_shape=(3, 12, 12), channels=(4,))
    assert [w.shape for w, _ in three] == [(4, 3, 3, 3), (10, 100)]


def test_an_image_too_small_for_the_layers_is_refused():
    with pytest.raises(InputError, match=r"\(8, 8\) is too small for 2 3x3 convolutions"):
        init_cnn_params(jax.random.key(0), image_shape=(8, 8))


def test_predict_cnn_one_image_in_three_layouts(cnn):
    image = jnp.asarray(rng.uniform(size=(28, 28)), jnp.float32)
    out = predict_cnn(cnn, image)
    assert out.shape == (10,)
    assert float(jnp.sum(jnp.exp(out))) == pytest.approx(1.0, rel=1e-5)  # log-probabilities
    np.testing.assert_allclose(predict_cnn(cnn, image[None]), out, rtol=1e-6)
    np.testing.assert_allclose(predict_cnn(cnn, image.ravel()), out, rtol=1e-6)
    np.testing.assert_allclose(jax.jit(predict_cnn)(cnn, image), out, rtol=1e-5, atol=1e-6)


def test_predict_cnn_is_the_layers_of_the_lesson_flattened_in_chw_order(cnn):
    image = normal(1, 28, 28)
    x = image  # (C, H, W) all the way, as lesson 13 builds it: conv_layer, relu, vmap(max_pool)
    for w, b in cnn[:2]:
        x = jax.vmap(max_pool)(jnp.maximum(conv_layer(x, w, b), 0))
    assert x.shape == (16, 5, 5)  # maps larger than 1 x 1: the flattening order shows
    hidden = jnp.maximum(cnn[2][0] @ x.ravel() + cnn[2][1], 0)
    logits = cnn[3][0] @ hidden + cnn[3][1]
    np.testing.assert_allclose(predict_cnn(cnn, image), jax.nn.log_softmax(logits),
                               rtol=1e-5, atol=1e-5)


def test_batched_predict_cnn_is_predict_cnn_row_by_row(cnn):
    images = jnp.asarray(rng.uniform(size=(3, 784)), jnp.float32)
    rows = jnp.stack([predict_cnn(cnn, image) for image in images])
    np.testing.assert_allclose(batched_predict_cnn(cnn, images), rows, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(batched_predict_cnn(cnn, images.reshape(3, 28, 28)), rows,
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("shape, message", [
    ((4, 28, 28), r"ONE image of shape \(1, H, W\).*got \(4, 28, 28\)\. Use batched_predict_cnn"),
    ((783,), r"got \(783,\)\. Pass one image"),
    ((20, 20), r"leaves \(16, 3, 3\) = 144 features.*takes 400.*init_cnn_params\(key, "
               r"image_shape=\.\.\.\)"),
])
def test_predict_cnn_errors_for_people(cnn, shape, message):
    with pytest.raises(InputError, match=message):
        predict_cnn(cnn, jnp.zeros(shape))


def test_batched_predict_cnn_on_one_image_points_to_predict_cnn(cnn):
    with pytest.raises(InputError, match=r"got \(784,\)\. Use predict_cnn"):
        batched_predict_cnn(cnn, jnp.zeros(784))


@pytest.fixture(scope="module")
def tiny(digits):
    """A one-convolution CNN for scikit-learn's 8x8 digits: 8 -> conv 6 -> pool 3."""
    return init_cnn_params(jax.random.key(2), image_shape=digits.image_shape, channels=(4,))


def test_the_gradient_matches_finite_differences(digits, tiny):
    x, labels = digits.x_train[:8], digits.y_train[:8]
    targets = jax.nn.one_hot(labels, 10)
    error = check_grad(lambda p: loss(p, x, targets, batched_predict_cnn), tiny,
                       jax.random.key(0), num_directions=3)
    assert error < 1e-6


def test_fit_trains_the_cnn_the_same_in_every_mode(digits, tiny):
    runs = {mode: fit(tiny, digits, epochs=1, batch_size=256, step_size=0.1,
                      key=jax.random.key(0), mode=mode, predict=batched_predict_cnn)[0]
            for mode in ("eager", "jit", "scan")}
    for mode in ("jit", "scan"):
        assert_trees_close(runs[mode], runs["eager"], rtol=1e-4, atol=1e-5)


def test_fit_teaches_the_cnn_digits(digits, tiny):
    params, history = fit(tiny, digits, epochs=3, batch_size=64, step_size=0.1,
                          key=jax.random.key(0), predict=batched_predict_cnn)
    assert history.train_loss[-1] < history.train_loss[0]
    assert history.val_accuracy[-1] > 0.5  # chance is 0.1
    _, val_accuracy = evaluate(params, digits.x_val, digits.y_val, batched_predict_cnn)
    assert history.val_accuracy[-1] == pytest.approx(float(val_accuracy))


def test_fit_refuses_a_cnn_with_the_wrong_number_of_classes(digits):
    params = init_cnn_params(jax.random.key(0), image_shape=(8, 8), channels=(4,),
                             num_classes=3)
    with pytest.raises(InputError, match=r"gives \(3,\) scores per image, but the digits data "
                                         r"has 10 classes"):
        fit(params, digits, epochs=1, key=jax.random.key(0), predict=batched_predict_cnn)
