"""How a checker turns the student's errors (``call``) and typical wrong answers
(``reject_known_wrong``) into hints."""
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import stub

from nn_from_scratch.exercises._calls import call, finish_first
from nn_from_scratch.exercises._compare import reject_known_wrong
from nn_from_scratch.exercises._core import CheckResult, Mistake, NotDone
from nn_from_scratch.exercises._hints import summary

HINTS = {("inconsistent sizes", "vmap"): "give the shared params in_axes None",
         "rank": "the scale is shared: in_axes None"}


def fails_with(message):
    def student(*args):
        raise ValueError(message)
    return student


def test_call_returns_the_answer_and_passes_the_stub_through():
    assert call(lambda a, b: a + b, 2, 3, what="add(2, 3)", hints=HINTS) == 5
    with pytest.raises(NotImplementedError):  # the decorator makes this "not done"
        call(stub, 1, what="f(1)", hints={"NotImplementedError": "a hint must not hide a stub"})


def test_call_quotes_an_error_that_no_hint_explains():
    with pytest.raises(Mistake, match=r"^f\(x\) raised ValueError: bad thing$"):
        call(fails_with("bad thing"), what="f(x)", hints=HINTS)


@pytest.mark.parametrize("error, hint", [
    ("vmap got inconsistent sizes for array axes", "give the shared params in_axes None"),
    ("vmap in_axes must be ...", "give the shared params in_axes None"),
    ("rank of the input is 0", "the scale is shared: in_axes None")])
def test_call_replaces_an_error_with_the_hint_for_its_sign(error, hint):
    with pytest.raises(Mistake) as caught:
        call(fails_with(error), what="f(x)", hints=HINTS)
    assert str(caught.value) == hint
    assert caught.value.__cause__ is None  # the hint stands alone: no traceback to wade through


def test_call_tries_the_hints_in_order():
    with pytest.raises(Mistake, match="^give the shared"):  # both signs are in the message
        call(fails_with("vmap: rank mismatch"), what="f(x)", hints=HINTS)


def test_call_catches_a_missing_return_and_a_non_function():
    with pytest.raises(Mistake, match="forget `return`"):
        call(lambda: None, what="f()", hints=HINTS)
    with pytest.raises(Mistake, match="expected a function for f; got int 3"):
        call(3, what="f")


WRONG = {"the other way up": 0.5, "the sum, not the mean": 6.0}


def test_reject_known_wrong_names_the_mistake_that_the_answer_equals():
    with pytest.raises(Mistake, match="^the sum, not the mean$"):
        reject_known_wrong(6.0 + 1e-9, WRONG)
    with pytest.raises(Mistake, match="^the other way up$"):
        reject_known_wrong(np.array([0.5, 0.5]), {"the other way up": np.array([0.5, 0.5])})


def test_reject_known_wrong_lets_other_answers_through_for_the_checker_to_judge():
    reject_known_wrong(2.0, WRONG)  # the right answer, or a mistake nobody foresaw: no hint
    reject_known_wrong(0.51, WRONG, rtol=1e-3)  # outside the tolerance


def test_reject_known_wrong_skips_a_mistake_that_gives_the_right_answer_here():
    # on these inputs "the other way up" happens to be right: never blame a right answer
    reject_known_wrong(0.5, WRONG, want=0.5)
    with pytest.raises(Mistake, match="^the sum"):
        reject_known_wrong(6.0, WRONG, want=0.5)


def test_summary_is_one_short_line_whatever_the_value():
    big = np.arange(512 * 784, dtype=np.float32).reshape(512, 784)
    assert summary(big) == "array of shape (512, 784) float32 [0, 1, 2, …]"
    assert summary(np.float32(2.5)) == "2.5"
    assert summary(jnp.asarray(1280)) == "1280"  # a 0-d array is its number, never Array(...)
    assert summary(np.array(16.5)) == "16.5"
    assert summary([1, 2, 3]) == "list of 3 items"
    assert summary(lambda x: x) == "a function"  # never `<lambda>` or a checker's locals
    assert summary(call) == "function call"
    assert len(summary("x" * 500)) <= 60
    with pytest.raises(Mistake) as caught:
        call(big, what="relu(x)")
    assert len(str(caught.value)) < 120 and "(512, 784)" in str(caught.value)


def test_call_refuses_the_librarys_own_function_but_not_a_wrapper_of_it():
    import jax

    from nn_from_scratch import model

    for library_object in (model.predict, model.batched_predict):
        with pytest.raises(Mistake, match=f"the library's own {library_object.__name__}, not "
                                          "yours; if you wrote one, a later cell has imported"):
            call(library_object, 1, what="f")
    wrapped = jax.vmap(model.predict, in_axes=(None, 0))  # what lesson 07 asks a student to build
    with pytest.raises(Mistake, match="raised"):  # called, not refused: the wrong args raise
        call(wrapped, 1, 2, what="batched_predict(params, images)")


