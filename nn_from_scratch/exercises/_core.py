"""The machinery every checker shares: results, the ``@exercise`` decorator, the registry.

A checker takes the student's object (a function, an array, a number), tries it
on inputs it makes up, and returns a :class:`CheckResult` that a notebook shows
as one line::

    ✓ 07.3 predict: matches the reference on 5 random networks
    ✗ 07.3 predict: returned shape (128, 10) for one example of shape (784,) — ...
    … 07.3 predict: not done yet (the stub still raises NotImplementedError)

A checker never raises, so a notebook's "Run all" always reaches the end. The
result also carries a machine-readable copy (the MIME type :data:`MIME`) that
``python -m nn_from_scratch grade`` reads back from executed notebooks.
"""
import functools
import importlib
import inspect
import pkgutil
import sys
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from ..i18n import _

__all__ = ["MIME", "STATUSES", "CheckResult", "Exercise", "Hints", "Mistake", "NotDone",
           "all_lessons", "call", "exercise", "expect_close", "expect_shape", "finish_first",
           "lesson_exercises", "reject_known_wrong", "summary"]

MIME = "application/vnd.nn-from-scratch.check+json"
STATUSES = ("passed", "failed", "not done")
_SYMBOLS = {"passed": "✓", "failed": "✗", "not done": "…"}


@dataclass(frozen=True)
class CheckResult:
    """The outcome of one check.

    Attributes:
      exercise: the exercise's id, ``"LL.N"`` (lesson number, exercise number).
      title: what the exercise asks for, e.g. ``"predict"``.
      status: ``"passed"``, ``"failed"`` or ``"not done"``.
      message: what was checked, or what is wrong and a hint for fixing it.
    """

    exercise: str
    title: str
    status: str
    message: str

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    @property
    def line(self) -> str:
        """The one line a student reads: ``✓ 07.3 predict: ...``."""
        return _("{symbol} {exercise} {title}: {message}").format(
            symbol=_SYMBOLS[self.status], exercise=self.exercise, title=self.title,
            message=self.message)

    def __repr__(self) -> str:
        return self.line

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        """What Jupyter shows (the line) and what the grader reads (:data:`MIME`)."""
        return {"text/plain": self.line, MIME: asdict(self)}


class Mistake(Exception):
    """Raised inside a checker for a wrong answer; the message is the hint the student sees."""


class NotDone(Exception):
    """Raised inside a checker when the answer is still the stub."""


@dataclass(frozen=True)
class Exercise:
    """One registered exercise: its id, title, lesson and the checker's name in its module."""

    id: str
    title: str
    lesson: str
    name: str


_REGISTRY: dict[str, list[Exercise]] = {}


def _first_line(err: BaseException, limit: int = 160) -> str:
    text = str(err).strip().splitlines()
    line = f"{type(err).__name__}: {text[0]}" if text else type(err).__name__
    return line if len(line) <= limit else line[:limit - 1] + "…"


def summary(value: Any, limit: int = 60) -> str:
    """A short line about a value a student handed in, never the whole of it.

    ``array of shape (3, 4) float32 [0.1, -2, 3.5, …]``, ``list of 3 items``,
    ``function relu``, ``7.5``. Quoted in hints instead of the value itself: a
    (512, 784) array in a message helps nobody.
    """
    if isinstance(value, (bool, int, float, complex, str, type(None))) or np.isscalar(value):
        text = repr(value.item() if isinstance(value, np.generic) else value)
        return text if len(text) <= limit else text[:limit - 1] + "…"
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        flat = np.asarray(value).ravel()
        head = ", ".join(f"{x:.3g}" if np.issubdtype(flat.dtype, np.number) else str(x)
                         for x in flat[:3].tolist())
        more = ", …" if flat.size > 3 else ""
        return _("array of shape {shape} {dtype} [{values}]").format(
            shape=tuple(value.shape), dtype=value.dtype, values=head + more)
    if isinstance(value, (list, tuple, dict, set)):
        kind, count = type(value).__name__, len(value)
        return (_("{kind} of 1 item").format(kind=kind) if count == 1 else
                _("{kind} of {count} items").format(kind=kind, count=count))
    if callable(value):
        name = getattr(value, "__name__", type(value).__name__)
        return _("function {name}").format(name=name) if "<" not in name else _("a function")
    return type(value).__name__


def _library_name(obj: Any) -> str | None:
    """The name of ``obj`` if it IS one of this package's own objects, else ``None``.

    Identity, not ancestry: ``jax.vmap(predict, ...)`` of the library's ``predict``
    is the student's own work (lesson 07 builds it so), ``batched_predict``
    imported from the library is not.
    """
    module, name = getattr(obj, "__module__", None) or "", getattr(obj, "__name__", None)
    if module.split(".")[0] != "nn_from_scratch" or not isinstance(name, str):
        return None
    return name if getattr(sys.modules.get(module), name, None) is obj else None


Checker = Callable[..., CheckResult]


