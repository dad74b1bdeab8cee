import functools
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

# Tests never touch the internet: "auto" must not even try, and plots need no screen.
os.environ.setdefault("NN_FROM_SCRATCH_OFFLINE", "1")
os.environ.setdefault("MPLBACKEND", "Agg")
# The grader's key and journals: a folder of the test run's own, not the user's state folder.
# Full MNIST's files: an empty folder of the run's own, so a user's downloaded MNIST changes
# nothing ("auto" falls back to mnist-5k in every test and lesson). Made by the process that
# starts the run (pytest-xdist's workers inherit them), and removed when it ends.
# And the compiled programs that the kernels executing one lesson share with those executing it
# again in another edition (tools/notebooks.py, compilation_cache).
_OWN_FOLDERS = []
for _kind in ("STATE", "DATA", "COMPILE_CACHE"):
    if f"NN_FROM_SCRATCH_{_kind}" not in os.environ:
        _OWN_FOLDERS.append(tempfile.mkdtemp(prefix=f"nn-from-scratch-{_kind.lower()}-"))
        os.environ[f"NN_FROM_SCRATCH_{_kind}"] = _OWN_FOLDERS[-1]

# This process's own compiles (and its pytest-xdist workers') at LLVM's lowest optimisation
# level: the tests in it compile thousands of small programs and run each for microseconds, so
# the compile is their cost (issue 41: 537 s of XLA's backend compile in 1,730 s of test
# time). At level 0 (XLA's default is 3) the backend compile takes about a third less, and
# nothing else measured did: the README's command, one run after the other, 874 s and 801 s
# (README, "How long things take").
# XLA reads the flag once, when the backend starts (just below), so the environment is put back
# at once: the kernels, the command line and the grader that tests start compile as a user's do,
# and the lessons' claims about speed are held at XLA's default level. A level the user set is
# kept.
_XLA_FLAGS = os.environ.get("XLA_FLAGS")
if "xla_backend_optimization_level" not in (_XLA_FLAGS or ""):
    os.environ["XLA_FLAGS"] = f"{_XLA_FLAGS or ''} --xla_backend_optimization_level=0".lstrip()

import jax  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from nn_from_scratch.parallel import simulate_cpu_devices  # noqa: E402

# Before any JAX computation: 4 simulated CPU devices for the data-parallel tests.
# Everything else runs on device 0 as usual.
simulate_cpu_devices(4)
jax.devices()  # the backend starts, reading XLA_FLAGS
if _XLA_FLAGS is None:
    os.environ.pop("XLA_FLAGS", None)
else:
    os.environ["XLA_FLAGS"] = _XLA_FLAGS
# The test run's own folder of compiled programs (JAX's persistent compilation cache), in this
# process and its pytest-xdist workers only (kernels: tools/notebooks.py, compilation_cache):
# a checker's tests run it in two modes, each compiling the same functions anew (checks of
# lessons 13 and 16, then in three modes: 179 CPU-s without, 97 with). Off for the tests
# marked "times_a_compile".
jax.config.update("jax_compilation_cache_dir", os.environ["NN_FROM_SCRATCH_COMPILE_CACHE"])
jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)

from nn_from_scratch import i18n, init_network_params, load_dataset  # noqa: E402

# Which worker runs which test, and in what order (tests/scheduling.py).
pytest_plugins = ["scheduling"]

LANGUAGES = ("en", "zh_CN")


# How the checkers' tests run each checker: twice, once in each language, each time another way.
# In class, in Chinese: the answer called in the test's own process, as a student's notebook
# calls it, with every message's Chinese words checked. Graded, in English: as the grader checks
# a submission, the answers in another "kernel", every call of them a question through the
# grader's JSON (nn_from_scratch.grade.checking.InProcess), on inputs drawn for a grading (one
# fixed seed, so that a test gives the same result every time), with every English hint a test
# names checked. A check runs the very code, on the very inputs, in either language (only its
# words differ), so a third run, in class in English, computed everything a second time for
# words the graded run already checks (issue 41: 555 s of 4,754 s of test time); English checks
# in class still run in every lesson (tests/test_lessons.py) and on every mutant
# (tests/test_mutants.py, whose checks answer in English). The run in class is marked "slow":
# the README's test command (and CI's run on the newest JAX) runs each checker graded only, which
# runs the checker's code on drawn inputs and through the grader's protocol as well; the Chinese
# words, which do not depend on JAX's version, are checked by CI's run of the slow tests.
MODES = [("zh_CN", "in class"), ("en", "graded")]
GRADING_SEED = 20261126


