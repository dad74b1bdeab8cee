"""The Chinese editions' prose: gettext catalogs over the lessons' passages, managed with Babel.

Each lesson's English stays the one source. Its passages (every paragraph of a
Markdown cell; every comment of a code cell, the stubs' ``TODO`` lines included;
and every docstring of a function the lesson or an exercise defines) are the
msgids of ``lessons/locale/zh_CN/LC_MESSAGES/NN_slug.po``; their Chinese is the
msgstr, as Sphinx's and Read the Docs' translations work. Code is never
translated, so the Chinese editions run the very same code
(``tests/test_translations.py`` also checks that through ``ast``).

When the English changes, its passage is a new msgid: ``update`` merges the
catalog with Babel's fuzzy matching, so the old translation is kept but marked
``#, fuzzy``, and ``status`` (and the tests) fail until a translator has
brought it up to date and removed the mark. Nothing can drift silently.

    .venv/bin/python tools/translations.py update                  # every lesson's catalog
    .venv/bin/python tools/translations.py status                  # what is missing or stale
    .venv/bin/python tools/translations.py todo 07_mlp_from_scratch > todo.json
    .venv/bin/python tools/translations.py todo --all 07_mlp_from_scratch > review.json
    .venv/bin/python tools/translations.py fill 07_mlp_from_scratch done.json
    .venv/bin/python tools/translations.py build                   # notebooks/zh, student/zh
    .venv/bin/python tools/translations.py release                 # only the grader's manifests
    .venv/bin/python tools/translations.py show 07_mlp_from_scratch  # read it as Markdown
    .venv/bin/python tools/translations.py messages                # the checkers' messages
    .venv/bin/python tools/translations.py todo messages > todo.json   # ... and fill messages F

The checkers' messages (``_()`` in ``nn_from_scratch``) are a catalog of the
package itself: ``messages`` extracts them into ``nn_from_scratch/locale/
nn_from_scratch.pot`` and merges that into ``zh_CN/LC_MESSAGES/nn_from_scratch.po``,
compiled to ``.mo`` when the package is installed (see ``nn_from_scratch/i18n.py``).

``todo`` lists the passages to translate as JSON (``en``, ``ctxt``, and the old
Chinese of a fuzzy one as ``was``); ``fill`` takes the same list with ``zh``
filled in and writes it into the catalog.
"""
import argparse
import ast
import copy
import fcntl
import io
import json
import os
import platform
import re
import sys
from collections.abc import Callable
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.pofile import read_po, write_po

TOOLS = Path(__file__).resolve().parent
sys.path.insert(0, str(TOOLS))
import notebooks  # noqa: E402

# What a Chinese edition adds to its first code cell, so that its checks answer in Chinese:
# the only statements that differ between the editions, whose comments and docstrings are
# the catalog's (tests/test_translations.py).
from nn_from_scratch.i18n import EDITION_LINES, char_column, docstrings  # noqa: E402
from nn_from_scratch.listing import (  # noqa: E402
    COMMENT,
    DOCSTRING,
    comments,
    docstring_spans,
    offsets,
    translate_comments,
    translate_docstrings,
)

LOCALE = "zh_CN"
CATALOGS = notebooks.LESSONS / "locale" / LOCALE / "LC_MESSAGES"
STRING = "string"  # msgctxt of a string literal a reader sees: its source, quotes included
_FENCE = re.compile(r"^\s*(```|~~~)")
# A string is shown to people when a call or keyword of these names displays it, when it reads
# as words (a word, perhaps a comma or colon, then a space; or a label ending in a colon), or
# when it is the other branch of an ``if ... else`` beside such words.
DISPLAY_CALLS = {"print", "title", "set_title", "suptitle", "xlabel", "ylabel", "set_xlabel",
                 "set_ylabel", "legend", "text", "annotate", "image_grid", "window_diagram"}
DISPLAY_KEYWORDS = {"title", "titles", "label", "labels", "xlabel", "ylabel", "suptitle"}


def passages(markdown: str) -> list[str]:
    """A Markdown cell's passages: blocks between blank lines, a fenced block kept whole."""
    found, current, fenced = [], [], False
    for line in markdown.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
        if not line.strip() and not fenced:
            if current:
                found.append("\n".join(current))
            current = []
        else:
            current.append(line)
    if current:
        found.append("\n".join(current))
    return found


