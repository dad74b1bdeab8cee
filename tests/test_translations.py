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


def test_a_changed_english_sentence_makes_its_translation_stale(tmp_path):
    lesson = notebooks.LESSONS / "01_random_keys.md"
    changed = tmp_path / lesson.name  # same name: the same catalog
    text = lesson.read_text()
    sentence = "NumPy keeps one hidden random state for the whole program."
    assert sentence in text
    changed.write_text(text.replace(sentence, "NumPy keeps a single hidden random state."))
    new = set(translations.problems(changed)) - set(translations.problems(lesson))
    assert len(new) == 1 and "NumPy keeps a single hidden random state" in new.pop()


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
            if en_cell.cell_type == "code":  # comments may differ, nothing else
                assert ast.dump(ast.parse(zh_cell.source)) == ast.dump(ast.parse(en_cell.source))
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


# A line break inside Chinese prose shows as a space between two characters (browsers and
# Jupyter render a soft break as a space; only English needs one there): one line per
# paragraph, list item or table row.
_BROKEN_CHINESE = re.compile(r"([\u4e00-\u9fff]\n[ \t]*[\u4e00-\u9fff，。：；、！？（）]"
                             r"|[，。：；、！？）]\n[ \t]*(?=\S)(?![-*+] |\d+\. |\||#|>|<|```))")


def test_chinese_prose_has_no_line_break_inside_a_paragraph():
    broken = [f"{lesson.stem}: {m.string[:60]!r}" for lesson in LESSONS
              for m in translations.read(lesson)
              if m.id and m.context != translations.COMMENT and "```" not in m.string
              and _BROKEN_CHINESE.search(m.string)]
    readme = notebooks.ROOT / "README.zh-CN.md"
    outside_code = re.sub(r"```.*?```", "", readme.read_text(encoding="utf-8"), flags=re.S)
    broken += [f"README.zh-CN.md: {m.group(0)!r}" for m in _BROKEN_CHINESE.finditer(outside_code)]
    assert broken == [], "join these lines (a break between Chinese characters shows as a " \
                         "space):\n" + "\n".join(broken)
