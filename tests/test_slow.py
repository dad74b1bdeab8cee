"""The README's test command leaves out the tests marked slow and says how many, ``--slow``
adds them, ``-m slow`` runs them alone, and a test file named on the command line runs all of
its tests (tests/conftest.py)."""
from pathlib import Path
from types import SimpleNamespace

import conftest
import pytest

TESTS = Path(__file__).resolve().parent


class Item:
    def __init__(self, file, slow):
        self.path, self.slow = TESTS / file, slow

    def get_closest_marker(self, name):
        return object() if name == "slow" and self.slow else None


def config_of(args, options, where=TESTS.parent):
    deselected = []
    return SimpleNamespace(
        args=args, invocation_params=SimpleNamespace(dir=where), stash=pytest.Stash(),
        getoption=lambda name: options.get(name),
        hook=SimpleNamespace(pytest_deselected=lambda items: deselected.extend(items)),
        deselected=deselected)


def select(args, options=None, where=TESTS.parent):
    """The items left to run for ``pytest <args>`` (``options``: {"--slow": True}, {"markexpr":
    "slow"}) started in ``where``, those deselected, and what the run says at its end."""
    config = config_of(args, options or {}, where)
    items = [Item("test_mutants.py", True), Item("test_lessons.py", False),
             Item("test_grade.py", True), Item("test_grade.py", False)]
    conftest.pytest_collection_modifyitems(config, items)
    said = []
    conftest.pytest_terminal_summary(SimpleNamespace(write_line=said.append), 0, config)
    return ([(i.path.name, i.slow) for i in items],
            [(i.path.name, i.slow) for i in config.deselected], said)


def test_the_readme_command_leaves_the_slow_tests_out_and_says_how_many():
    kept, left_out, said = select(["tests"])
    assert kept == [("test_lessons.py", False), ("test_grade.py", False)]
    assert left_out == [("test_mutants.py", True), ("test_grade.py", True)]
    assert len(said) == 1 and said[0].startswith("2 tests marked slow were left out")
    assert "--slow" in said[0] and "-m slow" in said[0]


def test_slow_adds_them_and_m_slow_keeps_them_for_its_own_selection():
    for options in ({"--slow": True}, {"markexpr": "slow"}, {"markexpr": "slow and not site"}):
        kept, left_out, said = select(["tests"], options)
        assert len(kept) == 4 and not left_out and not said, options


def test_a_file_named_runs_all_of_its_tests_wherever_pytest_was_started():
    kept, left_out, said = select(["tests/test_mutants.py", "tests/test_lessons.py::test_x"])
    assert ("test_mutants.py", True) in kept and left_out == [("test_grade.py", True)]
    kept, _, _ = select(["test_grade.py::test_the_honest_solution"], where=TESTS)
    assert kept.count(("test_grade.py", True)) == 1


def test_nothing_is_said_when_no_slow_test_was_left_out():
    _, left_out, said = select(["tests/test_mutants.py", "tests/test_grade.py"])
    assert not left_out and not said


def test_the_count_reaches_the_main_process_from_the_workers():
    """Under pytest-xdist (pyproject.toml: -n 2) the workers collect and deselect; each sends
    its count back, and the main process says it."""
    worker = config_of(["tests"], {})
    worker.workeroutput = {}
    conftest.pytest_collection_modifyitems(worker, [Item("test_mutants.py", True)])
    main = config_of(["tests"], {})
    conftest.pytest_testnodedown(SimpleNamespace(workeroutput=worker.workeroutput, config=main),
                                 None)
    said = []
    conftest.pytest_terminal_summary(SimpleNamespace(write_line=said.append), 0, main)
    assert said and said[0].startswith("1 test marked slow was left out")
