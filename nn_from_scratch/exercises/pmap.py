"""Checkers for lesson 11, pmap: the student writes per-device code and the layout it needs.

Per-device code is run here with ``jax.vmap(..., axis_name=AXIS)`` over 4
simulated devices: ``vmap`` with an axis name gives ``lax.axis_index``,
``lax.psum`` and ``lax.pmean`` the same meaning as ``pmap`` does, on any
machine, with or without several devices, in one compile. The checkers know
the usual mistakes: a batch split in the wrong order, rows dropped when the
batch does not split evenly, the same key on every device (or the shared key
itself), gradients that were never averaged or were summed, a per-device step
mapped without its axis name.
"""
import re
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ..i18n import N_, _
from ..parallel import AXIS
from ._calls import call, generator, jittered, library_name, prng_key
from ._compare import as_array, expect_close, expect_own_code, expect_shape, mlp_loss_and_grads
from ._core import Mistake, exercise
from ._draws import draw_sizes, labelled_batch, layer_sizes, network
from ._hints import NETWORK_SHAPES, NO_DERIVATIVE, summary
from ._remote import transformed

LESSON = "11_pmap"
DEVICES = 4  # simulated by vmap; the lessons run on 8 devices, the tests on 4


def _device_counts(number: int) -> tuple[int, int, int]:
    """A check's numbers of simulated devices: 4, then one of 5 to 7 and one of 9 to 12
    (``generator(number)``), more than the tests' 4 and the lessons' 8, so that a count
    written as a number (``% 4``, ``/ 4``, ``split(key, 8)[index]``) fails (a student's
    walk)."""
    draw = generator(number)
    return DEVICES, int(draw.integers(5, 8)), int(draw.integers(9, 13))


def _networks(number: int, counts: tuple[int, ...]) -> list[tuple[list[int], int]]:
    """``(layer sizes, local batch)`` of a small network for each of ``counts`` (devices),
    drawn (:func:`draw_sizes` with ``generator(number)``): the inputs, the hidden widths, the
    classes and the examples per device take another value in each case, no two equal within
    one, the local batch is never the case's device count (an axis swapped shows), and every
    other network has two hidden layers, not one (an answer unpacking two layers fails)."""
    source = generator(number)
    for _attempt in range(100):
        drawn = draw_sizes(source, len(counts), inputs=(5, 12), hidden=(3, 10),
                           second=(3, 10), classes=(2, 7), local=(2, 9))
        if all(s["local"] != devices for s, devices in zip(drawn, counts)):
            return [(layer_sizes(s, 1 + i % 2), s["local"]) for i, s in enumerate(drawn)]
    raise ValueError(f"_networks: no local batches apart from the device counts {counts}")


def _reference_grads(params: Any, x: np.ndarray, y: np.ndarray) -> list[np.ndarray]:
    """The leaves of ``grad(loss)(params, x, y)``, in NumPy: no compile for the reference."""
    return [a for layer in mlp_loss_and_grads(params, x, y)[1] for a in layer]


def _network(seed: int, sizes: list[int]) -> list[tuple[np.ndarray, np.ndarray]]:
    return network(generator(seed), sizes)


def _batch(seed: int, devices: int, sizes: list[int],
           local: int) -> tuple[np.ndarray, np.ndarray]:
    """``x: (devices, local, sizes[0])`` and one-hot ``y: (devices, local, sizes[-1])``."""
    x, _labels, y = labelled_batch(generator(seed), (devices, local), sizes[0], sizes[-1])
    return x, y


def _run_per_device(fn: Any, in_axes: tuple[Any, ...], *args: Any, what: str) -> Any:
    """``jit(vmap(fn, in_axes, axis_name=AXIS))(*args)``, an unknown axis name made a hint."""
    mapped = transformed(fn, (jax.vmap, {"in_axes": in_axes, "axis_name": AXIS}), jax.jit)
    return call(mapped, *args, what=what, hints={
        **NO_DERIVATIVE,
        "unbound axis name": _("{what} used an axis name that the map does not have: "
                               "name the device axis AXIS (= {AXIS!r}) in "
                               "lax.axis_index, lax.psum and lax.pmean").format(
                                 what=what, AXIS=AXIS), **NETWORK_SHAPES})


