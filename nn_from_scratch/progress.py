"""Where am I? ``python -m nn_from_scratch progress [FOLDER]``: a self-paced student's lessons.

The student's own notebooks (``./student`` by default) are graded by the grader itself
(:func:`nn_from_scratch.grade.grade_paths`: each in its sandbox, each check decided in the
grader's process), and every lesson of the course is shown with each of its exercises:
passed, failed (with the hint), not done, or the lesson not started. A graded notebook is
kept in the grader's journal under its SHA-256 (the state folder, ``$XDG_STATE_HOME``), so
the next run grades only the notebooks that changed. The words are the student's language:
``--lang``, else that of the notebooks' edition. :mod:`.progress_page` writes it as a page.
"""
import hashlib
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from . import __version__
from ._checks import InputError
from .i18n import ENV, N_, _, language, set_language

__all__ = ["Lesson", "Progress", "format_progress", "gather"]

NOT_STARTED = "not started"
FOREIGN = N_("is not a notebook of this course (nn_from_scratch): its metadata names no lesson of "
           "it and its name holds no lesson slug such as 07_mlp_from_scratch")


@dataclass(frozen=True)
class Lesson:
    """One lesson: its slug, its title, the notebook graded for it (``""`` if none) and one
    ``(exercise, title, status, message)`` per exercise (status ``"not started"`` if none)."""

    slug: str
    title: str
    notebook: str
    exercises: tuple[tuple[str, str, str, str], ...]

    @property
    def passed(self) -> int:
        return sum(status == "passed" for _, _, status, _ in self.exercises)


@dataclass(frozen=True)
class Progress:
    """Every lesson of the course, the folder it was read from, and what was graded now."""

    folder: str
    lessons: tuple[Lesson, ...]
    graded: int  # notebooks graded this run; the rest came from the journal, unchanged
    reused: int
    skipped: tuple[str, ...] = field(default=())  # "name: why", notebooks left out


def lesson_title(slug: str) -> str:
    """The lesson's title in the current language, from its released student edition's first
    heading ("03 · Autodiff from scratch"); the slug where there is none."""
    from .grade.release import RELEASE, edition_folder, load_release

    release = (load_release(slug, edition_folder(RELEASE, language()))
               or load_release(slug, RELEASE))
    for cell in release.cells if release else ():
        if cell.role == "markdown" and cell.source.startswith("# "):
            return cell.source.splitlines()[0][2:].strip()
    return slug


def _course_notebooks(folder: Path) -> tuple[dict[str, Path], list[str], str]:
    """The newest notebook of each lesson in ``folder``, what was left out (and why), and the
    edition's language (``"zh_CN"`` if any notebook is of the Chinese edition)."""
    import nbformat

    from .grade import lesson_of, notebooks_in
    from .grade.release import edition_language

    found: dict[str, Path] = {}
    skipped, languages = [], set()
    try:
        paths = notebooks_in([folder])
    except InputError:  # none at all: said by the caller, with what to give instead
        paths = []
    for path in paths:
        try:
            nb = nbformat.reads(path.read_text(encoding="utf-8"), as_version=4)
        except Exception as err:  # not JSON, not a notebook, unreadable: said, and left out
            skipped.append(_("{name}: not a readable notebook ({error})").format(
                name=path.name, error=type(err).__name__))
            continue
        lesson = lesson_of(nb, path)
        if lesson is None:
            skipped.append(f"{path.name}: {_(FOREIGN)}")
            continue
        languages.add(edition_language(nb))
        if lesson not in found or path.stat().st_mtime > found[lesson].stat().st_mtime:
            if lesson in found:
                skipped.append(_("{name}: an older notebook of lesson {lesson} than {newer}")
                               .format(name=found[lesson].name, lesson=lesson[:2],
                                       newer=path.name))
            found[lesson] = path
    return found, skipped, "zh_CN" if "zh_CN" in languages else "en"


def existing_folder(folder: str | Path) -> Path:
    """``folder`` as a path, or an :class:`InputError` saying what to give instead."""
    if not Path(folder).is_dir():
        raise InputError(_("{folder}: no such folder. Give the folder of your notebooks, e.g. "
                           "`progress student` (or `progress student/zh`).").format(folder=folder))
    return Path(folder)


