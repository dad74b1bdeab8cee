"""Copying the library is pedagogy, not forgery: found in the submitted source, before it runs.

A student can hand in the library's own answer: ``from nn_from_scratch.model
import predict``, ``predict = model.predict``, or a one-line wrapper
``def mul(a, b): return check.autodiff.mul(a, b)``. Its values are right, so no
check of values can tell; the source can. The grader reads the rebuilt notebook
cell by cell, as Python would run it, and keeps what each name is bound to: a
module or object of the package (``import``, ``from ... import``, ``x = a.b``),
or the student's own code. At each check cell it looks at what the cell hands
in: a library object bound by the student's own cells, or a function (or an
expression) of the student's whose code reaches, itself or through the student's
functions it calls, either the exercise's *twin* (the package's function of the
same name: ``model.predict`` for ``predict``) or anything of the checkers'
package (their references). Such an exercise is "the library's own": no points,
and the hint says so. Using the library elsewhere, as the lessons do
(``jax.vmap(predict, ...)`` over the library's ``predict`` in 07.5), is the
student's own work.

What the reading cannot follow earns nothing either: code the student hands in that
runs text as code (``exec``, ``eval``, ``compile``), imports by string (``__import__``,
``importlib.import_module``, ``sys.modules``), reads a namespace (``globals()``,
``vars()``, ``__dict__``, ``__globals__``), sets names by string (``setattr``) or
looks up one of the package's attributes by a computed string (``getattr(model,
"pre" + "dict")``; a constant string is followed like ``model.predict``); and a
statement of the student's that may bind names unseen (``exec(...)`` on its own in a
cell, ``globals()["predict"] = ...``, ``setattr``) puts in doubt every name bound
before it, until one is visibly bound again. A namespace only read
(``print(vars(params))``, ``"relu" in globals()``) puts nothing in doubt
(:func:`.reading.hides_a_binding`).
The reading (:mod:`.reading`) follows imports inside functions, callable objects (a class's body),
``functools.partial`` and lambdas (their arguments and bodies are code), and
tuple assignments. It cannot tell the library's code retyped by hand from the
student's own (see the README).

What the reading loses (the library's function stored through one expression and read
through another: ``box().f = model.relu``, then ``Box.f(x)``, red team, round twenty-two) is
seen when it runs: the kernel names the package's functions the student's code entered while
a check ran it (:func:`.answers.watched`), and :func:`called_twin` makes a :class:`Copy` of
the first that is the exercise's twin.
"""
import dis
import functools
import importlib
import pkgutil
import types
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import nn_from_scratch

from ..i18n import _
from .allowed import outside_how
from .answers import UNWATCHED
from .reaching import reached
from .reading import Hidden, Reader
from .rebuild import Rebuilt
from .release import Release
from .verdicts import check_cells

__all__ = ["Copy", "called_twin", "library_copies", "twins"]

# The package's modules of concepts (the answers' twins live there), not its machinery.
_NOT_CONCEPTS = {"grade", "exercises", "doctor", "notebook_runner", "kernel", "kernel_channel",
                 "cell_outputs", "sandbox", "seccomp", "memory_watch", "i18n", "worker", "plots",
                 "data", "mnist", "timing", "cgroups", "share"}


