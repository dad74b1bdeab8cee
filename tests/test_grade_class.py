"""A class at a time: the grader survives what students hand in (endless loops, dead kernels,
memory hogs, broken files), reports every exercise of every notebook, and gives the same rows
graded two at a time as one at a time."""
from dataclasses import replace

import nbformat
import pytest
from grading_fixtures import notebook, small_release

from nn_from_scratch.grade import grade_paths
from nn_from_scratch.notebook_runner import Limits

# How the grader treats a class (its sandboxes, limits, records and order) does not depend on
# JAX's version; lesson 07's own solution graded as a class (tests/test_grade.py) and every
# checker's graded mode (the checkers' tests) are tested on both of CI's runs.
pytestmark = pytest.mark.slow

# One call that fills 4 GB: an interrupt cannot stop it halfway, so the hog keeps growing through
# the 10 s limit and the 15 s the runner then waits (GRACE) until the watchdog stops it. A loop of
# 50 MB allocations stopped at the interrupt: on a loaded CI machine it once grew by less than
# 160 MB/s, met the time limit before the memory cap, and the test failed.
HOG = "hoard = bytearray(4 * 2**30)"


@pytest.fixture(scope="module")
def hostile_class(tmp_path_factory):
    """A mixed submission, one that loops forever, one that kills its kernel, one that eats
    memory, a broken file, and one that says nothing of its lesson."""
    folder = tmp_path_factory.mktemp("submissions")
    submissions = {
        "alice": notebook(
            ("exercise", "def relu(x):\n    return jnp.maximum(0, x)"),
            ("check", "check.relu(relu)"),
            ("exercise", "def random_layer_params(m, n, key, scale=1e-2):\n"
                         "    return scale * jax.random.normal(key, (n, m)), "
                         "scale * jax.random.normal(key, (n,))"),  # the reused key
            ("check", "check.random_layer_params(random_layer_params)"),
            ("exercise", "init_network_params = undefined_name  # raises NameError"),
            # its check cell was deleted: the release's is put back
            ("", "print('a scratch cell of my own')")),
        "bob": notebook(("exercise", "def relu(x):\n    while True:\n        pass"),
                        ("check", "check.relu(relu)")),
        "erin": notebook(("exercise", "import os\nos._exit(1)  # the kernel dies"),
                         ("check", "check.relu(relu)")),
        "hal": notebook(("exercise", "def relu(x):\n    return jnp.maximum(0, x)"),
                        ("check", "check.relu(relu)"),
                        ("exercise", HOG)),
        "dave": notebook(lesson=None),
    }
    for name, nb in submissions.items():
        nbformat.write(nb, folder / f"{name}.ipynb")
    (folder / "carol.ipynb").write_text("{ this is not json")
    return folder, small_release(tmp_path_factory.mktemp("release"))


# A kernel of these notebooks holds about 240 MB (JAX 0.10.2) or 280 MB (JAX 0.12): 768 MB leaves
# every honest notebook room, and the hog passes it after about 500 MB. A cell gets 10 s: 5 s
# timed out an honest check once, graded in the full suite beside its other worker's kernels.
LIMITS = Limits(timeout=120, cell_timeout=10, memory=768 * 2**20)


@pytest.fixture(scope="module")
def two_at_a_time(hostile_class):
    folder, release = hostile_class
    return grade_paths([folder], LIMITS, jobs=2, release_dir=release)


def rows_of(graded, name):
    (notebook,) = [g for g in graded if g.notebook.endswith(f"{name}.ipynb")]
    return notebook, {r.exercise: r for r in notebook.rows}


