"""Checkers for the lessons' exercises: one module per lesson, named after its slug.

In a lesson, after writing ``predict``::

    from nn_from_scratch.exercises import mlp_from_scratch as check
    check.predict(predict)     # ✓ 07.3 predict: matches the reference on 5 random networks

Every checker takes the student's object, never source text, answers in well
under a second and never raises: a wrong answer gets ✗ and a hint, a stub gets
"not done yet". ``python -m nn_from_scratch grade`` collects the same results
from executed notebooks.
"""
from ._core import (
                    MIME,
                    CheckResult,
                    Exercise,
                    Mistake,
                    NotDone,
                    all_lessons,
                    exercise,
                    lesson_exercises,
)

__all__ = ["MIME", "CheckResult", "Exercise", "Mistake", "NotDone", "all_lessons", "exercise",
           "lesson_exercises"]
