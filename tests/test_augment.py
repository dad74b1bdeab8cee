import jax
import jax.numpy as jnp
import numpy as np
import pytest

from nn_from_scratch import InputError
from nn_from_scratch.augment import (
    augment_image,
    augment_images,
    flip_left_right,
    flip_up_down,
    identity,
    random_horizontal_flip,
    random_rotate,
    random_shift,
    random_vertical_flip,
    rotate_90,
    shift_images,
)

IMG = jnp.array([[1, 2], [3, 4]])


def test_transforms_by_hand():
    np.testing.assert_array_equal(rotate_90(IMG), [[2, 4], [1, 3]])  # counter-clockwise
    np.testing.assert_array_equal(flip_left_right(IMG), [[2, 1], [4, 3]])
    np.testing.assert_array_equal(flip_up_down(IMG), [[3, 4], [1, 2]])
    np.testing.assert_array_equal(identity(IMG), IMG)
    np.testing.assert_array_equal(rotate_90(rotate_90(rotate_90(rotate_90(IMG)))), IMG)


@pytest.mark.parametrize("random_fn, fixed_fn", [(random_rotate, rotate_90),
                                                 (random_horizontal_flip, flip_left_right),
                                                 (random_vertical_flip, flip_up_down)])
def test_flag_chooses(random_fn, fixed_fn):
    img = jnp.arange(27.0).reshape(3, 3, 3)  # (H, W, C): channels ride along
    np.testing.assert_array_equal(random_fn(img, False), img)
    np.testing.assert_array_equal(random_fn(img, 0), img)
    np.testing.assert_array_equal(random_fn(img, True), fixed_fn(img))
    np.testing.assert_array_equal(jax.jit(random_fn)(img, True), fixed_fn(img))
    np.testing.assert_array_equal(fixed_fn(img)[..., 1], fixed_fn(img[..., 1]))


def test_batch_is_reproducible_and_per_image():
    images = jax.random.uniform(jax.random.key(0), (32, 5, 5))
    a = augment_images(images, jax.random.key(1))
    np.testing.assert_array_equal(a, augment_images(images, jax.random.key(1)))
    assert not np.array_equal(a, augment_images(images, jax.random.key(2)))
    changed = [not np.array_equal(a[i], images[i]) for i in range(32)]
    assert 20 < sum(changed) < 32  # each image draws its own flags: 7/8 change on average


def test_vmap_and_jit_equal_a_loop():
    images = jax.random.uniform(jax.random.key(0), (6, 4, 4, 3))
    key = jax.random.key(3)
    looped = jnp.stack([augment_image(img, k)
                        for img, k in zip(images, jax.random.split(key, len(images)))])
    np.testing.assert_array_equal(augment_images(images, key), looped)
    np.testing.assert_array_equal(jax.jit(augment_images)(images, key), looped)


def test_clear_errors():
    with pytest.raises(InputError, match=r"square images.*got \(2, 3\)"):
        random_rotate(jnp.zeros((2, 3)), True)
    with pytest.raises(InputError,
                       match=r"ONE image of shape \(H, W\) or \(H, W, C\); got \(2, 3, 3, 3\)"):
        random_horizontal_flip(jnp.zeros((2, 3, 3, 3)), True)
    with pytest.raises(InputError, match=r"batch of shape \(batch, H, W\).*got \(4, 4\)"):
        augment_images(jnp.zeros((4, 4)), jax.random.key(0))
    with pytest.raises(InputError, match="PRNG key"):
        augment_images(jnp.zeros((2, 4, 4)), 0)


def test_random_shift_moves_the_whole_image_and_fills_with_zeros():
    img = jnp.arange(1.0, 37.0).reshape(6, 6)  # no zero inside: a zero is always filling
    padded = np.pad(np.asarray(img), 2)  # (10, 10): every move is a 6x6 window of it
    seen = set()
    for i in range(200):
        out = np.asarray(random_shift(img, jax.random.key(i), 2))
        windows = [(r, c) for r in range(5) for c in range(5)
                   if np.array_equal(padded[r:r + 6, c:c + 6], out)]
        assert len(windows) == 1, out
        seen.add(windows[0])
    assert seen == {(r, c) for r in range(5) for c in range(5)}  # all 25 moves, both ways


def test_shift_images_keeps_the_shape_and_gives_each_image_its_own_move():
    key = jax.random.key(0)
    flat = jnp.tile(jnp.arange(1.0, 785.0), (8, 1))  # 8 copies of one 28x28 image, stored flat
    out = shift_images(flat, key)
    assert out.shape == (8, 784)
    assert len({np.asarray(row).tobytes() for row in out}) > 1  # not one move for all
    np.testing.assert_array_equal(out, shift_images(flat, key))  # same key, same images
    square = shift_images(flat.reshape(8, 28, 28), key)
    np.testing.assert_array_equal(square.reshape(8, 784), out)  # flat or square: the same
    np.testing.assert_array_equal(jax.jit(shift_images)(flat, key), out)
    assert float(out.sum()) < float(flat.sum())  # pixels pushed out at the edges


@pytest.mark.parametrize("images", [jnp.ones((4, 10)), jnp.ones((28, 28, 1, 1)), jnp.ones(5)])
def test_shift_images_says_what_it_takes(images):
    with pytest.raises(InputError, match="shift_images takes a set of images of shape"):
        shift_images(images, jax.random.key(0))
