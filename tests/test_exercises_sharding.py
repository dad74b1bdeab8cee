"""Lesson 12's checkers: each accepts the reference, says "not done" to the stub, and catches
the typical mistakes with a hint that names the fix. conftest simulates 4 devices."""
import jax
import numpy as np
import pytest
from conftest import assert_result, stub
from jax import lax
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from nn_from_scratch import loss
from nn_from_scratch.exercises import sharding as check
from nn_from_scratch.parallel import AXIS, data_parallel_mesh


def place(spec):
    return lambda x, mesh: jax.device_put(x, NamedSharding(mesh, spec))


def test_shard_columns():
    assert jax.device_count() == 4
    assert_result(check.shard_columns(place(P(None, AXIS))), "passed", "4 devices", "columns")
    assert_result(check.shard_columns(stub), "not done")
    assert_result(check.shard_columns(place(P())), "failed", "whole", "P(None, AXIS)")
    assert_result(check.shard_columns(place(P(AXIS))), "failed", "split along axis 0",
                  "columns, axis 1")
    assert_result(check.shard_columns(lambda x, mesh: x), "failed", "not a jax.Array",
                  "device_put")
    assert_result(check.shard_columns(lambda x, mesh: jax.device_put(x)), "failed",
                  "lives on 1 device")


def reference_grads(params, x, y):
    return jax.grad(lambda p: lax.pmean(loss(p, x, y), AXIS))(params)


@pytest.mark.parametrize("wrong", [
    lambda p, x, y: jax.grad(loss)(p, x, y),  # no collective at all
    lambda p, x, y: lax.pmean(jax.grad(loss)(p, x, y), AXIS),  # lesson 11's pmap idiom
    lambda p, x, y: jax.grad(lambda q: lax.psum(loss(q, x, y), AXIS))(p),
])
def test_per_device_grads_summed(wrong):
    assert_result(check.per_device_grads(wrong), "failed", "4x too big", "pmean(loss(p, x, y)")


def test_per_device_grads():
    assert_result(check.per_device_grads(reference_grads), "passed", "check_vma=True")
    assert_result(check.per_device_grads(stub), "not done")
    assert_result(check.per_device_grads(
        lambda p, x, y: jax.grad(lambda q: lax.pmean(loss(q, x, y), "i"))(p)), "failed",
        "named an axis the mesh does not have", "AXIS")
    assert_result(check.per_device_grads(lambda p, x, y: lax.pmean(loss(p, x, y), AXIS)),
                  "failed", "list of (dW, db)")
    # a student's walk: JAX has no derivative of pmax, and says so with a NotImplementedError,
    # which is a wrong answer's, not the stub's "not done"
    assert_result(check.per_device_grads(
        lambda p, x, y: jax.grad(lambda q: lax.pmax(loss(q, x, y), AXIS))(p)), "failed",
        "lax.pmean instead")


