"""The suite's own scheduling (tests/scheduling.py): a module's shared fixture is built on one
worker, a lesson's executions go together, and the longest go first."""
import os
import subprocess
import sys
from pathlib import Path

from scheduling import SHARED_FIXTURE_SECONDS, group_of, weight

TESTS = Path(__file__).resolve().parent

SHARED = '''
import os
import pytest

@pytest.fixture(scope="module")
def costly():
    with open(os.environ["BUILDS"], "a") as log:
        log.write(os.environ.get("PYTEST_XDIST_WORKER", "none") + "\\n")
    return 1

@pytest.mark.parametrize("n", range(8))
def test_uses_it(costly, n):
    pass
'''
OTHER = '''
import pytest

@pytest.mark.parametrize("n", range(8))
def test_alone(n):
    pass
'''


def test_a_shared_fixture_is_built_once_on_two_workers(tmp_path):
    """pytest-xdist's own groups were silently lost with pytest 9.2 (the module docstring):
    run a small suite as pyproject.toml runs this one and count the builds."""
    shared = next(iter(SHARED_FIXTURE_SECONDS))
    (tmp_path / f"{shared}.py").write_text(SHARED)
    (tmp_path / "test_other.py").write_text(OTHER)
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    builds = tmp_path / "builds.txt"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "scheduling", "-p", "no:cacheprovider",
         "-n", "2", "--dist", "loadgroup", "--no-loadscope-reorder", str(tmp_path)],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
        env={**os.environ, "BUILDS": str(builds),
             "PYTHONPATH": str(TESTS)})
    assert done.returncode == 0, done.stdout + done.stderr
    assert "16 passed" in done.stdout, done.stdout
    assert builds.read_text().split() in (["gw0"], ["gw1"]), builds.read_text()


def test_groups_and_weights_follow_the_ids():
    assert group_of("tests/test_grade_redteam.py::test_x[a]") == "test_grade_redteam"
    assert group_of("tests/test_site.py::test_y") == "test_site"
    for nodeid in ("tests/test_mutants.py::test_checkers_kill[14_attention_from_scratch]",
                   "tests/test_lessons.py::test_lesson_executes_offline[14_attention_from_scratch]"):
        assert group_of(nodeid) == "lesson-14"
    other = "tests/test_lessons.py::test_lesson_structure[14_attention_from_scratch]"
    assert group_of(other) == other
    assert group_of("tests/test_conv.py::test_z") == "tests/test_conv.py::test_z"
    # the mutation test of lesson 14 first, then its full edition, a graded class, the rest
    mutants = weight("tests/test_mutants.py::t[14_attention_from_scratch]")
    full = weight("tests/test_lessons.py::test_lesson_executes_x[14_attention_from_scratch]")
    assert mutants > full > weight("tests/test_conv.py::test_z") == 0
    assert weight("tests/test_grade.py::test_a") == SHARED_FIXTURE_SECONDS["test_grade"]
