"""Many devices: simulated CPU devices, data-parallel SGD three ways, and several processes.

Data parallelism: every device holds the same parameters and a slice of the
batch; each computes the gradient of its slice, the gradients are averaged
across devices (an all-reduce), and every device applies the same update, so
the parameters stay identical everywhere. Three ways to write it:

- ``pmap_update``: ``pmap`` with ``lax.pmean`` (the classic API; ``pmap`` is in
  maintenance mode since JAX 0.8);
- ``jit`` of the ordinary ``sgd_step`` on arrays placed with a ``NamedSharding``
  over a device ``Mesh``: the compiler inserts the all-reduce (today's way);
- ``shard_map_update``: per-device code with ``jax.shard_map`` and ``lax.pmean``.

``run_multiprocess`` runs :func:`train_data_parallel` in several processes on
this machine with ``jax.distributed`` over 127.0.0.1: the same code that runs
on a multi-host cluster.
"""
import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

import jax
import numpy as np
from jax import lax, pmap
from jax.sharding import NamedSharding, PartitionSpec as P

from .data import batch_indices, load_dataset
from .losses import loss, one_hot
from .params import init_network_params
from .train import apply_gradients, jit_sgd_step

AXIS = "data"  # the name of the device axis we split the batch over


def simulate_cpu_devices(n):
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


