"""Messages in the reader's language: English, or Simplified Chinese, through gettext.

The checkers' results and hints, and what the library prints or draws for people
(timings, the epoch lines of ``fit``, the data-source line, figure labels), are
written in English in the code and translated with gettext catalogs managed with
Babel: the English is extracted
into ``nn_from_scratch/locale/nn_from_scratch.pot``, translated in
``nn_from_scratch/locale/zh_CN/LC_MESSAGES/nn_from_scratch.po``, and compiled
to ``.mo`` when the package is built or installed (``setup.py``), or on first
use from a checkout.

The language follows, in order: :func:`set_language` (a Chinese edition's setup
cell calls it), the environment variable ``NN_FROM_SCRATCH_LANG``, English.
Library errors stay English. In Chinese, figures draw with a font that has the
characters (:func:`figure_fonts`), and :mod:`.listing` shows the package's code
with its comments and docstrings from the same catalog.

    >>> from nn_from_scratch.i18n import _, set_language
    >>> set_language("zh_CN")
    >>> _("not done yet")
    '尚未完成'
"""
import ast
import functools
import gettext
import importlib.util
import os
import re
import warnings
from pathlib import Path

from ._checks import check_choice
from .parsing import parse

__all__ = ["CJK_FONTS", "DOMAIN", "EDITION_LINES", "LANGUAGES", "LOCALES", "N_", "_",
           "char_column", "compile_catalogs", "compile_if_stale", "docstrings", "figure_fonts",
           "language", "pgettext", "set_language", "translation", "typeset"]

DOMAIN = "nn_from_scratch"
LOCALES = Path(__file__).resolve().parent / "locale"
LANGUAGES = ("en", "zh_CN")
ENV = "NN_FROM_SCRATCH_LANG"
_chosen: list[str] = []  # what set_language chose, if it was called
# What a Chinese edition's first code cell starts with (tools/translations.py adds it; the
# grader, which sets the language itself, sees no edit in it).
EDITION_LINES = ('from nn_from_scratch.i18n import set_language\n'
                 'set_language("zh_CN")  # 检查结果与提示用中文显示')


def docstrings(source: str) -> list[tuple[int, int, int, int]]:
    """Where the docstrings of the functions and classes in ``source`` stand: ``(first line,
    first column, last line, end column)`` of each string literal, lines counted from 1 and
    columns in characters. Besides comments they are the only code a Chinese edition words
    differently; none where ``source`` is not Python (a cell magic, a syntax error). A
    method's source, indented as in its class (``inspect.getsource(Tokenizer.encode)``), is
    parsed inside an ``if`` so that its lines and columns stay those of ``source``."""
    shift = 0  # lines the parsed text has before ``source``'s first
    try:  # one thread at a time: the grader prepares notebooks in threads
        tree = parse(source)
    except SyntaxError:
        if not source.startswith((" ", "\t")):
            return []
        try:
            tree, shift = parse("if 1:\n" + source), 1
        except SyntaxError:
            return []
    lines = source.split("\n")

    def column(line: int, offset: int) -> int:
        return char_column(lines[line - 1], offset)

    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) \
                and ast.get_docstring(node, clean=False) is not None:
            literal = node.body[0].value  # type: ignore[attr-defined]
            first, last = literal.lineno - shift, literal.end_lineno - shift
            found.append((first, column(first, literal.col_offset),
                          last, column(last, literal.end_col_offset)))
    return sorted(found)


def char_column(line: str, byte_offset: int) -> int:
    """The column, in characters, of ``byte_offset`` in ``line``: ``ast`` counts a node's
    columns in UTF-8 bytes, a ``str`` in characters (they differ after any Chinese)."""
    return len(line.encode()[:byte_offset].decode())


def language() -> str:
    """The language messages are in now: ``"en"`` or ``"zh_CN"``."""
    if _chosen:
        return _chosen[-1]
    wanted = os.environ.get(ENV, "en").replace("-", "_")
    return wanted if wanted in LANGUAGES else "en"


def set_language(lang: str) -> None:
    """Make messages ``lang`` from now on: ``"en"`` or ``"zh_CN"`` (``"zh"`` also works)."""
    lang = {"zh": "zh_CN", "zh-CN": "zh_CN"}.get(lang, lang)
    check_choice(lang, "lang", LANGUAGES)
    _chosen[:] = [lang]
    if lang != "en" and importlib.util.find_spec("matplotlib") is not None:
        figure_fonts()


