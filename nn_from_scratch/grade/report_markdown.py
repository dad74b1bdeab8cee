"""The class report (:mod:`.report`) in Markdown, for a terminal or a repository: what the
page (:mod:`.report_page`) says, in the same words (:mod:`.report_words`), with tables in
place of its charts."""
import datetime
from collections.abc import Sequence

from ..i18n import _
from .inert import markdown
from .report import LessonSummary, summarize, ungraded
from .report_words import (
    BY_EXERCISE,
    EVERY,
    EXERCISE,
    GROUP_LINE,
    HARDEST,
    LEAD,
    LEAD_ONE,
    LESSON,
    LESSON_ONE,
    NOT_DONE_COUNT,
    NOT_DONE_LINE,
    NOTEBOOKS,
    NOTES,
    NOTHING,
    REVISIT,
    REVISIT_LINE,
    SCORES,
    SYMBOLS,
    TITLE,
    UNGRADED,
    UNGRADED_LINE,
    counted,
    percent,
    revisit_said,
    say,
    score_counts,
    share_of,
    status_name,
)
from .results import Graded

__all__ = ["report_markdown"]


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    return ["| " + " | ".join(header) + " |", "|---" * len(header) + "|",
            *("| " + " | ".join(row) + " |" for row in rows)]


def _lesson(lesson: LessonSummary) -> list[str]:
    lines = ["## " + say(counted(LESSON_ONE, LESSON, len(lesson.scores)), markdown,
                          lesson=lesson.lesson, count=len(lesson.scores)), ""]
    if lesson.revisit:
        lines += [f"**{markdown(_(REVISIT))}**", ""]
        lines += [f"{i}. " + say(REVISIT_LINE, markdown, exercise=f"{e.exercise} {e.title}",
                                 share=percent(e.pass_rate), said=revisit_said(e))
                  for i, e in enumerate(lesson.revisit, 1)]
        lines.append("")
    counts = score_counts(lesson)
    lines += _table([markdown(_(SCORES)), *map(str, range(len(counts)))],
                    [[markdown(_(NOTEBOOKS)), *map(str, counts)]]) + [""]
    lines += _table([markdown(_(HARDEST)), "", ""], [
        [markdown(f"{e.exercise} {e.title}"), percent(e.pass_rate),
         say(NOT_DONE_COUNT, markdown, count=len(e.not_done))] for e in lesson.exercises]) + [""]
    lines += [f"### {markdown(_(BY_EXERCISE))}", ""]
    for e in lesson.exercises:
        lines.append("- " + say(EXERCISE, markdown, exercise=f"{e.exercise} {e.title}",
                                share=percent(e.pass_rate)))
        lines += ["  - " + say(GROUP_LINE, markdown, count=len(g.notebooks),
                               share=share_of(len(g.notebooks), e), status=status_name(g.status),
                               hint=g.example, notebooks=", ".join(g.notebooks))
                  for g in e.groups]
        if e.not_done:
            lines.append("  - " + say(NOT_DONE_LINE, markdown, count=len(e.not_done),
                                      share=share_of(len(e.not_done), e)))
    lines += ["", f"### {markdown(_(EVERY))}", ""]
    lines += _table(["", *lesson.columns, ""], [
        [markdown(name), *(SYMBOLS.get(statuses.get(e, ""), "") for e in lesson.columns),
         f"{points:g}/{most:g}"]
        for (name, statuses), (_n, points, most) in zip(lesson.grid, lesson.scores)])
    if lesson.notes:
        lines += ["", f"### {markdown(_(NOTES))}", ""]
        lines += [f"- {count} × {markdown(kind)}" for kind, count in lesson.notes]
    return lines + [""]


def report_markdown(graded: Sequence[Graded]) -> str:
    """The report in Markdown: tables where the page has charts."""
    lines = [f"# {markdown(_(TITLE))}", "",
             say(counted(LEAD_ONE, LEAD, len(graded)), markdown, count=len(graded),
                 date=datetime.date.today().isoformat()), ""]
    if failed := ungraded(graded):
        lines += [f"**{say(UNGRADED, markdown, count=len(failed))}**", ""]
        lines += ["- " + say(UNGRADED_LINE, markdown, notebook=name, why=why)
                  for name, why in failed]
        lines.append("")
    lessons = summarize(graded)
    for lesson in lessons:
        lines += _lesson(lesson)
    if not lessons and not failed:
        lines.append(markdown(_(NOTHING)))
    return "\n".join(lines)
