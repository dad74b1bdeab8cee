import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import assert_trees_close
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from nn_from_scratch import InputError, fit, init_network_params, one_hot, update
from nn_from_scratch.parallel import (
    MultiprocessResult,
    data_parallel_mesh,
    load_result,
    pmap_update,
    replicate,
    run_multiprocess,
    save_result,
    shard_batch,
    shard_map_update,
    simulate_cpu_devices,
    train_data_parallel,
    unreplicate,
)

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


def test_jit_of_the_ordinary_update_on_sharded_inputs_matches_single_device(setup):
    params, x, y, expected = setup
    mesh = data_parallel_mesh()
    split, replicated = NamedSharding(mesh, P("data")), NamedSharding(mesh, P())
    out = jax.jit(update)(jax.device_put(params, replicated), jax.device_put(x, split),
                          jax.device_put(y, split), 0.1)
    assert out[0][0].sharding.is_fully_replicated
    assert_trees_close(out, expected)


def test_shard_map_step_with_check_vma_matches_single_device(setup):
    params, x, y, expected = setup
    assert_trees_close(shard_map_update(data_parallel_mesh())(params, x, y, 0.1), expected)


def test_training_on_4_devices_matches_1(digits):
    kwargs = dict(steps=5, batch_size=64, step_size=0.1, key=jax.random.key(0))
    one, losses_one = train_data_parallel(digits, [64, 16, 10],
                                          mesh=data_parallel_mesh(jax.devices()[:1]), **kwargs)
    four, losses_four = train_data_parallel(digits, [64, 16, 10], mesh=data_parallel_mesh(),
                                            **kwargs)
    assert_trees_close(four, one)
    np.testing.assert_allclose(losses_four, losses_one, rtol=1e-5)


def test_data_parallel_training_reshuffles_every_epoch_exactly_as_fit_does(digits):
    steps_per_epoch = len(digits.x_train) // 256
    key = jax.random.key(5)
    params, losses = train_data_parallel(digits, [64, 16, 10], steps=2 * steps_per_epoch,
                                         batch_size=256, step_size=0.1, key=key,
                                         mesh=data_parallel_mesh(), init="glorot")
    init_key, fit_key = jax.random.split(key)
    expected, _ = fit(init_network_params([64, 16, 10], init_key, init="glorot"), digits,
                      epochs=2, batch_size=256, step_size=0.1, key=fit_key, mode="jit")
    assert_trees_close(params, expected)
    assert losses.shape == (2 * steps_per_epoch,)


def test_two_processes_on_localhost_agree_with_one(digits):
    result = run_multiprocess(2, steps=12, batch_size=128, sizes=(64, 16, 10), init="glorot",
                              timeout=120)
    assert isinstance(result, MultiprocessResult)
    single, losses = train_data_parallel(digits, [64, 16, 10], steps=12, batch_size=128,
                                         step_size=0.1, key=jax.random.key(0), init="glorot",
                                         mesh=data_parallel_mesh(jax.devices()[:1]))
    assert "process 1 of 2" in result.output and "process 0 of 2" in result.output
    assert_trees_close(result.params, single)
    np.testing.assert_allclose(result.losses, losses, rtol=1e-5)


def test_worker_results_are_saved_with_names(tmp_path):
    params = [(np.ones((3, 2)), np.zeros(3)), (np.full((1, 3), 2.0), np.ones(1))]
    save_result(tmp_path / "r.npz", params, np.arange(4.0))
    assert sorted(np.load(tmp_path / "r.npz").files) == ["W0", "W1", "b0", "b1", "losses"]
    loaded, losses = load_result(tmp_path / "r.npz")
    assert_trees_close(loaded, params)
    np.testing.assert_array_equal(losses, np.arange(4.0))


def test_uneven_batch_is_refused():
    with pytest.raises(InputError, match="a batch of 10 does not split evenly over 4 devices"):
        shard_batch(jnp.zeros((10, 3)), 4)


def test_too_late_to_simulate_devices():
    simulate_cpu_devices(N_DEV)  # the count it already has: fine
    with pytest.raises(RuntimeError, match=r"Cannot simulate 8 CPU devices: JAX's backend already "
                                           r"started with 4 CPU device\(s\).*restart the kernel"):
        simulate_cpu_devices(8)