@dataclass(frozen=True)
class Copy:
    """An exercise that earns nothing for copying: the library's function its code reaches
    (``name``), or what hides what it reaches from the grader (``how``: ``exec``...)."""

    name: str
    how: str = ""
    # why ``name`` is in doubt, if it is: "after" (``how`` ran after its code, not in it) or
    # "anytime" (``how`` may bind names after any cell: a hook, a method Python calls by
    # itself, a namespace kept or handed on), or
    # "reaches" (``how`` reaches any object of the kernel: gc.get_objects, :mod:`.reaching`),
    # "outside" (``how`` is more than an exercise may use: :mod:`.allowed`), or
    # "called" (the handed-in ``how`` called ``name`` while the grader ran it: called_twin)
    doubt: str = ""

    @property
    def message(self) -> str:
        """Why, in the grader's language."""
        if self.doubt == "unwatched":  # round twenty-four: the profiler switched off
            return _("your {how} switched off the grader's watch of what it calls while it "
                     "ran (a recursion to Python's limit, a profiler of its own), so this "
                     "exercise earns nothing; leave that out").format(how=self.how)
        if self.doubt == "called":  # round twenty-two: seen when it ran, not in its source
            return _("your {how} called the library's own {name} when the grader ran it, so "
                     "this exercise earns nothing; write the code itself").format(
                         name=self.name, how=self.how)
        if self.doubt == "reaches":
            return _("{how} reaches any object in the kernel, the grader's own included, so "
                     "{name} earns nothing; leave it out").format(name=self.name, how=self.how)
        if self.doubt == "outside":  # round sixteen: allowed.py
            return _("{how} is more than an exercise may use (an exercise may import JAX, "
                     "NumPy, Optax, Matplotlib and Python's modules for numbers, text, "
                     "collections and time, and read no attribute of Python's own machinery "
                     "such as __func__), so {name} earns nothing; leave it out").format(
                         name=self.name, how=self.how)
        if self.doubt == "anytime":
            return _("{how} may bind names where the grader cannot see, after any cell (a "
                     "hook, a method Python calls by itself, text run as code, a namespace kept "
                     "or handed on), so {name} earns nothing; leave it out").format(
                         name=self.name, how=self.how)
        if self.doubt == "after":  # round ten: "your code for relu uses vars()" when relu's did not
            return _("{how} ran after your code for {name} and may have bound {name} again "
                     "where the grader cannot see, so this exercise earns nothing; leave {how} "
                     "out, or look at names with print").format(name=self.name, how=self.how)
        if self.how:
            return _("your code for {name} uses {how}, which hides what it runs from the "
                     "grader; write the code itself").format(name=self.name, how=self.how)
        return _("this is the library's own {name}; write your own").format(name=self.name)


# checkers whose answer the package has under another name (07.6's n_params answered as
# count_params(init_network_params(sizes, key)): a red team, round sixteen, 1 point), or
# computes by its own code (07.3's init_network_params as conv's init_cnn_params with no
# convolution, rescaled: round twenty, 1 point)
_ALSO_NAMED = {"parameter_count": {"count_params"}, "init_network_params": {"init_cnn_params"}}


def twins(names: set[str]) -> list[Any]:
    """The package's functions named as ``names`` (the checker's, and what the cell hands in),
    and those of :data:`_ALSO_NAMED`; then its public functions whose code reaches one of
    them, which answer it under another name (07.4's predict answered by the library's
    batched_predict, ``vmap(predict)``, of one row: round nineteen, 1 point)."""
    return list(_twins(frozenset(names)))


@functools.cache
def _twins(names: frozenset[str]) -> tuple[Any, ...]:
    names = names.union(*(_ALSO_NAMED.get(name, set()) for name in names))
    modules = [importlib.import_module(f"nn_from_scratch.{module.name}")
               for module in pkgutil.iter_modules(nn_from_scratch.__path__)
               if not module.name.startswith("_") and module.name not in _NOT_CONCEPTS]
    found = [getattr(loaded, name) for loaded in modules for name in sorted(names)
             if callable(getattr(loaded, name, None))]
    callers = [value for loaded in modules for name, value in sorted(vars(loaded).items())
               if not name.startswith("_") and callable(value) and _reaches(value, found)
               and not any(value is twin for twin in found)]
    return tuple(found + [value for i, value in enumerate(callers)
                          if not any(value is other for other in callers[:i])])


def _reaches(value: Any, targets: list[Any], depth: int = 6,
             seen: set[int] | None = None) -> bool:
    """Whether ``value``, a function of the package, is one of ``targets`` or reaches one:
    what it wraps (``__wrapped__``, a ``partial``'s function), and the package's functions its
    code names, followed ``depth`` calls deep."""
    seen = set() if seen is None else seen
    while value is not None and id(value) not in seen:
        seen.add(id(value))
        if any(value is target for target in targets):
            return True
        code = getattr(value, "__code__", None)
        if code is not None and depth > 0 and any(
                _reaches(named, targets, depth - 1, seen)
                for named in _named(code, getattr(value, "__globals__", {}))):
            return True
        value = getattr(value, "__wrapped__", None) or getattr(value, "func", None)
    return False


