"""Executing a notebook with limits: the one way this project runs a notebook.

The lesson tools (building and testing the lessons) and the grader both run
notebooks through :func:`execute` or :func:`run_cells`: each notebook in a fresh
kernel, offline, every cell with errors allowed (a cell that raises does not
stop the rest), within three limits:

- ``cell_timeout``: a cell past it is interrupted, and the next cells still run;
- ``timeout``: once the whole notebook has used it, no more cells start;
- ``memory``: a kernel whose memory (its process and its children, resident)
  passes it is killed by a watchdog, and its cell is reported "out of memory".
  (An address-space rlimit would break JAX, which reserves far more than it uses.)

and three on what comes back: ``cell_output`` and ``output`` bytes of what a cell sends
(outputs, comm messages with their binary buffers, every message's content and
metadata) are kept per cell and per notebook, and ``cell_outputs`` output messages per
cell; the rest is dropped (the cell says so), so that a kernel that displays gigabytes
cannot grow the process that runs it, nor tiny displays by the thousand hold the thread
that reads them (each kept one costs the runner a validated notebook output; past
``cell_outputs`` a cell's messages are read at most one per :data:`PACE`). A
single message over ``MAX_MESSAGE`` bytes ends the output connection (ZeroMQ
never reads it); the runner then connects anew before the next cell, and that
cell's outputs are reported cut.

The grader starts each kernel in a sandbox (a :class:`~.sandbox.Box`): then the
kernel sees nothing of the machine but what a lesson needs, and its sockets are
reachable by this process alone, through a :class:`~.relay.Relay`: a process of its own
that takes in each of the kernel's messages first, under a memory cap of its own, so that
no message (ZeroMQ bounds a message's parts, not their number) can grow this process.

A :class:`Kernel` can be started (and its imports warmed) before its notebook
is ready, so that a batch starts the next kernel while one notebook runs.
"""
import asyncio
import functools
import math
import os
import subprocess
import threading
import time
from collections.abc import Awaitable, Callable, Collection, Coroutine, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

from .i18n import ENV, _
from .memory_watch import MemoryWatch, format_bytes
from .relay import Caps, Refusal, Relay
from .sandbox import Box
from .wire import LIMITS, json_values

__all__ = ["CELL_TIMEOUT", "DEFAULT_LIMITS", "NOTEBOOK_TIMEOUT", "CellRun", "Hook", "Kernel",
           "Limits", "WARM_UP", "execute", "in_thread", "run_cells"]

