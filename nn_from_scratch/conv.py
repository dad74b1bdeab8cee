"""A convolutional network from scratch: a 2-D convolution for ONE image and ONE kernel, lifted
with ``vmap`` to channels, filters and the batch; max-pooling; ``predict_cnn`` for ONE image.

Lesson 06's ``convolve`` slides a kernel along one signal and takes a dot product at each
place. :func:`conv2d` does the same in 2-D: every ``(kh, kw)`` window of the image is a
*patch*, and each output pixel is one patch dotted with the kernel. Nothing here is written
for more than one image, channel or filter; ``vmap`` adds each of those axes:

- input channels: ``vmap`` pairs channel ``c`` of the image with kernel ``c``, and the
  results are summed (:func:`conv2d_channels`, which sums inside one dot product);
- filters (output channels): ``vmap(..., in_axes=(None, 0))`` shares the image and maps over
  the kernels (:func:`conv_layer`);
- the batch: ``vmap(..., in_axes=(0, None, None))`` maps the images and shares the weights.

The result equals ``jax.lax.conv_general_dilated(x, w, (1, 1), "VALID")`` in the layouts
``NCHW`` (images) and ``OIHW`` (kernels): stride 1, no padding ("valid"). Like deep
learning's convolution everywhere, this is a cross-correlation: the kernel is not flipped.

:func:`predict_cnn` computes the same layers with the channels LAST, ``(H, W, C)``
(:func:`conv_layer_hwc`): each window's ``kh * kw * C_in`` numbers are then side by side in
memory, one matrix product makes every filter's map at once, and the ReLU and the pooling
work along 16 or 32 channels at a time. The same numbers, about three times as fast to
train on a CPU as the ``(C, H, W)`` layers (lesson 13 measures it).

Parameters stay a list of ``(W, b)``, one per layer, so ``update`` and ``fit`` train the CNN
unchanged: a convolution's ``W`` is ``(C_out, C_in, kh, kw)``, a dense layer's ``(n_out, n_in)``.
"""
import math
from collections.abc import Sequence

import jax
import jax.numpy as jnp
from jax import random, vmap
from jax.typing import ArrayLike

from ._checks import InputError, check_key, check_positive_int
from .model import predict, relu
from .params import Params, layer_scale, random_layer_params

__all__ = ["POOL", "batched_conv_layer", "batched_predict_cnn", "conv2d", "conv2d_channels",
           "conv_layer", "conv_layer_hwc", "conv_output_size", "image_patches", "init_cnn_params",
           "max_pool", "predict_cnn"]

POOL = 2  # max-pooling keeps the largest of each 2x2 block: half the height and width


def conv_output_size(size: int, kernel_size: int) -> int:
    """Pixels along one side after a "valid" convolution, stride 1: ``size - kernel_size + 1``.

    The kernel must lie wholly inside the image, so its top-left corner has
    ``size - kernel_size + 1`` places along each side. E.g. 28 and 3 -> 26.
    """
    return size - kernel_size + 1


def image_patches(image: ArrayLike, kh: int, kw: int) -> jax.Array:
    """Every ``(kh, kw)`` window of ONE image, flattened.

    Args:
      image: ``(H, W)``, one channel; or ``(H, W, C)``, channels last.
      kh, kw: the window's height and width (ints).

    Returns:
      ``(H - kh + 1, W - kw + 1, kh * kw)``: ``patches[i, j]`` is ``image[i:i+kh, j:j+kw]``
      flattened row by row; for ``(H, W, C)``, ``(H - kh + 1, W - kw + 1, kh * kw, C)``.
    """
    image = jnp.asarray(image)
    oh, ow = conv_output_size(image.shape[0], kh), conv_output_size(image.shape[1], kw)
    # Built from kh * kw shifted views of the image (one per kernel entry), not from
    # oh * ow windows: the same numbers, and a trace of 9 slices instead of 676.
    return jnp.stack([image[di:di + oh, dj:dj + ow]
                      for di in range(kh) for dj in range(kw)], axis=2)


