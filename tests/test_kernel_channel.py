"""What a kernel may send: past a notebook's messages, the rest is refused unread."""
import time

import nbformat
import pytest
from test_cell_outputs import RAW_FLOOD

from nn_from_scratch.notebook_runner import execute


@pytest.mark.slow
def test_a_kernel_that_sends_more_messages_than_a_notebook_may_is_refused(tmp_path, monkeypatch):
    """The backstop behind the pace: past MAX_PARTS message parts from one kernel (each of its
    cells reads its first ``cell_outputs`` messages at once), the rest is refused unread, and
    the notebook ends there, not when the cell does (this one would run for two more minutes)."""
    from nn_from_scratch import kernel_channel

    monkeypatch.setattr(kernel_channel, "MAX_PARTS", 2_000)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        RAW_FLOOD.format(n=5_000) + "\nimport time\ntime.sleep(120)")])
    start = time.monotonic()
    with pytest.raises(kernel_channel.MessageTooBig, match="more than 2,000 messages"):
        execute(nb, timeout=200, cell_timeout=150, cwd=tmp_path)
    assert time.monotonic() - start < 60, "the notebook ran on after its message was refused"
