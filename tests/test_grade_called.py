"""What the student's code calls when the grader runs it (grade/answers.py's ``watched``, and
``copying.called_twin``): the library's answer is seen when it runs, however it was stored.

Red team, round twenty-two: eight ways to store the library's function where the reading of
the source loses it, each earning lesson 07's points (6/7, every stub answered). Each is here,
run through the grader's own questions (``InProcess``: the answers' side as in a kernel), beside
the honest answers and the lesson's own use of the library that must keep their point.
"""
import sys

import jax
import jax.numpy as jnp
import pytest

import nn_from_scratch.model
import nn_from_scratch.params
import nn_from_scratch.timing
from nn_from_scratch.exercises import mlp_from_scratch as check
from nn_from_scratch.grade import answers
from nn_from_scratch.grade.checking import InProcess, check_here
from nn_from_scratch.grade.copying import Copy, called_twin

SEED = 20261201


def notebook(source):
    """The names ``source`` binds, run as a notebook's cell runs (its code is not the package's)."""
    namespace = {"jax": jax, "jnp": jnp, "nn_from_scratch": nn_from_scratch}
    exec(compile(source, "<cell>", "exec"), namespace)
    return namespace


def graded(namespace, checker, name):
    """(status, the Copy the grader makes of what the answer called, or None)."""
    session = InProcess(namespace)
    result = check_here(session, getattr(check, checker), [name], SEED)
    return result.status, called_twin(checker, [name], session.called)


ROUND_TWENTY_TWO = {  # each: (checker, the answer's name, the cell)
    "a helper returns the class": ("relu", "relu", (
        "class Box:\n    pass\ndef box():\n    return Box\n"
        "box().f = nn_from_scratch.model.relu\ndef relu(x):\n    return Box.f(x)")),
    "a module's attribute under another name": ("relu", "relu", (
        "jnp.lib_relu = nn_from_scratch.model.relu\n"
        "def relu(x):\n    return jax.numpy.lib_relu(x)")),
    "the lesson's listing as the box": ("predict", "predict", (
        "import nn_from_scratch.listing\n"
        "nn_from_scratch.listing.listing.p = nn_from_scratch.model.predict\n"
        "def predict(params, image):\n"
        "    return nn_from_scratch.listing.listing.p(params, image)")),
    "a for loop's target": ("relu", "relu", (
        "class Box:\n    pass\ndef box():\n    return Box\n"
        "for box().f in [nn_from_scratch.model.relu]:\n    pass\n"
        "def relu(x):\n    return Box.f(x)")),
    "a dict's item through a helper": ("batched_predict", "batched_predict", (
        "table = {}\ndef get():\n    return table\n"
        "get()['f'] = nn_from_scratch.model.batched_predict\n"
        "def batched_predict(params, images):\n    return table['f'](params, images)")),
    "singledispatch's registry": ("relu", "relu", (
        "import functools\n@functools.singledispatch\ndef disp(x):\n    pass\n"
        "disp.register(int, nn_from_scratch.model.relu)\n"
        "def relu(x):\n    return disp.dispatch(int)(x)")),
    "JAX's pytree registry": ("predict", "predict", (
        "class H:\n    pass\njax.tree_util.register_pytree_node(H, lambda h: ((), "
        "nn_from_scratch.model.predict), lambda aux, kids: aux)\n"
        "def predict(params, image):\n"
        "    return jax.tree_util.tree_unflatten(jax.tree_util.tree_structure(H()), [])"
        "(params, image)")),
    "a method writes a class attribute": ("random_layer_params", "random_layer_params", (
        "import nn_from_scratch.params\nclass Store:\n    def put(self, f):\n"
        "        Store.f = staticmethod(f)\n"
        "Store().put(nn_from_scratch.params.random_layer_params)\n"
        "def random_layer_params(m, n, key, scale=1e-2):\n    return Store.f(m, n, key, scale)")),
    # the checkers' own module computes references: its code counts as the library's
    "a checker's reference through a box": ("predict", "predict", (
        "from nn_from_scratch.exercises import mlp_from_scratch as check\n"
        "class Box:\n    pass\ndef box():\n    return Box\nbox().f = check._logits\n"
        "def predict(params, image):\n    logits = jnp.asarray(Box.f(params, image))\n"
        "    return logits - jax.nn.logsumexp(logits)")),
    # round twenty-five: a checker's helper that is a whole forward pass, 07.4 from its loss
    "a checker's helper's forward pass": ("predict", "predict", (
        "import numpy as np\nfrom nn_from_scratch.exercises.pmap import mlp_loss_and_grads\n"
        "class Box:\n    pass\ndef box():\n    return Box\nbox().g = mlp_loss_and_grads\n"
        "def predict(params, image):\n    c = params[-1][0].shape[0]\n"
        "    return jnp.array([-Box.g(params, np.asarray(image)[None], np.eye(c)[k][None])[0]"
        "\n                      for k in range(c)])")),
    "07.6 by count_params, under a helper": ("parameter_count", "n_params", (
        "import nn_from_scratch.params as p\nhelp = [p.count_params, p.init_network_params]\n"
        "def n_params(sizes):\n"
        "    return help[0](help[1](sizes, jax.random.key(0)))")),
}


