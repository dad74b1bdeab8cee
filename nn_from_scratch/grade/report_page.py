"""The class report (:mod:`.report`) as one self-contained HTML page.

The page needs nothing but itself: its charts are inline SVG, its style is in
the page, it loads nothing (it opens from a USB stick, offline). Every name and
hint is escaped: a notebook called ``<script>.ipynb`` shows as text. Its words
follow the grader's language (``grade --lang zh``) and are :mod:`.report_words`' (the
Markdown, :mod:`.report_markdown`, says the same in the same words, with tables in place of
charts); :func:`.exports.write_report` writes one or the other.
"""
import datetime
import html
from collections.abc import Sequence

from ..i18n import _, language
from .report import ExerciseSummary, LessonSummary, summarize, ungraded
from .report_words import (
    BY_EXERCISE,
    EVERY,
    EXERCISE,
    HARDEST,
    LEAD,
    LEAD_ONE,
    LESSON,
    LESSON_ONE,
    NOT_DONE_LINE,
    NOTEBOOKS,
    NOTES,
    NOTHING,
    REVISIT,
    REVISIT_LINE,
    SAID,
    SCORES,
    STATUS,
    SYMBOLS,
    TITLE,
    UNGRADED,
    UNGRADED_LINE,
    Markup,
    counted,
    percent,
    revisit_said,
    say,
    score_counts,
    share_of,
    status_name,
)
from .results import Graded

__all__ = ["COLOURS", "report_html"]

COLOURS = {"passed": "#2e7d32", "failed": "#c62828", "not done": "#9e9e9e", "error": "#ef6c00",
           "timed out": "#6a1b9a", "out of memory": "#6a1b9a"}
STYLE = """
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI","Noto Sans CJK SC",sans-serif;margin:2em;
max-width:1100px;color:#222}h1{margin-bottom:.2em}h2{border-top:2px solid #ddd;padding-top:.8em}
.lead{color:#555}.revisit{background:#fff8e1;border-left:5px solid #f9a825;padding:.6em 1em}
.revisit li{margin:.4em 0}.ungraded{background:#fdecea;border-left:5px solid #c62828;
padding:.6em 1em}.charts{display:flex;flex-wrap:wrap;gap:2em}figure{margin:0}
figcaption{font-weight:600;margin-bottom:.3em}table{border-collapse:collapse;margin:.5em 0}
td,th{border:1px solid #ddd;padding:.25em .5em;text-align:left;vertical-align:top}
.names{color:#555;font-size:.85em}.grid td{text-align:center;color:#fff;font-weight:700}
.grid td.name{text-align:left;color:#222;font-weight:400}.count{text-align:right}
svg text{font:12px system-ui,sans-serif}th,.count,.status{white-space:nowrap}
"""


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _histogram(lesson: LessonSummary) -> str:
    """Inline SVG: how many notebooks got each score."""
    counts = score_counts(lesson)
    most, width, height = max(counts + [1]), 28, 145
    bars = []
    for score, count in enumerate(counts):  # bars stand on y = 125, at most 100 high
        h = 100 * count / most
        x = 30 + score * (width + 6)
        bars.append(f'<rect class="bar" x="{x}" y="{125 - h:.1f}" width="{width}" '
                    f'height="{h:.1f}" fill="#1565c0"><title>{score}: {count}</title></rect>'
                    f'<text x="{x + width / 2}" y="140" text-anchor="middle">{score}</text>'
                    + (f'<text x="{x + width / 2}" y="{121 - h:.1f}" text-anchor="middle">'
                       f'{count}</text>' if count else ""))
    return (f'<svg role="img" width="{40 + len(counts) * (width + 6)}" height="{height}" '
            f'aria-label="{_e(_(SCORES))}">{"".join(bars)}</svg>')


def _pass_rates(lesson: LessonSummary) -> str:
    """Inline SVG: each exercise's pass rate, hardest first."""
    rows = []
    for i, exercise in enumerate(lesson.exercises):
        y, w = 6 + 24 * i, 300 * exercise.pass_rate
        label = f"{exercise.exercise} {exercise.title}"
        rows.append(f'<text x="0" y="{y + 14}">{_e(label[:30])}</text>'
                    f'<rect x="200" y="{y}" width="300" height="18" fill="#eee"/>'
                    f'<rect class="bar" x="200" y="{y}" width="{w:.1f}" height="18" '
                    f'fill="{COLOURS["passed"]}"/><text x="{210 + w:.1f}" y="{y + 14}">'
                    f'{percent(exercise.pass_rate)}</text>')
    return (f'<svg role="img" width="560" height="{12 + 24 * len(lesson.exercises)}" '
            f'aria-label="{_e(_(HARDEST))}">{"".join(rows)}</svg>')


