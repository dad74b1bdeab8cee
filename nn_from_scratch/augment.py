"""Image augmentation with ``lax.cond``, batched with ``vmap``, one key per image.

Each transform takes ONE image, ``(H, W)`` or ``(H, W, C)``; the random ones
also take a flag (a boolean scalar) that says whether to apply it. ``vmap``
turns them into functions of a batch; ``augment_images`` draws the flags from
keys split once per image and once per transform, so no two images share
randomness and the same key always gives the same batch.

Digits must not be flipped or turned (a mirrored 2 is no digit, a turned 6 is a 9);
for them ``random_shift`` moves ONE image by a pixel or two, and ``shift_images``
does it to a training set, which ``fit(..., augment=shift_images)`` calls each epoch.
"""
import jax
import jax.numpy as jnp
from jax import lax, random, vmap
from jax.typing import ArrayLike

from ._checks import InputError, check_key

__all__ = ["MAX_SHIFT", "augment_image", "augment_images", "flip_left_right", "flip_up_down",
           "identity", "random_horizontal_flip", "random_rotate", "random_shift",
           "random_vertical_flip", "rotate_90", "shift_images"]

MAX_SHIFT = 2  # pixels: a 28x28 digit moved by up to 2 is still the same digit


def identity(img: jax.Array) -> jax.Array:
    """The image unchanged. ``img: (H, W)`` or ``(H, W, C)``."""
    return img


def rotate_90(img: jax.Array) -> jax.Array:
    """A quarter turn counter-clockwise in the (H, W) plane: ``(H, W[, C]) -> (W, H[, C])``."""
    return jnp.rot90(img, k=1, axes=(0, 1))


def flip_left_right(img: jax.Array) -> jax.Array:
    """Mirror left to right (reverse the W axis). ``img: (H, W)`` or ``(H, W, C)``."""
    return jnp.flip(img, axis=1)


def flip_up_down(img: jax.Array) -> jax.Array:
    """Mirror top to bottom (reverse the H axis). ``img: (H, W)`` or ``(H, W, C)``."""
    return jnp.flip(img, axis=0)


def _check_image(img: jax.Array, fn_name: str) -> None:
    if img.ndim not in (2, 3):
        raise InputError(
            f"{fn_name} takes ONE image of shape (H, W) or (H, W, C); got {tuple(img.shape)}. "
            f"For a batch use jax.vmap({fn_name}) or augment_images.")


def random_rotate(img: jax.Array, flag: ArrayLike) -> jax.Array:
    """``rotate_90(img)`` if ``flag`` else ``img``, chosen with ``lax.cond``.

    Args:
      img: ``(H, W)`` or ``(H, W, C)`` with ``H == W``: both branches of a
        ``lax.cond`` must return the same shape, and a quarter turn swaps H and W.
      flag: boolean (or 0/1) scalar, possibly traced.

    Under ``jit`` only the chosen branch runs; under ``vmap`` the flag differs per
    image, so ``lax.cond`` becomes a ``select`` that computes both and picks.
    """
    _check_image(img, "random_rotate")
    if img.shape[0] != img.shape[1]:
        raise InputError(
            f"random_rotate needs square images, since a quarter turn must keep the shape "
            f"for lax.cond; got {tuple(img.shape)}. Crop or resize to a square first.")
    return lax.cond(flag, rotate_90, identity, img)


def random_horizontal_flip(img: jax.Array, flag: ArrayLike) -> jax.Array:
    """``flip_left_right(img)`` if ``flag`` else ``img``. ``img: (H, W[, C])``, ``flag``: bool."""
    _check_image(img, "random_horizontal_flip")
    return lax.cond(flag, flip_left_right, identity, img)


def random_vertical_flip(img: jax.Array, flag: ArrayLike) -> jax.Array:
    """``flip_up_down(img)`` if ``flag`` else ``img``. ``img: (H, W[, C])``, ``flag``: bool."""
    _check_image(img, "random_vertical_flip")
    return lax.cond(flag, flip_up_down, identity, img)


def augment_image(img: jax.Array, key: jax.Array) -> jax.Array:
    """Rotate, then flip left-right, then flip up-down, each with probability 1/2.

    Args:
      img: ``(H, W)`` or ``(H, W, C)``, square.
      key: PRNG key; split into one fresh subkey per transform.
    """
    rotate_key, h_key, v_key = random.split(key, 3)
    img = random_rotate(img, random.bernoulli(rotate_key))
    img = random_horizontal_flip(img, random.bernoulli(h_key))
    return random_vertical_flip(img, random.bernoulli(v_key))


def augment_images(images: jax.Array, key: jax.Array) -> jax.Array:
    """Augment a batch, each image with its own key: ``vmap(augment_image)``.

    Args:
      images: ``(batch, H, W)`` or ``(batch, H, W, C)``, square images.
      key: one PRNG key; split into ``batch`` keys, one per image.

    Returns:
      an array of the same shape as ``images``.
    """
    check_key(key)
    if images.ndim not in (3, 4):
        raise InputError(
            f"augment_images takes a batch of shape (batch, H, W) or (batch, H, W, C); got "
            f"{tuple(images.shape)}. For one image use augment_image(img, key) or images[None].")
    keys = random.split(key, images.shape[0])  # (batch,) keys
    return vmap(augment_image)(images, keys)


def random_shift(img: jax.Array, key: jax.Array, max_shift: int = MAX_SHIFT) -> jax.Array:
    """ONE image moved by a random whole number of pixels, from ``-max_shift`` to
    ``max_shift`` along each axis (25 places for 2), the edge filled with zeros.

    Args:
      img: ``(H, W)``.
      key: PRNG key for the two offsets.
      max_shift: largest move in pixels (a Python int: the padding's size is a shape).

    Pads ``max_shift`` zeros on every side, ``(H + 2s, W + 2s)``, and cuts the ``(H, W)``
    window at the random offsets with ``lax.dynamic_slice``: a shape that does not depend
    on the random numbers, so it works under ``jit`` and ``vmap``.
    """
    offsets = random.randint(key, (2,), 0, 2 * max_shift + 1)  # (row, column) of the window
    padded = jnp.pad(img, max_shift)  # (H + 2s, W + 2s)
    return lax.dynamic_slice(padded, (offsets[0], offsets[1]), img.shape)


def shift_images(images: jax.Array, key: jax.Array, max_shift: int = MAX_SHIFT) -> jax.Array:
    """``random_shift`` for every image of a set, each with its own key.

    Args:
      images: ``(n, H, W)``, or ``(n, H*W)`` square images stored flat as the data sets
        store them (e.g. ``(4000, 784)``).
      key: one PRNG key; split into ``n`` keys, one per image.
      max_shift: largest move in pixels.

    Returns:
      the shifted images, in the shape of ``images``.
    """
    check_key(key)
    images = jnp.asarray(images)
    side = round(images.shape[-1] ** 0.5) if images.ndim == 2 else 0
    if images.ndim == 2 and side * side == images.shape[1]:
        square = images.reshape(-1, side, side)  # (n, H*W) -> (n, H, W)
    elif images.ndim == 3:
        square = images
    else:
        raise InputError(
            f"shift_images takes a set of images of shape (n, H, W), or (n, H*W) for square "
            f"images stored flat; got {tuple(images.shape)}. For one image use "
            f"random_shift(img, key) or images[None].")
    keys = random.split(key, images.shape[0])  # (n,) keys
    shifted = vmap(random_shift, in_axes=(0, 0, None))(square, keys, max_shift)
    return shifted.reshape(images.shape)
