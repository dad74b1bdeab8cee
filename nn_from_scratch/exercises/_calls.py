"""What a check needs from the student's code: calls, compiled calls, earlier exercises, inputs.

- :func:`call` runs the student's function and turns its errors into hints;
  :func:`fast_call` does it under ``jax.jit`` where it can.
- :func:`finish_first` says "finish 03.3 first" when the function leans on an
  earlier exercise that is not right yet.
- :func:`library_name` tells the package's own function from the student's.
- :func:`generator` and :func:`prng_key` make a check's inputs, and :func:`jittered`,
  :func:`nudged`, :func:`scaled` and :func:`shuffled` vary the ones written out
  in a checker: the same every time in class (``generator(3)`` is
  ``np.random.default_rng(3)``), and, inside :func:`fresh_inputs`, new ones drawn
  for each grading, from a seed that the student's kernel never sees before it is
  called with them (so no answer can be computed ahead and looked up).

Each works on the student's objects themselves (a check in class) and on
:class:`._remote.Remote` ones (the grader's check of a submission), alike.
"""
import contextlib
import contextvars
import inspect
import sys
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np

from ..i18n import _
from ._core import CheckResult, Mistake, NotDone
from ._hints import first_line, summary, the_stubs
from ._remote import Remote, beside

__all__ = ["Hints", "call", "fast_call", "finish_first", "fresh_inputs", "generator", "graded",
           "jittered", "library_name", "names_used", "nudged", "prng_key", "scaled", "shuffled",
           "wrapped"]

_SEED: contextvars.ContextVar[int | None] = contextvars.ContextVar("check_seed", default=None)


@contextlib.contextmanager
def fresh_inputs(seed: int) -> Iterator[None]:
    """Within it, :func:`generator` and :func:`prng_key` draw from ``seed`` too (0 <= seed
    < 2**32)."""
    token = _SEED.set(seed)
    try:
        yield
    finally:
        _SEED.reset(token)


def generator(n: int) -> np.random.Generator:
    """The ``n``-th generator of a check's inputs: ``np.random.default_rng(n)`` in class."""
    seed = _SEED.get()
    return np.random.default_rng(n if seed is None else [seed, n])


def prng_key(n: int) -> Any:
    """The ``n``-th JAX key of a check's inputs: ``jax.random.key(n)`` in class."""
    import jax

    seed = _SEED.get()
    key = jax.random.key(n)
    return key if seed is None else jax.random.fold_in(key, seed)


def graded() -> bool:
    """Are a check's inputs drawn for a grading (inside :func:`fresh_inputs`)?"""
    return _SEED.get() is not None


def jittered(array: Any, n: int, scale: float) -> Any:
    """An input written in a checker (``np.linspace(-6, 6, 12)``): as written in class; when
    graded, each entry moved by up to ``scale`` (a draw of :func:`generator`), its dtype kept."""
    if not graded():
        return array
    array = np.asarray(array)
    return (array + generator(n).uniform(-scale, scale, size=array.shape)).astype(array.dtype)


def scaled(values: tuple[float, ...], n: int, spread: float = 0.2) -> tuple[float, ...]:
    """Times or rates written in a checker: as written in class; when graded, each multiplied
    by a draw between ``1 - spread`` and ``1 + spread``, so that no answer can be looked up."""
    if not graded():
        return values
    factors = generator(n).uniform(1 - spread, 1 + spread, size=len(values))
    return tuple(float(v * f) for v, f in zip(values, factors))


def shuffled(array: Any, n: int) -> Any:
    """An image whose pixels all differ (``np.arange(9).reshape(3, 3)``): as written in class;
    when graded, the same values in another order, still all different."""
    if not graded():
        return array
    array = np.asarray(array)
    return generator(n).permutation(array.ravel()).reshape(array.shape)


def nudged(values: tuple[float, ...], n: int) -> tuple[float, ...]:
    """Test points written in a checker: as written in class; when graded, each moved by up to
    0.25 (a draw of :func:`generator`), zero kept zero, so that no answer can be looked up."""
    if not graded():
        return values
    steps = generator(n).uniform(-0.25, 0.25, size=len(values))
    return tuple(v if v == 0 else round(v + float(step), 3) for v, step in zip(values, steps))


