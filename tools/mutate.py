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

And the ways an answer is right by accident, for the one input a check tried:
a size read from an input (``x.shape[0]``, ``len(x)``, ``x.size``, ``x.ndim``)
frozen at the value it takes on the check's first case, as if written as a
number (whatever is computed from it, ``jnp.sqrt(d)``, follows); a stable idiom
made its unstable twin (``logsumexp(x)`` -> ``log(sum(exp(x)))``, a softmax
written as ``exp(x) / sum(exp(x))``; ``exp(x - max)`` -> ``exp(x)`` is a term
forgotten, above; two neighbouring statements swapped, the second reading what
the first wrote: a largest score taken before the mask); a small constant, an
eps, made ten times larger.

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
UNSTABLE = {  # a stable function -> its naive formula, of the call's first argument ({x}),
    # with its axis and keepdims ({kw}), or its axis (default -1) and keepdims=True ({axis})
    "logsumexp": "jnp.log(jnp.sum(jnp.exp({x}){kw}))",
    "log_softmax": "{x} - jnp.log(jnp.sum(jnp.exp({x}), {axis}, keepdims=True))",
    "softmax": "jnp.exp({x}) / jnp.sum(jnp.exp({x}), {axis}, keepdims=True)",
}
SIZE_CALLS = {"len", "shape", "size", "ndim"}  # len(x), jnp.shape(x), np.size(x), ...
SIZE_ATTRIBUTES = {"shape", "size", "ndim"}
EPS_AT_MOST = 1e-3  # a positive float constant this small is an eps: it also gets 10 * eps
# The helper a mutant with a frozen size defines: the value each site had on its first call.
FROZEN = "_value_on_the_first_case"
FROZEN_SOURCE = (f"def {FROZEN}(site, value, _seen={{}}):\n"
                 f"    return _seen.setdefault(site, value)\n\n")
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


def _size_read(node: ast.AST, parent: ast.AST) -> bool:
    """Does ``node`` read a size from an input: ``x.shape[i]``, ``x.shape`` (not as part of
    ``x.shape[i]``), ``x.size``, ``x.ndim``, ``len(x)``, ``jnp.shape(x)``?"""
    if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
        return isinstance(node.value, ast.Attribute) and node.value.attr == "shape"
    if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
        inside = isinstance(parent, ast.Subscript) and parent.value is node
        return node.attr in SIZE_ATTRIBUTES and not inside
    return (isinstance(node, ast.Call) and _name(node.func) in SIZE_CALLS
            and len(node.args) == 1 and not node.keywords)


def _frozen(node: ast.expr) -> ast.expr:
    """``node``, as the value it takes on its first evaluation (the check's first case)."""
    return ast.Call(ast.Name(FROZEN, ast.Load()), [ast.Constant(_one_line(node)), node], [])


def _unstable(node: ast.Call) -> ast.expr | None:
    """The naive formula of a stable call (``UNSTABLE``), or ``None``."""
    formula = UNSTABLE.get(_name(node.func))
    if formula is None or len(node.args) != 1:
        return None
    kw = "".join(f", {_one_line(k)}" for k in node.keywords if k.arg in ("axis", "keepdims"))
    axis = next((_one_line(k) for k in node.keywords if k.arg == "axis"), "axis=-1")
    return ast.parse(formula.format(x=f"({_one_line(node.args[0])})", kw=kw, axis=axis),
                     mode="eval").body


def _variants(node: ast.AST, parent: ast.AST, keys: set[str]) -> Iterator[ast.AST]:
    """Every single change of ``node``: each is a new node to put in its place."""
    if isinstance(node, ast.expr) and _size_read(node, parent):
        yield _frozen(node)
    if isinstance(node, ast.Call) and (naive := _unstable(node)) is not None:
        yield naive
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
            if 0 < value <= EPS_AT_MOST:  # an eps: ten times larger
                yield ast.Constant(value * 10)
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


def _assigned(statement: ast.stmt) -> set[str]:
    """The names an assignment writes."""
    targets = (statement.targets if isinstance(statement, ast.Assign) else
               [statement.target] if isinstance(statement, (ast.AugAssign, ast.AnnAssign))
               else [])
    return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}


def _swappable(first: ast.stmt, second: ast.stmt, lines: set[int]) -> bool:
    """Two neighbouring assignments of the solution, the second reading what the first wrote:
    swapped, the second sees the value from before (a largest score taken before the mask)."""
    read = {n.id for n in ast.walk(second) if isinstance(n, ast.Name)
            and isinstance(n.ctx, ast.Load)}
    return (first.lineno in lines and second.lineno in lines
            and bool(_assigned(first) & read) and bool(_assigned(second)))


def mutants(source: str, lines: set[int]) -> list[Mutant]:
    """Every single-site mutant of ``source`` that changes code on ``lines`` (1-based)."""
    tree = ast.parse(source)
    keys = _key_names(tree)
    original = ast.unparse(tree)
    found: dict[str, Mutant] = {}
    sites = list(_sites(tree, lines))

    def add(key: str, mutated: ast.AST) -> None:
        ast.fix_missing_locations(mutated)
        try:
            text = ast.unparse(mutated)
            compile(text, "<mutant>", "exec")
        except (SyntaxError, ValueError, TypeError):
            return
        if text == original:
            return
        if FROZEN in text:
            text = FROZEN_SOURCE + text
        while key in found:  # the same change at another place
            key += " (again)"
        found[key] = Mutant(key, text)

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
            shown = ("its value on the check's first case"
                     if isinstance(change, ast.Call) and _name(change.func) == FROZEN
                     else _one_line(change))
            add(f"{_one_line(node)} -> {shown}", mutated)
        body = getattr(parent, _field) if isinstance(index, int) else []
        if isinstance(node, ast.stmt) and isinstance(index, int) and index + 1 < len(body) \
                and _swappable(node, body[index + 1], lines):
            mutated = copy.deepcopy(tree)
            m_parent, m_field, m_index, _ = list(_sites(mutated, lines))[number]
            m_body = getattr(m_parent, m_field)
            m_body[m_index], m_body[m_index + 1] = m_body[m_index + 1], m_body[m_index]
            add(f"{_one_line(node)}; {_one_line(body[index + 1])} -> the two swapped", mutated)
    return list(found.values())
