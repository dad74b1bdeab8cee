"""Build the course website from lessons/ and the executed notebooks/ (never re-executed).

    .venv/bin/python tools/site.py              # -> site/_build/html/index.html
    .venv/bin/python tools/site.py --out DIR    # build into DIR/html instead (the tests do)

Sphinx needs every page under one source folder, so this stages one in ``<out>/src``:

- ``site/``: ``conf.py``, the site's own pages (``index.md``, ``library.md``, ...) and ``_static/``;
- ``README.md`` as ``_readme.md``, which those pages include between its ``<!-- site:... -->``
  markers (the README stays the one source), its links fixed up for the site: a lesson's
  ``lessons/NN_slug.md`` becomes its page, ``#anchor`` the page that holds that section;
- each executed ``notebooks/NN_slug.ipynb`` as the page ``lessons/NN_slug.ipynb``, with one
  line under its title: how long it runs and links to download both editions;
- ``notebooks/`` and ``student/`` unchanged, as the files those links download;
- generated parts: the lesson timings, the exercise checkers, the benchmark figures;
- MathJax, copied from the ``sphinx-mathjax-offline`` package: no CDN, works offline.

Then ``sphinx-build`` writes ``<out>/html``, showing every warning. The exit status is 1 when
a warning means a broken page (a missing image, a reference that resolves nowhere).
"""
import argparse
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "site"
DEFAULT_OUT = SITE / "_build"
README_MARKERS = ("intro", "students", "instructors", "lessons", "benchmark")
# The checkers' machine-readable copy of each ✓/✗ line (nn_from_scratch.exercises.MIME): for the
# grader, not for readers. The page shows the text/plain line next to it.
CHECK_MIME = "application/vnd.nn-from-scratch.check+json"
IMAGE_SUFFIXES = {".png", ".svg", ".jpg", ".jpeg", ".gif", ".webp"}
# Warnings that mean a reader meets something broken: the tests and the exit status fail on them.
BROKEN = re.compile(
    r"ERROR|CRITICAL|image file not readable|image file not found|download file not readable"
    r"|undefined label|unknown document|local id not found|toctree contains reference"
    r"|isn't included in any toctree|failed to import|Include file|unknown output mime type"
    r"|\[(?:ref\.\w+|myst\.xref_missing|myst\.iref_ambiguous|toc\.\w+|image\.\w+"
    r"|download\.\w+|autodoc(?:\.\w+)?|mystnb\.\w+)\]"
)


@dataclass(frozen=True)
class Edition:
    """One language of the site: where its notebooks, README and pages are, where it goes."""

    lang: str                 # "en" or "zh_CN" (Sphinx's language)
    notebooks: Path           # the executed full edition
    student: Path             # the student edition
    readme: Path              # the README its home and instructors pages show
    pages: Path               # its own pages (index.md, instructors.md, ...)
    subdir: str               # where it goes under html/: "" or "zh"
    markers: tuple[str, ...]  # the README parts its pages include


EN = Edition("en", ROOT / "notebooks", ROOT / "student", ROOT / "README.md", SITE, "",
             README_MARKERS)
ZH = Edition("zh_CN", ROOT / "notebooks" / "zh", ROOT / "student" / "zh",
             ROOT / "README.zh-CN.md", SITE / "zh", "zh",
             ("intro", "students", "instructors", "lessons"))
LABELS = {  # what a lesson page says under its title, in each language
    "en": ("Runs in ~{seconds} s on {cpu}", "a {cores}-core CPU", "a CPU",
           "Notebook with solutions", "Student notebook"),
    "zh_CN": ("在{cpu}上运行约 {seconds} s", " {cores} 核 CPU ", " CPU ",
              "含答案的笔记本", "学生版笔记本"),
}


@dataclass
class Lesson:
    stem: str                 # "07_mlp_from_scratch"
    title: str                # "07 · An MLP from scratch"
    notebook: Path            # the executed full edition
    student: Path | None      # the student edition, if generated
    seconds: float | None     # execution time recorded in the notebook's metadata
    cores: int | None         # ... on a CPU with this many cores
    python: str | None
    jax: str | None

    @property
    def page(self) -> str:
        return f"lessons/{self.stem}.ipynb"


@dataclass
class BuildResult:
    html: Path
    seconds: float
    warnings: list[str]

    @property
    def broken(self) -> list[str]:
        return [w for w in self.warnings if BROKEN.search(w)]


