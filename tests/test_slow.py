"""The README's test command leaves out the tests marked slow, ``--slow`` adds them, and a test
file named on the command line runs all of its tests (tests/conftest.py)."""
from pathlib import Path
from types import SimpleNamespace

import conftest

TESTS = Path(__file__).resolve().parent


class Item:
    def __init__(self, file, slow):
        self.path, self.slow = TESTS / file, slow

    def get_closest_marker(self, name):
        return object() if name == "slow" and self.slow else None


def select(args, slow_option=False, where=TESTS.parent):
    """The items left to run for ``pytest <args>`` started in ``where``, and those deselected."""
    deselected = []
    config = SimpleNamespace(
        args=args, invocation_params=SimpleNamespace(dir=where),
        getoption=lambda name: slow_option if name == "--slow" else None,
        hook=SimpleNamespace(pytest_deselected=lambda items: deselected.extend(items)))
    items = [Item("test_mutants.py", True), Item("test_lessons.py", False),
             Item("test_grade.py", True), Item("test_grade.py", False)]
    conftest.pytest_collection_modifyitems(config, items)
    return ([(i.path.name, i.slow) for i in items], [(i.path.name, i.slow) for i in deselected])


def test_the_readme_command_leaves_the_slow_tests_out_and_says_so():
    kept, left_out = select(["tests"])
    assert kept == [("test_lessons.py", False), ("test_grade.py", False)]
    assert left_out == [("test_mutants.py", True), ("test_grade.py", True)]
    config = SimpleNamespace(getoption=lambda name: False)
    assert "--slow" in conftest._left_out(config)


def test_slow_adds_them():
    kept, left_out = select(["tests"], slow_option=True)
    assert len(kept) == 4 and not left_out
    assert conftest._left_out(SimpleNamespace(getoption=lambda name: True)) is None


def test_a_file_named_runs_all_of_its_tests_wherever_pytest_was_started():
    kept, left_out = select(["tests/test_mutants.py", "tests/test_lessons.py::test_x"])
    assert ("test_mutants.py", True) in kept and left_out == [("test_grade.py", True)]
    kept, _ = select(["test_grade.py::test_the_honest_solution"], where=TESTS)
    assert kept.count(("test_grade.py", True)) == 1