@pytest.mark.parametrize("form", ROUND_TWENTY_TWO)
def test_the_librarys_function_called_when_run_earns_nothing(form):
    checker, name, source = ROUND_TWENTY_TWO[form]
    status, copied = graded(notebook(source), checker, name)
    assert status == "passed"  # its values are the library's: only what it called tells
    assert copied is not None and copied.doubt == "called", copied
    assert "when the grader ran it" in copied.message


HONEST = {
    "relu": ("relu", "relu", "def relu(x):\n    return jnp.maximum(0, x)"),
    # the library's relu inside one's own predict is using the library, not copying predict
    "predict over the library's relu": ("predict", "predict", (
        "def predict(params, image):\n    a = image\n    for w, b in params[:-1]:\n"
        "        a = nn_from_scratch.model.relu(w @ a + b)\n    w, b = params[-1]\n"
        "    logits = w @ a + b\n    return logits - jax.nn.logsumexp(logits)")),
    # the lesson's own way to 07.5: vmap over the library's predict (its README says so)
    "vmap of the library's predict": ("batched_predict", "batched_predict", (
        "batched_predict = jax.vmap(nn_from_scratch.model.predict, in_axes=(None, 0))")),
}


@pytest.mark.parametrize("answer", HONEST)
def test_the_students_own_code_and_the_lessons_own_use_of_the_library_keep_their_point(answer):
    checker, name, source = HONEST[answer]
    assert graded(notebook(source), checker, name) == ("passed", None)


def test_watched_names_every_function_of_the_package_that_started_but_the_graders_own():
    namespace = notebook("def mine(params, images):\n"
                         "    return nn_from_scratch.model.batched_predict(params, images)")
    params = nn_from_scratch.params.init_network_params([3, 4, 2], jax.random.key(0))
    called = {}
    value = answers.watched(lambda: namespace["mine"](params, jnp.ones((5, 3))), called)
    assert value.shape == (5, 2)
    # batched_predict, what it calls itself, and predict, called by JAX's vmap on its behalf
    assert {"nn_from_scratch.model.batched_predict", "nn_from_scratch.model._check_input",
            "nn_from_scratch.model.predict", "nn_from_scratch.model.relu"} <= set(called)
    called = {}
    answers.watched(lambda: jnp.maximum(0, 1), called)
    assert called == {}
    # what the grader asks for by name (a lesson's Value, a library function beside the
    # answer) is its own question, not the student's answer
    session = InProcess({})
    relu = session.apply(nn_from_scratch.model.relu, (jnp.ones(3),), {})
    assert relu.shape == (3,) and session.called == []


