"""Single-site mutants of an exercise's solution: the wrong answers a checker must reject.

Why our own mutator rather than mutmut or cosmic-ray: both mutate the files of
an installed package and run a test command once per mutant, in a process of
its own. An exercise lives in a notebook cell, and its check needs the state
that the lesson's earlier cells built (data loaded, a network trained, ...):
re-running a lesson for every mutant would cost 10-20 s each, thousands of
times. Here the lesson runs once (``tools/mutants.py``) and each mutant is
executed in a copy of its namespace. The operators are the usual ones of those
tools (arithmetic and comparison operators swapped, constants nudged, a
statement deleted) plus those that make the typical mistakes of this course:
reductions and their partners swapped (``mean``/``sum``, ``max``/``min``),
a call's arguments swapped, a wrapping call dropped (``relu(z)`` -> ``z``),
``in_axes`` entries changed (``None`` <-> ``0``), slices widened, ``+=``
made ``=``, one PRNG key used where another was meant, and an array flattened
or reshaped with its axes in another order (``x.ravel()`` ->
``jnp.moveaxis(x, 0, -1).ravel()``, neighbouring entries of a ``reshape``'s
shape swapped): the (H, W, C) flattening that a (C, H, W) network gets wrong.

Only code between ``# BEGIN SOLUTION`` and ``# END SOLUTION`` is mutated, never
what the lesson gives (a docstring, a ``def`` line), nor what only prints.
"""
import ast
import copy
from collections.abc import Iterator
from dataclasses import dataclass

__all__ = ["Mutant", "mutants"]

SWAP_OPS: dict[type, list[type]] = {
    ast.Add: [ast.Sub], ast.Sub: [ast.Add], ast.Mult: [ast.Div, ast.Add], ast.Div: [ast.Mult],
    ast.Pow: [ast.Mult], ast.MatMult: [ast.Mult], ast.FloorDiv: [ast.Div], ast.Mod: [ast.FloorDiv],
    ast.Lt: [ast.LtE, ast.Gt], ast.LtE: [ast.Lt], ast.Gt: [ast.GtE, ast.Lt], ast.GtE: [ast.Gt],
    ast.Eq: [ast.NotEq], ast.NotEq: [ast.Eq], ast.Is: [ast.IsNot], ast.IsNot: [ast.Is],
    ast.In: [ast.NotIn], ast.NotIn: [ast.In], ast.And: [ast.Or], ast.Or: [ast.And],
}
SWAP_NAMES = {  # a function or method name -> the partners a student confuses it with
    "mean": ["sum"], "sum": ["mean"], "max": ["min"], "min": ["max"], "maximum": ["minimum"],
    "minimum": ["maximum"], "argmax": ["argmin"], "argmin": ["argmax"], "exp": ["log"],
    "log": ["exp"], "zeros": ["ones"], "ones": ["zeros"], "std": ["var"], "var": ["std"],
    "sqrt": ["square"], "square": ["sqrt"], "all": ["any"], "any": ["all"], "dot": ["multiply"],
    "vmap": ["jit"], "pmean": ["psum"], "psum": ["pmean"], "normal": ["uniform"],
    "uniform": ["normal"], "split": ["fold_in"], "logsumexp": ["log_softmax"],
}
PRINTING = {"print", "display", "plot", "imshow", "title", "legend", "xlabel", "ylabel"}
FLATTENING = {"ravel", "flatten", "reshape"}  # methods whose result depends on the axes' order


@dataclass(frozen=True)
class Mutant:
    """One wrong version of a solution: ``key`` names the change (``"a + b -> a - b"``)."""

    key: str
    source: str


def _name(func: ast.expr) -> str:
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _one_line(node: ast.AST) -> str:
    return " ".join(ast.unparse(node).split())


