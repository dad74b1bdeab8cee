"""The relay between a sandboxed kernel's sockets and the grader's: a process of its own, with a
memory cap of its own, so that nothing a kernel sends can grow the grader.

ZeroMQ caps each part of a message (the runner's ``MAX_MESSAGE``), not their number, and takes
in a whole message before anyone can read its first part: a kernel that sent three messages of
60 parts of 15 MB took the grader to 3.0 GB before the first was refused (red team, round
eleven). Here each of the kernel's messages is taken in by this process first, under
:class:`Caps` of its own (memory as ``RLIMIT_DATA``): a message of more than ``message_bytes``
in all its parts, or of more than its ``parts``, ends the relay with one line saying
why, and one too big to take in ends it too (ZeroMQ aborts when it cannot allocate). What it
passes on, the grader reads as it would read the kernel's own sockets: nothing changes for an
honest notebook but one more hop.

Flow is kept as it was: a message goes on only when the other side has room (at most
``queue`` waiting on each), so a kernel that sends faster than the grader reads keeps the
rest itself, in memory its own cap counts, or drops it (its output channel) as before. And
the relay reads from the kernel only what the grader can use: on a channel of requests, one
reply for each request passed on, and outputs while the grader is subscribed; whatever else a
kernel sends waits in the kernel, and costs neither the relay nor the grader anything.

The grader starts it with :meth:`Relay.start`. Run as a script, it imports only ZeroMQ and the
standard library (the package's ``__init__`` would import JAX): ``python -I relay.py``, with
the kernel's sockets, where to bind its own, and its folder as one JSON argument; it prints
``ready`` once bound, and ends when its standard input closes.
"""
from __future__ import annotations

import json
import os
import resource
import shutil
import socket
import stat
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the script imports no asyncio: 0.1 s of each notebook's start
    import asyncio

__all__ = ["Caps", "Relay", "Refusal"]


@dataclass(frozen=True)
class Caps:
    """What a relay passes on: messages of at most ``message_bytes`` in all their parts and
    ``parts`` parts, at most ``queue`` waiting on each side of each channel; and the bytes of
    ``memory`` it may take in beyond what it holds when ready. A message with a part of more
    than ``part_bytes`` goes on whatever its size (if it fits in ``memory``): the grader's
    ZeroMQ drops that connection unread, and the grader connects anew, as without a relay."""

    part_bytes: int
    message_bytes: int
    side_bytes: int  # in all, a message on control, stdin or heartbeat (theirs: ~300 bytes)
    parts: int
    queue: int
    memory: int


# the channels of a Jupyter kernel: the kernel's socket types are ROUTER (requests and their
# replies), XPUB (outputs) and ROUTER or REP (heartbeat); facing it, the relay is the client
# the grader would be, and facing the grader, the kernel the grader expects
_CHANNELS = ("shell", "control", "stdin", "hb", "iopub")
_SIDE_CHANNELS = ("control", "stdin", "hb")  # messages of a few hundred bytes: Caps.side_bytes
_REFUSED = 3  # the relay's exit status when it refused a message (its line says which)
_SETTLE = 0.5  # seconds after a connection to the kernel drops before its sockets are tried
_BOUND = 20  # seconds the relay waits for a starting kernel to bind its sockets


@dataclass(frozen=True)
class Refusal:
    """Why a relay ended: ``parts`` and ``size`` of the message it refused, and its
    ``channel``; all empty when it ended without saying (a message too big to take in: ZeroMQ
    drops it; the kernel's connection closed by the kernel itself; or a crash)."""

    parts: int = 0
    size: int = 0
    channel: str = ""


class Relay:
    """A running relay for one kernel: connect to ``ip`` (Jupyter's ipc "ip") where the kernel's
    own sockets were (``kernel_ip``); :meth:`ended` says why it ended; :meth:`stop` ends it."""

    CHANNELS, SIDE_CHANNELS = _CHANNELS, _SIDE_CHANNELS

    def __init__(self, process: asyncio.subprocess.Process, folder: str, kernel_ip: str) -> None:
        self.process, self.folder, self.kernel_ip = process, folder, kernel_ip
        self.ip = f"{folder}/kernel"

    @classmethod
    async def start(cls, kernel_ip: str, ports: dict[str, int], caps: Caps,
                    seconds: float = 30) -> Relay:
        """Start a relay to the kernel whose ipc sockets are ``{kernel_ip}-{port}``, ``ports``
        naming each channel's, within ``caps``; ready when this returns (RuntimeError if it is
        not in time)."""
        folder = tempfile.mkdtemp(prefix="nn-relay-")  # this user's alone (0700), outside any
        # sandbox; short, since an ipc socket's path holds at most 107 bytes
        order = {"kernel": kernel_ip, "relay": f"{folder}/kernel", "ports": ports,
                 "caps": asdict(caps)}
        import asyncio

        process = await asyncio.create_subprocess_exec(
            sys.executable, "-I", __file__, json.dumps(order), stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
        relay = cls(process, folder, kernel_ip)
        try:
            assert process.stdout is not None
            line = await asyncio.wait_for(process.stdout.readline(), seconds)
            if line.strip() != b"ready":
                raise RuntimeError(f"the relay to the kernel did not start ({line[:200]!r})")
        except BaseException:
            await relay.stop()
            raise
        return relay

    async def ended(self) -> Refusal | None:
        """Wait until the relay ends by itself (the grader's own :meth:`stop` is not a
        refusal), and say why: ``None`` when the kernel ended first."""
        assert self.process.stdout is not None
        line = await self.process.stdout.readline()
        if await self.process.wait() == 0:
            return None
        try:
            found = json.loads(line)
            return Refusal(int(found["parts"]), int(found["size"]), str(found["channel"]))
        except (ValueError, KeyError, TypeError):  # killed by its cap, or a crash
            return Refusal()

    async def stop(self) -> None:
        """End the relay (closing its standard input ends it; killed if it has not in 5 s) and
        remove its folder."""
        import asyncio

        try:
            if self.process.returncode is None:
                if self.process.stdin is not None:
                    self.process.stdin.close()
                try:
                    await asyncio.wait_for(self.process.wait(), 5)
                except TimeoutError:
                    self.process.kill()
                    await self.process.wait()
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)


