import jax
import jax.numpy as jnp
import numpy as np
import pytest

from nn_from_scratch import init_network_params, one_hot, update
from nn_from_scratch.parallel import (data_parallel_mesh, pmap_update, replicate, run_multiprocess,
                                      shard_batch, shard_map_update, simulate_cpu_devices,
                                      train_data_parallel, unreplicate)
from nn_from_scratch.train import jit_sgd_step
from jax.sharding import NamedSharding, PartitionSpec as P

from conftest import assert_trees_close

N_DEV = 4  # conftest simulates 4 CPU devices


@pytest.fixture
def setup(digits):
    params = init_network_params([64, 32, 10], jax.random.key(0), init="he")
    x, y = digits.x_train[:128], np.asarray(one_hot(digits.y_train[:128], 10))
    return params, x, y, update(params, x, y, 0.1)  # the single-device reference step


def test_there_are_simulated_devices():
    assert jax.device_count() == N_DEV


def test_pmap_step_matches_single_device(setup):
    params, x, y, expected = setup
    out = pmap_update(replicate(params, N_DEV), shard_batch(x, N_DEV), shard_batch(y, N_DEV), 0.1)
    for leaf in jax.tree.leaves(out):  # identical on every device
        assert leaf.shape[0] == N_DEV
        for d in range(1, N_DEV):
            np.testing.assert_array_equal(leaf[d], leaf[0])
    assert_trees_close(unreplicate(out), expected)


def test_sharded_jit_step_matches_single_device(setup):
    params, x, y, expected = setup
    mesh = data_parallel_mesh()
    split, replicated = NamedSharding(mesh, P("data")), NamedSharding(mesh, P())
    out, _ = jit_sgd_step(jax.device_put(params, replicated), jax.device_put(x, split),
                          jax.device_put(y, split), 0.1)
    assert out[0][0].sharding.is_fully_replicated
    assert_trees_close(out, expected)


def test_shard_map_step_matches_single_device(setup):
    params, x, y, expected = setup
    assert_trees_close(shard_map_update(data_parallel_mesh())(params, x, y, 0.1), expected)


def test_training_on_4_devices_matches_1(digits):
    kwargs = dict(steps=5, batch_size=64, step_size=0.1, key=jax.random.key(0))
    one, losses_one = train_data_parallel(digits, [64, 16, 10], mesh=data_parallel_mesh(jax.devices()[:1]), **kwargs)
    four, losses_four = train_data_parallel(digits, [64, 16, 10], mesh=data_parallel_mesh(), **kwargs)
    assert_trees_close(four, one)
    np.testing.assert_allclose(losses_four, losses_one, rtol=1e-5)


def test_two_processes_on_localhost_agree_with_one(digits):
    result = run_multiprocess(2, steps=10, batch_size=64, sizes=(64, 16, 10), timeout=120)
    single, losses = train_data_parallel(digits, [64, 16, 10], steps=10, batch_size=64,
                                         step_size=0.1, key=jax.random.key(0),
                                         mesh=data_parallel_mesh(jax.devices()[:1]))
    assert "process 1 of 2" in result["output"] and "process 0 of 2" in result["output"]
    assert_trees_close(result["params"], single)
    np.testing.assert_allclose(result["losses"], losses, rtol=1e-5)


def test_uneven_batch_is_refused():
    with pytest.raises(ValueError, match="a batch of 10 does not split evenly over 4 devices"):
        shard_batch(jnp.zeros((10, 3)), 4)


def test_too_late_to_simulate_devices():
    simulate_cpu_devices(N_DEV)  # the count it already has: fine
    with pytest.raises(RuntimeError, match=r"Cannot simulate 8 CPU devices: JAX's backend already "
                                           r"started with 4 CPU device\(s\).*restart the kernel"):
        simulate_cpu_devices(8)