def test_the_librarys_function_run_by_another_of_the_package_is_seen_too():
    """The library's relu started by the package's own timing module, which a student's
    answer may call: the package calling itself is not the student's own work either."""
    namespace = notebook("import nn_from_scratch.timing\ndef relu(x):\n"
                         "    nn_from_scratch.timing.time_fn(Box.f, x, repeats=1, warmup=0)\n"
                         "    return Box.f(x)\n"
                         "class Box:\n    f = staticmethod(nn_from_scratch.model.relu)")
    status, copied = graded(namespace, "relu", "relu")
    assert copied is not None and copied.name == "relu", copied
    called = {}
    answers.watched(lambda: nn_from_scratch.timing.time_fn(
        namespace["Box"].f, jnp.ones(2), repeats=1, warmup=0), called)
    assert "nn_from_scratch.model.relu" in called


def test_watched_is_bounded_raises_what_the_code_raises_and_leaves_nothing_watching(
        monkeypatch):
    code = notebook("import nn_from_scratch.params as p\n"
                    "def three():\n    p.count_params([])\n    p.count_params([])\n"
                    "    nn_from_scratch.model.relu(1)\n"
                    "def fails():\n    nn_from_scratch.model.relu(1)\n    raise KeyError('x')")
    monkeypatch.setattr(answers, "CALLED_MOST", 1)
    called = {}
    answers.watched(code["three"], called)
    assert list(called) == ["nn_from_scratch.params.count_params"]
    called = {}
    with pytest.raises(KeyError):
        answers.watched(code["fails"], called)
    assert list(called) == ["nn_from_scratch.model.relu"]  # what ran before it raised
    assert sys.getprofile() is None and answers._watching[0] is None
    monkeypatch.undo()
    package = sum(open(module.__file__).read().count("def ") for name, module in
                  list(sys.modules.items()) if name.startswith("nn_from_scratch.") and
                  "grade" not in name and "exercises" not in name and
                  getattr(module, "__file__", None))
    assert package < answers.CALLED_MOST  # no answer can push its twin out of the list


def test_a_reply_names_what_was_called_and_the_grader_keeps_only_bounded_strings():
    session = InProcess({})
    session._receive({"value": 1, "called": ["nn_from_scratch.model.relu", 7, "x" * 1000]
                      + [f"f{i}" for i in range(5000)]})
    assert session.called[0] == "nn_from_scratch.model.relu"
    assert all(isinstance(name, str) and len(name) <= 200 for name in session.called)
    assert len(session.called) <= answers.CALLED_MOST
    assert called_twin("relu", ["relu"], "not a list") is None
    assert called_twin("relu", ["relu"], ["nn_from_scratch.params.count_params"]) is None
    # (the library's predict reaches its relu: a twin, as the reading of the source has it)
    assert called_twin("relu", ["relu"], ["nn_from_scratch.model.predict"]).name == "predict"


STORE = ("class Box:\n    pass\ndef box():\n    return Box\n"
         "box().f = nn_from_scratch.model.relu\nbox().p = nn_from_scratch.model.predict\n")
ROUND_TWENTY_THREE = {  # the library's function behind round twenty-two's store, each way
    # a wrapper written in C: the library's relu started from the grader's own line
    "functools.partial": ("relu", "relu", "import functools\nrelu = functools.partial(Box.f)"),
    # (07.1's check runs relu under jit, which refuses a staticmethod: 07.2's runs as written)
    "staticmethod": ("random_layer_params", "random_layer_params", (
        "box().r = nn_from_scratch.params.random_layer_params\n"
        "random_layer_params = staticmethod(Box.r)")),
    "jax.tree_util.Partial": ("relu", "relu", "relu = jax.tree_util.Partial(Box.f)"),
    "a property as __call__": ("relu", "relu", (
        "class Relu:\n    __call__ = property(lambda self: Box.f)\nrelu = Relu()")),
    # refuses the grader's jit of it (a question that fails), then answers as written
    "refused under jit, then the library": ("predict", "predict", (
        "state = [0]\ndef refuse(params, image):\n    state[0] = 1\n"
        "    raise TypeError('this is not a valid JAX type')\n"
        "def pick(self):\n    if state[0]:\n        state[0] = 0\n        return Box.p\n"
        "    return refuse\nclass Predict:\n    __call__ = property(pick)\n"
        "predict = Predict()")),
}


