"""A Jupyter kernel started for one notebook: in this process's rights, or in a sandbox.

:meth:`Kernel.start` starts an IPython kernel, offline (:func:`kernel_env`), with what every
lesson imports already imported (:data:`WARM_UP`), so that a batch can start the next kernel
while one notebook runs. In a :class:`~.sandbox.Box` the kernel sees nothing of the machine
but what a lesson needs, makes itself not dumpable before any of its notebook runs
(:data:`SEAL`), and is reached through a :class:`~.relay.Relay` alone: a process of its own
that takes in each of the kernel's messages first, under a memory cap of its own. Either way
the client's channels read what :mod:`.kernel_channel` allows; a connection that a message
over ``MAX_MESSAGE`` dropped is made anew before the next cell (:meth:`Kernel.reconnect_outputs`,
:meth:`Kernel.reconnect_requests`). :mod:`.notebook_runner` runs a notebook's cells in it.
"""
import asyncio
import functools
import os
import subprocess
import time
from pathlib import Path
from typing import Any

from .i18n import ENV
from .kernel_channel import (
    MAX_MESSAGE,
    MAX_MESSAGE_BYTES,
    QUEUE,
    RELAY_MEMORY,
    RELAY_PARTS,
    RELAY_SIDE_BYTES,
    MessageTooBig,
    bounded_context,
    bounded_parsing,
    relay_refusal,
)
from .relay import Caps, Refusal, Relay
from .sandbox import Box
from .seccomp import PROGRAMS, program, seccomp_number

__all__ = ["NO_PROGRAMS", "SEAL", "WARM_UP", "Kernel", "kernel_env"]

# What every lesson imports first; importing (no computation) leaves JAX's backend unstarted,
# so lessons that configure devices in their first cell still can.
WARM_UP = "import numpy, jax, jax.numpy, nn_from_scratch, nn_from_scratch.exercises"
# A sandboxed kernel makes itself not dumpable before any of its notebook runs: no other
# process of its sandbox may then trace it or read or write its memory (ptrace,
# /proc/PID/mem), which Linux checks against that flag. A child process started through a
# library (red team, round seventeen) runs code the grader's reading never saw; it must not
# reach into the kernel, as it no longer can through the kernel's sockets (relay.py).
SEAL = "import ctypes as _c\n_c.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE, 0\ndel _c"
# ...and, where its lesson starts no program, stacks a filter on every one of its threads
# (SECCOMP_FILTER_FLAG_TSYNC) that refuses execve (seccomp.PROGRAMS): {program} is the filter,
# {number} the seccomp system call's number
NO_PROGRAMS = """import ctypes as _c
_p = bytes.fromhex("{program}")
_b = _c.create_string_buffer(_p, len(_p))
class _F(_c.Structure):
    _fields_ = [("len", _c.c_ushort), ("filter", _c.c_void_p)]
_l = _c.CDLL(None, use_errno=True)
_l.prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS
if _l.syscall({number}, 1, 1, _c.byref(_F(len(_p) // 8, _c.addressof(_b)))) != 0:
    raise OSError(_c.get_errno(), "seccomp")
del _c, _p, _b, _F, _l"""


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
                await kernel._must_run(SEAL, "make itself not dumpable")  # never graded open
                # to its children
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
        return cls(manager, bounded_parsing(manager.client(context=bounded_context())), 0.0)

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
        manager.context = bounded_context()  # bounded as the client's (it reads no reply)
        manager._connect_control_socket()
        kernel.client = bounded_parsing(manager.client(context=bounded_context()))
        return kernel

    async def forbid_programs(self) -> bool:
        """From now on, no process of this sandboxed kernel can start a program (``execve``):
        one would run code the grader's reading never sees. False where it cannot be done
        here (no sandbox, or a machine with no seccomp table); an error if it fails."""
        filter_program, number = program(also=PROGRAMS), seccomp_number()
        if self.box is None or filter_program is None or number is None:
            return False
        await self._must_run(NO_PROGRAMS.format(program=filter_program.hex(), number=number),
                             "refuse to start programs")  # never graded open to one it starts
        return True

    async def _must_run(self, code: str, what: str) -> None:
        """Run ``code`` quietly, outside the kernel's history; an error that says the kernel
        could not do ``what`` if it raised."""
        reply = await self.client.execute_interactive(code, silent=True, store_history=False,
                                                      timeout=60)
        if reply["content"]["status"] != "ok":
            raise RuntimeError(f"the sandboxed kernel could not {what}: "
                               f"{reply['content'].get('evalue', '')}")

    async def _when_relay_ends(self, relay: Relay) -> None:
        """When the relay ends by itself (it refused a message): say why, and end the kernel,
        so that whatever waits on it (nbclient, a check's question) finds it dead. A relay
        that ended after its kernel (out of memory, a crash) refused nothing."""
        refusal = await relay.ended()
        if refusal is None and not await self.manager.is_alive():
            return
        self.refused = relay_refusal(refusal or Refusal())
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
