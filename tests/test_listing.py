"""A listing is the package's own code: exactly ``inspect.getsource`` in English; in Chinese the
same code with its comments and docstrings translated, every listed one of them."""
import ast
import inspect
import re
import sys
import textwrap
import warnings
from pathlib import Path

import pytest

from nn_from_scratch import i18n
from nn_from_scratch.epoch import train_epoch
from nn_from_scratch.listing import docstring, listing
from nn_from_scratch.model import predict, relu

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
import translations  # noqa: E402

CHINESE = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture
def chinese(monkeypatch):
    import matplotlib

    monkeypatch.setattr(i18n, "_chosen", [])
    with matplotlib.rc_context():  # set_language sets the figures' fonts: put them back after
        i18n.set_language("zh_CN")
        yield


def code_of(source: str) -> str:
    """What Python runs of ``source``: no comments, every docstring blanked. A method's source
    is indented as in its class (lesson 16 lists ``Tokenizer.encode``): dedented first."""
    tree = ast.parse(textwrap.dedent(source))
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.ClassDef) and ast.get_docstring(node):
            node.body[0].value.value = ""  # type: ignore[attr-defined]
    return ast.dump(tree)


def test_in_english_a_listing_is_exactly_what_inspect_finds():
    for obj in (relu, predict, train_epoch):
        assert listing(obj) == inspect.getsource(obj)
    assert docstring(predict) == inspect.getdoc(predict)


def test_in_chinese_every_listed_comment_and_docstring_is_chinese_and_the_code_the_same(chinese):
    listed = translations.listed()
    assert len(listed) > 30, "the lessons list the package's code"
    for lesson, obj, call in listed:
        if call == "docstring":
            assert CHINESE.search(docstring(obj)), f"{lesson}: docstring({obj.__name__})"
            continue
        english, shown = inspect.getsource(obj), listing(obj)
        assert code_of(shown) == code_of(english), f"{lesson}: listing({obj}) changed code"
        where = f"{lesson}: listing({getattr(obj, '__name__', obj)})"
        for text in translations.comments(shown):
            assert CHINESE.search(text) or not re.search(r"[a-z]{3,} [a-z]{3,}", text), \
                f"{where}: English comment {text!r}"
        for *_, text in translations.docstring_spans(shown):
            assert CHINESE.search(text), f"{where}: English docstring {text[:60]!r}"


def test_a_listed_method_has_its_docstring_found_and_translated(chinese):
    # a method's source is indented as in its class: its docstring was once not found at all,
    # so it stayed English in lesson 16 while every check above passed on an empty list
    from nn_from_scratch.text import Tokenizer

    english, shown = inspect.getsource(Tokenizer.encode), listing(Tokenizer.encode)
    assert english.startswith("    def encode")
    (*_, text), = translations.docstring_spans(english)
    assert text.startswith("``text`` as ids")
    (*_, text), = translations.docstring_spans(shown)
    assert CHINESE.search(text), f"English docstring {text!r}"
    assert code_of(shown) == code_of(english)


def test_chinese_figures_have_a_font_with_the_characters(chinese, tmp_path):
    import matplotlib.pyplot as plt

    if not i18n.figure_fonts():
        pytest.skip("no font with Chinese characters on this machine (CI installs "
                    "fonts-noto-cjk with .ci/install-chromium)")
    fig, ax = plt.subplots()
    ax.set_title("卷积核 kernel −1")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # matplotlib warns "Glyph ... missing from font(s)"
        fig.savefig(tmp_path / "title.png")
    plt.close(fig)


def test_without_a_chinese_font_the_reader_is_told_what_to_install(monkeypatch):
    import matplotlib

    monkeypatch.setattr(i18n, "CJK_FONTS", ("No Such Font",))
    monkeypatch.setattr(i18n, "_CJK_FILE", re.compile("(?!)"))
    with matplotlib.rc_context(), pytest.warns(UserWarning, match="fonts-noto-cjk"):
        assert i18n.figure_fonts() == []
