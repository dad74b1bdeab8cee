"""Lesson 11's checkers: each accepts the reference, says "not done" to the stub, and catches
the typical mistakes with a hint that names the fix."""
import contextlib

import jax
import jax.numpy as jnp
import numpy as np
from conftest import assert_result, stub
from jax import lax

from nn_from_scratch import loss, update
from nn_from_scratch.exercises import pmap as check
from nn_from_scratch.exercises._calls import fresh_inputs
from nn_from_scratch.parallel import AXIS, data_parallel_step, shard_batch


def test_shard():
    def shard(x, n):  # the lesson's answer, as a student writes it
        if len(x) % n:
            raise ValueError(f"a batch of {len(x)} does not split evenly over {n} devices")
        return x.reshape(n, len(x) // n, *x.shape[1:])
    assert_result(check.shard(shard), "passed")
    assert_result(check.shard(shard_batch), "failed", "library's own shard_batch")
    assert_result(check.shard(stub), "not done")
    # reshape alone refuses an uneven batch, but with NumPy's ValueError or JAX's TypeError
    # and a message about reshaping: the exercise asks for a ValueError that says why
    # (NumPy's error names 30 numbers and the shape (4, 2, 3), not the batch of 10)
    assert_result(check.shard(lambda x, n: x.reshape(n, -1, *x.shape[1:])), "failed",
                  "NumPy array", "raised ValueError", "Say why", "batch (10)")
    assert_result(check.shard(lambda x, n: jnp.reshape(x, (n, x.shape[0] // n, *x.shape[1:]))),
                  "failed", "raised ValueError", "Say why")
    assert_result(check.shard(lambda x, n: jnp.asarray(x).reshape(n, -1, *x.shape[1:])),
                  "failed", "raised TypeError", "raise a ValueError")

    def raises_a_string(x, n):  # `raise "..."` is itself a TypeError
        if x.shape[0] % n:
            raise f"a batch of {x.shape[0]} does not split evenly over {n} devices"
        return shard_batch(x, n)
    assert_result(check.shard(raises_a_string), "failed", "TypeError", "ValueError")
    assert_result(check.shard(lambda x, n: x.reshape(x.shape[0] // n, n, *x.shape[1:])),
                  "failed", "leading axis must be the devices")
    assert_result(check.shard(lambda x, n: x.reshape(-1, n, *x.shape[1:]).swapaxes(0, 1)),
                  "failed", "dealt out like cards")
    assert_result(check.shard(lambda x, n: x.reshape(n, -1)), "failed", "own shape")

    def drops_rows(x, n):
        k = x.shape[0] // n
        return x[: n * k].reshape(n, k, *x.shape[1:])
    assert_result(check.shard(drops_rows), "failed", "do not split evenly", "ValueError")

    def says_nothing(x, n):  # a walk: a ValueError that does not say why
        if x.shape[0] % n:
            raise ValueError("bad")
        return x.reshape(n, x.shape[0] // n, *x.shape[1:])
    assert_result(check.shard(says_nothing), "failed", "Say why", "batch (10) and n (4)")

    def says_only_n(x, n):
        if x.shape[0] % n:
            raise ValueError(f"the batch must split over n = {n} devices")
        return x.reshape(n, x.shape[0] // n, *x.shape[1:])
    assert_result(check.shard(says_only_n), "failed", "Say why")

    def typed_sizes(x, n):  # right for the three written cases' sizes only
        if x.shape[0] % n:
            raise ValueError(f"a batch of {x.shape[0]} does not split evenly over {n} devices")
        return x.reshape(*{12: (4, 3), 8: (2, 4), 6: (3, 2)}[len(x)], *x.shape[1:])
    assert check.shard(typed_sizes).status == "failed"
    for seed in (1, 2, 3):
        with fresh_inputs(seed):
            assert check.shard(typed_sizes).status == "failed"
            assert_result(check.shard(shard), "passed")

    def reshape_with_len(x, n):  # another right answer: the numbers in words of its own
        if len(x) % n != 0:
            raise ValueError(f"{len(x)} rows / {n} devices: not a whole number per device")
        return np.reshape(x, (n, -1) + tuple(x.shape[1:]))
    assert_result(check.shard(reshape_with_len), "passed")


def test_device_key():
    def reference(key):
        return jax.random.fold_in(key, lax.axis_index(AXIS))
    assert_result(check.device_key(reference), "passed", "SPMD")
    assert_result(check.device_key(stub), "not done")

    def split_version(key):  # also right: split into one key per device, take mine
        return jax.random.split(key, lax.psum(1, AXIS))[lax.axis_index(AXIS)]
    assert_result(check.device_key(split_version), "passed")

    def raw_keys(key):  # also right: old-style uint32 keys
        return jax.random.fold_in(jax.random.key_data(key), lax.axis_index(AXIS))
    assert_result(check.device_key(raw_keys), "passed")
    assert_result(check.device_key(lambda key: key), "failed", "same key", "fold_in")
    assert_result(check.device_key(lambda key: jax.random.split(key)[0]), "failed", "same key")
    assert_result(check.device_key(
        lambda key: jax.random.fold_in(key, lax.axis_index(AXIS) // 2)), "failed",
        "some devices got the same key")
    assert_result(check.device_key(
        lambda key: jax.random.fold_in(key, lax.axis_index("i"))), "failed", "axis name", "AXIS")
    assert_result(check.device_key(lambda key: lax.axis_index(AXIS)), "failed", "ONE key")

    def first_keeps_it(key):
        index = lax.axis_index(AXIS)
        folded = jax.random.key_data(jax.random.fold_in(key, index))
        data = jnp.where(index == 0, jax.random.key_data(key), folded)
        return jax.random.wrap_key_data(data)
    assert_result(check.device_key(first_keeps_it), "failed", "device 0 returned the key")


def reference_grads(params, x, y):
    return lax.pmean(jax.grad(loss)(params, x, y), AXIS)


def test_data_parallel_grads():
    assert_result(check.data_parallel_grads(reference_grads), "passed")
    assert_result(check.data_parallel_grads(stub), "not done")
    assert_result(check.data_parallel_grads(lambda p, x, y: jax.grad(loss)(p, x, y)), "failed",
                  "its own slice", "lax.pmean")
    assert_result(check.data_parallel_grads(
        lambda p, x, y: jax.grad(lambda q: lax.pmean(loss(q, x, y), AXIS))(p)), "failed",
        "its own slice")
    assert_result(check.data_parallel_grads(
        lambda p, x, y: lax.psum(jax.grad(loss)(p, x, y), AXIS)), "failed", "4x too big", "pmean")
    assert_result(check.data_parallel_grads(
        lambda p, x, y: lax.pmean(jax.grad(loss)(p, x, y), "devices")), "failed", "AXIS")
    assert_result(check.data_parallel_grads(lambda p, x, y: lax.pmean(loss(p, x, y), AXIS)),
                  "failed", "list of (dW, db)")
    assert_result(check.data_parallel_grads(  # JAX's NotImplementedError: no derivative of pmax
        lambda p, x, y: jax.grad(lambda q: lax.pmax(loss(q, x, y), AXIS))(p)), "failed",
        "lax.pmean instead")


def test_simulated_update():
    step = data_parallel_step
    assert_result(check.simulated_update(
        jax.vmap(step, in_axes=(0, 0, 0, None), axis_name=AXIS)), "passed")
    assert_result(check.simulated_update(...), "not done")
    assert_result(check.simulated_update(stub), "not done")
    assert_result(check.simulated_update(jax.vmap(step, in_axes=(0, 0, 0, None))), "failed",
                  "axis_name=AXIS")
    assert_result(check.simulated_update(
        jax.vmap(update, in_axes=(0, 0, 0, None), axis_name=AXIS)), "failed",
        "different parameters", "data_parallel_step")
    assert_result(check.simulated_update(
        jax.vmap(step, in_axes=(None, 0, 0, None), axis_name=AXIS)), "failed",
        "leading device axis")

    def one_update_copied(params, x, y, step_size):  # a second walk: no vmap, the same numbers
        p = jax.tree.map(lambda t: t[0], params)  # for params that are the same everywhere
        new = update(p, x.reshape(-1, x.shape[-1]), y.reshape(-1, y.shape[-1]), step_size)
        return jax.tree.map(lambda t: jnp.stack([t] * x.shape[0]), new)
    assert_result(check.simulated_update(one_update_copied), "failed", "its own copy",
                  "with vmap")
    assert_result(check.simulated_update(jax.pmap(step, in_axes=(0, 0, 0, None), axis_name=AXIS)),
                  "failed", "more than this machine has", "jax.vmap(..., axis_name=AXIS)")
    assert_result(check.simulated_update(
        jax.vmap(step, in_axes=(0, 0, 0, None), out_axes=None, axis_name=AXIS)), "failed",
        "out_axes=None", "one per device")

    def vmapped_by_hand(params, x, y, step_size):  # right: the same map, written as a def
        return jax.vmap(lambda p, xs, ys: data_parallel_step(p, xs, ys, step_size),
                        axis_name=AXIS)(params, x, y)
    assert_result(check.simulated_update(vmapped_by_hand), "passed")


def test_checks_do_not_depend_on_the_device_count():
    assert jax.device_count() == 4 and check.DEVICES == 4  # conftest simulates 4; vmap needs none
    x = np.zeros((8, 2))
    assert shard_batch(x, 4).shape == (4, 2, 2)


def test_a_device_count_or_step_size_written_as_a_number_fails():
    """A student's walk of lesson 11: every check simulated 4 devices and stepped by 0.1, so
    % 4, split(key, 8), / 4 and a typed 0.1 passed."""
    def index_mod_4(key):
        return jax.random.fold_in(key, lax.axis_index(AXIS) % 4)

    def eight_keys(key):
        return jax.random.split(key, 8)[lax.axis_index(AXIS)]

    def sum_over_4(p, x, y):
        return jax.tree.map(lambda t: t / 4, lax.psum(jax.grad(loss)(p, x, y), AXIS))

    def step_of_0_1(params, x, y, step_size):
        return jax.vmap(data_parallel_step, in_axes=(0, 0, 0, None), axis_name=AXIS)(
            params, x, y, 0.1)
    assert check.device_key(index_mod_4).status == "failed"
    assert check.device_key(eight_keys).status == "failed"
    assert check.data_parallel_grads(sum_over_4).status == "failed"
    assert check.simulated_update(step_of_0_1).status == "failed"


def test_a_width_or_local_batch_written_as_a_number_fails():
    """The audit of issue 36: 11.3 and 11.4 used one network (6, 5, 3) and 3 examples per
    device in every case, so an answer written for them passed; each case now draws its own."""
    def three_examples(p, x, y):  # the lesson's local batch, typed
        return lax.pmean(jax.grad(loss)(p, x[:3], y[:3]), AXIS)

    def six_inputs(params, x, y, step_size):
        return jax.vmap(lambda p, xs, ys: data_parallel_step(
            p, xs.reshape(-1, 6), ys, step_size), axis_name=AXIS)(params, x, y)
    for seed in (None, 1, 2):
        with fresh_inputs(seed) if seed else contextlib.nullcontext():
            assert check.data_parallel_grads(three_examples).status == "failed"
            assert check.simulated_update(six_inputs).status == "failed"
            assert check.data_parallel_grads(reference_grads).status == "passed"
    for number in (116, 117):
        cases = check._networks(number, (4, 6, 10))
        for column in (0, 1, -1):
            assert len({sizes[column] for sizes, _local in cases}) == 3, cases
        assert [len(sizes) for sizes, _local in cases] == [3, 4, 3], cases  # depths
        assert len({local for _sizes, local in cases}) == 3, cases
        assert all(local != devices for (_sizes, local), devices in zip(cases, (4, 6, 10)))


def test_the_librarys_own_and_a_list_of_shards_fail():
    """A student's walk of lesson 11: pmap_update handed in for 11.4 (its __name__ is
    data_parallel_step's), shard_batch behind a def and np.split's list for 11.1 passed."""
    from nn_from_scratch.parallel import pmap_update
    assert_result(check.simulated_update(pmap_update), "failed", "library's own")
    assert_result(check.shard(lambda x, n: shard_batch(x, n)), "failed", "calls the library's")
    assert_result(check.shard(lambda x, n: np.split(x, n)), "failed", "ONE array")


def test_simulated_update_jitted_by_the_student_with_a_static_step_size():
    """Walk 11: the student's own jit with static_argnums=3 met the check's jit, which traced
    the step size: JAX's raw "Non-hashable static arguments"."""
    assert_result(check.simulated_update(jax.jit(jax.vmap(
        data_parallel_step, in_axes=(0, 0, 0, None), axis_name=AXIS), static_argnums=3)),
        "passed")


def test_two_layers_unpacked_fail_with_a_hint():
    """Walk 11: 11.3 used networks of one depth, so a loss that unpacks two layers passed."""
    def two_layers(p, x, y):
        def own_loss(q):
            (w1, b1), (w2, b2) = q
            logits = jax.nn.relu(x @ w1.T + b1) @ w2.T + b2
            return -jnp.mean(jnp.sum(y * jax.nn.log_softmax(logits), axis=-1))
        return lax.pmean(jax.grad(own_loss)(p), AXIS)
    assert_result(check.data_parallel_grads(two_layers), "failed", "for w, b in params")
