"""Memory: sizes as an instructor writes them, and what counts toward a kernel's cap."""

import nbformat
import pytest

from nn_from_scratch.memory_watch import format_bytes, parse_bytes
from nn_from_scratch.notebook_runner import execute


@pytest.mark.parametrize("text, size", [("2G", 2**31), ("1500M", 1500 * 2**20),
                                        ("1.5GB", 3 * 2**29), ("512 MiB", 2**29), ("4096", 4096)])
def test_memory_sizes_are_read_in_binary_units(text, size):
    assert parse_bytes(text) == size


@pytest.mark.parametrize("text", ["", "lots", "-1G", "0", "2X"])
def test_a_size_that_is_not_one_says_what_is_expected(text):
    with pytest.raises(ValueError, match="e.g. 2G or 1500M"):
        parse_bytes(text)


def test_sizes_are_written_as_they_are_read():
    assert [format_bytes(n) for n in (2**30, 3 * 2**29, 300 * 2**20, 100, None)] == [
        "1 GB", "1.5 GB", "300 MB", "100 B", "no limit"]


def test_without_a_sandbox_a_childs_memory_counts_toward_the_cap(tmp_path):
    """The watchdog finds the kernel's children through /proc's children files (no scan of
    every process on the machine) and stops them all past the cap."""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in (
        "import subprocess, sys\nhog = subprocess.Popen([sys.executable, '-c', "
        "'import time; x = bytearray(2**31); time.sleep(60)'])",
        "import time\ntime.sleep(20)", "print('never')")])
    runs = execute(nb, timeout=60, cell_timeout=30, memory=800 * 2**20, cwd=tmp_path)
    assert [r.status for r in runs] == ["ok", "out of memory", "out of memory"], runs
