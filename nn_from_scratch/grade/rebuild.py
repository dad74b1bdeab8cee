"""Rebuild a submission from the release: only the exercise cells come from the student.

Like nbgrader's ``OverwriteCells``, every released cell that is not an exercise
cell (setup, prose, check cells, the lesson's own code) is taken from the
release, and one that was edited, deleted or moved is restored, with a note
saying so. Cells are matched by id first, then by identical source, then by tag
and order (for notebooks whose ids were lost), then, for a cell with no tag either, by
the names it defines (an exercise's cell defines every name its stub does). Cells the
student added are kept and run where they stand: after the released cell that precedes them.
"""
import ast
import io
import tokenize
from dataclasses import dataclass, field
from typing import Any

import nbformat

from ..i18n import EDITION_LINES, docstrings
from ..parsing import parse
from .release import CHECK_CALL, EXERCISE_TAG, Release, ReleasedCell, digest, role_of

__all__ = ["Placed", "Rebuilt", "left_as_released", "rebuild"]


@dataclass(frozen=True)
class Placed:
    """What a cell of the rebuilt notebook is: its release cell (``None``: the student added it)."""

    released: ReleasedCell | None
    source_index: int | None = None  # its index in the submission, if it came from there


@dataclass
class Rebuilt:
    """The notebook to run, what each of its cells is, and what was restored."""

    nb: Any
    placed: list[Placed]
    notes: list[str] = field(default_factory=list)


def _what_runs(source: str, cell_type: str = "code") -> str:
    """A code cell's tokens without comments, docstrings or blank lines (a comment or docstring
    in another language, or the student's own note, is no edit), nor the lines that make a
    Chinese edition's checks answer in Chinese (the grader sets the language itself); a
    Markdown cell's text as it is."""
    if cell_type != "code":
        return digest(source)
    source = source.strip().removeprefix(EDITION_LINES).strip() + "\n"  # a Chinese first cell
    prose = {(line, column) for line, column, *_ in docstrings(source)}
    try:
        tokens = tokenize.generate_tokens(io.StringIO(source).readline)
        return " ".join(t.string.strip() or str(t.type) for t in tokens
                        if t.type not in (tokenize.COMMENT, tokenize.NL) and t.start not in prose)
    except (tokenize.TokenError, SyntaxError):
        return digest(source)


def _match(cells: list[Any], release: Release) -> dict[int, int]:
    """Submission cell index -> release cell index: by id, then same source, then tag order."""
    released = release.cells
    by_id = {cell.id: i for i, cell in enumerate(released)}
    matched: dict[int, int] = {}

    def take(j: int, i: int | None) -> None:
        if i is not None and i not in matched.values() and j not in matched \
                and released[i].cell_type == cells[j].cell_type:
            matched[j] = i

    for j, cell in enumerate(cells):
        take(j, by_id.get(cell.get("id", "")))
    keys = [_what_runs(r.source, r.cell_type) for r in released]
    for j, cell in enumerate(cells):
        key = _what_runs(cell.source, cell.cell_type)
        take(j, next((i for i, r in enumerate(released) if keys[i] == key
                      and i not in matched.values() and r.cell_type == cell.cell_type), None))
    exercise_of = {m.group(1): r.exercise for r in released if r.role == "check"
                   for m in [CHECK_CALL.search(r.source)] if m}
    for role in (EXERCISE_TAG, "check"):  # by the checker its check cell calls, else in order
        for j, cell in enumerate(cells):
            call = CHECK_CALL.search(cell.source if role == "check" else
                                cells[j + 1].source if j + 1 < len(cells) else "")
            free = [i for i, r in enumerate(released) if r.role == role
                    and i not in matched.values()]
            hinted = [i for i in free if call and released[i].exercise == exercise_of.get(
                call.group(1))]
            if j not in matched and role_of(cell) == role and free:
                take(j, (hinted or free)[0])
    # cells with neither id nor tag (a converter, or a copy into a fresh notebook, dropped
    # both: red team, round five, an honest notebook got 0/5): an exercise's cell is the last
    # untagged cell before its check, after the cell matched before it, that defines every
    # name its stub defines (the one whose definitions the check meets, as in Jupyter; an
    # earlier cell that binds the same name is exploration: red team, round six)
    at = {i: j for j, i in matched.items()}
    for i, r in enumerate(released):
        check = next((k for k in range(i + 1, len(released)) if released[k].role == "check"
                      and released[k].exercise == r.exercise), None)
        want = _defines(r.source) if r.role == EXERCISE_TAG else set()
        if not want or i in at or check not in at:
            continue
        j = at[check] - 1
        while j >= 0 and j not in matched:
            if role_of(cells[j]) == "code" and want <= _defines(cells[j].source):
                take(j, i)
                break
            j -= 1
    return matched


def _defines(source: str) -> set[str]:
    """The names a cell binds at its top level (``def``, ``class``, ``=``)."""
    try:
        tree = parse(source)
    except SyntaxError:
        return set()
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return names


def _in_order(sequence: list[int]) -> set[int]:
    """The longest increasing run of ``sequence`` (kept in place): the rest were moved."""
    runs: list[list[int]] = []  # runs[k]: the longest increasing run ending at element k
    for value in sequence:
        longest: list[int] = []
        for run in runs:
            if run[-1] < value and len(run) > len(longest):
                longest = run
        runs.append(longest + [value])
    kept: list[int] = []
    for run in runs:
        kept = run if len(run) > len(kept) else kept
    return set(kept)


