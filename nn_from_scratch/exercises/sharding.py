"""Checkers for lesson 12, sharding and many processes: placement, shard_map, process-local rows.

The checkers run on whatever devices JAX has where the student's code runs (the
lesson simulates 8, the tests 4) over ``data_parallel_mesh()``, or over a 2-D mesh
of them with the axes ``("data", "model")``, and size their inputs by the device
count. Meshes are made, arrays placed and read, where the student's code runs:
what comes back is a description of where each piece of an array lives
(:func:`._placement.placement`). They know the
usual mistakes: an array replicated or split along the wrong axis (or the wrong
mesh axis), a gradient summed over devices under ``shard_map``'s
``check_vma=True`` (the ``pmap`` idiom, or no ``pmean`` at all), every process
feeding the whole batch, rows dealt out instead of cut into blocks, biases split
with weights.
"""
from typing import Any

import jax
import numpy as np
from jax.sharding import Mesh

from ..i18n import N_, _
from ..parallel import AXIS, data_parallel_mesh
from . import _placement
from ._calls import call, generator, jittered, wrapped
from ._compare import as_array, expect_close, expect_shape, mlp_loss_and_grads
from ._core import Mistake, exercise
from ._draws import draw_sizes, labelled_batch, layer_sizes, network
from ._hints import NETWORK_SHAPES, NO_DERIVATIVE
from ._remote import beside

LESSON = "12_sharding"
MODEL = "model"  # the second axis of the 2-D mesh of exercise 12.4: 8 devices as 4 x 2


def _reference_grads(params: Any, x: np.ndarray, y: np.ndarray) -> list[np.ndarray]:
    """The leaves of ``grad(loss)(params, x, y)``, in NumPy: no compile for the reference."""
    return [a for layer in mlp_loss_and_grads(params, x, y)[1] for a in layer]


def mesh_2d(half: bool = False) -> Mesh:
    """The devices (or the first half of them) as a ``(devices // 2, 2)`` mesh with the axes
    ``("data", "model")``."""
    devices = np.array(_placement.half_of_the_devices() if half else jax.devices())
    if len(devices) % 2:
        raise Mistake(_("this check needs an even number of devices, for a mesh of "
                        "{AXIS!r} x {MODEL!r}; JAX has {len_devices}: run the lesson's "
                        "first cell first, in a fresh kernel").format(
                          AXIS=AXIS, MODEL=MODEL, len_devices=len(devices)))
    return Mesh(devices.reshape(-1, 2), (AXIS, MODEL))


def _cases(number: int, *, split: bool) -> list[tuple[list[int], int]]:
    """``(layer sizes [inputs, hidden..., classes], examples per data device)`` for a check's
    two meshes (all the devices, then half), drawn (:func:`draw_sizes` with
    ``generator(number)``): every size takes another value in each case, so that a width or a
    batch written as a number fails, and the second network has two hidden layers, the first
    one (an answer that unpacks two layers fails). ``split``: the widths whose columns 12.4
    splits are multiples of 8, so that they divide over the model axis and over a whole mesh
    of 8, 4 or 2 devices (a split over every device gets its own hint), and the classes odd,
    so that a split of the last layer's outputs cannot divide."""
    if split:
        return [([8 * s["inputs"], 8 * s["hidden"], *[8 * s["second"]][:i], 2 * s["classes"] + 1],
                 s["local"]) for i, s in enumerate(draw_sizes(
                    generator(number), 2, inputs=(2, 4), hidden=(1, 3), second=(1, 3),
                    classes=(1, 3), local=(1, 4), apart=False,
                    keep=lambda s: len({s["inputs"], s["hidden"], s["second"]}) == 3))]
    return [(layer_sizes(s, 1 + i), s["local"])
            for i, s in enumerate(draw_sizes(generator(number), 2, inputs=(5, 17),
                                             hidden=(3, 12), second=(3, 12), classes=(2, 6),
                                             local=(4, 8)))]


