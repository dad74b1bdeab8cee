"""The class report (grade --report): what the class got wrong, lesson by lesson.

The class is made up but its hints are real: each notebook's answers are the solutions, the
stubs and the wrong answers of lesson 07's checker tests, checked by the real checkers (in
English or Chinese), so the report groups the hints students would get.
"""
import functools
import json
import re
from pathlib import Path

import jax
import jax.numpy as jnp
import pytest
from conftest import own, stub
from jax.scipy.special import logsumexp

from nn_from_scratch import i18n, model, params
from nn_from_scratch.__main__ import main
from nn_from_scratch.exercises import lesson_exercises
from nn_from_scratch.exercises import mlp_from_scratch as check
from nn_from_scratch.grade.exports import REPORT_SUFFIXES, write_report
from nn_from_scratch.grade.notebook import failed
from nn_from_scratch.grade.report import mistake_of, short_names, summarize
from nn_from_scratch.grade.report_markdown import report_markdown
from nn_from_scratch.grade.report_page import COLOURS, report_html
from nn_from_scratch.grade.report_words import NAMES, SYMBOLS
from nn_from_scratch.grade.results import STATUSES, Graded, Row, to_json

LESSON = "07_mlp_from_scratch"


def _logits(p, image):
    a = image
    for w, b in p[:-1]:
        a = model.relu(w @ a + b)
    w, b = p[-1]
    return w @ a + b


def _hidden_std(p, image):
    a = image
    for w, b in p[:-1]:
        a = model.relu(w @ a + b)
    return jnp.std(a)


def _count(sizes):
    return sum(m * n + n for m, n in zip(sizes[:-1], sizes[1:]))


ANSWERS = {  # exercise name -> {answer: function}; "right" is a solution, "stub" the handout's
    "relu": {"right": own(model.relu), "abs": jnp.abs},
    "random_layer_params": {"right": own(params.random_layer_params)},
    "init_network_params": {"right": own(params.init_network_params)},
    "predict": {"right": own(model.predict),
                "softmax": lambda p, x: jnp.exp(_logits(p, x) - logsumexp(_logits(p, x))),
                "logits": _logits},
    "batched_predict": {"right": jax.vmap(model.predict, in_axes=(None, 0))},
    "parameter_count": {"right": _count,
                        "weights only": lambda s: sum(m * n for m, n in zip(s[:-1], s[1:]))},
    "last_hidden_std": {"right": _hidden_std},
}
# Who answered what (anyone not named: "right"); 8 solutions, 4 stubs, 28 with mistakes
CLASS = {
    **{f"solution{i:02}": {} for i in range(8)},
    **{f"stub{i:02}": {name: "stub" for name in ANSWERS} for i in range(4)},
    **{f"student{i:02}": {"predict": "softmax" if i < 14 else "logits" if i < 18 else "right",
                          "parameter_count": "weights only" if i < 10 else "right",
                          "relu": "abs" if 20 <= i < 26 else "right",
                          "last_hidden_std": "stub" if i >= 23 else "right"}
       for i in range(28)}}


@functools.cache
def _result(name: str, answer: str, lang: str):
    function = stub if answer == "stub" else ANSWERS[name][answer]
    return getattr(check, name)(function)


def made_up_class(lang: str = "en") -> list[Graded]:
    """Forty lesson 07 notebooks, graded by the real checkers in ``lang``, and a file that
    could not be graded."""
    i18n.set_language(lang)
    graded = []
    for notebook, answers in CLASS.items():
        rows = []
        for exercise in lesson_exercises(LESSON):
            result = _result(exercise.name, answers.get(exercise.name, "right"), lang)
            rows.append(Row(exercise.id, exercise.title, result.status, result.message,
                            1.0 if result.passed else 0.0))
        notes = ("restored check cell 4 (it was edited)",) if notebook == "student03" else ()
        graded.append(Graded(f"class/{notebook}.ipynb", LESSON, tuple(rows), notes))
    return graded + [failed("class/empty.ipynb", "not a notebook (empty file)")]


def exercise_named(lesson, title):
    return next(e for e in lesson.exercises if e.title == title)


def test_every_status_has_a_name_a_symbol_and_a_colour():
    assert set(NAMES) == set(SYMBOLS) == set(COLOURS) == set(STATUSES)


