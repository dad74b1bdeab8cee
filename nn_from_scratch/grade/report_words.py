"""The class report's words: what the page (:mod:`.report_page`) and the Markdown
(:mod:`.report_markdown`) both say, in the grader's language, filled in and escaped for
either format, and the numbers both show (shares, the spread of scores, what to revisit)."""
import html
import string
from collections.abc import Callable

from ..i18n import N_, _
from .report import ExerciseSummary, LessonSummary

__all__ = ["NAMES", "SYMBOLS", "Markup", "counted", "percent", "revisit_said", "say",
           "score_counts", "share_of", "status_name"]

# The report's words, marked here for the catalogs (a call inside an f-string is not found);
# :func:`say` translates one and fills it in
TITLE = N_("What the class got wrong")
LEAD = N_("{count} notebooks graded, {date}")
LEAD_ONE = N_("{count} notebook graded, {date}")  # English counts one apart; Chinese does not
UNGRADED = N_("{count} could not be graded")
UNGRADED_LINE = N_("{notebook}: {why}")
LESSON = N_("{lesson}: {count} notebooks")
LESSON_ONE = N_("{lesson}: {count} notebook")
REVISIT = N_("Revisit first")
REVISIT_LINE = N_("{exercise}: {share} passed; {said}")
MOST_COMMON = N_("the most common mistake ({count} of {total}): {hint}")
MOSTLY_NOT_DONE = N_("most left it not done")
SCORES = N_("Scores")
NOTEBOOKS = N_("notebooks")
HARDEST = N_("Passed, hardest first")
BY_EXERCISE = N_("Exercise by exercise")
EXERCISE = N_("{exercise}: {share} passed")
SAID = N_("what the check said")
STATUS = N_("status")
GROUP_LINE = N_("{count} ({share}) {status}: {hint} ({notebooks})")
NOT_DONE_LINE = N_("not done: {count} ({share})")
NOT_DONE_COUNT = N_("{count} not done")
EVERY = N_("Every notebook")
NOTES = N_("The grader’s notes")
NOTHING = N_("nothing graded")
NAMES = {"passed": N_("passed"), "failed": N_("failed"), "not done": N_("not done"),
         "error": N_("error"), "timed out": N_("timed out"), "out of memory": N_("out of memory")}
SYMBOLS = {"passed": "✓", "failed": "✗", "not done": "…", "error": "!", "timed out": "⏱",
           "out of memory": "M"}


class Markup(str):
    """Text that is markup already: :func:`say` puts it in as it is."""


def say(message: str, escape: Callable[[str], str] = html.escape, **fields: object) -> str:
    """``message`` in the report's language with ``fields`` filled in, every part escaped for
    the page (or for Markdown: ``escape=`` :func:`.inert.markdown`) but :class:`Markup`."""
    parts = []
    for literal, name, _spec, _conversion in string.Formatter().parse(_(message)):
        parts.append(escape(literal))
        if name is not None:
            value = fields[name]
            parts.append(value if isinstance(value, Markup) else escape(str(value)))
    return "".join(parts)


def counted(one: str, many: str, count: int) -> str:
    """The message for ``count`` things: ``one`` for exactly one ("1 notebook"), else ``many``."""
    return one if count == 1 else many


def status_name(status: str) -> str:
    """A status in the report's language ("" stays "": an exercise the notebook lacked)."""
    return _(NAMES[status]) if status in NAMES else status


def percent(share: float) -> str:
    return f"{share:.0%}"


def share_of(count: int, exercise: ExerciseSummary) -> str:
    return percent(count / exercise.notebooks) if exercise.notebooks else ""


def score_counts(lesson: LessonSummary) -> list[int]:
    """How many notebooks got each whole number of points, from 0 to the most possible."""
    top = int(max((most for _n, _p, most in lesson.scores), default=0))
    return [sum(1 for _n, points, _m in lesson.scores if int(points) == score)
            for score in range(top + 1)]


def revisit_said(exercise: ExerciseSummary) -> str:
    """What the class did wrong in an exercise to revisit: its most common mistake."""
    if not exercise.groups:
        return _(MOSTLY_NOT_DONE)
    top = exercise.groups[0]
    return _(MOST_COMMON).format(count=len(top.notebooks), total=exercise.notebooks,
                                 hint=top.example)
