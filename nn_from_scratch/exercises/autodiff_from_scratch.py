"""Checkers for lesson 03, autodiff from scratch: the student completes a scalar reverse mode.

The reference is the library's engine, :mod:`nn_from_scratch.autodiff`, whose
grads equal ``jax.grad``'s on every function used here (the tests check it);
it answers in microseconds where tracing ``jax.grad`` would take most of a
second. These checkers build small graphs of its Values, hand them to the
student's functions, and compare what comes back. To name a mistake they also
run the usual wrong versions (a swapped rule, ``=`` instead of ``+=``, the
forward order, a missing ``root.grad = 1``) and say which one the answer
matches. Where an exercise builds on an earlier one that the student has not
got right yet, the check says "finish/fix 03.N first" rather than blaming the
exercise in front. Since the Values handed over are the library's, their operators and
methods run the library's rules: a check counts the rule the exercise asks for when anyone
calls it while the answer runs, the library's own Values included (red team, round twelve:
``mul`` as ``a * b``, ``tanh`` as ``a.tanh()``, ``backward`` through the library's ``grad``
earned every point).
"""
import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import autodiff
from ..i18n import N_, _
from . import _fixtures
from ._calls import Hints, call, finish_first, library_name, nudged
from ._compare import expect_own_code
from ._core import Mistake, NotDone, exercise
from ._hints import summary
from ._remote import beside

LESSON = "03_autodiff_from_scratch"


# (name, function, point): scalar functions written once, for Values and for jax.grad alike
# (in _fixtures, so that a grader can hand them to the student's code in its own kernel).
Case = tuple[str, Callable[..., Any], tuple[float, ...]]
GRAPHS: list[Case] = [
    ("x * x", _fixtures.square, (3.0,)),
    ("(x*y + x) * (x*y)", _fixtures.diamond, (2.0, -1.5)),
    (N_("the neuron tanh(x1 w1 + x2 w2 + b)"), _fixtures.neuron,
     (2.0, 0.0, -3.0, 1.0, 6.881373587019543)),
    (N_("three tanh layers"), _fixtures.deep, (0.5, -1.2)),
    ("b * (b + x), b = a*a", _fixtures.shared, (2.0, 1.0)),
]
# 03.5 also tries a function of one argument, one whose grads are (1, 1), and one of Values
# only (it reads x.data): a grad that handed f to jax.grad, with no Value, passed all the others.
GRAD_CASES: list[Case] = [("x*x*x + 2*x", _fixtures.cubic, (2.0,)),
                          ("x + y", _fixtures.total, (1.5, -2.0)),
                          ("x * y - 3 * x * x", _fixtures.poly, (2.0, 0.5)), *GRAPHS[1:],
                          ("|x| * y", _fixtures.kinked, (-1.5, 2.0))]


def _right_grads(fn: Callable[..., Any], point: tuple[float, ...]) -> np.ndarray:
    """The grads of ``fn`` at ``point``, every argument: jax.grad's, from the library's engine."""
    return np.array(autodiff.grad(fn)(*point))


def _point(index: int, cases: list[Case] = GRAPHS) -> tuple[float, ...]:
    return nudged(cases[index][2], 30 + index + 10 * (cases is GRAD_CASES))


def _graph(index: int, beside_answer: Any = None) -> tuple[list[Any], Any]:
    """A fresh graph of GRAPHS[index] made of the library's Values: (its inputs, its root);
    made where ``beside_answer`` (the student's function) lives, to hand to it."""
    return beside(beside_answer, _fixtures.graph, index, _point(index), beside_answer)


def _blaming_earlier(*names: str) -> Callable[[Callable[[Any], str]], Callable[[Any], str]]:
    """A check that, when it fails, first says "finish/fix 03.N first" where that is the cause.

    Each name is looked up in the student's notebook (the answer's globals) and,
    unless it is the library's, checked with its own exercise's checker
    (:func:`finish_first`): a right backward over an unfinished
    topological_order is not backward's mistake.
    """
    def decorate(check: Callable[[Any], str]) -> Callable[[Any], str]:
        @functools.wraps(check)
        def checked(fn: Any) -> str:
            try:
                return check(fn)
            except (Mistake, NotDone, NotImplementedError):
                for name in names:
                    finish_first(fn, name, _CHECKERS[name])
                raise
        return checked
    return decorate