@pytest.mark.parametrize("form", ROUND_TWENTY_THREE)
def test_round_twenty_threes_wrappers_are_seen_when_they_run(form):
    checker, name, source = ROUND_TWENTY_THREE[form]
    _, copied = graded(notebook(STORE + source), checker, name)
    assert copied is not None and copied.doubt == "called", copied


def test_what_a_question_that_failed_had_called_counts():
    """Round twenty-three: compiled ahead inside a question that then failed on purpose (its
    reply an error, which carried nothing), and run compiled by the next."""
    namespace = notebook(STORE + (
        "compiled = {}\ndef predict(params, image):\n"
        "    k = (tuple((w.shape, b.shape) for w, b in params), image.shape)\n"
        "    if k in compiled:\n        return compiled[k](params, image)\n"
        "    compiled[k] = jax.jit(Box.p).lower(params, image)\n"
        "    raise ValueError('not yet')"))
    session = InProcess(namespace)
    predict = session.lookup("predict")
    params = nn_from_scratch.params.init_network_params([3, 4, 2], jax.random.key(0))
    with pytest.raises(ValueError):
        predict(params, jnp.ones(3))
    assert "nn_from_scratch.model.predict" in session.called


def test_a_jit_of_the_library_warmed_in_a_cell_is_traced_again_where_the_grader_watches():
    """Round twenty-three: ``fast = jax.jit(Box.f)`` warmed for the check's sizes ran no Python
    of the library when the check called it. The graded kernel drops what was compiled at
    each check's first question; and relu's matrix now has a drawn shape."""
    namespace = notebook(STORE + "fast = jax.jit(Box.f)\ndef relu(x):\n    return fast(x)\n")
    check.relu(namespace["relu"])  # warmed for every size of the check (in class's inputs)
    kept = InProcess(namespace)  # (a test's process keeps its compiled programs)
    check_here(kept, check.relu, ["relu"], None)
    assert called_twin("relu", ["relu"], kept.called) is None  # unseen: nothing traced
    dropped = InProcess(namespace, afresh=True)  # as in the graded kernel
    check_here(dropped, check.relu, ["relu"], None)
    assert called_twin("relu", ["relu"], dropped.called) is not None


def test_a_check_compiles_quickly_and_leaves_the_lessons_cells_nothing_it_compiled(monkeypatch):
    """A graded kernel answers each question with most of XLA's optimizations off (compiling the
    student's code for drawn sizes was most of a check's cost), the flag as it was after; what
    the check compiled is dropped when it ends, so that the lesson's later cells run programs
    compiled as on the student's own machine."""
    namespace = notebook("seen = []\ndef relu(x):\n    seen.append(jax.config.read("
                         f"{answers.QUICK_COMPILES!r}))\n    return jnp.maximum(x, 0)\n")
    dropped = []
    monkeypatch.setattr(answers, "_clear_compiled", lambda: dropped.append(len(namespace["seen"])))
    session = InProcess(namespace, afresh=True)
    assert check_here(session, check.relu, ["relu"], SEED).status == "passed"
    assert namespace["seen"] and all(namespace["seen"]), namespace["seen"]
    assert jax.config.read(answers.QUICK_COMPILES) is False
    assert dropped == [0, len(namespace["seen"])]  # at the first question, and at the end
    dropped.clear()
    kept = InProcess(namespace)  # a test's process, whose checker shares its compiled programs
    assert check_here(kept, check.relu, ["relu"], SEED).status == "passed"
    assert dropped == [] and jax.config.read(answers.QUICK_COMPILES) is False


