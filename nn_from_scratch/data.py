"""Data: MNIST through tensorflow-datasets, scikit-learn's bundled digits, and batching.

Every loader returns a :class:`Dataset` of NumPy arrays: images flattened to
``(n, pixels)`` float32 in ``[0, 1]`` and integer labels ``(n,)``. Inputs in
``[0, 1]`` rather than ``[0, 255]`` keep the first layer's outputs small, so
the initial loss is sensible and one step size suits every layer (lesson 06).
"""
import importlib.util
import os
import socket
import threading
from dataclasses import dataclass

import numpy as np
from jax import random

from .params import check_key

DATASETS = ("auto", "mnist", "digits")
# tfds downloads MNIST from here; "auto" checks that it answers before trying.
MNIST_HOST = ("storage.googleapis.com", 443)
OFFLINE_ENV = "NN_FROM_SCRATCH_OFFLINE"


@dataclass(frozen=True)
class Dataset:
    """Train and test arrays plus what a reader needs to know about them.

    Attributes:
      x_train: ``(n_train, pixels)`` float32 in ``[0, 1]``.
      y_train: ``(n_train,)`` int32 class labels.
      x_test: ``(n_test, pixels)`` float32 in ``[0, 1]``.
      y_test: ``(n_test,)`` int32 class labels.
      image_shape: shape of one image before flattening, e.g. ``(28, 28)``.
      num_classes: number of classes (10 for digits).
      name: ``"mnist"`` or ``"digits"``.
      source: one line saying where the data came from.
    """

    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray
    image_shape: tuple
    num_classes: int
    name: str
    source: str

    @property
    def num_features(self):
        """Pixels per flattened image (784 for MNIST, 64 for digits)."""
        return self.x_train.shape[1]

    def __repr__(self):
        return (
            f"Dataset({self.name}: train {self.x_train.shape}, test {self.x_test.shape}, "
            f"images {self.image_shape}, {self.num_classes} classes; {self.source})"
        )


def load_digits(test_fraction=0.2, seed=0):
    """scikit-learn's 1,797 real 8×8 handwritten digits; bundled, so never a download.

    The train/test split is stratified and fixed by ``seed``: 1,437 train and
    360 test images with the defaults. Pixel values 0..16 are scaled to [0, 1].
    """
    from sklearn.datasets import load_digits as sk_load_digits
    from sklearn.model_selection import train_test_split

    digits = sk_load_digits()
    x = (digits.data / 16.0).astype(np.float32)  # (1797, 64)
    y = digits.target.astype(np.int32)  # (1797,)
    x_train, x_test, y_train, y_test = train_test_split(
        x, y, test_size=test_fraction, random_state=seed, stratify=y
    )
    return Dataset(x_train, y_train, x_test, y_test, (8, 8), 10, "digits",
                   "scikit-learn's bundled 8x8 digits (no download)")


def _split_to_arrays(split):
    """A tfds data source of ``{"image": (28, 28, 1) uint8, "label": int}`` -> arrays."""
    examples = [split[i] for i in range(len(split))]
    images = np.stack([ex["image"] for ex in examples])  # (n, 28, 28, 1) uint8
    labels = np.array([ex["label"] for ex in examples], dtype=np.int32)  # (n,)
    x = images.reshape(len(images), -1).astype(np.float32) / 255.0  # (n, 784) in [0, 1]
    return x, labels


def load_mnist(data_dir=None, download=True):
    """MNIST (60,000 train, 10,000 test 28×28 digits) via ``tfds.data_source``.

    Reading prepared data needs no TensorFlow; preparing it (the first time,
    about 11 MB downloaded) does, which is why requirements.txt installs
    ``tensorflow-cpu``. ``data_dir`` defaults to tfds's (``~/tensorflow_datasets``
    or ``$TFDS_DATA_DIR``).
    """
    import tensorflow_datasets as tfds

    train, test = tfds.data_source("mnist", split=["train", "test"], data_dir=data_dir,
                                   download=download)
    x_train, y_train = _split_to_arrays(train)
    x_test, y_test = _split_to_arrays(test)
    return Dataset(x_train, y_train, x_test, y_test, (28, 28), 10, "mnist",
                   "MNIST via tensorflow-datasets")


def mnist_is_prepared(data_dir=None):
    """True when MNIST is already prepared in the tfds data dir (no network needed)."""
    import tensorflow_datasets as tfds
    from absl import logging as absl_logging

    level = absl_logging.get_verbosity()
    absl_logging.set_verbosity(absl_logging.ERROR)  # tfds warns about every missing folder
    try:
        return tfds.builder("mnist", data_dir=data_dir).is_prepared()
    except Exception:  # a broken or unreadable data dir counts as "not prepared"
        return False
    finally:
        absl_logging.set_verbosity(level)