def _as_numbers(values: Any, n: int, what: str) -> np.ndarray:
    """A tuple of n plain numbers from the student, or a Mistake that says what it got."""
    if values is Ellipsis:
        raise NotDone("local_grads is still `...`")
    if not isinstance(values, (tuple, list)):
        raise Mistake(_("{what} should be a tuple with one number per parent, e.g. "
                        "{value} (mind the comma); got {summary_values}").format(
                          what=what, value='(g,)' if n == 1 else '(ga, gb)',
                          summary_values=summary(values)))
    if len(values) != n:
        raise Mistake(_("{what} has {len_values} entries; it needs one per parent: {n}").format(
                          what=what, len_values=len(values), n=n))
    if any(hasattr(v, "data") and not isinstance(v, np.generic | np.ndarray) for v in values):
        # (NumPy's numbers have a .data too: np.float64(b.data) is a plain number, a student's
        # walk of round twelve found it refused as a Value)
        raise Mistake(_("{what} holds Values; local gradients are plain numbers: use "
                        ".data (e.g. b.data, not b), or the graph would grow inside the "
                        "rule").format(what=what))
    try:
        return np.array([float(v) for v in values])
    except (TypeError, ValueError):
        raise Mistake(_("{what} should hold numbers; got {summary_values}").format(
                          what=what, summary_values=summary(values))) from None


def _output(out: Any, what: str, parents: tuple[Any, ...], data: float, formula: str,
            given_data: tuple[float, ...]) -> Any:
    """The student's new Value, checked for its attributes, its parents and its number; and
    its parents as they were handed over (``given_data``, grads 0)."""
    for name, parent, was in zip("ab", parents, given_data):
        if not math.isclose(float(parent.data), was, rel_tol=1e-12, abs_tol=0.0):
            # a student's walk: a.data = math.tanh(a.data) before building the result
            raise Mistake(_("{what} changed {name}.data from {was} to {now:.6g}: leave the "
                            "inputs as they are and put the result in a new Value").format(
                              what=what, name=name, was=was, now=float(parent.data)))
        if float(parent.grad) != 0.0:
            raise Mistake(_("{what} set {name}.grad to {now:.6g}: the forward pass leaves "
                            "every grad at 0; backward fills them in").format(
                              what=what, name=name, now=float(parent.grad)))
    for attribute in ("data", "parents", "local_grads"):
        if not hasattr(out, attribute):
            raise Mistake(_("{what} returned {summary_out}, with no .{attribute}; "
                            "return a Value(data, parents=..., local_grads=...)").format(
                              what=what, summary_out=summary(out), attribute=attribute))
    given = tuple(out.parents) if isinstance(out.parents, (tuple, list)) else ()
    if len(given) != len(parents) or any(g is not p for g, p in zip(given, parents)):
        raise Mistake(_("parents should be {value}: the input Values, in order, so that "
                        "backward can reach them").format(
                          value='(a, b)' if len(parents) == 2 else '(a,)'))
    # float32's precision is enough (jnp.tanh's t is 1.7e-8 from math.tanh's; a student's walk
    # found it refused, the two numbers printed alike): the numbers printed differ where they do
    if not isinstance(out.data, (int, float)) or not math.isclose(out.data, data, rel_tol=1e-6,
                                                                  abs_tol=1e-9):
        digits = next((d for d in (6, 10) if isinstance(out.data, (int, float))
                       and f"{out.data:.{d}g}" != f"{data:.{d}g}"), 17)
        got = f"{out.data:.{digits}g}" if isinstance(out.data, (int, float)) else summary(out.data)
        raise Mistake(_("{what} has data {got}; the forward pass computes {formula} = "
                        "{data}").format(
                          what=what, got=got, formula=formula, data=f"{data:.{digits}g}"))
    return out


def _expect_op(out: Any, what: str, op: str) -> None:
    if getattr(out, "op", None) != op:
        raise Mistake(_("{what} has op {summary_getattr_out}; give it op=\"{op}\", so "
                        "that show() prints how the Value was made").format(
                          what=what, summary_getattr_out=summary(getattr(out, 'op', None)), op=op))


