"""The package's own code as a lesson shows it: comments and docstrings in the reader's language.

A lesson never copies library code: it prints the source Python finds,
``inspect.getsource``. :func:`listing` is that source; in a Chinese edition
(:func:`~nn_from_scratch.i18n.set_language`) its comments and docstrings are
replaced by their translations from the package's catalog, every other character
the package's own. The same functions find the passages of a code cell for the
lessons' catalogs (``tools/translations.py``), so a comment is one passage
everywhere.

    >>> from nn_from_scratch.listing import listing
    >>> from nn_from_scratch.model import relu
    >>> print(listing(relu))  # doctest: +SKIP
"""
import inspect
import io
import re
import tokenize
from collections.abc import Callable
from typing import Any

from .i18n import docstrings, language, translation

__all__ = ["COMMENT", "DOCSTRING", "comment_spans", "comments", "docstring", "docstring_spans",
           "listing", "offsets", "translate_comments", "translate_docstrings"]

COMMENT = "comment"  # the msgctxt of a comment in a catalog
DOCSTRING = "docstring"  # the msgctxt of a docstring: its text between the quotes, as written
_QUOTED = re.compile(r'([rRuU]?)("""|\'\'\'|"|\')(.*)\2', re.S)
_KEEP = re.compile(r"(BEGIN|END) (SOLUTION|STUB)|noqa|type: ignore")  # markers, linter notes


def comment_spans(code: str) -> list[tuple[int, int, int, str]]:
    """(line, start column, end column, text) of every comment worth translating in ``code``:
    whole-line and trailing ones, never markers or linter notes, never inside a string."""
    found = []
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(code).readline))
    except (tokenize.TokenError, SyntaxError):
        return []
    for token in tokens:
        if token.type == tokenize.COMMENT and not _KEEP.search(token.string):
            text = re.sub(r"^#\s?", "", token.string)
            if text.strip():
                found.append((token.start[0], token.start[1], token.end[1], text))
    return found


def comments(code: str) -> list[str]:
    """The text of ``code``'s comments, whole-line and trailing (markers left out)."""
    return [text for *_, text in comment_spans(code)]


def translate_comments(code: str, translate: Callable[[str], str]) -> str:
    """``code`` with each comment's text replaced by ``translate(text)``."""
    lines = code.split("\n")
    for row, start, end, text in reversed(comment_spans(code)):
        line = lines[row - 1]
        lines[row - 1] = line[:start] + "# " + translate(text) + line[end:]
    return "\n".join(lines)


def offsets(code: str) -> list[int]:
    """Where each line of ``code`` starts, as an offset into ``code`` (lines counted from 1)."""
    starts = [0, 0]
    for line in code.split("\n"):
        starts.append(starts[-1] + len(line) + 1)
    return starts


def docstring_spans(code: str) -> list[tuple[int, int, str]]:
    """(start, end, text) of each docstring of ``code``: offsets into ``code`` of the text
    between its quotes, and that text as written (escapes and indentation kept)."""
    starts = offsets(code)
    found = []
    for line, col, end_line, end_col in docstrings(code):
        start, end = starts[line] + col, starts[end_line] + end_col
        quoted = _QUOTED.fullmatch(code[start:end])
        if quoted and quoted.group(3).strip():
            inner = start + len(quoted.group(1)) + len(quoted.group(2))
            found.append((inner, inner + len(quoted.group(3)), quoted.group(3)))
    return found


def translate_docstrings(code: str, translate: Callable[[str], str]) -> str:
    """``code`` with each docstring's text replaced by ``translate(text)``."""
    for start, end, text in reversed(docstring_spans(code)):
        code = code[:start] + translate(text) + code[end:]
    return code


def listing(obj: Any) -> str:
    """The source of ``obj`` (a function, class or module of the package), exactly as
    ``inspect.getsource(obj)`` gives it, with its comments and docstrings in the language
    messages are in now: unchanged in English; translated from the package's catalog in
    Chinese (a passage with no translation yet stays English)."""
    source = inspect.getsource(obj)
    lang = language()
    if lang == "en":
        return source
    catalog = translation(lang)
    return translate_comments(
        translate_docstrings(source, lambda text: catalog.pgettext(DOCSTRING, text)),
        lambda text: catalog.pgettext(COMMENT, text))


def docstring(obj: Any) -> str:
    """The docstring of ``obj`` as ``inspect.getdoc(obj)`` gives it, in the language messages
    are in now (see :func:`listing`)."""
    lang = language()
    if lang == "en" or not obj.__doc__:
        return inspect.getdoc(obj) or ""
    # the catalog keys the text as inspect.cleandoc gives it: Python 3.13 dedents __doc__
    # itself, 3.11 does not, and the same docstring must find the same translation
    return inspect.cleandoc(translation(lang).pgettext(DOCSTRING, inspect.cleandoc(obj.__doc__)))
