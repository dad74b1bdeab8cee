"""The release the grader ships is the student edition that the lessons make today.

Fix a failure here with ``.venv/bin/python tools/notebooks.py --release`` (or a full build).
"""
import json
import sys
from pathlib import Path

import pytest

from nn_from_scratch.grade.release import RELEASE, load_release, manifest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import translations  # noqa: E402

import notebooks  # noqa: E402

LESSONS = notebooks.lesson_paths()
FIX = "regenerate it with .venv/bin/python tools/notebooks.py --release"


@pytest.mark.parametrize("lesson", LESSONS, ids=[p.stem for p in LESSONS])
def test_the_shipped_release_matches_the_lesson(lesson):
    shipped = RELEASE / f"{lesson.stem}.json"
    assert shipped.exists(), f"no release of {lesson.name}: {FIX}"
    assert json.loads(shipped.read_text(encoding="utf-8")) == manifest(
        notebooks.editions(lesson)[1], lesson.stem), f"{shipped.name} is stale: {FIX}"


@pytest.mark.parametrize("lesson", LESSONS, ids=[p.stem for p in LESSONS])
def test_the_shipped_chinese_release_matches_the_chinese_student_edition(lesson):
    """Same cells, same ids, in the same places as the English release; only the words differ."""
    shipped = RELEASE / "zh" / f"{lesson.stem}.json"
    fix = f"regenerate it with .venv/bin/python tools/translations.py release {lesson.stem}"
    assert shipped.exists(), f"no Chinese release of {lesson.name}: {fix}"
    chinese = json.loads(shipped.read_text(encoding="utf-8"))
    assert chinese == manifest(translations.translate(notebooks.editions(lesson)[1],
                                                      translations.read(lesson)), lesson.stem), \
        f"zh/{shipped.name} is stale: {fix}"
    english = json.loads((RELEASE / f"{lesson.stem}.json").read_text(encoding="utf-8"))
    assert [(c["id"], c["role"], c.get("exercise"), c.get("points")) for c in chinese["cells"]] \
        == [(c["id"], c["role"], c.get("exercise"), c.get("points")) for c in english["cells"]]


def test_no_release_ships_for_a_lesson_that_is_gone():
    stale = {p.stem for p in [*RELEASE.glob("*.json"), *RELEASE.glob("zh/*.json")]} - \
        {p.stem for p in LESSONS}
    assert not stale, f"releases of lessons that no longer exist: {sorted(stale)}; delete them"


def test_both_editions_carry_the_same_stable_ids_each_build():
    lesson = ROOT / "lessons" / "07_mlp_from_scratch.md"
    full, student = notebooks.editions(lesson)
    again = notebooks.editions(lesson)[1]
    ids = [cell.id for cell in student.cells]
    assert ids == [cell.id for cell in full.cells] == [cell.id for cell in again.cells]
    assert len(set(ids)) == len(ids)
    release = load_release("07_mlp_from_scratch")
    assert release is not None
    exercises = [(c.id, c.exercise) for c in release.cells if c.role == "exercise"]
    assert exercises[:2] == [("07-ex1", "07.1"), ("07-ex2", "07.2")]
