import socket
import time

import jax
import numpy as np
import pytest
import tensorflow_datasets as tfds

from nn_from_scratch import data as data_mod
from nn_from_scratch.data import batch_indices, load_dataset, load_mnist, synthetic_dataset


def test_digits_for_real(digits):
    assert digits.name == "digits" and digits.image_shape == (8, 8) and digits.num_classes == 10
    assert digits.x_train.shape == (1437, 64) and digits.x_test.shape == (360, 64)
    assert digits.x_train.dtype == np.float32 and digits.y_train.dtype == np.int32
    assert digits.x_train.min() == 0.0 and digits.x_train.max() == 1.0
    assert set(np.unique(digits.y_test)) == set(range(10))  # stratified split
    again = load_dataset("digits")
    np.testing.assert_array_equal(again.x_test, digits.x_test)  # fixed, seeded split


def test_mnist_path_through_tfds_mock():
    with tfds.testing.mock_data(num_examples=12):
        data = load_mnist()
    assert data.name == "mnist" and data.image_shape == (28, 28) and data.num_classes == 10
    assert data.x_train.shape == (12, 784) and data.x_test.shape == (12, 784)
    assert data.x_train.dtype == np.float32
    assert 0.0 <= data.x_train.min() and data.x_train.max() <= 1.0
    assert data.y_train.dtype == np.int32 and set(data.y_train) <= set(range(10))


def test_auto_uses_prepared_mnist(monkeypatch, capsys):
    monkeypatch.setattr(data_mod, "mnist_is_prepared", lambda data_dir=None: True)
    with tfds.testing.mock_data(num_examples=5):
        data = load_dataset("auto")
    assert data.name == "mnist"
    assert capsys.readouterr().out.strip() == "Dataset: mnist (MNIST is prepared locally)."


def test_auto_offline_falls_back_to_digits_at_once(capsys):
    start = time.perf_counter()
    data = load_dataset("auto")  # conftest sets NN_FROM_SCRATCH_OFFLINE
    assert time.perf_counter() - start < 5
    assert data.name == "digits"
    out = capsys.readouterr().out.strip().splitlines()
    assert out == ["Dataset: digits (MNIST is not prepared locally and "
                   "NN_FROM_SCRATCH_OFFLINE is set)."]


def test_auto_gives_up_on_a_hanging_network_within_the_timeout(monkeypatch, capsys):
    monkeypatch.delenv("NN_FROM_SCRATCH_OFFLINE")
    monkeypatch.setattr(data_mod, "MNIST_HOST", ("127.0.0.1", 9))
    def hang(*args, **kwargs):  # a network that never answers (until long after the timeout)
        time.sleep(10)
        raise OSError("timed out")
    monkeypatch.setattr(socket, "create_connection", hang)
    start = time.perf_counter()
    data = load_dataset("auto", timeout=1.0)
    assert time.perf_counter() - start < 4
    assert data.name == "digits"
    assert "127.0.0.1 cannot be reached (checked for at most 1 s)" in capsys.readouterr().out


def test_auto_falls_back_when_the_download_fails(monkeypatch, capsys):
    monkeypatch.setattr(data_mod, "choose_source", lambda data_dir, timeout: ("mnist", "test"))
    def broken(data_dir=None):
        raise ConnectionError("connection reset")
    monkeypatch.setattr(data_mod, "load_mnist", broken)
    assert load_dataset("auto").name == "digits"
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
    with pytest.raises(ValueError, match=r"Unknown dataset 'fashion'\. Valid names: auto, mnist, digits"):
        load_dataset("fashion")


def test_batch_indices_are_a_shuffled_partition():
    idx = batch_indices(jax.random.key(0), 10, 3)
    assert idx.shape == (3, 3)
    assert len(set(np.asarray(idx).ravel())) == 9  # no repeats; one example dropped
    assert not np.array_equal(idx, batch_indices(jax.random.key(1), 10, 3))
    np.testing.assert_array_equal(idx, batch_indices(jax.random.key(0), 10, 3))


@pytest.mark.parametrize("batch_size", [0, 11])
def test_batch_size_out_of_range(batch_size):
    with pytest.raises(ValueError, match=f"between 1 and the number of examples \\(10\\); got {batch_size}"):
        batch_indices(jax.random.key(0), 10, batch_size)


def test_synthetic_dataset_has_mnist_shapes():
    data = synthetic_dataset(jax.random.key(0), n_train=50, n_test=20)
    assert data.x_train.shape == (50, 784) and data.x_test.shape == (20, 784)
    assert data.num_features == 784 and data.name == "synthetic"
    assert data.y_train.dtype == np.int32 and data.y_train.max() < 10
    again = synthetic_dataset(jax.random.key(0), n_train=50, n_test=20)
    np.testing.assert_array_equal(data.x_train, again.x_train)