def gather(folder: str | Path, lang: str | None = None, *, sandbox: bool = True) -> Progress:
    """Grade the notebooks in ``folder`` (only those changed since the last run) and place
    their rows in the course's lessons. ``lang``: ``"en"`` or ``"zh_CN"``; ``None``, the
    notebooks' edition's. Raises :class:`InputError` for no notebooks or none of this course.
    """
    from .exercises import all_lessons, lesson_exercises
    from .grade import grade_paths
    from .grade.journal import Journal, class_id

    if lang:  # its errors in it too
        set_language(lang)
    folder = existing_folder(folder)
    notebooks, skipped, edition = _course_notebooks(folder)
    if not notebooks:
        raise InputError(_("no notebook of this course in {folder} ({skipped}). Give the folder "
                           "of your notebooks, e.g. `progress student`.").format(
            folder=folder, skipped="; ".join(skipped) or _("no .ipynb files at all")))
    set_language(lang or edition)
    os.environ[ENV] = language()  # the kernels' checks answer in it too (as grade --lang does)
    journal = Journal(class_id([folder], "progress", language(), __version__))
    done = journal.load()
    paths = sorted(notebooks.values())
    reused = sum(hashlib.sha256(p.read_bytes()).hexdigest() in done for p in paths)
    print((_("notebooks to grade: {count}, each in its own sandbox; unchanged since the last run "
             "and not graded again: {reused}") if sandbox else
            _("notebooks to grade: {count}, WITHOUT a sandbox (--no-sandbox); unchanged since the "
              "last run and not graded again: {reused}")).format(
        count=len(paths) - reused, reused=reused), file=sys.stderr, flush=True)
    lesson_at = {str(path): slug for slug, path in notebooks.items()}  # for a row with no lesson
    graded = {g.lesson or lesson_at.get(g.notebook): g  # (a notebook that could not be read)
              for g in grade_paths(paths, sandbox=sandbox, journal=journal, resume=True)}
    lessons = []
    for slug in all_lessons():
        rows = {r.exercise: r for r in graded[slug].rows} if slug in graded else {}
        exercises = tuple(
            (e.id, _(e.title), rows[e.id].status, rows[e.id].message) if e.id in rows else
            (e.id, _(e.title), NOT_STARTED if slug not in graded else "error",
             "" if slug not in graded else graded[slug].rows[0].message)
            for e in lesson_exercises(slug))
        lessons.append(Lesson(slug, lesson_title(slug), notebooks[slug].name
                              if slug in notebooks else "", exercises))
    return Progress(str(folder), tuple(lessons), len(paths) - reused, reused, tuple(skipped))


def plain(title: str) -> str:
    """A lesson's title as a terminal shows it: without its Markdown backticks."""
    return title.replace("`", "")


def format_progress(progress: Progress) -> str:
    """The terminal's view: a line per lesson, then a line per exercise of a started one."""
    from .exercises._display import SYMBOLS, WORDS

    symbols = {**SYMBOLS, NOT_STARTED: "○"}
    lines = [_("Your progress in {folder}: {passed} of {total} exercises passed").format(
        folder=progress.folder, passed=sum(lesson.passed for lesson in progress.lessons),
        total=sum(len(lesson.exercises) for lesson in progress.lessons)), ""]
    for lesson in progress.lessons:
        if not lesson.notebook:
            lines.append(_("○ {title}: not started").format(title=plain(lesson.title)))
            continue
        lines.append(_("{title} ({notebook}): {passed} of {total} passed").format(
            title=plain(lesson.title), notebook=lesson.notebook, passed=lesson.passed,
            total=len(lesson.exercises)))
        for exercise, title, status, message in lesson.exercises:
            word = _(WORDS[status]) if status in WORDS else _(status)
            said = word if status == "passed" or not message else message if \
                status == "not done" else f"{word} — {message}"
            lines.append(f"    {symbols.get(status, '!')} {exercise} {title}: {said}")
    lines += [""] + [_("left out: {why}").format(why=why) for why in progress.skipped]
    lines.append(_("graded now: {graded}; unchanged since the last run: {reused}").format(
        graded=progress.graded, reused=progress.reused))
    return "\n".join(line for line in lines if line is not None)