def _grad_leaves(grads: Any, what: str, devices: int,
                 params: list[tuple[np.ndarray, np.ndarray]]) -> list[np.ndarray]:
    """The leaves of a ``[(dW, db), ...]`` shaped as ``params`` with a leading device axis,
    as NumPy arrays."""
    leaves = jax.tree.leaves(grads)
    shapes = [(devices, *a.shape) for layer in params for a in layer]
    if len(leaves) != len(shapes):
        raise Mistake(_("{what} should return the gradients as params does, a list of "
                        "(dW, db) per layer: {len_shapes} arrays in all; got "
                        "{len_leaves}").format(
                          what=what, len_shapes=len(shapes), len_leaves=len(leaves)))
    return [expect_shape(leaf, shape, _("{what}, leaf {i}").format(what=what, i=i))
            for i, (leaf, shape) in enumerate(zip(leaves, shapes))]


@exercise(LESSON, 1, "shard")
def shard(student_fn: Any) -> str:
    draw = generator(111)  # and two cases of drawn sizes (n, k, each example's shape)
    drawn = [((int(n) * int(k), *(int(d) for d in draw.integers(1, 5, size=rank))), int(n))
             for n, k, rank in zip(draw.integers(2, 9, size=2), draw.integers(1, 6, size=2),
                                   (1, 2))]
    for shape, n in [((12, 3), 4), ((8, 2, 2), 2), ((6,), 3), *drawn]:
        x = jittered(np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape), 110,
                     0.4)
        k = shape[0] // n
        what = _("shard(x, {n}) for x of shape {shape}").format(n=n, shape=shape)
        out = call(student_fn, x, n, what=what)
        if isinstance(out, (list, tuple)):  # a student's walk: np.split(x, n)
            raise Mistake(_("{what} returned a {kind} of {count} arrays; return ONE array, "
                            "(n, batch // n, ...): pmap maps over axis 0 of an array (over a "
                            "list, it maps each of its arrays apart), x.reshape(n, -1, "
                            "*x.shape[1:])").format(what=what, kind=type(out).__name__,
                                                    count=len(out)))
        got = as_array(out)
        want = x.reshape(n, k, *shape[1:])
        if got.shape == (k, n, *shape[1:]) and k != n:
            raise Mistake(_("{what} returned shape {shape}: the leading axis must be "
                            "the devices, ({n}, {k}, ...) — pmap maps over axis 0").format(
                              what=what, shape=got.shape, n=n, k=k))
        if got.ndim == 2 and len(shape) >= 2 and got.shape[0] == n:
            raise Mistake(_("{what} returned shape {shape}: keep each example's own "
                            "shape, (n, batch // n, *x.shape[1:])").format(
                              what=what, shape=got.shape))
        got = expect_shape(got, want.shape, what)
        if not np.array_equal(got, want):
            if np.array_equal(got, x.reshape(k, n, *shape[1:]).swapaxes(0, 1)):
                raise Mistake("the rows are dealt out like cards (device 0 gets rows 0, n, "
                              "2n, ...); device d should get the consecutive rows d*k to "
                              "(d+1)*k - 1, k = batch // n, as x.reshape(n, k, ...) gives")
            raise Mistake(_("{what}: device d should get rows d*k to (d+1)*k - 1 of x, "
                            "k = batch // n, in order").format(what=what))
    n = int(draw.integers(3, 9))  # and a drawn uneven batch: n devices, a batch of k*n + r
    rows = n * int(draw.integers(1, 4)) + int(draw.integers(1, n))
    uneven = np.arange(30, dtype=np.float32).reshape(10, 3)
    arrays: list[tuple[Any, str, int]] = [(uneven, "NumPy", 4), (jnp.asarray(uneven), "JAX", 4),
                                          (np.ones((rows, 2), np.float32), "NumPy", n)]
    for x, kind, n in arrays:
        what = _("shard(x, {n}) for a {kind} array of {rows} rows").format(
            n=n, kind=kind, rows=len(x))
        try:
            out = student_fn(x, n)
        except NotImplementedError:
            raise
        except ValueError as err:  # right, if it says why: the batch and n, as numbers
            said = {int(number) for number in re.findall(r"(?<![\d.])\d+(?![\d.])", str(err))}
            if {len(x), n} <= said:
                continue
            raise Mistake(_("{what} raised ValueError: {message}. Say why, with the "
                            "numbers, so that whoever called it can fix the call: check the "
                            "batch yourself first, and name the batch ({rows}) and n ({n}), "
                            "e.g. \"a batch of {rows} does not split evenly over {n} "
                            "devices\"").format(
                              what=what, message=summary(str(err)), rows=len(x), n=n)) from None
        except Exception as err:
            raise Mistake(_("{what} raised {name} ({summary_str_err}): check the batch "
                            "yourself before reshaping, and raise a ValueError that "
                            "says it does not split evenly over n devices").format(
                              what=what, name=type(err).__name__,
                              summary_str_err=summary(str(err)))) from None
        raise Mistake(_("{what} returned {summary_out}: {rows} rows do not split evenly "
                        "over {n} devices, and dropping or repeating rows silently "
                        "changes the batch. Raise a ValueError that says so").format(
                          what=what, summary_out=summary(out), rows=len(x), n=n))
    expect_own_code(student_fn, (np.arange(12.0).reshape(4, 3), 2), "shard(x, 2)",
                    "nn_from_scratch.parallel", ("shard_batch",))
    return N_("device d gets rows d*k to (d+1)*k - 1; an uneven batch is refused")


