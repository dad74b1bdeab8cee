"""Each export checked against its format: the CSV's columns, Gradescope's results.json fields,
GitHub Classroom's result, the feedback files, and JSON that merges slices of a class."""
import base64
import csv
import json
import os
import re
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import pytest

from nn_from_scratch._checks import InputError
from nn_from_scratch.grade import Graded, Row, shard
from nn_from_scratch.grade.exports import export_names, format_table, write_csv, write_feedback
from nn_from_scratch.grade.lms import (
    classroom_result,
    gradescope_results,
    write_classroom,
    write_gradescope,
)
from nn_from_scratch.grade.results import load_json, merge, to_json

ALICE = Graded("class/alice.ipynb", "07_mlp_from_scratch", (
    Row("07.1", "relu", "passed", "max(0, x) on a matrix", 1.0, 1.0),
    Row("07.2", "random_layer_params", "failed", "W and b share a key", 0.0, 2.0,
        "showed ✓ in the submitted notebook; fails when run"),
    Row("07.10", "extra", "not done", "not done yet", 0.0, 1.0)),
    ("check cell of 07.2 was edited; restored",), {"kernel": 1.0, "lesson": 5.0, "checks": 2.0})
CAROL = Graded("class/carol.ipynb", None, (Row(None, "", "error", "not a readable notebook",
                                               0.0, 0.0),))


def test_the_csv_has_a_column_per_exercise_points_a_total_and_the_notes(tmp_path):
    write_csv([ALICE, CAROL], tmp_path / "grades.csv")
    with open(tmp_path / "grades.csv", newline="", encoding="utf-8") as f:
        table = list(csv.DictReader(f))
    assert list(table[0]) == ["notebook", "lesson", "07.1", "07.2", "07.10", "total", "max",
                              "notes"]
    assert {k: table[0][k] for k in ("07.1", "07.2", "07.10", "total", "max")} == {
        "07.1": "1", "07.2": "0", "07.10": "0", "total": "1", "max": "4"}
    assert table[0]["notes"] == ("check cell of 07.2 was edited; restored; 07.2: showed ✓ in "
                                 "the submitted notebook; fails when run")
    assert table[1]["total"] == "0" and table[1]["notes"] == "not a readable notebook"


GRADESCOPE_TEST_FIELDS = {"name": str, "number": str, "score": float, "max_score": float,
                          "status": str, "output": str, "visibility": str}


def test_gradescope_gets_a_results_json_per_notebook_in_its_format(tmp_path):
    write_gradescope([ALICE, CAROL], tmp_path)
    results = json.loads((tmp_path / "alice.json").read_text())
    assert {k: type(results[k]) for k in ("score", "max_score", "execution_time", "output",
                                          "tests")} == {"score": float, "max_score": float,
                                                        "execution_time": float, "output": str,
                                                        "tests": list}
    assert results["score"] == 1 and results["max_score"] == 4
    assert results["visibility"] in ("visible", "hidden", "after_due_date", "after_published")
    for test in results["tests"]:
        assert {k: type(test[k]) for k in GRADESCOPE_TEST_FIELDS} == GRADESCOPE_TEST_FIELDS
        assert test["status"] in ("passed", "failed") and 0 <= test["score"] <= test["max_score"]
    assert [t["status"] for t in results["tests"]] == ["passed", "failed", "failed"]
    assert "W and b share a key" in results["tests"][1]["output"]
    assert "check cell of 07.2 was edited" in results["output"]
    assert (tmp_path / "carol.json").exists()


def test_one_submission_gets_the_results_json_that_run_autograder_writes(tmp_path):
    write_gradescope([ALICE], tmp_path / "results.json")
    assert json.loads((tmp_path / "results.json").read_text())["score"] == 1


def test_github_classroom_gets_base64_json_its_reporter_reads(tmp_path):
    output = tmp_path / "github_output"
    output.write_text("earlier=1\n")
    write_classroom([ALICE], output)
    earlier, line = output.read_text().splitlines()
    assert earlier == "earlier=1" and line.startswith("result=")
    result = json.loads(base64.b64decode(line.removeprefix("result=")))
    assert result == classroom_result([ALICE])
    assert result["version"] == 1 and result["status"] == "fail" and result["max_score"] == 4
    assert [(t["status"], t["score"]) for t in result["tests"]] == [("pass", 1.0), ("fail", 0.0),
                                                                   ("fail", 0.0)]


