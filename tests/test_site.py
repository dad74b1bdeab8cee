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
import os
import re
import shutil
import signal
import subprocess
import threading
import time
import urllib.request
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

ROOT = Path(__file__).resolve().parent.parent
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
    # Checker lines are shown from text/plain, never dropped with their custom MIME type.
    for cell in nb["cells"]:
        if "check" in cell.get("metadata", {}).get("tags", []):
            for output in cell.get("outputs", []):
                plain = "".join(output.get("data", {}).get("text/plain", ""))
                line = "".join(output.get("text", "")) or plain
                first = line.strip().splitlines()[0] if line.strip() else ""
                assert first.strip("'\"") in page.body_text, f"checker output {first!r}"


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

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run",
                  "--hide-scrollbars", "--mute-audio", "--remote-debugging-port=0"]
WIDTH, HEIGHT = 1280, 900


def _chromium() -> str | None:
    return next(filter(None, map(shutil.which, ("chromium", "chromium-browser"))), None)


class Browser:
    """Headless Chromium driven over the Chrome DevTools Protocol (no driver, no download)."""

    def __init__(self, executable: str, profile: Path):
        import websocket  # websocket-client

        self.log = open(profile.parent / "chromium.log", "w")
        # Its own process group, so that close() ends every process it starts, and only those.
        self.process = subprocess.Popen(
            [executable, *CHROMIUM_FLAGS, f"--user-data-dir={profile}",
             f"--window-size={WIDTH},{HEIGHT}", "about:blank"],
            stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        port_file, deadline = profile / "DevToolsActivePort", time.monotonic() + 30
        while not (port_file.exists() and port_file.read_text().strip()):
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"Chromium did not start; see {self.log.name}")
            time.sleep(0.1)
        port = port_file.read_text().split()[0]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as r:
            target = next(t for t in json.load(r) if t["type"] == "page")
        self.ws = websocket.create_connection(target["webSocketDebuggerUrl"], timeout=30,
                                              suppress_origin=True)
        self.next_id, self.events = 0, []
        for domain in ("Page", "Runtime", "Log"):
            self.call(f"{domain}.enable")
        self.resize(WIDTH, HEIGHT)

    def call(self, method: str, **params):
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv())
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})
            self.events.append(message)

    def wait_for(self, event: str, timeout: float = 30):
        deadline = time.monotonic() + timeout
        while not any(e.get("method") == event for e in self.events):
            if time.monotonic() > deadline:
                raise TimeoutError(event)
            self.ws.settimeout(max(0.1, deadline - time.monotonic()))
            self.events.append(json.loads(self.ws.recv()))
        self.ws.settimeout(30)

    def open(self, url: str | None = None, click: str | None = None):
        """Load ``url`` (or follow the link ``click`` selects) and wait for its images, fonts
        and MathJax. Returns the console errors."""
        self.events = []
        if url:
            self.call("Page.navigate", url=url)
        else:
            self.call("Runtime.evaluate", expression=f"document.querySelector({click!r}).click()")
        self.wait_for("Page.loadEventFired")
        self.js("""(async () => {
            await Promise.all([...document.images].map(i => {
                i.loading = 'eager'; return i.decode().catch(() => null); }));
            if (window.MathJax && MathJax.startup && MathJax.startup.promise)
                await MathJax.startup.promise;
            await document.fonts.ready;
        })()""")
        return self.errors()

    def errors(self) -> list[str]:
        found = []
        for e in self.events:
            method, params = e.get("method"), e.get("params", {})
            if method == "Runtime.consoleAPICalled" and params["type"] in ("error", "assert"):
                found.append(" ".join(str(a.get("value", a.get("description", "")))
                                      for a in params["args"]))
            elif method == "Runtime.exceptionThrown":
                details = params["exceptionDetails"]
                found.append(details.get("exception", {}).get("description") or details["text"])
            elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
                entry = params["entry"]
                found.append(f"{entry['text']} {entry.get('url', '')}".strip())
        return found

    def js(self, expression: str):
        result = self.call("Runtime.evaluate", expression=expression, awaitPromise=True,
                           returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(result["exceptionDetails"])
        return result["result"].get("value")

    def resize(self, width: int, height: int):
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height,
                  deviceScaleFactor=1, mobile=width < 600)

    def screenshot(self, path: Path):
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(base64.b64decode(self.call("Page.captureScreenshot")["data"]))

    def close(self):
        try:
            self.call("Browser.close")
            self.process.wait(10)
        except Exception:  # it may be gone already: ending it is all that matters now
            pass
        finally:
            self.ws.close()
            for sig in (signal.SIGTERM, signal.SIGKILL):
                try:
                    os.killpg(self.process.pid, sig)  # the group is this browser's alone
                except ProcessLookupError:
                    break
                time.sleep(0.5)
            self.process.wait()
            self.log.close()


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


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    executable = _chromium()
    if executable is None:
        pytest.skip("Chromium is not installed, so the site is not checked in a browser: "
                    "install Debian's chromium (CI does, with .ci/install-chromium)")
    pytest.importorskip("websocket", reason="the browser checks need websocket-client")
    chrome = Browser(executable, tmp_path_factory.mktemp("chromium") / "profile")
    yield chrome
    chrome.close()


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