def _named(code: Any, namespace: dict[str, Any]) -> list[Any]:
    """The package's functions that ``code`` (its nested functions' too) loads as globals from
    ``namespace``, and the attributes it reads of the package's modules so loaded
    (``model.predict``): not every name in ``co_names``, where ``root.grad`` is an attribute
    named like autodiff's grad."""
    values, stack = [], [code]
    while stack:
        inner = stack.pop()
        stack += [c for c in inner.co_consts if hasattr(c, "co_names")]
        held: Any = None  # the package's module the instruction before loaded
        for instruction in dis.get_instructions(inner):
            if instruction.opname in ("LOAD_GLOBAL", "LOAD_NAME") and \
                    instruction.argval in namespace:
                held = namespace[instruction.argval]
                values.append(held)
            elif instruction.opname in ("LOAD_ATTR", "LOAD_METHOD") and isinstance(
                    held, types.ModuleType) and held.__name__.split(".")[0] == "nn_from_scratch":
                values.append(getattr(held, instruction.argval, None))
                held = None
            else:
                held = None
    return [value for value in values if callable(value) and not isinstance(value, type) and
            str(getattr(value, "__module__", "")).split(".")[0] == "nn_from_scratch"]


_CHECKERS = "nn_from_scratch.exercises."  # a lesson's checkers: their references compute answers
_HANDED = {"_fixtures", "_placement"}  # ...but for the stand-ins a check hands the answer


def called_twin(checker: str, names: Sequence[str], called: Any) -> Copy | None:
    """What the kernel saw the student's code enter while a check ran it (``called``, the
    package's functions by module and qualified name: :func:`.answers.watched`): the
    :class:`Copy` of the first that is a twin of the check's or a lesson's checker's own (its
    references compute the answers), or None. What the reading of
    the source cannot follow (the library's ``relu`` stored as ``box().f`` and called as
    ``Box.f(x)``: red team, round twenty-two) is caught when it runs."""
    if not isinstance(called, list) or not called:
        return None
    known = {f"{twin.__module__}.{twin.__qualname__}": twin
             for twin in twins({checker, *names}) if hasattr(twin, "__qualname__")}
    how = names[0] if names else checker
    if UNWATCHED in called:
        return Copy("", how, "unwatched")
    for name in called:
        if isinstance(name, str) and name in known:
            return Copy(known[name].__name__, how, "called")
        if isinstance(name, str) and name.startswith(_CHECKERS) and \
                name.split(".")[2] not in _HANDED:  # a checker's own code (a reference)
            return Copy(name.removeprefix("nn_from_scratch."), how, "called")
    return None


def library_copies(rebuilt: Rebuilt, release: Release) -> dict[str, Copy]:
    """Exercise id -> the :class:`Copy` its handed-in code is (see the module's docstring);
    exercises of the student's own work are left out."""
    reader, copies = Reader(), {}
    checks = {c.index: c for c in check_cells(rebuilt)}
    for index, (cell, placed) in enumerate(zip(rebuilt.nb.cells, rebuilt.placed)):
        if cell.cell_type != "code":
            continue
        if index in checks:
            check = checks[index]
            targets = twins({check.checker, *check.names})
            for name in check.names:
                value = reader.bound.get(name)
                found = reader.reaches(reader.code[name], targets) if name in reader.code \
                    else None
                if found is None and name in reader.by_student:
                    found = value  # bound by the student to the package's object itself
                if how := reader.in_doubt(name):
                    copies[check.exercise] = Copy(name, how, "reaches" if reached(how)
                                                  else "outside" if outside_how(how)
                                                  else "anytime" if reader.always else "after")
                elif isinstance(found, Hidden):
                    copies[check.exercise] = Copy(name, found.how)
                elif found is not None:
                    copies[check.exercise] = Copy(getattr(found, "__name__", name))
            continue
        student = placed.released is None or placed.released.role == "exercise"
        reader.read(cell.source, student)
    return copies