def test_hints_that_differ_only_in_their_numbers_are_one_mistake():
    a = "returned 669706 for sizes [3, 7, 2]; expected 53 (m * n weights plus n biases)"
    b = "returned 1,280 for sizes [4, 5, 6]; expected 25 (m * n weights plus n biases)"
    assert mistake_of(a) == mistake_of(b) == \
        "returned # for sizes [#, #, #]; expected # (m * n weights plus n biases)"
    assert mistake_of("std 1e-05, not 0.25") == mistake_of("std -3.5E+02, not .5")
    assert mistake_of("use jnp.maximum(0, x)") != mistake_of("use jnp.minimum(0, x)")
    assert mistake_of("layer2 of W1") == "layer2 of W1", "numbers inside names stay"


def test_notebooks_of_the_same_name_in_folders_of_their_own_are_told_apart():
    rows = (Row("07.1", "relu", "failed", "relu must be 0 where x < 0"),)
    graded = [Graded(f"/home/ta/class/{who}/lesson07.ipynb", LESSON, rows)
              for who in ("bob", "alice")]
    lesson, = summarize(graded)
    assert lesson.exercises[0].groups[0].notebooks == ["alice/lesson07.ipynb",
                                                       "bob/lesson07.ipynb"]
    assert short_names(graded[:1]) == {graded[0].notebook: "lesson07.ipynb"}


def test_the_made_up_class_counts_groups_and_order():
    lesson, = summarize(made_up_class())
    assert lesson.lesson == LESSON and len(lesson.scores) == 40
    assert [name for name, *_ in lesson.scores[:8]] == [f"solution{i:02}.ipynb" for i in range(8)]
    assert lesson.scores[-1] == ("stub03.ipynb", 0.0, 7.0), "best first, stubs last"
    points = [p for _n, p, _m in lesson.scores]
    assert points == sorted(points, reverse=True)
    rates = {e.title: e.pass_rate for e in lesson.exercises}
    assert rates == {"predict": 18 / 40, "parameter count": 26 / 40, "why He init": 31 / 40,
                     "relu": 30 / 40, "random_layer_params": 36 / 40,
                     "init_network_params": 36 / 40, "batched_predict": 36 / 40}
    assert [e.title for e in lesson.exercises][:4] == ["predict", "parameter count", "relu",
                                                        "why He init"], "hardest first"
    assert [e.title for e in lesson.revisit] == ["predict", "parameter count"]

    predict = exercise_named(lesson, "predict")
    assert predict.counts == {"passed": 18, "failed": 18, "not done": 4}
    softmax, logits = predict.groups
    assert "LOG-probabilities" in softmax.example and len(softmax.notebooks) == 14
    assert "logsumexp" in logits.example and len(logits.notebooks) == 4
    assert logits.notebooks == [f"student{i}.ipynb" for i in range(14, 18)]
    assert predict.not_done == [f"stub{i:02}.ipynb" for i in range(4)], "not done apart"
    assert exercise_named(lesson, "why He init").groups == [], "a stub is not a mistake"
    assert len(exercise_named(lesson, "why He init").not_done) == 4 + 5
    assert lesson.notes == [("restored check cell # (it was edited)", 1)]
    solution = dict(lesson.grid)["solution00.ipynb"]
    assert set(solution.values()) == {"passed"} and len(solution) == 7
    assert dict(lesson.grid)["student00.ipynb"]["07.4"] == "failed"


def test_the_page_says_first_which_two_exercises_to_revisit_and_why():
    page = report_html(made_up_class())
    revisit = page.split('class="revisit"')[1].split("</div>")[0]
    assert re.findall(r"<b>(07\.\d) ", revisit) == ["07.4", "07.6"]
    assert "(14 of 40)" in revisit and "LOG-probabilities" in revisit
    assert page.index('class="revisit"') < page.index("<svg"), "before the charts"
    assert page.count("<svg") == 2, "a histogram and the pass rates"
    assert "student13.ipynb" in page and "14 (35%)" in page, "who made it, how many"
    ungraded = page.split('class="ungraded"')[1].split("</div>")[0]
    assert "1 could not be graded" in ungraded and "empty.ipynb</b>: not a notebook" in ungraded


def test_the_page_loads_nothing_and_is_all_one_file():
    page = report_html(made_up_class())
    assert not re.search(r"""(src|href)=["']?(https?:|//)""", page)
    assert "<script" not in page and "<link" not in page and "@import" not in page


