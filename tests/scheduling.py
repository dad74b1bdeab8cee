"""How the suite is shared between pytest-xdist's two workers (pyproject.toml: ``-n 2 --dist
loadgroup --no-loadscope-reorder``; this plugin is loaded by tests/conftest.py).

- Each test goes to whichever worker is free, the longest first, so that the two end together
  (:func:`pytest_collection_modifyitems` sorts them by :func:`weight`; the scheduler keeps
  that order).
- The tests of a module that share a costly fixture built once per module (a graded class,
  the website, a JupyterLab server) go to one worker together, so that it is built once, not
  once on each; so do a lesson's two executions (the full edition, the student one with the
  mutation test), one after the other: the second finds the training steps that the first
  compiled (tools/notebooks.py, compilation_cache), where side by side both would compile
  them.

Why a scheduler of its own: pytest-xdist's ``loadgroup`` learns a test's group from a suffix
that its workers add to the test's id, and since pytest 9.2 that suffix no longer takes (the
id is a structured one; pytest-xdist issue 1386): the groups were silently ignored, and every
shared fixture was built on both workers (the red team's class, the graded class of lesson 07
and the website, each twice). :class:`Grouped` reads the group from the id itself
(:func:`group_of`), which needs nothing from the workers; tests/test_scheduling.py runs a
small suite on two workers and checks that a shared fixture is built once.
"""
import functools
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# The modules whose tests share one costly fixture, and about how long it takes, in seconds
# (measured under load; only their order matters). A lesson's executions weigh its time in
# the README's lesson map.
SHARED_FIXTURE_SECONDS = {"test_jupyterlab": 170, "test_grade_redteam": 160, "test_site": 60,
                          "test_grade_class": 40, "test_grade": 40, "test_grade_install": 40}


@functools.cache
def _lesson_seconds() -> dict[str, int]:
    """The README's lesson map: lesson number ("07") -> its "~N s" on a 2-core machine."""
    readme = (ROOT / "README.md").read_text()
    return {number: int(seconds) for number, seconds
            in re.findall(r"^\| (\d\d) \| \[.*\| ~(\d+) s \|$", readme, re.M)}


def executed_lesson(nodeid: str) -> str | None:
    """The number ("14") of the lesson that the test ``nodeid`` executes in a kernel of its
    own: the full edition (test_lessons.py) or the student one with the mutation test
    (test_mutants.py); None for any other test."""
    path, _, name = nodeid.partition("::")
    module = Path(path).stem
    if module == "test_mutants" or (module == "test_lessons" and "_executes_" in name):
        found = re.search(r"\[(?:[^\]]*/)?(\d\d)_", name)
        return found.group(1) if found else None
    return None


def group_of(nodeid: str) -> str:
    """The unit of work the test ``nodeid`` goes to a worker in: its module's name where the
    module's tests share a costly fixture, ``lesson-14`` for a lesson's executions, else the
    test alone (its own id)."""
    module = Path(nodeid.partition("::")[0]).stem
    if module in SHARED_FIXTURE_SECONDS:
        return module
    lesson = executed_lesson(nodeid)
    return f"lesson-{lesson}" if lesson is not None else nodeid


def weight(nodeid: str) -> float:
    """About how long the test ``nodeid`` (or the group it goes with) takes: only the order
    matters."""
    lesson = executed_lesson(nodeid)
    if lesson is not None:
        seconds = _lesson_seconds().get(lesson, 0)
        if Path(nodeid.partition("::")[0]).stem == "test_mutants":  # and a check per mutant
            return 2 * seconds + 10
        return seconds
    return SHARED_FIXTURE_SECONDS.get(group_of(nodeid), 0)


@pytest.hookimpl(trylast=True)  # after tests/conftest.py has marked what it skips
def pytest_collection_modifyitems(config, items):
    items.sort(key=lambda item: weight(item.nodeid), reverse=True)  # stable: the rest keep
    # their order


def pytest_xdist_make_scheduler(config, log):
    """With ``--dist loadgroup`` (pyproject.toml), :class:`Grouped`; other modes as usual."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class Grouped(LoadScopeScheduling):
        """pytest-xdist's scheduling by scope, each scope a :func:`group_of`."""

        def _split_scope(self, nodeid: str) -> str:
            return group_of(nodeid)

    return Grouped(config, log)
