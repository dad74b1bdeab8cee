"""The grader works from a real install, outside the checkout: the release ships as package data.

A wheel is built from a copy of the package (never in the shared checkout), installed without
its dependencies into a fresh virtual environment, which borrows this environment's
dependencies through a .pth file (its own copy of nn_from_scratch comes first). Grading the
student edition of the quickest lesson from a folder outside the checkout then rebuilds it from
the installed release: every exercise "not done".
"""
import json
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from nn_from_scratch.exercises import lesson_exercises

ROOT = Path(__file__).resolve().parent.parent
QUICK = "03_autodiff_from_scratch"


def run(*command, cwd=None):
    result = subprocess.run([str(c) for c in command], capture_output=True, text=True,
                            timeout=300, cwd=cwd)
    assert result.returncode in (0, 1), result.stdout + result.stderr
    return result


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """The python of a fresh venv with nn_from_scratch installed from a wheel."""
    if subprocess.run([sys.executable, "-m", "pip", "--version"],
                      capture_output=True).returncode != 0:
        pytest.skip("pip is not available in this environment")
    work = tmp_path_factory.mktemp("install")
    source = work / "source"
    source.mkdir()
    for name in ("pyproject.toml", "setup.py", "README.md"):  # what a wheel is built from
        if (ROOT / name).exists():
            shutil.copy(ROOT / name, source / name)
    shutil.copytree(ROOT / "nn_from_scratch", source / "nn_from_scratch",
                    ignore=shutil.ignore_patterns("__pycache__"))
    run(sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
        "-w", work / "dist", source)
    (wheel,) = (work / "dist").glob("*.whl")
    run(sys.executable, "-m", "venv", "--without-pip", work / "venv")
    python = work / "venv" / "bin" / "python"
    purelib = run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])")
    site = Path(purelib.stdout.strip())
    (site / "borrowed.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    run(sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", site, wheel)
    return python, work


def test_the_installed_package_is_not_the_checkout(installed):
    python, work = installed
    where = run(python, "-c", "import nn_from_scratch.grade.release as r; print(r.RELEASE)",
                cwd=work)
    release = Path(where.stdout.strip())
    assert ROOT not in release.parents and (release / f"{QUICK}.json").is_file()


def test_grading_from_the_install_uses_the_shipped_release(installed):
    python, work = installed
    submission = work / "alice.ipynb"
    shutil.copy(ROOT / "student" / f"{QUICK}.ipynb", submission)
    result = run(python, "-m", "nn_from_scratch", "grade", submission, "--json", cwd=work)
    assert result.returncode == 1, result.stderr  # nothing done yet
    (graded,) = json.loads(result.stdout)["notebooks"]
    assert [row["status"] for row in graded["rows"]] == ["not done"] * len(
        lesson_exercises(QUICK))
