"""What the grader runs inside a submission's kernel, in place of each check cell.

The grading cell loads this file afresh (never through ``sys.modules``) and calls
:func:`grade`, which loads the lesson's checkers afresh too, as a private copy
of the package under a name made from the cell's secret: neither the ``check``
name the notebook's code can rebind, nor a module object it can patch, is used.
The result is displayed once, with the secret, under the grader's own MIME
type; the grader counts only that record, from that cell. This module imports
nothing from the package, so loading it runs nothing a submission can touch.
"""
import ast
import importlib
import importlib.util
import sys
import types
from pathlib import Path
from typing import Any

GRADER_MIME = "application/vnd.nn-from-scratch.grader+json"


def _fresh_checkers(package_dir: str, checker: str, base: str) -> types.ModuleType:
    """``nn_from_scratch.exercises.<checker>``, loaded from ``package_dir`` as ``base.…``."""
    root = types.ModuleType(base)
    root.__path__ = [package_dir]
    sys.modules[base] = root
    exercises = Path(package_dir) / "exercises"
    spec = importlib.util.spec_from_file_location(
        f"{base}.exercises", exercises / "__init__.py",
        submodule_search_locations=[str(exercises)])
    assert spec is not None and spec.loader is not None
    package = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = package
    spec.loader.exec_module(package)
    return importlib.import_module(f"{base}.exercises.{checker}")


def _library_own(value: Any) -> bool:
    """Is ``value`` itself an object of the package (``from nn_from_scratch.model import predict``)?

    Identity with a module's names, not the ``__module__`` it claims: ``jax.vmap`` copies that
    from the function it wraps, and a student's ``vmap(predict)`` over the library's ``predict``
    is their own work.
    """
    module = sys.modules.get(str(getattr(value, "__module__", "") or ""))
    if module is None or not module.__name__.startswith("nn_from_scratch") or not callable(value):
        return False
    return any(value is member for member in vars(module).values())


def _run_check(source: str, namespace: dict[str, Any], checkers: types.ModuleType) -> dict:
    """Run a check cell's code with ``check`` = the fresh checkers; its result as a record."""
    tree = ast.parse(source)
    last = tree.body.pop() if tree.body else None
    call = last.value if isinstance(last, ast.Expr) else None
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
            and isinstance(call.func.value, ast.Name) and call.func.value.id == "check"):
        return {"status": "error", "message": "the released check cell ends in no check call"}
    exec(compile(tree, "<check>", "exec"), namespace)  # the release's lines before the call

    def value(node: ast.expr) -> Any:
        return eval(compile(ast.Expression(node), "<check>", "eval"), namespace)

    try:
        args = [value(arg) for arg in call.args]
        kwargs = {kw.arg: value(kw.value) for kw in call.keywords if kw.arg}
    except Exception as err:  # the exercise cell never defined the answer
        return {"status": "error", "message": f"{type(err).__name__}: {err}"}
    name = call.func.attr
    if any(_library_own(answer) for answer in [*args, *kwargs.values()]):
        return {"status": "failed", "message": f"this is the library's own {name}; write your own"}
    result = getattr(checkers, name)(*args, **kwargs)
    return {"status": result.status, "message": result.message}


def grade(secret: str, package_dir: str, checker: str, exercise: str, source: str) -> None:
    """Check ``exercise`` as the released check cell ``source`` would, and display the verdict."""
    from IPython import get_ipython
    from IPython.display import publish_display_data

    base = f"_nn_from_scratch_grader_{secret}"
    try:
        checkers = _fresh_checkers(package_dir, checker, base)
        namespace = dict(get_ipython().user_ns)
        namespace["check"] = checkers
        record = _run_check(source, namespace, checkers)
    except Exception as err:
        record = {"status": "error", "message": f"the check raised {type(err).__name__}: {err}"}
    finally:
        for name in [name for name in sys.modules if name.startswith(base)]:
            del sys.modules[name]
    publish_display_data({"text/plain": f"graded {exercise}: {record['status']}",
                          GRADER_MIME: {**record, "exercise": exercise, "secret": secret}})
