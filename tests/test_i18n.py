"""Checks answer in the edition's language: English by default, Chinese when asked."""
import sys
from pathlib import Path

import pytest
from conftest import stub

from nn_from_scratch import i18n
from nn_from_scratch._checks import InputError
from nn_from_scratch.exercises import mlp_from_scratch as check
from nn_from_scratch.model import predict

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
import translations  # noqa: E402


@pytest.fixture
def chinese(monkeypatch):
    monkeypatch.setattr(i18n, "_chosen", [])
    i18n.set_language("zh")
    yield


def test_english_unless_asked(monkeypatch):
    monkeypatch.setattr(i18n, "_chosen", [])
    monkeypatch.delenv(i18n.ENV, raising=False)
    assert i18n.language() == "en"
    assert check.relu(stub).message == "not done yet (the stub still raises NotImplementedError)"
    monkeypatch.setenv(i18n.ENV, "zh_CN")
    assert i18n.language() == "zh_CN"
    monkeypatch.setenv(i18n.ENV, "klingon")  # an unknown language in the environment: English
    assert i18n.language() == "en"


def test_set_language_refuses_what_it_does_not_know(monkeypatch):
    monkeypatch.setattr(i18n, "_chosen", [])
    with pytest.raises(InputError, match="lang must be one of 'en', 'zh_CN'; got 'fr'"):
        i18n.set_language("fr")


def test_a_stub_and_a_typical_mistake_in_chinese(chinese):
    assert check.relu(stub).line == ("… 07.1 relu："
                                     "尚未完成（待补全的代码仍在抛出 NotImplementedError）")
    assert check.predict(predict).message == "这是库里现成的 predict，请自己动手写一个"
    assert check.predict(lambda params, image: None).message.endswith(
        "返回了 None：是不是忘了写 `return`？")


# Every message has its Chinese: a new or changed one (Babel marks a changed one fuzzy) fails.
UNTRANSLATED_AT_MOST = 0


def test_every_message_of_the_package_has_an_up_to_date_translation():
    problems = translations.message_problems()
    fix = ("run .venv/bin/python tools/translations.py messages and translate what it lists in "
           "nn_from_scratch/locale/zh_CN/LC_MESSAGES/nn_from_scratch.po")
    # a message whose English changed becomes fuzzy (Babel's merge), a new one untranslated:
    # either way the count grows past the mark
    assert len(problems) <= UNTRANSLATED_AT_MOST, (
        f"{len(problems)} messages without Chinese (at most {UNTRANSLATED_AT_MOST}: a new or "
        f"changed message needs its translation): {problems[:3]}; {fix}")
