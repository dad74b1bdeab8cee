"""What code spells out with constants alone (grade/spelt.py): the string it makes, however it
is put together, and the attribute a getattr asks for; nothing made at run time is guessed."""
import ast

import pytest

from nn_from_scratch.grade.spelt import attribute_argument, constant_text


def expression(source):
    return ast.parse(source, mode="eval").body


@pytest.mark.parametrize("source, text", [
    ("'__subclasses__'", "__subclasses__"),
    ("'__subcla' + 'sses__'", "__subclasses__"),          # red team, round fifteen
    ("f'__subcla{\"sses\"}__'", "__subclasses__"),
    ("'%s%s' % ('get_', 'objects')", "get_objects"),
    ("'{}{}'.format('f_', 'back')", "f_back"),
    ("''.join(['bui', 'ltins'])", "builtins"),
    ("'__sessalcbus__'[::-1]", "__subclasses__"),
    ("'abcdef'[1:4]", "bcd"),
])
def test_strings_of_constants_are_read_as_the_string_they_make(source, text):
    assert constant_text(expression(source)) == text


@pytest.mark.parametrize("source", [
    "name", "'a' + name", "f'{name}s'", "'%s' % name", "'{}'.format(name)", "3", "b'bytes'",
    "'x'[i:]", "'-'.join(parts)", "'%d' % ('a',)",
])
def test_what_is_made_at_run_time_or_is_no_string_is_none(source):
    assert constant_text(expression(source)) is None


@pytest.mark.parametrize("source, argument", [
    ("getattr(x, 'a')", "'a'"), ("setattr(x, name, 1)", "name"), ("delattr(x, 'a' + 'b')",
                                                                  "'a' + 'b'"),
    ("hasattr(x, 'a')", None), ("getattr(x)", None), ("obj.getattr(x, 'a')", None),
])
def test_the_attribute_a_getattr_asks_for(source, argument):
    found = attribute_argument(expression(source))
    assert (None if found is None else ast.unparse(found)) == argument
