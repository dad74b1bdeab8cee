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
here. The answers come back as the value of a Jupyter *user expression* on the
shell channel, so nothing the notebook prints or displays is read for them. This
module decides nothing: a kernel that changes it can only answer wrongly, which
is a wrong answer. It imports nothing of the package but :mod:`nn_from_scratch.wire`.
"""
import json
from typing import Any

from ..wire import Handle, decode, encode, encode_error, reference

__all__ = ["MIME", "Answers", "Reply"]

MIME = "application/vnd.nn-from-scratch.answer+json"


class Reply:
    """One answer; shown to Jupyter as :data:`MIME` (what a user expression returns)."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return {"text/plain": "an answer for the grader", MIME: self.data}


class Answers:
    """Answers the grader's questions about the objects of ``namespace`` (the notebook's)."""

    def __init__(self, namespace: dict[str, Any]) -> None:
        self.namespace = namespace
        self.objects: dict[int, Any] = {}  # handle -> object (kept alive while the check runs)
        self.handles: dict[int, int] = {}  # id(object) -> handle: one handle per object

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
        if op == "forget":
            self.objects.clear()
            self.handles.clear()
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
        """Answer ``request`` (JSON): ``{"value": ...}`` or ``{"error": ...}``, never raising."""
        try:
            value = self.answer(json.loads(request))
            return Reply({"value": encode(value, self.handle, named=False)})
        except BaseException as err:  # an interrupt too: the grader asked for it, and says so
            return Reply({"error": encode_error(err)})