def _key_data(keys: Any, what: str, devices: int) -> np.ndarray:
    """``(devices, 2)`` uint32: the data of one key per simulated device, typed or raw."""
    dtype = getattr(keys, "dtype", None)
    if dtype is not None and jax.dtypes.issubdtype(dtype, jax.dtypes.prng_key):
        return expect_shape(jax.random.key_data(keys), (devices, 2),
                            _("the key data of {what}").format(what=what))
    if dtype == np.uint32 and np.shape(keys) == (devices, 2):
        return np.asarray(keys)  # raw keys, jax.random.PRNGKey style
    raise Mistake(_("{what} should return ONE key per device, made with "
                    "jax.random.fold_in or split; got {name} of shape {shape_keys}").format(
                      what=what, name=type(keys).__name__, shape_keys=np.shape(keys)))


@exercise(LESSON, 2, "a key per device")
def device_key(student_fn: Any) -> str:
    for devices in _device_counts(112):
        _device_key(student_fn, devices)
    return N_("one program, a different key on every device, all from the one shared key (SPMD)")


def _device_key(student_fn: Any, devices: int) -> None:
    what = _("device_key(key) on {devices} devices sharing one key").format(devices=devices)
    mapped = transformed(student_fn, (jax.vmap, {"in_axes": None, "axis_size": devices,
                                                 "axis_name": AXIS}), jax.jit)

    def keys_for(seed: int) -> np.ndarray:
        return _key_data(call(mapped, prng_key(seed), what=what, hints={
            "unbound axis name": _("{what} used an axis name that the map does not "
                                   "have: name the device axis AXIS (= {AXIS!r}) in "
                                   "lax.axis_index").format(what=what, AXIS=AXIS)}), what,
                         devices)

    keys, given = keys_for(5), np.asarray(jax.random.key_data(prng_key(5)))
    if all(np.array_equal(k, keys[0]) for k in keys):
        raise Mistake("every device got the same key, so every device would draw the same "
                      "numbers: fold this device's index into it, "
                      "jax.random.fold_in(key, lax.axis_index(AXIS))")
    reused = [d for d, k in enumerate(keys) if np.array_equal(k, given)]
    if reused:
        raise Mistake(_("device {reused} returned the key it was given, the one every "
                        "device shares: derive a new key on every device, fold_in(key, "
                        "index)").format(reused=reused[0]))
    if len({k.tobytes() for k in keys}) < devices:
        raise Mistake("some devices got the same key: each device needs its own")
    if not np.array_equal(keys_for(5), keys):
        raise Mistake("the same key gave other device keys: derive them only from the key")
    if np.array_equal(keys_for(6), keys):
        raise Mistake("another key gave the same device keys: derive them from the key you "
                      "are given")