def test_each_student_gets_feedback_with_status_hint_and_what_to_fix(tmp_path):
    write_feedback([ALICE, CAROL], tmp_path)
    alice = (tmp_path / "alice.md").read_text()
    assert "**1 of 4 points** (1 of 3 exercises passed)" in alice
    assert "| 07.1 relu | ✓ passed | 1/1 | max(0, x) on a matrix |" in alice
    fix = alice.split("## What to fix")[1]
    assert "**07.2 random_layer_params** (failed): W and b share a key" in fix
    assert "07.1 relu" not in fix
    assert "check cell of 07.2 was edited; restored" in alice
    assert "could not be graded: not a readable notebook" in (tmp_path / "carol.md").read_text()


def test_the_table_shows_rows_notes_and_a_line_per_notebook():
    table = format_table([ALICE, CAROL])
    assert "class/alice.ipynb: 1 of 3 passed, 1/4 points" in table
    assert "    note: check cell of 07.2 was edited; restored" in table
    assert "class/carol.ipynb: not graded" in table


def test_json_results_round_trip_and_slices_merge_into_one_class(tmp_path):
    (tmp_path / "1.json").write_text(to_json([CAROL]))
    (tmp_path / "2.json").write_text(to_json([ALICE]))
    merged = merge([(p, load_json(tmp_path / p)) for p in ("2.json", "1.json", "1.json")])
    assert merged == [ALICE, CAROL]  # (a file named twice adds nothing)


def test_a_notebook_in_two_parts_with_different_results_is_refused_naming_both(tmp_path):
    """Red team, round fourteen: the same class graded twice, then both parts merged: the
    notebook got the row of the file named last (0/5 or 5/5 by the order), with no word."""
    regraded = replace(ALICE, seconds={"lesson": 1.0})
    with pytest.raises(InputError, match=r"class/alice.ipynb is in old.json and in new.json"):
        merge([("old.json", [ALICE, CAROL]), ("new.json", [regraded])])
    respelt = replace(regraded, notebook="class/../class/./alice.ipynb")  # (a second look)
    with pytest.raises(InputError, match=r"is in old.json and in new.json"):
        merge([("old.json", [ALICE, CAROL]), ("new.json", [respelt])])


def test_a_file_that_is_not_grade_results_is_refused_with_what_to_do(tmp_path):
    (tmp_path / "x.json").write_text('{"format": "something else"}')
    with pytest.raises(InputError, match="merge the files that `grade --json-file FILE` wrote"):
        load_json(tmp_path / "x.json")


def test_shards_split_a_class_into_stable_slices_that_cover_it_once():
    notebooks = [Path(f"class/{name}.ipynb") for name in "qwertyuiopasdfg"]
    slices = [shard(notebooks, f"{k}/4") for k in range(1, 5)]
    assert sorted(p for s in slices for p in s) == sorted(notebooks)
    assert shard(list(reversed(notebooks)), "2/4") == slices[1]
    for bad in ("0/4", "5/4", "2", "a/b"):
        with pytest.raises(InputError, match="--shard takes K/N"):
            shard(notebooks, bad)


# Issue 35, section 4: exports an instructor can open safely (each attack beside ALICE, whose
# honest export is checked above and again here)
HOSTILE = "![pixel](http://evil.example/p.png) <img src=x onerror=alert(1)> [click](http://e.x)"


def hostile(name, message=HOSTILE, note=""):
    return Graded(name, "07_mlp_from_scratch", (
        Row("07.1", "relu", "failed", message, 0.0, 1.0, note),), (note,) if note else ())


