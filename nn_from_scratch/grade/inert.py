"""Text in exports, made harmless to open: no formula, no markup, nothing of the grader's machine.

What a submission controls (its file name, an exception's text, a hint quoting its values)
reaches files an instructor opens in a spreadsheet or a Markdown viewer, and files a
student reads. Each writer passes such text through one of these:

- :func:`csv_cell`: OWASP's rule for CSV injection: a cell that begins with ``=``, ``+``,
  ``-``, ``@``, a tab or a carriage return gets a leading apostrophe, so a spreadsheet shows
  ``'=HYPERLINK(...)`` as text instead of running it;
- :func:`markdown`: ``<``, ``>`` and ``&`` as HTML entities and every other character that
  can make Markdown backslash-escaped (CommonMark lets any punctuation be), so no link,
  image, HTML tag, entity, emphasis, table cell or autolink forms: ``![x](http://…)``
  shows as those characters (and reads almost as plainly in the file);
- :func:`unplaced`: the grader's own folders (its temporary folder, the Python environment,
  the course's install, the home folder, the working folder) replaced by placeholders such
  as ``<python>`` and ``<tmp>``, for everything a student gets back.

HTML is escaped where it is written (``html.escape``, :mod:`.report_page`).
"""
import os
import re
import sys
import tempfile
from pathlib import Path

__all__ = ["FORMULA_START", "csv_cell", "markdown", "unplaced"]

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
# What can open Markdown (CommonMark, and GitHub's tables and autolinks): with ``[`` escaped,
# no ``(`` or ``!`` makes a link or an image; the ``:`` of ``http://``, the ``@`` of an
# address and the ``.`` of ``www.`` make autolinks; parentheses, commas... stay plain
_MARKUP = re.compile(r"[\\`*_\[\]<>&|~@]|:(?=//)|(?i:(?<=www)\.)")
_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
# The grader's private folder (:mod:`.batch`), and a Python's library folder, wherever they are
_PRIVATE = re.compile(r"(?:/[^\s/'\"]+)*/nn-from-scratch-grade-[\w.-]*")
_LIBRARY = re.compile(r"(?:/[^\s/'\"]+)*/lib/python3\.\d+/(?=site-packages/|\S)")


def csv_cell(text: str) -> str:
    """``text`` as a spreadsheet shows it as text: ``'`` before a leading ``= + - @``, tab, CR."""
    return "'" + text if text.startswith(FORMULA_START) else text


def markdown(text: str) -> str:
    """``text`` as Markdown shows it, character for character: nothing in it is markup.

    >>> print(markdown("![x](http://e.com) <b>|"))
    !\\[x\\](http\\://e.com) &lt;b&gt;\\|
    """
    return _MARKUP.sub(lambda m: _ENTITIES.get(m[0], "\\" + m[0]),
                            text.replace("\r", " ").replace("\n", " "))


def _working_folder() -> str:
    try:
        return os.getcwd()
    except OSError:  # deleted under the grader
        return ""


def _places() -> list[tuple[str, str]]:
    """(folder, placeholder), longest first: the folders that say where the grader runs."""
    places = {sys.prefix: "<python>", sys.base_prefix: "<python>", sys.exec_prefix: "<python>",
              os.environ.get("VIRTUAL_ENV", ""): "<python>",
              str(Path(__file__).resolve().parents[2]): "<course>",  # holds nn_from_scratch/
              tempfile.gettempdir(): "<tmp>", os.environ.get("TMPDIR", ""): "<tmp>",
              str(Path.home()): "~", _working_folder(): "<folder>"}
    found: dict[str, str] = {}
    for folder, placeholder in places.items():
        for form in {folder, os.path.realpath(folder) if folder else ""}:
            if len(form.strip("/")) > 1:  # never "/" itself
                found.setdefault(form.rstrip("/"), placeholder)
    return sorted(found.items(), key=lambda item: -len(item[0]))


def unplaced(text: str) -> str:
    """``text`` with nothing of where the grader runs: its folders become placeholders.

    ``/tmp/nn-from-scratch-grade-x1/alice.ipynb`` -> ``<grader>``,
    ``/opt/venv/lib/python3.12/site-packages/jax/x.py`` -> ``<python>/site-packages/jax/x.py``.
    """
    text = _LIBRARY.sub("<python>/", _PRIVATE.sub("<grader>", text))
    for folder, placeholder in _places():
        text = text.replace(folder, placeholder)
    return text
