"""The grade command: bad output paths refused before any grading, exports written, shards
merged. (Files that cannot be graded need no kernel, so these run in seconds; the command runs
in this process, as ``python -m nn_from_scratch`` would, but for the last test.)"""
import base64
import csv
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from grading_fixtures import notebook

from nn_from_scratch.__main__ import main

# The grade command's paths, exports, shards and journal do not depend on JAX's version;
# lesson 07's own solution graded as a class (tests/test_grade.py) and every checker's graded
# mode (the checkers' tests) are tested on both of CI's runs.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def grade(capsys):
    def run(*args):
        code = main(["grade", *map(str, args)])
        out, err = capsys.readouterr()
        return SimpleNamespace(returncode=code, stdout=out, stderr=err)
    return run


@pytest.fixture
def ungradable(tmp_path):
    """Two notebooks that are reported without running: a broken file, and no lesson."""
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "carol.ipynb").write_text("{ this is not json")
    (folder / "dave.ipynb").write_text(json.dumps(notebook(lesson=None, imports=False)))
    return folder


@pytest.mark.parametrize("option, value", [
    ("--csv", "/no/such/dir/g.csv"), ("--gradescope", "/no/such/dir/out"),
    ("--feedback", "/no/such/dir/out"), ("--json-file", "/no/such/dir/r.json"),
    ("--classroom", "/no/such/dir/out"), ("--gradescope", "/no/such/dir/results.json")])
def test_a_missing_output_folder_is_one_error_line_before_anything_is_graded(
        grade, ungradable, option, value):
    result = grade(ungradable, option, value)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"error: {option} {value}: the folder /no/such/dir does not exist; create it first or "
        f"choose another path."]
    assert result.stdout == ""


def test_the_readmes_example_works_on_first_copy_paste_its_feedback_folder_is_made(
        grade, ungradable, tmp_path):
    result = grade(ungradable, "--csv", tmp_path / "grades.csv",
                   "--feedback", tmp_path / "feedback", "--gradescope", tmp_path / "gs")
    assert result.returncode == 1, result.stderr  # graded: two notebooks with errors
    assert sorted(p.name for p in (tmp_path / "feedback").iterdir()) == ["carol.md", "dave.md"]
    assert len(list((tmp_path / "gs").iterdir())) == 2 and (tmp_path / "grades.csv").is_file()