@exercise(LESSON, 1, "mul")
def mul(student_mul: Any) -> str:
    for number, point in enumerate(((2.0, -3.0), (0.5, 4.0), (-1.5, -0.25))):
        a_data, b_data = nudged(point, number)
        a, b = (beside(student_mul, _fixtures.leaf, student_mul, v) for v in (a_data, b_data))
        what = _("mul(a, b) with a.data = {a_data}, b.data = {b_data}").format(
                   a_data=a_data, b_data=b_data)
        out = call(student_mul, a, b, what=what)
        _output(out, what, (a, b), a_data * b_data, "a.data * b.data", (a_data, b_data))
        grads = _as_numbers(out.local_grads, 2, f"local_grads of {what}")
        want = np.array(autodiff.mul(autodiff.Value(a_data), autodiff.Value(b_data)).local_grads)
        if np.allclose(grads, want[::-1]):
            raise Mistake(_("local_grads {tuple_grads} are swapped: d(a*b)/da is b "
                            "(b.data), and d(a*b)/db is a").format(
                              tuple_grads=tuple(grads.tolist())))
        if np.allclose(grads, 1.0):
            raise Mistake("local_grads (1, 1) is the rule of +; for a * b, d(a*b)/da = b "
                          "and d(a*b)/db = a")
        if not np.allclose(grads, want):
            raise Mistake(_("local_grads {tuple_grads} for a = {a_data}, b = {b_data}; "
                            "jax.grad says {tuple_want}: d(a*b)/da = b and d(a*b)/db = a").format(
                              tuple_grads=tuple(grads.tolist()), a_data=a_data,
                              b_data=b_data, tuple_want=tuple(want.tolist())))
        _expect_op(out, what, "*")
    # right: but is it the library's, behind a def or a lambda? (its alias, call refuses)
    expect_own_code(student_mul, (a, b), what, "nn_from_scratch.autodiff", ("mul",),
                    calls=_fixtures.ready_made_calls)
    return N_("a * b, with d(a*b)/da = b and d(a*b)/db = a as jax.grad says, at 3 points")


@exercise(LESSON, 2, "tanh")
def tanh(student_tanh: Any) -> str:
    for x in nudged((0.5, -1.3, 2.0, 0.0), 5):
        a = beside(student_tanh, _fixtures.leaf, student_tanh, x)
        what = _("tanh(a) with a.data = {x}").format(x=x)
        out = _output(call(student_tanh, a, what=what), what, (a,), math.tanh(x),
                      _("t = math.tanh(a.data)"), (x,))
        (got,) = _as_numbers(out.local_grads, 1, f"local_grads of {what}")
        (want,) = autodiff.tanh(autodiff.Value(x)).local_grads
        if x != 0 and np.isclose(got, 1 - x * x):
            raise Mistake(_("got 1 - x² = {got:.4g} at x = {x}: the rule is 1 - "
                            "tanh(x)², written with t = tanh(x), the output, not x").format(
                              got=got, x=x))
        if np.isclose(got, 1 - math.tanh(x)) and x != 0:
            raise Mistake(_("got 1 - t = {got:.4g} at x = {x}: t must be squared, 1 - t²").format(
                              got=got, x=x))
        if not np.isclose(got, want, rtol=1e-5, atol=1e-6):
            raise Mistake(_("local gradient {got:.6g} at x = {x}; jax.grad(jnp.tanh) "
                            "says {want:.6g}. d tanh(x)/dx = 1 - tanh(x)², and t = "
                            "tanh(x)").format(got=got, x=x, want=want))
        _expect_op(out, what, "tanh")
    # right: but is it the library's, behind a def or a lambda? (its alias, call refuses)
    expect_own_code(student_tanh, (beside(student_tanh, _fixtures.leaf, student_tanh, 0.7),), what,
                    "nn_from_scratch.autodiff", ("tanh",), calls=_fixtures.ready_made_calls)
    return N_("tanh(a), with d tanh(a)/da = 1 - t² as jax.grad(jnp.tanh) says, at 4 points")