NOTEBOOK_TIMEOUT = 300  # seconds for a whole notebook
CELL_TIMEOUT = 60  # seconds for one cell: an endless loop costs this, and the rest still runs
GRACE = 15  # seconds a cell gets to answer an interrupt before we give up on the kernel
MAX_MESSAGE = 16 * 2**20  # bytes of one message from a kernel: a bigger one drops the connection
# JSON values of one message (counted from its bytes before it is parsed): an answer at the
# wire's cap of values needs under four each; 16 MB of `{},` would be 5.6 million, 350 MB
MAX_VALUES = 4 * LIMITS.items
# ... and of all a kernel's messages together (a lesson sends under 100,000): parsing them costs
# the grader ~3 s, where 300 messages each just under MAX_VALUES held the classmate 17 s, not 6
MAX_TOTAL_VALUES = 20 * MAX_VALUES
# ... and of message parts read from one kernel (a lesson sends about 600: lesson 16 592, lesson
# 09 484): tiny displays sent for a minute, a million of them, cost the grader 26 CPU-s and
# held the classmate graded beside them at 1.5-1.9x its time (red team, round four); 90,000
# from a thread an earlier cell started, read as they come (the pace is a cell's own), held it
# at 1.71-1.83x its time alone under a cap of 100,000, 1.08-1.19x under 10,000 (round
# eighteen, 2 rounds side by side; counting only messages of no running cell, past 10,000,
# left it at 1.5-2.2x: the flood is read elsewhere too)
MAX_PARTS = 10_000
# ... and of bytes, every part of a message counted (binary buffers included), before its
# signature is checked: a message's parts are each capped by ZeroMQ (MAX_MESSAGE), not their
# number, and a lesson's solution sends under 10 MB in all (lesson 00 7.9 MB, its largest
# message 7.6 MB; lessons 13, 14, 16 under 1 MB). Red team, round eleven: 30 MB messages, each
# checked, parsed and dropped by the loop every kernel shares, held the classmate 15-21x its time
MAX_MESSAGE_BYTES = 2 * MAX_MESSAGE
MAX_BYTES = 256 * 2**20
# Messages a kernel may have waiting here, per channel; past them, they wait in the kernel's
# memory. Each may be up to MAX_MESSAGE_BYTES: at 16, the red-team suite's floods of 8 MB
# messages, graded two at a time, held the grader at 485 MB (603 MB once in CI); at 4,
# 401-433 MB, with honest notebooks graded as fast (lessons 00 and 03: 21-23 s against 24 s)
QUEUE = 4
# Past a cell's ``cell_outputs`` messages, the runner reads that cell's messages at most one
# per PACE seconds (the kernel's own queue drops the rest): every message read holds the loop
# that all kernels' replies go through, and a flood of tiny displays, read as fast as it came,
# held each of a classmate's round trips (a check makes hundreds) behind it.
PACE = 0.01
# A sandboxed kernel's messages pass through a relay (:mod:`.relay`), which passes on none of
# more than MAX_MESSAGE_BYTES or RELAY_PARTS parts (a Jupyter message has 6, and one per binary
# buffer: a widget sends a few) and takes in at most RELAY_MEMORY beyond its own ~30 MB: a
# channel's QUEUE messages on each side and the one passing, each up to MAX_MESSAGE_BYTES, fit
RELAY_PARTS = 1_000
RELAY_MEMORY = 384 * 2**20
# ... and, on the control, stdin and heartbeat channels (the grader's interrupts, nothing, pings;
# an interrupt's reply is about 300 bytes), none of more than this in all
RELAY_SIDE_BYTES = 2**20
SEND_TIMEOUT_MS = 10_000  # a request to a kernel that cannot be delivered in this long fails
# What every lesson imports first; importing (no computation) leaves JAX's backend unstarted,
# so lessons that configure devices in their first cell still can.
T = TypeVar("T")
WARM_UP = "import numpy, jax, jax.numpy, nn_from_scratch, nn_from_scratch.exercises"
# A sandboxed kernel makes itself not dumpable before any of its notebook runs: no other
# process of its sandbox may then trace it or read or write its memory (ptrace,
# /proc/PID/mem), which Linux checks against that flag. A child process started through a
# library (red team, round seventeen) runs code the grader's reading never saw; it must not
# reach into the kernel, as it no longer can through the kernel's sockets (relay.py).
SEAL = "import ctypes as _c\n_c.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE, 0\ndel _c"


@dataclass(frozen=True)
class Limits:
    """Seconds for the whole notebook and for one cell; bytes of memory (``None``: no cap)."""

    timeout: float = NOTEBOOK_TIMEOUT
    cell_timeout: float = CELL_TIMEOUT
    memory: int | None = None
    cell_output: int = 8 * 2**20  # bytes of outputs kept for a cell (a lesson's largest: 0.6 MB)
    output: int = 32 * 2**20  # and for the whole notebook
    # messages that make or change an output, kept for a cell (a lesson's cell has at most 8
    # outputs; prints coalesce into one): past it, a flood of tiny displays costs the runner
    # only reading them, not a validated output each (red team round five: 3.9 of 12 s)
    cell_outputs: int = 1_000


DEFAULT_LIMITS = Limits()


@dataclass(frozen=True)
class CellRun:
    """How one code cell ran: ``status`` is "ok", "error", "timed out" or "out of memory".

    ``error`` is the exception's last line when the cell ``raised``, and otherwise says what
    happened ("was interrupted after 60 s", "was not run: the kernel had died").
    """

    index: int
    status: str
    error: str = ""
    seconds: float = 0.0
    raised: bool = False
    cut: bool = False  # outputs past the limits were dropped

    @property
    def what_happened(self) -> str:
        return f"raised {self.error}" if self.raised else self.error