def conv2d(image: ArrayLike, kernel: ArrayLike) -> jax.Array:
    """Convolve ONE single-channel image with ONE kernel ("valid", stride 1).

    Args:
      image: ``(H, W)``.
      kernel: ``(kh, kw)``.

    Returns:
      ``(H - kh + 1, W - kw + 1)``; ``out[i, j] = sum(image[i:i+kh, j:j+kw] * kernel)``,
      the window at ``(i, j)`` dotted with the kernel (not flipped).
    """
    kernel = jnp.asarray(kernel)
    return image_patches(image, *kernel.shape) @ kernel.ravel()  # one dot product per window


def conv2d_channels(image: ArrayLike, kernels: ArrayLike) -> jax.Array:
    """One filter on a multi-channel image: each channel with its own kernel, summed.

    The same numbers as ``jnp.sum(vmap(conv2d)(image, kernels), axis=0)``, computed as ONE
    dot product per window over all channels (``C_in * kh * kw`` numbers) instead of
    ``C_in`` short ones and a sum: XLA turns that into one matrix product, the idea
    called *im2col*, several times as fast on a CPU (lesson 13 measures it).

    Args:
      image: ``(C_in, H, W)``.
      kernels: ``(C_in, kh, kw)``, kernel ``c`` for channel ``c``.

    Returns:
      ``(H - kh + 1, W - kw + 1)``.
    """
    kernels = jnp.asarray(kernels)
    c_in, kh, kw = kernels.shape
    patches = vmap(image_patches, in_axes=(0, None, None))(image, kh, kw)  # (C_in, oh, ow, kh*kw)
    return jnp.einsum("cijk,ck->ij", patches, kernels.reshape(c_in, kh * kw))


# Every filter sees the whole image: image shared (None), kernels mapped over axis 0.
_all_filters = vmap(conv2d_channels, in_axes=(None, 0))


def conv_layer(image: ArrayLike, w: ArrayLike, b: ArrayLike) -> jax.Array:
    """A convolutional layer on ONE image: every filter, plus its bias.

    Args:
      image: ``(C_in, H, W)``.
      w: ``(C_out, C_in, kh, kw)``, one ``(C_in, kh, kw)`` filter per output channel.
      b: ``(C_out,)``, one bias per output channel.

    Returns:
      ``(C_out, H - kh + 1, W - kw + 1)``: one feature map per filter.
    """
    return _all_filters(image, w) + jnp.asarray(b)[:, None, None]


def conv_layer_hwc(image: ArrayLike, w: ArrayLike, b: ArrayLike) -> jax.Array:
    """:func:`conv_layer` with the channels LAST: every filter at once, as ONE matrix product.

    Args:
      image: ``(H, W, C_in)``.
      w: ``(C_out, C_in, kh, kw)``, as for :func:`conv_layer`.
      b: ``(C_out,)``.

    Returns:
      ``(H - kh + 1, W - kw + 1, C_out)``: ``conv_layer(image.transpose(2, 0, 1), w, b)``
      with its channels moved last.
    """
    w = jnp.asarray(w)
    c_out, c_in, kh, kw = w.shape
    patches = image_patches(image, kh, kw)  # (oh, ow, kh*kw, C_in): a window's numbers together
    oh, ow = patches.shape[:2]
    filters = w.transpose(2, 3, 1, 0).reshape(kh * kw * c_in, c_out)  # in the patches' order
    # (oh * ow, kh*kw*C_in) @ (kh*kw*C_in, C_out) once vmap adds the batch: im2col's product
    return patches.reshape(oh, ow, kh * kw * c_in) @ filters + jnp.asarray(b)


batched_conv_layer = vmap(conv_layer, in_axes=(0, None, None))
""":func:`conv_layer` for a batch ``(B, C_in, H, W)`` -> ``(B, C_out, oh, ow)``, weights shared.

The same numbers as ``lax.conv_general_dilated(x, w, (1, 1), "VALID") + b[:, None, None]``."""


