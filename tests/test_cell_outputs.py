"""What a run keeps of a cell's outputs: every byte counted, a flood cut and paced."""

import nbformat
import pytest

from nn_from_scratch.notebook_runner import execute


def test_comm_messages_and_their_binary_buffers_count_against_the_output_limits(tmp_path):
    """Issue 35: comm messages with binary buffers were not counted, and the runner kept every
    widget buffer it was sent (the grader grew to 3.2 GB); now every byte a cell sends counts."""
    import asyncio
    import json

    from nn_from_scratch.kernel import Kernel
    from nn_from_scratch.notebook_runner import Limits, run_cells

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in (
        "from comm import create_comm\nchunk = bytes(2**20)\n"
        "model = {'_model_module': 'm', '_model_name': 'M', '_model_module_version': '1'}\n"
        "widget = create_comm(target_name='jupyter.widget', data={'state': model})\n"
        "for n in range(24):  # 24 MB of buffers, each at a path of its own, so all are kept\n"
        "    widget.send(data={'method': 'update', 'state': {}, 'buffer_paths': [[f'p{n}']]},"
        " buffers=[chunk])",
        "create_comm(target_name='jupyter.widget', data={'state': {}})  # malformed: dropped",
        "print('after')")])

    async def run():
        return await run_cells(nb, await Kernel.start(tmp_path, warm=False), Limits(
            timeout=90, cell_timeout=60, cell_output=4 * 2**20, output=6 * 2**20))

    runs = asyncio.run(run())
    assert [run.status for run in runs] == ["ok", "ok", "ok"] and runs[0].cut, runs
    kept = len(json.dumps(nb.metadata.get("widgets", {})))
    assert kept <= 6 * 2**20, f"{kept / 2**20:.1f} MB of widget buffers kept"
    assert nb.cells[2].outputs[0]["text"] == "after\n"


def test_a_flood_of_tiny_outputs_is_cut_at_a_count_and_the_next_cells_run(tmp_path):
    """Red team round five: tiny displays by the thousand were each kept as a validated output
    (under the byte limits), which held the thread that reads every kernel; past
    ``cell_outputs`` a cell's outputs are dropped, said as cut, and the notebook goes on."""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in (
        "from IPython.display import display\nfor i in range(1500):\n"
        "    display({'text/plain': str(i)}, raw=True)",
        "for i in range(3):\n    display({'text/plain': 'x'}, raw=True)", "print('after')")])
    runs = execute(nb, timeout=90, cell_timeout=60, cwd=tmp_path)
    assert [r.status for r in runs] == ["ok", "ok", "ok"], runs
    assert runs[0].cut and len(nb.cells[0].outputs) <= 1_000, len(nb.cells[0].outputs)
    assert [o["data"]["text/plain"] for o in nb.cells[0].outputs[:2]] == ["0", "1"]
    assert not runs[1].cut and len(nb.cells[1].outputs) == 3  # a count of its own per cell
    assert nb.cells[2].outputs[0]["text"] == "after\n"


RAW_FLOOD = ("_k = get_ipython().kernel\nfor _ in range({n}):\n"
             "    _k.session.send(_k.iopub_socket, 'stream', content={{'name': 'stdout', "
             "'text': '.'}}, parent=_k.get_parent())")


def _counting_messages(monkeypatch):
    """The messages the runner reads from any kernel it starts (a list, one item each)."""
    from nn_from_scratch import kernel

    read, bounded = [], kernel.bounded_parsing

    def counting(client):
        client = bounded(client)
        deserialize = client.session.deserialize

        def counted(*args, **kwargs):
            read.append(1)
            return deserialize(*args, **kwargs)
        client.session.deserialize = counted
        return client
    monkeypatch.setattr(kernel, "bounded_parsing", counting)
    return read


@pytest.mark.slow  # the runner's reading of a kernel, whatever JAX's version
def test_past_a_cells_output_count_a_flood_is_read_at_the_runners_pace(tmp_path, monkeypatch):
    """Issue 35: tiny messages read as fast as a kernel sent them held the loop that every
    kernel's replies go through, so each of a classmate's round trips (a check makes hundreds)
    waited behind them: 1.75-2.17x its time alone beside 60,000 displays
    (``benchmarks/grade_share.py --attack displays``). Past ``cell_outputs`` messages the
    runner reads one per PACE; the kernel's queue drops the rest, the cell still ends, and the
    next cell runs. Side by side with the same flood read unpaced (PACE = 0), so that the
    machine's load moves both counts: of 60,000 sent, 8,004 read against 31,008 on the 2-core
    machine at rest, 7,508 against 19,326 beside a busy loop (unpaced, the reader keeps up less,
    and the kernel drops more: with 20,000 sent and 4 messages waiting a channel, the unpaced
    count fell to 10,008 under load, too near the paced 7,008 to tell them apart; and in the
    full suite of 2026-12-01, 12,104 against 7,504, over the 0.6 this test then asked). The
    paced count is what holds still: 7,504-8,004 of 60,000 at rest, beside a busy loop and in
    the full suite (the cell's first ``cell_outputs``, then one per PACE, then what is still
    queued when the next cell starts), so the test asserts it stays under 8,500, and that the
    unpaced reader, at any load measured, reads more."""
    from nn_from_scratch import cell_outputs, kernel_channel

    read, paced = _counting_messages(monkeypatch), cell_outputs.PACE
    monkeypatch.setattr(kernel_channel, "MAX_PARTS", 10**6)  # the backstop: tested below
    counts, seconds = {}, {}
    for pace in (0.0, paced):
        monkeypatch.setattr(cell_outputs, "PACE", pace)
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in (
            RAW_FLOOD.format(n=60_000), "print('after')")])
        read.clear()
        runs = execute(nb, timeout=120, cell_timeout=90, cwd=tmp_path)
        assert [r.status for r in runs] == ["ok", "ok"] and runs[0].cut, runs
        counts[pace], seconds[pace] = len(read), runs[0].seconds
    assert counts[paced] < 8_500 and counts[0.0] > counts[paced], (counts, seconds)
