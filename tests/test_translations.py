"""The Chinese prose is found out of date mechanically, and never touches the code: the one
difference in code is the language line a Chinese edition starts with."""
import ast
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
import translations  # noqa: E402

import notebooks  # noqa: E402

LESSONS = notebooks.lesson_paths()
TRANSLATED = [p for p in LESSONS if translations.catalog_path(p).exists()
              and not translations.problems(p)]


def test_passages_keep_fenced_code_whole_and_split_paragraphs():
    text = "One.\nStill one.\n\n```python\nx = 1\n\ny = 2\n```\n\nTwo."
    assert translations.passages(text) == ["One.\nStill one.", "```python\nx = 1\n\ny = 2\n```",
                                           "Two."]
    code = "# a comment\nx = '# not one'  # (batch, 784): trailing\n    # TODO: write it\n" \
           "# BEGIN SOLUTION\ny = 2  # noqa: E501"
    assert translations.comments(code) == ["a comment", "(batch, 784): trailing",
                                           "TODO: write it"]


def test_docstrings_are_passages_and_translate_in_place():
    code = 'def f(x):\n    """x: (784,) × 2."""\n    s = """not one"""\n    return x\n\n' \
           'class A:\n    r\'\'\'Two\n    lines.\n    \'\'\'\n'
    assert [text for *_, text in translations.docstring_spans(code)] == [
        "x: (784,) × 2.", "Two\n    lines.\n    "]
    zh = {"x: (784,) × 2.": "x：(784,) 乘以 2。", "Two\n    lines.\n    ": "两行。\n    "}
    translated = translations.translate_docstrings(code, zh.__getitem__)
    assert translated == code.replace("x: (784,) × 2.", "x：(784,) 乘以 2。").replace(
        "Two\n    lines.\n    ", "两行。\n    ")
    assert _code_of(translated) == _code_of(code)


def test_a_changed_english_sentence_makes_its_translation_stale(tmp_path):
    lesson = notebooks.LESSONS / "01_random_keys.md"
    changed = tmp_path / lesson.name  # same name: the same catalog
    text = lesson.read_text()
    sentence = "NumPy keeps one hidden random state for the whole program."
    assert sentence in text
    changed.write_text(text.replace(sentence, "NumPy keeps a single hidden random state."))
    new = set(translations.problems(changed)) - set(translations.problems(lesson))
    assert len(new) == 1 and "NumPy keeps a single hidden random state" in new.pop()


class _Prose(ast.NodeTransformer):
    """Sets aside what a Chinese edition words differently: every string's text (docstrings,
    labels, the words of an f-string, whose values it may put in another order)."""

    def visit_Constant(self, node: ast.Constant) -> ast.AST:  # noqa: N802 - ast's name
        return ast.Constant("") if isinstance(node.value, str) else node

    def visit_JoinedStr(self, node: ast.JoinedStr) -> ast.AST:  # noqa: N802
        values = sorted((self.visit(v) for v in node.values
                         if isinstance(v, ast.FormattedValue)), key=ast.dump)
        return ast.Tuple(elts=values, ctx=ast.Load())


def _code_of(source: str) -> str:
    """The code of ``source`` as Python sees it (no comments), every string's text set aside."""
    return ast.dump(_Prose().visit(ast.parse(source)))


def test_strings_shown_to_people_are_passages_and_only_their_words_may_differ():
    code = ('print(f"took {t:.2f} s", "hello world")\nplt.title("kernel")\n'
            'd["key"] = 1\nf(x, label="train")\ny = "relu"\n')
    assert translations.strings(code) == ['f"took {t:.2f} s"', '"hello world"', '"kernel"',
                                          '"train"']
    zh = {'f"took {t:.2f} s"': 'f"用时 {t:.2f} 秒"', '"hello world"': '"你好"',
          '"kernel"': '"卷积核"', '"train"': '"训练"'}
    translated = translations._translate_strings(code, zh.__getitem__)
    assert 'd["key"]' in translated and 'y = "relu"' in translated and '"你好"' in translated
    assert _code_of(translated) == _code_of(code)
    assert _code_of(code.replace("{t:.2f}", "{t + 1:.2f}")) != \
        _code_of(code), "what an f-string computes is code"


@pytest.mark.parametrize("lesson", TRANSLATED, ids=[p.stem for p in TRANSLATED])
def test_the_chinese_editions_run_the_same_code(lesson):
    full, student = notebooks.editions(lesson)
    catalog = translations.read(lesson)
    for english in (full, student):
        chinese = translations.translate(english, catalog)
        first_code = next(cell for cell in chinese.cells if cell.cell_type == "code")
        assert first_code.source.startswith(translations.EDITION_LINES + "\n")
        first_code.source = first_code.source[len(translations.EDITION_LINES) + 1:]
        for en_cell, zh_cell in zip(english.cells, chinese.cells, strict=True):
            assert en_cell.cell_type == zh_cell.cell_type
            if en_cell.cell_type == "code":  # comments and docstrings may differ, nothing else
                assert _code_of(zh_cell.source) == _code_of(en_cell.source)
            else:
                assert zh_cell.source != en_cell.source or not en_cell.source.strip()


