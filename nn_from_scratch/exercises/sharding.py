"""Checkers for lesson 12, sharding and many processes: placement, shard_map, process-local rows.

The checkers run on whatever devices JAX has (the lesson simulates 8, the tests
4) over ``data_parallel_mesh()``, and size their inputs by the device count.
They know the usual mistakes: an array replicated or split along the wrong
axis, a gradient summed over devices under ``shard_map``'s ``check_vma=True``
(the ``pmap`` idiom, or no ``pmean`` at all), every process feeding the whole
batch, rows dealt out instead of cut into blocks, biases split with weights.
"""
from typing import Any

import jax
import numpy as np
from jax.sharding import PartitionSpec as P

from ..losses import loss
from ..parallel import AXIS, data_parallel_mesh
from ._core import Mistake, call, exercise, expect_close, expect_shape

LESSON = "12_sharding"
SIZES = [16, 8, 3]  # a small network whose weight columns (16, 8) split over 4 or 8 devices


_grad = jax.jit(jax.grad(loss))  # the reference: one compile, not one per operation


def _network(seed: int = 0) -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(seed)
    return [((rng.normal(size=(n, m)) * np.sqrt(2 / m)).astype(np.float32),
             (0.1 * rng.normal(size=n)).astype(np.float32))
            for m, n in zip(SIZES[:-1], SIZES[1:])]


