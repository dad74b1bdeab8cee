"""What reaches any object of the kernel (grade/reaching.py): each way the red team found, by
any spelling; and honest code that merely looks alike reaches nothing."""
import ast

import pytest

from nn_from_scratch.grade.reaching import REACHING, reached, reaching


@pytest.mark.parametrize("source, how", [
    ("import gc\nx = gc.get_objects()", "gc.get_objects()"),
    ("from gc import get_referents as r", "gc.get_referents()"),
    ("import gc\nwalk = getattr(gc, 'get_' + 'objects')", REACHING["gc"]),
    ("import gc as g", REACHING["gc"]),
    ("import importlib\ng = importlib.import_module('gc')", REACHING["gc"]),
    ("kinds = object.__subclasses__()", "__subclasses__()"),
    ("kinds = type.__subclasses__(object)", "__subclasses__()"),
    ("import sys\nf = sys._getframe(2)", "sys._getframe()"),
    ("from sys import _getframe", "sys._getframe()"),
    ("import inspect\nframes = inspect.stack()", "inspect.stack()"),
    ("def f():\n    try:\n        1 / 0\n    except Exception as e:\n"
     "        return e.__traceback__.tb_frame", "a traceback's tb_frame"),
    ("from inspect import *", "from inspect import *"),
    ("type(_nn_from_scratch_answers).answer = print", REACHING["_nn_from_scratch_answers"]),
    ("a = globals()['_nn_from_scratch_answers']", REACHING["_nn_from_scratch_answers"]),
    ("from nn_from_scratch.grade.answers import Answers", REACHING["nn_from_scratch.grade"]),
    ("from nn_from_scratch import grade", REACHING["nn_from_scratch.grade"]),
    ("import nn_from_scratch.grade.answers as a", REACHING["nn_from_scratch.grade"]),
    ("import importlib\na = importlib.import_module('nn_from_scratch.grade.answers')",
     REACHING["nn_from_scratch.grade"]),
])
def test_each_way_found_is_read_and_named(source, how):
    assert reaching(ast.parse(source)) == how
    assert reached(how)


@pytest.mark.parametrize("source", [
    "import gc\ngc.collect()\ngc.freeze()",
    "def get_objects(store):\n    return list(store)\n\nget_objects([1])",
    "names = {'get_objects': 1, '__subclasses__': 2}",
    "class S:\n    def get_objects(self):\n        return self.get_objects",
    "import inspect\ntext = inspect.getsource(print)",
    "import jax.numpy as jnp\nx = jnp.stack([jnp.ones(2)] * 2)",
    "import traceback\ntraceback.print_exc()",
    "from nn_from_scratch.model import relu\nimport nn_from_scratch.grade_book as g",
    "from nn_from_scratch import exercises",
])
def test_honest_code_reaches_nothing(source):
    assert reaching(ast.parse(source)) == ""


def test_what_is_not_reaching_is_not_taken_for_it():
    assert not reached("exec()") and not reached("settrace")