def _displayed(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    """Whether a string literal is an argument of a call or keyword that shows it."""
    while node in parents:
        node, child = parents[node], node
        if isinstance(node, ast.keyword) and node.arg in DISPLAY_KEYWORDS:
            return True
        if isinstance(node, ast.Call) and child is not node.func:
            name = node.func.attr if isinstance(node.func, ast.Attribute) else \
                getattr(node.func, "id", "")
            if name in DISPLAY_CALLS:
                return True
        if isinstance(node, ast.stmt):
            return False
    return False


def _string_spans(code: str) -> list[tuple[int, int, str]]:
    """(start, end, source) of each string literal of ``code`` meant for people (see
    :data:`DISPLAY_CALLS`): offsets into ``code`` and the literal as written, quotes and
    prefix included; an f-string whole. Docstrings are passages of their own."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    starts, lines = offsets(code), code.split("\n")

    def at(line: int, byte: int) -> int:  # an offset into code, from ast's line and byte
        return starts[line] + char_column(lines[line - 1], byte)

    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    docs = {(line, col) for line, col, *_ in docstrings(code)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            text = "".join(v.value for v in node.values if isinstance(v, ast.Constant))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
        else:
            continue
        start = at(node.lineno, node.col_offset)
        if (node.lineno, start - starts[node.lineno]) in docs or any(
                isinstance(p, ast.JoinedStr) for p in _ancestors(node, parents)):
            continue
        if re.search(r"[A-Za-z]{2}", text) and (
                re.search(r"[A-Za-z]{2,}[,;:]? |\w:\s*$", text) or _displayed(node, parents)
                or _beside_words(node, parents)):
            end = at(node.end_lineno, node.end_col_offset)  # type: ignore[arg-type]
            found.append((start, end, code[start:end]))
    return sorted(found)


def _beside_words(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    """Whether a literal is the other branch of ``x if c else y`` beside words for people
    (``f"after {n} calls" if saved > 0 else "never"``)."""
    choice = parents.get(node)
    if not isinstance(choice, ast.IfExp):
        return False
    other = choice.orelse if node is choice.body else choice.body
    words = "".join(v.value for v in getattr(other, "values", [other])
                    if isinstance(v, ast.Constant) and isinstance(v.value, str))
    return bool(re.search(r"[A-Za-z]{2,} ", words))


def _ancestors(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> list[ast.AST]:
    found = []
    while node in parents:
        node = parents[node]
        found.append(node)
    return found


def strings(code: str) -> list[str]:
    """The string literals of a code cell a reader sees, as written (quotes included)."""
    return [text for *_, text in _string_spans(code)]


def _translate_strings(code: str, zh: Callable[[str], str]) -> str:
    for start, end, text in reversed(_string_spans(code)):
        code = code[:start] + zh(text) + code[end:]
    return code


def template(lesson: Path) -> Catalog:
    """Every passage of both editions of ``lesson``, with the cell each comes from."""
    catalog = Catalog(locale=LOCALE, project="nn_from_scratch", fuzzy=False)
    for nb in notebooks.editions(lesson):
        for index, cell in enumerate(nb.cells):
            if cell.cell_type == "markdown":
                for text in passages(cell.source):
                    catalog.add(text, locations=[(lesson.name, index)])
            elif cell.cell_type == "code":
                for text in comments(cell.source):
                    catalog.add(text, locations=[(lesson.name, index)], context=COMMENT)
                for *_, text in docstring_spans(cell.source):
                    catalog.add(text, locations=[(lesson.name, index)], context=DOCSTRING)
                for text in strings(cell.source):
                    catalog.add(text, locations=[(lesson.name, index)], context=STRING)
    return catalog


def catalog_path(lesson: Path) -> Path:
    return CATALOGS / f"{lesson.stem}.po"


def read_catalog(path: Path) -> Catalog:
    """The catalog at ``path``, or an empty one if there is none yet."""
    if not path.exists():
        return Catalog(locale=LOCALE, project="nn_from_scratch", fuzzy=False)
    with path.open("rb") as f:
        return read_po(f, locale=LOCALE)


def write_catalog(path: Path, catalog: Catalog) -> None:
    """Write ``catalog`` to ``path`` as every catalog here is written (fuzzy ones with the
    English they translated, no line numbers to churn)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    write_po(buffer, catalog, width=100, include_previous=True, include_lineno=False)
    path.write_bytes(buffer.getvalue())


def read(lesson: Path) -> Catalog:
    """The lesson's catalog, or an empty one if it has none yet."""
    return read_catalog(catalog_path(lesson))


def write(lesson: Path, catalog: Catalog) -> None:
    write_catalog(catalog_path(lesson), catalog)


def update(lesson: Path) -> Catalog:
    """Merge the lesson's passages into its catalog: changed English becomes fuzzy."""
    catalog = read(lesson)
    catalog.update(template(lesson), update_creation_date=False)
    catalog.obsolete.clear()  # an English passage that is gone: its translation goes too
    write(lesson, catalog)
    return catalog


def problems(lesson: Path, catalog: Catalog | None = None) -> list[str]:
    """What keeps the Chinese edition from matching today's English: one line per passage."""
    catalog = read(lesson) if catalog is None else catalog
    found = []
    for message in template(lesson):
        if not message.id:
            continue
        where = f"{lesson.name} cell {message.locations[0][1]}"
        entry = catalog.get(message.id, context=message.context)
        first = str(message.id).splitlines()[0][:70]
        if entry is None or not entry.string:
            found.append(f"{where}: no translation of {first!r}")
        elif entry.fuzzy:
            found.append(f"{where}: the English changed, the translation is out of date: "
                         f"{first!r}")
    return found


def translate(nb, catalog: Catalog, strict: bool = True):  # type: ignore[no-untyped-def]
    """A copy of the notebook ``nb`` with its prose and comments in Chinese, and the checks set
    to answer in Chinese (:data:`EDITION_LINES`); the code itself unchanged."""
    out = copy.deepcopy(nb)

    def zh(text: str, context: str | None = None) -> str:
        entry = catalog.get(text, context=context)
        if entry is None or not entry.string or entry.fuzzy:
            if not strict:  # a draft to read: the English where the Chinese is missing
                return text
            raise KeyError(f"no up-to-date translation of {text[:70]!r}")
        return str(entry.string)

    for cell in out.cells:
        if cell.cell_type == "markdown":
            cell.source = "\n\n".join(zh(text) for text in passages(cell.source))
        elif cell.cell_type == "code":
            cell.source = translate_comments(translate_docstrings(
                _translate_strings(cell.source, lambda text: zh(text, STRING)),
                lambda text: zh(text, DOCSTRING)), lambda text: zh(text, COMMENT))
    first_code = next(cell for cell in out.cells if cell.cell_type == "code")
    first_code.source = EDITION_LINES + "\n" + first_code.source  # already in Chinese
    out.metadata.setdefault("nn_from_scratch", {})["language"] = LOCALE
    return out


def zh_path(lesson: Path, edition: str = "full") -> Path:
    return notebooks.notebook_path(lesson, edition).parent / "zh" / f"{lesson.stem}.ipynb"


def build(lesson: Path) -> None:
    """Write both Chinese editions: the full one executed for real (its checks answer in
    Chinese, and must all pass), the student one with no outputs."""
    import jax
    import nbformat

    catalog = read(lesson)
    full, student = (translate(nb, catalog) for nb in notebooks.editions(lesson))
    seconds = notebooks.execute(full)
    failed = {i: r for i, r in notebooks.check_results(full).items()
              if r["status"] != "passed"}
    if failed:
        raise AssertionError(f"{lesson.name} (zh_CN): checks that fail on the solutions: {failed}")
    full.metadata["nn_from_scratch"]["executed"] = {  # as the English build records it
        "seconds": round(seconds, 1), "python": platform.python_version(),
        "jax": jax.__version__, "cpu_cores": os.cpu_count()}
    for edition, nb in (("full", full), ("student", student)):
        zh_path(lesson, edition).parent.mkdir(exist_ok=True)
        nbformat.write(nb, zh_path(lesson, edition))
    write_release(lesson)


def write_release(lesson: Path) -> Path:
    """Write the grader's manifest of the Chinese student edition (no executing needed)."""
    from nn_from_scratch.grade import release

    student = translate(notebooks.editions(lesson)[1], read(lesson))
    return release.write_manifest(student, lesson.stem, RELEASE_ZH)


MESSAGES = notebooks.ROOT / "nn_from_scratch" / "locale"
RELEASE_ZH = notebooks.ROOT / "nn_from_scratch" / "grade" / "release" / "zh"


# What marks a message for translation: _("... {x}").format(x=...) where it has values in it;
# a plain string given to Mistake or NotDone, or returned through N_(), is translated by the
# @exercise decorator when it becomes the result; the third argument of @exercise is a title.
MESSAGE_KEYWORDS = {"_": None, "N_": None, "Mistake": None, "NotDone": None, "exercise": (3,),
                    "pgettext": ((1, "c"), 2)}


def message_template() -> Catalog:
    """Every message the package marks with ``_()`` (the checkers' results and hints)."""
    from babel.messages.extract import extract_from_dir

    catalog = Catalog(project="nn_from_scratch", fuzzy=False)
    package = notebooks.ROOT / "nn_from_scratch"
    for filename, lineno, message, notes, context in extract_from_dir(
            package, method_map=[("**.py", "python")], keywords=MESSAGE_KEYWORDS,
            comment_tags=("TRANSLATORS:",)):
        catalog.add(message, locations=[(f"nn_from_scratch/{filename}", lineno)],
                    auto_comments=notes, context=context)
    listing_template(catalog)
    return catalog


MESSAGES_PO = MESSAGES / LOCALE / "LC_MESSAGES" / "nn_from_scratch.po"
LISTING_CALLS = ("listing", "docstring")  # nn_from_scratch.listing's, as lessons call them


def listed() -> list[tuple[str, object, str]]:
    """``(lesson, object, call)`` for every ``listing(obj)`` or ``docstring(obj)`` a lesson
    calls: its imports are run (nothing else) to find what each name is."""
    import inspect

    found = []
    for lesson in notebooks.lesson_paths():
        cells = [c.source for c in notebooks.editions(lesson)[0].cells if c.cell_type == "code"]
        names: dict[str, object] = {}
        calls = []
        for source in cells:
            try:
                tree = ast.parse(source)
            except SyntaxError:
                continue
            for node in ast.walk(tree):
                if isinstance(node, ast.Import | ast.ImportFrom) and \
                        (getattr(node, "module", None) or node.names[0].name).startswith("nn_"):
                    exec(compile(ast.Module([node], []), lesson.name, "exec"), names)
                elif isinstance(node, ast.Call) and getattr(node.func, "id", "") in LISTING_CALLS:
                    calls.append((node.func.id, ast.unparse(node.args[0])))  # type: ignore
        for call, expression in calls:
            obj = eval(expression, names)  # noqa: S307 - a lesson's own name for an object
            module = inspect.getmodule(inspect.unwrap(obj))
            if module is None or not module.__name__.startswith("nn_from_scratch"):
                raise SystemExit(f"{lesson.name}: listing({expression}) is not the package's")
            found.append((lesson.stem, obj, call))
    return found


def listing_template(catalog: Catalog) -> None:
    """Add to ``catalog`` the comments and docstrings of every object a lesson lists (their
    Chinese is what :func:`nn_from_scratch.listing.listing` shows in a Chinese edition)."""
    import inspect

    for lesson, obj, call in listed():
        path = inspect.getsourcefile(inspect.unwrap(obj)) or ""
        where = [(path.split("nn_from_scratch/")[-1], lesson)]
        if call == "docstring":
            catalog.add(inspect.cleandoc(obj.__doc__), locations=where, context=DOCSTRING)
            continue
        source = inspect.getsource(obj)
        for text in comments(source):
            catalog.add(text, locations=where, context=COMMENT)
        for *_, text in docstring_spans(source):
            catalog.add(text, locations=where, context=DOCSTRING)


def message_problems() -> list[str]:
    """The package's messages that have no up-to-date Chinese (new, changed or fuzzy)."""
    catalog = read_catalog(MESSAGES_PO)
    found = []
    for message in message_template():
        entry = catalog.get(message.id, context=message.context)
        if message.id and entry is not None and entry.string and entry.fuzzy:
            found.append(f"{message.locations[0][0]}: the English changed, the translation is "
                         f"out of date (fuzzy): {message.id!r}")
        elif message.id and (entry is None or not entry.string):
            found.append(f"{message.locations[0][0]}: no translation of {message.id!r}")
    return found


def update_messages() -> Catalog:
    """Extract the package's messages into the .pot and merge them into the zh_CN .po
    (changed English becomes fuzzy); return the merged catalog."""
    template_catalog = message_template()
    write_catalog(MESSAGES / "nn_from_scratch.pot", template_catalog)
    catalog = read_catalog(MESSAGES_PO)
    catalog.update(template_catalog, update_creation_date=False)
    catalog.obsolete.clear()
    write_catalog(MESSAGES_PO, catalog)
    return catalog


def todo(catalog: Catalog, everything: bool = False) -> list[dict]:
    """What is left to translate in ``catalog``: ``en``, ``ctxt``, and ``was`` for a fuzzy one;
    with ``everything``, every passage with its Chinese as ``zh`` (for a reviewer to revise)."""
    if everything:
        return [{"ctxt": m.context, "en": m.id, "zh": m.string} for m in catalog if m.id]
    return [{"ctxt": m.context, "en": m.id, **({"was": m.string} if m.fuzzy else {})}
            for m in catalog if m.id and (not m.string or m.fuzzy)]


def fill(catalog: Catalog, items: list[dict], where: str) -> None:
    """Write translations (``todo``'s items with ``zh`` added) into ``catalog``."""
    for item in items:
        entry = catalog.get(item["en"], context=item.get("ctxt"))
        if entry is None:
            raise SystemExit(f"not a passage of {where}: {item['en'][:70]!r}")
        entry.string, entry.flags = item["zh"], entry.flags - {"fuzzy"}
        entry.previous_id = []


def show(lesson: Path) -> str:
    """The Chinese full edition as a reader meets it, as Markdown: prose, code, and the text
    outputs of the English execution of the same code (a check's line stays English there)."""
    import nbformat

    executed = nbformat.read(notebooks.notebook_path(lesson), as_version=4)
    chinese = translate(notebooks.editions(lesson)[0], read(lesson), strict=False)
    parts = []
    for zh_cell, en_cell in zip(chinese.cells, executed.cells):
        if zh_cell.cell_type == "markdown":
            parts.append(zh_cell.source)
            continue
        parts.append(f"```python\n{zh_cell.source}\n```")
        for output in en_cell.get("outputs", []):
            text = output.get("text") or output.get("data", {}).get("text/plain", "")
            if output.get("output_type") == "error":
                text = f"{output.get('ename')}: {output.get('evalue')}"
            if text:
                parts.append("输出：\n```\n" + "".join(text).strip()[:1500] + "\n```")
            elif "image/png" in output.get("data", {}):
                parts.append("输出：（一张图）")
    return "\n\n".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command",
                        choices=["update", "status", "todo", "fill", "build", "release",
                                 "messages", "show"])
    parser.add_argument("lesson", nargs="?", help="a lesson slug (default: every lesson), or "
                        "'messages' with todo and fill: the package's messages")
    parser.add_argument("file", nargs="?", help="with fill: the JSON list of translations")
    parser.add_argument("--all", action="store_true",
                        help="with todo: every passage with its Chinese, to revise and fill back")
    args = parser.parse_intermixed_args()
    if args.command in ("todo", "fill") and args.lesson == "messages":
        lock = (MESSAGES / ".lock").open("w")
        fcntl.flock(lock, fcntl.LOCK_EX)  # translators fill the one catalog at the same time
        catalog = update_messages()
        if args.command == "todo":
            print(json.dumps(todo(catalog, args.all), ensure_ascii=False, indent=1))
            return
        fill(catalog, json.loads(Path(args.file).read_text(encoding="utf-8")), "the package")
        write_catalog(MESSAGES_PO, catalog)
        print(f"the package's messages: {len(todo(catalog))} left")
        return
    lessons = [p for p in notebooks.lesson_paths() if not args.lesson or p.stem == args.lesson]
    if not lessons:
        parser.error(f"no lesson {args.lesson!r}; lessons are {notebooks.lesson_paths()}")
    if args.command == "update":
        for lesson in lessons:
            update(lesson)
            print(f"{catalog_path(lesson).relative_to(notebooks.ROOT)}: "
                  f"{len(problems(lesson))} passages to translate")
    elif args.command == "messages":
        update_messages()
        print("\n".join(message_problems()) or "every message of the package is translated")
    elif args.command == "release":
        for lesson in lessons:
            print(f"{lesson.stem}: {write_release(lesson).relative_to(notebooks.ROOT)}")
    elif args.command == "show":
        for lesson in lessons:
            print(show(lesson))
    elif args.command == "build":
        for lesson in lessons:
            build(lesson)
            print(f"{lesson.stem}: {zh_path(lesson).relative_to(notebooks.ROOT)}, "
                  f"{zh_path(lesson, 'student').relative_to(notebooks.ROOT)}")
    elif args.command == "status":
        found = [line for lesson in lessons for line in problems(lesson)]
        print("\n".join(found) or "every passage of every lesson is translated and up to date")
        sys.exit(1 if found else 0)
    elif args.command == "todo":
        print(json.dumps(todo(update(lessons[0]), args.all), ensure_ascii=False, indent=1))
    else:
        catalog = update(lessons[0])
        fill(catalog, json.loads(Path(args.file).read_text(encoding="utf-8")), lessons[0].name)
        write(lessons[0], catalog)
        print(f"{lessons[0].stem}: {len(problems(lessons[0]))} passages left")


if __name__ == "__main__":
    main()
