"""The assignment's lesson, pinned: ``--lesson`` read, a second copy in one submission refused
(the command line's side is in test_grade_cli.py)."""
import pytest

from nn_from_scratch._checks import InputError
from nn_from_scratch.grade.assignment import lesson_named, one_copy
from nn_from_scratch.grade.results import Graded, Row

LESSON = "03_autodiff_from_scratch"


def test_a_lesson_is_named_by_number_or_id_and_nothing_else():
    assert lesson_named("03") == lesson_named("3") == lesson_named(LESSON) == LESSON
    for wrong in ("99", "03_autodiff", "autodiff", "", "../03_autodiff_from_scratch"):
        with pytest.raises(InputError, match="expected one lesson of this course"):
            lesson_named(wrong)


def _graded(name, lesson=LESSON, points=5.0):
    return Graded(name, lesson, (Row("03.1", "mul", "passed", "ok", points, 5.0),))


def test_a_second_copy_in_one_submission_is_refused_never_summed():
    honest = [_graded("repo/lesson03.ipynb"), _graded("repo/notes.ipynb", "07_mlp_from_scratch")]
    assert one_copy(honest, LESSON) == honest, "one copy keeps its honest score"
    copies = one_copy([*honest, _graded("repo/copy.ipynb")], LESSON)
    assert sum(g.points for g in copies if g.lesson == LESSON) == 0
    assert [g.rows[0].message for g in copies if g.lesson == LESSON] == [
        f"not graded: this submission holds 2 notebooks of {LESSON} (repo/lesson03.ipynb, "
        f"repo/copy.ipynb); hand in one"] * 2
    assert copies[1] == honest[1]