def test_process_rows():
    def reference(batch, index, count):
        return np.array_split(batch, count)[index]
    assert_result(check.process_rows(reference), "passed")
    assert_result(check.process_rows(stub), "not done")
    assert_result(check.process_rows(lambda batch, i, n: batch), "failed", "whole batch")
    assert_result(check.process_rows(lambda batch, i, n: batch[i::n]), "failed",
                  "like cards", "consecutive")
    assert_result(check.process_rows(lambda batch, i, n: np.array_split(batch, n)[n - 1 - i]),
                  "failed", "i-th of")
    assert_result(check.process_rows(lambda batch, i, n: batch[: len(batch) // n]), "failed",
                  "each row once")


def shard_weights_with(w_spec, b_spec):
    def shard_weights(params, mesh):
        return [(jax.device_put(w, NamedSharding(mesh, w_spec)),
                 jax.device_put(b, NamedSharding(mesh, b_spec))) for w, b in params]
    return shard_weights


def test_shard_weights():
    assert check.mesh_2d().shape == {AXIS: 2, check.MODEL: 2}
    assert_result(check.shard_weights(shard_weights_with(P(None, check.MODEL), P())), "passed",
                  "same step")
    assert_result(check.shard_weights(stub), "not done")

    def pytree_of_shardings(params, mesh):  # also right: device_put takes a pytree of shardings
        w, b = NamedSharding(mesh, P(None, "model")), NamedSharding(mesh, P())
        return jax.device_put(params, [(w, b)] * len(params))
    assert_result(check.shard_weights(pytree_of_shardings), "passed")
    assert_result(check.shard_weights(shard_weights_with(P(), P())), "failed", "nothing is split",
                  "P(None, 'model')")
    assert_result(check.shard_weights(shard_weights_with(P(None, AXIS), P())), "failed",
                  "the batch's mesh axis", "P(None, 'model')")
    assert_result(check.shard_weights(shard_weights_with(P(None, (AXIS, "model")), P())),
                  "failed", "every device of the mesh")
    assert_result(check.shard_weights(shard_weights_with(P("model"), P())), "failed",
                  "does not divide evenly", "along 'model'")
    assert_result(check.shard_weights(shard_weights_with(P(None, "model"), P("model"))),
                  "failed", "does not divide evenly", "b whole")
    assert_result(check.shard_weights(shard_weights_with(P(None, "models"), P())), "failed",
                  "'data' and 'model'")
    assert_result(check.shard_weights(lambda params, mesh: params), "failed", "not a jax.Array")
    assert_result(check.shard_weights(lambda params, mesh: [(jax.device_put(w), b)
                                                            for w, b in params]),
                  "failed", "lives on 1 device")


def test_the_whole_machine_written_into_an_answer_fails():
    """A student's walk of lesson 12: each check used every device, so an answer that ignored
    the mesh it was handed (a mesh of every device, the lesson's mesh_2d) or divided by the
    device count written as a number passed; each check now also runs on half the devices."""
    everything = data_parallel_mesh()

    def global_mesh(x, mesh):
        return jax.device_put(x, NamedSharding(everything, P(None, AXIS)))

    def the_lessons_mesh_2d(params, mesh):
        whole = check.mesh_2d()
        return [(jax.device_put(w, NamedSharding(whole, P(None, "model"))),
                 jax.device_put(b, NamedSharding(whole, P()))) for w, b in params]
    count = jax.device_count()

    def divided_by_the_count(p, x, y):
        summed = jax.grad(lambda q: lax.psum(loss(q, x, y), AXIS))(p)
        return jax.tree.map(lambda t: t / count, summed)
    assert check.shard_columns(global_mesh).status == "failed"
    assert check.shard_weights(the_lessons_mesh_2d).status == "failed"
    assert check.per_device_grads(divided_by_the_count).status == "failed"


def test_a_mesh_axis_the_mesh_lacks_gets_a_hint():
    """A student's walk: P(None, "model") on lesson 12's 1-D mesh ended in JAX's 'Resource
    axis: model ... not found in mesh'."""
    def model_axis(x, mesh):
        return jax.device_put(x, NamedSharding(mesh, P(None, "model")))
    assert_result(check.shard_columns(model_axis), "failed", "its one axis is AXIS")


def test_a_mesh_of_ones_own_is_told_to_use_the_mesh_it_was_handed():
    """A second walk: an answer that built a mesh of every device, ignoring the one it was
    handed, was told it split another way."""
    def own_mesh(x, mesh):
        return jax.device_put(x, NamedSharding(data_parallel_mesh(), P(None, AXIS)))
    assert_result(check.shard_columns(own_mesh), "failed", "not on the mesh it was handed")


def test_audit_process_rows_on_batches_of_other_sizes():
    """The fixed-shapes audit: the batch always had 24 rows, so 24 // count typed in passed."""
    def typed(batch, index, count):
        k = 24 // count
        return batch[index * k:(index + 1) * k]
    assert check.process_rows(typed).status == "failed"


def test_a_width_or_batch_written_as_a_number_fails():
    """The audit of issue 36: 12.2 and 12.4 used one network (16, 8, 3) in every case and
    12.2 three examples per device, so answers written for them passed; each case now draws
    its own sizes."""
    import contextlib

    from nn_from_scratch.exercises._calls import fresh_inputs

    def three_per_device(p, x, y):
        return jax.grad(lambda q: lax.pmean(loss(q, x[:3], y[:3]), AXIS))(p)

    def split_the_lessons_widths(params, mesh):  # split W only where it has 16 or 8 columns
        return [(jax.device_put(w, NamedSharding(mesh, P(None, check.MODEL) if w.shape[1] in (
            16, 8) else P())), jax.device_put(b, NamedSharding(mesh, P()))) for w, b in params]
    for seed in (None, 1, 2):
        with fresh_inputs(seed) if seed else contextlib.nullcontext():
            assert check.per_device_grads(three_per_device).status == "failed"
            assert check.shard_weights(split_the_lessons_widths).status == "failed"
            assert check.per_device_grads(reference_grads).status == "passed"
            for split in (False, True):
                (first, local), (second, other) = check._cases(121 + split, split=split)
                assert all(a != b for a, b in zip(first + [local], second + [other]))
                assert not split or (first[0] % 8 == first[1] % 8 == 0 and first[2] % 2)


def test_two_layers_unpacked_fail_with_a_hint():
    """Walk 11: 12.2 used networks of one depth, so a loss that unpacks two layers passed."""
    def two_layers(p, x, y):
        def own_loss(q):
            (w1, b1), (w2, b2) = q
            logits = jax.nn.relu(x @ w1.T + b1) @ w2.T + b2
            return lax.pmean(-jax.numpy.mean(jax.numpy.sum(y * jax.nn.log_softmax(logits),
                                                           axis=-1)), AXIS)
        return jax.grad(own_loss)(p)
    assert_result(check.per_device_grads(two_layers), "failed", "for w, b in params")
