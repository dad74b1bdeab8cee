"""Image augmentation with ``lax.cond``, batched with ``vmap``, one key per image.

Each transform takes ONE image, ``(H, W)`` or ``(H, W, C)``; the random ones
also take a flag (a boolean scalar) that says whether to apply it. ``vmap``
turns them into functions of a batch; ``augment_images`` draws the flags from
keys split once per image and once per transform, so no two images share
randomness and the same key always gives the same batch.
"""
import jax
import jax.numpy as jnp
from jax import lax, random, vmap
from jax.typing import ArrayLike

from ._checks import InputError, check_key

__all__ = ["augment_image", "augment_images", "flip_left_right", "flip_up_down", "identity",
           "random_horizontal_flip", "random_rotate", "random_vertical_flip", "rotate_90"]


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
