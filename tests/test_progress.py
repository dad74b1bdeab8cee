"""``python -m nn_from_scratch progress``: a student's own notebooks graded by the grader (in
its sandbox), every lesson shown in the terminal and as one page, in the student's language;
a notebook graded once is not graded again until it changes. (The command runs in this
process, as ``python -m nn_from_scratch`` would; lesson 03, the quickest, is the one graded.)"""
import json
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from nn_from_scratch.__main__ import main
from nn_from_scratch.exercises import all_lessons

ROOT = Path(__file__).resolve().parent.parent
QUICK = "03_autodiff_from_scratch"
ANSWERS = {  # exercise cell id -> (the stub's line, what the student wrote there)
    "03-ex1": ("local_grads = ...", "local_grads = (b.data, a.data)"),  # right
    "03-ex2": ("local_grads = ...", "local_grads = (t,)"),  # wrong: d tanh/da is 1 - t**2
    "03-ex3": ("raise NotImplementedError",
               "raise ValueError('<script>alert(1)</script> is what I wrote')"),
}


@pytest.fixture
def progress(capsys, monkeypatch, tmp_path):
    """The command, with the grader's state (its journal: the cache) in a folder of the test."""
    monkeypatch.setenv("NN_FROM_SCRATCH_STATE", str(tmp_path / "state"))
    monkeypatch.setenv("NN_FROM_SCRATCH_LANG", "en")  # the command sets it for its kernels

    def run(*args):
        code = main(["progress", *map(str, args)])
        out, err = capsys.readouterr()
        return SimpleNamespace(returncode=code, stdout=out, stderr=err)
    return run