def test_no_csv_cell_is_a_formula_a_spreadsheet_would_run(tmp_path):
    attack = Graded('=HYPERLINK("http://evil.example","click").ipynb', "07_mlp_from_scratch",
                    (Row("07.1", "relu", "failed", "x", 0.0, 1.0, "@SUM(1+1)"),),
                    ("+cmd|' /C calc'!A0", "-2+3", "\tx", "\rx"))
    write_csv([ALICE, attack], tmp_path / "g.csv")
    with open(tmp_path / "g.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    for cell in (cell for row in rows for cell in row):
        assert not cell.startswith(("=", "+", "-", "@", "\t", "\r")), cell
    assert rows[2][0] == "'" + attack.notebook and rows[2][-1].startswith("'+cmd")
    assert rows[1][0] == "class/alice.ipynb", "an honest name is left as it is"


def test_markdown_and_html_from_a_submission_are_inert_in_feedback_and_lms_exports(tmp_path):
    evil = hostile("class/[x](http://e.x)<b>.ipynb", note="<script>alert(1)</script>")
    write_feedback([ALICE, evil], tmp_path)
    text = (tmp_path / "[x](http:" / "e.x)<b>.md").read_text()  # its name, as a path
    for live in ("![", "<img", "<script", "<b>", "[click]", "http://"):
        assert live not in text, live
    assert not re.search(r"(?<!\\)\]\(", text), "no link: every ] before a ( is escaped"
    assert r"!\[pixel\](http\://evil.example/p.png) &lt;img src=x" in text
    results = gradescope_results(evil)
    assert results["output_format"] == results["test_output_format"] == "text"
    assert all(test["output_format"] == "text" for test in results["tests"])


def test_each_notebook_writes_its_own_files_folders_included(tmp_path):
    alice = replace(ALICE, notebook="class/alice/lesson03.ipynb")
    mallory = hostile("class/bob/lesson03.ipynb", "0 of 5: Mallory's")
    write_feedback([alice, mallory], tmp_path / "fb")
    write_gradescope([alice, mallory], tmp_path / "gs")
    assert "1 of 4 points" in (tmp_path / "fb" / "alice" / "lesson03.md").read_text()
    assert "Mallory" in (tmp_path / "fb" / "bob" / "lesson03.md").read_text()
    assert "Mallory" not in (tmp_path / "fb" / "alice" / "lesson03.md").read_text()
    assert json.loads((tmp_path / "gs" / "alice" / "lesson03.json").read_text())["score"] == 1
    assert json.loads((tmp_path / "gs" / "bob" / "lesson03.json").read_text())["score"] == 0
    assert "# Feedback on alice/lesson03" in (tmp_path / "fb" / "alice" / "lesson03.md").read_text()


def test_names_that_would_share_a_file_are_refused_and_none_leaves_the_folder():
    assert export_names(["c/alice.ipynb", "c/bob.ipynb"]) == {"c/alice.ipynb": "alice",
                                                              "c/bob.ipynb": "bob"}
    assert export_names(["../up/a.ipynb", "/abs/b.ipynb"]) == {
        "../up/a.ipynb": os.path.abspath("../up/a.ipynb").lstrip("/").removesuffix(".ipynb"),
        "/abs/b.ipynb": "abs/b"}
    with pytest.raises(InputError, match="c/Alice.ipynb and c/alice.ipynb would write one "
                                         "export file"):
        export_names(["c/Alice.ipynb", "c/alice.ipynb"])


def test_nothing_of_the_graders_machine_reaches_what_a_student_gets(tmp_path):
    private = Path(tempfile.gettempdir()) / "nn-from-scratch-grade-k2j1" / "alice.ipynb"
    leak = (f'File "{sys.prefix}/lib/python3.12/site-packages/jax/_src/api.py", line 3; '
            f"{private}; {Path.home()}/.cache; {os.getcwd()}/x; {tempfile.gettempdir()}/y")
    evil = hostile("class/alice.ipynb", leak, note=f"cell ran in {private.parent}")
    write_feedback([evil], tmp_path)
    shown = [(tmp_path / "alice.md").read_text(), json.dumps(gradescope_results(evil)),
             json.dumps(classroom_result([evil]))]
    for text in shown:
        for place in (sys.prefix, tempfile.gettempdir(), "nn-from-scratch-grade-",
                      str(Path.home()), os.getcwd()):
            assert place not in text, place
        assert "site-packages/jax/" in text  # which library raised stays readable
