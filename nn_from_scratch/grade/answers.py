"""The kernel's side of a check that the grader decides: it answers one question at a time.

Before a submission's notebook runs, the grader puts an :class:`Answers` into its
kernel (``_nn_from_scratch_answers``). At each check, the checker runs in the
grader's own process and asks, through :mod:`nn_from_scratch.exercises._remote`,
for what it needs from the student's code:

- ``lookup``: the object the check cell names (``predict``), from the notebook;
- ``call``: call an object with arguments, the grader's fresh inputs;
- ``getattr``: an attribute of an object (a Value's ``.data``);
- ``apply``: call a function of the package, JAX or NumPy named by the grader
  (``jax.jit`` of the student's function, a lesson's ``Value``, a stand-in);
- ``global``: what the student's function calls by a name (``finish 07.2 first``).

Each answer is plain data (:mod:`nn_from_scratch.wire`) or a handle to an object that stays
here. While a question runs the student's code, Python (its profiler, or ``sys.monitoring``)
notes each function of the package's own concepts that starts (not the grader's machinery,
nor what the grader asked for by name):
``{"value": ..., "called": ["nn_from_scratch.model.relu"]}``. The grader reads it as one more
sign of the library's answer handed in (:func:`.copying.called_twin`), one the reading of the
source can miss (red team, round twenty-two: the library's ``relu`` stored through
``box().f = ...`` and called as ``Box.f(x)``, 6 of lesson 07's 7 points).
The answers come back as the value of a Jupyter *user expression* on the
shell channel, so nothing the notebook prints or displays is read for them. This
module decides nothing: a kernel that changes it can only answer wrongly, which
is a wrong answer, or say less of what it called (the reading of the source, which no kernel
changes, comes first: :mod:`.copying`). It imports nothing of the package but
:mod:`nn_from_scratch.wire`.
"""
import contextlib
import json
import os
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

from ..wire import Handle, decode, encode, encode_error, reference

__all__ = ["MIME", "Answers", "Reply"]

MIME = "application/vnd.nn-from-scratch.answer+json"
# the package's functions an answer names at most (the grader reads no more): more than the
# package has (415 defs), so that calling others first cannot push the twin out of the list
CALLED_MOST = 1024
# said instead of a function's name when the watch could not see all of a question
UNWATCHED = "<unwatched>"
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
# the grader's machinery in the kernel: never one of the library's answers, so never named
# (the checkers' own modules are named: exercises/mlp_from_scratch.py computes references)
_MACHINERY = tuple(_PACKAGE + part for part in ("grade" + os.sep, "wire" + os.sep, "i18n.py"))
# ...and the checkers' helpers, named only when the student's own code calls one itself: some
# compute references (_compare's mlp_loss_and_grads is a whole forward pass, 07.4 from its
# loss: red team, round twenty-five), others are stand-ins a check hands the answer
_HELPERS = _PACKAGE + "exercises" + os.sep + "_"
_HERE = os.path.abspath(__file__)  # what this module starts itself is the grader's question
# where the package and the libraries it runs on live (code that is not the student's)
_INSTALLED = tuple(dict.fromkeys(
    [_PACKAGE, *(os.path.abspath(p) + os.sep for p in (
        sys.prefix, sys.base_prefix, sys.exec_prefix, *sys.path) if p and os.path.isdir(p)
        and os.path.abspath(p) not in ("/", os.path.abspath(os.getcwd())))]))


