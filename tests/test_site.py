"""The course website, checked as a reader meets it.

The site is built once per session (``tools/site.py``, into a temporary folder) from the
lessons whose executed notebooks exist. Then:

- from the HTML: every lesson has a page with its run time, its plots and its two downloads;
  every internal link and image resolves; the library page holds every module; the search
  index exists; Sphinx said nothing that means a broken page;
- in headless Chromium (Debian's ``chromium``; skipped with the reason when it is absent):
  each page loads with no console error, its maths is typeset, its images have a size, and
  its previous/next links lead where the lesson order says. Screenshots of the home page and
  a lesson go to ``.screenshots/`` (git-ignored) for a person to look at.
"""
import base64
import functools
import hashlib
import http.server
import importlib.util
import json
import re
import threading
import time
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from chromium import HEIGHT, WIDTH

ROOT = Path(__file__).resolve().parent.parent
# built from the committed notebooks, nothing executed: "slow" (conftest.py)
pytestmark = pytest.mark.slow
SCREENSHOTS = ROOT / ".screenshots"


def _load_site_tool():
    # tools/site.py shares its name with the standard library's ``site``: load it by path.
    spec = importlib.util.spec_from_file_location("nn_site_tool", ROOT / "tools" / "site.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


site_tool = _load_site_tool()
LESSONS = site_tool.lessons()
LESSON_IDS = [lesson.stem for lesson in LESSONS]
# The reading order: the home page, the lessons, then the reference pages (site/index.md).
ORDER = ["index.html", *[f"lessons/{s}.html" for s in LESSON_IDS],
         "library.html", "benchmark.html", "instructors.html"]
# The Chinese site (html/zh/), built when the Chinese notebooks exist: the same pages.
ZH_LESSONS = site_tool.lessons(site_tool.ZH)
ZH_ORDER = [f"zh/{page}" for page in ORDER] if ZH_LESSONS else []


# --- the build ----------------------------------------------------------------------------

@pytest.fixture(scope="session")
def built(tmp_path_factory):
    result = site_tool.build(tmp_path_factory.mktemp("site"), quiet=True)
    assert (result.html / "index.html").exists(), "\n".join(result.warnings)
    return result


@pytest.fixture(scope="session")
def html(built) -> Path:
    return built.html


def staged(html: Path, notebook: Path) -> Path:
    """The copy of ``notebooks/X.ipynb`` (or ``student/``) that the build used: the checks
    compare with it, not with the file itself, which may have been executed again since."""
    if notebook.parent.name == "zh":  # notebooks/zh/X.ipynb, staged for the Chinese site
        return html.parent / "src-zh" / notebook.parent.parent.name / notebook.name
    return html.parent / "src" / notebook.parent.name / notebook.name


class Page(HTMLParser):
    """What the checks need from one HTML file: its links, images, ids and text."""

    def __init__(self, path: Path):
        super().__init__(convert_charrefs=True)
        self.path, self.links, self.images, self.ids, self.text = path, [], [], set(), []
        self.classes: dict[str, list[dict]] = {}
        self._skip = 0
        self.feed(path.read_text(encoding="utf-8"))

    def handle_starttag(self, tag, attrs):
        a = {k: v or "" for k, v in attrs}
        if "id" in a:
            self.ids.add(a["id"])
        if tag == "a" and "name" in a:
            self.ids.add(a["name"])
        for cls in a.get("class", "").split():
            self.classes.setdefault(cls, []).append({"tag": tag, **a})
        if tag == "a" and "href" in a:
            self.links.append(a["href"])
        elif tag in ("link", "script", "img", "source") and (a.get("href") or a.get("src")):
            (self.images if tag == "img" else self.links).append(a.get("src") or a["href"])
        if tag in ("script", "style"):
            self._skip += 1

    def handle_endtag(self, tag):
        if tag in ("script", "style") and self._skip:
            self._skip -= 1

    def handle_data(self, data):
        if not self._skip:
            self.text.append(data)

    @property
    def body_text(self) -> str:
        return re.sub(r"\s+", " ", "".join(self.text))


@functools.cache
def parse(path: Path) -> Page:
    return Page(path)


def pages(html: Path) -> list[Path]:
    return sorted(p for p in html.rglob("*.html")
                  if not any(part.startswith("_") for part in p.relative_to(html).parts))


def test_the_build_is_clean_and_quick(built):
    broken = "\n".join(built.broken)
    assert not built.broken, f"Sphinx warnings that mean broken pages:\n{broken}"
    # Nothing is executed: a few seconds for Sphinx itself (10 s here on 2 cores).
    assert built.seconds < 120, f"the site took {built.seconds:.0f} s to build"


def test_every_executed_lesson_has_a_page_in_order(html):
    assert LESSONS, "no lesson has an executed notebook in notebooks/"
    home = parse(html / "index.html")
    for lesson in LESSONS:
        assert (html / "lessons" / f"{lesson.stem}.html").exists(), lesson.stem
        assert f"lessons/{lesson.stem}.html" in home.links, f"the home page links {lesson.stem}"
    # The navigation lists each lesson first, in the order of its number.
    listed = list(dict.fromkeys(link for link in home.links if link.startswith("lessons/")))
    assert listed == [f"lessons/{s}.html" for s in LESSON_IDS], "the lessons appear in order"


@pytest.mark.parametrize("stem", LESSON_IDS)
def test_lesson_page_shows_run_time_and_both_downloads(html, stem):
    lesson = next(x for x in LESSONS if x.stem == stem)
    page = parse(html / "lessons" / f"{stem}.html")
    if lesson.seconds is not None:
        assert re.search(r"Runs in ~\d+ s on a (\d+-core )?CPU", page.body_text)
    editions = [lesson.notebook] + ([lesson.student] if lesson.student else [])
    downloads = [link for link in page.links if "_downloads/" in link]
    for edition in editions:
        found = [link for link in downloads if link.endswith("/" + edition.name) and
                 _resolve(page.path, link).read_bytes() == staged(html, edition).read_bytes()]
        assert found, f"a download of {edition.relative_to(ROOT)}, byte for byte"
    assert len({_resolve(page.path, link) for link in downloads}) >= len(editions)


@pytest.mark.parametrize("stem", LESSON_IDS)
def test_lesson_page_contains_its_plots_and_outputs(html, stem):
    lesson = next(x for x in LESSONS if x.stem == stem)
    nb = json.loads(staged(html, lesson.notebook).read_text(encoding="utf-8"))
    page = parse(html / "lessons" / f"{stem}.html")
    shown = {hashlib.sha256(_resolve(page.path, src).read_bytes()).hexdigest()
             for src in page.images if _resolve(page.path, src).is_file()}
    plots = 0
    for cell in nb["cells"]:
        for output in cell.get("outputs", []):
            png = output.get("data", {}).get("image/png")
            if png:
                plots += 1
                digest = hashlib.sha256(base64.b64decode("".join(png))).hexdigest()
                assert digest in shown, f"plot {plots} of {stem} is not on its page"
    # Checker results are shown, never dropped with their custom MIME type: as the check's HTML
    # box where the output has one (exercises/_display: symbol and word, its status), in order,
    # with nothing in it that runs; else as the text/plain line.
    boxes = []
    for cell in nb["cells"]:
        if "check" in cell.get("metadata", {}).get("tags", []):
            for output in cell.get("outputs", []):
                box = "".join(output.get("data", {}).get("text/html", ""))
                if 'class="nn-check"' in box:
                    boxes.append(re.search(r'data-status="([^"]+)"', box).group(1))
                    assert not re.search(r"<script|\son\w+=|javascript:", box), box
                    shown = html_text(box)
                    assert shown in page.body_text, f"checker box {shown!r}"
                    continue
                plain = "".join(output.get("data", {}).get("text/plain", ""))
                line = "".join(output.get("text", "")) or plain
                first = line.strip().splitlines()[0] if line.strip() else ""
                assert first.strip("'\"") in page.body_text, f"checker output {first!r}"
    on_page = [b.get("data-status") for b in page.classes.get("nn-check", [])]
    assert on_page == boxes, f"the check boxes on {stem}'s page"
    if boxes:  # the executed lessons' checks all pass
        assert set(boxes) == {"passed"}, boxes


def html_text(fragment: str) -> str:
    """The text a piece of HTML shows, whitespace collapsed as :attr:`Page.body_text` does."""
    parser = HTMLParser(convert_charrefs=True)
    text: list[str] = []
    parser.handle_data = text.append
    parser.feed(fragment)
    parser.close()
    return re.sub(r"\s+", " ", "".join(text)).strip()


def _resolve(page: Path, link: str) -> Path:
    path = unquote(urlsplit(link).path)
    target = (page.parent / path).resolve() if path else page
    return target / "index.html" if target.is_dir() else target


def test_every_internal_link_and_image_resolves(html):
    problems = []
    for path in pages(html):
        page = parse(path)
        for link in page.links + page.images:
            parts = urlsplit(link)
            if parts.scheme or link.startswith(("//", "mailto:", "javascript:")) or link == "#":
                continue
            target = _resolve(path, link)
            where = f"{path.relative_to(html)}: {link}"
            if not target.is_file() or not target.resolve().is_relative_to(html.resolve()):
                problems.append(f"{where} (no such file)")
            elif parts.fragment and target.suffix == ".html":
                if unquote(parts.fragment) not in parse(target).ids:
                    problems.append(f"{where} (no anchor #{parts.fragment})")
            elif link in page.images and target.stat().st_size == 0:
                problems.append(f"{where} (empty image)")
    assert not problems, "broken links and images:\n" + "\n".join(problems)


def test_library_page_documents_every_module(html):
    page = parse(html / "library.html")
    package = ROOT / "nn_from_scratch"
    modules = [f"nn_from_scratch.{p.stem}" for p in package.glob("*.py") if p.stem != "__init__"]
    modules += ["nn_from_scratch.exercises"] + [
        f"nn_from_scratch.exercises.{p.stem}" for p in (package / "exercises").glob("[!_]*.py")]
    missing = [m for m in modules if f"module-{m}" not in page.ids]
    assert not missing, f"modules missing from the library page: {missing} (site/library.md)"
    assert "nn_from_scratch.model.predict" in page.ids, "functions are documented one by one"
    assert "ONE" in page.body_text and "(n_in,)" in page.body_text, "docstrings are rendered"


def test_site_uses_its_own_mathjax_and_the_check_mime_type_is_the_library_s(html):
    from nn_from_scratch.exercises import MIME

    assert site_tool.CHECK_MIME == MIME
    page = parse(html / "library.html")
    scripts = [link for link in page.links if "mathjax" in link.lower()]
    assert scripts and all(not urlsplit(s).scheme for s in scripts), scripts
    assert (html / "_static" / "mathjax" / "tex-chtml.js").is_file()
    assert page.classes.get("math"), "the library page's maths is marked up for MathJax"


def test_search_index_covers_every_page(html):
    index = (html / "searchindex.js").read_text(encoding="utf-8")
    data = json.loads(index[index.index("(") + 1:index.rindex(")")])
    docnames = set(data["docnames"])
    assert {"index", "library", "instructors", "benchmark"} <= docnames
    assert {f"lessons/{s}" for s in LESSON_IDS} <= docnames
    assert {"vmap", "relu", "grad"} & set(data["terms"]), "lesson words are indexed"
    assert (html / "search.html").exists()


def test_readme_is_the_one_source_of_the_home_and_instructors_pages(html):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    home, instructors = parse(html / "index.html"), parse(html / "instructors.html")
    shown_on = {"intro": home, "students": home, "instructors": instructors,
                "benchmark": parse(html / "benchmark.html")}
    for marker, page in shown_on.items():
        part = readme.split(f"<!-- site:{marker}:start -->")[1].split(f"<!-- site:{marker}:end")[0]
        first = re.sub(r"[`*#\[\]]", "", part.strip().splitlines()[0]).strip()
        assert first[:40] in page.body_text, f"README's {marker} part is on the site"
    assert re.search(r"How long each lesson takes", instructors.body_text)


# --- in a browser -------------------------------------------------------------------------

@pytest.fixture(scope="module")
def server(html):
    """The built site over HTTP on 127.0.0.1, as GitHub Pages would serve it."""
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    httpd = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Quiet, directory=str(html)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()
    httpd.server_close()


CHECK_PAGE = """(() => {
    const main = document.querySelector('main') || document.body;
    const maths = [...document.querySelectorAll('.math')];
    const untypeset = maths.filter(m => !m.querySelector('mjx-container'))
                           .map(m => m.textContent.trim().slice(0, 60));
    const prose = main.cloneNode(true);
    prose.querySelectorAll('pre, code, script, style, mjx-container, .highlight, .math')
         .forEach(e => e.remove());
    const raw = prose.textContent.match(/\\$[^$\\s][^$\\n]{0,80}?\\$|\\\\\\(|\\\\\\[/g) || [];
    const images = [...main.querySelectorAll('img')]
                       .filter(i => !i.closest('details:not([open])')).map(i => {
        const box = i.getBoundingClientRect();
        return {src: i.getAttribute('src'), natural: i.naturalWidth * i.naturalHeight,
                shown: box.width * box.height};
    });
    const link = sel => { const a = document.querySelector(sel); return a ? a.href : null; };
    return {maths: maths.length, untypeset, raw, images, title: document.title,
            prev: link('a.left-prev'), next: link('a.right-next')};
})()"""


@pytest.mark.parametrize("page", ORDER + ZH_ORDER)
def test_page_in_chromium(browser, server, html, page):
    errors = browser.open(server + page)
    assert not errors, f"console errors on {page}:\n" + "\n".join(errors)
    found = browser.js(CHECK_PAGE)
    assert not found["untypeset"], f"maths MathJax did not typeset: {found['untypeset']}"
    assert not found["raw"], f"raw TeX left in the text: {found['raw']}"
    for image in found["images"]:
        assert image["natural"] > 0 and image["shown"] > 0, f"image without a size: {image}"
    order = ZH_ORDER if page.startswith("zh/") else ORDER
    i = order.index(page)
    expected_prev = server + order[i - 1] if i > 0 else None
    expected_next = server + order[i + 1] if i + 1 < len(order) else None
    assert (found["prev"], found["next"]) == (expected_prev, expected_next), "previous / next"
    if "lessons/" in page:
        lessons = ZH_LESSONS if page.startswith("zh/") else LESSONS
        lesson = next(x for x in lessons if x.stem == Path(page).stem)
        nb = json.loads(staged(html, lesson.notebook).read_text(encoding="utf-8"))
        plots = sum("image/png" in o.get("data", {}) for c in nb["cells"]
                    for o in c.get("outputs", []))
        assert len(found["images"]) >= plots, f"{plots} plots in the notebook"


def test_next_links_walk_the_lessons_in_order(browser, server):
    browser.open(server + "index.html")
    for expected in ORDER[1:3]:
        assert not browser.open(click="a.right-next")
        assert browser.js("location.href") == server + expected


def search(browser, page_url: str) -> list[str]:
    """The result links of a site search (the page fills them in after it loads)."""
    assert not browser.open(page_url)
    deadline, links = time.monotonic() + 15, []
    while time.monotonic() < deadline and not links:
        links = browser.js("[...document.querySelectorAll('#search-results li a')]"
                           ".map(a => a.getAttribute('href'))")
        time.sleep(0.2)
    return links


def test_search_finds_a_lesson(browser, server):
    word = "vmap" if any("vmap" in s for s in LESSON_IDS) else "predict"
    links = search(browser, f"{server}search.html?q={word}")
    assert any("lessons/" in link for link in links), f"search for {word!r} found {links}"


def test_screenshots_for_a_person_to_look_at(browser, server):
    """Not a check: pictures of the home page and a lesson in .screenshots/ (git-ignored)."""
    if not LESSON_IDS:
        pytest.skip("no lesson has an executed notebook yet")
    stem = "07_mlp_from_scratch" if "07_mlp_from_scratch" in LESSON_IDS else LESSON_IDS[0]
    browser.open(server + "index.html")
    browser.screenshot(SCREENSHOTS / "home.png")
    browser.open(server + f"lessons/{stem}.html")
    browser.screenshot(SCREENSHOTS / f"lesson-{stem}.png")
    plot = "document.querySelector('div.cell_output img')"
    if browser.js(f"!!{plot}"):
        browser.js(f"{plot}.scrollIntoView({{block: 'center'}})")
        browser.screenshot(SCREENSHOTS / f"lesson-{stem}-plot.png")
    if ZH_LESSONS:
        browser.open(server + f"zh/lessons/{stem}.html")
        browser.screenshot(SCREENSHOTS / f"zh-lesson-{stem}.png")
        browser.open(server + "zh/index.html")
        browser.screenshot(SCREENSHOTS / "zh-home.png")
    browser.resize(390, 844)
    browser.open(server + f"lessons/{stem}.html")
    browser.screenshot(SCREENSHOTS / f"lesson-{stem}-phone.png")
    browser.resize(WIDTH, HEIGHT)
    assert (SCREENSHOTS / "home.png").stat().st_size > 10_000


# --- both languages -----------------------------------------------------------------------

needs_chinese = pytest.mark.skipif(not ZH_LESSONS, reason="no Chinese notebook in notebooks/zh")


@needs_chinese
def test_every_lesson_has_its_chinese_page(html):
    assert [x.stem for x in ZH_LESSONS] == LESSON_IDS, "every lesson in both languages"
    for stem in LESSON_IDS:
        page = parse(html / "zh" / "lessons" / f"{stem}.html")
        assert re.search(r"在 ?\d+ 核 CPU 上运行约 \d+ s|在 CPU 上运行约 \d+ s", page.body_text)
        assert "含答案的笔记本" in page.body_text and "学生版笔记本" in page.body_text


@needs_chinese
def test_every_page_links_to_the_same_page_in_the_other_language(html):
    problems = []
    for path in pages(html):
        relative = path.relative_to(html)
        chinese = relative.parts[0] == "zh"
        other = html / Path(*relative.parts[1:]) if chinese else html / "zh" / relative
        switches = parse(path).classes.get("lang-switch", [])
        if len(switches) != 1:
            problems.append(f"{relative}: {len(switches)} language switches")
        elif _resolve(path, switches[0]["href"]) != other.resolve():
            problems.append(f"{relative}: the switch leads to {switches[0]['href']}")
    assert not problems, "\n".join(problems)


@needs_chinese
def test_chinese_search_finds_chinese_words(browser, server, html):
    index = (html / "zh" / "searchindex.js").read_text(encoding="utf-8")
    terms = json.loads(index[index.index("(") + 1:index.rindex(")")])["terms"]
    assert {"密钥", "批次", "参数"} <= set(terms), "Chinese words are indexed as words"
    links = search(browser, f"{server}zh/search.html?q=密钥")
    assert any("lessons/" in link for link in links), f"search for 密钥 found {links}"
    browser.screenshot(SCREENSHOTS / "zh-search.png")
