"""Pictures for the lessons: image grids, training curves, timing bars, contours.

Every function draws with matplotlib, returns the ``Figure`` (a notebook shows
it) and saves it to ``path`` when one is given. Nothing here needs a screen.
"""

import matplotlib.pyplot as plt
import numpy as np


def _finish(fig, path):
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=100)
    return fig


def image_grid(images, labels=None, image_shape=None, ncols=8, title=None, path=None):
    """Show images in a grid.

    Args:
      images: ``(n, H, W)``, ``(n, H, W, C)`` or flattened ``(n, H*W)`` with ``image_shape``.
      labels: optional ``n`` captions (numbers or strings).
      image_shape: ``(H, W)`` to unflatten rows of ``images``.
      ncols: images per row.
      title: optional figure title.
      path: save the figure here if given.
    """
    images = np.asarray(images)
    if image_shape is not None:
        images = images.reshape(len(images), *image_shape)
    n = len(images)
    nrows = max(1, -(-n // ncols))
    fig, axes = plt.subplots(nrows, ncols, figsize=(1.3 * ncols, 1.4 * nrows), squeeze=False)
    for i, ax in enumerate(axes.flat):
        ax.axis("off")
        if i < n:
            ax.imshow(images[i], cmap="gray" if images[i].ndim == 2 else None)
            if labels is not None:
                ax.set_title(str(labels[i]), fontsize=9)
    if title:
        fig.suptitle(title)
    return _finish(fig, path)


def plot_history(history, path=None):
    """Loss and accuracy per epoch from a ``fit`` history, side by side."""
    epochs = np.arange(1, len(history["train_loss"]) + 1)
    fig, (ax_loss, ax_acc) = plt.subplots(1, 2, figsize=(10, 3.5))
    for split in ("train", "test"):
        ax_loss.plot(epochs, history[f"{split}_loss"], marker=".", label=split)
        ax_acc.plot(epochs, history[f"{split}_accuracy"], marker=".", label=split)
    ax_loss.set(xlabel="epoch", ylabel="cross-entropy loss", title="Loss")
    ax_acc.set(xlabel="epoch", ylabel="accuracy", title="Accuracy")
    for ax in (ax_loss, ax_acc):
        ax.grid(alpha=0.3)
        ax.legend()
    return _finish(fig, path)


def timing_bars(times, unit="s", title="Time per call", path=None):
    """Horizontal bars for ``{name: seconds}`` (or any ``{name: value}`` with ``unit``)."""
    names, values = list(times), [times[name] for name in times]
    fig, ax = plt.subplots(figsize=(7, 0.5 + 0.5 * len(names)))
    bars = ax.barh(names, values, color="tab:blue")
    ax.bar_label(bars, labels=[f"{v:.3g} {unit}" for v in values], padding=3)
    ax.invert_yaxis()
    ax.set(xlabel=unit, title=title)
    ax.set_xlim(0, max(values) * 1.25)
    return _finish(fig, path)


def contour(xs, ys, zs, title=None, path=None):
    """Filled contour of ``zs: (len(xs), len(ys))`` over the grid ``xs × ys`` (lesson 04)."""
    fig, ax = plt.subplots(figsize=(5, 4))
    filled = ax.contourf(np.asarray(xs), np.asarray(ys), np.asarray(zs).T, levels=20)
    fig.colorbar(filled, ax=ax)
    ax.set(xlabel="x", ylabel="y", title=title)
    return _finish(fig, path)