def test_the_chinese_readme_maps_every_lesson_and_links_back():
    readme = (notebooks.ROOT / "README.zh-CN.md").read_text(encoding="utf-8")
    assert "[English](README.md)" in readme.splitlines()[2]
    assert "[简体中文](README.zh-CN.md)" in (notebooks.ROOT / "README.md").read_text()
    for lesson in LESSONS:
        assert f"(notebooks/zh/{lesson.stem}.ipynb)" in readme, f"{lesson.stem} in README.zh-CN"


@pytest.mark.parametrize("lesson", LESSONS, ids=[p.stem for p in LESSONS])
def test_every_lesson_has_its_chinese_editions_up_to_date(lesson):
    """Both Chinese notebooks exist, match today's English and catalog, and the full one was
    executed with every check passing, in Chinese."""
    import nbformat

    from nn_from_scratch.grade.verdicts import check_results

    assert not translations.problems(lesson), translations.problems(lesson)[:3]
    fix = f"rebuild with .venv/bin/python tools/translations.py build {lesson.stem}"
    catalog = translations.read(lesson)
    for edition, english in zip(("full", "student"), notebooks.editions(lesson)):
        path = translations.zh_path(lesson, edition)
        assert path.exists(), f"{path.relative_to(notebooks.ROOT)} is missing: {fix}"
        committed = nbformat.read(path, as_version=4)
        expected = translations.translate(english, catalog)
        assert notebooks.cell_sources(committed) == notebooks.cell_sources(expected), (
            f"{path.relative_to(notebooks.ROOT)} is stale: {fix}")
        code = [c for c in committed.cells if c.cell_type == "code" and c.source.strip()]
        if edition == "student":
            assert not [c for c in code if c.outputs], "the student edition has no outputs"
            continue
        results = check_results(committed)
        assert results and all(r["status"] == "passed" for r in results.values()), results
        lines = [o["data"]["text/plain"] for c in code for o in c.outputs
                 if "check" in c.metadata.get("tags", []) and "data" in o]
        assert lines and all("：" in line for line in lines), "the checks answered in Chinese"
        boxes = [c.source[:60] for c in code for o in c.outputs
                 if "missing from font" in str(o) or "no font with Chinese" in str(o)]
        assert not boxes, (f"executed without a Chinese font, so its figures show boxes: "
                           f"{boxes[:2]}; apt-get install fonts-noto-cjk, then {fix}")


# A line break inside Chinese prose shows as a space between two characters (browsers and
# Jupyter render a soft break as a space; only English needs one there): one line per
# paragraph, list item or table row.
_BROKEN_CHINESE = re.compile(r"([\u4e00-\u9fff]\n[ \t]*[\u4e00-\u9fff，。：；、！？（）]"
                             r"|[，。：；、！？）]\n[ \t]*(?=\S)(?![-*+] |\d+\. |\||#|>|<|```))")


def test_chinese_prose_has_no_line_break_inside_a_paragraph():
    broken = [f"{lesson.stem}: {m.string[:60]!r}" for lesson in LESSONS
              for m in translations.read(lesson)
              if m.id and m.context not in (translations.COMMENT, translations.DOCSTRING)
              and "```" not in m.string
              and _BROKEN_CHINESE.search(m.string)]
    readme = notebooks.ROOT / "README.zh-CN.md"
    outside_code = re.sub(r"```.*?```", "", readme.read_text(encoding="utf-8"), flags=re.S)
    broken += [f"README.zh-CN.md: {m.group(0)!r}" for m in _BROKEN_CHINESE.finditer(outside_code)]
    assert broken == [], "join these lines (a break between Chinese characters shows as a " \
                         "space):\n" + "\n".join(broken)


_CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.S)
_LINK = re.compile(r"\]\(([^)#\s][^)\s]*)\)")  # a link's target; an in-page anchor (#...) follows
_CJK = re.compile(r"[\u4e00-\u9fff]")          # the heading it names, so it is translated


