"""What reaches any object of the kernel (grade/reaching.py): each way the red team found, by
any spelling; and honest code that merely looks alike reaches nothing."""
import ast

import pytest

from nn_from_scratch.grade.reaching import REACHING, reached, reaching


@pytest.mark.parametrize("source, how", [
    ("import gc\nx = gc.get_objects()", "gc.get_objects()"),
    ("from gc import get_referents as r", "gc.get_referents()"),
    ("import gc\nwalk = getattr(gc, 'get_' + 'objects')", "gc.get_objects()"),
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
    # red team, round fifteen: a self that is no method's, names made of constants, the
    # grader's modules as attributes of the package a lesson imports (5/7 with every stub)
    ("self = object\nkinds = self.__subclasses__()", "__subclasses__()"),
    ("class C:\n    def m(self):\n        self = object\n        return self.__subclasses__()",
     "__subclasses__()"),
    ("kinds = getattr(object, '__subcla' + 'sses__')()", "__subclasses__()"),
    ("kinds = getattr(object, f'__subcla{\"sses\"}__')()", "__subclasses__()"),
    ("kinds = vars(type)['__subclasses__'](object)", "__subclasses__()"),
    ("import operator\nback = operator.attrgetter('f_back')", "a frame's f_back"),
    ("import nn_from_scratch.model\nA = nn_from_scratch.grade.answers.Answers",
     REACHING["nn_from_scratch.grade"]),
    ("A = package.grade.answers.Answers", REACHING["nn_from_scratch.grade"]),
    ("import sys\na = sys.modules['nn_from_scratch.gr' + 'ade.answers']",
     REACHING["nn_from_scratch.grade"]),
    ("a = globals()['_nn_from_scratch_' + 'answers']", REACHING["_nn_from_scratch_answers"]),
    ("import importlib\ng = importlib.import_module('g' + 'c')", REACHING["gc"]),
    # its second look: what the first exemptions let through
    ("class P:\n    def kids(self):\n        return self.__subclasses__()\n\n"
     "k = P.kids(object)", REACHING["through its class"]),  # self: whatever it is handed
    ("class P:\n    def get_objects(self):\n        return self.get_objects()\n\n"
     "k = P.get_objects(box)", REACHING["through its class"]),
    ("class P:\n    def __new__(cls):\n        return object\n\n    def kids(self):\n"
     "        return 1\n\n\ndef f():\n    p = P()\n    return p.__subclasses__()",
     "__subclasses__()"),
    ("def f():\n    import gc\n    return getattr(gc, 'get_objects')()", "gc.get_objects()"),
    ("kinds = getattr(object, '%s%s' % ('__subcla', 'sses__'))()", "__subclasses__()"),
    ("kinds = getattr(object, ''.join(['__subcla', 'sses__']))()", "__subclasses__()"),
    ("kinds = getattr(object, '{}{}'.format('__subcla', 'sses__'))()", "__subclasses__()"),
    ("kinds = getattr(object, '__sessalcbus__'[::-1])()", "__subclasses__()"),
    # its third look: the grader's package inside a longer string, or its first letters
    ("exec('import nn_from_scratch.grade.answers as A')", REACHING["nn_from_scratch.grade"]),
    ("a = 'nn_from_scratch.gra'", REACHING["nn_from_scratch.grade"]),
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
    # red team, round fifteen: a solved notebook lost every point to a local variable "gc"
    "def relu(x):\n    gc = jnp.maximum(0, x)  # gated copy\n    return gc",
    "def f(gc):\n    return gc + 1",
    "class Net:\n    def f_back(self):\n        return 1\n\n    def frames(self):\n"
    "        return self.f_back()",  # a method of its own, named like a frame's attribute
    "student.grade = 5\nprint(student.grade)",
    "class Base:\n    def __init__(self, n):\n        self.n = n\n\n\nclass Net(Base):\n"
    "    def __init__(self, n):\n        Base.__init__(self, n)",  # its own self, handed on
    "class Config:\n    @classmethod\n    def of(cls, d):\n        return cls()\n\n"
    "c = Config.of({})",
    "print(hasattr(x, '__subclasses__'))",
])
def test_honest_code_reaches_nothing(source):
    assert reaching(ast.parse(source)) == ""


def test_what_is_not_reaching_is_not_taken_for_it():
    assert not reached("exec()") and not reached("settrace")