def kernel_env(sandboxed: bool = False) -> dict[str, str]:
    """Offline, with matplotlib's inline backend, and importing this very copy of the package.

    ``sandboxed``: only those (and the checks' language), none of this process's own variables,
    and no working folder on ``sys.path`` (``PYTHONSAFEPATH``, which IPython follows): the
    kernel's HOME, which the notebook may write, holds no module that anything imports by name
    (``matplotlib.use("module://...")`` imports one; a fourth look at red team round sixteen).
    """
    package_root = str(Path(__file__).resolve().parent.parent)
    own = {"NN_FROM_SCRATCH_OFFLINE": "1",
           "JAX_PPRINT_USE_COLOR": "false"}  # jaxprs without colour codes in the saved outputs
    if sandboxed:
        language = {ENV: os.environ[ENV]} if ENV in os.environ else {}
        return {**own, **language, "PYTHONPATH": package_root, "PYTHONSAFEPATH": "1"}
    env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")]))
    return {**env, **own}


def _bounded_context() -> Any:
    """A ZeroMQ context whose sockets drop a peer that sends one message over MAX_MESSAGE, and
    hold at most QUEUE messages not yet read: a kernel that sends faster than they are read
    keeps the rest itself (ZeroMQ stops reading), in memory that its cap counts."""
    import zmq
    import zmq.asyncio

    context = zmq.asyncio.Context()
    context.setsockopt(zmq.MAXMSGSIZE, MAX_MESSAGE)
    context.setsockopt(zmq.RCVHWM, QUEUE)
    # a request sent where no kernel can take it (its connection dropped) fails after this,
    # never holds the loop every notebook shares (lesson 00's own solution did, for good)
    context.setsockopt(zmq.SNDTIMEO, SEND_TIMEOUT_MS)
    return context


class MessageTooBig(ValueError):
    """A kernel's message refused before it is parsed: the notebook ends, its row says why."""


def _too_big(size: int) -> MessageTooBig:
    return MessageTooBig(_("the kernel sent a message of {size} in all its parts, and the grader "
                           "reads at most {most} a message: refused unread").format(
                             size=format_bytes(size), most=format_bytes(MAX_MESSAGE_BYTES)))


def _refused(refusal: Refusal) -> MessageTooBig:
    """What the notebook's row says when its kernel's :class:`~.relay.Relay` ended."""
    if refusal.parts > RELAY_PARTS:
        return MessageTooBig(_("the kernel sent a message of {count:,} parts, and the grader "
                               "reads at most {most:,} a message: refused unread").format(
                                 count=refusal.parts, most=RELAY_PARTS))
    if refusal.channel in Relay.SIDE_CHANNELS:
        return MessageTooBig(_("the kernel sent a message of {size} on its {channel} channel, "
                               "where the grader reads at most {most} a message: refused "
                               "unread").format(size=format_bytes(refusal.size),
                                                channel=refusal.channel,
                                                most=format_bytes(RELAY_SIDE_BYTES)))
    if refusal.channel:
        return _too_big(refusal.size)
    return MessageTooBig(_("the kernel sent more at once than the grader takes in (at most "
                           "{most} of messages not yet read), or closed its own end of the "
                           "connection: refused").format(most=format_bytes(RELAY_MEMORY)))


