"""A student's progress (:mod:`.progress`) as one self-contained HTML page, like the class report.

The page loads nothing (its style is in it; it opens offline, from the student's folder).
Each exercise is the box a check shows in the notebook (:mod:`.exercises._display`: symbol
and word, colours with WCAG AA contrast, code in code style); a lesson not started is one
line. Everything from a notebook (names, hints quoting the student's code) is escaped.
"""
import datetime
import html
from pathlib import Path

from .exercises._display import message_html, status_html
from .grade.exports import write_atomic
from .grade.report_page import STYLE
from .grade.report_words import Markup, say
from .i18n import N_, _, language
from .progress import NOT_STARTED, Lesson, Progress

__all__ = ["progress_html", "write_progress"]

TITLE = N_("Your progress")
LEAD = N_("{passed} of {total} exercises passed, from the notebooks in {folder} ({date})")
LESSON = N_("{title}: {passed} of {total} passed")
STARTED_FROM = N_("graded from {notebook}")
NOT_STARTED_LINE = N_("{title}: not started")
LEFT_OUT = N_("Notebooks left out")
_PAGE_STYLE = (".lesson{margin:1.2em 0}.lesson h2{font-size:1.1em}.not-started{color:#424242;"
               "margin:.3em 0}.bar{height:10px;background:#e0e0e0;border-radius:5px;"
               "max-width:420px}.bar span{display:block;height:10px;border-radius:5px;"
               "background:#1b5e20}")
# A status the grader gives that no check shows (it could not run the exercise): shown as
# failed, its word in front of what happened.
_AS_FAILED = ("error", "timed out", "out of memory")


def _lesson_html(lesson: Lesson) -> str:
    if not lesson.notebook:
        return (f'<p class="not-started" data-status="{NOT_STARTED}">○ '
                f'{say(NOT_STARTED_LINE, title=Markup(message_html(lesson.title)))}</p>')
    total, title = len(lesson.exercises), Markup(message_html(lesson.title))
    share = round(100 * lesson.passed / total) if total else 0
    boxes = "".join(
        status_html("failed", exercise, title, f"{_(status)}: {message}")
        if status in _AS_FAILED else status_html(status, exercise, title, message)
        for exercise, title, status, message in lesson.exercises)
    return (f'<section class="lesson" id="{html.escape(lesson.slug)}"><h2>'
            f'{say(LESSON, title=title, passed=lesson.passed, total=total)}</h2>'
            f'<div class="bar" role="img" aria-label="{share}%"><span style="width:{share}%">'
            f'</span></div><p class="lead">{say(STARTED_FROM, notebook=lesson.notebook)}</p>'
            f'{boxes}</section>')


def progress_html(progress: Progress) -> str:
    """The whole page, in the current language."""
    passed = sum(lesson.passed for lesson in progress.lessons)
    total = sum(len(lesson.exercises) for lesson in progress.lessons)
    title = html.escape(_(TITLE))
    lead = say(LEAD, passed=passed, total=total, folder=Markup(
        f"<code>{html.escape(progress.folder)}</code>"), date=datetime.date.today().isoformat())
    body = "".join(_lesson_html(lesson) for lesson in progress.lessons)
    if progress.skipped:
        body += (f"<h2>{html.escape(_(LEFT_OUT))}</h2><ul>"
                 + "".join(f"<li>{html.escape(why)}</li>" for why in progress.skipped) + "</ul>")
    return (f'<!doctype html><html lang="{"zh-CN" if language() == "zh_CN" else "en"}"><head>'
            f'<meta charset="utf-8"><meta name="viewport" content="width=device-width, '
            f'initial-scale=1"><title>{title}</title><style>{STYLE}{_PAGE_STYLE}</style></head>'
            f'<body><h1>{title}</h1><p class="lead">{lead}</p>{body}</body></html>\n')


def write_progress(progress: Progress, path: str | Path) -> None:
    """Write :func:`progress_html` to ``path``, whole or not at all."""
    write_atomic(path, progress_html(progress))
