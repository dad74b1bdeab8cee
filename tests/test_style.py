"""The codebase stays a model: ruff's lint rules and mypy's type check pass, as CI demands."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run(*args):
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)


def test_ruff_finds_nothing():
    result = run("ruff", "check", ".")  # rules E, F, I, B, UP: see pyproject.toml
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_finds_nothing_in_the_package():
    result = run("mypy")  # the package, with the settings in pyproject.toml
    assert result.returncode == 0, result.stdout + result.stderr