def _bounded_parsing(client: Any) -> Any:
    """``client``, whose session parses no message part of more than :data:`MAX_VALUES` JSON
    values, nor more than :data:`MAX_TOTAL_VALUES` in all (a kernel that sent millions held the
    grader's memory past 1.2 GB and its classmate for 46 s instead of 8), nor more than
    :data:`MAX_PARTS` parts, nor one nested past Python's recursion limit; and reads no message
    of more than :data:`MAX_MESSAGE_BYTES`, nor more than :data:`MAX_BYTES` in all."""
    unpack, deserialize, total, parts, received = (client.session.unpack,
                                                   client.session.deserialize, 0, 0, 0)

    def counted(msg_list: list[Any], *args: Any, **kwargs: Any) -> Any:
        nonlocal received
        size = sum(len(part) for part in msg_list)
        received += size
        if size > MAX_MESSAGE_BYTES:
            raise _too_big(size)
        if received > MAX_BYTES:
            raise MessageTooBig(_("the kernel sent {size} of messages, and the grader reads at "
                                  "most {most} a notebook (a lesson sends under 10 MB): the rest "
                                  "refused unread").format(size=format_bytes(received),
                                                           most=format_bytes(MAX_BYTES)))
        return deserialize(msg_list, *args, **kwargs)

    def bounded(raw: Any) -> Any:
        nonlocal total, parts
        parts += 1
        if parts > MAX_PARTS:
            raise MessageTooBig(_("the kernel sent more than {most:,} messages, and a lesson "
                                  "sends about 600: the rest refused unread").format(
                                    most=MAX_PARTS))
        data = raw.encode() if isinstance(raw, str) else bytes(raw)
        values = json_values(data)
        total += values
        if values > MAX_VALUES:
            raise MessageTooBig(_("the kernel sent a message of about {count:,} JSON values, and "
                                  "the grader reads at most {most:,}: refused unread").format(
                                    count=values, most=MAX_VALUES))
        if total > MAX_TOTAL_VALUES:
            raise MessageTooBig(_("the kernel sent messages of about {count:,} JSON values in "
                                  "all, and the grader reads at most {most:,} a notebook: the "
                                  "rest refused unread").format(count=total, most=MAX_TOTAL_VALUES))
        try:
            return unpack(data)
        except RecursionError:
            raise MessageTooBig(_("the kernel sent a message nested too deep to read: "
                                  "refused")) from None
        except ValueError as err:  # not JSON, or a number past Python's 4,300 digits (red
            # team, round seventeen: a solved notebook's row said only "could not be run")
            raise MessageTooBig(_("the kernel sent a message that is not JSON the grader "
                                  "reads ({error}): refused").format(
                                    error=str(err).splitlines()[0][:120])) from None

    client.session.unpack, client.session.deserialize = bounded, counted
    return client


@functools.cache
def _boxed_manager() -> type:
    """A kernel manager whose kernel command is wrapped in its :class:`~.sandbox.Box`."""
    from jupyter_client.manager import AsyncKernelManager

    class BoxedKernelManager(AsyncKernelManager):  # type: ignore[misc]
        box: Box
        seccomp: int | None

        def format_kernel_cmd(self, extra_arguments: list[str] | None = None) -> list[str]:
            kernel = super().format_kernel_cmd(extra_arguments)
            return self.box.command(kernel, os.path.realpath(self.connection_file), self.seccomp)

        def write_connection_file(self, **kwargs: Any) -> None:
            super().write_connection_file(**kwargs)
            os.chmod(self.connection_file, 0o644)  # the kernel's user reads it, read-only

    return BoxedKernelManager