@exercise(LESSON, 3, "topological order")
def topological_order(student_fn: Any) -> str:
    for index, (name, _fn, _unused) in enumerate(GRAPHS):
        _values, root = _graph(index, beside_answer=student_fn)
        nodes = autodiff.topological_order(root)
        what = _("topological_order(root) for {name}").format(name=_(name))
        got = call(student_fn, root, what=what)
        if not isinstance(got, (list, tuple)):
            raise Mistake(_("{what} returned {summary_got}; return a list of Values").format(
                              what=what, summary_got=summary(got)))
        known = {id(v) for v in nodes}
        if any(id(v) not in known for v in got):
            raise Mistake(_("{what} holds things that are not Values of the graph: "
                            "return the Values themselves (not their data)").format(
                              what=what))
        if len({id(v) for v in got}) < len(got):
            raise Mistake(_("{what} lists a Value twice (there are {len_nodes} Values, "
                            "your list has {len_got}): keep a set of the Values you "
                            "have visited and skip them").format(
                              what=what, len_nodes=len(nodes), len_got=len(got)))
        if len(got) < len(nodes):
            raise Mistake(_("{what} has {len_got} of the {len_nodes} Values: visit "
                            "every parent of every Value, recursively, inputs and "
                            "constants included").format(
                              what=what, len_got=len(got), len_nodes=len(nodes)))
        if not _parents_first(got):
            if _parents_first(got[::-1]):
                raise Mistake(_("{what} is reversed: each Value must come AFTER its "
                                "parents, root last (append a Value once all its "
                                "parents are in); backward will walk it in reverse").format(
                                  what=what))
            raise Mistake(_("in {what} a Value comes before one of its parents: append "
                            "a Value only after visiting all its parents").format(
                              what=what))
    expect_own_code(student_fn, (root,), what, "nn_from_scratch.autodiff",
                    ("topological_order",), calls=_fixtures.ready_made_calls)
    return _("every Value once, parents before children, on {len_GRAPHS} graphs").format(
               len_GRAPHS=len(GRAPHS))


def _parents_first(order: Any) -> bool:
    position = {id(v): i for i, v in enumerate(order)}
    return all(position[id(p)] < position[id(v)] for v in order for p in v.parents)


def _reference_backward(root: autodiff.Value, mistake: str) -> None:
    """The backward pass with one of the usual mistakes."""
    order = autodiff.topological_order(root)
    if mistake == "breadth first":  # each Value passed on when first met from the root
        queue, seen = [root], {id(root)}
        for v in queue:
            for p in v.parents:
                if id(p) not in seen:
                    seen.add(id(p))
                    queue.append(p)
        order = queue[::-1]
    if mistake != "no seed":
        root.grad = 1.0
    for v in (order if mistake == "forward order" else reversed(order)):
        pairs = list(zip(v.parents, v.local_grads))
        if mistake == "first parent":  # v.parents[0].grad += v.local_grads[0] * v.grad
            pairs = pairs[:1]
        elif mistake == "merged parents":  # dict(zip(v.parents, v.local_grads)): x * x once
            pairs = list(dict(pairs).items())
        for parent, local in pairs:
            share = local if mistake == "no chain" else local * v.grad
            parent.grad = share if mistake == "assign" else parent.grad + share


# A mistake is named only if it gives the student's grads on EVERY graph (x * x alone cannot
# tell a grad assigned with = from parents merged in a dict: each gives x one share).
BACKWARD_HINTS = {
    "first parent": N_("only each Value's first parent got its share: pass the grad to every "
                       "parent, for parent, local in zip(v.parents, v.local_grads)"),
    "merged parents": N_("x * x has x twice among its parents, and each is a use with its own "
                         "share: keep both (zip(v.parents, v.local_grads)), never merge them in "
                         "a dict or a set"),
    "assign": N_("a Value used twice got only one use's share: add with +=, never =; the chain "
                 "rule sums over every use"),
    "forward order": N_("grads flowed in the forward order: walk "
                        "reversed(topological_order(root)), so each Value's grad is complete "
                        "before it is passed on"),
    "no chain": N_("multiply the local gradient by the Value's own grad: parent.grad += "
                   "local * v.grad (the chain rule)"),
    "breadth first": N_("a Value passed its grad on before all of its children had passed "
                        "theirs to it (breadth-first from the root): walk "
                        "reversed(topological_order(root)), which reaches each Value only after "
                        "every Value made from it"),
}


def _mistaken_grads(index: int, mistake: str) -> list[float]:
    """The input grads of graph ``index`` after a backward pass with ``mistake``."""
    inputs, root = _graph(index)
    _reference_backward(root, mistake)
    return [v.grad for v in inputs]


def _run_backward(student_backward: Any, root: autodiff.Value, what: str) -> Any:
    """The student's ``backward(root)``, through :func:`call`; what it returns (rightly
    nothing: the grads are left in the Values)."""
    returned = []

    def ran(r: autodiff.Value) -> bool:
        returned.append(student_backward(r))
        return True
    plain = callable(student_backward) and not library_name(student_backward)
    call(ran if plain else student_backward, root, what=what, hints={
        "object has no attribute 'grad'": N_(  # a student's walk: the pair's names swapped
            "a number was asked for its .grad: zip(v.parents, v.local_grads) gives (parent, "
            "local) pairs, in that order, so write for parent, local in zip(...)")})
    return returned[0] if returned else None