def _notes(release: Release, cells: list[Any], matched: dict[int, int],
           answered_before: set[int]) -> list[str]:
    code = {j: i for j, i in sorted(matched.items()) if release.cells[i].cell_type == "code"}
    kept_in_place = _in_order(list(code.values()))
    found = {i: j for j, i in matched.items()}
    notes = []
    for i, cell in enumerate(release.cells):
        if cell.cell_type != "code":
            continue
        if i in answered_before:
            notes.append(f"the {cell.label} is missing; its check meets what an earlier cell "
                         f"of the student's defines ({', '.join(sorted(_defines(cell.source)))})")
            continue
        if i not in found:
            notes.append(f"the {cell.label} is missing; graded with the stub"
                         if cell.role == EXERCISE_TAG else f"{cell.label} was deleted; restored")
            continue
        if cell.role != EXERCISE_TAG and _what_runs(cells[found[i]].source) != _what_runs(
                cell.source):
            notes.append(f"{cell.label} was edited; restored")
        if i not in kept_in_place:
            notes.append(f"{cell.label} was moved; run in its place")
    return notes


def _new_cell(cell_type: str, source: str, cell_id: str, role: str) -> Any:
    make = nbformat.v4.new_code_cell if cell_type == "code" else nbformat.v4.new_markdown_cell
    cell = make(source)
    cell.id = cell_id
    if role in (EXERCISE_TAG, "check"):
        cell.metadata["tags"] = [role]
    return cell


def rebuild(submission: Any, release: Release) -> Rebuilt:
    """The notebook to run for ``submission``: the release, with the student's exercise cells."""
    cells = [c for c in submission.cells if c.cell_type in ("code", "markdown")]
    matched = _match(cells, release)
    found = {i: j for j, i in matched.items()}
    added: dict[int, list[int]] = {}  # release index it follows (-1: the top) -> student cells
    anchor = -1
    for j in range(len(cells)):
        if j in matched:
            anchor = matched[j]
        else:
            added.setdefault(anchor, []).append(j)

    nb = nbformat.v4.new_notebook(metadata={**release.metadata, "nn_from_scratch": {
        "lesson": release.lesson, "edition": "graded"}})
    placed: list[Placed] = []

    def add_students(after: int) -> None:
        for j in added.get(after, []):
            nb.cells.append(_new_cell(cells[j].cell_type, cells[j].source, f"added-{j}", ""))
            placed.append(Placed(None, j))

    add_students(-1)
    answered_before: set[int] = set()  # exercise cells deleted after an answer written earlier
    for i, cell in enumerate(release.cells):
        source = cell.source
        if cell.role == EXERCISE_TAG and i in found:
            source = cells[found[i]].source
        elif cell.role == EXERCISE_TAG and _defines(source) and _defines(source) <= set().union(
                *(_defines(c.source) for c, p in zip(nb.cells, placed) if c.cell_type == "code"
                  and (p.released is None or p.released.role == EXERCISE_TAG))):
            # deleted, its answer written in an earlier cell of the student's: in Jupyter the
            # check meets that answer; the stub put back would hide it (red team, round six)
            source = ""
            answered_before.add(i)
        nb.cells.append(_new_cell(cell.cell_type, source, cell.id, cell.role))
        placed.append(Placed(cell, found.get(i)))
        add_students(i)
    return Rebuilt(nb, placed, _notes(release, cells, matched, answered_before))


def left_as_released(rebuilt: Rebuilt) -> set[str]:
    """The exercises whose cells still run what the release gave (the stub; comments and
    docstrings aside), with no cell of the student's, nor any changed exercise cell, between
    them and their check: nothing the student wrote can be what the check is handed.

    Their verdict is "not done" whatever the kernel answers: a kernel can be made to hand the
    grader any object for a name (red team, round four), but not to change this source.
    """
    left: set[str] = set()
    pending: dict[str, bool] = {}  # exercise -> every cell of it so far as released
    stubs: set[str] = set()  # what the released exercise cells seen so far run
    for cell, placed in zip(rebuilt.nb.cells, rebuilt.placed):
        released = placed.released
        if released is not None and released.role == EXERCISE_TAG and released.exercise:
            stub = _what_runs(released.source)
            stubs.add(stub)
            same = _what_runs(cell.source) == stub
            if not same:
                pending.clear()  # a changed cell may define any exercise's answer
            pending[released.exercise] = pending.get(released.exercise, True) and same
        elif released is None and cell.cell_type == "code" and not _runs_nothing(
                cell.source) and _what_runs(cell.source) not in stubs:
            pending.clear()  # so may a cell the student added (not a note, not a stub's copy)
        elif released is not None and released.role == "check" and released.exercise and (
                pending.pop(released.exercise, False)):
            left.add(released.exercise)
    return left


def _runs_nothing(source: str) -> bool:
    """A cell of comments, blank lines or bare constants (a docstring): it defines nothing
    (red team, round five: a ``# todo`` cell after each stub got past the rule above)."""
    try:
        tree = parse(source)
    except SyntaxError:
        return False
    return all(isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
               for node in tree.body)
