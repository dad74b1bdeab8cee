"""What an assignment is: one lesson, pinned by the instructor; nothing else in a submission scores.

``grade --lesson 03`` (or ``3``, or the release's own id ``03_autodiff_from_scratch``)
pins the lesson; Gradescope's ``run_autograder`` reads it from the assignment's setup
(a ``lesson`` file beside ``setup.sh``), a GitHub Classroom workflow names it on its
command line. Then:

- a notebook of another lesson is refused (one error row, no points) before its kernel
  starts: :func:`other_lesson` says why, in one line;
- in a run that grades ONE student's submission (``--classroom``, ``--gradescope
  FILE.json``) a second copy of the lesson is refused: :func:`one_copy` turns every copy
  into one error row, never a sum.
"""
from collections.abc import Sequence
from dataclasses import replace

from .._checks import InputError
from ..i18n import _
from .release import RELEASE
from .results import Graded, Row

__all__ = ["lesson_named", "one_copy", "other_lesson"]


def lesson_named(text: str) -> str:
    """The lesson ``text`` names (``03``, ``3`` or ``03_autodiff_from_scratch``): a released
    one's id, or :class:`InputError` listing them."""
    lessons = sorted(path.stem for path in RELEASE.glob("*.json"))
    number = text.strip().split("_")[0]
    found = [lesson for lesson in lessons if lesson == text.strip() or (
        number.isdigit() and "_" not in text.strip() and int(lesson[:2]) == int(number))]
    if len(found) != 1:
        raise InputError(f"--lesson {text}: expected one lesson of this course, by number (03) "
                         f"or id; got {text!r}, which names {len(found) or 'none'}. The "
                         f"lessons: {', '.join(lessons)}.")
    return found[0]


def other_lesson(found: str, pinned: str) -> str:
    """Why a notebook of lesson ``found`` scores nothing for an assignment of ``pinned``."""
    return _("not graded: this is a notebook of {found}, and this assignment is {pinned}; "
             "hand in the notebook of {pinned}").format(found=found, pinned=pinned)


def one_copy(graded: Sequence[Graded], pinned: str) -> list[Graded]:
    """ONE submission's notebooks, with the assignment's lesson graded once at most: where it
    holds several copies of ``pinned``, each becomes one error row saying so (no points)."""
    copies = [g for g in graded if g.lesson == pinned]
    if len(copies) < 2:
        return list(graded)
    names = ", ".join(g.notebook for g in copies)
    refused = Row(None, "", "error", _(
        "not graded: this submission holds {count} notebooks of {lesson} ({names}); hand in "
        "one").format(count=len(copies), lesson=pinned, names=names), 0.0, 0.0)
    return [replace(g, rows=(refused,)) if g.lesson == pinned else g for g in graded]
