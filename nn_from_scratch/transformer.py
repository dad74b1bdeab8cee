"""An image as a sequence: a transformer that classifies ONE image, batched with ``vmap``.

The image is cut into non-overlapping ``p x p`` patches (49 of 4x4 pixels for a 28x28 digit),
each a position of the sequence. A dense layer embeds every patch in ``d`` dimensions, and a
learned vector per position is added, so that the network can tell where a patch was: that
vector is the embedding's bias, one per position (``(N, d)`` instead of ``(d,)``). Then
transformer blocks (:func:`~nn_from_scratch.attention.transformer_block`), a layer norm, the
mean over the positions (every patch votes; a class token would do the same with one more
learned vector, as ViT does), and a dense layer to the classes.

Parameters stay a list of pairs, as for the MLP and the CNN, so ``update`` and ``fit`` train
it unchanged: ``(W_embed: (d, p*p), positions: (N, d))``; five pairs per block; the final
layer norm's ``(gamma, beta)``; the classifier's ``(W: (n_classes, d), b)``.
"""
import math
from collections.abc import Sequence

import jax
import jax.numpy as jnp
from jax import random, vmap
from jax.typing import ArrayLike

from ._checks import InputError, check_key, check_positive_int
from .attention import (
    PAIRS_PER_BLOCK,
    block_count,
    init_block_params,
    layer_norm,
    transformer_block,
)
from .params import Params, random_layer_params

__all__ = ["batched_predict_transformer", "image_to_patches", "init_transformer_params",
           "predict_transformer"]