def exercise(lesson: str, number: int, title: str) -> Callable[[Callable[..., str]], Checker]:
    """Make a checking function into a checker that always returns a :class:`CheckResult`.

    The decorated function takes the student's answers and returns a short
    description of what passed; it raises :class:`Mistake` with a hint for a
    wrong answer and :class:`NotDone` for a stub. Also a stub: an answer that is
    ``...``, or code that raises ``NotImplementedError``. Any other exception
    from the student's code is reported as a failure, never raised.

    Args:
      lesson: the lesson's slug, e.g. ``"07_mlp_from_scratch"``; its first two
        characters are the lesson's number in the exercise id.
      number: the exercise's number within the lesson (1, 2, ...).
      title: a few words naming what the student writes.
    """
    exercise_id = f"{lesson[:2]}.{number}"

    def decorate(check: Callable[..., str]) -> Callable[..., CheckResult]:
        @functools.wraps(check)
        def checker(*answers: Any) -> CheckResult:
            def result(status: str, message: str) -> CheckResult:
                # A message that is a msgid as it stands (a hint without values in it) is
                # translated here; one with values was translated where it was formatted.
                return CheckResult(exercise_id, _(title), status, _(message))
            if any(answer is Ellipsis for answer in answers):
                return result("not done", _("not done yet (the stub's `...` is still there)"))
            try:
                return result("passed", check(*answers))
            except NotDone as err:
                return result("not done", _("not done yet ({reason})").format(reason=_(str(err))))
            except NotImplementedError:
                return result("not done",
                              _("not done yet (the stub still raises NotImplementedError)"))
            except Mistake as err:
                return result("failed", str(err))
            except Exception as err:  # the student's code misbehaved in a way we did not foresee
                return result("failed", _("your code raised {error}").format(
                    error=_first_line(err)))

        registered = _REGISTRY.setdefault(lesson, [])
        if any(e.id == exercise_id for e in registered):
            raise RuntimeError(f"exercise {exercise_id} is registered twice")
        registered.append(Exercise(exercise_id, title, lesson, check.__name__))
        return checker

    return decorate


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
    the student wrote ("this is the library's own predict; write your own").
    """
    if not callable(fn):
        kind = f"{type(fn).__name__} " if np.isscalar(fn) else ""
        raise Mistake(_("expected a function for {what}; got {value}").format(
            what=what, value=kind + summary(fn)))
    own = _library_name(fn)
    if own:
        raise Mistake(_("this is the library's own {name}; write your own").format(name=own))
    try:
        out = fn(*args)
    except (NotImplementedError, NotDone, Mistake):
        raise
    except Exception as err:
        message = _("{what} raised {error}").format(what=what, error=_first_line(err))
        for signs, hint in (hints or {}).items():
            if any(sign in message for sign in ((signs,) if isinstance(signs, str) else signs)):
                raise Mistake(hint) from None
        raise Mistake(message) from err
    if out is None:
        raise Mistake(_("{what} returned None: did you forget `return`?").format(what=what))
    return out


def expect_shape(got: Any, shape: tuple[int, ...], what: str) -> np.ndarray:
    """``got`` as a NumPy array, or a :class:`Mistake` if its shape is not ``shape``."""
    array = np.asarray(got)
    if array.shape != tuple(shape):
        raise Mistake(_("{what} has shape {got}; expected {want}").format(
            what=what, got=array.shape, want=tuple(shape)))
    return array


def expect_close(got: Any, want: Any, what: str, rtol: float = 1e-4, atol: float = 1e-5,
                 hint: str = "") -> None:
    """A :class:`Mistake` unless ``got`` has ``want``'s shape and values (to float rounding).

    ``hint`` is marked for translation where it is written, ``hint=N_("...")`` (or
    ``_("... {x}").format(x=...)`` when it has values), and said in the student's language.
    """
    want = np.asarray(want)
    array = expect_shape(got, want.shape, what)
    if not np.allclose(array, want, rtol=rtol, atol=atol):
        worst = float(np.max(np.abs(array.astype(np.float64) - want)))
        if hint:
            raise Mistake(_("{what} is off by up to {worst:.3g} — {hint}").format(
                what=what, worst=worst, hint=_(hint)))
        raise Mistake(_("{what} is off by up to {worst:.3g}").format(what=what, worst=worst))


def reject_known_wrong(got: Any, wrong: Mapping[str, Any], rtol: float = 1e-5,
                       atol: float = 1e-8, want: Any = None) -> None:
    """A :class:`Mistake` with the hint of the first typical wrong answer that ``got`` equals.

    ``wrong`` maps each hint to the value that mistake gives (a number or an array of
    ``got``'s shape); "equals" is ``np.allclose`` with ``rtol`` and ``atol``. With
    ``want`` (the right answer), a wrong answer that happens to equal it on these
    inputs is skipped. Returns quietly when ``got`` matches none of them.
    """
    for hint, value in wrong.items():
        if np.allclose(got, value, rtol=rtol, atol=atol) and not (
                want is not None and np.allclose(value, want, rtol=rtol, atol=atol)):
            raise Mistake(hint)


def lesson_exercises(lesson: str) -> list[Exercise]:
    """The exercises of ``lesson`` (its slug, e.g. ``"07_mlp_from_scratch"``), in order."""
    _import_all()
    return list(_REGISTRY.get(lesson, []))


def all_lessons() -> list[str]:
    """Every lesson slug that has checkers, in order."""
    _import_all()
    return sorted(_REGISTRY)


@functools.cache
def _import_all() -> None:
    """Import every checker module of this package, so that every exercise is registered."""
    package = importlib.import_module(__package__)
    for module in pkgutil.iter_modules(package.__path__):
        if not module.name.startswith("_"):
            importlib.import_module(f"{__package__}.{module.name}")


def _names_used(code: Any) -> set[str]:
    """The global names a function's code refers to, in its nested functions too."""
    names = set(code.co_names)
    for const in code.co_consts:
        if inspect.iscode(const):
            names |= _names_used(const)
    return names


def finish_first(fn: Any, name: str, checker: Callable[[Any], CheckResult]) -> None:
    """Say "finish 03.3 first" when ``fn`` calls the student's own ``name`` and that is not done.

    ``fn``'s globals are the student's notebook: if ``fn``'s code refers to
    ``name`` and ``name`` there is a function that does not pass ``checker`` (its
    own exercise's), raise :class:`NotDone` or :class:`Mistake` naming that
    exercise, so that a check never blames the exercise in front of the student
    for a mistake in an earlier one.
    """
    code = getattr(inspect.unwrap(fn), "__code__", None)
    if code is None or name not in _names_used(code):
        return  # fn does not use it (or is not Python code we can read)
    other = getattr(inspect.unwrap(fn), "__globals__", {}).get(name)
    if other is None or _library_name(other):
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

    if not callable(fn) or _library_name(fn):
        return call(fn, *args, what=what)  # "expected a function", "the library's own"
    try:
        out = jax.jit(fn, static_argnums=static_argnums)(*args)
    except (NotImplementedError, NotDone, Mistake):
        raise
    except (jax.errors.ConcretizationTypeError, jax.errors.TracerArrayConversionError,
            jax.errors.TracerIntegerConversionError, jax.errors.UnexpectedTracerError,
            jax.errors.NonConcreteBooleanIndexError):
        out = call(fn, *args, what=what, hints=hints)
        if needs_jit:
            raise Mistake(needs_jit) from None
        return out
    except Exception as err:
        def raise_it(*_: Any, error: Exception = err) -> Any:
            raise error
        return call(raise_it, *args, what=what, hints=hints)
    if out is None:
        raise Mistake(_("{what} returned None: did you forget `return`?").format(what=what))
    return out


def expect_int(got: Any, what: str, hint: str) -> int:
    """``got`` as an ``int`` if it is a whole number (an int, a NumPy integer, ``3.0``).

    Anything else (a list, an array, ``2.5``, a string) is a :class:`Mistake` that
    says ``"<what> returned <a summary of got>; <hint>"``.
    """
    try:
        whole = np.ndim(got) == 0 and float(got) == int(got)
    except (TypeError, ValueError, OverflowError):
        whole = False
    if not whole:
        raise Mistake(_("{what} returned {value}; {hint}").format(
            what=what, value=summary(got), hint=_(hint)))
    return int(got)


def mlp_loss_and_grads(params: Any, x: Any, y: Any) -> tuple[float, list[tuple[np.ndarray, ...]]]:
    """The MLP's ``loss`` (lesson 08) and its gradient, in NumPy float64: a reference for
    checks that compiles nothing, where ``jax.jit(jax.grad(loss))`` costs a compile per shape.

    ``params``: ``[(W (n_out, n_in), b (n_out,)), ...]``, ReLU between layers;
    ``x: (batch, n_in)``; ``y: (batch, n_classes)`` one-hot. Returns
    ``(mean cross-entropy of the log-softmax, [(dW, db), ...])``.
    """
    acts = [np.asarray(x, np.float64)]
    layers = [(np.asarray(w, np.float64), np.asarray(b, np.float64)) for w, b in params]
    for w, b in layers[:-1]:
        acts.append(np.maximum(acts[-1] @ w.T + b, 0))  # (batch, n_out)
    logits = acts[-1] @ layers[-1][0].T + layers[-1][1]
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_p = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    delta = (np.exp(log_p) - y) / len(acts[0])  # d loss / d logits, as sum(y) = 1
    grads: list[tuple[np.ndarray, ...]] = []
    for i in reversed(range(len(layers))):
        grads.append((delta.T @ acts[i], delta.sum(axis=0)))
        delta = (delta @ layers[i][0]) * (acts[i] > 0)
    return float(-np.mean(np.sum(log_p * y, axis=1))), grads[::-1]