def worked_on(folder: Path, edition: str = "student") -> Path:
    """The student edition of lesson 03 with exercise 1 right, 2 wrong, 3 raising, 4-5 left."""
    nb = json.loads((ROOT / edition / f"{QUICK}.ipynb").read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        if cell.get("id") in ANSWERS:
            stub, answer = ANSWERS[cell["id"]]
            source = "".join(cell["source"])
            assert stub in source, f"{QUICK}'s {cell['id']} changed: {source}"
            cell["source"] = source.replace(stub, answer)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{QUICK}.ipynb"
    path.write_text(json.dumps(nb, ensure_ascii=False), encoding="utf-8")
    return path


def test_every_lesson_and_exercise_with_its_state_then_only_changes_graded(progress, tmp_path):
    folder = tmp_path / "student"
    notebook = worked_on(folder)
    first = progress(folder)
    assert first.returncode == 1, first.stderr  # not everything passed
    lines = first.stdout.splitlines()
    assert "03 · Autodiff from scratch (03_autodiff_from_scratch.ipynb): 1 of 5 passed" in lines
    assert "    ✓ 03.1 mul: passed" in lines
    wrong = next(line for line in lines if line.startswith("    ✗ 03.2 tanh: failed — "))
    assert "1 - t" in wrong or "t**2" in wrong or "t²" in wrong, wrong  # the checker's hint
    assert any(line.startswith("    ✗ 03.3 ") and "<script>alert(1)</script>" in line
               for line in lines)
    assert any(line.startswith("    … 03.5 ") and "not done" in line for line in lines)
    started = [line for line in lines if line.startswith("○ ")]
    assert len(started) == len(all_lessons()) - 1 and all(
        line.endswith(": not started") for line in started)
    assert "notebooks to grade: 1" in first.stderr

    page = (folder / "progress.html").read_text(encoding="utf-8")
    statuses = re.findall(r'data-status="([^"]+)"', page)
    assert statuses.count("not started") == len(all_lessons()) - 1
    assert statuses.count("passed") == 1 and statuses.count("failed") == 2
    assert statuses.count("not done") == 2
    assert "<script" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "http" not in page.replace("http-equiv", ""), "the page loads nothing"

    second = progress(folder)  # nothing changed: nothing graded, the same answer
    assert "notebooks to grade: 0" in second.stderr and ": 1" in second.stderr
    assert second.stdout.splitlines()[:-2] == first.stdout.splitlines()[:-2]

    nb = json.loads(notebook.read_text(encoding="utf-8"))  # exercise 2 put right
    for cell in nb["cells"]:
        if cell.get("id") == "03-ex2":
            cell["source"] = "".join(cell["source"]).replace("(t,)", "(1 - t ** 2,)")
    notebook.write_text(json.dumps(nb), encoding="utf-8")
    third = progress(folder)
    assert "notebooks to grade: 1" in third.stderr
    assert "    ✓ 03.2 tanh: passed" in third.stdout.splitlines()


def test_the_chinese_edition_answers_in_chinese_and_without_the_sandbox_says_so(progress,
                                                                                tmp_path):
    folder = tmp_path / "student" / "zh"
    worked_on(folder, "student/zh")
    result = progress(folder, "--html", tmp_path / "me.html", "--no-sandbox")
    assert result.returncode == 1, result.stderr
    assert "不在沙箱中运行（--no-sandbox）" in result.stderr, "it says so, in Chinese"
    lines = result.stdout.splitlines()
    assert "    ✓ 03.1 mul：通过" in lines or "    ✓ 03.1 mul: 通过" in lines, lines
    assert any(line.startswith("    ✗ 03.2 ") and "未通过" in line for line in lines), lines
    assert any(line.startswith("○ 07 · ") and "尚未开始" in line for line in lines), lines
    page = (tmp_path / "me.html").read_text(encoding="utf-8")
    assert '<html lang="zh-CN">' in page and "你的进度" in page


@pytest.mark.parametrize("make, expected", [
    (lambda folder: None, "no notebook of this course in"),
    (lambda folder: (folder / "mine.ipynb").write_text(json.dumps(
        {"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})),
     "not a notebook of this course"),
    (lambda folder: (folder / "broken.ipynb").write_text("{ not json"),
     "not a readable notebook"),
])
def test_no_notebooks_or_another_courses_are_one_clear_line(progress, tmp_path, make, expected):
    folder = tmp_path / "somewhere"
    folder.mkdir()
    make(folder)
    result = progress(folder)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.startswith("error: ") and expected in result.stderr, result.stderr
    assert "progress student" in result.stderr, "it says what to give instead"


def test_a_missing_folder_and_a_page_that_is_not_html_are_refused(progress, tmp_path):
    result = progress(tmp_path / "nowhere")
    assert result.returncode == 2 and "no such folder" in result.stderr
    worked_on(tmp_path / "student")
    result = progress(tmp_path / "student", "--html", tmp_path / "me.txt")
    assert result.returncode == 2 and "FILE.html" in result.stderr


def test_where_the_sandbox_cannot_start_progress_says_so(progress, tmp_path, monkeypatch):
    from nn_from_scratch import sandbox

    def unavailable():
        raise sandbox.Unavailable("the grader's sandbox needs Linux (bubblewrap) ... or pass "
                                  "--no-sandbox")

    monkeypatch.setattr(sandbox, "bwrap", unavailable)
    worked_on(tmp_path / "student")
    result = progress(tmp_path / "student")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.splitlines()[-1].startswith("error: the grader's sandbox needs Linux")


def test_the_page_in_a_browser_loads_nothing_runs_nothing_and_reads_in_aa_contrast(browser,
                                                                                  tmp_path):
    from test_exercises_display import contrast

    from nn_from_scratch.progress import Lesson, Progress
    from nn_from_scratch.progress_page import write_progress

    exercises = (("03.1", "mul", "passed", "matches jax.grad"),
                 ("03.2", "tanh", "failed", "use `1 - t ** 2` <img src=x onerror=alert(1)>"),
                 ("03.3", "topological order", "not done", "not done yet"),
                 ("03.4", "backward", "timed out", "the exercise cell ran past its limit"))
    lessons = (Lesson("03_autodiff_from_scratch", "03 · Autodiff from scratch",
                      "03_autodiff_from_scratch.ipynb", exercises),
               Lesson("14_attention_from_scratch", "14 · Attention from scratch", "",
                      (("14.1", "attention", "not started", ""),)))
    page = tmp_path / "progress.html"
    write_progress(Progress("student", lessons, 1, 0), page)
    errors = browser.open(page.as_uri())
    assert errors == [] and browser.requests() == [page.as_uri()]
    boxes = browser.js("""[...document.querySelectorAll('.nn-check')].map(b => {
        const rgb = c => '#' + c.match(/\\d+/g).slice(0, 3).map(
            n => (+n).toString(16).padStart(2, '0')).join('');
        const mark = b.querySelector('strong');
        return {status: b.dataset.status, text: b.textContent,
                background: rgb(getComputedStyle(b).backgroundColor),
                colour: rgb(getComputedStyle(b).color),
                mark: rgb(getComputedStyle(mark).color),
                code: [...b.querySelectorAll('code')].map(c => c.textContent)}; })""")
    assert [b["status"] for b in boxes] == ["passed", "failed", "not done", "failed"]
    for box in boxes:
        assert contrast(box["mark"], box["background"]) >= 4.5, box
        assert contrast(box["colour"], box["background"]) >= 4.5, box
    assert boxes[1]["code"] == ["1 - t ** 2"] and "<img src=x" in boxes[1]["text"]
    assert boxes[3]["text"].startswith("✗ failed 03.4 backward: timed out: ")
    assert browser.js("document.querySelectorAll('img, script').length") == 0
    assert "14 · Attention from scratch: not started" in browser.js("document.body.innerText")
