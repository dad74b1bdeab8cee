"""Code that reaches any object of the kernel, whatever its name: the grader's own included.

The grader's answering object lives in the kernel (:mod:`.answers`), so a cell can patch it:
have it hand each check the library's function for an exercise whose code computes nothing.
Named (``_nn_from_scratch_answers``), that is a note; reached without its name, nothing in the
source said so. Red team, round fourteen, found it through the garbage collector
(``gc.get_objects()``, by its type's name: 5 of 7 points for lesson 07 with every stub still
raising), then, once that was read, through ``object.__subclasses__()`` (5 of 7, no note);
the stack of frames that called a function reaches the grader's code too. None of these is
needed by any lesson's exercise, so a student's code that uses one puts every answer checked
after it in doubt (:func:`.unseen.lasting`): it earns nothing, and says why.

Named, the grader's answering object (``_nn_from_scratch_answers``, a string naming it too)
and its modules (``nn_from_scratch.grade``: a lesson imports the library's, never the
grader's) do the same; before round fourteen they were a note, and a stub changed by one token
kept the points the patched object handed over.

Read from the source, as spelt: an attribute (``gc.get_objects``, ``x.__subclasses__``,
``frame.f_back``), a name imported from ``gc``, ``inspect`` or ``sys``, the module ``gc`` itself
used for anything but its harmless functions (``gc.collect()`` is honest; ``getattr(gc, ...)``,
``g = gc`` and ``import gc as g`` hand it on), and ``gc`` imported by a string. A method of the
student's own called through ``self`` is theirs; so is a function of their own named like one
of these, and a string that is only a string (a red team's second look, round fourteen: an
honest helper named ``get_objects`` and a dict key cost two solved notebooks every point).

Round fifteen: ``self`` is the student's only where it is a method's own first parameter,
never reassigned (``self = object; self.__subclasses__()`` passed as the student's); a local
variable named ``gc`` (``gc = jnp.maximum(0, x)``) is no module; a string put together from
constants (``getattr(object, "__subcla" + "sses__")``) is read as the string it makes, and a
string naming a frame's or a class's way in (``"__subclasses__"``, ``"f_back"``) reaches as the
attribute does; the grader's modules reached as attributes of the package
(``nn_from_scratch.grade.answers``, the package imported by a lesson's first cell) are the
grader's modules. What is the student's own object (a method's ``self``, an instance of the
notebook's own class, a local variable) is :mod:`.own`'s to mark.
"""
import ast
from pathlib import Path

from .own import LOCAL, mark, own_methods, through_its_class
from .spelt import attribute_argument, called_name, constant_text

__all__ = ["GC_HARMLESS", "REACHING", "reached", "reaching"]

# the attribute, or the name imported, and how the hint says it
REACHING = {
    "get_objects": "gc.get_objects()", "get_referrers": "gc.get_referrers()",
    "get_referents": "gc.get_referents()", "gc": "the module gc (handed on, or under another "
                                                 "name)",
    "__subclasses__": "__subclasses__()",
    "_getframe": "sys._getframe()", "currentframe": "inspect.currentframe()",
    "f_back": "a frame's f_back", "f_globals": "a frame's f_globals",
    "f_locals": "a frame's f_locals", "tb_frame": "a traceback's tb_frame",
    "gi_frame": "a generator's gi_frame", "cr_frame": "a coroutine's cr_frame",
    "ag_frame": "a generator's ag_frame", "stack": "inspect.stack()", "trace": "inspect.trace()",
    "getouterframes": "inspect.getouterframes()", "getinnerframes": "inspect.getinnerframes()",
    "getargvalues": "inspect.getargvalues()",
    "_nn_from_scratch_answers": "the grader's answering object (_nn_from_scratch_answers)",
    "nn_from_scratch.grade": "the grader's own modules (nn_from_scratch.grade)",
    "through its class": "a method of your class called with another object as its self "
                         "(Class.method(x))",
}
# the grader's, in the kernel: its answering object, and the package it comes from (a lesson
# imports the library's modules, never the grader's); named, a string too
_ANSWERS, _GRADER = "_nn_from_scratch_answers", "nn_from_scratch.grade"
# attributes that reach, on whatever object (the rest only on the module ``inspect``)
_ANYWHERE = {"get_objects", "get_referrers", "get_referents", "__subclasses__", "_getframe",
             "currentframe", "f_back", "f_globals", "f_locals", "tb_frame", "gi_frame",
             "cr_frame", "ag_frame"}
_INSPECT = {"stack", "trace", "getouterframes", "getinnerframes", "getargvalues", "currentframe"}
_FROM = {"gc": {"get_objects", "get_referrers", "get_referents", "*"},
         "inspect": _INSPECT | {"*"}, "sys": {"_getframe", "*"}}
# what of gc an honest notebook may use: collecting, and its switches and counts
GC_HARMLESS = {"collect", "enable", "disable", "isenabled", "get_count", "get_stats",
                "get_threshold", "set_threshold", "freeze", "unfreeze", "get_freeze_count",
                "get_debug", "set_debug", "is_tracked", "is_finalized"}


