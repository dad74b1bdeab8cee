"""Reading a submission's notebook within caps, before anything else looks at it.

The intake already refuses a file past :data:`.intake.MAX_BYTES`. Here the bytes are
first counted (``{``, ``[`` and ``,``: every JSON value but the first needs one) and a
file of more than :data:`MAX_VALUES` values is refused before it is parsed, since
parsing holds the interpreter however it is threaded (a lesson's notebook has under
5,000). The rest is parsed once as plain JSON and measured, without recursing,
against three caps before nbformat, the rebuild or the copy check walks it:
:data:`MAX_CELLS` cells, :data:`MAX_DEPTH` levels of nesting and :data:`MAX_SOURCE`
characters of cell sources (a lesson has under 100 cells, nests 7 deep and holds
under 100,000 characters of source). 22 MB of tiny Markdown cells, which once held
the grader's event loop for 95 s, is refused in milliseconds with one line.

    >>> read_notebook('{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}').cells
    []
"""
import json
import warnings
from typing import Any

import nbformat

from ..i18n import _
from ..wire import json_values

__all__ = ["MAX_CELLS", "MAX_DEPTH", "MAX_SOURCE", "MAX_VALUES", "Unreadable", "read_notebook"]

MAX_VALUES = 200_000  # JSON values, counted from the bytes: parsing them takes ~0.1 s
MAX_CELLS = 1000
MAX_DEPTH = 32
MAX_SOURCE = 300_000  # characters of every cell's source together (a lesson: under 55,000)


class Unreadable(ValueError):
    """A submission that is not a notebook, or one past a cap; the message is its row's."""


def _measure(data: Any) -> tuple[int, int]:
    """``(deepest nesting, characters of cell sources)`` of a notebook's JSON, iteratively."""
    deepest, stack = 0, [(data, 1)]
    while stack:
        item, depth = stack.pop()
        deepest = max(deepest, depth)
        if deepest > MAX_DEPTH:
            break
        children = item.values() if isinstance(item, dict) else item
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    cells = data.get("cells") if isinstance(data, dict) else None
    source = 0
    for cell in cells if isinstance(cells, list) else []:
        text = cell.get("source", "") if isinstance(cell, dict) else ""
        source += sum(map(len, text)) if isinstance(text, list) else len(str(text))
    return deepest, source


def read_notebook(content: bytes | str) -> Any:
    """The notebook ``content`` holds (UTF-8 JSON, nbformat 4), or :class:`Unreadable` with the
    row's line."""
    raw = content.encode("utf-8", "replace") if isinstance(content, str) else content
    values = json_values(raw)
    if values > MAX_VALUES:
        raise Unreadable(_("not graded: about {count:,} JSON values, and the grader reads at most "
                           "{most:,} (a lesson's notebook has under 5,000); hand in the lesson's "
                           "notebook itself").format(count=values, most=MAX_VALUES))
    try:
        text = content.decode("utf-8") if isinstance(content, bytes) else content
        data = json.loads(text)
    except (ValueError, RecursionError) as err:  # UnicodeDecodeError is a ValueError
        first = str(err).splitlines()[0] if str(err) else ""
        raise Unreadable(_("not a readable notebook ({error})").format(
            error=f"{type(err).__name__}: {first[:200]}")) from None
    cells = data.get("cells") if isinstance(data, dict) else None
    if isinstance(cells, list) and len(cells) > MAX_CELLS:
        raise Unreadable(_("not graded: {count:,} cells, and the grader reads at most {most:,} "
                           "(a lesson has under 100); hand in the lesson's notebook itself")
                         .format(count=len(cells), most=MAX_CELLS))
    deepest, source = _measure(data)
    if deepest > MAX_DEPTH:
        raise Unreadable(_("not graded: its JSON nests more than {most} levels deep (a lesson's "
                           "nests 7); hand in the lesson's notebook itself").format(most=MAX_DEPTH))
    if source > MAX_SOURCE:
        raise Unreadable(_("not graded: {count:,} characters of code and text in its cells, and "
                           "the grader reads at most {most:,} (a lesson has under 100,000); hand "
                           "in the lesson's notebook itself").format(count=source, most=MAX_SOURCE))
    try:
        with warnings.catch_warnings():  # nbformat's about a submission's cells (duplicate ids:
            warnings.simplefilter("ignore")  # red team, round fourteen) went to the grader's
            return nbformat.reads(text, as_version=4)  # stderr among its progress lines;
        # what the grader makes of them, the rebuild's notes say
    except Exception as err:
        first = str(err).splitlines()[0] if str(err) else ""
        raise Unreadable(_("not a readable notebook ({error})").format(
            error=f"{type(err).__name__}: {first[:200]}")) from None