# What runs in the relay's own process (below: the script).

def _cap_memory(extra: int) -> None:
    """Let this process hold ``extra`` bytes more than now (its private writable memory, which
    ZeroMQ's buffers come from), and write no core file when past it."""
    with open("/proc/self/status") as status:
        held = next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmData:"))
    resource.setrlimit(resource.RLIMIT_DATA, (held + extra, held + extra))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _refuse(parts: int = 0, size: int = 0, channel: str = "") -> None:
    sys.stdout.write(json.dumps({"parts": parts, "size": size, "channel": channel}) + "\n")
    sys.stdout.flush()
    os._exit(_REFUSED)


def _serve(order: dict) -> None:  # type: ignore[type-arg]
    import zmq

    caps = Caps(**order["caps"])
    context = zmq.Context()
    context.setsockopt(zmq.LINGER, 0)
    route, inside, monitors = {}, {}, []  # socket -> the socket its messages go to; the
    # kernel's side -> its channel; a monitor of each of those: ZeroMQ drops a connection for
    # good when it cannot allocate a message (it does not abort), as it does when the kernel ends
    deadline = time.monotonic() + _BOUND
    kernel = {channel: _pinned(f"{order['kernel']}-{port}", deadline)
              for channel, port in order["ports"].items()}  # before any of the notebook runs
    identity = os.urandom(8).hex().encode()  # the kernel sends input requests on stdin to the
    # identity that sent the request on shell: one for both, as Jupyter's own clients have
    for channel in _CHANNELS:
        kinds = (zmq.XSUB, zmq.XPUB) if channel == "iopub" else (zmq.DEALER, zmq.ROUTER)
        near, far = context.socket(kinds[0]), context.socket(kinds[1])
        for sock in (near, far):
            sock.setsockopt(zmq.RCVHWM, caps.queue)
            sock.setsockopt(zmq.SNDHWM, caps.queue)
        if channel == "iopub":
            far.setsockopt(zmq.XPUB_NODROP, 1)  # full: wait here, not drop (the kernel drops)
        else:
            far.setsockopt(zmq.ROUTER_MANDATORY, 1)  # full: wait here, not drop silently
        if channel in ("shell", "stdin"):
            near.setsockopt(zmq.IDENTITY, identity)
        port = order["ports"][channel]
        near.connect(f"ipc://{kernel[channel]}")
        far.bind(f"ipc://{order['relay']}-{port}")
        route[near], route[far] = far, near
        inside[near] = channel
        monitors.append(near.get_monitor_socket(zmq.EVENT_DISCONNECTED))
    _cap_memory(caps.memory)
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    poller, stdin = zmq.Poller(), sys.stdin.fileno()
    for watched in (stdin, *monitors):  # stdin readable: the grader closed it
        poller.register(watched, zmq.POLLIN)
    pending: dict = {}  # socket -> the message waiting for room on it (its source unwatched)
    # What the kernel may send now, read only then (the rest waits in the kernel, whose memory
    # its cap counts, costing this process nothing): on a channel of requests, as many replies
    # as requests passed on (a kernel that answered one interrupt with 80 messages of 32 MB
    # held them in the grader's never-read control socket; one that sent tiny messages to no
    # one had this process read and drop them at 70 CPU-s a minute: red team, round thirteen);
    # outputs, while the grader is subscribed.
    owed = dict.fromkeys(inside, 0)
    subscribed = [False]

    def watch(sock) -> None:  # type: ignore[no-untyped-def]
        """Watch ``sock`` for what it may do now: read, if its target has room and (the
        kernel's side) the kernel may send; write, if a message waits for room on it."""
        may = (subscribed[0] if inside.get(sock) == "iopub" else owed[sock] > 0) \
            if sock in inside else True
        flags = zmq.POLLIN if may and route[sock] not in pending else 0
        if sock in pending and sock.type != zmq.XPUB:  # an XPUB always says it has room:
            flags |= zmq.POLLOUT                       # tried every ms
        poller.register(sock, flags)  # (0: not watched)

    def passed(source, message) -> None:  # type: ignore[no-untyped-def, type-arg]
        """Count what ``message`` from ``source`` changes: owed replies, the subscription."""
        if source in inside:
            if inside[source] != "iopub":
                owed[source] -= 1
        elif source.type == zmq.XPUB:
            subscribed[0] = bytes(message[0])[:1] == b"\x01"  # (un)subscribe: 1 or 0
        else:
            owed[route[source]] += 1
        for sock in (source, route[source]):
            watch(sock)

    for sock in route:
        watch(sock)
    while True:
        ready = poller.poll(1 if any(t.type == zmq.XPUB for t in pending) else None)
        for item, _ in ready:
            if item == stdin:
                return
            if item in monitors:
                time.sleep(_SETTLE)
                if all(_listening(path) for path in kernel.values()):
                    _refuse()  # the kernel lives: ZeroMQ dropped a message too big to
                return             # take in; otherwise the kernel has ended
        for target, message in list(pending.items()):
            if _passed(target, message):
                del pending[target]
                passed(route[target], message)
        for source, events in ready:
            for _ in range(64):  # what waits, up to a bound: one wake-up for many
                if not events & zmq.POLLIN or route.get(source) in pending or (
                        source in inside and inside[source] != "iopub" and owed[source] < 1):
                    break
                try:
                    message = source.recv_multipart(zmq.NOBLOCK, copy=False)
                except zmq.Again:
                    break
                if source in inside:
                    sizes = [len(part) for part in message]
                    side = inside[source] in _SIDE_CHANNELS
                    if len(sizes) > caps.parts or (sum(sizes) > caps.side_bytes if side else (
                            sum(sizes) > caps.message_bytes and max(sizes) <= caps.part_bytes)):
                        _refuse(len(sizes), sum(sizes), inside[source])
                if _passed(route[source], message):
                    passed(source, message)
                else:
                    pending[route[source]] = message
                    for sock in (source, route[source]):
                        watch(sock)
                    break