def more_when_graded(cases: tuple[Any, ...], n: int, draw: Callable[[np.random.Generator], Any],
                     count: int = 4) -> tuple[Any, ...]:
    """A check's cases as written in it; in a grading, also ``count`` drawn for that grading with
    ``draw(generator(n))``, so that a table of the written cases (the checker's source is no
    secret) earns nothing. For exercises whose inputs are a few whole numbers."""
    if not graded():
        return cases
    source = generator(n)
    return (*cases, *(draw(source) for _ in range(count)))


def library_name(obj: Any) -> str | None:
    """The name of ``obj`` if it IS one of this package's own objects, else ``None``.

    Identity, not ancestry: ``jax.vmap(predict, ...)`` of the library's ``predict``
    is the student's own work (lesson 07 builds it so), ``batched_predict``
    imported from the library is not. Of a student's object in another process,
    what that process said (the grader judges a copy of the library from the
    submitted source, :mod:`nn_from_scratch.grade.copying`).
    """
    if isinstance(obj, Remote):
        known = str(obj._about.get("ref") or "")
        return (known.rpartition(":")[2].rpartition(".")[2]
                if known.startswith("nn_from_scratch") else None)
    module, name = getattr(obj, "__module__", None) or "", getattr(obj, "__name__", None)
    if module.split(".")[0] != "nn_from_scratch" or not isinstance(name, str):
        return None
    if getattr(sys.modules.get(module), name, None) is obj:
        return name
    # a transformed function the module keeps under a name of its own: pmap_update, whose
    # __name__ is data_parallel_step's (a student's walk handed it in for 11.4)
    return next((attribute for attribute, value in vars(sys.modules.get(module) or
                                                        object()).items() if value is obj), None)


# What a checker looks for in an error message (one sign, or a tuple of alternatives),
# mapped to the hint that explains it; the first entry with a sign in the message wins.
Hints = Mapping[str | tuple[str, ...], str]


def call(fn: Any, *args: Any, what: str, hints: Hints | None = None) -> Any:
    """``fn(*args)`` with the student's mistakes turned into hints.

    ``what`` names the call in messages, e.g. ``"predict(params, image)"``. A
    ``NotImplementedError`` passes through (the stub); any other exception
    becomes a :class:`Mistake` that quotes it (``"<what> raised <its first line>"``),
    or, when that message contains one of the signs in ``hints``, a Mistake
    that says the hint instead, e.g. ``{("inconsistent sizes", "vmap"): "give the
    shared params in_axes None"}``. A ``None`` result (a missing ``return``) is a
    Mistake too, and so is the library's own function handed in instead of one
    the student wrote ("this is the library's own predict, not yours; ...").
    """
    if not callable(fn):
        kind = f"{type(fn).__name__} " if np.isscalar(fn) else ""
        raise Mistake(_("expected a function for {what}; got {value}").format(
            what=what, value=kind + summary(fn)))
    own = library_name(fn)
    if own:
        raise Mistake(_("this is the library's own {name}, not yours; if you wrote one, a later "
                        "cell has imported the library's over it: run your exercise cell "
                        "again, then this check").format(name=own))
    try:
        out = fn(*args)
    except (NotDone, Mistake):
        raise
    except Exception as err:
        if the_stubs(err):
            raise
        message = _("{what} raised {error}").format(what=what, error=first_line(err))
        for signs, hint in (hints or {}).items():
            if any(sign in message for sign in ((signs,) if isinstance(signs, str) else signs)):
                raise Mistake(hint) from None
        raise Mistake(message) from err
    if out is None:
        raise Mistake(_("{what} returned None: did you forget `return`?").format(what=what))
    return out


def wrapped(fn: Any, wrapper: Callable[..., Any], *options: Any) -> Any:
    """``wrapper(fn, *options)``, made where ``fn`` lives (a function of :mod:`._fixtures`
    that runs ``fn`` and says more of what it did); ``fn`` itself if it is no function of the
    student's, for :func:`call` to say what it is."""
    if not callable(fn) or library_name(fn):
        return fn
    return beside(fn, wrapper, fn, *options)


def names_used(code: Any) -> set[str]:
    """The global names a function's code refers to, in its nested functions too."""
    names = set(code.co_names)
    for const in code.co_consts:
        if inspect.iscode(const):
            names |= names_used(const)
    return names


def _global_used(fn: Any, name: str) -> Any:
    """What ``fn`` reaches by the global ``name``, or ``None`` if its code does not use it."""
    if isinstance(fn, Remote):
        found = fn._session.request("global", target=fn._number, name=name)
        return None if found is Ellipsis else found
    code = getattr(inspect.unwrap(fn), "__code__", None)
    if code is None or name not in names_used(code):
        return None  # fn does not use it (or is not Python code we can read)
    return getattr(inspect.unwrap(fn), "__globals__", {}).get(name)


