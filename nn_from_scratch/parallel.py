"""Many devices: simulated CPU devices, data-parallel SGD three ways, and several processes.

Data parallelism: every device holds the same parameters and a slice of the
batch; each computes the gradient of its slice, the gradients are averaged
across devices (an all-reduce), and every device applies the same update, so
the parameters stay identical everywhere. Three ways to write it:

- :data:`pmap_update`: ``pmap`` with ``lax.pmean`` (the classic API, in
  maintenance mode since JAX 0.8);
- ``jax.jit(update)`` on arrays placed with a ``NamedSharding`` over a device
  ``Mesh``: the compiler inserts the all-reduce (today's way; see
  :func:`train_data_parallel`);
- :func:`shard_map_update`: per-device code with ``jax.shard_map``.

:func:`run_multiprocess` runs :mod:`nn_from_scratch.worker` in several processes
on this machine, which meet through ``jax.distributed`` over 127.0.0.1: the same
code that runs on a multi-host cluster. Process 0 hands its result back in the file
format of :func:`save_result` and :func:`load_result`, kept here beside
:class:`MultiprocessResult`, so the worker imports this module and never the reverse
(it is started by name, ``python -m nn_from_scratch.worker``).
"""
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import jax
import numpy as np
from jax import lax, pmap, random
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from ._checks import InputError, check_positive_int
from .epoch import _update_with_metrics, batch_indices
from .i18n import ENV, language
from .losses import loss, one_hot
from .params import Params, init_network_params
from .train import TrainingData

__all__ = ["AXIS", "MultiprocessResult", "data_parallel_mesh", "data_parallel_step",
           "load_result", "pmap_update", "replicate", "run_multiprocess", "save_result",
           "shard_batch", "shard_map_update", "simulate_cpu_devices", "to_numpy",
           "train_data_parallel", "unreplicate"]

AXIS = "data"  # the name of the device axis we split the batch over


def simulate_cpu_devices(n: int) -> None:
    """Make JAX's CPU backend show ``n`` devices. Call it before any JAX computation.

    The number of CPU devices is fixed when the backend starts (at the first JAX
    operation), so afterwards it can no longer change: then this raises a
    ``RuntimeError`` saying how to fix it, unless there are already ``n``.
    """
    try:
        jax.config.update("jax_num_cpu_devices", n)
    except RuntimeError as err:
        if jax.default_backend() == "cpu" and jax.device_count() == n:
            return
        raise RuntimeError(
            f"Cannot simulate {n} CPU devices: JAX's backend already started with "
            f"{jax.device_count()} {jax.default_backend().upper()} device(s). Call "
            f"simulate_cpu_devices({n}) right after `import jax`, before any JAX operation "
            f"(in a notebook: restart the kernel and run it first).") from err