def _exercise_html(exercise: ExerciseSummary) -> str:
    name = f"{exercise.exercise} {exercise.title}"
    parts = [f'<h4 id="ex-{_e(exercise.exercise)}">'
             + say(EXERCISE, exercise=name, share=percent(exercise.pass_rate)) + "</h4>"]
    if exercise.groups:
        parts.append(f"<table><tr><th>{_e(_(SAID))}</th>"
                     f"<th>{_e(_(STATUS))}</th><th>{_e(_(NOTEBOOKS))}</th></tr>")
        for group in exercise.groups:
            count = len(group.notebooks)
            parts.append(f"<tr><td>{_e(group.example)}<div class=names>"
                         f"{_e(', '.join(group.notebooks))}</div></td>"
                         f"<td class=status>{_e(status_name(group.status))}</td>"
                         f"<td class=count>{count} ({share_of(count, exercise)})</td></tr>")
        parts.append("</table>")
    if exercise.not_done:
        count = len(exercise.not_done)
        parts.append("<p>" + say(NOT_DONE_LINE, count=count, share=share_of(count, exercise))
                     + f' <span class=names>{_e(", ".join(exercise.not_done))}</span></p>')
    return "".join(parts)


def _lesson_html(lesson: LessonSummary) -> str:
    parts = ["<section><h2>" + say(counted(LESSON_ONE, LESSON, len(lesson.scores)),
                                   lesson=lesson.lesson, count=len(lesson.scores))
             + "</h2>"]
    if lesson.revisit:
        parts.append(f'<div class="revisit"><h3>{_e(_(REVISIT))}</h3><ol>')
        for exercise in lesson.revisit:
            link = Markup(f'<a href="#ex-{_e(exercise.exercise)}"><b>{_e(exercise.exercise)} '
                          f'{_e(exercise.title)}</b></a>')
            parts.append("<li>" + say(REVISIT_LINE, exercise=link, said=revisit_said(exercise),
                                      share=percent(exercise.pass_rate)) + "</li>")
        parts.append("</ol></div>")
    parts.append(f'<div class="charts"><figure><figcaption>{_e(_(SCORES))}</figcaption>'
                 f'{_histogram(lesson)}</figure><figure><figcaption>'
                 f'{_e(_(HARDEST))}</figcaption>{_pass_rates(lesson)}</figure></div>')
    parts.append(f"<h3>{_e(_(BY_EXERCISE))}</h3>")
    parts += [_exercise_html(exercise) for exercise in lesson.exercises]
    parts.append(f'<h3>{_e(_(EVERY))}</h3><table class="grid"><tr><th></th>'
                 + "".join(f"<th>{_e(e)}</th>" for e in lesson.columns) + "<th></th></tr>")
    for (name, statuses), (_n, points, most) in zip(lesson.grid, lesson.scores):
        cells = "".join(f'<td style="background:{COLOURS.get(statuses.get(e, ""), "#fff")}" '
                        f'title="{_e(status_name(statuses.get(e, "")))}">'
                        f'{SYMBOLS.get(statuses.get(e, ""), "")}</td>' for e in lesson.columns)
        parts.append(f'<tr><td class="name">{_e(name)}</td>{cells}'
                     f'<td class="name">{points:g}/{most:g}</td></tr>')
    parts.append("</table><p class=names>" + " ".join(
        f"{symbol} {_e(status_name(status))}" for status, symbol in SYMBOLS.items()) + "</p>")
    if lesson.notes:
        parts.append(f"<h3>{_e(_(NOTES))}</h3><table>")
        parts += [f"<tr><td>{_e(kind)}</td><td class=count>{count}</td></tr>"
                  for kind, count in lesson.notes]
        parts.append("</table>")
    return "".join(parts) + "</section>"


def report_html(graded: Sequence[Graded]) -> str:
    """The whole report as one HTML page that loads nothing."""
    body = "".join(_lesson_html(lesson) for lesson in summarize(graded))
    if failed := ungraded(graded):
        body = (f'<div class="ungraded"><h3>{say(UNGRADED, count=len(failed))}</h3><ul>'
                + "".join("<li>" + say(UNGRADED_LINE, notebook=Markup(f"<b>{_e(name)}</b>"),
                                       why=why) + "</li>" for name, why in failed)
                + "</ul></div>" + body)
    title = _e(_(TITLE))
    lead = say(counted(LEAD_ONE, LEAD, len(graded)), count=len(graded),
               date=datetime.date.today().isoformat())
    return (f'<!doctype html><html lang="{"zh-CN" if language() == "zh_CN" else "en"}"><head>'
            f'<meta charset="utf-8"><meta name="viewport" content="width=device-width, '
            f'initial-scale=1"><title>{title}</title><style>{STYLE}</style></head><body>'
            f'<h1>{title}</h1><p class="lead">{lead}</p>'
            f'{body or "<p>" + _e(_(NOTHING)) + "</p>"}</body></html>\n')