class Kernel:
    """A started IPython kernel (and its client), ready to run one notebook.

    Started in ``cwd`` with this process's rights, or in ``box``, a sandbox of its own
    (which it removes when shut down).
    """

    def __init__(self, manager: Any, client: Any, seconds: float, box: Box | None = None) -> None:
        self.manager, self.client, self.seconds, self.box = manager, client, seconds, box
        self._events: dict[str, Any] = {}  # channel ("iopub", "shell") -> what becomes of its
        # connection (a monitor of its socket)
        self.relay: Relay | None = None  # a sandboxed kernel's: its messages pass through it
        self.refused: MessageTooBig | None = None  # set when the relay refused one
        self._relay_watch: asyncio.Task[None] | None = None

    @classmethod
    async def start(cls, cwd: str | Path = ".", warm: bool = True,
                    box: Box | None = None) -> "Kernel":
        """Start a kernel in ``cwd`` (or in ``box``); with ``warm``, import what every lesson
        imports first."""
        start = time.monotonic()
        # no kernel chatter; an error shows as its message, not a traceback through JAX
        arguments = ["--Application.log_level=ERROR", "--InteractiveShell.xmode=Minimal"]
        kernel = await (cls._start_boxed(box, arguments) if box else cls._start(cwd, arguments))
        try:
            kernel.client.start_channels()
            kernel.client.allow_stdin = False  # input() raises at once, never waits a cell's time
            kernel._watch("iopub")
            kernel._watch("shell")
            await kernel.client.wait_for_ready(timeout=60)
            if box:
                sealed = await kernel.client.execute_interactive(SEAL, silent=True,
                                                                 store_history=False, timeout=60)
                if sealed["content"]["status"] != "ok":  # never graded open to its children
                    raise RuntimeError("the sandboxed kernel could not make itself not "
                                       f"dumpable: {sealed['content'].get('evalue', '')}")
            if warm:
                await kernel.client.execute_interactive(WARM_UP, silent=True,
                                                        store_history=False, timeout=60)
        except BaseException:
            await kernel.shutdown()  # never leave a half-started kernel behind
            raise
        kernel.seconds = time.monotonic() - start
        return kernel

    @classmethod
    async def _start(cls, cwd: str | Path, arguments: list[str]) -> "Kernel":
        from jupyter_client.manager import AsyncKernelManager

        manager = AsyncKernelManager(kernel_name="python3")
        await manager.start_kernel(env=kernel_env(), cwd=str(cwd), extra_arguments=arguments)
        return cls(manager, _bounded_parsing(manager.client(context=_bounded_context())), 0.0)

    @classmethod
    async def _start_boxed(cls, box: Box, arguments: list[str]) -> "Kernel":
        manager = _boxed_manager()(kernel_name="python3", transport="ipc", ip=box.ip,
                                   connection_file=str(box.folder / "connection.json"))
        manager.box, manager.seccomp = box, box.open_seccomp()
        manager.kernel_spec.interrupt_mode = "message"  # a signal would stop bwrap itself
        kernel = cls(manager, None, 0.0, box)
        try:
            await manager.start_kernel(cwd=str(box.folder), extra_arguments=arguments,
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                       pass_fds=[fd for fd in [manager.seccomp] if fd is not None])
            deadline = time.monotonic() + 60
            while (ip := box.socket_ip(manager.provisioner.pid)) is None:
                if not await manager.is_alive() or time.monotonic() > deadline:
                    raise RuntimeError("the sandbox ended before its kernel started")
                await asyncio.sleep(0.01)
        except BaseException:
            await kernel.shutdown()
            raise
        finally:
            if manager.seccomp is not None:
                os.close(manager.seccomp)
        try:  # the sockets, seen from outside, reached through the relay alone
            kernel.relay = await Relay.start(
                ip, {channel: getattr(manager, f"{channel}_port") for channel in Relay.CHANNELS},
                Caps(MAX_MESSAGE, MAX_MESSAGE_BYTES, RELAY_SIDE_BYTES, RELAY_PARTS, QUEUE,
                     RELAY_MEMORY))
        except BaseException:
            await kernel.shutdown()
            raise
        kernel._relay_watch = asyncio.create_task(kernel._when_relay_ends(kernel.relay))
        manager.ip = kernel.relay.ip  # for the client and for interrupts
        manager._close_control_socket()  # connected at launch to the inside path: connect anew,
        manager.context = _bounded_context()  # bounded as the client's (it reads no reply)
        manager._connect_control_socket()
        kernel.client = _bounded_parsing(manager.client(context=_bounded_context()))
        return kernel

    async def _when_relay_ends(self, relay: Relay) -> None:
        """When the relay ends by itself (it refused a message): say why, and end the kernel,
        so that whatever waits on it (nbclient, a check's question) finds it dead. A relay
        that ended after its kernel (out of memory, a crash) refused nothing."""
        refusal = await relay.ended()
        if refusal is None and not await self.manager.is_alive():
            return
        self.refused = _refused(refusal or Refusal())
        await self.manager.provisioner.kill()

    def _watch(self, channel: str) -> None:
        import zmq

        self._events[channel] = getattr(self.client, f"{channel}_channel").socket \
            .get_monitor_socket(zmq.EVENT_DISCONNECTED)

    async def _reconnect(self, channel: str, settle: float) -> bool:
        """Connect ``channel`` anew if its connection was dropped (a message over MAX_MESSAGE
        ends it for good); True if it had been. ``settle``: seconds the new one takes."""
        events, dropped = self._events.get(channel), False
        if events is None:
            return False
        while await events.poll(0):
            await events.recv_multipart()
            dropped = True
        if dropped:
            getattr(self.client, f"{channel}_channel").stop()
            events.close(linger=0)
            setattr(self.client, f"_{channel}_channel", None)  # the property makes a new one
            getattr(self.client, f"{channel}_channel").start()
            self._watch(channel)
            await asyncio.sleep(settle)
        return dropped

    async def reconnect_requests(self) -> bool:
        """Connect the requests' channel anew if it was dropped (a reply over MAX_MESSAGE, an
        answer of 20 MB: every later request would wait for ever); True if it had been, and
        the reply was lost."""
        return await self._reconnect("shell", 0.1)

    async def reconnect_outputs(self) -> bool:
        """Connect the output channel anew if it was dropped; True if it had been, and outputs
        were lost (a subscription takes a moment to reach the kernel)."""
        return await self._reconnect("iopub", 0.2)

    @property
    def pid(self) -> int | None:
        """The kernel's process (in a sandbox: ``bwrap``, whose descendants are all of it)."""
        return getattr(self.manager.provisioner, "pid", None)

    async def shutdown(self) -> None:
        if self._relay_watch is not None:
            self._relay_watch.cancel()  # the relay's end, from here on, is no refusal
        try:
            if self.client is not None:
                for events in self._events.values():
                    events.close(linger=0)
                self.client.stop_channels()
                self.client.context.destroy(linger=0)
            if await self.manager.is_alive():
                await self.manager.shutdown_kernel(now=True)
            await self.manager.cleanup_resources()
        finally:
            if self.relay is not None:
                self.manager.context.destroy(linger=0)
                await self.relay.stop()
            if self.box:
                self.box.remove()