def test_chinese_prose_keeps_the_code_and_links_and_sets_code_off_by_a_space():
    """Every inline code span and link target of an English passage is in its Chinese (a
    translation that drops or rewrites `vmap(f, in_axes=(None, 0))` teaches other code), and
    inline code never touches a Chinese character (the house style: a space on either side)."""
    def spans(text: str) -> list[str]:
        return [" ".join(m.group(2).split()) for m in _CODE_SPAN.finditer(text)]

    found = []
    for lesson in LESSONS:
        for m in translations.read(lesson):
            if not m.id or m.context in (translations.COMMENT, translations.DOCSTRING) \
                    or "```" in m.id:
                continue
            where = f"{lesson.stem}: {m.string[:50]!r}"
            found += [f"{where} lacks `{s}`" for s in spans(m.id) if s not in spans(m.string)]
            found += [f"{where} lacks the link {u}" for u in _LINK.findall(m.id)
                      if u not in _LINK.findall(m.string)]
            found += [f"{where}: no space between Chinese and `{c.group(2)}`"
                      for c in _CODE_SPAN.finditer(m.string)
                      if _CJK.match(m.string[c.start() - 1:c.start()] or " ")
                      or _CJK.match(m.string[c.end():c.end() + 1] or " ")]
    assert found == [], "\n".join(found)


# What may stay English in what a Chinese edition prints (README.md, "The Chinese edition"):
# errors (Python's, NumPy's, JAX's and the library's own) and what goes to stderr (warnings,
# JAX's compile log) are skipped whole; lines of code are skipped, and so is every line with no
# Chinese in the output of a cell that lists library code (tests/test_listing.py checks that
# each listed comment and docstring is Chinese); and these lines, program text or other
# libraries' words, each with its reason.
ALLOWED_LINES = [  # (lesson prefix, pattern of the line, why)
    ("00", r"^TypeError: lax\.add requires", "JAX's own error, printed by the lesson"),
    ("05", r"stablehlo\.", "a compiled program's text (StableHLO)"),
    ("05", r"^Invalid nan value encountered", "JAX's own warning, printed where it happens"),
    ("09", r"^\s*(\w+, )+\w+,?\s*$", "the jaxpr's primitive names"),
    ("11", r"[Pp]map|shard_map|smap|composable|multi-controller|[Ff]or more|migration|"
           r"guide|below", "jax.pmap's own docstring, printed as JAX words it (its deprecation)"),
    ("15", r"^\s", "the source of optax's functions (other libraries' code, as written)"),
    ("16", r"^│", "the text the lesson models and the model's samples of it (Python's English "
           "documentation), quoted after a bar"),
    ("12", r"^process \d+", "the log lines of the worker processes the lesson starts (a separate "
           "program's output, read by the lesson's code, like a cluster job's log)"),
]
_UNITS = {"ms", "µs", "ns", "s", "MiB", "GiB", "MB", "GB", "nan", "inf", "None", "True",
          "False", "x"}
_CODE_LINE = re.compile(r"^\s*(def |class |for |if |elif |else:|while |with |return\b|raise |"
                        r"yield |import |from \w|@|[rbf]?[\"']|#|\)|[\w.\[\], ]+ [-+*/]?= |"
                        r"\w[\w.]*\(|File \"|Traceback )")


def _english_run(line: str) -> str | None:
    """Three English words in a row in ``line`` (identifiers, numbers and units are no words)."""
    run: list[str] = []
    for token in line.split():
        word = token.strip(".,:;!?'\"()[]{}|")
        if re.fullmatch(r"[A-Za-z][a-z]+(?:-[a-z]+)*(?:'[a-z]+)?", word) \
                and word not in _UNITS and not re.search(r"[_(=/`]", token):
            run.append(word)
            if len(run) == 3:
                return " ".join(run)
        else:
            run = []
    return None


def english_in_outputs(nb, lesson: str) -> list[str]:
    """Each line of ``nb``'s outputs with three English words in a row outside the allowed
    list: where the lesson or the package still prints English for a Chinese reader."""
    found = []
    for index, cell in enumerate(nb.cells):
        allowed = [pattern for prefix, pattern, _why in ALLOWED_LINES
                   if lesson.startswith(prefix)]
        if re.search(r"\blisting\(", cell.source):
            allowed.append(r"^[^\u4e00-\u9fff]*$")
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error" or output.get("name") == "stderr":
                continue
            text = output.get("text") or output.get("data", {}).get("text/plain", "")
            for line in ("".join(text) if isinstance(text, list) else text).splitlines():
                if _CODE_LINE.match(line) or any(re.search(p, line) for p in allowed):
                    continue
                if _english_run(line):
                    found.append(f"{lesson} [{index}]: {line.strip()[:100]!r}")
    return found


@pytest.mark.parametrize("lesson", LESSONS, ids=[p.stem for p in LESSONS])
def test_a_chinese_edition_prints_nothing_english_for_people(lesson):
    import nbformat

    nb = nbformat.read(translations.zh_path(lesson), as_version=4)
    found = english_in_outputs(nb, lesson.stem)
    assert found == [], "English in the Chinese edition's outputs (translate the string in " \
        "the lesson's catalog or the package's, or, if it is program text, allow it in " \
        "ALLOWED_LINES and README.md):\n" + "\n".join(found)