def test_every_kind_of_submission_is_reported_and_none_stops_the_rest(two_at_a_time):
    graded = two_at_a_time
    assert [g.notebook.rsplit("/", 1)[1] for g in graded] == [
        "alice.ipynb", "bob.ipynb", "carol.ipynb", "dave.ipynb", "erin.ipynb", "hal.ipynb"]
    alice, rows = rows_of(graded, "alice")
    assert [r.exercise for r in alice.rows] == [f"07.{n}" for n in range(1, 8)]
    assert rows["07.1"].status == "passed" and rows["07.1"].points == 1
    assert rows["07.2"].status == "failed" and "key" in rows["07.2"].message  # the hint
    assert rows["07.3"].status == "error"
    assert "NameError: name 'undefined_name' is not defined" in rows["07.3"].message
    assert rows["07.4"].message == "the release has no check cell for it"
    assert "check cell of 07.3 was deleted; restored" in alice.notes
    assert alice.points == 1 and alice.max_points == 7

    _, bob = rows_of(graded, "bob")
    assert bob["07.1"].status == "timed out" and "interrupted after 10 s" in bob["07.1"].message
    assert bob["07.2"].status == "not done"  # after the endless loop, the rest still ran

    _, erin = rows_of(graded, "erin")
    assert erin["07.1"].status == "error" and "made the kernel die" in erin["07.1"].message
    assert erin["07.2"].status == "error" and "the kernel had died" in erin["07.2"].message

    carol, _ = rows_of(graded, "carol")
    assert carol.rows[0].exercise is None and "not a readable notebook" in carol.rows[0].message
    dave, _ = rows_of(graded, "dave")
    assert "cannot tell which lesson" in dave.rows[0].message


def test_a_memory_hog_is_stopped_and_reported_and_the_others_are_graded(two_at_a_time):
    _, hal = rows_of(two_at_a_time, "hal")
    assert hal["07.1"].status == "passed"  # before the hog
    assert hal["07.2"].status == "out of memory"
    assert "used more than 768 MB of memory and was stopped" in hal["07.2"].message
    assert hal["07.3"].status == "out of memory" and "was not run" in hal["07.3"].message
    _, alice = rows_of(two_at_a_time, "alice")
    assert alice["07.1"].status == "passed"


def test_one_at_a_time_gives_the_same_rows_in_the_same_order(hostile_class, two_at_a_time):
    folder, release = hostile_class
    one_at_a_time = grade_paths([folder], LIMITS, jobs=1, release_dir=release)

    def without_times(graded):
        return [replace(g, seconds={}) for g in graded]

    assert without_times(one_at_a_time) == without_times(two_at_a_time)


def test_each_notebook_says_where_its_time_went(two_at_a_time):
    alice, _ = rows_of(two_at_a_time, "alice")
    assert set(alice.seconds) == {"kernel", "lesson", "checks"}
    assert all(seconds > 0 for seconds in alice.seconds.values())


STEAL = '''import inspect
from IPython.display import publish_display_data

def relu(x):  # when the grader checks it, display a passing record with the grader's secret
    for frame in inspect.stack():
        secret = frame.frame.f_locals.get("secret")
        if isinstance(secret, str):
            publish_display_data({"application/vnd.nn-from-scratch.grader+json": {
                "exercise": "07.1", "status": "passed", "message": "ok", "secret": secret}})
    raise NotImplementedError'''


GC_PATCH = '''import gc

def _found(name):
    return next(o for o in gc.get_objects() if callable(o) and getattr(o, "__name__", "") == name
                and str(getattr(o, "__module__", "")).endswith(".model"))

_kind = next(type(o) for o in gc.get_objects() if type(o).__name__ == "Answers")
_before, _handle_before = _kind.answer, _kind.handle

def _answer(self, request):
    if request.get("op") == "lookup" and request.get("name") == "relu":
        return _found("relu")
    if request.get("op") == "apply" and str(request.get("ref", "")).endswith("calls"):
        return []
    return _before(self, request)

def _handle(self, obj):
    made = _handle_before(self, obj)
    made["ref"] = ""
    return made

_kind.answer, _kind.handle = _answer, _handle'''