@pytest.mark.parametrize("owner, name", [("jax.config", "update"), ("jax", "clear_caches")])
def test_a_function_of_jax_the_answering_side_calls_runs_nothing_of_the_library_unseen(
        monkeypatch, owner, name):
    """The answering side sets JAX's flag for quick compiles at every question and drops what was
    compiled at a check's first: a notebook that replaced jax.config.update or jax.clear_caches
    ran its own code there, which the watch must see as it sees the answer's (07.1 with the
    library's relu called from the replacement, the answer itself the student's)."""
    monkeypatch.setattr(eval(owner), name, getattr(eval(owner), name))  # put back at the end
    source = (STORE + f"_original = {owner}.{name}\n"
              "def _replacement(*args):\n"
              f"    if args in ((), ({answers.QUICK_COMPILES!r}, True)):  # not JAX's own calls\n"
              "        Box.f(jnp.ones(2))\n    return _original(*args)\n"
              f"{owner}.{name} = _replacement\n"
              "def relu(x):\n    return jnp.maximum(x, 0)\n")
    session = InProcess(notebook(source), afresh=True)
    check_here(session, check.relu, ["relu"], SEED)
    assert called_twin("relu", ["relu"], session.called) is not None, session.called


ROUND_TWENTY_FOUR = {
    # the answer's value, encoded for the grader: its __array__ ran the library after the
    # watch had stopped (a jax.Array of the notebook's own class)
    "a lazy jax.Array": ("relu", "relu", (
        "import numpy as np\nclass Lazy(jax.Array):\n    __module__ = 'jax_lazy'\n"
        "    dtype = np.dtype('float32')\n    is_fully_addressable = True\n"
        "    weak_type = False\n    def __init__(self, thunk):\n        self.thunk = thunk\n"
        "    def __array__(self, dtype=None, copy=None):\n"
        "        return np.asarray(self.thunk())\n"
        "def relu(x):\n    return Lazy(lambda: Box.f(x))")),
    # the answer's name, read for the grader's handle: it warmed a jit of the library there
    "a __name__ that compiles": ("relu", "relu", (
        "fast = jax.jit(Box.f)\nclass Relu:\n    @property\n    def __name__(self):\n"
        "        fast(jnp.ones(3))\n        return 'relu'\n"
        "    def __call__(self, x):\n        return fast(x)\nrelu = Relu()")),
}


@pytest.mark.parametrize("form", ROUND_TWENTY_FOUR)
def test_what_the_answer_runs_while_it_is_encoded_is_watched(form):
    checker, name, source = ROUND_TWENTY_FOUR[form]
    session = InProcess(notebook(STORE + source), afresh=True)
    check_here(session, getattr(check, checker), [name], SEED)
    assert called_twin(checker, [name], session.called) is not None, session.called


@pytest.mark.skipif(hasattr(sys, "monitoring"), reason="Python's profiler: 3.11's watch")
def test_a_watch_switched_off_at_the_recursion_limit_is_said():
    """Round twenty-four: Python unsets a profiler that raises, and one call at the recursion
    limit makes the grader's raise; the rest of the question ran unwatched (6/7)."""
    namespace = notebook(STORE + (
        "def deep(n=0):\n    try:\n        return deep(n + 1)\n"
        "    except RecursionError:\n        return n\n"
        "def relu(x):\n    deep()\n    return Box.f(x)"))
    session = InProcess(namespace)
    check_here(session, check.relu, ["relu"], SEED)
    copied = called_twin("relu", ["relu"], session.called)
    assert copied is not None and copied.doubt in ("unwatched", "called"), session.called
    assert "switched off the grader's watch" in Copy("", "relu", "unwatched").message
    assert sys.getprofile() is None


COUNT = ("import nn_from_scratch.params as p\nclass Box:\n    pass\ndef box():\n    return Box\n"
         "box().count = lambda sizes: p.count_params(p.init_network_params(sizes, "
         "jax.random.key(0)))\n")