# Fonts with the Chinese characters, as Linux (Debian's fonts-noto-cjk, fonts-wqy-zenhei),
# Windows and macOS name them; matplotlib's own DejaVu Sans has none.
CJK_FONTS = ("Noto Sans CJK SC", "Noto Sans CJK JP", "Source Han Sans SC", "WenQuanYi Zen Hei",
             "Microsoft YaHei", "SimHei", "PingFang SC", "Heiti SC", "Arial Unicode MS")
_CJK_FILE = re.compile(r"CJK|wqy|SourceHan|msyh|simhei|PingFang|STHeiti", re.I)


def figure_fonts() -> list[str]:
    """Let matplotlib draw Chinese: DejaVu Sans first (Latin, digits, the minus sign), then the
    first font found with Chinese characters, to which matplotlib falls back glyph by glyph.
    Returns the Chinese fonts found; warns, saying what to install, if there is none."""
    import matplotlib
    from matplotlib import font_manager

    def found() -> list[str]:
        names = {font.name for font in font_manager.fontManager.ttflist}
        return [name for name in CJK_FONTS if name in names]

    if not found():  # a font installed after matplotlib cached its list of fonts
        for path in font_manager.findSystemFonts():
            if _CJK_FILE.search(Path(path).name):
                font_manager.fontManager.addfont(path)
    cjk = found()
    if not cjk:
        warnings.warn(_("no font with Chinese characters was found, so figures will show "
                        "boxes for them; install one (Debian/Ubuntu: apt-get install "
                        "fonts-noto-cjk) and restart the kernel"), stacklevel=3)
    matplotlib.rcParams["font.family"] = ["DejaVu Sans", *cjk[:1]]  # a list: the fallback
    return cjk


def _(message: str) -> str:
    """``message`` in the current language (English when there is no translation of it)."""
    lang = language()
    return message if lang == "en" else translation(lang).gettext(message)


# Full-width punctuation: a half-width space next to one is a gap in Chinese text.
_FULL_WIDTH = "（）“”‘’，。：；、！？《》"


def typeset(text: str) -> str:
    """A message as plain Chinese text reads it, in any language but English (which is kept as
    it is): no half-width space beside full-width punctuation ("max_pool(x)（x 为 (6, 8)） 的"
    -> "…（x 为 (6, 8)）的"), and no Markdown backticks, which plain text shows as they are
    ("`...` 还在" -> "... 还在")."""
    if language() == "en":
        return text
    text = re.sub(r"`([^`\n]*)`", r"\1", text)
    text = re.sub(f"(?<=[{_FULL_WIDTH}]) +", "", text)
    return re.sub(f" +(?=[{_FULL_WIDTH}])", "", text)


def pgettext(context: str, message: str) -> str:
    """``message`` in the current language, where the same English means something else
    elsewhere (``pgettext("axis", "accuracy")``: a figure's axis, not exercise 08.3's name)."""
    lang = language()
    return message if lang == "en" else translation(lang).pgettext(context, message)


def N_(message: str) -> str:  # noqa: N802 - gettext's name for "mark, translate later"
    """Mark ``message`` for translation where it is defined, e.g. a hint kept in a constant;
    it is translated where it is shown (the checkers' results are, by ``@exercise``)."""
    return message


def compile_catalogs(directory: Path = LOCALES) -> list[Path]:
    """Compile every ``.po`` under ``directory`` to the ``.mo`` next to it; return those written."""
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po

    written = []
    for po in sorted(directory.glob("*/LC_MESSAGES/*.po")):
        with po.open("rb") as f:
            catalog = read_po(f)
        with po.with_suffix(".mo").open("wb") as f:
            write_mo(f, catalog)
        written.append(po.with_suffix(".mo"))
    return written


def compile_if_stale() -> None:
    """Compile the catalogs if a ``.mo`` is missing or older than its ``.po`` (a checkout, not
    an installed package), warning if that cannot be done. The grader calls it before its
    sandboxed kernels start: they cannot write into the package."""
    for po in sorted(LOCALES.glob("*/LC_MESSAGES/*.po")):
        mo = po.with_suffix(".mo")
        if not mo.exists() or mo.stat().st_mtime < po.stat().st_mtime:
            try:
                compile_catalogs()
            except (ImportError, OSError) as err:
                warnings.warn(f"the messages in {po.parent.parent.name} could not be compiled "
                              f"({err}); install Babel (pip install babel) or reinstall the "
                              f"package", stacklevel=2)
            return


@functools.cache
def translation(lang: str) -> gettext.NullTranslations:
    """The package's catalog for ``lang`` (compiled first if stale), with ``gettext`` for
    messages and ``pgettext`` for passages of a listing (:mod:`.listing`)."""
    compile_if_stale()
    return gettext.translation(DOMAIN, LOCALES, [lang], fallback=True)
