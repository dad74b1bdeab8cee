"""What is the student's own object (grade/own.py): a method's self, an instance of the
notebook's own plain class, a function's local variable; and each way a red team passed
something else off as one (rounds fifteen and sixteen) is not."""
import ast

import pytest

from nn_from_scratch.grade.own import LOCAL, mark, own_methods, through_its_class


def names(source, name, classes=None, bound=frozenset()):
    """The loads of ``name`` in ``source`` after :func:`mark`: (own methods, local) each."""
    tree = ast.parse(source)
    mark(tree, classes, bound)
    return [(own_methods(n), getattr(n, LOCAL, False)) for n in ast.walk(tree)
            if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)]


def test_a_methods_self_is_the_students_own_with_its_class_methods():
    source = "class Stack:\n    def push(self, x):\n        self.items.append(x)\n" \
             "    def pop(self):\n        return self.push"
    assert all(methods == {"push", "pop"} for methods, _ in names(source, "self"))


def test_an_instance_of_the_notebooks_plain_class_held_by_a_variable_is_own():
    source = "class Box:\n    def get(self):\n        return 1\n" \
             "def f():\n    b = Box()\n    return b.get()"
    assert names(source, "b") == [({"get"}, True)]


@pytest.mark.parametrize("source, name", [
    # red team, round fifteen: self bound again, a class whose __new__ hands out anything
    ("class P:\n    def m(self):\n        self = object\n        return self.x", "self"),
    ("class P:\n    def __new__(cls):\n        return object\n    def m(self):\n"
     "        return 1\ndef f():\n    p = P()\n    return p.m()", "p"),
    # round sixteen: a parameter with a foreign default, global, a class decorator, a class
    # name bound again, a variable that also holds something else
    ("class P:\n    def m(self):\n        return 1\ndef f(p=object):\n    if False:\n"
     "        p = P()\n    return p.m()", "p"),
    ("class P:\n    def m(self):\n        return 1\ndef f():\n    global p\n    p = P()\n"
     "    return p.m()", "p"),
    ("def deco(c):\n    return object\n@deco\nclass P:\n    def m(self):\n        return 1\n"
     "def f():\n    p = P()\n    return p.m()", "p"),
    ("class P:\n    def m(self):\n        return 1\nP = lambda: object\ndef f():\n"
     "    p = P()\n    return p.m()", "p"),
    ("class P:\n    def m(self):\n        return 1\ndef f(x):\n    p = P()\n    p = x\n"
     "    return p.m()", "p"),
])
def test_what_only_looks_like_the_students_own_is_not(source, name):
    assert not any(methods for methods, _ in names(source, name))


def test_a_dataclass_is_plain_and_its_instances_own():
    source = "from dataclasses import dataclass\n@dataclass\nclass C:\n    n: int = 0\n" \
             "    def twice(self):\n        return 2 * self.n\n" \
             "def f():\n    c = C()\n    return c.twice()"
    assert names(source, "c") == [({"twice"}, True)]


def test_a_method_reached_through_its_class_is_marked_and_base_init_is_honest():
    tree = ast.parse("class Base:\n    def __init__(self, n):\n        self.n = n\n"
                     "class Kid(Base):\n    def __init__(self, n):\n        Base.__init__(self, n)"
                     "\nk = Base.__init__")
    mark(tree)
    through = [ast.unparse(n) for n in ast.walk(tree) if through_its_class(n)]
    assert through == ["Base.__init__", "Base.__init__"]


def test_pythons_own_base_is_plain_unless_the_notebook_bound_its_name():
    source = "class History(list):\n    def push(self, x):\n        self.append(x)\n" \
             "def f():\n    h = History()\n    return h.push(1)"
    assert names(source, "h") == [({"push"}, True)]  # a red team's false positive, round 16
    assert names(source, "h", bound={"list"}) == [(set(), True)]
