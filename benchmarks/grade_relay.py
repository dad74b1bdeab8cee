"""What does the relay cost an honest notebook? Round trips and outputs through it, and straight
to the kernel's own sockets, side by side.

A sandboxed kernel's messages reach the grader through a relay (``nn_from_scratch/relay.py``), a
process of its own that takes each message in first, under a memory cap of its own. Here one
sandboxed kernel is started as the grader starts it, with a second client connected straight to
the kernel's sockets (with the grader's socket options), and the two alternate in interleaved
rounds (a shared machine's speed drifts by the minute):

  question   a check's question: an empty execute whose user expression returns a list of 1,000
             numbers (about 4 kB), timed from the request to its reply (a check asks hundreds)
  outputs    a cell that prints 8 MB in 1 MB prints (lesson 00's solution sends 7.9 MB in all),
             timed until its last output and its reply

    .venv/bin/python benchmarks/grade_relay.py                 # 5 rounds
    .venv/bin/python benchmarks/grade_relay.py --rounds 9 --questions 300
"""
import argparse
import asyncio
import os
import platform
import queue
import statistics
import tempfile
import time
from pathlib import Path

from jupyter_client.asynchronous import AsyncKernelClient

from nn_from_scratch.kernel import Kernel, kernel_env
from nn_from_scratch.kernel_channel import bounded_context
from nn_from_scratch.sandbox import Box

QUESTION = {"a": "list(range(1000))"}
OUTPUTS = "for _ in range(8):\n    print('x' * 2**20)"


async def question(client: AsyncKernelClient) -> float:
    start = time.perf_counter()
    msg_id = client.execute("", silent=True, store_history=False, user_expressions=QUESTION)
    while (await client.get_shell_msg(timeout=30))["parent_header"].get("msg_id") != msg_id:
        pass
    return time.perf_counter() - start


async def drain(client: AsyncKernelClient) -> None:
    """Read what waits on the output channel (each client gets every question's status)."""
    while True:
        try:
            await client.get_iopub_msg(timeout=0.2)
        except queue.Empty:
            return


async def outputs(client: AsyncKernelClient) -> float:
    start, printed = time.perf_counter(), []
    reply = await client.execute_interactive(
        OUTPUTS, timeout=60, output_hook=lambda msg: printed.append(msg))
    assert reply["content"]["status"] == "ok", reply["content"]
    assert sum(len(m["content"].get("text", "")) for m in printed) >= 8 * 2**20
    return time.perf_counter() - start


async def main(rounds: int, questions: int) -> None:
    with tempfile.TemporaryDirectory() as private:
        kernel = await Kernel.start(box=Box(Path(private), kernel_env(sandboxed=True)))
        try:
            assert kernel.relay is not None
            straight = AsyncKernelClient(context=bounded_context())  # the grader's sockets
            straight.load_connection_info({**kernel.manager.get_connection_info(),
                                           "ip": kernel.relay.kernel_ip})
            straight.start_channels()
            await straight.wait_for_ready(timeout=30)
            clients = {"relayed": kernel.client, "straight": straight}
            for client in clients.values():  # warm-up: the first of each is not timed
                await question(client)
                await outputs(client)
            times: dict[tuple[str, str], list[float]] = {}
            for round_ in range(rounds):
                order = list(clients.items())[::1 if round_ % 2 else -1]
                for name, client in order:
                    asked = [await question(client) for _ in range(questions)]
                    for each in clients.values():
                        await drain(each)
                    times.setdefault(("question", name), []).append(statistics.median(asked))
                    times.setdefault(("outputs", name), []).append(await outputs(client))
            straight.stop_channels()
        finally:
            await kernel.shutdown()
    print(f"{'':10} {'straight':>22} {'relayed':>22} {'relayed/straight':>18}")
    for what in ("question", "outputs"):
        ratios = [r / s for r, s in zip(times[(what, "relayed")], times[(what, "straight")])]

        def spread(values: list[float]) -> str:
            return (f"{statistics.median(values) * 1e3:7.2f} ms "
                    f"({min(values) * 1e3:.2f}-{max(values) * 1e3:.2f})")
        print(f"{what:10} {spread(times[(what, 'straight')]):>22} "
              f"{spread(times[(what, 'relayed')]):>22} "
              f"{statistics.median(ratios):9.2f}x ({min(ratios):.2f}-{max(ratios):.2f})")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--questions", type=int, default=200,
                        help="questions per client per round (the median is kept)")
    args = parser.parse_args()
    print(f"Machine: {platform.machine()}, {os.cpu_count()} CPU cores, Python "
          f"{platform.python_version()}, load average {os.getloadavg()[0]:.1f} at the start; "
          f"{args.rounds} rounds of {args.questions} questions and one 8 MB cell per client")
    asyncio.run(main(args.rounds, args.questions))
