"""What a kernel may send the process that reads it, and how much of it that process takes in.

A kernel's messages are data from a program the reader does not trust (a graded notebook's). A
message is refused before it is parsed when it is too big (ZeroMQ drops a part over
:data:`MAX_MESSAGE`; :func:`bounded_parsing` refuses a message of more than
:data:`MAX_MESSAGE_BYTES` and a kernel's more than :data:`MAX_BYTES` in all), too many
(:data:`MAX_PARTS`), or holds too many JSON values (:data:`MAX_VALUES` a message,
:data:`MAX_TOTAL_VALUES` a kernel) or nesting past Python's recursion limit; at most
:data:`QUEUE` wait unread on each channel (:func:`bounded_context`), the rest in the kernel's
own memory. A sandboxed kernel's messages pass through a :class:`~.relay.Relay` first, under
the caps below; :func:`relay_refusal` says why one ended. Each refusal is a
:class:`MessageTooBig`: the notebook ends, and its row says why.
"""
from typing import Any

from .i18n import _
from .memory_watch import format_bytes
from .relay import Refusal, Relay
from .wire import LIMITS, json_values

__all__ = ["MAX_BYTES", "MAX_MESSAGE", "MAX_MESSAGE_BYTES", "MAX_PARTS", "MAX_TOTAL_VALUES",
           "MAX_VALUES", "QUEUE", "RELAY_MEMORY", "RELAY_PARTS", "RELAY_SIDE_BYTES",
           "SEND_TIMEOUT_MS", "MessageTooBig", "bounded_context", "bounded_parsing",
           "relay_refusal"]

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


def bounded_context() -> Any:
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


def relay_refusal(refusal: Refusal) -> MessageTooBig:
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


def bounded_parsing(client: Any) -> Any:
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