# attributes whose name in a string reaches as the attribute does (``getattr(x, "f_back")``,
# ``vars(type)["__subclasses__"]``): none is a word an honest string holds
_AS_STRINGS = {"__subclasses__", "_getframe", "f_back", "f_globals", "f_locals", "tb_frame",
               "gi_frame", "cr_frame", "ag_frame"}
# the grader's modules, as attributes of ``nn_from_scratch.grade`` (``x.grade.answers``): every
# module of this folder
_GRADER_MODULES = frozenset(p.stem for p in Path(__file__).parent.glob("*.py")) - {"__init__"}


def _attribute_named(part: ast.AST) -> str | None:
    """The attribute ``part`` asks for by a string of constants: ``getattr(x, "f_b" + "ack")``
    (``hasattr``, ``attrgetter``, ``x.__getattribute__``), or ``vars(type)["__subclasses__"]``,
    an entry looked up by it; None otherwise (a dict's key, a printed word)."""
    if isinstance(part, ast.Subscript):
        return constant_text(part.slice)
    if not isinstance(part, ast.Call) or not part.args:
        return None
    func = part.func
    name = called_name(func)
    if (argument := attribute_argument(part)) is not None:  # (hasattr only answers True or
        return constant_text(argument)  # False)
    if name in ("attrgetter", "__getattribute__", "__getattr__"):
        return constant_text(part.args[0])
    return None


def reaching(node: ast.AST) -> str:
    """How ``node`` (a statement, a function's code) reaches any object of the kernel, as the
    hint says it (``"gc.get_objects()"``); "" if it does not."""
    mark(node)
    parents = {child: part for part in ast.walk(node) for child in ast.iter_child_nodes(part)}
    for part in ast.walk(node):
        if how := _the_graders(part):
            return how
        if (text := _attribute_named(part)) in _AS_STRINGS or text in _ANYWHERE and \
                isinstance(part, ast.Call):  # getattr(gc_, "get_" + "objects"), not a dict's
            return REACHING[text or ""]
        if isinstance(part, ast.Attribute):
            call = parents.get(part)
            if through_its_class(part) and not (  # Base.__init__(self, ...) is honest
                    isinstance(call, ast.Call) and call.func is part and call.args
                    and own_methods(call.args[0])):
                return REACHING["through its class"]
            mine = part.attr in own_methods(part.value) and not part.attr.startswith("__")
            if part.attr in _ANYWHERE and not mine or part.attr in _INSPECT and isinstance(
                    part.value, ast.Name) and part.value.id == "inspect":
                return REACHING[part.attr]
        elif isinstance(part, ast.ImportFrom) and part.module in _FROM:
            for alias in part.names:
                if alias.name in _FROM[part.module]:
                    return REACHING.get(alias.name, f"from {part.module} import *")
        elif isinstance(part, ast.alias) and part.name == "gc" and part.asname not in (None, "gc"):
            return REACHING["gc"]
        elif isinstance(part, ast.Name) and part.id == "gc" and isinstance(part.ctx, ast.Load) \
                and not getattr(part, LOCAL, False):
            parent = parents.get(part)
            if not (isinstance(parent, ast.Attribute) and parent.attr in GC_HARMLESS):
                return REACHING["gc"]
        elif isinstance(part, ast.Call) and any(constant_text(a) == "gc" for a in part.args):
            func = part.func
            name = called_name(func)
            if name in ("__import__", "import_module"):
                return REACHING["gc"]
    return ""


def _the_graders(part: ast.AST) -> str:
    """How ``part`` names the grader's own answering object or modules, or ""."""
    text = constant_text(part) if isinstance(part, ast.BinOp | ast.JoinedStr | ast.Constant) \
        else None
    if isinstance(part, ast.Name) and part.id == _ANSWERS or isinstance(
            part, ast.Attribute) and part.attr == _ANSWERS or text and _ANSWERS in text:
        return REACHING[_ANSWERS]
    names = [a.name for a in part.names] if isinstance(part, ast.Import) else \
        [f"{part.module}.{a.name}" for a in part.names] if isinstance(part, ast.ImportFrom) \
        and part.module and not part.level else [text] if text is not None else []
    if any(n == _GRADER or n.startswith(_GRADER + ".") for n in names) or text and (
            _GRADER in text or len(text) > len("nn_from_scratch.") and _GRADER.startswith(text)):
        return REACHING[_GRADER]
    if isinstance(part, ast.Attribute) and (  # nn_from_scratch.grade, x.grade.answers
            part.attr == "grade" and isinstance(part.value, ast.Name)
            and part.value.id == "nn_from_scratch" or part.attr in _GRADER_MODULES
            and isinstance(part.value, ast.Attribute) and part.value.attr == "grade"):
        return REACHING[_GRADER]
    return ""


def reached(how: str) -> bool:
    """Whether ``how`` (what put an answer in doubt) is one of :func:`reaching`'s."""
    return how in REACHING.values() or how.startswith("from ") and how.endswith(" import *")