def test_chinese_report_has_chinese_words_and_the_same_counts():
    english, chinese = summarize(made_up_class("en")), summarize(made_up_class("zh_CN"))
    assert [(e.exercise, dict(e.counts), [len(g.notebooks) for g in e.groups])
            for e in english[0].exercises] == \
        [(e.exercise, dict(e.counts), [len(g.notebooks) for g in e.groups])
         for e in chinese[0].exercises]
    page, text = report_html(made_up_class("zh_CN")), report_markdown(made_up_class("zh_CN"))
    for words in ("全班", "先复习", "通过"):
        assert words in page and words in text, words
    assert 'lang="zh-CN"' in page
    assert "What the class got wrong" not in page and "Revisit first" not in page
    predict = exercise_named(chinese[0], "predict")
    assert "LOG-probabilities" not in predict.groups[0].example and re.search(
        r"[\u4e00-\u9fff]", predict.groups[0].example), "the hints themselves in Chinese"


def test_the_markdown_has_the_same_content_in_tables():
    text = report_markdown(made_up_class())
    assert text.startswith("# What the class got wrong")
    revisit = text.split("**Revisit first**")[1].split("|")[0].replace("\\", "")
    assert re.findall(r"^\d\. (07\.\d) ", revisit, re.M) == ["07.4", "07.6"]
    assert "| 07.4 predict | 45% | 4 not done |" in text
    assert "- 14 (35%) failed: " in text and "student13.ipynb" in text
    assert re.search(r"^\| solution00\.ipynb \| ✓ \| ✓ \| ✓ \| ✓ \| ✓ \| ✓ \| ✓ \| 7/7 \|$",
                     text, re.M)
    assert "- 1 × restored check cell # (it was edited)" in text
    assert "- empty.ipynb: not a notebook (empty file)" in text


HOSTILE = "<img src=x onerror=\"document.title='owned'\">.ipynb"  # a file may be named so
SCRIPT = "<script>document.title='owned'</script>"


def hostile_class() -> list[Graded]:
    row = Row("08.1", "loss", "failed", f"{SCRIPT} | returned {SCRIPT}")
    return [Graded(f"class/{HOSTILE}", "08_training", (row,), (f"<b>{SCRIPT}</b>",)),
            failed(f"class/{HOSTILE}", SCRIPT)]


def test_names_hints_and_notes_are_escaped():
    page = report_html(hostile_class())
    assert "<script" not in page and "<img" not in page
    assert "&lt;b&gt;&lt;script&gt;" in page, "a note's markup is shown, not applied"
    assert "&lt;img src=x onerror=&quot;document.title=&#x27;owned&#x27;&quot;&gt;.ipynb" in page
    assert page.count("&lt;script&gt;document.title=") == 2 + 2 + 1 + 1, "hint, revisit, note, why"
    text = report_markdown(hostile_class())
    assert "<script" not in text and "<img" not in text and r"\|" in text


def test_a_report_of_nothing_says_so():
    assert "nothing graded" in report_html([]) and "nothing graded" in report_markdown([])


def test_write_report_picks_the_form_from_the_name(tmp_path):
    graded = made_up_class()
    write_report(graded, tmp_path / "r.html")
    write_report(graded, tmp_path / "r.md")
    assert (tmp_path / "r.html").read_text(encoding="utf-8").startswith("<!doctype html>")
    assert (tmp_path / "r.md").read_text(encoding="utf-8").startswith("# ")
    assert ".html" in REPORT_SUFFIXES and ".md" in REPORT_SUFFIXES


# --- from the command line ----------------------------------------------------------------

def test_grade_merge_writes_the_report_in_the_instructors_language(tmp_path, capsys,
                                                                    monkeypatch):
    monkeypatch.setenv(i18n.ENV, "en")  # the command sets it: put it back afterwards
    results = tmp_path / "results.json"
    results.write_text(to_json(made_up_class()) + "\n", encoding="utf-8")
    monkeypatch.setattr(i18n, "_chosen", [])  # as in the command: no set_language
    assert main(["grade", "--merge", str(results), "--report", str(tmp_path / "r.html"),
                 "--lang", "zh"]) == 1  # not every row passed
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "先复习" in page and "student13.ipynb" in page