def lessons(edition: Edition = EN) -> list[Lesson]:
    """The lessons that have an executed notebook, in order (``lessons/NN_*.md``)."""
    found = []
    for source in sorted((ROOT / "lessons").glob("[0-9][0-9]_*.md")):
        notebook = edition.notebooks / f"{source.stem}.ipynb"
        if not notebook.exists():
            continue
        nb = json.loads(notebook.read_text(encoding="utf-8"))
        executed = nb.get("metadata", {}).get("nn_from_scratch", {}).get("executed", {})
        student = edition.student / f"{source.stem}.ipynb"
        found.append(Lesson(
            stem=source.stem, title=_title(nb) or source.stem, notebook=notebook,
            student=student if student.exists() else None, seconds=executed.get("seconds"),
            cores=executed.get("cpu_cores"), python=executed.get("python"),
            jax=executed.get("jax"),
        ))
    return found


def _title(nb: dict) -> str | None:
    for cell in nb["cells"]:
        if cell["cell_type"] == "markdown":
            for line in _source(cell).splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    return None


def _source(cell: dict) -> str:
    source = cell["source"]
    return source if isinstance(source, str) else "".join(source)


def runs_in(lesson: Lesson, lang: str = "en") -> str:
    """'Runs in ~17 s on a 2-core CPU' (empty when the notebook does not say)."""
    if lesson.seconds is None:
        return ""
    runs, cores, no_cores, *_ = LABELS[lang]
    cpu = cores.format(cores=lesson.cores) if lesson.cores else no_cores
    return runs.format(seconds=max(1, round(lesson.seconds)), cpu=cpu)


# --- the lesson pages ---------------------------------------------------------------------