def _error_line(cell: Any, limit: int = 300) -> str:
    """``"NameError: name 'x' is not defined"``: a cell's exception, its first line, bounded."""
    for output in cell.get("outputs", []):
        if output.get("output_type") == "error":
            error = _error(output)
            line = f"{error['ename']}: {error['evalue']}".strip().rstrip(":")
            return line if len(line) <= limit else line[:limit - 1] + "…"
    return ""




def _size(content: Any) -> int:
    """About how many bytes a message part holds (its strings and binary buffers, at any
    depth; a number counts 8), walked without recursing: a kernel picks the nesting."""
    total, stack = 0, [content]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            total += len(item)
        elif isinstance(item, (bytes, bytearray, memoryview)):
            total += memoryview(item).nbytes
        elif isinstance(item, dict):
            total += sum(len(str(key)) for key in item)
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
        else:
            total += 8
    return total


def _message_size(msg: dict[str, Any]) -> int:
    """Every byte of a message the kernel sent: content, metadata and binary buffers (a comm
    message's buffers are the widget's state, which the runner keeps)."""
    return _size([msg.get("content"), msg.get("metadata"), msg.get("buffers") or []])


def _error(content: dict[str, Any]) -> dict[str, Any]:
    """An error's name and first line only, bounded: what the runner and the grader report."""
    first = str(content.get("evalue", "")).strip().split("\n", 1)[0]
    return {**content, "ename": str(content.get("ename", "Error"))[:100],
            "evalue": first[:500], "traceback": []}


# the messages that make or change a cell's outputs
_OUTPUT_MESSAGES = frozenset({"stream", "display_data", "update_display_data", "execute_result",
                              "clear_output"})