def shard_batch(x, n):
    """``(batch, ...) -> (n, batch // n, ...)``: one slice of the batch per device, for ``pmap``."""
    if x.shape[0] % n:
        raise ValueError(f"a batch of {x.shape[0]} does not split evenly over {n} devices; "
                         f"use a batch size divisible by {n}.")
    return x.reshape(n, x.shape[0] // n, *x.shape[1:])


def replicate(tree, n):
    """Give every leaf a leading axis of ``n`` identical copies, one per device, for ``pmap``."""
    return jax.tree.map(lambda a: np.broadcast_to(a, (n, *a.shape)), tree)


def unreplicate(tree):
    """Copy 0 of a replicated pytree (all copies are equal after a data-parallel step)."""
    return jax.tree.map(lambda a: a[0], tree)


def _data_parallel_step(params, x, y, step_size):
    """Per-device code. ``x: (local_batch, n_in)``, ``y: (local_batch, k)`` are this device's slice."""
    grads = jax.grad(loss)(params, x, y)  # gradient of this device's slice
    grads = lax.pmean(grads, axis_name=AXIS)  # all-reduce: the mean over devices
    return apply_gradients(params, grads, step_size)  # the same update on every device


# params: (devices, ...) replicated; x, y: (devices, local_batch, ...); step_size shared.
pmap_update = pmap(_data_parallel_step, axis_name=AXIS, in_axes=(0, 0, 0, None))


def data_parallel_mesh(devices=None):
    """A 1-D ``Mesh`` over ``devices`` (default: all) with axis name ``"data"``."""
    devices = jax.devices() if devices is None else devices
    return jax.sharding.Mesh(np.array(devices), (AXIS,))


def shard_map_update(mesh):
    """The per-device step of ``pmap_update`` as ``jit(shard_map(...))`` over ``mesh``.

    Returns ``f(params, x, y, step_size)`` taking global arrays: ``x: (batch, n_in)``
    split over the mesh, ``params`` replicated.

    ``check_vma=False`` keeps pmap's meaning: each device's gradient is its own,
    and ``pmean`` averages them. With the default ``check_vma=True`` JAX tracks
    that ``params`` is the same on every device, and the gradient with respect
    to it comes back already *summed* over devices, so the ``pmean`` must go and
    the sum be divided by the number of devices instead.
    """
    per_device = jax.shard_map(_data_parallel_step, mesh=mesh, check_vma=False,
                               in_specs=(P(), P(AXIS), P(AXIS), P()), out_specs=P())
    return jax.jit(per_device)


def train_data_parallel(data, sizes, *, steps, batch_size, step_size, key, mesh):
    """SGD with the batch split over ``mesh``'s devices, in one process or many.

    Every process runs this same function: it draws the same batch order from
    ``key``, takes its own rows of each batch (process ``i`` of ``n`` takes the
    ``i``-th ``1/n``), and builds global arrays from them; ``jit`` does the rest.

    Returns:
      ``(params, losses)``: parameters replicated on every device (a list of
      ``(W, b)`` global arrays) and the loss of each step (NumPy, ``(steps,)``).
    """
    replicated, split = NamedSharding(mesh, P()), NamedSharding(mesh, P(AXIS))
    init_key, shuffle_key = jax.random.split(key)
    init = jax.jit(partial(init_network_params, sizes, init="he"), out_shardings=replicated)
    params = init(init_key)  # created directly on every device, identical everywhere
    order = np.asarray(batch_indices(shuffle_key, len(data.x_train), batch_size))
    targets = np.asarray(one_hot(data.y_train, data.num_classes))
    losses = []
    for step in range(steps):
        rows = np.array_split(order[step % len(order)], jax.process_count())[jax.process_index()]
        x = jax.make_array_from_process_local_data(split, data.x_train[rows])
        y = jax.make_array_from_process_local_data(split, targets[rows])
        params, value = jit_sgd_step(params, x, y, step_size)
        losses.append(value)
    return params, np.array([float(v) for v in losses])


def to_numpy(params):
    """A replicated (possibly multi-process) parameter list as NumPy arrays, from this process."""
    return [tuple(np.asarray(a.addressable_shards[0].data) for a in layer) for layer in params]


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_multiprocess(num_processes=2, *, steps=30, batch_size=128, step_size=0.1, seed=0,
                     sizes=(64, 64, 10), timeout=180):
    """Train on the bundled digits with ``num_processes`` processes on this machine.

    Starts ``python -m nn_from_scratch.parallel`` ``num_processes`` times; they meet
    through ``jax.distributed.initialize`` at 127.0.0.1 and all-reduce over gloo
    (CPU collectives). On a cluster only the coordinator address and the process
    ids would change.

    Returns:
      ``{"params": [(W, b), ...] NumPy, "losses": (steps,), "seconds": wall time,
      "output": what the processes printed}``.

    Raises:
      TimeoutError after ``timeout`` seconds (all processes are killed); RuntimeError
      if a process fails, with its output.
    """
    port = _free_port()
    env = {**os.environ, "JAX_PLATFORMS": "cpu",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(Path(__file__).parent.parent),
                                                       os.environ.get("PYTHONPATH")]))}
    with tempfile.TemporaryDirectory() as tmp:
        result = Path(tmp) / "result.npz"
        args = ["--num-processes", str(num_processes), "--port", str(port), "--steps", str(steps),
                "--batch-size", str(batch_size), "--step-size", str(step_size), "--seed", str(seed),
                "--sizes", ",".join(map(str, sizes)), "--out", str(result)]
        start = time.perf_counter()
        procs = [subprocess.Popen([sys.executable, "-m", "nn_from_scratch.parallel",
                                   "--process-id", str(i), *args], env=env, text=True,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
                 for i in range(num_processes)]
        try:
            outputs = [p.communicate(timeout=max(1.0, timeout - (time.perf_counter() - start)))[0]
                       for p in procs]
        except subprocess.TimeoutExpired:
            for p in procs:
                p.kill()
            raise TimeoutError(f"{num_processes} processes did not finish within {timeout} s; "
                               f"killed them. Is port {port} on 127.0.0.1 blocked?") from None
        seconds = time.perf_counter() - start
        failed = [(i, p.returncode) for i, p in enumerate(procs) if p.returncode != 0]
        if failed:
            raise RuntimeError(f"process(es) {failed} failed:\n" + "\n".join(o[-3000:] for o in outputs))
        saved = np.load(result)
        leaves = [saved[f"arr_{i}"] for i in range(len(saved.files) - 1)]
        params = list(zip(leaves[0::2], leaves[1::2]))
        return {"params": params, "losses": saved[f"arr_{len(saved.files) - 1}"],
                "seconds": seconds, "output": "".join(outputs)}


def _worker(argv=None):
    parser = argparse.ArgumentParser(description="one process of run_multiprocess")
    for name, kind in (("process-id", int), ("num-processes", int), ("port", int), ("steps", int),
                       ("batch-size", int), ("step-size", float), ("seed", int), ("sizes", str),
                       ("out", str)):
        parser.add_argument(f"--{name}", type=kind, required=True)
    a = parser.parse_args(argv)
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize(f"127.0.0.1:{a.port}", num_processes=a.num_processes,
                               process_id=a.process_id, initialization_timeout=60)
    print(f"process {jax.process_index()} of {jax.process_count()}: local devices "
          f"{jax.local_devices()}, global devices {jax.devices()}", flush=True)
    start = time.perf_counter()
    params, losses = train_data_parallel(
        load_dataset("digits"), [int(s) for s in a.sizes.split(",")], steps=a.steps,
        batch_size=a.batch_size, step_size=a.step_size, key=jax.random.key(a.seed),
        mesh=data_parallel_mesh())
    print(f"process {a.process_id}: {a.steps} steps in {time.perf_counter() - start:.2f} s, "
          f"final loss {losses[-1]:.4f}", flush=True)
    if a.process_id == 0:
        np.savez(a.out, *[leaf for layer in to_numpy(params) for leaf in layer], losses)
    jax.distributed.shutdown()


if __name__ == "__main__":
    _worker()
