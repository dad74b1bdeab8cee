"""Checks answer in the edition's language: English by default, Chinese when asked."""
import sys
from pathlib import Path

import pytest
from conftest import stub

from nn_from_scratch import i18n
from nn_from_scratch._checks import InputError
from nn_from_scratch.exercises import mlp_from_scratch as check
from nn_from_scratch.model import predict

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
import translations  # noqa: E402


@pytest.fixture
def chinese(monkeypatch):
    monkeypatch.setattr(i18n, "_chosen", [])
    i18n.set_language("zh")
    yield


def test_english_unless_asked(monkeypatch):
    monkeypatch.setattr(i18n, "_chosen", [])
    monkeypatch.delenv(i18n.ENV, raising=False)
    assert i18n.language() == "en"
    assert check.relu(stub).message == "not done yet (the stub still raises NotImplementedError)"
    monkeypatch.setenv(i18n.ENV, "zh_CN")
    assert i18n.language() == "zh_CN"
    monkeypatch.setenv(i18n.ENV, "klingon")  # an unknown language in the environment: English
    assert i18n.language() == "en"


def test_set_language_refuses_what_it_does_not_know(monkeypatch):
    monkeypatch.setattr(i18n, "_chosen", [])
    with pytest.raises(InputError, match="lang must be one of 'en', 'zh_CN'; got 'fr'"):
        i18n.set_language("fr")


def test_a_stub_and_a_typical_mistake_in_chinese(chinese):
    assert check.relu(stub).line == ("… 07.1 relu："
                                     "尚未完成（待补全的代码仍在抛出 NotImplementedError）")
    assert check.predict(predict).message == (
        "这是库里现成的 predict，不是你写的；如果你写过，那是后面某个单元格导入了库里的同名函数，"
        "把你的覆盖了：请重新运行你的练习单元格，再运行这个检查")
    assert check.predict(lambda params, image: None).message.endswith(
        "返回了 None：是不是忘了写 return？")  # plain text: no Markdown backticks


# Every message has its Chinese: a new or changed one (Babel marks a changed one fuzzy) fails.
UNTRANSLATED_AT_MOST = 0


def test_every_message_of_the_package_has_an_up_to_date_translation():
    problems = translations.message_problems()
    fix = ("run .venv/bin/python tools/translations.py messages and translate what it lists in "
           "nn_from_scratch/locale/zh_CN/LC_MESSAGES/nn_from_scratch.po")
    # a message whose English changed becomes fuzzy (Babel's merge), a new one untranslated:
    # either way the count grows past the mark
    assert len(problems) <= UNTRANSLATED_AT_MOST, (
        f"{len(problems)} messages without Chinese (at most {UNTRANSLATED_AT_MOST}: a new or "
        f"changed message needs its translation): {problems[:3]}; {fix}")


# English that must stay English in a checker: text matched against the errors Python and
# JAX raise (they are English in every edition), and messages for the course's developers.
ENGLISH_ON_PURPOSE = {
    "jax._src.lax.lax": "a module's name, matched against a frame's",
    "value shape should be": "matched against JAX's error",
    "zero-size array": "matched against NumPy's error",
    "add got incompatible shapes": "matched against JAX's error",
    "at least one non-None": "matched against JAX's error",
    "Pred must be a scalar": "matched against JAX's error",
    "branches must have equal output types": "matched against JAX's error",
    "required positional argument": "matched against Python's error",
    "Non-hashable static arguments": "matched against JAX's error",
    "not evenly divisible by the corresponding mesh": "matched against JAX's error",
    "requires more devices": "matched against JAX's error",
    "index out of range": "matched against Python's error",
    "jax.vmap(jnp.dot)": "code, shown as it is written",
    "jax.vmap(convolve, in_axes=(0, None))": "code, shown as it is written",
    "jax.vmap(jax.grad(example_loss), in_axes=(None, 0, 0))": "code, shown as it is written",
    "jax.vmap(convolve, in_axes=(None, 0))": "code, shown as it is written",
    "application/vnd.nn-from-scratch.check+json": "a MIME type",
    "exercise {} is registered twice": "a developer's error, raised at import",
    "_networks: no local batches apart from the device counts {}": "a checker's own mistake "
    "(ranges too narrow), met by its author, as draw_sizes's are",
    "unbound axis name": "matched against JAX's error",
    "setting an array element with a sequence": "matched against NumPy's error",
    "values to unpack": "matched against Python's error",
    "object has no attribute 'tanh'": "matched against Python's error",
    "'float' object has no attribute": "matched against Python's error",
    "has no attribute data": "matched against JAX's tracer error (f handed to jax.grad)",
    "iteration over a 0-d array": "matched against JAX's error",
    "must be real number": "matched against Python's error",
    "requires the current value of parameters": "matched against Optax's error",
    "one value per key": "matched against the library's attention error (errors stay English)",
    "out of bounds for array of dimension 0": "matched against JAX's error",
    "must have ndim at least 1, but it has ndim 0": "matched against JAX's error",
    "substring not found": "matched against Python's error (str.index)",
    "out of range": "matched against Python's error (an index past a str)",
    "must be static": "matched against JAX 0.10's error (a slice of traced length)",
    "must have static": "matched against JAX 0.12's error (a slice of traced length)",
    "has no attribute 'at'": "matched against NumPy's error (.at on a NumPy array, after jit)",
    "is not a valid JAX type": "matched against jit's error (a function that returns a str)",
    "cannot reshape": "matched against JAX's error",
    "reshape total size": "matched against JAX's error (another wording)",
    "out of bounds for array of dimension 1": "matched against JAX's error",
    "tuple index out of range": "matched against Python's error",
    "out of bounds": "matched against NumPy's and JAX's index errors",
    "real- or complex-valued": "matched against JAX's error (grad of an int)",
    "not found in mesh": "matched against JAX's error (a mesh axis the mesh lacks)",
    "Differentiation rule for 'pmax'": "matched against JAX's error (grad through pmax)",
    "object has no attribute 'grad'": "matched against Python's error (a float's .grad)",
    "draw_sizes: {}=({}, {}) holds {} sizes, fewer than the {} cases that each need another one; "
    "widen the range": "a checker's own bug, met when it is written",
    "draw_sizes: found no {} cases whose sizes all differ (apart) and that keep what keep asks, "
    "within ranges {}; widen them, or pass apart=False": "a checker's own bug, met when it is "
    "written",
    "extreme_scores: near={} of size={}; need 2 <= near <= size - near, so that the mean lies far "
    "below the largest": "a checker's own bug, met when it is written",
    "with_variance: size={}, variance={}; a variance needs size >= 2 and variance > 0":
        "a checker's own bug, met when it is written",
    "a check cannot send {} to the student's code": "a checker's own bug, never a student's",
    "{} cannot be named to the student's kernel: use a module-level function of the package, "
    "JAX or NumPy": "a checker's own bug, never a student's",
}


