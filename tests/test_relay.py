"""The relay between a kernel's sockets and the grader's (issue 35): what it passes on, both
ways, as the kernel sent it; what it refuses, and why; that it keeps the flow's bounds; and that
a kernel's end is no refusal. A stand-in kernel here binds the sockets a Jupyter kernel binds."""
import asyncio

import psutil
import pytest
import zmq

from nn_from_scratch.relay import Caps, Refusal, Relay

CAPS = Caps(part_bytes=2**20, message_bytes=2 * 2**20, side_bytes=2**16, parts=50, queue=4,
            memory=64 * 2**20)
PORTS = {"shell": 1, "control": 2, "stdin": 3, "hb": 4, "iopub": 5}


class StandIn:
    """A kernel's five sockets, bound where a relay can reach them, and a grader's five,
    connected to the relay."""

    def __init__(self, tmp_path, caps=CAPS, manual=False):
        """``manual``: the kernel's output socket keeps sending after an unsubscription (as a
        kernel that speaks ZeroMQ's protocol itself may)."""
        self.context, self.manual = zmq.Context(), manual
        self.ip = f"{tmp_path}/k"
        self.kernel = {}
        for channel, port in PORTS.items():
            sock = self.context.socket(zmq.XPUB if channel == "iopub" else zmq.ROUTER)
            sock.setsockopt(zmq.LINGER, 0)
            sock.setsockopt(zmq.SNDHWM, 4)  # a few: the flow's bounds show at once
            if channel == "iopub" and manual:
                sock.setsockopt(zmq.XPUB_MANUAL, 1)
            sock.bind(f"ipc://{self.ip}-{port}")
            self.kernel[channel] = sock
        self.caps = caps

    async def start(self):
        self.relay = await Relay.start(self.ip, PORTS, self.caps)
        self.grader = {}
        for channel, port in PORTS.items():
            sock = self.context.socket(zmq.SUB if channel == "iopub" else zmq.DEALER)
            sock.setsockopt(zmq.LINGER, 0)
            sock.setsockopt(zmq.RCVTIMEO, 5000)
            sock.setsockopt(zmq.RCVHWM, 4)  # as the grader's own sockets
            if channel == "iopub":
                sock.setsockopt(zmq.SUBSCRIBE, b"")
            sock.connect(f"ipc://{self.relay.ip}-{port}")
            self.grader[channel] = sock
        # the subscription reaches the kernel through the relay: then outputs flow
        self.kernel["iopub"].setsockopt(zmq.RCVTIMEO, 5000)
        assert self.kernel["iopub"].recv() == b"\x01"
        if self.manual:
            self.kernel["iopub"].setsockopt(zmq.SUBSCRIBE, b"")  # for good
        return self

    def ask(self, channel, *parts):
        """The grader asks on ``channel``; the kernel gets it (with the identities a kernel
        replies to) and answers it; what the grader reads."""
        self.grader[channel].send_multipart(list(parts))
        self.kernel[channel].setsockopt(zmq.RCVTIMEO, 5000)
        *identities, question = self.kernel[channel].recv_multipart()
        self.kernel[channel].send_multipart([*identities, b"answer to " + question])
        return self.grader[channel].recv_multipart()

    async def close(self):
        await self.relay.stop()
        self.context.destroy(linger=0)

    async def __aenter__(self):
        return await self.start()

    async def __aexit__(self, *exc):
        await self.close()


def run(coroutine):
    return asyncio.run(coroutine)


def test_messages_pass_both_ways_on_every_channel_as_they_were_sent(tmp_path):
    async def go():
        async with StandIn(tmp_path) as stand_in:
            for channel in ("shell", "control", "stdin", "hb"):
                assert stand_in.ask(channel, channel.encode()) == [b"answer to " + channel.encode()]
            parts = [b"stream", b"<IDS|MSG>", b"x" * 1000, b"", b"y" * (2**20 - 10)]
            stand_in.kernel["iopub"].send_multipart(parts)
            assert stand_in.grader["iopub"].recv_multipart() == parts
            assert stand_in.relay.process.returncode is None
    run(go())


