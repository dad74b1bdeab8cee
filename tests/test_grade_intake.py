"""What the grader shows of anything a submission controls: one line, nothing unseen."""
import pytest

from nn_from_scratch.grade.intake import clean


@pytest.mark.parametrize("hidden", [
    "\x1b", "\n", "\r", "\x85", "\u202e", "\u2066", "\u200b", "\u200d", "\u2028", "\u2029",
    "\u2060", "\ufeff", "\U000e0041"])
def test_nothing_unseen_or_line_breaking_reaches_an_export(hidden):
    """Red team, round twelve: U+2028, U+2029, U+200B, U+FEFF and the tag characters, in a
    class name the hint quoted, reached the feedback, report.md and the JSON."""
    assert clean(f"a{hidden}b") == "a b"


def test_chinese_and_plain_text_are_kept_whole():
    assert clean("检查通过：a * b") == "检查通过：a * b"
    assert clean("x" * 700) == "x" * 599 + "…"


def test_every_format_character_of_unicode_is_left_out():
    """Red team, round fourteen: U+061C, the Arabic letter mark (a bidirectional control),
    reached every export; every character of Unicode's categories Cc, Cf, Zl and Zp is now
    left out (as of this Python's Unicode, 14.0 on Python 3.11)."""
    import sys
    import unicodedata

    left = [f"U+{c:04X}" for c in range(sys.maxunicode + 1)
            if unicodedata.category(chr(c)) in ("Cc", "Cf", "Zl", "Zp")
            and clean(f"a{chr(c)}b") != "a b"]
    assert left == [], left


def test_a_notebook_named_in_capitals_or_with_a_space_after_is_found(tmp_path):
    """Red team, round fourteen (a second look): dan.IPYNB, hal.Ipynb and "gus.ipynb " got no
    row at all, and the run said every exercise passed."""
    from nn_from_scratch.grade.intake import notebooks_in

    for name in ("dan.IPYNB", "hal.Ipynb", "gus.ipynb ", "alice.ipynb", "notes.txt"):
        (tmp_path / name).write_text("{}")
    assert sorted(p.name for p in notebooks_in([tmp_path])) == [
        "alice.ipynb", "dan.IPYNB", "gus.ipynb ", "hal.Ipynb"]