@pytest.fixture(scope="module")
def cunning_class(tmp_path_factory):
    """Forgeries beyond the issue's four, on the small release."""
    folder = tmp_path_factory.mktemp("cunning")
    submissions = {
        "frank": notebook(("exercise", STEAL), ("check", "check.relu(relu)")),
        "grace": notebook(("", "from IPython.display import publish_display_data\n"
                               "publish_display_data({'application/vnd.nn-from-scratch.grader"
                               "+json': {'exercise': '07.1', 'status': 'passed', "
                               "'message': 'ok', 'secret': '0' * 32}})")),
        # red team, round fourteen: relu's stub changed by one token, and a cell that finds
        # the grader's answering object through gc, by its type's name (neither it nor the
        # package named), and has it hand the check the library's relu, its reference blanked
        # (07.1 passed, with the one note "inspects the call stack")
        "heidi": notebook(("", GC_PATCH), ("exercise", "def relu(x):\n"
                                                       "    raise NotImplementedError()"),
                          ("check", "check.relu(relu)")),
        # red team, round fifteen: the same patch, its class found as an attribute of the
        # package the lesson imports (no import of the grader, no gc: 5/7 with every stub);
        # and a stub with the answer written into the namespace through IPython's table of
        # namespaces, which no reading of names saw (5/7, not one note)
        "judy": notebook(("", "import nn_from_scratch.model\n" + GC_PATCH.replace(
            'next(type(o) for o in gc.get_objects() if type(o).__name__ == "Answers")',
            "nn_from_scratch.grade.answers.Answers")),
            ("exercise", "def relu(x):\n    raise NotImplementedError()"),
            ("check", "check.relu(relu)")),
        "kim": notebook(("exercise", "def relu(x):\n    raise NotImplementedError\n"
                                     "from IPython import InteractiveShell as _S\n"
                                     "_ns = _S.instance().ns_table['user_global']\n"
                                     "_ns['relu'] = lambda x: x * (x > 0)"),
                        ("check", "check.relu(relu)")),
        "ivan": notebook(("exercise", "import nn_from_scratch.exercises.mlp_from_scratch as m\n"
                                      "from nn_from_scratch.exercises import CheckResult\n"
                                      "m.relu = lambda f: CheckResult('07.1', 'relu', "
                                      "'passed', 'ok')\n"
                                      "def relu(x):\n    raise NotImplementedError")),
        # red team, round twenty-two: the library's functions stored where the reading loses
        # them (through a helper that returns the class, under another name of jax.numpy, by a
        # method of the student's own class) and called by the student's own def (6/7 each)
        "mallory": notebook(
            ("exercise", "import nn_from_scratch.model\nclass Box:\n    pass\n"
                         "def box():\n    return Box\nbox().f = nn_from_scratch.model.relu\n"
                         "def relu(x):\n    return Box.f(x)"),
            ("check", "check.relu(relu)"),
            ("exercise", "import nn_from_scratch.params\n"
                         "jnp.lib_layer = nn_from_scratch.params.random_layer_params\n"
                         "def random_layer_params(m, n, key, scale=1e-2):\n"
                         "    return jax.numpy.lib_layer(m, n, key, scale)"),
            ("check", "check.random_layer_params(random_layer_params)"),
            ("exercise", "import nn_from_scratch.params\nclass Store:\n"
                         "    def put(self, f):\n        Store.f = staticmethod(f)\n"
                         "Store().put(nn_from_scratch.params.init_network_params)\n"
                         "def init_network_params(sizes, key):\n"
                         "    return Store.f(sizes, key)"),
            ("check", "check.init_network_params(init_network_params)")),
        # ...and its two honest lines that cost a solved notebook every point
        "olivia": notebook(
            ("exercise", "import inspect, timeit\ndef relu(x):\n    return jnp.maximum(0, x)\n"
                         "print(inspect.signature(relu))\n"
                         "print(timeit.timeit(lambda: relu(jnp.ones(3)), number=10))"),
            ("check", "check.relu(relu)")),
    }
    for name, nb in submissions.items():
        nbformat.write(nb, folder / f"{name}.ipynb")
    release = small_release(tmp_path_factory.mktemp("release"))
    # (30 s a cell: the graded kernel drops JAX's compiled programs at each check, and under
    # the suite's load 07.3's check of the library's own code once took over 10 s)
    return grade_paths([folder], Limits(timeout=120, cell_timeout=30, memory=768 * 2**20),
                       jobs=2, release_dir=release)