@pytest.fixture(autouse=True)
def compiles_afresh(request):
    """For a test marked ``times_a_compile``, no persistent compilation cache: a compile it
    times must be a real one, not one read back from the run's folder."""
    if request.node.get_closest_marker("times_a_compile") is None:
        yield
        return
    from jax.experimental.compilation_cache import compilation_cache

    jax.config.update("jax_enable_compilation_cache", False)
    compilation_cache.reset_cache()
    try:
        yield
    finally:
        jax.config.update("jax_enable_compilation_cache", True)
        compilation_cache.reset_cache()


@pytest.fixture(autouse=True)
def language(request, monkeypatch):
    """Every test in English, except the checkers' tests: those run in both languages, and
    graded; ``graded`` puts each checker of the package behind the grader's protocol."""
    lang, mode = getattr(request, "param", ("en", "in class"))
    monkeypatch.setattr(i18n, "_chosen", [lang])
    if mode == "graded":
        from nn_from_scratch.exercises import lesson_exercises
        from nn_from_scratch.exercises._core import all_lessons
        for lesson in all_lessons():
            for exercise in lesson_exercises(lesson):
                module = sys.modules[checker_module(exercise.lesson)]
                monkeypatch.setattr(module, exercise.name, graded(getattr(module,
                                                                          exercise.name)))
    return lang


def checker_module(lesson):
    return f"nn_from_scratch.exercises.{lesson[3:]}"


def graded(checker):
    """``checker``, taking the answers as the grader does: through a session of their own."""
    from nn_from_scratch.exercises._remote import is_remote
    from nn_from_scratch.grade.checking import InProcess, check_here

    @functools.wraps(checker)
    def through_the_grader(*answers):
        if any(is_remote(answer) for answer in answers):  # a check within a check (finish 08.2
            return checker(*answers)                      # first): its answer is remote already
        names = [f"answer{i}" for i in range(len(answers))]
        session = InProcess(dict(zip(names, answers)))
        return check_here(session, checker, names, seed=GRADING_SEED)
    return through_the_grader


def pytest_generate_tests(metafunc):
    # the checkers' tests; _core's own (test_exercises_core) test the machinery, in English
    if metafunc.module.__name__.startswith("test_exercises_") and \
            metafunc.module.__name__ != "test_exercises_core":
        if metafunc.definition.get_closest_marker("in_class_only"):
            # a test that draws its own inputs (the graded mode would fix the seed): once, in
            # class, in English, in every run
            metafunc.parametrize("language", [("en", "in class")], indirect=True,
                                 ids=["en-in class"])
            return
        metafunc.parametrize(
            "language", [pytest.param(mode, marks=[pytest.mark.slow] if mode[1] == "in class"
                                      else []) for mode in MODES],
            indirect=True, ids=[f"{lang}-{mode}" for lang, mode in MODES])


def assert_trees_close(a, b, rtol=1e-5, atol=1e-6):
    """Two pytrees of arrays (on any devices) agree leaf by leaf, up to float rounding."""
    a_leaves, b_leaves = jax.tree.leaves(a), jax.tree.leaves(b)
    assert len(a_leaves) == len(b_leaves)
    for x, y in zip(a_leaves, b_leaves):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=rtol, atol=atol)


@pytest.fixture(scope="session")
def digits():
    return load_dataset("digits")


@pytest.fixture
def small_params():
    """A 3-layer net on 64 inputs, He init (non-trivial activations)."""
    return init_network_params([64, 32, 16, 10], jax.random.key(0), init="he")


def stub(*args, **kwargs):
    """What every function exercise starts as in the student edition."""
    raise NotImplementedError


_ENGLISH_WORD = re.compile(r"(?:[a-z]{2,}|[A-Z][a-z]+|[A-Z]{2,})")


def _is_english(fragment):
    """Prose such as ``whole (6, 4) matrix`` or ``cross-correlation``, not code such as
    ``in_axes=(0, None)``, ``(6, 4)`` or ``jax.tree.map``, which a Chinese message quotes."""
    words = [token.strip(".,:;!?'\"()") for token in fragment.split()]
    prose = any(_ENGLISH_WORD.fullmatch(w) and w not in ("None", "True", "False") for w in words)
    return prose or not re.search(r"[()\[\]=_.*/`]", fragment)


@functools.cache
def _english_phrases():
    """Every run of 3+ words in the English of the package's messages, between placeholders:
    one of them in a Chinese message is English that was never translated."""
    from babel.messages.pofile import read_po
    po = Path(i18n.__file__).parent / "locale" / "zh_CN" / "LC_MESSAGES" / "nn_from_scratch.po"
    with po.open("rb") as f:
        catalog = read_po(f)
    phrases = set()
    for message in catalog:
        text = re.sub(r"\S*[()\[\]=_.*/]\S*", "|", message.id or "")  # code is no prose
        for piece in re.split(r"\{[^}]*\}|`[^`]*`|\|", text):
            words = re.findall(r"[A-Za-z][a-z']+(?: [a-z']+){2,}", piece)
            phrases.update(w for w in words if len(w) >= 15)
    return frozenset(phrases)