def _batch(n: int, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """``x: (n, 16)`` and one-hot ``y: (n, 3)``."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, SIZES[-1], size=n)
    return (rng.uniform(size=(n, SIZES[0])).astype(np.float32),
            np.eye(SIZES[-1], dtype=np.float32)[labels])


def _placement(array: Any, what: str) -> list[tuple[tuple[int, ...], tuple[slice, ...]]]:
    """``(shape, index)`` of each device's piece of ``array``, a placed ``jax.Array``."""
    if not isinstance(array, jax.Array):
        raise Mistake(f"{what} is a {type(array).__name__}, not a jax.Array placed on the "
                      f"devices: use jax.device_put(x, NamedSharding(mesh, spec))")
    return [(tuple(s.data.shape), s.index) for s in array.addressable_shards]


def _expect_split(array: Any, full: np.ndarray, axis: int | None, what: str, fix: str) -> None:
    """``array`` holds ``full``, split over every device along ``axis`` (None: replicated)."""
    pieces = _placement(array, what)
    devices = jax.device_count()
    if len(pieces) < devices:
        raise Mistake(f"{what} lives on {len(pieces)} device(s), not on all {devices}: {fix}")
    if not np.array_equal(np.asarray(array), full):
        raise Mistake(f"{what} holds other values than the array you were given: only place it")
    replicated = all(shape == full.shape for shape, _ in pieces)
    if axis is None:
        if not replicated:
            raise Mistake(f"{what} is split (each device holds {pieces[0][0]} of {full.shape}); "
                          f"it should be whole on every device: {fix}")
        return
    if replicated:
        raise Mistake(f"every device holds the whole {what} {full.shape}: nothing is split. "
                      f"{fix}")
    want = list(full.shape)
    want[axis] //= devices
    for shape, _ in pieces:
        if shape != tuple(want):
            other = [a for a in range(full.ndim) if a != axis and shape[a] < full.shape[a]]
            where = f"axis {other[0]}" if other else "another way"
            raise Mistake(f"each device holds a {shape} piece of {what} {full.shape}, split "
                          f"along {where}; it should hold {tuple(want)}: {fix}")


@exercise(LESSON, 1, "shard_rows")
def shard_rows(student_fn: Any) -> str:
    devices = jax.device_count()
    mesh = data_parallel_mesh()
    x = np.arange(2 * devices * devices, dtype=np.float32).reshape(2 * devices, devices)
    what = f"shard_rows(x, mesh) for x of shape {x.shape}"
    got = call(student_fn, x, mesh, what=what)
    _expect_split(got, x, 0, what, "split the rows, axis 0, over the mesh axis: "
                                   "NamedSharding(mesh, P(AXIS))")
    rows = sorted(index[0].start for _, index in _placement(got, what))
    if rows != list(range(0, 2 * devices, 2)):
        raise Mistake(f"the devices hold rows starting at {rows}: each should hold its own "
                      f"2 consecutive rows")
    return f"each of the {devices} devices holds its own 2 consecutive rows of {x.shape}"


def _shard_map_grads(fn: Any, params: Any, x: np.ndarray, y: np.ndarray, what: str) -> Any:
    mapped = jax.jit(jax.shard_map(fn, mesh=data_parallel_mesh(),
                                   in_specs=(P(), P(AXIS), P(AXIS)), out_specs=P()))
    try:
        return call(mapped, params, x, y, what=what)
    except Mistake as err:
        if "unbound axis name" in str(err) or (isinstance(err.__cause__, AssertionError)
                                                and not str(err.__cause__)):
            # JAX 0.10 raises a bare AssertionError for a collective over an unknown axis here
            raise Mistake(f"{what} raised an error that, inside shard_map, usually means a "
                          f"collective named an axis the mesh does not have: the mesh axis is "
                          f"AXIS = {AXIS!r}") from None
        if "vma" in str(err) or "varying" in str(err) or "out_specs" in str(err):
            raise Mistake(f"{what} returned gradients that differ from device to device, but "
                          f"out_specs=P() promises one value for all: make the loss the same "
                          f"everywhere, lax.pmean(loss(p, x, y), AXIS), inside jax.grad"
                          ) from None
        raise


@exercise(LESSON, 2, "per_device_grads for shard_map")
def per_device_grads(student_fn: Any) -> str:
    devices = jax.device_count()
    params, (x, y) = _network(), _batch(3 * devices)
    what = f"per_device_grads in shard_map over {devices} devices"
    got = jax.tree.leaves(_shard_map_grads(student_fn, params, x, y, what))
    want = [np.asarray(a) for a in jax.tree.leaves(_grad(params, x, y))]
    if len(got) != len(want):
        raise Mistake(f"{what} should return the gradients as params does, a list of (dW, db) "
                      f"per layer: {len(want)} arrays; got {len(got)}")
    got = [expect_shape(g, w.shape, f"leaf {i} of the gradient")
           for i, (g, w) in enumerate(zip(got, want))]
    ratio = np.linalg.norm(got[0]) / np.linalg.norm(want[0])
    if devices > 1 and abs(ratio - devices) < 0.01 * devices:
        raise Mistake(f"the gradient is {devices}x too big: it is the SUM of the devices' "
                      f"gradients. With check_vma=True, the gradient with respect to the "
                      f"replicated params adds up every device's part, so average the LOSS "
                      f"over devices inside grad: jax.grad(lambda p: lax.pmean(loss(p, x, y), "
                      f"AXIS))(params). (A pmean of the gradients afterwards changes nothing: "
                      f"they are already the same everywhere; a psum of the loss adds.)")
    for i, (g, w) in enumerate(zip(got, want)):
        expect_close(g, w, f"leaf {i} of the gradient", hint="the gradient of the whole batch's "
                     "mean loss: lax.pmean(loss(p, x, y), AXIS) inside jax.grad")
    return f"the whole batch's gradient from {devices} devices, with check_vma=True"


@exercise(LESSON, 3, "process_rows")
def process_rows(student_fn: Any) -> str:
    batch = np.random.default_rng(3).permutation(1000)[:24]  # (24,) shuffled indices
    for count in (2, 3, 4):
        parts = []
        for index in range(count):
            what = f"process_rows(batch, {index}, {count}) for a batch of 24"
            parts.append(np.asarray(call(student_fn, batch, index, count, what=what)))
        if all(len(part) == len(batch) for part in parts):
            raise Mistake(f"every process took the whole batch: with {count} processes each row "
                          f"would be fed {count} times. Take this process's share only")
        want = np.split(batch, count)
        if all(np.array_equal(p, w) for p, w in zip(parts, want)):
            continue
        if all(np.array_equal(p, batch[i::count]) for i, p in enumerate(parts)):
            raise Mistake("the rows are dealt out like cards (process i takes rows i, i + n, "
                          "...): take consecutive blocks, process i the i-th of n, because the "
                          "global array puts process 0's rows first, then process 1's")
        together = np.sort(np.concatenate(parts)) if parts else np.array([])
        if not np.array_equal(together, np.sort(batch)):
            raise Mistake(f"with {count} processes, their rows together are not the batch, each "
                          f"row once: process i should take np.array_split(batch, n)[i]")
        raise Mistake(f"with {count} processes, process i should take the i-th of {count} "
                      f"consecutive blocks of the batch, in order")
    return "process i of n feeds the i-th consecutive block: together, the batch, each row once"


@exercise(LESSON, 4, "shard_weights")
def shard_weights(student_fn: Any) -> str:
    devices = jax.device_count()
    params = _network(4)
    what = f"shard_weights(params, mesh) over {devices} devices"
    try:
        placed = call(student_fn, params, data_parallel_mesh(), what=what)
    except Mistake as err:
        if "divide" in str(err) or "Indivisible" in str(err):
            raise Mistake(f"{what} asked for a split that does not divide evenly (the last "
                          f"layer has only {SIZES[-1]} outputs): split each W's columns, its "
                          f"{SIZES[0]} or {SIZES[1]} inputs, with P(None, AXIS), and keep each "
                          f"b whole, P()") from None
        raise
    leaves = jax.tree.leaves(placed)
    if len(leaves) != 2 * len(params):
        raise Mistake(f"{what} should return params of the same structure, [(W, b), ...]; got "
                      f"{len(leaves)} arrays for {len(params)} layers")
    for i, (w, b) in enumerate(params):
        placed_w, placed_b = leaves[2 * i], leaves[2 * i + 1]
        _expect_split(placed_w, w, 1, f"W of layer {i}",
                      "split each W's columns, its inputs (axis 1): "
                      "NamedSharding(mesh, P(None, AXIS))")
        _expect_split(placed_b, b, None, f"b of layer {i}",
                      "keep every b whole on every device: NamedSharding(mesh, P())")
    return (f"every W split by columns over {devices} devices (1/{devices} of it on each), "
            f"every b replicated")