def watched(run: Callable[[], Any], called: dict[str, None], asked: bool = False) -> Any:
    """``run()``, noting in ``called`` the package's functions that start meanwhile (from the
    student's code, JAX's on its behalf, ``vmap(model.predict)``, or the package's own), by
    module and qualified name, at most :data:`CALLED_MOST`; ``called`` holds them whatever
    ``run`` raises. ``asked``: ``run`` calls a function of the package the grader named
    (``apply``), whose own work is the grader's: only what starts below the student's code it
    calls is noted (:func:`_students_below`). Any other question calls the student's object,
    and all that starts then is that object's doing: ``functools.partial(model.relu)``
    starts the library's relu from this module's own line (red team, round twenty-three).
    A watch switched off meanwhile is noted as :data:`UNWATCHED`.

    Where Python has ``sys.monitoring`` (3.12+), each piece of code is looked at once and
    every one outside the package is switched off for good (``DISABLE``), so that the
    student's code and JAX's run at full speed; Python 3.11's profiler calls back at every
    function. Lesson 07's seven checks on fresh draws, grader and answers in one process, each
    way in a process of its own, twice (2026-12-01): 1.12-1.13x their time unwatched on 3.11,
    1.01-1.05x on 3.13."""
    if _monitor():
        _watching[0] = (called, asked)
        try:
            return run()
        finally:
            _watching[0] = None

    previous = sys.getprofile()
    _watching[0] = (called, asked)
    sys.setprofile(_profile)
    try:
        return run()
    finally:
        _watching[0] = None
        if sys.getprofile() is not _profile:  # Python unsets a profiler that raised (called
            called[UNWATCHED] = None          # at the recursion limit), and jax.profiler sets
        sys.setprofile(previous)              # its own: what ran after was unwatched (round 24)
        if _unwatched_threads():
            called[UNWATCHED] = None


def _profile(frame: Any, event: str, _arg: Any) -> None:
    """Python's profiler (3.11, or where ``sys.monitoring``'s tool is another's): the asking
    thread's during a question, and every thread's the notebook starts (:func:`_watch_threads`)."""
    if event == "call":
        _note(frame, _watching[0])


# the threads the kernel had before the notebook ran, and those started since through
# threading, which run :func:`_profile` from their start
_KERNELS_THREADS: set[int] = set()
_STARTED: set[int] = set()


def _watch_threads() -> None:
    """Where Python's profiler watches (its hook is one thread's), every thread started through
    ``threading`` from now on runs :func:`_profile` too: numpy.testing.run_threaded ran the
    library's relu where only the asking thread was watched (red team, round twenty-six, 6/7
    of lesson 07 on Python 3.11)."""
    _KERNELS_THREADS.update(sys._current_frames())

    def started(frame: Any, event: str, arg: Any) -> None:  # a new thread's first event
        _STARTED.add(threading.get_ident())
        sys.setprofile(_profile)
        _profile(frame, event, arg)

    threading.setprofile(started)


def _unwatched_threads() -> bool:
    """Whether a thread runs Python that no profiler of this module watches: neither the
    kernel's own nor started through ``threading`` since :func:`_watch_threads`."""
    return bool(_KERNELS_THREADS) and any(
        ident not in _KERNELS_THREADS and ident not in _STARTED
        for ident in sys._current_frames() if ident != threading.get_ident())


_TOOL = 2  # sys.monitoring.PROFILER_ID, the grader's in a graded kernel (nothing else's there)
# what the question being answered has started, and whether the grader asked for it by name
_watching: list[tuple[dict[str, None], bool] | None] = [None]


def _monitor() -> bool:
    """Whether ``sys.monitoring`` (Python 3.12+) watches the package's functions start, for
    the life of the kernel: its tool :data:`_TOOL` claimed, the first time, with a callback
    that switches off each piece of code outside the package the first time it starts."""
    monitoring = getattr(sys, "monitoring", None)
    if monitoring is None:
        return False
    if monitoring.get_tool(_TOOL) == "nn_from_scratch":
        return True
    try:
        monitoring.use_tool_id(_TOOL, "nn_from_scratch")
    except ValueError:  # another's (a profiler the instructor runs): Python's profiler instead
        return False

    # kept here: at exit, modules' globals are emptied
    frame_of, off, holder, unwatched = sys._getframe, monitoring.DISABLE, _watching, UNWATCHED

    def start(_code: Any, _offset: int) -> Any:
        try:
            return None if _note(frame_of(1), holder[0]) else off  # (1: what starts)
        except BaseException:  # noqa: BLE001 - the recursion limit, or the interpreter
            watching = holder[0]  # shutting down: never switched off, and said
            if watching is not None:
                watching[0][unwatched] = None
            return None

    monitoring.register_callback(_TOOL, monitoring.events.PY_START, start)
    monitoring.set_events(_TOOL, monitoring.events.PY_START)
    return True


