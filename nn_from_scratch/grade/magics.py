"""IPython's own syntax in a cell, as the copying reader must read it: magics and shell lines.

A cell with a magic (``%time``, ``%%capture``) is not Python, and a reading that gave up on it
missed every name the cell binds (red team, round eight: one ``%%capture`` line hid the
library's function in an exercise cell). The kernel turns such a cell into Python before it
runs it (``%time x = f()`` -> ``get_ipython().run_line_magic('time', 'x = f()')``);
:func:`as_ipython_runs_it` does the same, and :func:`magic` says what each magic runs: the
code of ``%time``, ``%timeit``, ``%prun`` and ``%%capture`` (read as code, binding what it
binds) and the value ``%config A.b = value`` sets (code too), nothing for the quiet ones
(``%matplotlib``), anything for the others (the reader puts every name bound before them in
doubt).
"""
import ast
import re

from ..parsing import parse

__all__ = ["CODE_MAGICS", "QUIET_MAGICS", "as_ipython_runs_it", "magic"]

# magics that run no code of the notebook's; and those whose argument (or cell) is code
QUIET_MAGICS = {"matplotlib", "xmode", "precision", "pprint", "who", "whos", "pwd",
                 "ls", "pinfo", "pinfo2", "psearch", "history", "lsmagic", "magic"}
CODE_MAGICS = {"time", "timeit", "capture", "prun", "config"}


def as_ipython_runs_it(source: str) -> ast.Module | None:
    """The cell as IPython turns it into Python before running it (``%time x`` ->
    ``get_ipython().run_line_magic('time', 'x')``), parsed; None if it still does not
    parse (then it runs nothing)."""
    try:
        from IPython.core.inputtransformer2 import TransformerManager

        return parse(TransformerManager().transform_cell(source))
    except (ImportError, SyntaxError, ValueError):
        return None


def magic(statement: ast.stmt) -> tuple[str, str | None] | None:
    """For ``get_ipython().run_line_magic(name, line)`` (or ``run_cell_magic(name, line,
    cell)``) as a statement of its own, or assigned to names (``t = %timeit -o f(x)``: a red
    team's false positive, round sixteen): the magic's name, and the code it runs
    (``%time``'s line without its options, ``%%capture``'s cell), None where it runs none or
    anything."""
    call = statement.value if isinstance(statement, ast.Expr) or isinstance(
        statement, ast.Assign) and all(isinstance(t, ast.Name) for t in statement.targets) \
        else None
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
            and call.func.attr in ("run_line_magic", "run_cell_magic")
            and all(isinstance(a, ast.Constant) and isinstance(a.value, str)
                    for a in call.args) and call.args):
        return None
    name, *rest = [str(a.value) for a in call.args]  # type: ignore[attr-defined]
    if name not in CODE_MAGICS or not rest:
        return name, None
    if name == "config":  # %config A.b = value runs exec("cfg." + line) in the notebook's
        # namespace: the value is any code (red team, round seventeen: 07.6 answered by the
        # library through %config A.b = globals().update(...), read as quiet); without "=" it
        # only shows the settings
        return name, f"cfg.{rest[0]}" if "=" in rest[0] else None
    line = re.sub(r"^(?:\s*-[A-Za-z]+(?:\s+\d+)?)*\s*", "", rest[0])  # %timeit -n 10 ...
    return name, rest[1] if call.func.attr == "run_cell_magic" and len(rest) > 1 else line
