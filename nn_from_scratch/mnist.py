"""Full MNIST's four files: where they live, fetching them once, and reading them with NumPy.

MNIST is published as four gzipped files in the IDX format, the same files
tensorflow-datasets downloads (from the same mirror): training images and
labels, test images and labels, about 11 MB in all. An IDX file is a small
header and then the numbers, row by row:

    bytes 0-1   0, 0
    byte  2     the type of the numbers (0x08: unsigned bytes, as in MNIST)
    byte  3     how many dimensions, d
    then        d sizes, each a big-endian 32-bit integer: (60000, 28, 28) for the images
    then        the numbers themselves

so reading one is ``np.frombuffer`` and a ``reshape``: no TensorFlow, no tfds.
"""
import gzip
import hashlib
import os
import socket
import threading
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

import numpy as np

from .i18n import N_, _

__all__ = ["DATA_ENV", "FILES", "MNIST_HOST", "MNIST_URL", "data_dir", "download", "is_prepared",
           "read_idx", "read_mnist", "why_unreachable"]

MNIST_URL = "https://storage.googleapis.com/cvdf-datasets/mnist/"  # tfds's mirror
MNIST_HOST = ("storage.googleapis.com", 443)
DATA_ENV = "NN_FROM_SCRATCH_DATA"  # where the files go (default ~/.cache/nn_from_scratch)
# name -> SHA-256, as tensorflow-datasets records them (url_checksums/mnist.txt)
FILES = {
    "train-images-idx3-ubyte.gz":
        "440fcabf73cc546fa21475e81ea370265605f56be210a4024d2ca8f203523609",
    "train-labels-idx1-ubyte.gz":
        "3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c",
    "t10k-images-idx3-ubyte.gz":
        "8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6",
    "t10k-labels-idx1-ubyte.gz":
        "f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6",
}
# the IDX type byte -> NumPy's type (big-endian where it has more than one byte)
IDX_TYPES = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}


def data_dir(folder: str | Path | None = None) -> Path:
    """The folder holding the four files: ``folder``, else ``$NN_FROM_SCRATCH_DATA/mnist``,
    else ``~/.cache/nn_from_scratch/mnist``."""
    if folder is not None:
        return Path(folder).expanduser()
    root = os.environ.get(DATA_ENV) or Path.home() / ".cache" / "nn_from_scratch"
    return Path(root).expanduser() / "mnist"


def is_prepared(folder: str | Path | None = None) -> bool:
    """True when all four files are in :func:`data_dir` (so no network is needed)."""
    return all((data_dir(folder) / name).is_file() for name in FILES)


def read_idx(path: str | Path) -> np.ndarray:
    """The array in an IDX file (gzipped or not), e.g. ``(60000, 28, 28)`` uint8 for images.

    Raises:
      ValueError: the file is not IDX (its first bytes are quoted), or is cut short.
    """
    path = Path(path)
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":  # gzip's magic number
        raw = gzip.decompress(raw)
    if len(raw) < 4 or raw[:2] != b"\0\0" or raw[2] not in IDX_TYPES:
        raise ValueError(f"{path.name} is not an IDX file: it starts with {raw[:4]!r}, where IDX "
                         f"starts with 0, 0, a type byte ({', '.join(map(hex, IDX_TYPES))}) and "
                         f"the number of dimensions. Delete it and fetch MNIST again.")
    ndim = raw[3]
    shape = tuple(int(n) for n in np.frombuffer(raw, ">u4", count=ndim, offset=4))
    dtype = np.dtype(IDX_TYPES[raw[2]])
    expected = 4 + 4 * ndim + int(np.prod(shape)) * dtype.itemsize
    if len(raw) != expected:
        raise ValueError(f"{path.name} holds {len(raw):,} bytes; its header {shape} of "
                         f"{dtype.name} promises {expected:,}. The file is damaged or cut short: "
                         f"delete it and fetch MNIST again.")
    values = np.frombuffer(raw, dtype, offset=4 + 4 * ndim)  # big-endian, as stored
    return values.astype(dtype.newbyteorder("=")).reshape(shape)  # in the machine's order


def read_mnist(folder: str | Path | None = None) -> tuple[np.ndarray, ...]:
    """``(x_train (60000, 784), y_train (60000,), x_test (10000, 784), y_test (10000,))``:
    pixels float32 in [0, 1], labels int32, read from :func:`data_dir`."""
    where = data_dir(folder)
    arrays = []
    for split in ("train", "t10k"):
        images = read_idx(where / f"{split}-images-idx3-ubyte.gz")  # (n, 28, 28) uint8
        labels = read_idx(where / f"{split}-labels-idx1-ubyte.gz")  # (n,) uint8
        if len(images) != len(labels):
            raise ValueError(f"MNIST's {split} files disagree: {len(images)} images and "
                             f"{len(labels)} labels in {where}. Delete them and fetch again.")
        arrays += [images.reshape(len(images), -1).astype(np.float32) / 255.0,
                   labels.astype(np.int32)]
    return tuple(arrays)


def download(folder: str | Path | None = None, timeout: float = 30.0,
             url: str = MNIST_URL) -> Path:
    """Fetch the files not yet in :func:`data_dir` (about 11 MB), checking each one's SHA-256;
    each is written whole or not at all. Returns the folder.

    Raises:
      OSError: a file could not be fetched, or what came is not the file tfds recorded.
    """
    where = data_dir(folder)
    where.mkdir(parents=True, exist_ok=True)
    for name, sha256 in FILES.items():
        target = where / name
        if target.is_file():
            continue
        with urllib.request.urlopen(url + name, timeout=timeout) as response:
            body = response.read()
        if hashlib.sha256(body).hexdigest() != sha256:
            raise OSError(f"{url}{name} sent {len(body):,} bytes that are not MNIST's file "
                          f"(SHA-256 differs); nothing was kept. Try again later.")
        partial = target.with_name(f".{name}.{os.getpid()}.part")
        try:
            partial.write_bytes(body)
            partial.replace(target)  # atomic: a reader sees the whole file or none
        finally:
            partial.unlink(missing_ok=True)  # a full disk leaves no half file behind
    return where


def why_unreachable(address: tuple[str, int], timeout: float,
                    say: Callable[[str], str] = _) -> str | None:
    """``None`` if a TCP connection to ``address`` opens within ``timeout`` seconds; otherwise
    why not and after how long: "no answer within 5 s", or the error and the moment it came
    ("Connection refused, after 0.01 s"). ``say`` translates it (``_``, the default: the
    language messages are in; ``str`` for an error, which stays English).

    Runs in a daemon thread because DNS look-ups ignore socket time-outs: a dead
    network must cost us ``timeout`` seconds, never minutes.
    """
    result: list[OSError | None] = []
    start = time.perf_counter()

    def attempt() -> None:
        try:
            socket.create_connection(address, timeout=timeout).close()
            result.append(None)
        except OSError as err:
            result.append(err)

    thread = threading.Thread(target=attempt, daemon=True)
    thread.start()
    thread.join(timeout)
    if not result:
        return say(N_("no answer within {timeout:g} s")).format(timeout=timeout)
    if result[0] is None:
        return None
    error = result[0]
    return say(N_("{error}, after {seconds:.2f} s")).format(
        error=getattr(error, "strerror", None) or type(error).__name__,
        seconds=time.perf_counter() - start)