def image_to_patches(image: ArrayLike, size: int) -> jax.Array:
    """ONE image ``(H, W)`` cut into non-overlapping ``(size, size)`` patches, row by row.

    Returns:
      ``(H // size * W // size, size * size)``: patch ``k`` is the block at row ``k // (W //
      size)``, column ``k % (W // size)``, flattened: ``image_patches(image, size, size)`` of
      lesson 13 taken at every ``size``-th window.
    """
    image = jnp.asarray(image)
    h, w = image.shape
    if h % size or w % size:
        raise InputError(f"image_to_patches: a {h}x{w} image does not split into {size}x{size} "
                         f"patches; choose a patch size that divides both sides.")
    blocks = image.reshape(h // size, size, w // size, size)  # (rows, size, cols, size)
    return blocks.transpose(0, 2, 1, 3).reshape(-1, size * size)


def _depth(params: Params) -> int:
    return block_count(params, "a transformer's", "init_transformer_params")


def predict_transformer(params: Params, image: ArrayLike) -> jax.Array:
    """Log-probabilities of each class for ONE image.

    Args:
      params: from :func:`init_transformer_params`.
      image: ONE square image ``(H, W)``, or flattened ``(H*W,)`` as the data sets store it
        (``(784,)`` for a 28x28 digit).

    Returns:
      ``(n_classes,)`` log-probabilities.
    """
    depth = _depth(params)
    (w_embed, positions), *rest = params
    given = jnp.asarray(image)
    size = math.isqrt(w_embed.shape[1])  # the patch side: W_embed is (d, size * size)
    pixels = positions.shape[0] * size * size  # what one image of this network holds
    side = math.isqrt(given.size) if given.ndim == 1 else 0
    image = given.reshape(side, side) if given.ndim == 1 and side * side == given.size else given
    if image.ndim != 2 or image.size != pixels:
        batch = given.ndim == 3 or (given.ndim == 2 and given.shape[1] == pixels)
        hint = ("Use batched_predict_transformer for a batch." if batch else
                "Make the network for these images: init_transformer_params(key, "
                "image_shape=...).")
        raise InputError(f"predict_transformer takes ONE image of {positions.shape[0]} patches "
                         f"of {size}x{size}, (H, W) or flattened (H*W,); got "
                         f"{tuple(given.shape)}. {hint}")
    x = image_to_patches(image, size) @ w_embed.T + positions  # (N, d): patch + where it was
    for i in range(depth):
        x = transformer_block(x, rest[PAIRS_PER_BLOCK * i:PAIRS_PER_BLOCK * (i + 1)])
    (gamma, beta), (w_out, b_out) = rest[-2:]
    pooled = jnp.mean(vmap(layer_norm, in_axes=(0, None, None))(x, gamma, beta), axis=0)
    logits = w_out @ pooled + b_out  # (n_classes,)
    return logits - jax.nn.logsumexp(logits)


_vmapped_predict_transformer = vmap(predict_transformer, in_axes=(None, 0))


def batched_predict_transformer(params: Params, images: ArrayLike) -> jax.Array:
    """``predict_transformer`` for a batch: ``vmap(predict_transformer, in_axes=(None, 0))``.

    Args:
      params: as for :func:`predict_transformer`.
      images: ``(batch, H, W)`` or flattened ``(batch, H*W)``.

    Returns:
      ``(batch, n_classes)`` log-probabilities.
    """
    if jnp.ndim(images) < 2:
        raise InputError(f"batched_predict_transformer takes a batch of images, (batch, H, W) "
                         f"or (batch, H*W); got {jnp.shape(images)}. Use predict_transformer "
                         f"for one image, or add a batch axis with x[None].")
    return _vmapped_predict_transformer(params, images)


def init_transformer_params(key: jax.Array, image_shape: Sequence[int] = (28, 28),
                            patch_size: int = 4, width: int = 64, heads: int = 4,
                            depth: int = 2, mlp_width: int = 128,
                            num_classes: int = 10) -> Params:
    """Parameters of a small vision transformer, as a list of pairs (see the module docstring).

    Dense weights are He-scaled (:func:`~nn_from_scratch.params.random_layer_params`) and
    biases zero; the attention weights are drawn with scale ``1 / sqrt(width)``; the output
    weights of each block's attention and MLP are scaled by ``1 / sqrt(2 * depth)`` (GPT-2's
    scheme: the ``2 * depth`` additions to the residual stream then add up to about the
    variance of one, however deep), which does not make a block close to the identity (lesson
    14 measures how far it is); layer norms start as ``gamma = 1``, ``beta = 0``; position
    vectors are drawn with scale 0.02.

    Args:
      key: a PRNG key.
      image_shape: ``(H, W)``, both multiples of ``patch_size``.
      patch_size: side of the square patches (4: 49 patches of a 28x28 digit).
      width: ``d``, the size of every position's vector; a multiple of ``heads``.
      heads: attention heads per block, each of size ``width // heads``.
      depth: transformer blocks.
      mlp_width: hidden units of each block's MLP.
      num_classes: outputs.
    """
    check_key(key)
    for value, name in ((patch_size, "patch_size"), (width, "width"), (heads, "heads"),
                        (depth, "depth"), (mlp_width, "mlp_width"),
                        (num_classes, "num_classes")):
        check_positive_int(value, name)
    h, w = image_shape[-2:]
    if h % patch_size or w % patch_size or width % heads:
        raise InputError(f"init_transformer_params: the image sides {h}, {w} must be multiples "
                         f"of patch_size {patch_size}, and width {width} a multiple of heads "
                         f"{heads}.")
    n, d = (h // patch_size) * (w // patch_size), width
    keys = iter(random.split(key, 3 + 4 * depth))
    w_embed, _ = random_layer_params(patch_size ** 2, d, next(keys),
                                     scale=math.sqrt(2 / patch_size ** 2))  # He
    params = [(w_embed, 0.02 * random.normal(next(keys), (n, d)))]
    for _ in range(depth):  # four keys per block
        params += init_block_params([next(keys) for _ in range(4)], d, heads, mlp_width, depth)
    w_out = random.normal(next(keys), (num_classes, d)) / math.sqrt(d)
    return params + [(jnp.ones(d), jnp.zeros(d)), (w_out, jnp.zeros(num_classes))]