def _key_names(tree: ast.AST) -> set[str]:
    """Names holding PRNG keys: the first argument of ``jax.random.*``, and what ``split`` gives."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and "random" in ast.unparse(node.func):
            if node.args and isinstance(node.args[0], ast.Name):
                names.add(node.args[0].id)
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and \
                _name(node.value.func) == "split":
            for target in node.targets:
                for leaf in ast.walk(target):
                    if isinstance(leaf, ast.Name):
                        names.add(leaf.id)
    return names


def _variants(node: ast.AST, parent: ast.AST, keys: set[str]) -> Iterator[ast.AST]:
    """Every single change of ``node``: each is a new node to put in its place."""
    if isinstance(node, (ast.BinOp, ast.BoolOp, ast.UnaryOp, ast.Compare, ast.AugAssign)):
        ops = node.ops if isinstance(node, ast.Compare) else [node.op]
        for i, op in enumerate(ops):
            for new_op in SWAP_OPS.get(type(op), []):
                new = copy.deepcopy(node)
                if isinstance(new, ast.Compare):
                    new.ops[i] = new_op()
                else:
                    new.op = new_op()
                yield new
    if isinstance(node, ast.BinOp):  # a term forgotten: a + b -> a, a + b -> b
        yield node.left
        yield node.right
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.Not)):
        yield node.operand
    if isinstance(node, ast.AugAssign):  # += -> =
        yield ast.Assign([node.target], node.value, lineno=node.lineno)
    if isinstance(node, ast.Constant) and not isinstance(node.value, str):
        value = node.value
        if isinstance(value, bool):
            yield ast.Constant(not value)
        elif isinstance(value, int):
            yield ast.Constant(value + 1)
            yield ast.Constant(value - 1)
            if value == 0 and isinstance(parent, ast.Tuple):  # in_axes=(None, 0) -> (None, None)
                yield ast.Constant(None)
        elif isinstance(value, float):
            yield ast.Constant(value * 2 if value else 1.0)
            yield ast.Constant(value / 2 if value else -1.0)
        elif value is None:
            yield ast.Constant(0)
    if isinstance(node, ast.Call) and _name(node.func) not in PRINTING:
        for partner in SWAP_NAMES.get(_name(node.func), []):
            new = copy.deepcopy(node)
            if isinstance(new.func, ast.Attribute):
                new.func.attr = partner
            else:
                new.func = ast.Name(partner, ast.Load())
            yield new
        for i in range(len(node.args) - 1):  # two neighbouring arguments swapped
            new = copy.deepcopy(node)
            new.args[i], new.args[i + 1] = new.args[i + 1], new.args[i]
            yield new
        if len(node.args) == 1 and not node.keywords:  # relu(z) -> z
            yield node.args[0]
        for i in range(len(node.keywords)):  # a keyword argument left out
            new = copy.deepcopy(node)
            del new.keywords[i]
            yield new
        if isinstance(node.func, ast.Attribute) and node.func.attr in FLATTENING:
            # x.ravel() -> jnp.moveaxis(x, 0, -1).ravel(): the axes in another order first
            new = copy.deepcopy(node)
            new.func.value = ast.Call(
                ast.Attribute(ast.Name("jnp", ast.Load()), "moveaxis", ast.Load()),
                [node.func.value, ast.Constant(0), ast.Constant(-1)], [])
            yield new
            shape = node.args[0] if len(node.args) == 1 else None
            if node.func.attr == "reshape" and isinstance(shape, ast.Tuple):
                for i in range(len(shape.elts) - 1):  # reshape((h, 2, w, 2)) -> ((h, w, 2, 2))
                    new = copy.deepcopy(node)
                    elts = new.args[0].elts
                    elts[i], elts[i + 1] = elts[i + 1], elts[i]
                    yield new
    if isinstance(node, ast.Slice):
        for part in ("lower", "upper"):
            if getattr(node, part) is not None:
                new = copy.deepcopy(node)
                setattr(new, part, None)
                yield new
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in keys:
        for other in sorted(keys - {node.id}):  # a key used where another was meant
            yield ast.Name(other, ast.Load())


def _sites(tree: ast.AST, lines: set[int]) -> Iterator[tuple[ast.AST, str, int | None, ast.AST]]:
    """(parent, field, index, node) for every node on ``lines``, outside printing and docstrings."""
    def visit(parent: ast.AST) -> Iterator[tuple[ast.AST, str, int | None, ast.AST]]:
        for field, value in ast.iter_fields(parent):
            children = value if isinstance(value, list) else [value]
            for index, child in enumerate(children):
                if not isinstance(child, ast.AST) or isinstance(child, (ast.JoinedStr, ast.arg)):
                    continue
                if isinstance(child, ast.Call) and _name(child.func) in PRINTING:
                    continue
                if isinstance(child, ast.Expr) and (isinstance(child.value, ast.Constant) or (
                        isinstance(child.value, ast.Call) and _name(child.value.func) in PRINTING)):
                    continue  # a docstring, or a statement that only prints
                if field == "annotation" or field == "returns":
                    continue
                if getattr(child, "lineno", None) in lines or not hasattr(child, "lineno"):
                    yield parent, field, index if isinstance(value, list) else None, child
                yield from visit(child)
    yield from visit(tree)


def mutants(source: str, lines: set[int]) -> list[Mutant]:
    """Every single-site mutant of ``source`` that changes code on ``lines`` (1-based)."""
    tree = ast.parse(source)
    keys = _key_names(tree)
    original = ast.unparse(tree)
    found: dict[str, Mutant] = {}
    sites = list(_sites(tree, lines))
    for number, (parent, _field, index, node) in enumerate(sites):
        if not hasattr(node, "lineno") and not isinstance(node, ast.Slice):
            continue  # operators and contexts: changed through their expression
        changes = list(_variants(node, parent, keys))
        if isinstance(node, ast.stmt) and isinstance(index, int) and parent is not tree:
            changes.append(ast.Pass())  # a statement in a body deleted (a `return` dropped, ...)
        for change in changes:
            mutated = copy.deepcopy(tree)
            m_parent, m_field, m_index, _ = list(_sites(mutated, lines))[number]
            if m_index is None:
                setattr(m_parent, m_field, change)
            else:
                getattr(m_parent, m_field)[m_index] = change
            ast.fix_missing_locations(mutated)
            try:
                text = ast.unparse(mutated)
                compile(text, "<mutant>", "exec")
            except (SyntaxError, ValueError, TypeError):
                continue
            if text == original:
                continue
            key = f"{_one_line(node)} -> {_one_line(change)}"
            while key in found:  # the same change at another place
                key += " (again)"
            found[key] = Mutant(key, text)
    return list(found.values())