def _note(frame: Any, watching: tuple[dict[str, None], bool] | None) -> bool:
    """Note the function of ``frame``, just started, in the question's ``watching`` (None: no
    question is being answered) if it is the package's, and not a function the grader asked
    for started by this module; False for code that is not the package's (never worth
    another look). Whoever else starts it counts, the package's own code too:
    ``timing.time_fn(model.relu, x)`` runs the library's relu from the package's timing
    module, and a student's answer may call that."""
    where = frame.f_code.co_filename
    if not where.startswith(_PACKAGE) or where.startswith(_MACHINERY):
        return False
    if watching is None:
        return True
    called, asked = watching
    if asked and not _students_below(frame):
        return True
    if where.startswith(_HELPERS) and (frame.f_back is None or frame.f_back.f_code.co_filename
                                       .startswith(_HELPERS)):
        return True  # a checker's helper run by another (a stand-in the grader handed over):
    # run by JAX's or NumPy's code, tree_map(helper, ...), np.vectorize(helper), it counts (red
    # team, round twenty-six: mlp_loss_and_grads answered 07.1, 07.4 and 07.7 that way)
    if len(called) < CALLED_MOST:
        called[f"{frame.f_globals.get('__name__', '')}.{frame.f_code.co_qualname}"] = None
    return True


def _students_below(frame: Any) -> bool:
    """Whether, between this module's question and ``frame`` (a function of the package that
    starts inside a function the grader asked for: ``apply``), some code is neither the
    package's nor an installed library's: the student's, which the grader's function called
    (a stand-in running the answer) and whose own calls count. What the grader's function
    runs by itself (a checker's helper, the library's ``Value`` of lesson 03) is the grader's."""
    below = frame.f_back
    while below is not None and below.f_code.co_filename != _HERE:
        if not below.f_code.co_filename.startswith(_INSTALLED):
            return True
        below = below.f_back
    return False


def _clear_compiled() -> None:
    """JAX's compiled programs and traces dropped (``jax.clear_caches``): a ``jax.jit`` of the
    library's function warmed in a cell for the sizes a check uses runs no Python of the
    library when called again; dropped, it is traced again, where the grader watches. Its
    cost: what the notebook's later cells compiled is compiled again (lesson 07's solution
    graded alone, ``--jobs 1``, 2 runs each way, 2026-12-01: 18.9-19.9 s a notebook, against
    15.7-17.4 s with nothing dropped; keeping the programs of single operations, JAX's private
    caches aside, saved nothing measurable)."""
    jax = sys.modules.get("jax")
    if jax is not None:
        jax.clear_caches()


# JAX's flag that compiles with most of XLA's optimizations off (its backend's passes at level
# 0, LLVM's costly ones skipped), read at each compile, so it can be set for a question alone
QUICK_COMPILES = "jax_disable_most_optimizations"


@contextlib.contextmanager
def _compiled_quickly() -> Iterator[None]:
    """What a check's question compiles, compiled with XLA's optimizations mostly off, then the
    flag as it was. A check compiles the student's code afresh for sizes drawn for it
    (:func:`_clear_compiled`) and runs it once or twice on small inputs, so the optimizing
    passes were most of its cost; a verdict compares values with tolerances, which optimizing
    does not move (the test suite's processes decide every check at level 0 as well). The
    lesson's own cells compile as the student's machine does: never inside a question, and what
    the check compiled is dropped when it ends (``forget``)."""
    jax = sys.modules.get("jax")
    if jax is None:  # nothing of JAX imported yet: nothing compiled yet either
        yield
        return
    before = jax.config.read(QUICK_COMPILES)
    jax.config.update(QUICK_COMPILES, True)
    try:
        yield
    finally:
        jax.config.update(QUICK_COMPILES, before)