def _network(seed: int, sizes: list[int]) -> list[tuple[np.ndarray, np.ndarray]]:
    return network(generator(seed), sizes)


def _batch(n: int, sizes: list[int], seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """``x: (n, inputs)`` and one-hot ``y: (n, classes)``."""
    x, _labels, y = labelled_batch(generator(seed), (n,), sizes[0], sizes[-1])
    return x, y


def _pieces(leaf: dict[str, Any], what: str) -> list[tuple[tuple[int, ...], Any]]:
    """``(shape, index)`` of each device's piece of a placed array, from its description."""
    if not leaf["array"]:
        raise Mistake(_("{what} is a {name}, not a jax.Array placed on the devices: use "
                        "jax.device_put(x, NamedSharding(mesh, spec))").format(
                          what=what, name=leaf["type"]))
    return [(tuple(shape), index) for shape, index in leaf["pieces"]]


def _expect_on(leaf: dict[str, Any], mesh: Any, what: str) -> None:
    """The described array lives on the devices of ``mesh``, the one the answer was handed (a
    second walk: a mesh of every device built anew was told it split another way)."""
    ids = set(beside(mesh, _placement.mesh_device_ids, mesh))
    used = {int(device) for device in leaf["layout"]} if leaf["array"] else set()
    if used - ids:
        raise Mistake(_("{what} lives on devices {used}, not on the mesh it was handed "
                        "(devices {ids}): build the NamedSharding from the mesh argument, "
                        "not from a mesh of your own").format(
                            what=what, used=sorted(used), ids=sorted(ids)))


def _expect_split(leaf: dict[str, Any], full: np.ndarray, axis: int | None, devices: int,
                  what: str, fix: str) -> None:
    """The described array holds ``full``, split over every device along ``axis`` (None:
    replicated)."""
    pieces = _pieces(leaf, what)
    if len(pieces) < devices:
        raise Mistake(_("{what} lives on {len_pieces} device(s), not on all {devices}: "
                        "{fix}").format(
                          what=what, len_pieces=len(pieces), devices=devices, fix=fix))
    if not np.array_equal(np.asarray(leaf["value"]), full):
        raise Mistake(_("{what} holds other values than the array you were given: only "
                        "place it").format(what=what))
    replicated = all(shape == full.shape for shape, _unused in pieces)
    if axis is None:
        if not replicated:
            raise Mistake(_("{what} is split (each device holds {pieces} of {shape}); "
                            "it should be whole on every device: {fix}").format(
                              what=what, pieces=pieces[0][0], shape=full.shape, fix=fix))
        return
    if replicated:
        raise Mistake(_("every device holds the whole {what} {shape}: nothing is split; "
                        "{fix}").format(what=what, shape=full.shape, fix=fix))
    want = list(full.shape)
    want[axis] //= devices
    for shape, _unused in pieces:
        if shape != tuple(want):
            other = [a for a in range(full.ndim) if a != axis and shape[a] < full.shape[a]]
            where = _("axis {axis}").format(axis=other[0]) if other else _("another way")
            raise Mistake(_("each device holds a {shape} piece of {what} {shape2}, "
                            "split along {where}; it should hold {tuple_want}: {fix}").format(
                              shape=shape, what=what, shape2=full.shape, where=where,
                              tuple_want=tuple(want), fix=fix))


@exercise(LESSON, 1, "shard_columns")
def shard_columns(student_fn: Any) -> str:
    # a mesh of every device where the student's code runs, then of half of them
    return [_shard_columns(student_fn, beside(student_fn, make))
            for make in (data_parallel_mesh, _placement.half_mesh)][0]


def _shard_columns(student_fn: Any, mesh: Any) -> str:
    devices = beside(mesh, _placement.mesh_size, mesh)
    x = jittered(np.arange(2 * devices * devices, dtype=np.float32).reshape(devices,
                                                                              2 * devices),
                 120, 0.4)
    what = _("shard_columns(x, mesh) for x of shape {x_shape}").format(x_shape=x.shape)
    _kept, (got,) = call(wrapped(student_fn, _placement.placing), x, mesh, what=what, hints={
        ("not found in mesh", "Resource axis"): _(
            "{what} named a mesh axis that this mesh does not have: its one axis is AXIS = "
            "{AXIS!r}, P(None, AXIS)").format(what=what, AXIS=AXIS)})
    _expect_on(got, mesh, "x")
    _expect_split(got, x, 1, devices, "x", _("split the columns, axis 1, over the mesh axis: "
                                              "a PartitionSpec has one entry per array axis, "
                                              "NamedSharding(mesh, P(None, AXIS))"))
    columns = sorted(index[1][0] for _unused, index in _pieces(got, "x"))
    if columns != list(range(0, 2 * devices, 2)):
        raise Mistake(_("the devices hold columns starting at {columns}: each should "
                        "hold its own 2 consecutive columns").format(columns=columns))
    return _("each of the {devices} devices holds its own 2 consecutive columns of "
             "the test array of shape {shape}").format(devices=devices, shape=x.shape)


def _shard_map_grads(fn: Any, params: Any, x: np.ndarray, y: np.ndarray, what: str,
                     half: bool = False) -> Any:
    mapped = wrapped(fn, _placement.shard_mapped, half)
    try:
        return call(mapped, params, x, y, what=what, hints={**NO_DERIVATIVE, **NETWORK_SHAPES})
    except Mistake as err:
        if "unbound axis name" in str(err) or (isinstance(err.__cause__, AssertionError)
                                                and not str(err.__cause__)):
            # JAX 0.10 raises a bare AssertionError for a collective over an unknown axis here
            raise Mistake(_("{what} raised an error that, inside shard_map, usually "
                            "means a collective named an axis the mesh does not have: "
                            "the mesh axis is AXIS = {AXIS!r}").format(
                              what=what, AXIS=AXIS)) from None
        if "vma" in str(err) or "varying" in str(err) or "out_specs" in str(err):
            raise Mistake(_("{what} returned gradients that differ from device to "
                            "device, but out_specs=P() promises one value for all: make "
                            "the loss the same everywhere, lax.pmean(loss(p, x, y), "
                            "AXIS), inside jax.grad").format(what=what)
                          ) from None
        raise


@exercise(LESSON, 2, "per_device_grads for shard_map")
def per_device_grads(student_fn: Any) -> str:
    # over every device where the student's code runs, then over half of them
    everything = beside(student_fn, jax.device_count)
    half = beside(student_fn, _placement.half_count)
    return [_per_device_grads(student_fn, devices, devices != everything, sizes, local)
            for devices, (sizes, local) in zip((everything, half), _cases(121, split=False))][0]


def _per_device_grads(student_fn: Any, devices: int, half: bool, sizes: list[int],
                      local: int) -> str:
    params, (x, y) = _network(0, sizes), _batch(local * devices, sizes)
    what = _("per_device_grads in shard_map over {devices} devices").format(devices=devices)
    got = jax.tree.leaves(_shard_map_grads(student_fn, params, x, y, what, half))
    want = _reference_grads(params, x, y)
    if len(got) != len(want):
        raise Mistake(_("{what} should return the gradients as params does, a list of "
                        "(dW, db) per layer: {len_want} arrays; got {len_got}").format(
                          what=what, len_want=len(want), len_got=len(got)))
    got = [expect_shape(g, w.shape, _("leaf {i} of the gradient").format(i=i))
           for i, (g, w) in enumerate(zip(got, want))]
    ratio = np.linalg.norm(got[0]) / np.linalg.norm(want[0])
    if devices > 1 and abs(ratio - devices) < 0.01 * devices:
        raise Mistake(_("the gradient is {devices}x too big: it is the SUM of the "
                        "devices' gradients. With check_vma=True, the gradient with "
                        "respect to the replicated params adds up every device's part, "
                        "so average the LOSS over devices inside grad: jax.grad(lambda "
                        "p: lax.pmean(loss(p, x, y), AXIS))(params). (A pmean of the "
                        "gradients afterwards changes nothing: they are already the "
                        "same everywhere; a psum of the loss adds.)").format(
                          devices=devices))
    for i, (g, w) in enumerate(zip(got, want)):
        expect_close(g, w, _("leaf {i} of the gradient").format(i=i),
                     hint=_("the gradient of the whole batch's mean loss: "
                            "lax.pmean(loss(p, x, y), AXIS) inside jax.grad"))
    return _("the whole batch's gradient from {devices} devices, with check_vma=True").format(
               devices=devices)


@exercise(LESSON, 3, "process_rows")
def process_rows(student_fn: Any) -> str:
    draw = generator(3)
    # shuffled indices, a batch of its own (drawn) size for each count: 24 // count typed in
    # fails
    for count, per_process in zip((2, 3, 4), draw.choice(np.arange(3, 12), 3, replace=False)):
        batch = draw.permutation(1000)[:count * int(per_process)]
        parts = []
        for index in range(count):
            what = _("process_rows(batch, {index}, {count}) for a batch of {size}").format(
                       index=index, count=count, size=len(batch))
            parts.append(as_array(call(student_fn, batch, index, count, what=what)))
        if all(len(part) == len(batch) for part in parts):
            raise Mistake(_("every process took the whole batch: with {count} processes "
                            "each row would be fed {count} times. Take this process's "
                            "share only").format(count=count))
        want = np.split(batch, count)
        if all(np.array_equal(p, w) for p, w in zip(parts, want)):
            continue
        if all(np.array_equal(p, batch[i::count]) for i, p in enumerate(parts)):
            raise Mistake("the rows are dealt out like cards (process i takes rows i, i + n, "
                          "...): take consecutive blocks, process i the i-th of n, because the "
                          "global array puts process 0's rows first, then process 1's")
        together = np.sort(np.concatenate(parts)) if parts else np.array([])
        if not np.array_equal(together, np.sort(batch)):
            raise Mistake(_("with {count} processes, their rows together are not the "
                            "batch, each row once: process i should take "
                            "np.array_split(batch, n)[i]").format(count=count))
        raise Mistake(_("with {count} processes, process i should take the i-th of "
                        "{count} consecutive blocks of the batch, in order").format(
                          count=count))
    return N_("process i of n feeds the i-th consecutive block: together, the batch, each row once")


def _expect_layout(leaf: dict[str, Any], full: np.ndarray, mesh: Any, want: tuple,
                   wrong: dict[tuple, str], what: str, fix: str) -> None:
    """The described array holds ``full`` laid out as ``NamedSharding(mesh, P(*want))``, else
    a hint: the layout of each spec is made where the mesh is (:func:`._placement.named_layout`)."""
    _pieces(leaf, what)  # a placed jax.Array
    value = np.asarray(leaf["value"])
    if value.shape != full.shape or not np.array_equal(value, full):
        raise Mistake(_("{what} holds other values than the array you were given: only "
                        "place it").format(what=what))
    layout, size = leaf["layout"], beside(mesh, _placement.mesh_size, mesh)
    if len(layout) < size:
        raise Mistake(_("{what} lives on {len_layout} device(s), not on all {size} of "
                        "the mesh: {fix}").format(
                          what=what, len_layout=len(layout), size=size, fix=fix))
    if layout == beside(mesh, _placement.named_layout, mesh, want, full.shape):
        return
    for spec, hint in wrong.items():
        if layout == beside(mesh, _placement.named_layout, mesh, spec, full.shape):
            raise Mistake(_("{what} is {hint}: {fix}").format(
                              what=what, hint=hint, fix=fix))
    pieces = sorted({tuple(b - a for a, b in part) for part in layout.values()})
    raise Mistake(_("{what} is split into pieces of shape {join_map_str}, not as asked: "
                    "{fix}").format(
                      what=what, join_map_str=', '.join(map(str, pieces)), fix=fix))


@exercise(LESSON, 4, "shard_weights")
def shard_weights(student_fn: Any) -> str:
    # a 2-D mesh of every device where the student's code runs, then of half of them
    return [_shard_weights(student_fn, beside(student_fn, mesh_2d, half), sizes, local)
            for half, (sizes, local) in zip((False, True), _cases(122, split=True))][0]


def _shard_weights(student_fn: Any, mesh: Any, sizes: list[int], local: int) -> str:
    shape = beside(mesh, _placement.mesh_shape, mesh)
    params = _network(4, sizes)
    what = _("shard_weights(params, mesh) on a {dict_mesh_shape} mesh").format(
               dict_mesh_shape=shape)
    try:
        placed, leaves = call(wrapped(student_fn, _placement.placing, True), params, mesh,
                              what=what, hints=NETWORK_SHAPES)
    except Mistake as err:
        if "divide" in str(err) or "Indivisible" in str(err):
            raise Mistake(_("{what} asked for a split that does not divide evenly (the "
                            "last layer has only {SIZES} outputs): split each W's "
                            "columns, its {SIZES2} or {SIZES3} inputs, along {MODEL!r}, "
                            "and keep each b whole").format(
                              what=what, SIZES=sizes[-1], SIZES2=sizes[0], SIZES3=sizes[1],
                              MODEL=MODEL)) from None
        if "mesh" in str(err) and ("axis" in str(err) or "name" in str(err)):
            cause = str(err.__cause__ or err).strip().splitlines()[0]
            raise Mistake(_("{what} named a mesh axis that this mesh does not have "
                            "({cause}): its axes are {AXIS!r} and {MODEL!r}").format(
                              what=what, cause=cause, AXIS=AXIS, MODEL=MODEL)) from None
        raise
    for leaf in leaves:
        _expect_on(leaf, mesh, _("the params"))
    if len(leaves) != 2 * len(params):
        raise Mistake(_("{what} should return params of the same structure, [(W, b), "
                        "...]; got {len_leaves} arrays for {len_params} layers").format(
                          what=what, len_leaves=len(leaves), len_params=len(params)))
    w_fix = _("split each W's columns, its inputs (axis 1), along {MODEL!r}: P(None, "
              "{MODEL!r})").format(MODEL=MODEL)
    b_fix = _("keep every b whole on every device: NamedSharding(mesh, P())")
    for i, (w, b) in enumerate(params):
        _expect_layout(leaves[2 * i], w, mesh, (None, MODEL), {  # PartitionSpec(None, MODEL)
            (): _("whole on every device: nothing is split"),
            (None, AXIS): _("split along {AXIS!r}, the batch's mesh axis").format(AXIS=AXIS),
            (MODEL,): _("split by its rows, its outputs (axis 0)"),
            (None, (AXIS, MODEL)): _("split over every device of the mesh"),
        }, _("W of layer {i}").format(i=i), w_fix)
        _expect_layout(leaves[2 * i + 1], b, mesh, (), {
            (MODEL,): _("split along {axis!r}").format(axis=MODEL),
            (AXIS,): _("split along {axis!r}").format(axis=AXIS),
        }, _("b of layer {i}").format(i=i), b_fix)
    x, y = _batch(local * shape[AXIS], sizes)
    what = _("jax.jit(update) on your params, with x and y split along {AXIS!r}").format(AXIS=AXIS)
    step = beside(mesh, _placement.step_on_mesh, mesh)  # x and y placed along AXIS, there
    got = call(step, placed, x, y, 0.1, what=what)
    want = [p - 0.1 * g for p, g in zip(jax.tree.leaves(params), _reference_grads(params, x, y))]
    for i, (g, w) in enumerate(zip(jax.tree.leaves(got), want)):
        expect_close(np.asarray(g), w, _("leaf {i} after the step").format(i=i),
                     hint=_("the same step as on one device"))
    return (_("every W split by columns along {MODEL!r} (half of it on each device), "
              "every b whole; jax.jit(update) takes the same step on them as on one "
              "device").format(MODEL=MODEL))