def test_a_report_name_that_is_neither_page_nor_markdown_is_refused_before_grading(
        tmp_path, capsys):
    assert main(["grade", str(tmp_path), "--report", str(tmp_path / "r.pdf")]) == 2
    err = capsys.readouterr().err
    assert "--report" in err and "r.pdf" in err and "FILE.html or FILE.md" in err
    assert "grading" not in err, "refused before any grading"


# --- in a browser --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def report_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("report") / "report.html"
    write_report(made_up_class() + hostile_class(), path)
    return path


FIND = """(() => {
    const HOSTILE_TEXT = %s;
    const box = document.querySelector('.revisit').getBoundingClientRect();
    const bars = sel => [...document.querySelectorAll(sel)].map(r => r.getBoundingClientRect())
                                                              .filter(b => b.width * b.height > 0);
    return {revisit_bottom: box.bottom, title: document.title,
            svgs: [...document.querySelectorAll('svg')].map(s => s.getBoundingClientRect().width),
            bars: bars('svg rect.bar').length, grid_rows: document.querySelectorAll(
                'table.grid tr').length, script_text: document.body.innerText.includes(
                HOSTILE_TEXT)};
})()"""


def test_the_report_in_chromium_renders_offline_with_its_charts(browser, report_file):
    url = report_file.as_uri()
    assert not browser.open(url), "no console errors"
    requested = browser.requests()
    assert requested and all(u == url or u.startswith("data:") for u in requested), requested
    found = browser.js(FIND % json.dumps(HOSTILE))
    assert found["title"] == "What the class got wrong", "the hostile <script> never ran"
    assert found["script_text"], "the hostile name shows as text"
    assert found["revisit_bottom"] < 900, "the two to revisit, in the first screen"
    assert len(found["svgs"]) == 4 and all(w > 100 for w in found["svgs"]), "two lessons' charts"
    assert found["grid_rows"] == 1 + 40 + 1 + 1, "every notebook in a grid"


def _pixels(png: bytes, colour: str) -> int:
    import io

    from PIL import Image
    wanted = tuple(int(colour[i:i + 2], 16) for i in (1, 3, 5))
    image = Image.open(io.BytesIO(png)).convert("RGB")
    return sum(count for count, rgb in image.getcolors(image.width * image.height)
               if rgb == wanted)


def test_a_screenshot_shows_the_charts(browser, report_file, tmp_path):
    browser.open(report_file.as_uri())
    browser.js("document.querySelector('.charts').scrollIntoView()")
    shot = tmp_path / "shots" / "report.png"
    browser.screenshot(shot)
    png = shot.read_bytes()
    assert _pixels(png, "#1565c0") > 2_000, "the histogram's bars are drawn"
    assert _pixels(png, COLOURS["passed"]) > 10_000, "the pass-rate bars are drawn"
    screenshots = Path(__file__).resolve().parent.parent / ".screenshots"
    screenshots.mkdir(exist_ok=True)
    (screenshots / "class-report.png").write_bytes(png)  # for a person to look at


# --- the made-up class of tools/made_up_class.py (to try the grader and its report) -----------

def test_a_made_up_class_answers_each_exercise_with_the_solution_a_stub_or_a_mistake(tmp_path):
    import sys

    import nbformat
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
    import made_up_class
    paths = made_up_class.make_class(LESSON, tmp_path / "a", size=12, seed=3)
    again = made_up_class.make_class(LESSON, tmp_path / "b", size=12, seed=3)
    assert [p.read_bytes() for p in paths] == [p.read_bytes() for p in again], "seeded"
    options = made_up_class.answers(LESSON)
    assert len(options) == len(lesson_exercises(LESSON))
    kinds = []
    for path in paths:
        cells = [c for c in nbformat.read(path, as_version=4).cells
                 if "exercise" in c.metadata.get("tags", [])]
        for cell, (solution, handout, mistakes) in zip(cells, options, strict=True):
            kind = {solution: "solution", handout: "stub"}.get(cell.source, "mistake")
            assert kind != "mistake" or cell.source in mistakes
            kinds.append(kind)
    assert {"solution", "stub", "mistake"} == set(kinds)


def test_one_notebook_is_counted_as_one_not_as_notebooks():
    one = made_up_class()[:1]
    for text in (report_html(one), report_markdown(one)):
        assert "1 notebook graded" in text and "1 notebooks" not in text
        assert ": 1 notebook" in text
    many = made_up_class()
    assert f"{len(many)} notebooks graded" in report_markdown(many)