class Reply:
    """One answer; shown to Jupyter as :data:`MIME` (what a user expression returns)."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return {"text/plain": "an answer for the grader", MIME: self.data}


class Answers:
    """Answers the grader's questions about the objects of ``namespace`` (the notebook's)."""

    def __init__(self, namespace: dict[str, Any], afresh: bool = False) -> None:
        """``afresh``: JAX's compiled programs dropped at each check's first question (the
        graded kernel's; a test's process, whose checker shares them, keeps them)."""
        self.namespace, self.afresh = namespace, afresh
        self.objects: dict[int, Any] = {}  # handle -> object (kept alive while the check runs)
        self.handles: dict[int, int] = {}  # id(object) -> handle: one handle per object
        self.fresh = True  # no question of the check under way yet
        if afresh and not _monitor():  # the graded kernel's threads (a test's are its own)
            _watch_threads()

    def handle(self, obj: Any) -> Handle:
        number = self.handles.get(id(obj))
        if number is None or self.objects.get(number) is not obj:
            number = len(self.objects) + 1
            self.objects[number], self.handles[id(obj)] = obj, number
        try:
            name = str(getattr(obj, "__name__", ""))
        except Exception:
            name = ""
        known = reference(obj) if callable(obj) else None  # one of the package's, JAX's...?
        return Handle(id=number, type=type(obj).__name__, name=name[:80],
                      callable=callable(obj), ref=known or "")

    def _value(self, data: Any) -> Any:
        return decode(data, lambda handle: self.objects[handle["id"]], named=True)

    def _global(self, target: Any, name: str) -> Any:
        """What ``target``'s code reaches by the global ``name``, or ``...`` if it uses none."""
        import inspect

        function = inspect.unwrap(target)
        code = getattr(function, "__code__", None)
        if code is None:
            return Ellipsis
        names, stack = set(), [code]
        while stack:
            code = stack.pop()
            names |= set(code.co_names)
            stack += [c for c in code.co_consts if inspect.iscode(c)]
        if name not in names:
            return Ellipsis
        return getattr(function, "__globals__", {}).get(name, Ellipsis)

    def answer(self, request: dict[str, Any]) -> Any:
        op = request["op"]
        if op == "forget":  # the check is over
            self.objects.clear()
            self.handles.clear()
            self.fresh = True
            if self.afresh:  # what it compiled quickly is not for the lesson's later cells
                _clear_compiled()
            return None
        if op == "lookup":
            name = request["name"]
            if name not in self.namespace:
                raise NameError(f"name '{name}' is not defined")
            return self.namespace[name]
        if op == "apply":
            function = self._value({"t": "ref", "v": request["ref"]})
        else:
            function = self.objects[int(request["target"])]
        if op == "getattr":
            return getattr(function, request["name"])
        if op == "global":
            return self._global(function, request["name"])
        args = self._value(request.get("args", {"t": "list", "v": []}))
        kwargs = self._value(request.get("kwargs", {"t": "dict", "k": [], "v": []}))
        if op in ("call", "apply"):
            return function(*args, **kwargs)
        raise ValueError(f"unknown question {op!r}")

    def __call__(self, request: str) -> Reply:
        """Answer ``request`` (JSON): ``{"value": ...}`` (with ``"called"``, the package's
        functions the student's code entered meanwhile, if any) or ``{"error": ...}``, never
        raising."""
        called: dict[str, None] = {}

        def respond(question: Any, first: bool) -> dict[str, Any]:
            # JAX's own functions called here are watched too: a notebook that replaced one
            # (jax.config.update) runs nothing of the library unseen through it
            try:  # the answer encoded while watched as well: its __array__, its __name__
                if first and self.afresh:  # a check's first question: a jit warmed in a cell
                    _clear_compiled()      # is traced again, where the watch sees the library
                with _compiled_quickly() if self.afresh else contextlib.nullcontext():
                    return {"value": encode(self.answer(question), self.handle, named=False)}
            except BaseException as err:  # an interrupt too: the grader asked for it
                return {"error": encode_error(err)}  # (round twenty-four)

        try:
            question = json.loads(request)
            first, self.fresh = self.fresh, False  # (round twenty-three)
            reply = watched(lambda: respond(question, first), called,
                            asked=isinstance(question, dict) and question.get("op") == "apply")
        except BaseException as err:  # (what was called before it raised counts: round 23)
            reply = {"error": encode_error(err)}
        return Reply({**reply, "called": list(called)} if called else reply)