def max_pool(feature_map: ArrayLike, size: int = POOL) -> jax.Array:
    """Max-pooling of ONE map: the largest value of each ``size x size`` block.

    Args:
      feature_map: ``(H, W)``; or ``(H, W, C)``, C maps with the channels last, each pooled
        on its own. A last row or column that does not fill a block is dropped.
      size: the block's side (int).

    Returns:
      ``(H // size, W // size)``, or ``(H // size, W // size, C)``.
    """
    x = jnp.asarray(feature_map)
    h, w = x.shape[0] // size, x.shape[1] // size
    # blocks[i, :, j, :] is one block (of every channel, when there are channels)
    blocks = x[:h * size, :w * size].reshape(h, size, w, size, *x.shape[2:])
    return jnp.max(blocks, axis=(1, 3))


def _as_image(params: Params, image: ArrayLike, fn_name: str) -> jax.Array:
    """ONE image as ``(C, H, W)``; errors for people for a batch or a wrong number of channels."""
    image = jnp.asarray(image)
    channels = params[0][0].shape[1]  # W of the first layer: (C_out, C_in, kh, kw)
    side = math.isqrt(image.shape[0]) if image.ndim == 1 else 0
    if image.ndim == 1 and side * side == image.shape[0] and channels == 1:
        image = image.reshape(side, side)  # a flattened square image, as load_dataset stores it
    if image.ndim == 2 and channels == 1:
        image = image[None]  # (1, H, W)
    if image.ndim != 3 or image.shape[0] != channels:
        hint = ("Use batched_predict_cnn for a batch." if image.ndim >= 3
                else "Pass one image, e.g. x[0].")
        raise InputError(f"{fn_name} takes ONE image of shape ({channels}, H, W)"
                         f"{' or (H, W), or a flattened square (H*W,)' if channels == 1 else ''};"
                         f" got {tuple(image.shape)}. {hint}")
    return image


def predict_cnn(params: Params, image: ArrayLike) -> jax.Array:
    """Log-probabilities of each class for ONE image.

    Each convolutional layer (a 4-D ``W``) is conv -> relu -> 2x2 max-pool; the maps are then
    flattened in ``(C, H, W)`` order and the dense layers (2-D ``W``) are an MLP's
    (:func:`~nn_from_scratch.predict`). The maps are kept channels last, ``(H, W, C)``
    (:func:`conv_layer_hwc`): the same numbers as ``conv_layer`` and ``vmap(max_pool)``
    on ``(C, H, W)``, faster to train.

    Args:
      params: list of ``(W, b)`` from :func:`init_cnn_params`: convolutions first
        (``W: (C_out, C_in, kh, kw)``), then dense layers (``W: (n_out, n_in)``).
      image: ONE image, ``(H, W)`` or ``(1, H, W)``, or flattened ``(H*W,)`` as the data
        sets store it (e.g. ``(784,)`` for a 28x28 digit); ``(C, H, W)`` with C channels.

    Returns:
      ``(n_classes,)`` log-probabilities.
    """
    x = _as_image(params, image, "predict_cnn").transpose(1, 2, 0)  # (H, W, C): channels last
    convs = [(w, b) for w, b in params if jnp.ndim(w) == 4]
    for w, b in convs:
        x = max_pool(relu(conv_layer_hwc(x, w, b)))  # (oh // 2, ow // 2, C_out)
    x = x.transpose(2, 0, 1)  # (C, H, W): the dense layer reads the maps one after another
    dense = params[len(convs):]
    features = x.size  # C * H * W after the last pooling
    if features != dense[0][0].shape[1]:
        raise InputError(
            f"predict_cnn: an image of shape {tuple(jnp.shape(image))} leaves {x.shape} = "
            f"{features} features after the convolutions, but the first dense layer takes "
            f"{dense[0][0].shape[1]}. Make the network for these images: "
            f"init_cnn_params(key, image_shape=...).")
    return predict(dense, x.ravel())