def finish_first(fn: Any, name: str, checker: Callable[[Any], CheckResult]) -> None:
    """Say "finish 03.3 first" when ``fn`` calls the student's own ``name`` and that is not done.

    ``fn``'s globals are the student's notebook: if ``fn``'s code refers to
    ``name`` and ``name`` there is a function that does not pass ``checker`` (its
    own exercise's), raise :class:`NotDone` or :class:`Mistake` naming that
    exercise, so that a check never blames the exercise in front of the student
    for a mistake in an earlier one.
    """
    other = _global_used(fn, name)
    if other is None or library_name(other):
        return
    result = checker(other)
    if result.status == "not done":
        raise NotDone(_("it uses your {name}: finish {exercise} {title} first").format(
            name=name, exercise=result.exercise, title=result.title))
    if result.status == "failed":
        raise Mistake(_("it uses your {name}, which does not pass its own check yet: fix "
                        "{exercise} {title} first ({message})").format(
            name=name, exercise=result.exercise, title=result.title, message=result.message))


def fast_call(fn: Any, *args: Any, what: str, static_argnums: tuple[int, ...] = (),
              hints: Hints | None = None, needs_jit: str = "") -> Any:
    """:func:`call`, but with ``fn`` compiled by ``jax.jit`` first, for checks that stay fast.

    Run as written, a student's function compiles each of its JAX operations for
    every new shape (a hundred small compiles for a gradient); under ``jit`` it is
    one compile per structure of the arguments. If only ``jit`` objects (a
    ``float()`` or an ``if`` on a traced value, say), ``fn`` runs as written
    through :func:`call` and the check judges its answer; any other error is the
    student's own, reported by :func:`call` without running it all again. With
    ``needs_jit`` (a hint), code that works only as written is a :class:`Mistake`
    that says it, for functions the lesson compiles.
    """
    import jax

    if not callable(fn) or library_name(fn):
        return call(fn, *args, what=what)  # "expected a function", "the library's own"
    try:
        out = beside(fn, jax.jit, fn, static_argnums=static_argnums)(*args)
    except (NotDone, Mistake):
        raise
    except NotImplementedError as err:
        if the_stubs(err):
            raise
        return _call_raising(err, args, what, hints)
    except (jax.errors.ConcretizationTypeError, jax.errors.TracerArrayConversionError,
            jax.errors.TracerIntegerConversionError, jax.errors.UnexpectedTracerError,
            jax.errors.NonConcreteBooleanIndexError) as err:
        return _as_written(fn, args, what, hints, needs_jit, err)
    except TypeError as err:
        if NOT_A_JAX_TYPE not in str(err):
            return _call_raising(err, args, what, hints)
        # It returned what jit cannot (a str, a dict of names): run as written, and the
        # check says what it returned.
        return call(fn, *args, what=what, hints=hints)
    except ValueError as err:
        if NUMPY_GOT_A_TRACER not in str(err):
            return _call_raising(err, args, what, hints)
        # A NumPy array filled in a loop (out[i, j] = ...) takes no traced value: fine as
        # written, as lessons say a loop is.
        return _as_written(fn, args, what, hints, needs_jit, err)
    except Exception as err:
        return _call_raising(err, args, what, hints)
    if out is None:
        raise Mistake(_("{what} returned None: did you forget `return`?").format(what=what))
    return out


# What NumPy says when a traced value is stored into one of its arrays under jit.
NUMPY_GOT_A_TRACER = "setting an array element with a sequence"
# What jit says of a function that returns something other than arrays and numbers.
NOT_A_JAX_TYPE = "is not a valid JAX type"


def _as_written(fn: Any, args: tuple[Any, ...], what: str, hints: Hints | None,
                needs_jit: str, err: Exception) -> Any:
    """``fn`` run as written, after ``jit`` objected to it (``err``): its answer is judged."""
    out = call(fn, *args, what=what, hints=hints)
    if needs_jit:
        raise Mistake(needs_jit) from err
    return out


def _call_raising(err: Exception, args: tuple[Any, ...], what: str,
                  hints: Hints | None) -> Any:
    """The student's own error ``err``, reported by :func:`call` without running it again."""
    def raise_it(*_: Any, error: Exception = err) -> Any:
        raise error
    return call(raise_it, *args, what=what, hints=hints)