@exercise(LESSON, 4, "backward")
@_blaming_earlier("topological_order")
def backward(student_backward: Any) -> str:
    answers: list[tuple[str, np.ndarray, np.ndarray]] = []  # (what, the student's input
    # grads, jax.grad's) for every graph
    for index, (name, fn, _unused) in enumerate(GRAPHS):
        inputs, root = _graph(index, beside_answer=student_backward)
        point = _point(index)
        what = _("backward(root) for {name}").format(name=_(name))
        try:
            returned = _run_backward(student_backward, root, what)
        except Mistake:
            if any(not np.allclose(got, want, rtol=1e-4, atol=1e-5)
                   for _what, got, want in answers):
                break  # an earlier graph's wrong grads are the mistake to name
            raise
        got = np.array([float(v.grad) for v in inputs])
        want = _right_grads(fn, point)
        if returned is not None and not (root.grad == 1.0 and np.allclose(got, want, rtol=1e-4,
                                                                          atol=1e-5)):
            # a student's walk: the grads handed back in a dict, the Values' left at 0
            raise Mistake(_("{what} returned {summary_returned} and left the Values' .grad "
                            "wrong: store each grad in its Value (v.grad, parent.grad += ...), "
                            "where the check reads it; backward returns nothing").format(
                                what=what, summary_returned=summary(returned)))
        if root.grad != 1.0 and np.allclose(got, want, rtol=1e-4, atol=1e-5):
            raise Mistake(_("after {what} the inputs' grads are right but root.grad is "
                            "{summary_grad}: leave every Value's .grad in place once it is "
                            "passed on (the root's stays 1.0; the check reads them "
                            "all)").format(what=what, summary_grad=summary(root.grad)))
        if root.grad != 1.0:
            raise Mistake(_("after {what}, root.grad is {summary_grad}; start with "
                            "root.grad = 1.0 (d root / d root = 1), or nothing flows "
                            "back").format(what=what, summary_grad=summary(root.grad)))
        answers.append((what, got, want))
    wrong = [answer for answer in answers
             if not np.allclose(answer[1], answer[2], rtol=1e-4, atol=1e-5)]
    if wrong:
        what, got, want = wrong[0]
        for mistake, hint in BACKWARD_HINTS.items():
            if all(np.allclose(answer[1], _mistaken_grads(index, mistake), rtol=1e-4, atol=1e-5)
                   for index, answer in enumerate(answers)):
                raise Mistake(_("{what}: {hint}").format(what=what, hint=_(hint)))
        raise Mistake(_("{what} gives input grads {tolist}; jax.grad says {tolist2}. In "
                        "reverse topological order, add local * v.grad to each parent's "
                        "grad").format(
                          what=what, tolist=np.round(got, 4).tolist(),
                          tolist2=np.round(want, 4).tolist()))
    # twice on one graph, as the lesson runs it: the root's grad is set, the others add up
    inputs, root = _graph(0, beside_answer=student_backward)
    for _time in range(2):
        _run_backward(student_backward, root, what)
    if root.grad != 1.0:
        raise Mistake(_("after backward(root) twice on one graph, root.grad is {got}: set "
                        "root.grad = 1.0 (d root / d root) rather than add 1.0 to it (+=); "
                        "the other Values' grads are the ones that add up").format(
                            got=summary(root.grad)))
    # on a graph of its own: backward adds to the grads
    expect_own_code(student_backward, (_graph(0, student_backward)[1],), what,
                    "nn_from_scratch.autodiff", ("backward",), calls=_fixtures.ready_made_calls)
    return _("input grads equal jax.grad's on {len_GRAPHS} graphs, Values used more than "
             "once included").format(len_GRAPHS=len(GRAPHS))


GRAD_HINTS: Hints = {
    ("object has no attribute 'tanh'", "'float' object has no attribute",
     "has no attribute data"):  # JAX's number: f was handed to jax.grad
        N_("f got plain numbers: wrap each number in a Value before calling f, so that f builds a "
           "graph"),
    "positional argument": N_("grad(f) should return a FUNCTION of the same numbers as f, "
                              "def grad_f(*numbers), that calls f(*values)"),
}