ROUND_TWENTY_SIX = {
    # threads: Python 3.11's profiler is one thread's; the library ran in another (6/7)
    "numpy.testing.run_threaded": ("parameter_count", "n_params", COUNT + (
        "import numpy as np\ndef n_params(sizes):\n    out = []\n"
        "    np.testing.run_threaded(lambda: out.append(Box.count(sizes)), max_workers=1)\n"
        "    return out[0]")),
    "a thread started in a cell, fed by a queue": ("parameter_count", "n_params", COUNT + (
        "import queue, threading\nasked, answered = queue.Queue(), queue.Queue()\n"
        "def work():\n    while True:\n        answered.put(Box.count(asked.get()))\n"
        "threading.Thread(target=work, daemon=True).start()\n"
        "def n_params(sizes):\n    asked.put(sizes)\n    return answered.get(timeout=60)")),
    "a thread started below threading": ("parameter_count", "n_params", COUNT + (
        "import _thread, queue\nasked, answered = queue.Queue(), queue.Queue()\n"
        "def work():\n    while True:\n        answered.put(Box.count(asked.get()))\n"
        "_thread.start_new_thread(work, ())\n"
        "def n_params(sizes):\n    asked.put(sizes)\n    return answered.get(timeout=60)")),
    # a checker's helper run by JAX's or NumPy's code on the student's behalf (7/7, both Pythons)
    "a checker's helper through tree_map": ("predict", "predict", (
        "import numpy as np\nfrom nn_from_scratch.exercises.pmap import mlp_loss_and_grads\n"
        "class Box:\n    pass\ndef box():\n    return Box\nbox().ref = mlp_loss_and_grads\n"
        "def predict(params, image):\n    params = [(np.asarray(w), np.asarray(b)) for w, b in "
        "params]\n    x, k = np.asarray(image)[None], params[-1][1].shape[0]\n"
        "    return jnp.asarray([-jax.tree_util.tree_map(Box.ref, params, x, np.eye(k)[j][None],"
        " is_leaf=lambda t: True)[0] for j in range(k)], jnp.float32)")),
    "a checker's helper through np.vectorize": ("predict", "predict", (
        "import numpy as np\nfrom nn_from_scratch.exercises.pmap import mlp_loss_and_grads\n"
        "class Box:\n    pass\ndef box():\n    return Box\nbox().ref = mlp_loss_and_grads\n"
        "def predict(params, image):\n    params = [(np.asarray(w), np.asarray(b)) for w, b in "
        "params]\n    x, k = np.asarray(image)[None], params[-1][1].shape[0]\n"
        "    run = np.vectorize(Box.ref, excluded={0, 1, 2}, otypes=[object])\n"
        "    return jnp.asarray([-run(params, x, np.eye(k)[j][None])[0] for j in range(k)],"
        " jnp.float32)")),
}


@pytest.fixture
def kernels_threads():
    """The graded kernel's thread watch (3.11), undone after: a test's process is not a kernel."""
    import threading
    yield
    threading.setprofile(None)
    answers._KERNELS_THREADS.clear()
    answers._STARTED.clear()


@pytest.mark.parametrize("form", ROUND_TWENTY_SIX)
def test_the_library_run_in_a_thread_or_by_a_library_is_seen(form, kernels_threads):
    """Red team, round twenty-six. The grader's answers come into the kernel before the
    notebook runs, so the cells run after the session is made, as in a graded kernel."""
    checker, name, source = ROUND_TWENTY_SIX[form]
    namespace = {"jax": jax, "jnp": jnp, "nn_from_scratch": nn_from_scratch}
    session = InProcess(namespace, afresh=True)
    exec(compile(source, "<cell>", "exec"), namespace)
    result = check_here(session, getattr(check, checker), [name], SEED)
    assert result.status == "passed", result.line  # its values are the library's
    copied = called_twin(checker, [name], session.called)
    unseen = form == "a thread started below threading" and not hasattr(sys, "monitoring")
    assert copied is not None and copied.doubt == ("unwatched" if unseen else "called"), (
        session.called)


def test_an_honest_thread_of_the_notebooks_own_costs_nothing(kernels_threads):
    namespace = {"jax": jax, "jnp": jnp, "nn_from_scratch": nn_from_scratch}
    session = InProcess(namespace, afresh=True)
    exec(compile("import threading, time\nthreading.Thread(target=time.sleep, args=(30,), "
                 "daemon=True).start()\ndef relu(x):\n    return jnp.maximum(0, x)",
                 "<cell>", "exec"), namespace)
    result = check_here(session, check.relu, ["relu"], SEED)
    assert result.status == "passed" and not session.called, session.called