def assert_result(result, status, *fragments):
    """A checker's result has ``status`` and its message contains every fragment (a hint).

    In Chinese (the checkers' tests run in both languages) the message must be Chinese, with
    no English phrase of the package's messages left in it, and still contain every fragment
    that is code (``in_axes=(0, None)``, ``(6, 4)``); the English prose fragments are left out.
    """
    assert result.status == status, result.line
    chinese = i18n.language() != "en"
    for fragment in fragments:
        if not (chinese and _is_english(fragment)):  # code, typeset as Chinese text sets it
            assert (i18n.typeset(fragment) if chinese else fragment) in result.message, \
                result.line
    assert result.line.startswith({"passed": "✓", "failed": "✗", "not done": "…"}[status])
    if chinese:
        assert re.search("[\u4e00-\u9fff]", result.line), f"not in Chinese: {result.line}"
        # quoted text (an error Python or JAX raised, in English everywhere) is not a leak
        unquoted = re.sub(r"“[^”]*”|\"[^\"]*\"|`[^`]*`", "", result.message)
        leaked = [p for p in _english_phrases() if p in unquoted]
        assert not leaked, f"English left in a Chinese message: {leaked} in {result.line}"


def own(fn):
    """The library's ``fn`` as a student's own function (checkers refuse the library's object)."""
    def students_version(*args, **kwargs):
        return fn(*args, **kwargs)
    return students_version


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    """Headless Chromium (tests/chromium.py); the test is skipped where there is none."""
    from chromium import Browser, chromium

    executable = chromium()
    if executable is None:
        pytest.skip("Chromium is not installed, so no page is checked in a browser: install "
                    "Debian's chromium (CI does, with .ci/install-chromium)")
    pytest.importorskip("websocket", reason="the browser checks need websocket-client")
    chrome = Browser(executable, tmp_path_factory.mktemp("chromium") / "profile")
    yield chrome
    chrome.close()


# The README's test command leaves out the tests marked ``slow`` (pyproject.toml): heavy, and
# their outcome does not depend on JAX's version. ``--slow`` adds them, ``-m slow`` runs them
# alone, and naming their file runs them (``pytest tests/test_mutants.py -k 07_``); CI runs them
# once (.ci/run).
def pytest_addoption(parser):
    parser.addoption("--slow", action="store_true",
                     help="also run the tests marked slow (the student editions with the mutation "
                          "test, the red team, the grader's classes and command, JupyterLab, the "
                          "website, the checkers in class in Chinese); -m slow runs them alone. "
                          "CI runs them once")


def _named_files(config):
    """The test files named on the command line (``tests/test_x.py``, ``tests/test_x.py::t``)."""
    files = set()
    for arg in config.args:
        path = Path(config.invocation_params.dir, arg.split("::")[0])
        if path.suffix == ".py":
            files.add(path.resolve())
    return files


_LEFT_OUT = pytest.StashKey[int]()


def runs_slow_tests(config):
    """``--slow``, or a marker expression that names them (``-m slow``)."""
    return bool(config.getoption("--slow") or "slow" in (config.getoption("markexpr") or ""))


def pytest_collection_modifyitems(config, items):
    if runs_slow_tests(config):
        return
    named = _named_files(config)
    kept, slow = [], []
    for item in items:
        left_out = item.get_closest_marker("slow") and Path(item.path).resolve() not in named
        (slow if left_out else kept).append(item)
    if slow:
        items[:] = kept
        config.hook.pytest_deselected(items=slow)
    config.stash[_LEFT_OUT] = len(slow)
    if hasattr(config, "workeroutput"):  # a pytest-xdist worker: tell the run's main process
        config.workeroutput["slow_left_out"] = len(slow)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """pytest-xdist: a worker ended; its count of the slow tests left out (each worker collects
    every test, so each counts the same)."""
    left_out = getattr(node, "workeroutput", {}).get("slow_left_out")
    if left_out is not None:
        node.config.stash[_LEFT_OUT] = left_out


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    left_out = config.stash.get(_LEFT_OUT, 0)
    if left_out:
        terminalreporter.write_line(
            f"{left_out} test{'s' if left_out > 1 else ''} marked slow "
            f"{'were' if left_out > 1 else 'was'} left out (deselected): "
            f"`.venv/bin/python -m pytest --slow` runs them too, `-m slow` them alone (CI runs "
            f"them once); naming a test file runs all of its tests")


def pytest_unconfigure(config):
    """The run's own state and data folders go when the run that made them ends."""
    for folder in _OWN_FOLDERS:
        shutil.rmtree(folder, ignore_errors=True)
