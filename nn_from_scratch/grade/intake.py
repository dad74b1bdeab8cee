"""Taking submissions in: each read once, as a plain file, into the grader's private folder.

Before any kernel starts, every notebook to grade is copied into a folder that
only the grader can read (and no sandboxed kernel can see). Only regular files
are taken, opened without following a symbolic link and without waiting on a
FIFO or a device: a "submission" that is a link to the course's solutions or to
a secret file, a pipe that would hang the grader, or a file past
:data:`MAX_BYTES` is one error row, and nothing of it is read. From then on the
grader reads only its copies, so nothing done to the class folder while grading
(by a kernel run with ``--no-sandbox``, or by anyone) changes what is graded.
"""
import functools
import hashlib
import json
import os
import re
import stat
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .._checks import InputError

__all__ = ["MAX_BYTES", "Submission", "clean", "looks", "notebooks_in", "take_in"]

MAX_BYTES = 64 * 2**20  # the largest executed lesson is 1.2 MB
# C0 and C1 controls (a newline too: every field is one line), and every format character
# (Unicode's category Cf, as of Unicode 15.1): the bidirectional overrides, isolates and marks
# (red team, round fourteen: U+061C, the Arabic letter mark, was left in every export), and
# what shows nothing or breaks a line where a reader does not expect it (round twelve, through
# a class name in a hint): zero-width spaces and joiners, the line and paragraph separators,
# invisible operators, the soft hyphen, the byte-order mark, the tag characters
_CONTROLS = re.compile(
    "[\x00-\x1f\x7f-\x9f\xad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e"
    "\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd"
    "\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0001\U000e0020-\U000e007f]+")


def clean(text: object, limit: int = 600) -> str:
    """``text`` as one printable line of at most ``limit`` characters: what the grader shows of
    anything a submission controls (its file name, an exception it raised, a hint quoting it)."""
    line = _CONTROLS.sub(" ", str(text)).strip()
    return line if len(line) <= limit else line[:limit - 1] + "…"


@dataclass(frozen=True)
class Submission:
    """One notebook as the grader took it in: its name as given, and where its copy is.

    ``copy`` is ``None`` and ``problem`` says why when it could not be taken (a link, a pipe,
    too big, unreadable); ``digest`` is the SHA-256 of what was read.
    """

    path: str
    copy: Path | None
    digest: str = ""
    problem: str = ""


def notebooks_in(paths: Iterable[str | Path]) -> list[Path]:
    """The ``.ipynb`` files named, or found (not recursively) in the folders named.

    A folder's entries are listed, never followed: a link or a pipe named ``*.ipynb`` is
    listed too, and refused by :func:`take_in`.
    """
    found: list[Path] = []
    paths = list(paths)
    for given in paths:
        path = Path(given)
        if path.is_dir() and not path.is_symlink():
            with os.scandir(path) as entries:
                found.extend(sorted(path / e.name for e in entries if _named_a_notebook(e.name)
                                    and not e.is_dir(follow_symlinks=False)))
        elif path.is_dir():  # a folder given as a link: the instructor chose it
            found.extend(sorted(p for p in path.iterdir() if _named_a_notebook(p.name)))
        elif path.exists() or path.is_symlink():
            found.append(path)
        else:
            raise InputError(f"{given}: no such file or folder.")
    if not found:
        raise InputError(f"no notebooks (.ipynb) in {', '.join(map(str, paths))}.")
    return found


def _named_a_notebook(name: str) -> bool:
    """``*.ipynb``, in any case, spaces after it too: ``dan.IPYNB`` and ``gus.ipynb `` got no row
    at all, and the run said every exercise passed (red team, round fourteen, a second look)."""
    return name.rstrip().lower().endswith(".ipynb")


def _read(path: Path) -> bytes | str:
    """The bytes of a regular file, or why it is refused."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as err:
        if path.is_symlink():
            return "it is a symbolic link, not a notebook: hand in the file itself"
        return f"it cannot be read ({clean(err.strerror, 80)})"
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return "it is not a regular file (a pipe, a device or a socket)"
        if info.st_size > MAX_BYTES:
            return f"it is {info.st_size / 2**20:.0f} MB, over the {MAX_BYTES // 2**20} MB a " \
                   f"notebook may be"
        data = f.read(MAX_BYTES + 1)
    return data if len(data) <= MAX_BYTES else f"it grew past {MAX_BYTES // 2**20} MB as it " \
                                               f"was read"


def take_in(notebooks: Sequence[Path], folder: Path) -> list[Submission]:
    """Copy each of ``notebooks`` into ``folder`` (the grader's own), each read exactly once."""
    taken = []
    for index, path in enumerate(notebooks):
        data = _read(path)
        if isinstance(data, str):
            taken.append(Submission(printable(path), None, problem=data))
            continue
        copy = folder / f"{index:05d}.ipynb"
        copy.write_bytes(data)
        taken.append(Submission(printable(path), copy, hashlib.sha256(data).hexdigest()))
    return taken


# Unicode's default-ignorable code points: shown as nothing (combining grapheme joiner,
# variation selectors, Hangul fillers...; a red team's second look, round fourteen, named
# "al\u034fice" and "car\ufe0fol" beside alice and carol)
_IGNORABLE = re.compile("[\xad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f"
                        "\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8"
                        "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff]")


def looks(name: str) -> str:
    """How ``name`` looks to a reader: decomposed as NFKD does (full-width ``ａ`` is ``a``,
    ``é`` is ``e`` and an accent), what shows as nothing left out, each character that
    Unicode's table of confusables lists as looking like one of ASCII's as that one (Cyrillic
    ``а`` as ``a``, Greek ``ο`` as ``o``), composed again: two names that look alike give one
    (``jos\u0435\u0301``, a Cyrillic е and an accent, gives ``josé``); and ASCII's own
    look-alikes as one (``aIice``, a capital i, gives ``alice``; ``0`` is ``O``, ``rn`` is ``m``,
    ``VV`` is ``W``: red team, round fifteen)."""
    table = _ascii_looks()
    decomposed = _IGNORABLE.sub("", unicodedata.normalize("NFKD", name))
    looked = "".join(table.get(ch, ch) for ch in decomposed)
    for alike, one in _ASCII_ALIKE:
        looked = looked.replace(alike, one)
    return unicodedata.normalize("NFC", looked)


# ASCII's look-alikes, in a sans-serif font: first the single characters, then the pairs of
# letters (so that cIaire is claire; a red team's second look, round fifteen: cI and VV were
# missed). Not cl and d: Clara and Dara are two students, not one name spelt twice.
_ASCII_ALIKE = (("I", "l"), ("1", "l"), ("|", "l"), ("0", "O"), ("rn", "m"), ("vv", "w"),
                ("VV", "W"))


@functools.cache
def _ascii_looks() -> dict[str, str]:
    """Character -> the ASCII character it looks like, from Unicode's confusables (the
    confusable-homoglyphs package's copy of them)."""
    import confusable_homoglyphs

    with open(Path(confusable_homoglyphs.__file__).parent / "confusables.json",
              encoding="utf-8") as f:
        table = json.load(f)
    return {ch: next(g["c"] for g in alike if len(g["c"]) == 1 and g["c"].isascii())
            for ch, alike in table.items()
            if not ch.isascii() and any(len(g["c"]) == 1 and g["c"].isascii() for g in alike)}


def printable(path: Path) -> str:
    """``path`` as text that every export can write: the bytes of a file name that is not
    UTF-8 as ``\\xff`` (one such name once ended the whole class's grading, with no export
    for anyone)."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")