@functools.cache
def _bounded_client() -> type:
    """nbclient's NotebookClient, keeping at most ``limits.cell_output`` bytes of outputs per
    cell and ``limits.output`` per notebook; an error always keeps its name and first line."""
    from jupyter_core.utils import ensure_async
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionComplete

    class BoundedClient(NotebookClient):  # type: ignore[misc]
        def bound(self, limits: Limits) -> None:
            self.limits, self.kept = limits, 0
            self.per_cell: dict[int, int] = {}
            self.outputs: dict[int, int] = {}  # output messages per cell
            self.cut: set[int] = set()
            self.refused: MessageTooBig | None = None

        async def _async_poll_output_msg(self, parent_msg_id: str, cell: Any,
                                         cell_index: int) -> None:
            """nbclient's reading of a cell's output messages, paced past the cell's
            ``cell_outputs`` messages (:data:`PACE`). An earlier cell's, still queued when this
            one starts, are read as fast as they come: paced, they would hold this cell's own
            behind them past nbclient's wait for its outputs. A message refused unread ends the
            cell at once (nbclient would wait for its reply): the notebook ends there."""
            assert self.kc is not None
            read = 0
            while True:
                try:
                    msg = await ensure_async(self.kc.iopub_channel.get_msg(timeout=None))
                except MessageTooBig as refused:
                    self.refused = refused
                    if self.task_poll_for_reply is not None:
                        self.task_poll_for_reply.cancel()  # nbclient: "the kernel died"
                    raise
                if msg["parent_header"].get("msg_id") != parent_msg_id:
                    continue
                try:
                    self.process_message(msg, cell, cell_index)
                except CellExecutionComplete:
                    return
                read += 1
                if read > self.limits.cell_outputs:
                    await asyncio.sleep(PACE)

        def process_message(self, msg: dict[str, Any], cell: Any, cell_index: int) -> Any:
            kind = msg["msg_type"]
            if kind in _OUTPUT_MESSAGES:
                count = self.outputs[cell_index] = self.outputs.get(cell_index, 0) + 1
                if count > self.limits.cell_outputs:
                    self.cut.add(cell_index)
                    return None
            size = _message_size(msg)
            used = self.per_cell.get(cell_index, 0)
            if used + size > self.limits.cell_output or self.kept + size > self.limits.output:
                self.cut.add(cell_index)
                if kind == "status":  # the end of the cell: its state alone, nothing it carried
                    msg = {**msg, "metadata": {}, "buffers": [], "content": {
                        "execution_state": str(msg["content"].get("execution_state"))[:20]}}
                elif kind == "error":
                    msg = {**msg, "metadata": {}, "buffers": [], "content": _error(msg["content"])}
                else:
                    return None
                size = _message_size(msg)
            self.per_cell[cell_index], self.kept = used + size, self.kept + size
            try:
                return super().process_message(msg, cell, cell_index)
            except CellExecutionComplete:
                raise
            except Exception:  # a malformed message (a widget's without its model): dropped
                return None

    return BoundedClient


# What the grader does in place of running a cell (a check, decided in its own process): given
# the kernel and the seconds the cell may take, how it went.
Hook = Callable[[Kernel, float], Awaitable[CellRun]]


