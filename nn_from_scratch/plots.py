"""Pictures for the lessons: image grids, training curves, timing bars, contours, and how a
convolution's window slides (and what im2col makes of it).

Every function draws with matplotlib and returns the ``Figure`` (a notebook
shows it). Given a ``path``, it saves the figure there and closes it, so a loop
that saves many figures does not pile up open ones. Nothing here needs a screen.
"""
import unicodedata
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure

from .i18n import _, pgettext
from .timing import format_seconds
from .train import History

__all__ = ["contour", "image_grid", "plot_history", "timing_bars", "window_diagram"]


def _finish(fig: Figure, path: str | Path | None, layout: bool = True) -> Figure:
    if layout:
        fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=100)
        plt.close(fig)
    return fig


def image_grid(images: Any, labels: Sequence[Any] | None = None,
               image_shape: Sequence[int] | None = None, ncols: int = 8,
               title: str | None = None, path: str | Path | None = None,
               signed: bool = False) -> Figure:
    """Show images in a grid.

    Args:
      images: ``(n, H, W)``, ``(n, H, W, C)`` or flattened ``(n, H*W)`` with ``image_shape``.
      labels: optional ``n`` captions (numbers or strings).
      image_shape: ``(H, W)`` to unflatten rows of ``images``.
      ncols: images per row.
      title: optional figure title.
      path: save the figure here (and close it) if given.
      signed: draw every image on ONE colour scale centred on 0 (blue negative, red
        positive, white 0, with a colour bar), so that values compare across images, as
        for kernels; by default each grey image is scaled on its own.
    """
    images = np.asarray(images)
    if image_shape is not None:
        images = images.reshape(len(images), *image_shape)
    n = len(images)
    nrows = max(1, -(-n // ncols))
    # a caption must fit over its image: a wider cell for long ones (a CJK character, which
    # East Asian fonts draw twice as wide as a Latin letter, counts twice)
    longest = max((sum(1 + (unicodedata.east_asian_width(c) in "WF") for c in str(label))
                   for label in ([] if labels is None else labels)), default=0)
    width = max(1.3, 0.085 * longest)
    fig, axes = plt.subplots(nrows, ncols, figsize=(width * ncols, 1.4 * nrows), squeeze=False)
    limit = (float(np.max(np.abs(images))) or 1.0) if signed else 0.0  # the shared half-width
    shown = None
    for i, ax in enumerate(axes.flat):
        ax.axis("off")
        if i < n:
            if signed:
                shown = ax.imshow(images[i], cmap="RdBu_r", vmin=-limit, vmax=limit)
            else:
                ax.imshow(images[i], cmap="gray" if images[i].ndim == 2 else None)
            if labels is not None:
                ax.set_title(str(labels[i]), fontsize=9)
    if title:
        fig.suptitle(title)
    if shown is None:
        return _finish(fig, path)
    fig.tight_layout()  # before the colour bar, which tight_layout cannot place
    fig.colorbar(shown, ax=axes.ravel().tolist(), shrink=0.8)
    return _finish(fig, path, layout=False)


def plot_history(history: History | Mapping[str, History],
                 path: str | Path | None = None) -> Figure:
    """Loss and accuracy per epoch from ``fit``, side by side.

    Args:
      history: one :class:`~nn_from_scratch.train.History` (train and validation
        curves), or ``{label: History}`` to compare runs (validation curves).
      path: save the figure here (and close it) if given.
    """
    fig, (ax_loss, ax_acc) = plt.subplots(1, 2, figsize=(10, 3.5))
    if isinstance(history, History):
        curves = {_("train"): (history, "train"), _("val"): (history, "val")}
    else:
        curves = {label: (h, "val") for label, h in history.items()}
    for label, (h, split) in curves.items():
        epochs = np.arange(1, h.epochs + 1)
        ax_loss.plot(epochs, getattr(h, f"{split}_loss"), marker=".", label=label)
        ax_acc.plot(epochs, getattr(h, f"{split}_accuracy"), marker=".", label=label)
    one = isinstance(history, History)
    ax_loss.set(xlabel=_("epoch"), ylabel=_("cross-entropy loss"),
                title=_("Loss") if one else _("Loss (validation)"))
    ax_acc.set(xlabel=_("epoch"), ylabel=pgettext("axis", "accuracy"),
               title=_("Accuracy") if one else _("Accuracy (validation)"))
    for ax in (ax_loss, ax_acc):
        ax.grid(alpha=0.3)
        ax.legend()
    return _finish(fig, path)


def timing_bars(times: Mapping[str, float], unit: str = "s", title: str | None = None,
                log: bool | None = None, path: str | Path | None = None) -> Figure:
    """Horizontal bars for ``{name: seconds}`` (or any ``{name: value}`` with ``unit``).

    Args:
      times: the values to draw, in order, top to bottom.
      unit: printed after each value and on the axis.
      title: the figure's title (default: "Time per call", in the reader's language).
      log: a logarithmic axis; ``None`` (default) uses one when the values span
        more than 20×, so that a 1 ms bar is still visible beside a 1 s one.
      path: save the figure here (and close it) if given.
    """
    names, values = list(times), np.array([times[name] for name in times], dtype=float)
    if log is None:
        log = bool(values.min() > 0 and values.max() / values.min() > 20)
    fig, ax = plt.subplots(figsize=(7, 0.5 + 0.5 * len(names)))
    bars = ax.barh(names, values, color="tab:blue")
    to_seconds = {"s": 1.0, "ms": 1e-3, "µs": 1e-6}.get(unit)
    labels = [format_seconds(v * to_seconds) if to_seconds else f"{v:.3g} {unit}".strip()
              for v in values]  # times get a unit each: "1.84 µs" rather than "0.00184 ms"
    ax.bar_label(bars, labels=labels, padding=3)
    ax.invert_yaxis()
    if log:
        ax.set_xscale("log")
        ax.set_xlim(values.min() / 2, values.max() * 10)  # room for the labels
    else:
        ax.set_xlim(0, values.max() * 1.4)
    ax.set(xlabel=_("{unit} (log scale)").format(unit=unit) if log else unit,
           title=_("Time per call") if title is None else title)
    return _finish(fig, path)


def contour(xs: Any, ys: Any, zs: Any, title: str | None = None,
            path: str | Path | None = None) -> Figure:
    """Filled contour of ``zs: (len(xs), len(ys))`` over the grid ``xs × ys`` (lesson 06)."""
    fig, ax = plt.subplots(figsize=(5, 4))
    filled = ax.contourf(np.asarray(xs), np.asarray(ys), np.asarray(zs).T, levels=20)
    fig.colorbar(filled, ax=ax)
    ax.set(xlabel="x", ylabel="y", title=title)
    return _finish(fig, path)


def window_diagram(image: Any, kernel: Any, output: Any, patches: Any, at: tuple[int, int],
                   path: str | Path | None = None) -> Figure:
    """One step of a convolution, and the same step as im2col's matrix product.

    Four panels: the image with the window at ``at = (i, j)`` outlined; the kernel; the
    output with pixel ``(i, j)`` outlined (the window times the kernel, summed); and the
    patches, one row per window, with row ``i * ow + j`` outlined: that row dotted with the
    flattened kernel is the same pixel.

    Args:
      image: ``(H, W)``.
      kernel: ``(kh, kw)``.
      output: ``(oh, ow)``, the convolution of ``image`` with ``kernel``.
      patches: ``(oh * ow, kh * kw)``, one window per row, in the order of ``output.ravel()``.
      at: the window's top-left corner ``(i, j)``.
      path: save the figure here (and close it) if given.
    """
    from matplotlib.patches import Rectangle

    image, kernel, output, patches = (np.asarray(a) for a in (image, kernel, output, patches))
    (i, j), (kh, kw), ow = at, kernel.shape, output.shape[1]
    fig, axes = plt.subplots(1, 4, figsize=(13, 3.6),
                             gridspec_kw={"width_ratios": [3, 1.2, 3, 1.6]})
    panels = ((image, _("image {shape}: the window at ({i}, {j})").format(
                   shape=image.shape, i=i, j=j), (j, i, kw, kh)),
              (kernel, _("kernel {shape}").format(shape=kernel.shape), None),
              (output, _("output {shape}: pixel ({i}, {j})").format(shape=output.shape, i=i, j=j),
               (j, i, 1, 1)),
              (patches, _("patches {shape}: row {row}").format(shape=patches.shape,
                                                               row=i * ow + j),
               (0, i * ow + j, patches.shape[1], 1)))
    for ax, (values, title, box) in zip(axes, panels):
        ax.imshow(values, cmap="gray", aspect="auto" if values is patches else "equal",
                  interpolation="nearest")
        ax.set_title(title, fontsize=9)
        ax.set_xticks([])
        ax.set_yticks([])
        if box is not None:
            x, y, width, height = box
            ax.add_patch(Rectangle((x - 0.5, y - 0.5), width, height, fill=False,
                                   edgecolor="red", linewidth=2))
    fig.suptitle(_("A convolution: each output pixel is one window times the kernel, summed; "
                   "im2col puts every window in a row"), fontsize=10)
    return _finish(fig, path)