@pytest.mark.parametrize("parts, size, refusal", [
    (51, 51 * 10, Refusal(51, 510, "iopub")),  # more parts than the caps
    (3, 3 * 2**20, Refusal(3, 3 * 2**20, "iopub")),  # each part under part_bytes, more in all
])
def test_a_message_past_the_caps_ends_the_relay_with_its_parts_and_size(tmp_path, parts, size,
                                                                         refusal):
    async def go():
        async with StandIn(tmp_path) as stand_in:
            stand_in.kernel["iopub"].send_multipart([b"x" * (size // parts)] * parts)
            assert await asyncio.wait_for(stand_in.relay.ended(), 10) == refusal
            with pytest.raises(zmq.Again):  # nothing of it was passed on
                stand_in.grader["iopub"].recv_multipart()
    run(go())


def test_a_part_past_part_bytes_goes_on_for_the_graders_own_zeromq_to_drop(tmp_path):
    """As without a relay: the grader's socket (whose ZeroMQ caps a part) drops the connection
    unread and connects anew; the notebook goes on."""
    async def go():
        async with StandIn(tmp_path) as stand_in:
            stand_in.kernel["iopub"].send_multipart([b"head", b"z" * (3 * 2**20)])
            assert [len(p) for p in stand_in.grader["iopub"].recv_multipart()] == [4, 3 * 2**20]
            assert stand_in.relay.process.returncode is None
    run(go())


def test_a_message_too_big_to_take_in_ends_the_relay_not_the_grader(tmp_path):
    """100 parts of 1 MB: the relay's ZeroMQ cannot take it in under its memory (ZeroMQ caps a
    message's parts, not their number), drops it, and the relay says so."""
    caps = Caps(part_bytes=2**20, message_bytes=2 * 2**20, side_bytes=2**16, parts=1000,
                queue=4, memory=32 * 2**20)

    async def go():
        async with StandIn(tmp_path, caps) as stand_in:
            stand_in.kernel["iopub"].send_multipart([b"w" * 2**20] * 100, copy=False)
            assert await asyncio.wait_for(stand_in.relay.ended(), 10) == Refusal()
    run(go())


def test_a_kernel_that_ends_ends_its_relay_with_no_refusal(tmp_path):
    async def go():
        async with StandIn(tmp_path) as stand_in:
            for sock in stand_in.kernel.values():
                sock.close(linger=0)
            assert await asyncio.wait_for(stand_in.relay.ended(), 10) is None
    run(go())


def test_outputs_faster_than_the_grader_reads_wait_in_the_kernel(tmp_path):
    """Outputs the grader does not read: the relay holds a few (``queue`` on each side, one
    passing; the sockets' own buffers a few more of 100 kB), and the kernel's own socket fills,
    as if the grader read it directly; none is lost on the way."""
    async def go():
        async with StandIn(tmp_path) as stand_in:
            iopub = stand_in.kernel["iopub"]
            iopub.setsockopt(zmq.XPUB_NODROP, 1)  # full: says so, rather than drop
            sent = await sent_until_full(iopub, [b"stream", b"o" * 100_000], 200, 0.05)
            assert sent < 60, sent  # without a bound on the relay's side: all 200
            assert read_all(stand_in.grader["iopub"]) == sent
    run(go())


async def sent_until_full(sock, parts, tries, pause):
    """How many of ``tries`` sends of ``parts`` ``sock`` took at once (when full: a pause)."""
    sent = 0
    for _ in range(tries):
        try:
            sock.send_multipart(parts, flags=zmq.NOBLOCK)
            sent += 1
        except zmq.Again:
            await asyncio.sleep(pause)
    return sent


def read_all(sock):
    """How many messages ``sock`` gets until none comes for half a second."""
    sock.setsockopt(zmq.RCVTIMEO, 500)
    read = 0
    while True:
        try:
            sock.recv_multipart()
            read += 1
        except zmq.Again:
            return read


@pytest.mark.parametrize("channel", ["shell", "control"])
def test_a_kernel_gets_one_reply_through_for_each_request(tmp_path, channel):
    """Red team, round thirteen: one interrupt answered with 80 messages of 32 MB filled the
    grader's control socket, which nobody reads (2.3 GB), and tiny messages sent to no one had
    the relay read and drop them at 70 CPU-s a minute. The relay reads a reply only when one is
    owed: the rest wait in the kernel, and cost the relay nothing."""
    async def go():
        async with StandIn(tmp_path) as stand_in:
            kernel, grader = stand_in.kernel[channel], stand_in.grader[channel]
            kernel.setsockopt(zmq.ROUTER_MANDATORY, 1)
            grader.send(b"interrupt")
            identities = kernel.recv_multipart()[:-1]
            cpu = psutil.Process(stand_in.relay.process.pid).cpu_times()
            sent = await sent_until_full(kernel, [*identities, b"r" * 60_000], 2_000, 0.001)
            assert sent < 40, sent  # the relay took no more than its socket's queue (and the
            # sockets' own buffers a few of 60 kB): without the bound, all 2,000
            assert read_all(grader) == 1
            spent = psutil.Process(stand_in.relay.process.pid).cpu_times()
            assert spent.user + spent.system - cpu.user - cpu.system < 0.5, (cpu, spent)
            grader.send(b"another")  # one more owed: one more passes
            assert read_all(grader) == 1
    run(go())


def test_a_big_message_on_a_side_channel_ends_the_relay(tmp_path):
    """Control, stdin and the heartbeat carry messages of a few hundred bytes: one over
    ``side_bytes`` is refused, whatever its parts."""
    async def go():
        async with StandIn(tmp_path) as stand_in:
            stand_in.grader["control"].send(b"interrupt")
            identities = stand_in.kernel["control"].recv_multipart()[:-1]
            stand_in.kernel["control"].send_multipart([*identities, b"c" * 2**17])
            refusal = await asyncio.wait_for(stand_in.relay.ended(), 10)
            assert refusal.channel == "control" and refusal.size > 2**17, refusal
    run(go())


def test_outputs_wait_in_the_kernel_while_the_grader_is_not_subscribed(tmp_path):
    """When the grader's output socket goes (it connects anew after a part over 16 MB), the
    relay reads no outputs until it is back: none would reach anyone (a kernel's own ZeroMQ
    stops sending them; one that speaks the protocol itself may not)."""
    async def go():
        async with StandIn(tmp_path, manual=True) as stand_in:
            iopub = stand_in.kernel["iopub"]
            iopub.setsockopt(zmq.XPUB_NODROP, 1)
            stand_in.grader["iopub"].close(linger=0)
            assert iopub.recv() == b"\x00"  # the unsubscription, through the relay
            sent = await sent_until_full(iopub, [b"stream", b"o" * 100_000], 500, 0.001)
            assert sent < 40, sent  # the kernel's own queue, and the relay's, then full
    run(go())


def test_the_relay_ends_when_the_grader_stops_it_and_leaves_no_folder(tmp_path):
    async def go():
        stand_in = await StandIn(tmp_path).start()
        folder = stand_in.relay.folder
        await stand_in.close()
        return stand_in.relay.process.returncode, folder
    returncode, folder = run(go())
    assert returncode == 0
    assert not __import__("os").path.exists(folder)


class Trap:
    """A listening socket elsewhere on the machine (outside a sandbox): who connected to it."""

    def __init__(self, path):
        import socket
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.bind(str(path))
        self.sock.listen(16)
        self.sock.setblocking(False)
        self.path = path

    def connections(self):
        count = 0
        while True:
            try:
                self.sock.accept()[0].close()
            except BlockingIOError:
                return count
            count += 1


def test_a_kernel_that_puts_links_in_its_sockets_place_never_has_the_relay_connect_there(
        tmp_path):
    """Red team, round fourteen: a kernel (which owns its sockets' folder) put, in each socket's
    place, a symbolic link to a socket elsewhere, then closed one of its own: ZeroMQ connected
    anew, and the relay's probes followed the links, as the grader's user, outside the sandbox
    (6 connections). The relay connects to the sockets it found at its start, whatever lies at
    their paths later."""
    import os

    (tmp_path / "machine").mkdir()
    trap = Trap(tmp_path / "machine" / "service.sock")

    async def go():
        async with StandIn(tmp_path) as stand_in:
            assert stand_in.ask("shell", b"before") == [b"answer to before"]
            for port in PORTS.values():
                path = f"{stand_in.ip}-{port}"
                os.rename(path, path + "-moved")
                os.symlink(trap.path, path)
            stand_in.kernel["stdin"].close(linger=0)  # a connection dropped: connect anew
            assert await asyncio.wait_for(stand_in.relay.ended(), 10) is None
    run(go())
    assert trap.connections() == 0


def test_a_link_where_a_kernel_socket_should_be_stops_the_relay_before_it_is_ready(tmp_path):
    import os

    (tmp_path / "machine").mkdir()
    trap = Trap(tmp_path / "machine" / "service.sock")
    stand_in = StandIn(tmp_path)
    path = f"{stand_in.ip}-{PORTS['hb']}"
    os.rename(path, path + "-moved")
    os.symlink(trap.path, path)
    with pytest.raises(RuntimeError, match="not a socket of the kernel's"):
        run(stand_in.start())
    stand_in.context.destroy(linger=0)
    assert trap.connections() == 0
