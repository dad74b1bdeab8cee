"""A class pattern's keywords, written out as the attribute reads they are (grade/desugar.py)."""
import ast

from nn_from_scratch.grade.desugar import patterns_read


def written_out(source):
    tree = patterns_read(ast.parse(source))
    case = next(node for node in ast.walk(tree) if isinstance(node, ast.match_case))
    return [ast.unparse(statement) for statement in case.body]


def test_a_keyword_that_captures_a_name_is_an_assignment_from_the_subject():
    assert written_out("match f:\n    case object(__globals__=ns):\n        pass") == [
        "ns = f.__globals__", "pass"]


def test_a_nested_pattern_reads_from_what_it_matched_and_alternatives_read_too():
    assert written_out("match f:\n    case object(__globals__={'b': object(exec=run)}) | "
                       "C(x=1):\n        pass") == [
        "f.__globals__", "f.x", "_matched.exec", "pass"]


def test_patterns_that_read_no_attribute_are_left_as_they_are():
    assert written_out("match x:\n    case (a, b):\n        pass\n    case C(1, 2):\n"
                       "        pass") == ["pass"]
