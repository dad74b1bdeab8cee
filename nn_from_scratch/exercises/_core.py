"""What every checker returns, the ``@exercise`` decorator that makes it, and the registry.

A checker takes the student's object (a function, an array, a number), tries it
on inputs it makes up, and returns a :class:`CheckResult` that a notebook shows
as one line::

    ✓ 07.3 predict: matches the reference on 5 random networks
    ✗ 07.3 predict: returned shape (128, 10) for one example of shape (784,) — ...
    … 07.3 predict: not done yet (the stub still raises NotImplementedError)

A checker never raises, so a notebook's "Run all" always reaches the end. The
result also carries a machine-readable copy (the MIME type :data:`MIME`), which
the grader compares with what a submission showed (never trusting it), and the
same line as HTML (:mod:`._display`: a coloured box, symbol and word, code in code
style), which JupyterLab and the course website show in its place.

The rest of the shared machinery is split by job: :mod:`._calls` (what a check
needs from the student's code), :mod:`._compare` (how it compares),
:mod:`._hints` (how it words what it found), :mod:`._outcomes` (the exceptions that
carry a verdict), :mod:`._remote` (the student's code in another process, when the grader
checks), :mod:`._fixtures` (stand-ins the student's code is handed), :mod:`._draws`
(the sizes and values of a check's inputs).
"""
import functools
import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..i18n import _, typeset
from ._display import SYMBOLS, status_html
from ._hints import first_line, the_stubs
from ._outcomes import Mistake, NotDone

__all__ = ["MIME", "STATUSES", "CheckResult", "Exercise", "Mistake", "NotDone", "all_lessons",
           "exercise", "lesson_exercises"]

MIME = "application/vnd.nn-from-scratch.check+json"
STATUSES = ("passed", "failed", "not done")


@dataclass(frozen=True)
class CheckResult:
    """The outcome of one check.

    Attributes:
      exercise: the exercise's id, ``"LL.N"`` (lesson number, exercise number).
      title: what the exercise asks for, e.g. ``"predict"``.
      status: ``"passed"``, ``"failed"`` or ``"not done"``.
      message: what was checked, or what is wrong and a hint for fixing it.
      markup: the message before it was set as plain text: `code` still in backticks,
        for :attr:`html` (Chinese plain text drops them); ``""`` means ``message``.
    """

    exercise: str
    title: str
    status: str
    message: str
    markup: str = field(default="", compare=False, repr=False)

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    @property
    def line(self) -> str:
        """The one line a student reads: ``✓ 07.3 predict: ...``."""
        return _("{symbol} {exercise} {title}: {message}").format(
            symbol=SYMBOLS[self.status], exercise=self.exercise, title=self.title,
            message=self.message)

    def __repr__(self) -> str:
        return self.line

    @property
    def html(self) -> str:
        """The same as a box of escaped HTML (:func:`._display.status_html`)."""
        return status_html(self.status, self.exercise, self.title, self.markup or self.message)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        """What Jupyter shows (the HTML; the line where HTML is not shown) and what the grader
        reads (:data:`MIME`: the four fields, as they always were)."""
        record = {"exercise": self.exercise, "title": self.title, "status": self.status,
                  "message": self.message}
        return {"text/plain": self.line, "text/html": self.html, MIME: record}


@dataclass(frozen=True)
class Exercise:
    """One registered exercise: its id, title, lesson and the checker's name in its module."""

    id: str
    title: str
    lesson: str
    name: str


_REGISTRY: dict[str, list[Exercise]] = {}


Checker = Callable[..., CheckResult]


def exercise(lesson: str, number: int, title: str) -> Callable[[Callable[..., str]], Checker]:
    """Make a checking function into a checker that always returns a :class:`CheckResult`.

    The decorated function takes the student's answers and returns a short
    description of what passed; it raises :class:`Mistake` with a hint for a
    wrong answer and :class:`NotDone` for a stub. Also a stub: an answer that is
    ``...``, or code that raises ``NotImplementedError``. Any other exception
    from the student's code is reported as a failure, never raised.

    Args:
      lesson: the lesson's slug, e.g. ``"07_mlp_from_scratch"``; its first two
        characters are the lesson's number in the exercise id.
      number: the exercise's number within the lesson (1, 2, ...).
      title: a few words naming what the student writes.
    """
    exercise_id = f"{lesson[:2]}.{number}"

    def decorate(check: Callable[..., str]) -> Callable[..., CheckResult]:
        @functools.wraps(check)
        def checker(*answers: Any) -> CheckResult:
            def result(status: str, message: str) -> CheckResult:
                # A message that is a msgid as it stands (a hint without values in it) is
                # translated here; one with values was translated where it was formatted.
                text = _(message)
                return CheckResult(exercise_id, _(title), status, typeset(text), text)
            if any(answer is Ellipsis for answer in answers):
                return result("not done", _("not done yet (the stub's `...` is still there)"))
            try:
                return result("passed", check(*answers))
            except NotDone as err:
                return result("not done", _("not done yet ({reason})").format(reason=_(str(err))))
            except NotImplementedError as err:
                if not the_stubs(err):  # JAX's own (no derivative for pmax): a wrong answer
                    return result("failed", _("your code raised {error}").format(
                        error=first_line(err)))
                return result("not done",
                              _("not done yet (the stub still raises NotImplementedError)"))
            except Mistake as err:
                return result("failed", str(err))
            except Exception as err:  # the student's code misbehaved in a way we did not foresee
                return result("failed", _("your code raised {error}").format(
                    error=first_line(err)))

        registered = _REGISTRY.setdefault(lesson, [])
        if any(e.id == exercise_id for e in registered):
            raise RuntimeError(f"exercise {exercise_id} is registered twice")
        registered.append(Exercise(exercise_id, title, lesson, check.__name__))
        return checker

    return decorate


def lesson_exercises(lesson: str) -> list[Exercise]:
    """The exercises of ``lesson`` (its slug, e.g. ``"07_mlp_from_scratch"``), in order."""
    _import_all()
    return list(_REGISTRY.get(lesson, []))


def all_lessons() -> list[str]:
    """Every lesson slug that has checkers, in order."""
    _import_all()
    return sorted(_REGISTRY)


@functools.cache
def _import_all() -> None:
    """Import every checker module of this package, so that every exercise is registered."""
    package = importlib.import_module(__package__)
    for module in pkgutil.iter_modules(package.__path__):
        if not module.name.startswith("_"):
            importlib.import_module(f"{__package__}.{module.name}")


