"""What code spells out with constants alone: the string that a piece of code makes of string
constants (``"__subcla" + "sses__"``, an f-string, ``"%s%s" % (...)``, ``"".join([...])``, a
slice such as ``[::-1]``), and the attribute that ``getattr``, ``setattr`` or ``delattr`` asks
for. The grader's reading (:mod:`.reaching`, :mod:`.allowed`, :mod:`.unseen`) reads such a
string as the name it makes: a red team's round fifteen spelt ``__subclasses__`` in pieces.
"""
import ast
from typing import Any

__all__ = ["attribute_argument", "constant_text"]


def constant_text(node: ast.AST) -> str | None:
    """The string ``node`` makes of constants alone (``"__subcla" + "sses__"``, an f-string of
    constants, ``"%s%s" % ("a", "b")``, ``"".join([...])``, ``"{}".format(...)``, a slice such
    as ``[::-1]``), or None."""
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, str) else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Mod):
        left = constant_text(node.left)
        right: Any = constant_text(node.right) if not isinstance(node.right, ast.Tuple) else \
            _texts(node.right.elts)
        if left is not None and right is not None:
            return left + right if isinstance(node.op, ast.Add) and isinstance(right, str) \
                else _formatted(left, right) if isinstance(node.op, ast.Mod) else None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
            (text := constant_text(node.func.value)) is not None and not node.keywords:
        if node.func.attr == "join" and len(node.args) == 1 and isinstance(
                node.args[0], ast.List | ast.Tuple) and (parts := _texts(node.args[0].elts)):
            return text.join(parts)
        if node.func.attr == "format" and (parts := _texts(node.args)) is not None:
            return _formatted(text, parts, "format")
    if isinstance(node, ast.Subscript) and (text := constant_text(node.value)) is not None \
            and isinstance(node.slice, ast.Slice):  # "__sessalcbus__"[::-1]
        try:
            bounds = [None if p is None else ast.literal_eval(p) for p in (
                node.slice.lower, node.slice.upper, node.slice.step)]
            return text[slice(*bounds)]
        except (ValueError, TypeError, SyntaxError):
            return None
    if isinstance(node, ast.JoinedStr):
        pieces = _texts([v.value if isinstance(v, ast.FormattedValue) else v
                         for v in node.values])
        return None if pieces is None else "".join(pieces)
    return None


def _texts(nodes: list[ast.expr]) -> tuple[str, ...] | None:
    texts = [constant_text(n) for n in nodes]
    return None if None in texts else tuple(t or "" for t in texts)


def called_name(func: ast.AST) -> str:
    """The name a call's ``func`` calls by: ``f`` for ``f(...)``, ``load`` for ``np.load(...)``;
    "" for anything else (``f()(...)``, ``fs[0](...)``)."""
    return func.id if isinstance(func, ast.Name) else \
        func.attr if isinstance(func, ast.Attribute) else ""


def attribute_argument(call: ast.AST) -> ast.expr | None:
    """The name argument of ``getattr``, ``setattr`` or ``delattr`` called by ``call``
    (``getattr(x, name)``: ``name``), or None for any other call."""
    if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id in (
            "getattr", "setattr", "delattr") and len(call.args) >= 2:
        return call.args[1]
    return None


def _formatted(template: str, value: str | tuple[str, ...], how: str = "%") -> str | None:
    try:
        return template % value if how == "%" else template.format(*value)
    except (TypeError, ValueError, IndexError, KeyError):
        return None