def _student_grads(grad_fn: Any, point: tuple[float, ...], what: str) -> np.ndarray:
    out = call(grad_fn, *point, what=what, hints=GRAD_HINTS)
    if not isinstance(out, tuple):
        kind = _("a list") if isinstance(out, list) else summary(out)
        if len(point) == 1:
            raise Mistake(_("{what} returned {kind}; return a tuple with one grad per argument, "
                            "tuple(v.grad for v in values), like jax.grad(f, argnums=(0, 1, "
                            "...)) — even for one argument: (14.0,)").format(what=what, kind=kind))
        raise Mistake(_("{what} returned {kind}; return a tuple with one grad per argument, "
                        "tuple(v.grad for v in values), like jax.grad(f, argnums=(0, 1, "
                        "...))").format(what=what, kind=kind))
    if any(hasattr(g, "data") and hasattr(g, "grad") for g in out):  # (NumPy's numbers
        # have a .data too: a student's walk found tuple(np.array(grads)) refused as Values)
        raise Mistake(_("{what} returned Values; return each input Value's .grad, a "
                        "number").format(what=what))
    if len(out) != len(point):
        raise Mistake(_("{what} returned {len_out} gradients for {len_point} arguments: "
                        "one per argument, in order").format(
                          what=what, len_out=len(out), len_point=len(point)))
    try:
        return np.array([float(g) for g in out])
    except (TypeError, ValueError):
        raise Mistake(_("{what} returned {summary_out}; each grad is a number").format(
                          what=what, summary_out=summary(out))) from None


@exercise(LESSON, 5, "your own grad")
@_blaming_earlier("mul", "tanh", "backward")
def grad(student_grad: Any) -> str:
    for index, (name, fn, _unused) in enumerate(GRAD_CASES):
        point = _point(index, GRAD_CASES)
        what = _("grad(f)({point}) for f = {name}").format(
            point=", ".join(map(str, point)), name=_(name))
        grad_fn = call(student_grad, fn, what="grad(f)", hints=GRAD_HINTS)
        if not callable(grad_fn):
            raise Mistake(_("grad(f) returned {summary_grad_fn}; it should return a "
                            "FUNCTION of the same arguments as f, like jax.grad(f)").format(
                              summary_grad_fn=summary(grad_fn)))
        got = _student_grads(grad_fn, point, what)
        want = _right_grads(fn, point)
        if np.allclose(got, want, rtol=1e-4, atol=1e-5):
            # called again at other numbers (a student's walk: a grad_f that made its Values
            # at its first call, and never read the numbers again, passed a second call at
            # the same numbers)
            other = tuple(round(v + 0.75, 3) for v in nudged(point, 90 + index))
            again = _student_grads(grad_fn, other, _("grad(f)({point}) for f = {name}").format(
                point=", ".join(map(str, other)), name=_(name)))
            want_again = _right_grads(fn, other)
            if not np.allclose(again, want_again, rtol=1e-4, atol=1e-5):
                raise Mistake(_("called a second time, at {point}, the function grad(f) "
                                "returned for f = {name} gave {tolist}; jax.grad says "
                                "{tolist2}: make fresh Values from each call's own numbers "
                                "(Values kept from an earlier call keep its numbers, and "
                                "their grads add up)").format(
                                  point=", ".join(map(str, other)), name=_(name),
                                  tolist=np.round(again, 4).tolist(),
                                  tolist2=np.round(want_again, 4).tolist()))
            continue
        raise Mistake(_("{what} gave {tolist}; jax.grad says {tolist2}: make a Value "
                        "per argument, run f on them, call backward on the result, "
                        "return their .grad").format(
                          what=what, tolist=np.round(got, 4).tolist(),
                          tolist2=np.round(want, 4).tolist()))
    # right: but is it the library's grad, called by grad(f) or by the function it returns?
    expect_own_code(student_grad, (fn,), what, "nn_from_scratch.autodiff", ("grad",))
    expect_own_code(grad_fn, point, what, "nn_from_scratch.autodiff", ("grad",))
    return _("equals jax.grad(f, argnums=(0, 1, ...)) on {len_GRAD_CASES} functions").format(
               len_GRAD_CASES=len(GRAD_CASES))


_CHECKERS = {"mul": mul, "tanh": tanh, "topological_order": topological_order,
             "backward": backward}