def shard_batch(x: np.ndarray, n: int) -> np.ndarray:
    """``(batch, ...) -> (n, batch // n, ...)``: one slice of the batch per device, for ``pmap``."""
    if x.shape[0] % n:
        raise InputError(f"a batch of {x.shape[0]} does not split evenly over {n} devices; "
                         f"use a batch size divisible by {n}.")
    return x.reshape(n, x.shape[0] // n, *x.shape[1:])


def replicate(tree: Any, n: int) -> Any:
    """Give every leaf a leading axis of ``n`` identical copies, one per device, for ``pmap``."""
    return jax.tree.map(lambda a: np.broadcast_to(a, (n, *a.shape)), tree)


def unreplicate(tree: Any) -> Any:
    """Copy 0 of a replicated pytree (all copies are equal after a data-parallel step)."""
    return jax.tree.map(lambda a: a[0], tree)


def data_parallel_step(params: Params, x: jax.Array, y: jax.Array, step_size: float) -> Params:
    """Per-device code: ``x: (local_batch, n_in)``, ``y: (local_batch, k)``, this device's slice."""
    grads = jax.grad(loss)(params, x, y)  # the gradient of this device's slice
    grads = lax.pmean(grads, axis_name=AXIS)  # all-reduce: the mean over devices
    return [(w - step_size * dw, b - step_size * db)  # the same update on every device
            for (w, b), (dw, db) in zip(params, grads)]


# params: (devices, ...) replicated; x, y: (devices, local_batch, ...); step_size shared.
pmap_update = pmap(data_parallel_step, axis_name=AXIS, in_axes=(0, 0, 0, None))


def data_parallel_mesh(devices: Sequence[Any] | None = None) -> jax.sharding.Mesh:
    """A 1-D ``Mesh`` over ``devices`` (default: all) with axis name ``"data"``."""
    devices = jax.devices() if devices is None else devices
    return jax.sharding.Mesh(np.array(devices), (AXIS,))


def shard_map_update(mesh: jax.sharding.Mesh):
    """The SGD step as per-device code, ``jit(shard_map(...))`` over ``mesh``.

    Returns ``f(params, x, y, step_size)`` taking global arrays: ``x: (batch, n_in)``
    is split over the mesh and ``params`` replicated.

    With ``shard_map``'s default ``check_vma=True``, JAX tracks which values vary
    across devices: ``params`` is the same everywhere (invariant), ``x`` and ``y``
    differ (varying). The idiom is to make the *loss* invariant with ``pmean``
    before differentiating; the gradient of invariant ``params`` is then the
    gradient of the whole batch: in the backward pass the transpose of ``pmean``
    gives each device ``1/n`` of it, and the transpose of the ``pvary`` JAX puts
    where ``params`` meet the data (``psum_invariant``) adds the ``n`` parts up.
    """
    def per_device(params: Params, x: jax.Array, y: jax.Array, step_size: float) -> Params:
        def global_loss(p: Params) -> jax.Array:
            return lax.pmean(loss(p, x, y), AXIS)  # the mean over devices: invariant
        grads = jax.grad(global_loss)(params)  # invariant too: the same on every device
        return [(w - step_size * dw, b - step_size * db)
                for (w, b), (dw, db) in zip(params, grads)]

    return jax.jit(jax.shard_map(per_device, mesh=mesh, in_specs=(P(), P(AXIS), P(AXIS), P()),
                                 out_specs=P()))


def train_data_parallel(data: TrainingData, sizes: Sequence[int], *, steps: int, batch_size: int,
                        step_size: float, key: jax.Array, mesh: jax.sharding.Mesh,
                        init: str = "he") -> tuple[Params, np.ndarray]:
    """SGD with each batch split over ``mesh``'s devices, in one process or many.

    Every process runs this same function: it draws the same batch order from
    ``key`` (a new order every epoch, as :func:`~nn_from_scratch.train.fit`
    does), takes its own rows of each batch (process ``i`` of ``n`` takes the
    ``i``-th ``1/n``), and builds global arrays from them; ``jit`` does the rest.

    Returns:
      ``(params, losses)``: parameters replicated on every device (a list of
      ``(W, b)`` global arrays) and the loss of each step (NumPy, ``(steps,)``).
    """
    check_positive_int(steps, "steps")
    replicated, split = NamedSharding(mesh, P()), NamedSharding(mesh, P(AXIS))
    init_key, key = random.split(key)
    make_params = jax.jit(partial(init_network_params, sizes, init=init),
                          out_shardings=replicated)
    params = make_params(init_key)  # created directly on every device, identical everywhere
    targets = np.asarray(one_hot(data.y_train, data.num_classes))
    step_fn = jax.jit(_update_with_metrics)
    losses, batches = [], np.empty((0, 0), np.int32)
    for step in range(steps):
        if step % max(len(batches), 1) == 0:  # a new epoch: a new order from a new key, as in fit
            key, epoch_key = random.split(key)
            batches = np.asarray(batch_indices(epoch_key, len(data.x_train), batch_size))
        batch = batches[step % len(batches)]  # (batch_size,) indices
        rows = np.array_split(batch, jax.process_count())[jax.process_index()]
        x = jax.make_array_from_process_local_data(split, data.x_train[rows])
        y = jax.make_array_from_process_local_data(split, targets[rows])
        params, (value, _accuracy) = step_fn(params, x, y, step_size)
        losses.append(value)
    return params, np.array([float(v) for v in losses])


def to_numpy(params: Params) -> list[tuple[np.ndarray, np.ndarray]]:
    """A replicated (possibly multi-process) parameter list as NumPy arrays, from this process."""
    return [(np.asarray(w.addressable_shards[0].data), np.asarray(b.addressable_shards[0].data))
            for w, b in params]


@dataclass(frozen=True)
class MultiprocessResult:
    """What :func:`run_multiprocess` returns.

    Attributes:
      params: the trained ``[(W, b), ...]`` as NumPy arrays (process 0's copy).
      losses: ``(steps,)`` the loss of every step.
      seconds: wall time for all processes, start-up included.
      output: everything the processes printed.
    """

    params: list[tuple[np.ndarray, np.ndarray]]
    losses: np.ndarray
    seconds: float
    output: str


def save_result(path: str | Path, params: list[tuple[np.ndarray, np.ndarray]],
                losses: np.ndarray) -> None:
    """Save ``params`` as ``W0, b0, W1, b1, ...`` and ``losses`` in one ``.npz`` file."""
    arrays: dict[str, Any] = {f"{name}{i}": a for i, layer in enumerate(params)
                              for name, a in zip("Wb", layer)}
    np.savez(path, losses=losses, **arrays)


def load_result(path: str | Path) -> tuple[list[tuple[np.ndarray, np.ndarray]], np.ndarray]:
    """``(params, losses)`` from a file written by :func:`save_result`."""
    with np.load(path) as saved:
        layers = sum(1 for name in saved.files if name.startswith("W"))
        return [(saved[f"W{i}"], saved[f"b{i}"]) for i in range(layers)], saved["losses"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_multiprocess(num_processes: int = 2, *, steps: int = 30, batch_size: int = 128,
                     step_size: float = 0.1, seed: int = 0, sizes: Sequence[int] = (64, 64, 10),
                     init: str = "he", timeout: float = 180) -> MultiprocessResult:
    """Train on the bundled digits with ``num_processes`` processes on this machine.

    Starts ``python -m nn_from_scratch.worker`` ``num_processes`` times; they meet
    through ``jax.distributed.initialize`` at 127.0.0.1 and all-reduce over gloo
    (CPU collectives). On a cluster only the coordinator address and the process
    ids would change.

    Raises:
      TimeoutError after ``timeout`` seconds (all processes are killed); RuntimeError
      if a process fails, with its output.
    """
    check_positive_int(num_processes, "num_processes")
    port = _free_port()
    env = {**os.environ, ENV: language(),  # the workers report in the caller's language
           "PYTHONPATH": os.pathsep.join(filter(None, [str(Path(__file__).parent.parent),
                                                       os.environ.get("PYTHONPATH")]))}
    with tempfile.TemporaryDirectory() as tmp:
        result = Path(tmp) / "result.npz"
        args = ["--num-processes", str(num_processes), "--port", str(port), "--steps", str(steps),
                "--batch-size", str(batch_size), "--step-size", str(step_size), "--seed", str(seed),
                "--sizes", ",".join(map(str, sizes)), "--init", init, "--out", str(result)]
        start = time.perf_counter()
        procs = [subprocess.Popen([sys.executable, "-m", "nn_from_scratch.worker",
                                   "--process-id", str(i), *args], env=env, text=True,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
                 for i in range(num_processes)]
        try:
            outputs = [p.communicate(timeout=max(1.0, timeout - (time.perf_counter() - start)))[0]
                       for p in procs]
        except subprocess.TimeoutExpired:
            for p in procs:
                p.kill()
                p.communicate()
            raise TimeoutError(f"{num_processes} processes did not finish within {timeout} s; "
                               f"killed them. Is port {port} on 127.0.0.1 blocked?") from None
        seconds = time.perf_counter() - start
        failed = [(i, p.returncode) for i, p in enumerate(procs) if p.returncode != 0]
        if failed:
            raise RuntimeError(f"process(es) {failed} failed:\n" +
                               "\n".join(o[-3000:] for o in outputs))
        params, losses = load_result(result)
    return MultiprocessResult(params, losses, seconds, "".join(outputs))