def test_an_unwritable_output_folder_is_refused_too(grade, ungradable, tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    result = grade(ungradable, "--feedback", locked)
    if result.returncode == 1:
        pytest.skip("running as root: every folder is writable")
    assert result.returncode == 2 and "is not writable" in result.stderr


def test_one_results_json_for_many_notebooks_is_refused_before_grading(grade, ungradable,
                                                                      tmp_path):
    result = grade(ungradable, "--gradescope", tmp_path / "results.json")
    assert result.returncode == 2
    assert "holds the results of ONE notebook; got 2" in result.stderr


def test_every_export_is_written_and_the_json_is_printed(grade, ungradable, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    result = grade(ungradable, "--json", "--csv", out / "g.csv", "--gradescope", out,
                   "--feedback", out, "--json-file", out / "r.json", "--classroom", out / "gh",
                   "--lesson", "03", "--jobs", "2")
    assert result.returncode == 1, result.stderr
    printed = json.loads(result.stdout)
    assert [n["notebook"].rsplit("/", 1)[1] for n in printed["notebooks"]] == [
        "carol.ipynb", "dave.ipynb"]
    assert json.loads((out / "r.json").read_text()) == printed
    with open(out / "g.csv", newline="") as f:
        assert [row["notebook"].rsplit("/", 1)[1] for row in csv.DictReader(f)] == [
            "carol.ipynb", "dave.ipynb"]
    assert sorted(p.name for p in out.iterdir()) == [
        "carol.json", "carol.md", "dave.json", "dave.md", "g.csv", "gh", "r.json"]
    progress = result.stderr.splitlines()
    assert progress[0].startswith("grading 2 notebooks, 2 at a time, memory cap ")
    # on Python 3.11 the instructor is told the watch's limit (red team, round twenty-seven)
    assert ("grade with Python 3.12 or newer" in result.stderr) == (
        not hasattr(sys, "monitoring"))
    assert progress[-1].startswith("graded 2 notebooks in ")


def test_shards_graded_apart_merge_into_the_whole_class(grade, ungradable, tmp_path):
    for k in (1, 2):
        assert grade(ungradable, "--shard", f"{k}/2", "--json-file",
                     tmp_path / f"{k}.json").returncode == 1
    whole = grade(ungradable, "--json")
    merged = grade(tmp_path / "1.json", tmp_path / "2.json", "--merge", "--json", "--csv",
                   tmp_path / "all.csv")
    assert merged.returncode == 1
    assert json.loads(merged.stdout) == json.loads(whole.stdout)
    assert (tmp_path / "all.csv").exists()


@pytest.mark.parametrize("args, message", [
    (["/tmp", "--memory", "lots"], "error: --memory: a memory size is"),
    (["/tmp", "--jobs", "0"], "error: --jobs must be 1 or more; got 0.")])
def test_bad_limits_exit_2_with_one_line(grade, args, message):
    result = grade(*args)
    assert result.returncode == 2 and result.stderr.startswith(message), result.stderr


def test_the_command_itself_exits_2_on_bad_usage():
    result = subprocess.run([sys.executable, "-m", "nn_from_scratch", "grade", "/no/such/folder"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert result.stderr.strip() == "error: /no/such/folder: no such file or folder."


def test_gradescopes_run_autograder_writes_results_json_for_the_one_submission(tmp_path):
    autograder = tmp_path / "autograder"
    (autograder / "submission").mkdir(parents=True)
    (autograder / "results").mkdir()
    (autograder / "submission" / "lab.ipynb").write_text("{ not a notebook")
    (autograder / "source").mkdir()
    (autograder / "source" / "lesson").write_text("03\n")  # the assignment's setup
    script = ROOT / "tools" / "gradescope" / "run_autograder"
    result = subprocess.run(["bash", str(script)], capture_output=True, text=True, timeout=120,
                            env={**os.environ, "AUTOGRADER": str(autograder),
                                 "PYTHON": sys.executable})
    assert result.returncode == 0, result.stderr
    results = json.loads((autograder / "results" / "results.json").read_text())
    assert results["score"] == 0 and results["tests"][0]["status"] == "failed"
    assert "not a readable notebook" in results["tests"][0]["output"]


QUICK = "03_autodiff_from_scratch"  # the quickest lesson to run


@pytest.fixture
def quick_class(tmp_path):
    """Two untouched student editions of the quickest lesson: they run, in seconds."""
    folder = tmp_path / "quick"
    folder.mkdir()
    for name in ("alice", "bob"):
        named(name, folder)
    return folder


def named(name, folder):
    """The student edition of the quickest lesson with the student's name in a cell of its own."""
    nb = json.loads((ROOT / "student" / f"{QUICK}.ipynb").read_text())
    nb["cells"].insert(0, {"cell_type": "markdown", "id": f"name-{name}", "metadata": {},
                           "source": f"Handed in by {name}"})
    (folder / f"{name}.ipynb").write_text(json.dumps(nb))


def journal_of(result):
    """The journal's path, as the first line of the grader's progress names it."""
    return Path(re.search(r"journal (\S+\.jsonl)", result.stderr).group(1))


def test_resume_keeps_what_the_journal_holds_and_grades_only_the_rest(grade, quick_class):
    first = grade(quick_class, "--json", "--jobs", "2")
    assert first.returncode == 1 and first.stderr.splitlines()[-1].startswith("graded 2 ")
    journal = journal_of(first)
    assert len(journal.read_text().splitlines()) == 2  # each written as it finished
    named("carol", quick_class)
    lines = journal.read_text().splitlines()  # someone edits bob's row: it no longer counts
    bob = next(i for i, line in enumerate(lines) if "bob.ipynb" in line)
    lines[bob] = lines[bob].replace('"points": 0.0', '"points": 1.0')
    journal.write_text("\n".join(lines) + "\n")
    resumed = grade(quick_class, "--json", "--resume")
    assert resumed.stderr.splitlines()[-1].endswith("; 1 from the journal)"), resumed.stderr
    assert "graded 3 notebooks" in resumed.stderr.splitlines()[-1]
    rows = {Path(n["notebook"]).stem: n["rows"] for n in json.loads(resumed.stdout)["notebooks"]}
    assert rows["alice"] == json.loads(first.stdout)["notebooks"][0]["rows"]
    assert "[1/3]" in resumed.stderr and "alice.ipynb: 0 of 5 passed, 0/5 points (from the " \
        "journal)" in resumed.stderr
    assert {r["status"] for name in rows for r in rows[name]} == {"not done"}
    assert len(journal.read_text().splitlines()) == 4  # bob and carol added
    again = grade(quick_class, "--json")  # without --resume: the journal starts afresh
    assert "from the journal" not in again.stderr
    assert len(journal.read_text().splitlines()) == 3


def test_without_the_sandbox_every_export_says_so(grade, quick_class, tmp_path):
    (quick_class / "bob.ipynb").unlink()
    out = tmp_path / "out"
    out.mkdir()
    result = grade(quick_class, "--no-sandbox", "--csv", out / "g.csv", "--feedback", out,
                   "--gradescope", out)
    assert result.returncode == 1 and "WITHOUT a sandbox" in result.stderr
    for path in (out / "g.csv", out / "alice.md", out / "alice.json"):
        assert "graded without the sandbox (--no-sandbox)" in path.read_text(), path
    assert "graded without the sandbox" in result.stdout


def test_an_export_that_cannot_be_written_at_the_end_stops_none_of_the_others(
        grade, ungradable, tmp_path):
    out = tmp_path / "out"
    (out / "g.csv").mkdir(parents=True)  # made a folder while the class was graded
    result = grade(ungradable, "--csv", out / "g.csv", "--feedback", out,
                   "--json-file", out / "r.json")
    assert result.returncode == 2
    assert "error: --csv could not be written" in result.stderr and "--resume" in result.stderr
    assert (out / "carol.md").is_file() and (out / "r.json").is_file()
    assert [p.name for p in out.iterdir() if p.name.startswith(".")] == []  # no half-written


def test_merge_takes_only_results_this_grader_signed(grade, ungradable, tmp_path):
    assert grade(ungradable, "--json-file", tmp_path / "part.json").returncode == 1
    data = json.loads((tmp_path / "part.json").read_text())
    data["notebooks"][0]["rows"][0]["points"] = 1.0
    (tmp_path / "forged.json").write_text(json.dumps(data))
    del data["signature"]
    (tmp_path / "unsigned.json").write_text(json.dumps(data))
    for name in ("forged.json", "unsigned.json"):
        result = grade(tmp_path / name, "--merge")
        assert result.returncode == 2, result.stderr
        assert "not signed with this grader's key" in result.stderr


def test_where_the_sandbox_cannot_start_grade_says_so_before_any_work(grade, quick_class,
                                                                     monkeypatch):
    from nn_from_scratch import sandbox

    def unavailable():
        raise sandbox.Unavailable("the grader's sandbox needs Linux (bubblewrap); this is "
                                  "Darwin. ... or pass --no-sandbox")

    monkeypatch.setattr(sandbox, "bwrap", unavailable)
    result = grade(quick_class, "--csv", quick_class / "g.csv")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.splitlines()[-1].startswith("error: the grader's sandbox needs Linux")
    assert not (quick_class / "g.csv").exists()


# Issue 35, section 3: the assignment's lesson is pinned; nothing else in a submission scores
def test_a_notebook_of_another_lesson_scores_nothing_for_a_pinned_assignment(grade, tmp_path):
    folder = tmp_path / "sub"
    folder.mkdir()
    (folder / "solved_07.ipynb").write_text(json.dumps(notebook()))  # lesson 07, for 03
    result = grade(folder, "--lesson", "03", "--json", "--classroom", tmp_path / "gh")
    assert result.returncode == 1, result.stderr
    (graded,) = json.loads(result.stdout)["notebooks"]
    assert [(r["status"], r["points"]) for r in graded["rows"]] == [("error", 0.0)]
    assert graded["rows"][0]["message"] == (
        "not graded: this is a notebook of 07_mlp_from_scratch, and this assignment is "
        "03_autodiff_from_scratch; hand in the notebook of 03_autodiff_from_scratch")
    assert "kernel" not in graded["seconds"], "refused before a kernel started"


@pytest.mark.parametrize("args, message", [
    (["--classroom", "OUT"], "error: --classroom grades one student's repository for one "
                             "assignment; expected its lesson, got none. Add --lesson"),
    (["--lesson", "99"], "error: --lesson 99: expected one lesson of this course, by number "
                         "(03) or id; got '99', which names none. The lessons: 00_jax_is_numpy")])
def test_a_missing_or_unknown_lesson_is_one_line_before_grading(grade, ungradable, tmp_path,
                                                                 args, message):
    result = grade(ungradable, *[str(tmp_path / "o") if a == "OUT" else a for a in args])
    assert result.returncode == 2 and result.stderr.startswith(message), result.stderr
    assert result.stdout == ""


def test_two_notebooks_whose_names_print_alike_are_refused_before_grading(grade, tmp_path):
    """Red team, round twelve: a file named ``mallory\\xff.ipynb`` (a backslash, an x, two
    f's) beside one whose name holds the byte 0xFF, which every export prints that way: the
    CSV showed two rows under one name, and one feedback file was written for both."""
    klass = tmp_path / "class"
    klass.mkdir()
    (klass / "mallory\\xff.ipynb").write_text("{ not json")
    (Path(os.fsdecode(os.fsencode(klass) + b"/mallory\xff.ipynb"))).write_text("{ not json")
    for extra in ([], ["--feedback", str(tmp_path / "out")]):
        result = grade(klass, *extra)
        assert result.returncode == 2 and "two notebooks print as" in result.stderr, \
            result.stderr
        assert "mallory\\xff.ipynb" in result.stderr and result.stdout == ""


def test_two_notebooks_whose_names_look_alike_are_refused_before_grading(grade, tmp_path):
    """Red team, round fourteen: ``аlice.ipynb`` (a Cyrillic а) beside alice's own was graded:
    two rows reading "alice" in the CSV, the feedback, Gradescope's and the report, one 0/5
    and one 5/5. A full-width ａ too; a name in another alphabet that looks like no other is
    graded."""
    # ...and the red team's second look: an invisible combining grapheme joiner, a variation
    # selector, a Cyrillic е with an accent beside an é
    for real, twin in (("alice", "\u0430lice"), ("alice", "\uff41lice"), ("alice", "al\u034fice"),
                       ("carol", "car\ufe0fol"), ("jos\u00e9", "jos\u0435\u0301"),
                       # round fifteen: ASCII's own look-alikes (a capital i, a zero, r and n)
                       ("alice", "aIice"), ("BOB", "B0B"), ("mary", "rnary"),
                       ("claire", "cIaire"), ("Wang", "VVang")):  # (and its second look)
        klass = tmp_path / twin
        klass.mkdir()
        (klass / f"{real}.ipynb").write_text("{ not json")
        (klass / f"{twin}.ipynb").write_text("{ not json")
        result = grade(klass)
        assert result.returncode == 2 and "names look alike" in result.stderr, result.stderr
        assert ascii(twin)[1:-1] in result.stderr, result.stderr
    klass = tmp_path / "han"
    klass.mkdir()
    for name in ("alice.ipynb", "\u5f20\u4e09.ipynb", "\u0418\u0432\u0430\u043d.ipynb",
                 "Alice2.ipynb", "bob.ipynb", "clara.ipynb", "dara.ipynb"):
        (klass / name).write_text("{ not json")
    result = grade(klass)
    assert "look alike" not in result.stderr and result.stdout.count("error") >= 7, result


def test_two_notebooks_that_would_share_a_feedback_file_are_refused_before_grading(
        grade, tmp_path):
    for student in ("Alice", "alice"):
        (tmp_path / student).mkdir()
        (tmp_path / student / "lesson03.ipynb").write_text("{ not json")
    result = grade(tmp_path / "Alice" / "lesson03.ipynb", tmp_path / "alice" / "lesson03.ipynb",
                   "--feedback", tmp_path)
    assert result.returncode == 2 and "would write one export file (alice/lesson03)" in \
        result.stderr and "grading" not in result.stderr, result.stderr


def test_alice_and_bob_each_get_their_own_feedback_from_one_run(grade, tmp_path):
    for student in ("alice", "bob"):
        (tmp_path / "class" / student).mkdir(parents=True)
        (tmp_path / "class" / student / "lesson03.ipynb").write_text(f"{{ {student}'s")
    out = tmp_path / "out"
    out.mkdir()
    grade(*(tmp_path / "class").glob("*/lesson03.ipynb"), "--feedback", out, "--gradescope", out)
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*.*")) == [
        "alice/lesson03.json", "alice/lesson03.md", "bob/lesson03.json", "bob/lesson03.md"]


def test_a_solved_notebook_of_another_lesson_scores_nothing_beside_an_honest_one(grade, tmp_path):
    """Issue 35's attack: lesson 07's solved notebook handed in for the lesson 03 assignment
    scored; now it is refused before it runs, and the honest solution keeps its 5/5."""
    folder = tmp_path / "class"
    folder.mkdir()
    shutil.copy(ROOT / "notebooks" / f"{QUICK}.ipynb", folder / "honest.ipynb")
    shutil.copy(ROOT / "notebooks" / "07_mlp_from_scratch.ipynb", folder / "mallory.ipynb")
    result = grade(folder, "--lesson", "03", "--json", "--jobs", "1")
    rows = {Path(n["notebook"]).stem: n for n in json.loads(result.stdout)["notebooks"]}
    assert sum(r["points"] for r in rows["honest"]["rows"]) == 5, rows["honest"]
    assert [r["points"] for r in rows["mallory"]["rows"]] == [0.0]
    assert rows["mallory"]["rows"][0]["message"].startswith(
        "not graded: this is a notebook of 07_mlp_from_scratch")
    copy = tmp_path / "repo"  # one student's repository with a second copy: neither counts
    copy.mkdir()
    for name in ("lesson03.ipynb", "lesson03-copy.ipynb"):
        shutil.copy(ROOT / "notebooks" / f"{QUICK}.ipynb", copy / name)
    result = grade(copy, "--lesson", "03", "--classroom", tmp_path / "gh", "--json")
    graded = json.loads(result.stdout)["notebooks"]
    assert [sum(r["points"] for r in g["rows"]) for g in graded] == [0, 0]
    assert all("holds 2 notebooks of 03_autodiff_from_scratch" in g["rows"][0]["message"]
               for g in graded)
    reported = json.loads(base64.b64decode(
        (tmp_path / "gh").read_text().strip().removeprefix("result=")))
    assert sum(t["score"] for t in reported["tests"]) == 0


def test_an_answer_over_the_message_cap_fails_its_check_and_grading_goes_on(tmp_path, grade):
    """An answer of 48 MB (03.1's local_grads as two arrays of 3 million) ended the requests'
    connection to the kernel for good: every later request then waited for ever, past every
    deadline (lesson 00's own solution did it with 16 MB of timed operands). Now that check
    fails, saying why, and the notebook's other checks run."""
    nb = json.loads((ROOT / "notebooks" / f"{QUICK}.ipynb").read_text())
    cell = next(c for c in nb["cells"] if "def mul(a, b):" in "".join(c["source"]))
    cell["source"] = "".join(cell["source"]).replace(
        "local_grads = (b.data, a.data)",
        "import numpy as np\n    local_grads = (np.full(3_000_000, b.data), "
        "np.full(3_000_000, a.data))")
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "big.ipynb").write_text(json.dumps(nb))
    result = grade(folder, "--lesson", "03", "--json", "--timeout", "120")
    (graded,) = json.loads(result.stdout)["notebooks"]
    rows = {r["exercise"]: r for r in graded["rows"]}
    assert rows["03.1"]["status"] == "failed" and "over 16 MB" in rows["03.1"]["message"], rows
    assert [rows[e]["status"] for e in ("03.2", "03.3", "03.4", "03.5")] == ["passed"] * 4, rows