async def run_cells(nb: Any, kernel: Kernel, limits: Limits = DEFAULT_LIMITS,
                    quiet: Collection[int] = (), hooks: Mapping[int, Hook] | None = None,
                    prologue: str = "") -> list[CellRun]:
    """Run ``nb``'s code cells (outputs written in place) in ``kernel``, then shut it down.

    Cells whose index is in ``quiet`` run without entering the kernel's history (``In``,
    ``_i``); for those in ``hooks``, the hook runs instead of the cell, within the cell's time.
    ``prologue`` runs first, quietly. Returns one :class:`CellRun` per non-empty code cell.
    """
    from nbclient.exceptions import DeadKernelError

    client = _bounded_client()(nb, km=kernel.manager, kernel_name="python3", allow_errors=True,
                               interrupt_on_timeout=True)
    client.bound(limits)
    client.kc = kernel.client
    watch = MemoryWatch(kernel.pid, limits.memory)
    runs: list[CellRun] = []
    deadline = time.monotonic() + limits.timeout
    broken: CellRun | None = None  # once the kernel can run nothing more: what later cells get
    hooks = hooks or {}
    if kernel.box is not None:
        kernel.box.share.run()  # the notebook's code begins: cores of its own from now on
    try:
        async with client.async_setup_kernel(cleanup_kc=False), watch:
            if prologue:
                await kernel.client.execute_interactive(
                    prologue, silent=True, store_history=False, timeout=60,
                    output_hook=lambda msg: None)
            for index, cell in enumerate(nb.cells):
                if cell.cell_type != "code" or not cell.source.strip():
                    continue
                limit = min(limits.cell_timeout, deadline - time.monotonic())
                if kernel.refused:
                    raise kernel.refused
                if broken:
                    runs.append(CellRun(index, broken.status, broken.error))
                    continue
                if limit <= 0:
                    runs.append(CellRun(index, "timed out", f"was not run: the notebook's "
                                                            f"{limits.timeout:g} s had run out"))
                    continue
                if index in hooks:
                    run = await hooks[index](kernel, limit)
                    if kernel.refused:
                        raise kernel.refused
                    if watch.tripped:
                        run = CellRun(index, "out of memory", f"used more than "
                                      f"{format_bytes(watch.cap)} of memory and was stopped",
                                      run.seconds)
                        broken = CellRun(index, "out of memory", "was not run: the kernel "
                                                                 "was stopped (out of memory)")
                    elif not await kernel.manager.is_alive():
                        broken = CellRun(index, "error", "was not run: the kernel had died")
                    runs.append(run)
                    continue
                client.timeout = max(1, math.ceil(limit))
                start = time.monotonic()
                try:
                    await asyncio.wait_for(client.async_execute_cell(
                        cell, index, store_history=index not in quiet), limit + GRACE)
                except (TimeoutError, DeadKernelError):  # nbclient reports a time-out as death
                    if refused := client.refused or kernel.refused:
                        raise refused from None
                    seconds = time.monotonic() - start
                    if watch.tripped:
                        runs.append(CellRun(index, "out of memory", "used more than "
                                            f"{format_bytes(watch.cap)} of memory and was "
                                            f"stopped", seconds))
                        broken = CellRun(index, "out of memory", "was not run: the kernel "
                                                                 "was stopped (out of memory)")
                    elif seconds >= limit + GRACE - 1:
                        runs.append(CellRun(index, "timed out", f"ran past {limit:.0f} s and "
                                                                f"ignored the interrupt", seconds))
                        broken = CellRun(index, "timed out", "was not run: an earlier cell could "
                                                             "not be interrupted")
                    else:
                        runs.append(CellRun(index, "error", "made the kernel die (a crash)",
                                            seconds))
                        broken = CellRun(index, "error", "was not run: the kernel had died")
                    continue
                seconds = time.monotonic() - start
                if await kernel.reconnect_outputs():
                    client.cut.add(index)
                await kernel.reconnect_requests()
                error = _error_line(cell)
                if error.startswith("KeyboardInterrupt") and seconds >= limit - 1:
                    runs.append(CellRun(index, "timed out", f"was interrupted after {limit:.0f} s",
                                        seconds))
                else:
                    runs.append(CellRun(index, "error" if error else "ok", error, seconds,
                                        raised=bool(error)))
    finally:
        await kernel.shutdown()
    return [replace(run, cut=run.index in client.cut) for run in runs]


def execute(nb: Any, *, timeout: float = NOTEBOOK_TIMEOUT, cell_timeout: float = CELL_TIMEOUT,
            memory: int | None = None, cwd: str | Path = ".",
            quiet: Collection[int] = ()) -> list[CellRun]:
    """Run ``nb`` (an ``nbformat`` notebook, changed in place) in a fresh kernel, offline.

    Cells run one by one with errors allowed: a cell that raises does not stop
    the rest. A cell that runs past ``cell_timeout`` seconds is interrupted;
    once ``timeout`` seconds have passed for the whole notebook no more cells
    start; past ``memory`` bytes the kernel is stopped. Returns one
    :class:`CellRun` per non-empty code cell.
    """
    limits = Limits(timeout, cell_timeout, memory)

    async def start_and_run() -> list[CellRun]:
        return await run_cells(nb, await Kernel.start(cwd), limits, quiet)

    return in_thread(start_and_run)


def in_thread(make: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run the coroutine ``make()`` to its end in a thread of its own, and return its result.

    Works even where an event loop already runs (in Jupyter); an exception is re-raised here.
    """
    result: list[T] = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            result.append(asyncio.run(make()))
        except BaseException as err:  # re-raised below, in the caller's thread
            failure.append(err)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    if failure:
        raise failure[0]
    return result[0]
