"""A check's result as HTML, for JupyterLab, the course website and the progress page.

The plain line (``✓ 07.3 predict: ...``) stays for terminals; notebooks show this instead:
a box whose mark is a symbol AND a word (``✓ passed``, ``✗ failed``, ``… not done``), so
it reads without colour too, then the exercise and the message, with `code` in code style.
Every colour pair is chosen for WCAG AA contrast (4.5:1 or more, tests/test_exercises_core)
and the box sets its own background, so a dark theme changes nothing. Everything a result
holds is escaped: a hint that quotes the student's text shows it as text, and the HTML is
tags and inline styles only, never a script, a link or an event handler.

    >>> status_html("failed", "07.3", "predict", "use `jnp.maximum`")  # doctest: +SKIP
    '<div class="nn-check" data-status="failed" ...><strong ...>✗ failed</strong> <span>07.3
    predict</span>: <span class="nn-check-message">use <code ...>jnp.maximum</code></span></div>'
"""
import html
import re

from ..i18n import N_, _, typeset

__all__ = ["COLOURS", "SYMBOLS", "WORDS", "TEXT", "message_html", "status_html"]

SYMBOLS = {"passed": "✓", "failed": "✗", "not done": "…"}
# The word beside each symbol (the same msgids as the class report's).
WORDS = {"passed": N_("passed"), "failed": N_("failed"), "not done": N_("not done")}
# status -> (mark's colour, the box's background); the message is TEXT on that background.
COLOURS = {"passed": ("#1b5e20", "#e8f5e9"), "failed": ("#b71c1c", "#ffebee"),
           "not done": ("#424242", "#f2f2f2")}
TEXT = "#1f1f1f"
_CODE_STYLE = ("font-family:var(--jp-code-font-family,monospace);font-size:0.95em;"
               "background:rgba(0,0,0,0.07);padding:0 0.2em;border-radius:3px")
_BACKTICKED = re.compile(r"`([^`\n]*)`")


def message_html(message: str) -> str:
    """``message`` escaped, its `backticked` spans in ``<code>``; the prose between them set
    as the edition's language sets plain text (:func:`~nn_from_scratch.i18n.typeset`)."""
    parts = _BACKTICKED.split(message)  # prose, code, prose, code, ..., prose
    return "".join(f'<code style="{_CODE_STYLE}">{html.escape(part)}</code>' if i % 2
                   else html.escape(typeset(part)) for i, part in enumerate(parts))


def status_html(status: str, exercise: str, title: str, message: str) -> str:
    """One result as a box: ``✓ passed`` (or ``✗ failed``, ``… not done``), the exercise
    ``"LL.N"`` and its ``title``, and ``message`` (Markdown backticks mark code), all escaped.

    ``status`` is one of :data:`SYMBOLS`' keys; anything else is a bug (a ``KeyError``).
    """
    mark, background = COLOURS[status]
    box = (f"border-left:4px solid {mark};background:{background};color:{TEXT};"
           "padding:0.3em 0.7em;margin:0.2em 0;border-radius:2px;line-height:1.45")
    # The plain line's own words and order ("{symbol} {exercise} {title}: {message}", the
    # Chinese with a full-width colon), with each field in its HTML
    line = html.escape(_("{symbol} {exercise} {title}: {message}")).format(
        symbol=f'<strong style="color:{mark}">{SYMBOLS[status]} '
               f'{html.escape(_(WORDS[status]))}</strong>',
        exercise=html.escape(exercise), title=html.escape(title),
        message=f'<span class="nn-check-message">{message_html(message)}</span>')
    return f'<div class="nn-check" data-status="{html.escape(status)}" style="{box}">{line}</div>'
