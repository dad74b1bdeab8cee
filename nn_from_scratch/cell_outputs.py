"""What a run keeps of a cell's outputs: bounded in bytes and in messages, read at a pace.

:func:`bounded_client` is nbclient's ``NotebookClient`` keeping at most ``cell_output`` and
``output`` bytes of what a cell sends (outputs, comm messages with their binary buffers, every
message's content and metadata) per cell and per notebook, and ``cell_outputs`` output
messages per cell: the rest is dropped and the cell marked ``cut``, so that a kernel that
displays gigabytes cannot grow the process that runs it, nor tiny displays by the thousand hold
the thread that reads them (each kept one costs the runner a validated notebook output; past
``cell_outputs`` a cell's messages are read at most one per :data:`PACE`). An error keeps its
name and first line (:func:`error_line`).
"""
import asyncio
import functools
from typing import Any, Protocol

from .kernel_channel import MessageTooBig

__all__ = ["PACE", "OutputLimits", "bounded_client", "error_line"]

# Past a cell's ``cell_outputs`` messages, the runner reads that cell's messages at most one
# per PACE seconds (the kernel's own queue drops the rest): every message read holds the loop
# that all kernels' replies go through, and a flood of tiny displays, read as fast as it came,
# held each of a classmate's round trips (a check makes hundreds) behind it.
PACE = 0.01


class OutputLimits(Protocol):
    """Bytes of outputs kept for a cell and for a notebook; output messages kept for a cell."""

    @property
    def cell_output(self) -> int: ...
    @property
    def output(self) -> int: ...
    @property
    def cell_outputs(self) -> int: ...


def error_line(cell: Any, limit: int = 300) -> str:
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
def bounded_client() -> type:
    """nbclient's NotebookClient, keeping at most ``limits.cell_output`` bytes of outputs per
    cell and ``limits.output`` per notebook; an error always keeps its name and first line."""
    from jupyter_core.utils import ensure_async
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionComplete

    class BoundedClient(NotebookClient):  # type: ignore[misc]
        def bound(self, limits: OutputLimits) -> None:
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