def lesson_page(lesson: Lesson, lang: str = "en") -> str:
    """The executed notebook with its run time and download links under the title (JSON).

    The checkers' own MIME type is dropped from the outputs: myst-nb renders every MIME type
    of an output while reading (and warns about one it does not know) before it picks the
    one to show, so ``nb_mime_priority_overrides`` alone cannot keep it quiet.
    """
    nb = json.loads(lesson.notebook.read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        for output in cell.get("outputs", []):
            output.get("data", {}).pop(CHECK_MIME, None)
            output.get("metadata", {}).pop(CHECK_MIME, None)
    *_, with_solutions, student = LABELS[lang]
    items = [runs_in(lesson, lang)] if lesson.seconds is not None else []
    items.append(f"{{download}}`{with_solutions} <../notebooks/{lesson.notebook.name}>`")
    if lesson.student:
        items.append(f"{{download}}`{student} <../student/{lesson.student.name}>`")
    meta = ":::{container} lesson-meta\n" + "\n\n".join(items) + "\n:::\n"
    for cell in nb["cells"]:
        if cell["cell_type"] != "markdown":
            continue
        lines = _source(cell).splitlines(keepends=True)
        for i, line in enumerate(lines):
            if line.startswith("# "):
                lines[i + 1:i + 1] = ["\n", meta, "\n"]
                cell["source"] = "".join(lines)
                return json.dumps(nb, ensure_ascii=False, indent=1)
    nb["cells"].insert(0, {"cell_type": "markdown", "metadata": {}, "source": meta})
    return json.dumps(nb, ensure_ascii=False, indent=1)


# --- the README, fixed up for the site ----------------------------------------------------

_FENCE = re.compile(r"^\s*(```|~~~)")
_LINK = re.compile(r"(!?)\[([^\]\n]*)\]\(([^)\s]+)\)")
_INCLUDE = re.compile(r"^```\{include\}\s*(\S+)\n((?::[\w-]+:.*\n)*)```", re.MULTILINE)


def _outside_fences(text: str):
    """Yield (line, in_code) for each line of Markdown ``text``."""
    fence = None
    for line in text.splitlines(keepends=True):
        match = _FENCE.match(line)
        if match and fence is None:
            fence = match.group(1)
            yield line, True
        elif match and line.strip().startswith(fence or "\0"):
            fence = None
            yield line, True
        else:
            yield line, fence is not None


def _slug(heading: str) -> str:
    """The anchor myst gives a heading (its GitHub-style slug, as GitHub's README view does)."""
    title = re.sub(r"[`*]", "", heading.strip()).lower().replace(" ", "-")
    return re.sub(r"[^\w\u4e00-\u9fff\- ]", "", title)


def readme_anchors(readme: str, pages: Path = SITE) -> dict[str, str]:
    """Heading anchor -> site page (``instructors.md``) for each README section on the site.

    Read from the site's pages themselves: each ``{include} _readme.md`` there says which part
    of the README it shows (``:start-after:`` / ``:end-before:``).
    """
    anchors: dict[str, str] = {}
    for page in sorted(pages.glob("*.md")):
        for match in _INCLUDE.finditer(page.read_text(encoding="utf-8")):
            if match.group(1) != "_readme.md":
                continue
            options = dict(re.findall(r"^:([\w-]+):\s*(.*)$", match.group(2), re.MULTILINE))
            part = readme
            if "start-after" in options:
                part = part.split(_unquote(options["start-after"]), 1)[-1]
            if "end-before" in options:
                part = part.split(_unquote(options["end-before"]), 1)[0]
            for line, in_code in _outside_fences(part):
                if not in_code and re.match(r"#{1,6} ", line):
                    anchors.setdefault(_slug(line.lstrip("#")), page.name)
    return anchors


def _unquote(value: str) -> str:
    value = value.strip()
    return value[1:-1] if len(value) > 1 and value[0] == value[-1] and value[0] in "'\"" else value


def readme_for_site(readme: str, staged: set[str], notes: list[str],
                    edition: Edition = EN) -> str:
    """README.md with each link pointing where it resolves on the site.

    ``staged``: the paths (relative to the source folder) that exist there. A link with no
    place on the site (a lesson not executed yet, a section the site leaves out) becomes
    plain text, and a line in ``notes`` says so.
    """
    for marker in edition.markers:
        for end in ("start", "end"):
            if f"<!-- site:{marker}:{end} -->" not in readme:
                raise SystemExit(f"{edition.readme.name} lacks the marker "
                                 f"<!-- site:{marker}:{end} -->, which the site's pages "
                                 f"include from")
    anchors = readme_anchors(readme, edition.pages)

    def fix(match: re.Match) -> str:
        bang, text, target = match.groups()
        if re.match(r"[a-z]+:", target):                 # https:, mailto:
            return match.group(0)
        path, _, fragment = target.partition("#")
        if not path:
            if fragment in anchors:
                return f"{bang}[{text}]({anchors[fragment]}#{fragment})"
            notes.append(f"README link to #{fragment}: that section is not on the site")
            return text
        lesson = re.fullmatch(r"lessons/(\d\d_\w+)\.md|notebooks/(?:zh/)?(\d\d_\w+)\.ipynb", path)
        if lesson:
            stem = lesson.group(1) or lesson.group(2)
            page = f"lessons/{stem}.ipynb"
            if page in staged:
                return f"{bang}[{text}]({page})"
            pending.append(stem[:2])
            return text
        if path in staged:
            return match.group(0)
        notes.append(f"README link to {path}: not on the site, shown as text")
        return text

    pending: list[str] = []
    out = []
    for line, in_code in _outside_fences(readme):
        out.append(line if in_code else _LINK.sub(fix, line))
    if pending:
        many = len(pending) > 1
        which = f"lessons {', '.join(pending)} have" if many else f"lesson {pending[0]} has"
        notes.append(f"{which} no executed notebook yet: no page on the site, and the "
                     f"README's links to {'them' if many else 'it'} are shown as text")
    return "".join(out)


def readme_files(readme: str) -> list[str]:
    """Repository files that README.md links to or shows and the site must carry (images)."""
    found = []
    for line, in_code in _outside_fences(readme):
        if in_code:
            continue
        for _, _, target in _LINK.findall(line):
            path = target.partition("#")[0]
            if (path and not re.match(r"[a-z]+:", path) and Path(path).suffix.lower()
                    in IMAGE_SUFFIXES and (ROOT / path).is_file()):
                found.append(path)
    return found


# --- generated parts ----------------------------------------------------------------------

def timings_part(found: list[Lesson], lang: str = "en") -> str:
    """The instructors' table: how long each lesson took to execute, from its notebook."""
    lines = [
        "## How long each lesson takes",
        "",
        "Executing each lesson top to bottom in a fresh kernel, as recorded in its committed "
        "notebook when it was last executed (the tests execute every lesson again):",
        "",
        "| lesson | runs in | executed on |",
        "|---|---|---|",
    ] if lang == "en" else [
        "## 每一课运行要多久",
        "",
        "在新内核中从头到尾执行每一课所用的时间，取自提交的笔记本最近一次执行时的记录：",
        "",
        "| 课程 | 运行时间 | 执行环境 |",
        "|---|---|---|",
    ]
    total = 0.0
    for lesson in found:
        where = ", ".join(x for x in (
            f"{lesson.cores}-core CPU" if lesson.cores else "",
            f"Python {lesson.python}" if lesson.python else "",
            f"JAX {lesson.jax}" if lesson.jax else "") if x)
        took = f"{lesson.seconds:.0f} s" if lesson.seconds is not None else "–"
        total += lesson.seconds or 0.0
        lines.append(f"| [{lesson.title}]({lesson.page}) | {took} | {where or '–'} |")
    if not found:
        lines.append("| (no lesson has been executed yet) | – | – |")
    lines += ["", f"All {len(found)} together: about {total / 60:.1f} minutes." if lang == "en"
              else f"全部 {len(found)} 课合计约 {total / 60:.1f} 分钟。"]
    return "\n".join(lines) + "\n"


def checkers_part() -> str:
    """A section and an ``automodule`` for each lesson's checkers (``exercises/*.py``)."""
    modules = sorted(p.stem for p in (ROOT / "nn_from_scratch" / "exercises").glob("[!_]*.py"))
    return "".join(f"### `exercises/{name}.py`\n\n```{{eval-rst}}\n"
                   f".. automodule:: nn_from_scratch.exercises.{name}\n   :members:\n```\n\n"
                   for name in modules)


def benchmark_part(found: list[Lesson], readme: str) -> tuple[str, list[str]]:
    """Figures saved under ``benchmarks/`` that the README does not already show."""
    shown = set(readme_files(readme))
    figures = [str(p.relative_to(ROOT)) for p in sorted((ROOT / "benchmarks").glob("*"))
               if p.suffix.lower() in IMAGE_SUFFIXES and str(p.relative_to(ROOT)) not in shown]
    parts = []
    for figure in figures:
        caption = Path(figure).stem.replace("_", " ")
        parts.append(f"```{{figure}} {figure}\n:alt: {caption}\n\n{caption}\n```\n")
    timing_lessons = [x for x in found if "jit" in x.stem and "no_jit" in x.stem]
    for lesson in timing_lessons:
        parts.append(f"The lesson [{lesson.title}]({lesson.page}) measures the same on your "
                     f"own machine, step by step, with plots.\n")
    return "\n".join(parts), figures


# --- staging and building -----------------------------------------------------------------

def mathjax_dir() -> Path:
    spec = importlib.util.find_spec("sphinx-mathjax-offline")
    if spec is None or spec.origin is None:
        raise SystemExit("the site needs MathJax from the sphinx-mathjax-offline package: "
                         ".venv/bin/pip install -r requirements.txt")
    return Path(spec.origin).parent / "static" / "mathjax"


def stage(src: Path, edition: Edition = EN) -> tuple[list[Lesson], list[str]]:
    """Lay out the Sphinx source tree in ``src`` (emptied first). Returns (lessons, notes)."""
    if src.exists():
        shutil.rmtree(src)
    src.mkdir(parents=True)
    notes: list[str] = []
    for path in SITE.iterdir():
        if path.suffix == ".py" or path.name in ("_static", "_templates") or (
                path.suffix == ".md" and edition is EN):
            (shutil.copytree if path.is_dir() else shutil.copy2)(path, src / path.name)
    if edition is not EN:  # its own pages; the English library and figures it includes
        for path in edition.pages.glob("*.md"):
            shutil.copy2(path, src / path.name)
        shutil.copy2(SITE / "library.md", src / "_library_en.md")
    # MathJax 3's CHTML build with its fonts and extensions; the other builds are not needed.
    shutil.copytree(mathjax_dir(), src / "_static" / "mathjax", ignore=shutil.ignore_patterns(
        "tex-svg*", "tex-mml-*", "mml-*", "tex-chtml-full*", "node-main.js", "latest.js"))

    found = lessons(edition)
    staged = set()
    for lesson in found:
        for folder, path in (("notebooks", lesson.notebook), ("student", lesson.student)):
            if path:
                (src / folder).mkdir(exist_ok=True)
                shutil.copy2(path, src / folder / path.name)
                staged.add(f"{folder}/{path.name}")
        (src / "lessons").mkdir(exist_ok=True)
        (src / lesson.page).write_text(lesson_page(lesson, edition.lang), encoding="utf-8")
        staged.add(lesson.page)

    readme = edition.readme.read_text(encoding="utf-8")
    english = EN.readme.read_text(encoding="utf-8")
    bench, figures = benchmark_part(found, english)
    for path in readme_files(readme) + readme_files(english) + figures:
        (src / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / path, src / path)
        staged.add(path)
    (src / "_readme.md").write_text(readme_for_site(readme, staged, notes, edition),
                                    encoding="utf-8")
    if edition is not EN:  # the parts that exist in English only (the benchmark)
        (src / "_readme_en.md").write_text(readme_for_site(english, staged, [], EN),
                                           encoding="utf-8")
    (src / "_timings.md").write_text(timings_part(found, edition.lang), encoding="utf-8")
    (src / "_checkers.md").write_text(checkers_part(), encoding="utf-8")
    (src / "_benchmark_figures.md").write_text(bench, encoding="utf-8")
    return found, notes


def build(out: Path = DEFAULT_OUT, quiet: bool = False) -> BuildResult:
    """Stage and build the English site into ``out/html`` and, when the Chinese notebooks
    exist, the Chinese one into ``out/html/zh``; every warning is printed unless ``quiet``."""
    start = time.perf_counter()
    html = out / "html"
    if html.exists():
        shutil.rmtree(html)  # no page or image of an earlier build may linger and be published
    bilingual = bool(lessons(ZH))
    warnings: list[str] = []
    count = 0
    for edition in (EN, ZH) if bilingual else (EN,):
        suffix = f"-{edition.subdir}" if edition.subdir else ""
        src, warnings_file = out / f"src{suffix}", out / f"warnings{suffix}.txt"
        target = html / edition.subdir if edition.subdir else html
        found, notes = stage(src, edition)
        count += len(found)
        for note in notes:
            if not quiet:
                print(f"note: {note}", flush=True)
        env = dict(os.environ, NN_FROM_SCRATCH_ROOT=str(ROOT), PYTHONWARNINGS="ignore")
        command = [sys.executable, "-m", "sphinx", "-b", "html", "-q", "-E", "--keep-going",
                   "-D", f"language={edition.lang}", "-A", f"lang={edition.lang}",
                   "-A", f"bilingual={int(bilingual)}",
                   "-d", str(out / f"doctrees{suffix}"), "-w", str(warnings_file), str(src),
                   str(target)]
        done = subprocess.run(command, env=env, cwd=ROOT, text=True, capture_output=True)
        if not quiet and (done.stdout or done.stderr):
            print((done.stdout + done.stderr).rstrip(), flush=True)
        found_warnings = _warnings(warnings_file.read_text(encoding="utf-8")
                                   if warnings_file.exists() else "")
        if done.returncode != 0 and not found_warnings:
            found_warnings = [f"ERROR: sphinx-build ({edition.lang}) exited with status "
                              f"{done.returncode}: {done.stderr.strip()[-2000:]}"]
        warnings += found_warnings
    result = BuildResult(html=html, seconds=time.perf_counter() - start, warnings=warnings)
    if not quiet:
        languages = "English and Chinese" if bilingual else "English"
        print(f"built {count} lesson pages and the site ({languages}) into {_shown(html)}/"
              f"index.html in {result.seconds:.1f} s; {len(warnings)} warnings, "
              f"{len(result.broken)} of them broken pages")
    return result


def _warnings(text: str) -> list[str]:
    """One string per warning (a warning may run over several lines)."""
    warnings: list[str] = []
    for line in text.splitlines():
        if re.search(r"\b(WARNING|ERROR|CRITICAL|SEVERE)\b", line) or not warnings:
            warnings.append(line)
        else:
            warnings[-1] += "\n" + line
    return [w for w in warnings if w.strip()]


def _shown(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT,
                        help="build folder: the site goes to OUT/html (default: site/_build)")
    args = parser.parse_args(argv)
    result = build(args.out)
    if result.broken:
        print(f"error: {len(result.broken)} warnings mean broken pages (see above)",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