_vmapped_predict_cnn = vmap(predict_cnn, in_axes=(None, 0))


def batched_predict_cnn(params: Params, images: ArrayLike) -> jax.Array:
    """``predict_cnn`` for a batch: ``vmap(predict_cnn, in_axes=(None, 0))``.

    Args:
      params: as for :func:`predict_cnn`.
      images: ``(batch, H, W)``, ``(batch, C, H, W)`` or flattened ``(batch, H*W)``.

    Returns:
      ``(batch, n_classes)`` log-probabilities; row ``i`` is ``predict_cnn(params, images[i])``.
    """
    if jnp.ndim(images) < 2:
        raise InputError(f"batched_predict_cnn takes a batch of images, (batch, H, W) or "
                         f"(batch, H*W); got {jnp.shape(images)}. Use predict_cnn for one "
                         f"image, or add a batch axis with x[None].")
    return _vmapped_predict_cnn(params, images)


def init_cnn_params(key: jax.Array, image_shape: Sequence[int] = (28, 28),
                    channels: Sequence[int] = (16, 32), kernel_size: int = 3,
                    hidden: Sequence[int] = (), num_classes: int = 10) -> Params:
    """He-scaled parameters of a CNN: convolutions (each conv -> relu -> pool), then dense layers.

    A convolution's filter is a dense layer's row whose inputs are one window's
    ``C_in * kh * kw`` pixels, so each is drawn as :func:`random_layer_params` with that
    fan-in and reshaped; the dense layers are an MLP's. One key per layer, split from ``key``.

    Args:
      key: a PRNG key.
      image_shape: ``(H, W)`` or ``(C, H, W)`` of one image, e.g. ``(28, 28)``.
      channels: filters per convolutional layer, e.g. ``(16, 32)``.
      kernel_size: side of every (square) kernel.
      hidden: widths of dense layers between the convolutions and the output (may be empty).
      num_classes: outputs of the last layer.

    Returns:
      ``[(W, b), ...]``: ``W: (C_out, C_in, k, k)``, ``b: (C_out,)`` per convolution, then
      ``W: (n_out, n_in)``, ``b: (n_out,)`` per dense layer. For the defaults: 28 -> conv 26
      -> pool 13 -> conv 11 -> pool 5, so the dense layer takes 32 * 5 * 5 = 800 features.
    """
    check_key(key)
    k = check_positive_int(kernel_size, "kernel_size")
    shape = tuple(image_shape)
    c_in, h, w = (1, *shape) if len(shape) == 2 else shape
    convs, dense = [c_in, *channels], [*hidden, num_classes]
    keys = random.split(key, len(convs) - 1 + len(dense))
    params: Params = []
    for (m, n), layer_key in zip(zip(convs[:-1], convs[1:]), keys):
        fan_in = m * k * k  # a window: m channels of k x k pixels
        weights, bias = random_layer_params(fan_in, n, layer_key, layer_scale(fan_in, n, "he"))
        params.append((weights.reshape(n, m, k, k), bias))
        h, w = conv_output_size(h, k) // POOL, conv_output_size(w, k) // POOL
        if min(h, w) < 1:
            raise InputError(f"an image of {shape} is too small for {len(channels)} {k}x{k} "
                             f"convolutions, each followed by {POOL}x{POOL} pooling: nothing "
                             f"is left after layer {len(params)}. Use fewer convolutions "
                             f"(channels), a smaller kernel_size, or larger images.")
    sizes = [convs[-1] * h * w, *dense]
    for (m, n), layer_key in zip(zip(sizes[:-1], sizes[1:]), keys[len(convs) - 1:]):
        params.append(random_layer_params(m, n, layer_key, layer_scale(m, n, "he")))
    return params