def _can_reach(address, timeout):
    """True if a TCP connection to ``address`` opens within ``timeout`` seconds.

    Runs in a daemon thread because DNS look-ups ignore socket time-outs: a dead
    network must cost us ``timeout`` seconds, never minutes.
    """
    result = []

    def attempt():
        try:
            socket.create_connection(address, timeout=timeout).close()
            result.append(True)
        except OSError:
            result.append(False)

    thread = threading.Thread(target=attempt, daemon=True)
    thread.start()
    thread.join(timeout)
    return bool(result and result[0])


def choose_source(data_dir=None, timeout=5.0):
    """Decide what ``"auto"`` loads: ``("mnist" | "digits", reason)`` in at most ``timeout`` s."""
    if mnist_is_prepared(data_dir):
        return "mnist", "MNIST is prepared locally"
    if os.environ.get(OFFLINE_ENV):
        return "digits", f"MNIST is not prepared locally and {OFFLINE_ENV} is set"
    if importlib.util.find_spec("tensorflow") is None:
        return "digits", "MNIST is not prepared locally and preparing it needs TensorFlow"
    if not _can_reach(MNIST_HOST, timeout):
        return "digits", (f"MNIST is not prepared locally and {MNIST_HOST[0]} cannot be reached "
                          f"(checked for at most {timeout:g} s)")
    return "mnist", "MNIST is not prepared yet; downloading it once (about 11 MB)"


def load_dataset(name="auto", data_dir=None, timeout=5.0, verbose=True):
    """Load a data set by name.

    Args:
      name: ``"mnist"``, ``"digits"`` or ``"auto"``. ``"auto"`` uses MNIST when it
        is prepared locally or can be fetched, and otherwise the bundled digits;
        it decides within ``timeout`` seconds and prints one line saying which
        and why. Set the environment variable ``NN_FROM_SCRATCH_OFFLINE=1`` to
        make ``"auto"`` skip the network check (for a class with no network).
      data_dir: tfds data directory for MNIST (default: tfds's own).
      timeout: seconds ``"auto"`` may spend checking the network.
      verbose: print the one-line decision of ``"auto"``.

    Returns:
      A :class:`Dataset`.
    """
    if name not in DATASETS:
        raise ValueError(
            f"Unknown dataset {name!r}. Valid names: {', '.join(DATASETS)} "
            f"('auto' uses MNIST when it can be had and the bundled digits otherwise)."
        )
    if name == "digits":
        return load_digits()
    if name == "mnist":
        return load_mnist(data_dir)
    choice, reason = choose_source(data_dir, timeout)
    if choice == "mnist":
        try:
            data = load_mnist(data_dir)
        except Exception as err:  # e.g. the download broke off half-way
            choice, reason = "digits", f"loading MNIST failed ({type(err).__name__}: {err})"
    if choice == "digits":
        data = load_digits()
    if verbose:
        print(f"Dataset: {data.name} ({reason}).")
    return data


def synthetic_dataset(key, n_train=60_000, n_test=10_000, image_shape=(28, 28), num_classes=10):
    """Random images and labels with MNIST's shapes, for measuring speed (nothing to learn).

    Args:
      key: PRNG key.
      n_train, n_test: numbers of examples (int).
      image_shape: ``(H, W)`` of one image; pixels are uniform in ``[0, 1]``.
      num_classes: labels are uniform in ``[0, num_classes)``.
    """
    check_key(key)
    pixels = int(np.prod(image_shape))
    kx, ky = random.split(key)
    x = np.asarray(random.uniform(kx, (n_train + n_test, pixels)))  # (n, pixels) float32
    y = np.asarray(random.randint(ky, (n_train + n_test,), 0, num_classes), dtype=np.int32)
    return Dataset(x[:n_train], y[:n_train], x[n_train:], y[n_train:], tuple(image_shape),
                   num_classes, "synthetic", "random MNIST-shaped data, for timing only")


def batch_indices(key, n, batch_size):
    """Shuffle ``range(n)`` with ``key`` and cut it into full batches.

    Args:
      key: PRNG key; a new key each epoch gives a new order.
      n: number of examples (int).
      batch_size: examples per batch (int); the last ``n % batch_size`` examples
        of the shuffled order are dropped so every batch has the same shape
        (one compiled program serves every step).

    Returns:
      ``(n // batch_size, batch_size)`` int32 indices.
    """
    check_key(key)
    if not 0 < batch_size <= n:
        raise ValueError(
            f"batch_size must be between 1 and the number of examples ({n}); got {batch_size}."
        )
    steps = n // batch_size
    perm = random.permutation(key, n)  # (n,)
    return perm[: steps * batch_size].reshape(steps, batch_size)