@exercise(LESSON, 3, "data_parallel_grads")
def data_parallel_grads(student_fn: Any) -> str:
    counts = _device_counts(113)
    for number, (devices, (sizes, local)) in enumerate(zip(counts, _networks(116, counts))):
        _data_parallel_grads(student_fn, devices, sizes, local, number)
    return N_("on simulated devices (three numbers of them), every device ends with the "
              "gradient of the whole batch")


def _data_parallel_grads(student_fn: Any, devices: int, sizes: list[int], local: int,
                         number: int) -> None:
    params, (x, y) = _network(0, sizes), _batch(1 + number, devices, sizes, local)
    what = _("data_parallel_grads(params, x, y) on {devices} devices").format(devices=devices)
    got = _grad_leaves(_run_per_device(student_fn, (None, 0, 0), params, x, y, what=what), what,
                       devices, params)
    full = _reference_grads(params, x.reshape(-1, sizes[0]), y.reshape(-1, sizes[-1]))
    own = [np.stack(per_device) for per_device in zip(*(
        _reference_grads(params, x[d], y[d]) for d in range(devices)))]
    if all(np.allclose(g, o, atol=1e-6) for g, o in zip(got, own)):
        raise Mistake("each device kept the gradient of its own slice: average them over the "
                      "devices with lax.pmean(grads, AXIS) after jax.grad (in pmap, a pmean "
                      "inside the loss does not do it)")
    if not all(np.allclose(g, g[:1], atol=1e-6) for g in got):
        raise Mistake("the devices ended with different gradients; after lax.pmean(grads, AXIS) "
                      "every device holds the same average")
    if all(np.allclose(g[0], devices * f, rtol=1e-4, atol=1e-6) for g, f in zip(got, full)):
        raise Mistake(_("the gradients are {DEVICES}x too big: lax.psum adds the "
                        "devices' gradients; lax.pmean averages them").format(
                          DEVICES=devices))
    for i, (g, f) in enumerate(zip(got, full)):
        expect_close(g[0], f, _("leaf {i} of the averaged gradient").format(i=i),
                     hint=_("each device computes jax.grad(loss)(params, x, y) on its slice, "
                            "then lax.pmean(grads, AXIS)"))


@exercise(LESSON, 4, "pmap's step with vmap")
def simulated_update(student_fn: Any) -> str:
    if library_name(student_fn):  # a student's walk: simulated_update = pmap_update
        call(student_fn, what="simulated_update")  # "this is the library's own ..."
    counts = _device_counts(114)
    networks = _networks(117, (*counts, counts[0]))
    for number, (devices, step_size, (sizes, local)) in enumerate(zip(
            counts, (0.1, 0.25, 0.05), networks)):
        _simulated_update(student_fn, devices, step_size, sizes, local, number)
    _own_copies(student_fn, counts[0], *networks[-1])
    return N_("vmap with an axis name runs pmap's per-device code on one device: the same step")


def _jitted_step(student_fn: Any) -> Any:
    """The student's step under ``jit`` with the step size static, a Python number as the
    check hands it: a step the student jitted with ``static_argnums=3`` works inside it too."""
    return transformed(student_fn, (jax.jit, {"static_argnums": 3}))