def english_literals(path: Path) -> list[tuple[int, str]]:
    """``(line, text)`` of every string in ``path`` with 3+ English words that is not marked for
    translation (an argument of ``_``, ``N_``, ``Mistake``, ``NotDone`` or ``exercise``), not a
    docstring, and not in :data:`ENGLISH_ON_PURPOSE`."""
    import ast
    import re
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = set()
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in {"_", "N_", "Mistake", "NotDone", "exercise"}):
            skip.update(id(sub) for sub in ast.walk(node))
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                skip.add(id(first.value))
    found = []
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.JoinedStr):
            skip.update(id(value) for value in node.values)
            text = "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
        else:
            continue
        if re.search(r"<[a-z]+[ >]|^[a-z-]+:[^;]+;", text):  # HTML or CSS (_display), not prose
            continue
        prose = re.sub(r"`[^`]*`|\{[^}]*\}", "", text)
        if len(re.findall(r"\b[a-z]{2,}\b", prose)) >= 3 and text not in ENGLISH_ON_PURPOSE:
            found.append((node.lineno, text))
    return sorted(found)


def test_every_english_message_of_the_checkers_is_marked_for_translation():
    """A hint or a label (``what``) left as a plain string would reach a Chinese student in
    English: mark it ``_("...").format(...)``, or ``N_("...")`` in a constant."""
    exercises = Path(check.__file__).parent
    unmarked = [f"{path.name}:{line}: {text[:80]!r}" for path in sorted(exercises.glob("*.py"))
                for line, text in english_literals(path)]
    assert not unmarked, f"{len(unmarked)} English strings not marked for translation:\n" + \
        "\n".join(unmarked)


def hidden_messages(path: Path) -> list[str]:
    """Messages gettext cannot translate: an f-string or a ``+`` inside ``_()``, ``N_()``,
    ``Mistake()`` or ``NotDone()`` (the catalog would need every value), and ``_()`` as a
    default argument (translated once, at import, in whatever language was set then)."""
    import ast
    source = path.read_text(encoding="utf-8")
    found = []
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in {"_", "N_", "Mistake", "NotDone"}):
            found += [f"{path.name}:{node.lineno}: {node.func.id}("
                      f"{ast.get_source_segment(source, a)[:60]}"
                      for a in node.args if isinstance(a, (ast.JoinedStr, ast.BinOp))]
        if isinstance(node, ast.FunctionDef):
            found += [f"{path.name}:{node.lineno}: default {ast.get_source_segment(source, d)}"
                      for d in node.args.defaults + node.args.kw_defaults
                      if isinstance(d, ast.Call) and getattr(d.func, "id", "") == "_"]
    return found


def test_no_message_is_built_where_gettext_cannot_see_it():
    exercises = Path(check.__file__).parent
    hidden = [line for path in sorted(exercises.glob("*.py")) for line in hidden_messages(path)]
    assert hidden == [], "write _(\"... {name} ...\").format(name=...) instead:\n" + \
        "\n".join(hidden)


def test_chinese_messages_are_typeset_as_plain_chinese_text(chinese):
    assert i18n.typeset("max_pool(x)（x 的形状为 (6, 8)） 的形状是 (2, 2)") == (
        "max_pool(x)（x 的形状为 (6, 8)）的形状是 (2, 2)")
    assert i18n.typeset("尚未完成（待补全代码里的 `...` 还在）") == (
        "尚未完成（待补全代码里的 ... 还在）")
    assert i18n.typeset("f(x) ，然后 g") == "f(x)，然后 g"
    assert check.relu(...).line == "… 07.1 relu：尚未完成（待补全代码里的 ... 还在）"


def test_english_messages_are_left_as_they_are():
    text = "not done yet (the stub's `...` is still there) ( x )"
    assert i18n.typeset(text) == text
