"""The vision transformer: patches as lesson 13 cuts them, ONE image in and log-probabilities out,
its batched twin, a gradient that matches finite differences, position vectors that matter,
clear errors, and training with the one training loop."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from nn_from_scratch import InputError, count_params, fit
from nn_from_scratch.conv import image_patches
from nn_from_scratch.gradcheck import check_grad
from nn_from_scratch.losses import loss
from nn_from_scratch.transformer import (
    batched_predict_transformer,
    image_to_patches,
    init_transformer_params,
    predict_transformer,
)


@pytest.fixture(scope="module")
def tiny():
    """One block of width 8 with 2 heads, for scikit-learn's 8x8 digits cut into 16 patches."""
    return init_transformer_params(jax.random.key(0), image_shape=(8, 8), patch_size=2,
                                   width=8, heads=2, depth=1, mlp_width=16)


def test_patches_are_lesson_13s_windows_taken_every_size_th_place():
    image = jnp.arange(28 * 28, dtype=jnp.float32).reshape(28, 28)
    patches = image_to_patches(image, 4)
    assert patches.shape == (49, 16)
    np.testing.assert_array_equal(patches, image_patches(image, 4, 4)[::4, ::4].reshape(49, 16))
    np.testing.assert_array_equal(patches[8], image[4:8, 4:8].ravel())  # row 1, column 1


def test_one_image_gives_log_probabilities_and_the_batch_is_vmap(digits, tiny):
    x = digits.x_train[:5]
    one = predict_transformer(tiny, x[0])
    assert one.shape == (10,) and float(jnp.sum(jnp.exp(one))) == pytest.approx(1.0, abs=1e-5)
    np.testing.assert_allclose(predict_transformer(tiny, x[0].reshape(8, 8)), one, rtol=1e-6)
    batch = batched_predict_transformer(tiny, x)
    np.testing.assert_allclose(batch, jnp.stack([predict_transformer(tiny, im) for im in x]),
                               rtol=1e-5, atol=1e-6)


def test_the_default_network_for_mnist_digits():
    params = init_transformer_params(jax.random.key(0))
    assert len(params) == 3 + 5 * 2 and params[0][1].shape == (49, 64)  # a vector per patch
    assert count_params(params) == 2 * (2 * 64 + 3 * 64 * 64 + 64 * 64 + 2 * 64
                                        + 64 * 128 + 128 + 128 * 64 + 64) \
        + 16 * 64 + 49 * 64 + 2 * 64 + 64 * 10 + 10
    assert predict_transformer(params, jnp.zeros(784)).shape == (10,)


def test_the_gradient_matches_finite_differences(digits, tiny):
    x, targets = digits.x_train[:6], jax.nn.one_hot(digits.y_train[:6], 10)
    error = check_grad(lambda p: loss(p, x, targets, batched_predict_transformer), tiny,
                       jax.random.key(1), num_directions=3)
    assert error < 1e-6


def test_without_position_vectors_a_shuffled_image_looks_the_same(digits, tiny):
    """Attention and the mean treat the patches as a set: only the position vectors tell the
    network where a patch was."""
    image = digits.x_train[0].reshape(8, 8)
    order = np.random.default_rng(0).permutation(16)
    patches = image_to_patches(image, 2)[order]  # the same patches, shuffled
    shuffled = patches.reshape(4, 4, 2, 2).transpose(0, 2, 1, 3).reshape(8, 8)
    np.testing.assert_array_equal(image_to_patches(shuffled, 2), patches)
    flat = [(w, jnp.zeros_like(b)) if i == 0 else (w, b) for i, (w, b) in enumerate(tiny)]
    np.testing.assert_allclose(predict_transformer(flat, shuffled),
                               predict_transformer(flat, image), rtol=1e-5, atol=1e-6)
    with_positions = [(tiny[0][0], jax.random.normal(jax.random.key(3), (16, 8))), *tiny[1:]]
    assert not np.allclose(predict_transformer(with_positions, shuffled),
                           predict_transformer(with_positions, image), atol=1e-4)


def test_a_batch_or_a_wrong_size_gets_an_error_for_people(tiny):
    with pytest.raises(InputError, match=r"ONE image of 16 patches of 2x2.*got \(5, 64\)\. "
                                         r"Use batched_predict_transformer"):
        predict_transformer(tiny, jnp.zeros((5, 64)))
    with pytest.raises(InputError, match=r"got \(784,\)\. Make the network for these images"):
        predict_transformer(tiny, jnp.zeros(784))
    with pytest.raises(InputError, match=r"takes a batch.*got \(64,\)"):
        batched_predict_transformer(tiny, jnp.zeros(64))
    with pytest.raises(InputError, match=r"does not split into 3x3 patches"):
        image_to_patches(jnp.zeros((8, 8)), 3)
    with pytest.raises(InputError, match=r"width 10 a multiple of heads 4"):
        init_transformer_params(jax.random.key(0), width=10, heads=4)
    with pytest.raises(InputError, match=r"3 \+ 5 \* depth pairs; got 4"):
        predict_transformer(tiny[:4], jnp.zeros(64))


def test_fit_teaches_the_transformer_digits(digits, tiny):
    params, history = fit(tiny, digits, epochs=4, batch_size=32, step_size=0.1,
                          key=jax.random.key(0), predict=batched_predict_transformer)
    assert history.train_loss[-1] < history.train_loss[0]
    assert history.val_accuracy[-1] > 0.5  # chance is 0.1