def _double(fn):
    """A checker of exercise 99.1 (not registered: the course's registry stays the course's)."""
    try:
        got = call(fn, 2, what="double(2)")
    except NotImplementedError:
        return CheckResult("99.1", "double", "not done", "not done yet")
    except Mistake as err:
        return CheckResult("99.1", "double", "failed", str(err))
    if got != 4:
        return CheckResult("99.1", "double", "failed", "double(2) should be 4")
    return CheckResult("99.1", "double", "passed", "ok")


def test_finish_first_points_at_the_earlier_exercise_not_this_one():
    namespace = {}
    exec("def double(x):\n    raise NotImplementedError\n"
         "def quadruple(x):\n    return double(double(x))\n", namespace)
    with pytest.raises(NotDone, match=r"finish 99\.1 double first"):
        finish_first(namespace["quadruple"], "double", _double)
    exec("def double(x):\n    return x + 1\n", namespace)
    with pytest.raises(Mistake, match=r"fix 99\.1 double first \(double\(2\) should be 4\)"):
        finish_first(namespace["quadruple"], "double", _double)
    exec("def double(x):\n    return 2 * x\n", namespace)
    finish_first(namespace["quadruple"], "double", _double)  # done: no complaint
    finish_first(lambda x: x, "double", _double)  # does not use it: no complaint


def test_fast_call_compiles_but_falls_back_to_the_code_as_written():
    from nn_from_scratch.exercises._calls import fast_call
    from nn_from_scratch.model import relu

    assert float(fast_call(lambda x: x * 2, np.float32(3), what="double(x)")) == 6
    assert fast_call(lambda x: float(x) * 2, np.float32(3), what="double(x)") == 6  # no jit
    runs = []

    def wrong(x):
        runs.append(x)
        raise ValueError("no")
    with pytest.raises(Mistake, match="raised ValueError: no"):
        fast_call(wrong, 1, what="f(x)")
    assert len(runs) == 1  # the student's own error: not run again without jit
    with pytest.raises(Mistake, match="library's own relu"):
        fast_call(relu, np.ones(2), what="relu(x)")
    with pytest.raises(Mistake, match="forget `return`"):
        fast_call(lambda x: None, 1, what="f(x)")
    with pytest.raises(NotImplementedError):
        fast_call(stub, 1, what="f(x)")


def test_expect_int_takes_whole_numbers_only():
    from nn_from_scratch.exercises._compare import expect_int

    assert expect_int(np.int64(8), "n", "an int") == 8
    assert expect_int(8.0, "n", "an int") == 8
    for wrong in (2.5, [8], np.ones(3), "eight", float("nan")):
        with pytest.raises(Mistake, match="n returned .*; an int"):
            expect_int(wrong, "n", "an int")


def test_every_own_code_guard_names_the_module_where_its_functions_are_defined():
    """expect_own_code watches the files of the modules it is given: a function moved to another
    module (train.py's update to epoch.py) would make its guard watch a file it never runs in,
    silently. Each guard's modules of the package exist, each defines one of the names watched
    (if any are named), and each name watched is defined in one of them, unless it is JAX's."""
    import ast
    import importlib
    from pathlib import Path

    import nn_from_scratch.exercises as exercises

    def value(node, namespace):  # a literal or what the checker's module names; None: a local
        try:
            return eval(compile(ast.Expression(node), "<guard>", "eval"), dict(namespace))
        except (NameError, AttributeError):
            return None

    def defines(module, name):
        return getattr(getattr(module, name, None), "__module__", None) == module.__name__

    guards = 0
    for path in sorted(Path(exercises.__file__).parent.glob("*.py")):
        namespace = vars(importlib.import_module(f"nn_from_scratch.exercises.{path.stem}"))
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call) or getattr(node.func, "id", "") != "expect_own_code":
                continue
            given = dict(zip(("modules", "names"), node.args[3:5]))
            given.update((k.arg, k.value) for k in node.keywords if k.arg in ("modules", "names"))
            modules = value(given["modules"], namespace)
            names = value(given["names"], namespace) if "names" in given else ()
            if modules is None or names is None:
                continue  # a local, worked out where the check runs: its checker's tests hold it
            modules = (modules,) if isinstance(modules, str) else tuple(modules)
            ours = [importlib.import_module(m) for m in modules if m.startswith("nn_from_scratch")]
            where = f"{path.name}, line {node.lineno}"
            for module in ours if names else ():
                assert any(defines(module, name) for name in names), (
                    f"{where}: {module.__name__} defines none of {names}")
            for name in names:
                assert any(defines(m, name) for m in ours) or len(ours) < len(modules), (
                    f"{where}: {name} is defined in none of {modules}")
            guards += 1
    assert guards >= 20, guards
