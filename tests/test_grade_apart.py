"""Preparing a submission in a process of its own: the same result as here, within its time."""
from pathlib import Path

from nn_from_scratch.grade.apart import prepare_apart
from nn_from_scratch.grade.intake import Submission, take_in
from nn_from_scratch.grade.notebook import Prepared, prepare
from nn_from_scratch.grade.release import RELEASE

ROOT = Path(__file__).resolve().parent.parent
LESSON = "03_autodiff_from_scratch"


def test_a_notebook_prepared_apart_is_the_one_prepared_here(tmp_path):
    (submission,) = take_in([ROOT / "notebooks" / f"{LESSON}.ipynb"], tmp_path)
    apart, here = prepare_apart(submission, RELEASE, LESSON), prepare(submission, RELEASE, LESSON)
    assert isinstance(apart, Prepared) and isinstance(here, Prepared)
    assert apart.rebuilt.nb == here.rebuilt.nb and apart.checks == here.checks
    assert (apart.notes, apart.copies, apart.shown) == (here.notes, here.copies, here.shown)


def test_a_preparation_past_its_time_is_one_error_row(tmp_path):
    """The child is killed at its time (a lesson's notebook takes under 1 s; here 10 ms)."""
    (submission,) = take_in([ROOT / "notebooks" / f"{LESSON}.ipynb"], tmp_path)
    late = prepare_apart(submission, RELEASE, LESSON, seconds=0.01)
    assert [row.status for row in late.rows] == ["error"], late
    assert "reading it took more than 0.01 s" in late.rows[0].message


def test_what_preparing_raises_is_one_row_said_as_it_was(tmp_path):
    gone = Submission("alice/gone.ipynb", tmp_path / "not-there.ipynb", "0" * 64)
    failed = prepare_apart(gone, RELEASE, LESSON)
    assert "could not be prepared (FileNotFoundError" in failed.rows[0].message, failed
