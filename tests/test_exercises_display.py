"""A check's result as HTML (exercises/_display): what a notebook shows in place of the line.

Run in both languages and as the grader checks (conftest): the box says the same in each."""
from html.parser import HTMLParser

import jax.numpy as jnp
import pytest

from nn_from_scratch import i18n
from nn_from_scratch.exercises import MIME
from nn_from_scratch.exercises import mlp_from_scratch as check
from nn_from_scratch.exercises._display import COLOURS, SYMBOLS, TEXT, WORDS

ALLOWED = {"div": {"class", "data-status", "style"}, "strong": {"style"},
           "span": {"class"}, "code": {"style"}}


class Markup(HTMLParser):
    """The tags, attributes and text of a piece of HTML."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.tags, self.text, self.code = [], [], []
        self._in_code = False
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._in_code = tag == "code"

    def handle_endtag(self, tag):
        self._in_code = False

    def handle_data(self, data):
        self.text.append(data)
        if self._in_code:
            self.code.append(data)


def luminance(colour: str) -> float:
    """WCAG 2's relative luminance of ``#rrggbb``."""
    channels = [int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    r, g, b = (c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: str, b: str) -> float:
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def only_inert_markup(text: str) -> Markup:
    markup = Markup(text)
    for tag, attrs in markup.tags:
        assert tag in ALLOWED and set(attrs) <= ALLOWED[tag], (tag, attrs)
        assert "url(" not in attrs.get("style", "") and "expression" not in attrs.get("style", "")
    return markup


@pytest.mark.parametrize("status", list(SYMBOLS))
def test_every_mark_passes_wcag_aa_and_reads_without_colour(status):
    mark, background = COLOURS[status]
    assert contrast(mark, background) >= 4.5, status
    assert contrast(TEXT, background) >= 4.5, status
    assert len({SYMBOLS[s] for s in SYMBOLS}) == len({WORDS[s] for s in SYMBOLS}) == 3


def test_the_bundle_holds_the_line_the_html_and_the_graders_record():
    wrong = check.relu(lambda x: x * 0 + 1)  # a known wrong answer: never 0
    bundle = wrong._repr_mimebundle_()
    assert bundle["text/plain"] == wrong.line
    assert set(bundle[MIME]) == {"exercise", "title", "status", "message"}
    assert bundle[MIME]["message"] == wrong.message and wrong.status == "failed"
    markup = only_inert_markup(bundle["text/html"])
    shown = "".join(markup.text)
    word = i18n._(WORDS["failed"])
    assert shown.startswith(f"✗ {word} 07.1 ") and markup.tags[0][1]["data-status"] == "failed"
    assert "jnp.maximum" in shown, "the hint is in the box"
    assert word in ({"en": "failed"}.get(i18n.language()) or "未通过")


@pytest.mark.parametrize("answer, status", [(..., "not done"), (None, "passed")])
def test_not_done_and_passed_say_so_in_the_editions_language(answer, status):
    result = check.relu(answer if answer is ... else lambda x: jnp.maximum(0, x))
    assert result.status == status, result.line
    markup = only_inert_markup(result.html)
    assert "".join(markup.text).startswith(f"{SYMBOLS[status]} {i18n._(WORDS[status])} ")
    if status == "not done":  # the stub's `...` is code, in Chinese too (whose line drops `)
        assert markup.code == ["..."], result.html
        assert "`" not in result.line or i18n.language() == "en"


def test_what_the_student_wrote_is_shown_as_text_never_run():
    def student(x):
        raise ValueError('<script>alert(1)</script><img src=x onerror="alert(2)"> `<b>`')

    result = check.relu(student)
    assert result.status == "failed"
    markup = only_inert_markup(result.html)
    shown = "".join(markup.text)
    assert "<script>alert(1)</script>" in shown and 'onerror="alert(2)"' in shown
    assert "<script" not in result.html and "<img" not in result.html
    assert "<b>" in shown
