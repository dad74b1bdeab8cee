"""One process of a training run across processes: ``python -m nn_from_scratch.worker``.

Run it by hand in two terminals on one machine (lesson 12), the same port in both:

    python -m nn_from_scratch.worker --process-id 0 --num-processes 2 --port 12355
    python -m nn_from_scratch.worker --process-id 1 --num-processes 2 --port 12355

What happens, line by line in :func:`main`:

1. ``jax.distributed.initialize`` joins the processes: process 0 starts a
   coordinator at 127.0.0.1:PORT, every process connects to it and learns how
   many processes there are and which devices each one has. Each process sees
   its own CPU device locally (``jax.local_devices()``) and every process's
   device globally (``jax.devices()``).
2. Every process builds the same mesh over all global devices and runs the same
   :func:`~nn_from_scratch.parallel.train_data_parallel`: the same batch order
   from the same key, each process feeding its own half of every batch. The
   gradients are all-reduced over gloo, JAX's CPU collectives.
3. Process 0 saves the result (``--out``) with
   :func:`~nn_from_scratch.parallel.save_result`, which the launcher,
   :func:`~nn_from_scratch.parallel.run_multiprocess`, reads back.

On a cluster only step 1 changes: the coordinator is the first host's address,
and each host passes its own ``--process-id`` (or ``jax.distributed.initialize()``
reads both from SLURM or the cloud's environment).
"""
import argparse
import time

import jax

from .data import load_dataset
from .i18n import _
from .parallel import data_parallel_mesh, save_result, to_numpy, train_data_parallel
from .params import INITS

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m nn_from_scratch.worker", description=__doc__.splitlines()[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--process-id", type=int, required=True, help="0, 1, ...: this process")
    parser.add_argument("--num-processes", type=int, required=True, help="how many in all")
    parser.add_argument("--port", type=int, default=12355, help="the coordinator's port")
    parser.add_argument("--host", default="127.0.0.1", help="the coordinator's address")
    parser.add_argument("--steps", type=int, default=30, help="SGD steps")
    parser.add_argument("--batch-size", type=int, default=128, help="global batch size")
    parser.add_argument("--step-size", type=float, default=0.1, help="learning rate")
    parser.add_argument("--seed", type=int, default=0, help="the key every process shares")
    parser.add_argument("--sizes", default="64,64,10", help="layer sizes, inputs first")
    parser.add_argument("--init", choices=INITS, default="he", help="weight initialisation")
    parser.add_argument("--out", default=None, help="process 0 saves the result here (.npz)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    jax.config.update("jax_platforms", "cpu")  # this demo runs on CPU devices everywhere
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize(f"{args.host}:{args.port}", num_processes=args.num_processes,
                               process_id=args.process_id, initialization_timeout=60)
    print(_("process {index} of {count}: local devices {local}, global devices {every}").format(
        index=jax.process_index(), count=jax.process_count(), local=jax.local_devices(),
        every=jax.devices()), flush=True)

    start = time.perf_counter()
    params, losses = train_data_parallel(
        load_dataset("digits"), [int(s) for s in args.sizes.split(",")], steps=args.steps,
        batch_size=args.batch_size, step_size=args.step_size, key=jax.random.key(args.seed),
        mesh=data_parallel_mesh(), init=args.init)
    print(_("process {index}: {steps} steps in {seconds:.2f} s, loss {first:.4f} -> "
            "{last:.4f}").format(index=args.process_id, steps=args.steps,
                                 seconds=time.perf_counter() - start, first=losses[0],
                                 last=losses[-1]), flush=True)

    if args.out and args.process_id == 0:
        save_result(args.out, to_numpy(params), losses)
    jax.distributed.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