def _own_copies(student_fn: Any, devices: int, sizes: list[int], local: int) -> None:
    """Each simulated device steps from its own copy of the params, as under pmap_update: a
    second walk's update on the whole batch, stacked once per device, took one copy for all."""
    from ..parallel import data_parallel_step

    params, (x, y) = _network(7, sizes), _batch(8, devices, sizes, local)
    draw = generator(115)
    copies = [tuple((a + 0.05 * draw.normal(size=(devices, *a.shape))).astype(np.float32)
                    for a in layer) for layer in params]  # one nudged copy per device
    what = _("simulated_update(params, x, y, 0.1) with a different copy of the params on "
             "each of {devices} devices").format(devices=devices)
    got = _grad_leaves(call(_jitted_step(student_fn), copies, x, y, 0.1, what=what,
                            hints=NETWORK_SHAPES),
                       what, devices, params)
    params_j, x_j, y_j = jax.tree.map(jnp.asarray, (copies, x, y))
    want = jax.tree.leaves(jax.vmap(data_parallel_step, in_axes=(0, 0, 0, None),
                                    axis_name=AXIS)(params_j, x_j, y_j, 0.1))
    if all(np.allclose(a, w, rtol=1e-4, atol=1e-5) for a, w in zip(got, want)):
        return
    raise Mistake(_("{what}: each device should step from its own copy, as pmap_update's "
                    "devices do (it maps the params over their device axis). Map the per-device "
                    "step with vmap, rather than compute one update and copy it to every "
                    "device").format(what=what))


def _simulated_update(student_fn: Any, devices: int, step_size: float, sizes: list[int],
                      local: int, number: int) -> None:
    params, (x, y) = _network(0, sizes), _batch(1 + number, devices, sizes, local)
    replicated = jax.tree.map(lambda a: np.broadcast_to(a, (devices, *a.shape)).copy(), params)
    what = _("simulated_update(params, x, y, {step_size}) with params replicated over "
             "{devices} devices").format(step_size=step_size, devices=devices)
    got = call(_jitted_step(student_fn), replicated, x, y, step_size, what=what, hints={
        "out_axes is None": _("{what}: out_axes=None returns ONE copy of the new params, as if "
                              "they could not differ between devices; pmap_update returns one "
                              "per device, along axis 0: leave out_axes at its default").format(
                                what=what),
        ("shard_map applied", "not evenly divisible by the corresponding mesh",
         "requires more devices", "devices than"): _(
            "{what} asked for {devices} devices, more than this machine has: jax.pmap runs "
            "each slice on a device of its own. The exercise runs the per-device step on ONE "
            "device: jax.vmap(..., axis_name=AXIS)").format(what=what, devices=devices),
        "unbound axis name": _("the per-device step calls lax.pmean over the axis "
                               "{AXIS!r}: give vmap that name too, jax.vmap(..., "
                               "axis_name=AXIS)").format(AXIS=AXIS),
        ("vmap", "dot_general", "shape"): N_("map every argument as pmap_update does: the "
                                             "params, x and y over their leading device axis "
                                             "(0) and the step size not at all (None)"),
        **NETWORK_SHAPES})
    leaves = _grad_leaves(got, what, devices, params)
    want = [p - step_size * g for p, g in zip(jax.tree.leaves(params), _reference_grads(
        params, x.reshape(-1, sizes[0]), y.reshape(-1, sizes[-1])))]  # update on one device
    if not all(np.allclose(a, a[:1], atol=1e-6) for a in leaves):
        raise Mistake("the simulated devices ended with different parameters: map the per-device "
                      "step, parallel.data_parallel_step, whose pmean averages the gradients, not "
                      "update, which only sees its own slice")
    for i, (a, w) in enumerate(zip(leaves, want)):
        expect_close(a[0], w, _("leaf {i} of the new parameters").format(i=i),
                     hint=_("every simulated device should take the single-device step on the "
                            "whole batch"))