def _pinned(path: str, deadline: float) -> str:
    """The kernel's socket at ``path`` (``/proc/PID/root/...``: the sandbox's root, then folders
    the kernel owns), once the kernel has bound it, as an address that names that very socket
    whatever the kernel later puts at ``path``: ``/proc/self/fd/N``, N opened without following
    a symbolic link past the sandbox's root. (ZeroMQ connects anew when a connection drops: a
    kernel that put in its sockets' place symbolic links to a socket of the machine, outside
    its sandbox, had this process, the grader's user, connect to it: red team, round
    fourteen.) Anything else there (a link, a file) ends the relay before it is ready. In a
    sandbox the path is then removed: the socket takes no connection but this process's."""
    names = path.strip("/").split("/")
    root = "/"  # (the stand-in kernels of the relay's tests are not in a sandbox)
    if len(names) > 3 and names[0] == "proc" and names[2] == "root":
        root, names = "/".join(["", *names[:3]]), names[3:]
    while True:
        opened = [os.open(root, os.O_PATH | os.O_DIRECTORY)]
        try:
            for name in names[:-1]:
                opened.append(os.open(name, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW,
                                      dir_fd=opened[-1]))
            found = os.open(names[-1], os.O_PATH | os.O_NOFOLLOW, dir_fd=opened[-1])
            if root != "/" and stat.S_ISSOCK(os.fstat(found).st_mode):
                os.unlink(names[-1], dir_fd=opened[-1])  # no process of the sandbox can
                # connect to it now: a child that read the connection file ran code in its
                # own kernel, unread, through the kernel's requests' channel (red team,
                # round seventeen); this process's address names the socket, not the path
        except FileNotFoundError:  # not bound yet
            if time.monotonic() > deadline:
                raise
            time.sleep(0.01)
            continue
        except OSError:  # a folder on the way that is a link or a file
            found = -1
        finally:
            for fd in opened:
                os.close(fd)
        if found < 0 or not stat.S_ISSOCK(os.fstat(found).st_mode):
            sys.stdout.write(f"not a socket of the kernel's: {path}\n")  # Relay.start says it
            sys.stdout.flush()
            os._exit(1)
        return f"/proc/self/fd/{found}"


def _listening(path: str) -> bool:
    """Whether a kernel's ipc socket at ``path`` still takes connections."""
    with socket.socket(socket.AF_UNIX) as probe:
        probe.settimeout(1)
        try:
            probe.connect(path)
        except OSError:
            return False
    return True


def _passed(target, message: list) -> bool:  # type: ignore[no-untyped-def, type-arg]
    """Send ``message`` on if ``target`` has room (False: try again later); one whose peer is
    gone (the grader connected anew) is dropped."""
    import zmq

    try:
        target.send_multipart(message, flags=zmq.NOBLOCK, copy=False)
    except zmq.Again:
        return False
    except zmq.ZMQError as err:
        if err.errno != zmq.EHOSTUNREACH:
            raise
    return True


if __name__ == "__main__":
    _serve(json.loads(sys.argv[1]))
