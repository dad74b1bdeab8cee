"""The test processes compile at LLVM's lowest level, and nothing they start does (conftest.py):
the kernels, the command line and the grader that tests start compile as a user's do, so the
lessons' claims about speed are held at XLA's default level."""
import os
import subprocess
import sys

import conftest


def test_what_the_tests_start_inherits_the_users_xla_flags():
    assert os.environ.get("XLA_FLAGS") == conftest._XLA_FLAGS
    child = subprocess.run([sys.executable, "-c", "import os; print(os.environ.get('XLA_FLAGS'))"],
                           capture_output=True, text=True, timeout=60, check=True)
    assert child.stdout.strip() == str(conftest._XLA_FLAGS)
