"""The student's code, wherever it runs: in this process (a check in class) or in another (graded).

A checker takes the student's answers and calls them. In class they are the
objects themselves. When the grader checks a submission, the checker runs in
the grader's process and each answer is a :class:`Remote`: calling it, or reading
an attribute, asks the student's kernel (through a :class:`Session`), with the
grader's inputs as plain data, and brings the result back the same way. A result
that is not plain data (a Value, a jitted function) stays in the kernel and comes
back as another Remote, one per object, so that ``is`` still tells objects apart.

The one thing a checker writes differently for this is where it *makes* an
object that the student's code must receive or that must wrap it: a lesson's
``Value``, ``jax.jit(student_fn)``, a stand-in timer. :func:`beside` makes it
where the answer lives::

    a = beside(student_mul, autodiff.Value, 2.0)     # Value(2.0), beside student_mul
    fast = beside(student_fn, jax.jit, student_fn)   # jax.jit(student_fn), ditto

Functions handed to the student's code (``math.sin``, a stand-in from
:mod:`._fixtures`) cross by name. Nothing a kernel sends is trusted: a wrong,
forged or malformed answer is a wrong answer.
"""
from collections.abc import Callable
from typing import Any

from .. import wire
from ..i18n import _
from ._outcomes import verdict_errors

_CALLED_MOST, _NAME_MOST = 1024, 200  # names of the package's functions kept (grade/answers.py
# sends at most as many), and their length

__all__ = ["Remote", "RemoteFunction", "Session", "beside", "is_remote", "same_object",
           "session_of", "transformed", "twins"]


class Session:
    """A conversation with one student's kernel during one check.

    Subclasses send a question (a dict) and return the reply's dict, ``{"value": ...}`` or
    ``{"error": ...}``: :meth:`ask`. Everything else (proxies, values, errors) is here.
    """

    def __init__(self) -> None:
        self.remotes: dict[int, Remote] = {}
        # the package's functions the student's code entered while answering (what the
        # kernel said: a name, module and qualified name, per reply; grade/answers.py)
        self.called: list[str] = []

    def ask(self, question: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError

    def _remote(self, number: int, about: dict[str, Any] | None = None) -> "Remote":
        if number not in self.remotes:
            about = about or {}
            kind = RemoteFunction if about.get("callable") else Remote
            self.remotes[number] = kind(self, number, about)
        return self.remotes[number]

    def _send(self, value: Any) -> Any:
        def handle(obj: Any) -> wire.Handle:
            if isinstance(obj, Remote) and obj._session is self:
                return wire.Handle(id=obj._number)
            raise TypeError(f"a check cannot send {type(obj).__name__} to the student's code")
        return wire.encode(value, handle)

    def _receive(self, reply: Any) -> Any:
        if not isinstance(reply, dict):
            raise ValueError(_("the kernel's answer is not an answer"))
        called = reply.get("called")
        if isinstance(called, list):  # data from the kernel: strings, bounded, or nothing;
            self.called += [name[:_NAME_MOST] for name in called[:_CALLED_MOST]  # with an
                            if isinstance(name, str) and name not in self.called]  # error too
            del self.called[_CALLED_MOST:]
        if "error" in reply:
            raise wire.decode_error(reply["error"], verdict_errors())
        return wire.decode(reply.get("value"), lambda about: self._remote(about["id"], about))

    def request(self, op: str, **fields: Any) -> Any:
        return self._receive(self.ask({"op": op, **fields}))

    def lookup(self, name: str) -> Any:
        """The object the notebook calls ``name``: a Remote, or its value if plain data."""
        return self.request("lookup", name=name)

    def call(self, target: "Remote", args: tuple, kwargs: dict[str, Any]) -> Any:
        return self.request("call", target=target._number, args=self._send(list(args)),
                            kwargs=self._send(dict(kwargs)))

    def apply(self, function: Callable[..., Any], args: tuple, kwargs: dict[str, Any]) -> Any:
        named = wire.reference(function)
        if named is None:
            raise TypeError(f"{function!r} cannot be named to the student's kernel: use a "
                            f"module-level function of the package, JAX or NumPy")
        return self.request("apply", ref=named, args=self._send(list(args)),
                            kwargs=self._send(dict(kwargs)))

    def forget(self) -> None:
        """Let the kernel drop every object this check made or looked up."""
        self.remotes.clear()
        self.request("forget")


class Remote:
    """An object of the student's kernel, seen from the grader: attributes are asked for."""

    __slots__ = ("_session", "_number", "_about")

    def __init__(self, session: Session, number: int, about: dict[str, Any]) -> None:
        object.__setattr__(self, "_session", session)
        object.__setattr__(self, "_number", number)
        object.__setattr__(self, "_about", about)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)  # Python's protocols are not asked across
        return self._session.request("getattr", target=self._number, name=name)

    @property
    def kind(self) -> str:
        """The name of its type in the kernel (what :func:`._core.summary` says of it)."""
        return str(self._about.get("type", "object"))

    @property
    def name(self) -> str:
        return str(self._about.get("name", ""))

    def __repr__(self) -> str:
        return f"<the student's {self.kind} {self.name}>".replace(" >", ">")


class RemoteFunction(Remote):
    """A callable object of the student's kernel: calling it calls it there."""

    __slots__ = ()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._session.call(self, args, kwargs)


def is_remote(value: Any) -> bool:
    return isinstance(value, Remote)


def session_of(*values: Any) -> Session | None:
    """The session of the first Remote among ``values`` (looking into lists, tuples, dicts)."""
    for value in values:
        if isinstance(value, Remote):
            return value._session
        if isinstance(value, (list, tuple)):
            found = session_of(*value)
        elif isinstance(value, dict):
            found = session_of(*value.values())
        else:
            continue
        if found is not None:
            return found
    return None


def transformed(fn: Any, *steps: Any) -> Any:
    """``fn`` under each of ``steps`` in turn, made where ``fn`` lives: a step is a transform
    or ``(transform, options)``. ``transformed(f, jax.grad, jax.vmap, (jax.jit, {...}))`` is
    ``jax.jit(jax.vmap(jax.grad(f)), ...)``."""
    for step in steps:
        transform, options = step if isinstance(step, tuple) else (step, {})
        fn = beside(fn, transform, fn, **options)
    return fn


def same_object(answer: Any, known: Any) -> bool:
    """Is ``answer`` the very object ``known`` (``jax.nn.softplus`` handed in as one's own)?
    Of an answer in another process, what that process said of it."""
    if isinstance(answer, Remote):
        return bool(answer._about.get("ref")) and answer._about.get("ref") == wire.reference(known)
    return answer is known


def twins(anchor: Any, function: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[Any, Any]:
    """``(here, there)``: ``function(*args, **kwargs)`` made here, for the checker to read, and
    :func:`beside` ``anchor``, to hand to the student's code (in class, one object)."""
    here = function(*args, **kwargs)
    return here, (here if session_of(anchor) is None else beside(anchor, function, *args,
                                                                  **kwargs))


def beside(anchor: Any, function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``function(*args, **kwargs)``, made where ``anchor`` (a student's answer) lives.

    In class that is here. When graded, it is in the student's kernel, and the result is a
    Remote (or plain data): ``function`` must be a module-level function or class of the
    package, JAX or NumPy, which the kernel imports by name.
    """
    session = session_of(anchor)
    if session is None:
        return function(*args, **kwargs)
    return session.apply(function, args, kwargs)
