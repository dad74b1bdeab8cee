"""The Chinese prose is found out of date mechanically, and never touches the code: the one
difference in code is the language line a Chinese edition starts with."""
import ast
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
        assert first_code.source.startswith(translations.LANGUAGE_LINES + "\n")
        first_code.source = first_code.source[len(translations.LANGUAGE_LINES) + 1:]
        for en_cell, zh_cell in zip(english.cells, chinese.cells, strict=True):
            assert en_cell.cell_type == zh_cell.cell_type
            if en_cell.cell_type == "code":  # comments may differ, nothing else
                assert ast.dump(ast.parse(zh_cell.source)) == ast.dump(ast.parse(en_cell.source))
            else:
                assert zh_cell.source != en_cell.source or not en_cell.source.strip()
