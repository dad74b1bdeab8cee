"""The released student edition, as the grader knows it: a manifest of cells per lesson.

A submission is rebuilt from the release (see :mod:`.rebuild`), so the grader
needs the student edition's cells even when installed without the repository.
``tools/notebooks.py`` writes one manifest per lesson, ``release/NN_slug.json``
beside this module (shipped as package data), whenever it builds the student
edition; a test fails when one is stale. Each cell has a stable id, made here
from the lesson and the cell's place, so that a submission's cells are found by
id (and by position and tag where an older or edited notebook lost the ids).

The Chinese student edition has manifests of its own, ``release/zh/NN_slug.json``
(written by ``tools/translations.py``), with the same ids: a Chinese submission is
rebuilt from the Chinese cells, so the lesson's code it gets back prints Chinese,
and is graded by the very same checks.
"""
import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..exercises import lesson_exercises

__all__ = ["CHECK_TAG", "EXERCISE_TAG", "RAISES_TAG", "RELEASE", "Release", "ReleasedCell",
           "assign_ids", "course_metadata", "digest", "edition_folder", "edition_language",
           "load_release", "manifest", "role_of", "write_manifest"]

RELEASE = Path(__file__).resolve().parent / "release"
CHECK_TAG, EXERCISE_TAG, RAISES_TAG = "check", "exercise", "raises-exception"
_CHECKER = re.compile(r"from nn_from_scratch\.exercises import (\w+) as check\b")
CHECK_CALL = re.compile(r"\bcheck\.(\w+)\(")


@dataclass(frozen=True)
class ReleasedCell:
    """One cell of the student edition; ``exercise`` is set for exercise and check cells."""

    id: str
    cell_type: str
    role: str  # "exercise", "check", "code" or "markdown"
    source: str
    sha256: str
    exercise: str | None = None
    points: float = 1.0  # what its exercise is worth (check cells; metadata "points")

    @property
    def label(self) -> str:
        """How a report names it: ``check cell of 07.4``, ``code cell 7 (`from ...`)``."""
        if self.exercise:
            return f"{self.role} cell of {self.exercise}"
        first = self.source.strip().splitlines()[0][:40] if self.source.strip() else ""
        return f"lesson cell {self.id} (`{first}`)"


@dataclass(frozen=True)
class Release:
    """A lesson's released student edition: its cells, and its checker module's name."""

    lesson: str
    checker: str
    cells: tuple[ReleasedCell, ...]
    metadata: dict[str, Any]


def role_of(cell: Any) -> str:
    tags = cell.metadata.get("tags", [])
    if cell.cell_type != "code":
        return "markdown"
    return next((tag for tag in (EXERCISE_TAG, CHECK_TAG) if tag in tags), "code")


def digest(source: str) -> str:
    return hashlib.sha256(source.strip().encode()).hexdigest()


def assign_ids(nb: Any, lesson: str) -> None:
    """Give every cell a stable id: ``07-ex4``/``07-check4`` for exercises, ``07-c012`` else."""
    number = lesson[:2]
    exercises = 0
    for index, cell in enumerate(nb.cells):
        role = role_of(cell)
        exercises += role == EXERCISE_TAG
        cell.id = (f"{number}-ex{exercises}" if role == EXERCISE_TAG else
                   f"{number}-check{exercises}" if role == CHECK_TAG else f"{number}-c{index:03d}")


def manifest(student: Any, lesson: str) -> dict[str, Any]:
    """The manifest of ``student`` (the lesson's student edition, with its ids assigned)."""
    by_name = {e.name: e.id for e in lesson_exercises(lesson)}
    code = "\n".join(c.source for c in student.cells if c.cell_type == "code")
    checker = _CHECKER.search(code)
    if checker is None:
        raise ValueError(f"{lesson}: no `from nn_from_scratch.exercises import ... as check`")
    cells = []
    for index, cell in enumerate(student.cells):
        role = role_of(cell)
        entry: dict[str, Any] = {"id": cell.id, "cell_type": cell.cell_type, "role": role,
                                 "source": cell.source, "sha256": digest(cell.source)}
        if role == CHECK_TAG:
            call = CHECK_CALL.search(cell.source)
            entry["exercise"] = by_name.get(call.group(1)) if call else None
            entry["points"] = float(cell.metadata.get("points", 1))
        elif role == EXERCISE_TAG:
            following = student.cells[index + 1].source if index + 1 < len(student.cells) else ""
            call = CHECK_CALL.search(following)
            entry["exercise"] = by_name.get(call.group(1)) if call else None
        cells.append(entry)
    return {"lesson": lesson, "checker": checker.group(1),
            "metadata": {key: student.metadata[key] for key in ("kernelspec",)
                         if key in student.metadata},
            "cells": cells}


def write_manifest(student: Any, lesson: str, folder: Path = RELEASE) -> Path:
    """Write the manifest of ``lesson``'s student edition to ``folder/NN_slug.json``."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{lesson}.json"
    path.write_text(json.dumps(manifest(student, lesson), ensure_ascii=False, indent=1) + "\n",
                    encoding="utf-8")
    return path


def course_metadata(nb: Any) -> dict[str, Any]:
    """The notebook's ``nn_from_scratch`` metadata (its lesson, its language), or ``{}`` when a
    submission has none or has put something other than a mapping there."""
    found = nb.metadata.get("nn_from_scratch") if isinstance(nb.metadata, dict) else None
    return found if isinstance(found, dict) else {}


def edition_language(nb: Any) -> str:
    """The language of the edition ``nb`` was handed out in: ``"zh_CN"`` for a Chinese one (its
    metadata says so, or its first code cell sets the language as a Chinese edition's does),
    else ``"en"``."""
    from ..i18n import EDITION_LINES

    if course_metadata(nb).get("language") == "zh_CN":
        return "zh_CN"
    first = next((cell.source for cell in nb.cells if cell.cell_type == "code"), "")
    return "zh_CN" if first.strip().startswith(EDITION_LINES) else "en"


def edition_folder(folder: Path, language: str) -> Path:
    """Where the manifests of the ``language`` edition are: ``folder`` for English, a
    subfolder ``zh`` for Chinese."""
    return folder / "zh" if language == "zh_CN" else folder


def load_release(lesson: str, folder: Path = RELEASE) -> Release | None:
    """The release of ``lesson`` shipped with the package, or ``None`` if there is none."""
    path = folder / f"{lesson}.json"
    if not path.is_file():
        return None
    data = json.loads(path.read_text(encoding="utf-8"))
    cells = tuple(ReleasedCell(**cell) for cell in data["cells"])
    return Release(data["lesson"], data["checker"], cells, data.get("metadata", {}))
