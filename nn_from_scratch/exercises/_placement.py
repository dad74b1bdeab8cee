"""Lesson 12's arrays where the student's code put them: meshes made, pieces described, there.

Where each piece of a placed array lives is a property of the process that placed
it (its devices: the lesson simulates 8). So the sharding checks make their mesh
where the student's code runs, and read back, as plain data, where every piece of
each array landed (:func:`placement`); a step of training on the placed
parameters runs there too. Like :mod:`._fixtures`, nothing here decides anything.
"""
from typing import Any

import numpy as np

__all__ = ["Kept", "mesh_shape", "mesh_size", "named_layout", "placement", "placing",
           "shard_mapped", "step_on_mesh"]


class Kept:
    """An object that stays where it was made: ``.value``. (Handed back to the grader, it is a
    handle to the object, not a copy: a placed array stays placed.)"""

    def __init__(self, value: Any) -> None:
        self.value = value


def placement(value: Any) -> dict[str, Any]:
    """Where the pieces of ``value`` live, as plain data: ``array`` (is it a jax.Array),
    ``type``, ``value`` (its numbers), ``pieces`` (each addressable shard's shape and
    ``(start, stop)`` per axis) and ``layout`` (``{device id: ((start, stop), ...)}``)."""
    import jax

    if not isinstance(value, jax.Array):
        return {"array": False, "type": type(value).__name__, "value": None, "pieces": [],
                "layout": {}}
    shape = value.shape

    def bounds(index: Any) -> tuple[tuple[int, int], ...]:
        return tuple(tuple(part.indices(size)[:2]) for part, size in zip(index, shape))

    return {"array": True, "type": type(value).__name__, "value": np.asarray(value),
            "pieces": [(tuple(s.data.shape), bounds(s.index)) for s in value.addressable_shards],
            "layout": {int(device.id): bounds(index)  # type: ignore[attr-defined]
                       for device, index in value.sharding.devices_indices_map(shape).items()}}


def placing(fn: Any, tree: bool = False) -> Any:
    """``fn``, returning ``(Kept(its output), [placement of each leaf])`` (one leaf, the
    output itself, unless ``tree``)."""
    import functools

    import jax

    @functools.wraps(fn)
    def described(*args: Any) -> tuple[Kept, list[dict[str, Any]]]:
        out = fn(*args)
        leaves = jax.tree.leaves(out) if tree else [out]
        return Kept(out), [placement(leaf) for leaf in leaves]
    return described


def half_of_the_devices() -> list[Any]:
    """The first half of JAX's devices (at least 2): a mesh of them is another size than the
    whole machine's, so that a count or a mesh of the whole machine written into an answer
    shows (a student's walk of lesson 12: ``/ 8``, a global mesh, the lesson's ``mesh_2d``)."""
    import jax

    devices = jax.devices()
    return devices[:max(2, len(devices) // 2)]


def half_count() -> int:
    """How many devices :func:`half_of_the_devices` has."""
    return len(half_of_the_devices())


def half_mesh() -> Any:
    """A 1-D mesh, axis ``AXIS``, over :func:`half_of_the_devices`."""
    from ..parallel import data_parallel_mesh

    return data_parallel_mesh(half_of_the_devices())


def shard_mapped(fn: Any, half: bool = False) -> Any:
    """``jax.jit(jax.shard_map(fn, ...))`` over ``data_parallel_mesh()`` (or :func:`half_mesh`):
    the params whole on every device (``P()``), x and y split along AXIS, one result for all
    (``P()``)."""
    import jax
    from jax.sharding import PartitionSpec as P

    from ..parallel import AXIS, data_parallel_mesh

    return jax.jit(jax.shard_map(fn, mesh=half_mesh() if half else data_parallel_mesh(),
                                 in_specs=(P(), P(AXIS), P(AXIS)), out_specs=P()))


def mesh_size(mesh: Any) -> int:
    return int(mesh.size)


def mesh_device_ids(mesh: Any) -> list[int]:
    """The ids of the devices of ``mesh``."""
    return sorted(int(device.id) for device in mesh.devices.flat)


def mesh_shape(mesh: Any) -> dict[str, int]:
    return {str(name): int(size) for name, size in mesh.shape.items()}


def named_layout(mesh: Any, spec: tuple, shape: tuple[int, ...]) -> Any:
    """The ``layout`` (:func:`placement`) that ``NamedSharding(mesh, PartitionSpec(*spec))``
    gives an array of ``shape``, or None if it cannot place one (a split that does not
    divide)."""
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    try:
        index_map = NamedSharding(mesh, P(*spec)).devices_indices_map(tuple(shape))
    except Exception:
        return None
    return {int(device.id): tuple(tuple(part.indices(size)[:2])  # type: ignore[attr-defined]
                                  for part, size in zip(index, shape))
            for device, index in index_map.items()}


def step_on_mesh(mesh: Any) -> Any:
    """``step(kept, x, y, step_size)``: ``jax.jit(update)`` on the params in ``kept`` as they
    are placed, with x and y split along AXIS over ``mesh``; the new params' leaves."""
    import jax
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    from ..epoch import update
    from ..parallel import AXIS

    def step(kept: Kept, x: Any, y: Any, step_size: float) -> list[Any]:
        rows = NamedSharding(mesh, P(AXIS))
        new = jax.jit(update)(kept.value, jax.device_put(x, rows), jax.device_put(y, rows),
                              step_size)
        return [np.asarray(leaf) for leaf in jax.tree.leaves(new)]
    return step