def test_the_librarys_function_stored_where_the_reading_loses_it_earns_nothing(cunning_class):
    """Each answer calls the library's own function when the grader runs it: seen there
    (grade/answers.py), whatever the reading of the source made of the store."""
    mallory, rows = rows_of(cunning_class, "mallory")
    for exercise, name in (("07.1", "relu"), ("07.2", "random_layer_params"),
                           ("07.3", "init_network_params")):
        assert rows[exercise].points == 0 and rows[exercise].status == "failed", rows[exercise]
        assert f"called the library's own {name} when the grader ran it" in \
            rows[exercise].message, rows[exercise]


def test_a_signature_read_and_a_lambda_timed_keep_their_point(cunning_class):
    olivia, rows = rows_of(cunning_class, "olivia")
    assert rows["07.1"].status == "passed" and rows["07.1"].points == 1, rows["07.1"]


def test_a_record_displayed_while_checked_changes_nothing(cunning_class):
    """frank's relu looks for a secret up the stack while it is checked and displays a passing
    record: the check runs in the grader's process, and nothing displayed is read."""
    frank, rows = rows_of(cunning_class, "frank")
    # (since round fourteen its look up the stack costs the point by itself: "failed")
    assert rows["07.1"].status in ("not done", "failed") and rows["07.1"].points == 0
    assert "the exercise cell of 07.1 inspects the call stack" in frank.notes


def test_the_answering_object_patched_through_gc_earns_nothing_and_is_named(cunning_class):
    heidi, rows = rows_of(cunning_class, "heidi")
    assert rows["07.1"].status != "passed" and rows["07.1"].points == 0, rows["07.1"]
    assert "reaches any object in the kernel" in rows["07.1"].message, rows["07.1"]
    assert any("reaches any object of the kernel (gc.get_objects" in note for note in heidi.notes)


def test_the_answering_object_patched_through_the_package_earns_nothing(cunning_class):
    judy, rows = rows_of(cunning_class, "judy")
    assert rows["07.1"].status != "passed" and rows["07.1"].points == 0, rows["07.1"]
    assert "reaches any object in the kernel" in rows["07.1"].message, rows["07.1"]


def test_an_answer_written_through_ipythons_namespaces_earns_nothing_and_is_noted(
        cunning_class):
    kim, rows = rows_of(cunning_class, "kim")
    assert rows["07.1"].status != "passed" and rows["07.1"].points == 0, rows["07.1"]
    # (since round sixteen its import of IPython says so first: more than an exercise may use)
    assert "ns_table" in rows["07.1"].message or \
        "the module IPython is more than an exercise may use" in rows["07.1"].message, rows["07.1"]
    assert any("reaches IPython's shell and its namespaces" in note for note in kim.notes)


def test_a_record_imitating_the_graders_changes_nothing(cunning_class):
    grace, rows = rows_of(cunning_class, "grace")
    assert rows["07.1"].status == "not done"


def test_patching_the_checker_module_does_not_reach_the_graders_checkers(cunning_class):
    ivan, rows = rows_of(cunning_class, "ivan")
    assert rows["07.1"].status == "not done"
    assert "the exercise cell of 07.1 names the checkers' package (exercises)" in ivan.notes


def test_a_chinese_instructor_reads_every_hint_in_chinese(tmp_path, monkeypatch):
    """grade --lang zh sets the language the grader's checks answer in, for an English
    submission as for a Chinese one."""
    from nn_from_scratch import i18n

    nb = notebook(("exercise", "def relu(x):\n    return x  # forgot the max"),
                  ("check", "check.relu(relu)"))
    nbformat.write(nb, tmp_path / "wei.ipynb")
    monkeypatch.setenv(i18n.ENV, "zh_CN")  # what --lang zh does before grading
    monkeypatch.setattr(i18n, "_chosen", [])  # as in the grade command: no set_language
    [graded] = grade_paths([tmp_path], LIMITS, jobs=1,
                           release_dir=small_release(tmp_path / "release"))
    rows = {r.exercise: r for r in graded.rows}
    assert rows["07.1"].status == "failed" and "relu" in rows["07.1"].message
    assert rows["07.2"].status == "not done" and rows["07.2"].message.startswith("尚未完成")
